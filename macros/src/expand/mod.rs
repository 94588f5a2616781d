//! STAGE Rust output: the user's item kept as written, plus what clforge generates beside it.
//! One file per kind (`stencil.rs`, `element.rs`); `params.rs` for `#[derive(Params)]`;
//! `source.rs` for the source's run-time completion; `checks.rs` for assumed-type checks.
//! Reads the model, the IR and the rendered text; never decides anything about a kernel.

pub mod checks;
pub mod element;
pub mod lattice;
pub mod launch;
pub mod params;
pub mod source;
pub mod stencil;
pub mod sweep;

use crate::model::Scalar;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

pub fn rt() -> TokenStream {
    quote!(::clforge::runtime)
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
