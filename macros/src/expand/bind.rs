//! Each kernel's parameter list as the runtime binds it (`abi::Bind`), printed from the IR: the
//! one statement of a kernel's argument order that the runtime reads.

use proc_macro2::TokenStream;
use quote::quote;

use super::rt;
use crate::ir::{Binding, Kernel};
use crate::model::Arg;

/// `&[Bind::…]` for kernel `k`, whose `UserArg(i)` index the user's function arguments `args`
/// (the launch passes them less `at: Point`).
pub fn binds(k: &Kernel, args: &[Arg]) -> TokenStream {
    let rt = rt();
    let slot = |i: usize| {
        args[..i.min(args.len())]
            .iter()
            .filter(|a| !matches!(a, Arg::Point { .. }))
            .count()
    };
    let items = k.params.iter().map(|p| {
        let b = quote!(#rt::abi::Bind);
        match p.binding {
            Binding::UserArg(i) => {
                let j = slot(i);
                quote!(#b::Arg(#j))
            }
            Binding::Output => quote!(#b::Out(0)),
            Binding::MoreOutput(i) => quote!(#b::Out(#i)),
            Binding::Extent(a) => quote!(#b::Extent(#a)),
            Binding::Origin(a) => quote!(#b::Origin(#a)),
            Binding::WholeExtent(a) => quote!(#b::Whole(#a)),
            Binding::ReduceBox(i) => quote!(#b::ReduceBox(#i)),
            Binding::Named => {
                let n = &p.name;
                quote!(#b::Named(#n))
            }
        }
    });
    quote!(&[#(#items),*])
}
