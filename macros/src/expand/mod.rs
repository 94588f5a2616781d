//! STAGE Rust output: the user's item kept as written, plus what clforge generates beside it.
//! One file per kind (`stencil.rs`, `element.rs`); `params.rs` for `#[derive(Params)]`;
//! `source.rs` for the source's run-time completion; `checks.rs` for assumed-type checks.
//! Reads the model, the IR and the rendered sources (`ir::Sources`, made by the driver);
//! never renders, and never decides anything about a kernel.

pub mod bind;
pub mod checks;
pub mod element;
pub mod lattice;
pub mod launch;
pub mod params;
pub mod source;
pub mod stencil;
pub mod sweep;

use crate::model::{Arg, Boundary, Scalar};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

pub fn rt() -> TokenStream {
    quote!(::clforge::runtime)
}

/// The runtime's `Boundary` for a kernel's boundary.
pub fn boundary_tokens(b: Boundary) -> TokenStream {
    let rt = rt();
    match b {
        Boundary::Fixed => quote!(#rt::Boundary::Fixed),
        Boundary::Periodic => quote!(#rt::Boundary::Periodic),
        Boundary::Clamp => quote!(#rt::Boundary::Clamp),
    }
}

/// The generated functions' view of the user's arguments, in order: the device and host
/// parameter lists, the launch arguments, the arguments of the host call to the user's
/// function, and the shape checks of the read-only grids.
#[derive(Default)]
pub struct ArgTokens {
    pub dev_params: Vec<TokenStream>,
    pub host_params: Vec<TokenStream>,
    pub launch_args: Vec<TokenStream>,
    pub host_args: Vec<TokenStream>,
    pub shape_checks: Vec<TokenStream>,
}

/// How a grid argument `n` is passed to the user's function on the host.
pub type HostArg<'a> = &'a dyn Fn(&syn::Ident) -> TokenStream;

/// [`ArgTokens`] for `args`. A read-only grid `n` is passed to the user's function as
/// `read(n)`; the in-place state (argument `state.0`, if any) as `state.1(n)`, mutably on
/// both sides and without a shape check (the plan is sized by it).
/// The parameters and launch arguments of a generated `*_plan` call that runs on any target
/// (a lattice rule's `step_plan`, a sweep's `sweep_plan`): each grid as `name: &L::Grid<T>`
/// (`&mut` for the argument `state`), params and scalars as for a stencil, each made into the
/// argument of the launch type `l` (`<<Plan as Trait>::On as Place>`); the point is not an
/// argument.
pub fn target_args(args: &[Arg], state: usize, l: &TokenStream) -> (Vec<TokenStream>, Vec<TokenStream>) {
    args.iter()
        .enumerate()
        .filter_map(|(i, a)| {
            let n = a.name();
            let label = n.to_string();
            Some(match a {
                Arg::Field(f) => {
                    let e = scalar_ty(f.elem);
                    let m = if i == state { quote!(&mut) } else { quote!(&) };
                    (quote!(#n: #m #l::Grid<#e>), quote!(#l::grid_arg(#label, &*#n)))
                }
                Arg::Params { ty, .. } => (quote!(#n: &#ty), quote!(#l::params_arg(#n))),
                Arg::Scalar { ty, .. } => {
                    let ty = scalar_ty(*ty);
                    (quote!(#n: #ty), quote!(#l::scalar_arg(#n)))
                }
                Arg::Point { .. } => return None,
            })
        })
        .unzip()
}

pub fn arg_tokens(
    args: &[Arg],
    shape: &syn::Ident,
    read: HostArg<'_>,
    state: Option<(usize, HostArg<'_>)>,
) -> ArgTokens {
    let rt = rt();
    let mut t = ArgTokens::default();
    for (i, a) in args.iter().enumerate() {
        let n = a.name();
        let label = n.to_string();
        match a {
            Arg::Field(f) => {
                let e = scalar_ty(f.elem);
                match state.filter(|(at, _)| *at == i) {
                    Some((_, host_arg)) if f.elem == Scalar::Bool => {
                        // A lattice's `bool` sites, bit-packed on the device.
                        t.dev_params.push(quote!(#n: &mut #rt::lattice::DeviceBits));
                        t.host_params.push(quote!(#n: &mut #rt::HostGrid<bool>));
                        t.launch_args.push(quote!(#rt::KernelArg::bits(#label, &*#n)));
                        t.host_args.push(host_arg(n));
                    }
                    Some((_, host_arg)) => {
                        t.dev_params.push(quote!(#n: &mut #rt::DeviceGrid<#e>));
                        t.host_params.push(quote!(#n: &mut #rt::HostGrid<#e>));
                        t.launch_args.push(quote!(#rt::KernelArg::grid(#label, &*#n)));
                        t.host_args.push(host_arg(n));
                    }
                    // `packed(n = bits)`: the device grid is a `PackedGrid<T, bits>`; the host
                    // reference reads the `HostGrid` as written.
                    None if f.packed.is_some() => {
                        let bits = proc_macro2::Literal::u32_unsuffixed(f.packed.unwrap_or(8));
                        t.dev_params.push(quote!(#n: &#rt::PackedGrid<#e, #bits>));
                        t.host_params.push(quote!(#n: &#rt::HostGrid<#e>));
                        t.launch_args.push(quote!(#rt::KernelArg::packed(#label, #n)));
                        t.shape_checks
                            .push(quote!(#rt::check_shape(#label, #shape, #n.shape())?;));
                        t.host_args.push(read(n));
                    }
                    None => {
                        t.dev_params.push(quote!(#n: &#rt::DeviceGrid<#e>));
                        t.host_params.push(quote!(#n: &#rt::HostGrid<#e>));
                        t.launch_args.push(quote!(#rt::KernelArg::grid(#label, #n)));
                        t.shape_checks
                            .push(quote!(#rt::check_shape(#label, #shape, #n.shape())?;));
                        t.host_args.push(read(n));
                    }
                }
            }
            Arg::Params { ty, .. } => {
                t.dev_params.push(quote!(#n: &#ty));
                t.host_params.push(quote!(#n: &#ty));
                t.launch_args.push(quote!(#rt::KernelArg::params(#n)));
                t.host_args.push(quote!(#n));
            }
            Arg::Scalar { ty, .. } => {
                let ty = scalar_ty(*ty);
                t.dev_params.push(quote!(#n: #ty));
                t.host_params.push(quote!(#n: #ty));
                t.launch_args.push(quote!(#rt::KernelArg::scalar(#n)));
                t.host_args.push(quote!(#n));
            }
            // The point is the loop's, not the caller's.
            Arg::Point { .. } => t.host_args.push(point(shape)),
        }
    }
    t
}

/// The host reference's `Point` at the loop's point (`p`, hygienic like the generated
/// drivers' other locals) of a grid of `shape`.
fn point(shape: &syn::Ident) -> TokenStream {
    let rt = rt();
    let p = syn::Ident::new("p", proc_macro2::Span::mixed_site());
    quote!(#rt::Point::at(#p, #shape))
}

pub fn scalar_ty(s: Scalar) -> TokenStream {
    let id = format_ident!("{}", s.rust());
    quote!(#id)
}

/// The generated type's name for an item: `jacobi_step` -> `JacobiStep`, `quad4` -> `Quad4`.
pub fn type_name(name: &str) -> String {
    name.split('_')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let mut c = p.chars();
            c.next()
                .map(|f| f.to_uppercase().chain(c).collect::<String>())
                .unwrap_or_default()
        })
        .collect()
}

/// The generated type's identifier for an item named `item` (raw or not), spanned there; an
/// error there when the name gives no type name (`__` gives nothing, `_1` gives `1`).
/// [`type_ident`] of a function whose arguments `args` may not name a params struct after the
/// generated type: the two would collide, and rustc would report it as unrelated errors.
pub fn fn_type_ident(item: &syn::Ident, args: &[crate::model::Arg]) -> syn::Result<syn::Ident> {
    let ty = type_ident(item)?;
    for a in args {
        if let crate::model::Arg::Params { ty: params, .. } = a {
            let last = params.segments.last().map(|s| &s.ident);
            if last.is_some_and(|l| *l == ty) {
                return Err(syn::Error::new_spanned(
                    params,
                    format!(
                        "the params struct `{ty}` has the name clforge gives the type it generates for `fn {}`; \
                         rename the struct (e.g. `{ty}Params`)",
                        syn::ext::IdentExt::unraw(item)
                    ),
                ));
            }
        }
    }
    Ok(ty)
}

pub fn type_ident(item: &syn::Ident) -> syn::Result<syn::Ident> {
    use syn::ext::IdentExt;
    let name = type_name(&item.unraw().to_string());
    let mut id = syn::parse_str::<syn::Ident>(&name).map_err(|_| {
        let gives = if name.is_empty() {
            "nothing".to_string()
        } else {
            format!("`{name}`")
        };
        syn::Error::new(
            item.span(),
            format!(
                "clforge names the generated type after `{}` in UpperCamelCase, which gives {gives}, not a type \
                 name; rename the item",
                item.unraw()
            ),
        )
    })?;
    id.set_span(item.span());
    Ok(id)
}

pub fn error_with_item(item: TokenStream, err: syn::Error) -> TokenStream {
    let e = err.into_compile_error();
    quote!(#item #e)
}
