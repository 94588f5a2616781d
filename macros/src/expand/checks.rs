//! The generated OpenCL assumes types for params members and constants the attribute cannot
//! see; Rust checks each assumption at the user's token (`let _: f32 = k.a;`).

use super::{rt, scalar_ty};
use crate::ir::Completion;
use crate::model::Arg;
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

pub fn assumed_types(args: &[Arg], c: &Completion) -> TokenStream {
    let rt = rt();
    let mut checks = Vec::new();
    let mut check_params = Vec::new();
    for a in args {
        if let Arg::Params { name, ty } = a {
            check_params.push(quote!(#name: &#ty));
        }
    }
    for m in &c.members {
        let t = scalar_ty(m.ty);
        let member = &m.member;
        // `k` as written in the signature would stretch the error from there to `n`.
        let mut base = args[m.arg].name().clone();
        base.set_span(member.span());
        checks.push(if m.cast {
            quote_spanned!(member.span()=> #rt::assume::castable::<#t, _>(#base.#member);)
        } else {
            quote_spanned!(member.span()=> #rt::assume::assumed::<#t, _>(#base.#member);)
        });
    }
    for c in &c.consts {
        let t = scalar_ty(c.ty);
        let path = &c.path;
        checks.push(if c.cast {
            quote_spanned!(c.span=> #rt::assume::assumed::<#t, _>(#path as #t);)
        } else {
            quote_spanned!(c.span=> #rt::assume::assumed::<#t, _>(#path);)
        });
    }
    quote! {
        const _: () = {
            #[allow(unused_variables, clippy::all)]
            fn __clforge_assumed_types(#(#check_params),*) {
                #(#checks)*
            }
        };
    }
}
