//! The pipeline, one call per stage, for every kind. On any error the user's item is still
//! emitted (beside the `compile_error!`) so that the IDE keeps working.

use crate::kind::Kind;
use crate::{diag, expand, parse, render};
use proc_macro2::TokenStream;

pub fn run<K: Kind>(attr: TokenStream, item: TokenStream) -> TokenStream {
    // Before syn recurses into them; the item goes back as it came, for rustc to parse.
    if let Err(e) = diag::nesting(&attr).and_then(|()| diag::nesting(&item)) {
        return expand::error_with_item(item, e);
    }
    let parsed: K::Item = match syn::parse2(item.clone()) {
        Ok(i) => i,
        Err(_) => return expand::error_with_item(item.clone(), K::wrong_item(&item)),
    };
    pipeline::<K>(attr, &parsed).unwrap_or_else(|e| expand::error_with_item(K::as_written(item), e))
}

fn pipeline<K: Kind>(attr: TokenStream, item: &K::Item) -> syn::Result<TokenStream> {
    // [attribute tokens] -> K::Args
    let args: K::Args = syn::parse2(attr)?;
    // [syn] -> [model]
    let model = K::parse(&args, item)?;
    // [model] -> [ir::Program]
    let program = K::lower(&model)?;
    // [ir::Program] -> OpenCL sources
    let sources = K::render(&program).map_err(|f| match f {
        render::Failure::User(e) => e,
        render::Failure::Internal(e) => diag::internal(K::span(item), e),
    })?;
    // [model, ir::Program, sources] -> Rust
    K::expand(item, &model, &program, &sources)
}

/// `#[derive(Params)]`: the struct's OpenCL declaration and bytes, or the error.
pub fn derive_params(input: TokenStream) -> TokenStream {
    diag::nesting(&input)
        .and_then(|()| syn::parse2::<syn::DeriveInput>(input))
        .and_then(|i| parse::params::from_syn(&i))
        .map(|p| expand::params::expand(&p))
        .unwrap_or_else(syn::Error::into_compile_error)
}
