//! Procedural macros of clforge. Each entry point reads as the pipeline:
//! parse (syn -> model) -> lower (model -> IR) -> render (IR -> OpenCL via Tera) -> expand (Rust).

mod emit;
mod expand;
mod ir;
mod lower;
mod model;
mod parse;
mod render;
mod render_element;

use proc_macro::TokenStream;

/// Turns a point-update function into OpenCL stencil kernels; the function stays callable.
///
/// `#[stencil]` or `#[stencil(boundary = fixed | periodic | clamp)]`. See the crate `clforge`.
#[proc_macro_attribute]
pub fn stencil(attr: TokenStream, item: TokenStream) -> TokenStream {
    stencil_impl(attr.into(), item.into()).into()
}

fn stencil_impl(attr: proc_macro2::TokenStream, item: proc_macro2::TokenStream) -> proc_macro2::TokenStream {
    let func: syn::ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(e) => return expand::error_with_item(item, e),
    };
    let run = || -> syn::Result<proc_macro2::TokenStream> {
        let args: parse::args::StencilArgs = syn::parse2(attr)?;
        let model = parse::stencil::from_syn(&func, args.boundary)?;
        let kernel = lower::lower_stencil(&model)?;
        let source = render::render_stencil(&kernel).map_err(|e| {
            syn::Error::new(
                func.sig.ident.span(),
                format!("clforge internal error (please report): {e}"),
            )
        })?;
        Ok(expand::expand_stencil(&func, &kernel, &source))
    };
    run().unwrap_or_else(|e| expand::error_with_item(item, e))
}

/// Declares a finite element on a module holding its shape functions, local nodes and
/// material law; generates `dshape` in the module and the element type beside it.
///
/// `#[element(dim = 2, nodes = 4, operator = plane_stress, quadrature = 2)]`, optionally
/// `dofs = 2` (checked against the operator). See the crate `clforge` and docs/DESIGN-NOTES.md.
#[proc_macro_attribute]
pub fn element(attr: TokenStream, item: TokenStream) -> TokenStream {
    element_impl(attr.into(), item.into()).into()
}

fn element_impl(attr: proc_macro2::TokenStream, item: proc_macro2::TokenStream) -> proc_macro2::TokenStream {
    let module: syn::ItemMod = match syn::parse2(item.clone()) {
        Ok(m) => m,
        Err(_) => {
            let e = syn::Error::new_spanned(&item, "`#[clforge::element]` goes on a module: `pub mod quad4 { ... }`");
            return expand::error_with_item(item, e);
        }
    };
    let run = || -> syn::Result<proc_macro2::TokenStream> {
        let args: parse::element::ElementArgs = syn::parse2(attr)?;
        let model = parse::element::from_syn(&module, &args)?;
        let lowered = lower::element::lower_element(&model)?;
        let source = render_element::render_element(&lowered.view).map_err(|e| {
            syn::Error::new(
                module.ident.span(),
                format!("clforge internal error (please report): {e}"),
            )
        })?;
        expand::element::expand_element(&module, &model, &lowered, &source)
    };
    run().unwrap_or_else(|e| expand::error_with_item(item, e))
}

/// Makes a struct of scalars usable as stencil parameters (passed in constant memory).
#[proc_macro_derive(Params)]
pub fn derive_params(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    parse::params::from_syn(&input)
        .map(|p| expand::expand_params(&p))
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Renders the element kernels for a shape given by literals, as a string literal (testing aid
/// for the runtime's element kernels; `#[element]` is the user-facing entry point).
#[doc(hidden)]
#[proc_macro]
pub fn __element_source(input: TokenStream) -> TokenStream {
    render_element::element_source(input.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

#[cfg(test)]
mod tests;
