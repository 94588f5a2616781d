//! Attribute arguments: `#[clforge::stencil(boundary = periodic, state = u)]`.

use crate::model::Boundary;
use syn::parse::{Parse, ParseStream};
use syn::{Ident, Token};

/// Arguments of `#[stencil(...)]`.
pub struct StencilArgs {
    pub boundary: Boundary,
    /// `state = u`: the grid the steps variant iterates (the output replaces it each step).
    pub state: Option<Ident>,
}

impl Parse for StencilArgs {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let mut boundary = None;
        let mut state: Option<Ident> = None;
        while !input.is_empty() {
            let key: Ident = input.parse()?;
            input.parse::<Token![=]>()?;
            let value: Ident = input.parse()?;
            match key.to_string().as_str() {
                "boundary" => {
                    if boundary.is_some() {
                        return Err(syn::Error::new_spanned(&key, "`boundary` is given twice"));
                    }
                    boundary = Some(match value.to_string().as_str() {
                        "fixed" => Boundary::Fixed,
                        "periodic" => Boundary::Periodic,
                        "clamp" => Boundary::Clamp,
                        other => {
                            return Err(syn::Error::new_spanned(
                                &value,
                                format!("unknown boundary `{other}`; expected `fixed`, `periodic` or `clamp`"),
                            ))
                        }
                    });
                }
                "state" => {
                    if state.is_some() {
                        return Err(syn::Error::new_spanned(&key, "`state` is given twice"));
                    }
                    state = Some(value);
                }
                other => {
                    return Err(syn::Error::new_spanned(
                        &key,
                        format!("unknown stencil argument `{other}`; expected `boundary` or `state`"),
                    ))
                }
            }
            if !input.is_empty() {
                input.parse::<Token![,]>()?;
            }
        }
        Ok(StencilArgs {
            boundary: boundary.unwrap_or(Boundary::Fixed),
            state,
        })
    }
}
