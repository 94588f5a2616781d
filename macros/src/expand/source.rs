//! The source's run-time completion as typed parts: render cut the text at its marker lines
//! once (`ir::Sources`), so that the runtime joins parts and never reads generated text.

use super::rt;
use crate::ir::{Completion, Part};
use proc_macro2::TokenStream;
use quote::quote;

/// `&[SourcePart]` for the rendered `parts`.
pub fn parts(parts: &[Part]) -> TokenStream {
    let rt = rt();
    let parts = parts.iter().map(|p| match p {
        Part::Text(t) => quote!(#rt::source::SourcePart::Text(#t)),
        Part::Params => quote!(#rt::source::SourcePart::Params),
        Part::Constants => quote!(#rt::source::SourcePart::Constants),
        Part::LineHere => quote!(#rt::source::SourcePart::LineHere),
    });
    quote!(&[#(#parts),*])
}

/// `fn source() -> &'static str`: the parts completed with the params structs' declarations
/// and the constants' values, once per process.
pub fn source_fn(name: &str, source: &[Part], c: &Completion) -> TokenStream {
    let rt = rt();
    let parts = parts(source);
    let param_types = c.params.iter().map(|(t, _)| t);
    let param_names = c.params.iter().map(|(_, n)| n);
    let const_names: Vec<&str> = c.consts.iter().map(|c| c.cl_name.as_str()).collect();
    // A constant used only in a cast is the Rust cast's value.
    let const_values: Vec<TokenStream> = c
        .consts
        .iter()
        .map(|c| {
            let path = &c.path;
            if c.cast {
                let t = super::scalar_ty(c.ty);
                quote!((#path as #t))
            } else {
                quote!(#path)
            }
        })
        .collect();
    quote! {
        /// The generated OpenCL C, completed with the params structs and constants' values.
        pub fn source() -> &'static str {
            static SOURCE: ::std::sync::OnceLock<::std::string::String> = ::std::sync::OnceLock::new();
            SOURCE.get_or_init(|| {
                #rt::source::complete(
                    #name,
                    #parts,
                    &[#(<#param_types as #rt::Params>::cl_declaration(#param_names)),*],
                    &[#((#const_names, #rt::Scalar::cl_literal(&#const_values))),*],
                )
            })
        }
    }
}
