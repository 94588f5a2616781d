//! Typed launch functions printed from the kernels' IR signatures: one Rust parameter per
//! kernel parameter, in ABI order, bound to `Arg`s in that same order. This is the only place
//! the Rust side states an argument order, and it reads it from the IR.

use super::rt;
use crate::ir::{Access, Elem, Kernel, Param, Role, Ty};
use crate::model::Scalar;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

/// The type parameter that a `real` buffer or value takes: the launchers are generic over the
/// precision the program was built in (`runtime::element::Real`: `f32` or `f64`).
fn real_ty() -> TokenStream {
    quote!(__ClforgeReal)
}

/// Whether a kernel has a `real` parameter (its launcher is generic over [`real_ty`]).
fn uses_real(k: &Kernel) -> bool {
    k.params.iter().any(|p| match &p.ty {
        Ty::Global { elem, .. } | Ty::Constant { elem, .. } | Ty::Value(elem) => *elem == Elem::Real,
        _ => false,
    })
}

/// The Rust element type of a `real`/scalar buffer or value.
fn rust_elem(e: Elem) -> TokenStream {
    match e {
        Elem::Real => real_ty(),
        Elem::Int4 => quote!(i32),
        Elem::Scalar(s) => {
            let id = format_ident!("{}", s.rust());
            quote!(#id)
        }
    }
}

/// A parameter name as a Rust identifier: raw where it is a keyword (`r#async`), with a `_`
/// where it cannot be raw either (`self_`).
fn rust_ident(name: &str) -> syn::Ident {
    [name.to_string(), format!("r#{name}"), format!("{name}_")]
        .iter()
        .find_map(|n| syn::parse_str::<syn::Ident>(n).ok())
        .unwrap_or_else(|| format_ident!("param"))
}

/// `(parameter declaration, argument binding)` for one kernel parameter.
fn param(p: &Param) -> (TokenStream, TokenStream) {
    let rt = rt();
    let name = rust_ident(&p.name.to_lowercase());
    match &p.ty {
        Ty::Global { elem, .. } | Ty::Constant { elem, .. } => {
            let t = rust_elem(*elem);
            let decl = if p.access == Access::Read {
                quote!(#name: &#rt::Buffer<#t>)
            } else {
                quote!(#name: &mut #rt::Buffer<#t>)
            };
            (decl, quote!(#rt::Arg::buffer(#name)))
        }
        // A stencil's packed grid is read-only; a lattice's packed state is written.
        Ty::Packed { word, .. } if p.access == Access::Read => {
            let t = rust_elem(Elem::Scalar(*word));
            (quote!(#name: &#rt::Buffer<#t>), quote!(#rt::Arg::buffer(#name)))
        }
        Ty::Packed { word, .. } => {
            let t = rust_elem(Elem::Scalar(*word));
            (quote!(#name: &mut #rt::Buffer<#t>), quote!(#rt::Arg::buffer(#name)))
        }
        Ty::Value(elem) => {
            let (t, ctor) = match elem {
                Elem::Real => {
                    let r = real_ty();
                    return (quote!(#name: #r), quote!(#rt::element::Real::arg(#name)));
                }
                Elem::Scalar(Scalar::F32) => (quote!(f32), quote!(f32)),
                Elem::Scalar(Scalar::F64) => (quote!(f64), quote!(f64)),
                Elem::Scalar(Scalar::U32) => (quote!(u32), quote!(u32)),
                _ => (quote!(i32), quote!(i32)),
            };
            (quote!(#name: #t), quote!(#rt::Arg::#ctor(#name)))
        }
        // Work-group scratch: the launch chooses its size.
        Ty::Local { .. } => (quote!(#name: #rt::Local), quote!(#rt::Arg::scratch(#name))),
        // A params struct's bytes, already uploaded to constant memory.
        Ty::Struct(_) => (quote!(#name: &#rt::ConstBuffer), quote!(#rt::Arg::constant(#name))),
    }
}

/// `fn <method>(&self, at: At<'_>, <params>) -> Result<Event>` with the body that launches.
/// `real` parameters take the type [`real_ty`]: a parameter of the method where `receiver` is
/// not set (an inherent launcher), else of the trait impl around it.
pub fn method(k: &Kernel, method: &syn::Ident, receiver: bool, vis: TokenStream) -> TokenStream {
    let rt = rt();
    let (decls, args): (Vec<_>, Vec<_>) = k.params.iter().map(param).unzip();
    let kname = &k.name;
    let recv = if receiver { quote!(&self,) } else { quote!() };
    let real = real_ty();
    let generics = (!receiver && uses_real(k)).then(|| quote!(<#real: #rt::element::Real>));
    // Resolves at the macro's site: a kernel parameter named `at` cannot meet it.
    let at = syn::Ident::new("at", proc_macro2::Span::mixed_site());
    let doc = format!("Launches `{kname}`: arguments in the kernel's parameter order.");
    // A kernel that was not generated (its `unavailable` says why) is a typed error, not a
    // launch of a name the program lacks.
    let body = match &k.unavailable {
        None => quote!(#at.program.launch(#kname, #at.global, #at.local, &[#(#args),*])),
        Some(why) => {
            let msg = format!("kernel `{kname}` is not generated: {why}");
            quote! {
                let _ = (#at, #(#args),*);
                ::core::result::Result::Err(#rt::Error::InvalidConfig(#msg.into()))
            }
        }
    };
    let user_doc = k.doc.iter().map(|d| quote!(#[doc = #d]));
    let sep = (!k.doc.is_empty()).then(|| quote!(#[doc = ""]));
    quote! {
        #(#user_doc)*
        #sep
        #[doc = #doc]
        #[allow(clippy::too_many_arguments)]
        #vis fn #method #generics (#recv #at: #rt::element::At<'_>, #(#decls),*) -> #rt::Result<#rt::Event> {
            #body
        }
    }
}

/// Inherent `pub fn launch_<variant>` for every kernel of a program's main source.
pub fn inherent(kernels: &[Kernel]) -> TokenStream {
    let main = |k: &&Kernel| k.unavailable.is_none() && k.role != Role::Forming;
    let fns = kernels.iter().filter(main).map(|k| {
        let name = format_ident!("launch_{}", k.variant);
        method(k, &name, false, quote!(pub))
    });
    quote!(#(#fns)*)
}
