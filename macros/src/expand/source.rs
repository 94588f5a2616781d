//! The source's run-time completion as typed parts: the rendered text is cut at its marker
//! lines here, once, so that the runtime joins parts and never reads generated text.

use super::rt;
use crate::ir::Completion;
use crate::render::{CONSTANTS_MARKER, LINE_MARKER, PARAMS_MARKER};
use proc_macro2::TokenStream;
use quote::quote;

/// `&[SourcePart]` for the rendered `text`.
pub fn parts(text: &str) -> TokenStream {
    let rt = rt();
    let mut parts = Vec::new();
    let mut chunk = String::new();
    let flush = |chunk: &mut String, parts: &mut Vec<TokenStream>| {
        if !chunk.is_empty() {
            let t = std::mem::take(chunk);
            parts.push(quote!(#rt::source::SourcePart::Text(#t)));
        }
    };
    for line in text.split_inclusive('\n') {
        let marker = match line.trim() {
            PARAMS_MARKER => Some(quote!(#rt::source::SourcePart::Params)),
            CONSTANTS_MARKER => Some(quote!(#rt::source::SourcePart::Constants)),
            LINE_MARKER => Some(quote!(#rt::source::SourcePart::LineHere)),
            _ => None,
        };
        match marker {
            Some(m) => {
                flush(&mut chunk, &mut parts);
                parts.push(m);
            }
            None => chunk.push_str(line),
        }
    }
    flush(&mut chunk, &mut parts);
    quote!(&[#(#parts),*])
}

/// `fn source() -> &'static str`: the parts completed with the params structs' declarations
/// and the constants' values, once per process.
pub fn source_fn(name: &str, text: &str, c: &Completion) -> TokenStream {
    let rt = rt();
    let parts = parts(text);
    let param_types = c.params.iter().map(|(t, _)| t);
    let param_names = c.params.iter().map(|(_, n)| n);
    let const_names: Vec<&str> = c.consts.iter().map(|c| c.cl_name.as_str()).collect();
    let const_paths: Vec<&syn::Path> = c.consts.iter().map(|c| &c.path).collect();
    quote! {
        /// The generated OpenCL C, completed with the params structs and constants' values.
        pub fn source() -> &'static str {
            static SOURCE: ::std::sync::OnceLock<::std::string::String> = ::std::sync::OnceLock::new();
            SOURCE.get_or_init(|| {
                #rt::source::complete(
                    #name,
                    #parts,
                    &[#(<#param_types as #rt::Params>::cl_declaration(#param_names)),*],
                    &[#((#const_names, #rt::Scalar::cl_literal(&#const_paths))),*],
                )
            })
        }
    }
}
