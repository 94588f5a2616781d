//! Attribute arguments: `#[clforge::stencil(boundary = periodic, state = u)]`.

use crate::model::Boundary;
use syn::parse::{Parse, ParseStream};
use syn::{Ident, Token};

/// Arguments of `#[stencil(...)]`.
pub struct StencilArgs {
    pub boundary: Boundary,
    /// `state = u`: the grid the steps variant iterates (the output replaces it each step).
    pub state: Option<Ident>,
    /// `packed(cell = 2, wall = 1)`: grids stored 1, 2 or 4 bits per point on the device.
    pub packed: Vec<Packed>,
}

/// One `name = bits` of `packed(..)`: the grid's name and its bits per point.
#[derive(Clone, Debug)]
pub struct Packed {
    pub name: Ident,
    pub bits: u32,
}

use clforge_abi::PACKED_BITS;

/// The inside of `packed(..)`: `name = bits, ...`, each grid once, bits 1, 2 or 4.
fn packed_list(input: ParseStream, parens: proc_macro2::Span, out: &mut Vec<Packed>) -> syn::Result<()> {
    let start = out.len();
    while !input.is_empty() {
        let name: Ident = input.parse()?;
        input.parse::<Token![=]>()?;
        let lit: syn::LitInt = input.parse().map_err(|e| {
            syn::Error::new(
                e.span(),
                "give the bits per point as an integer literal: `packed(cell = 2)`",
            )
        })?;
        let bits = lit
            .base10_parse::<u32>()
            .ok()
            .filter(|b| PACKED_BITS.contains(b) && lit.suffix().is_empty());
        let Some(bits) = bits else {
            return Err(syn::Error::new_spanned(
                &lit,
                format!(
                    "a packed grid holds 1, 2 or 4 bits per point (powers of two dividing 32, so no value straddles \
                     two words), found `{lit}`"
                ),
            ));
        };
        if out.iter().any(|p| p.name == name) {
            return Err(syn::Error::new_spanned(
                &name,
                format!("`{name}` is packed twice; give each grid one `name = bits`"),
            ));
        }
        out.push(Packed { name, bits });
        if !input.is_empty() {
            input.parse::<Token![,]>()?;
        }
    }
    if out.len() == start {
        return Err(syn::Error::new(
            parens,
            "name the grids to pack and their bits per point: `packed(cell = 2)`",
        ));
    }
    Ok(())
}

impl Parse for StencilArgs {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let mut boundary = None;
        let mut state: Option<Ident> = None;
        let mut packed = Vec::new();
        while !input.is_empty() {
            let key: Ident = input.parse()?;
            if key == "packed" {
                let content;
                let parens = syn::parenthesized!(content in input);
                packed_list(&content, parens.span.join(), &mut packed)?;
                if !input.is_empty() {
                    input.parse::<Token![,]>()?;
                }
                continue;
            }
            input.parse::<Token![=]>()?;
            let value: Ident = input.parse()?;
            match key.to_string().as_str() {
                "boundary" => boundary_arg(&key, &value, &mut boundary)?,
                "state" => {
                    if state.is_some() {
                        return Err(syn::Error::new_spanned(&key, "`state` is given twice"));
                    }
                    state = Some(value);
                }
                other => {
                    return Err(syn::Error::new_spanned(
                        &key,
                        format!("unknown stencil argument `{other}`; expected `boundary`, `state` or `packed(..)`"),
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
            packed,
        })
    }
}

/// Arguments of `#[sweep(...)]`: `order = forward | backward | (forward, backward[, ..])`
/// (per axis x, y, z) and `boundary = fixed | clamp`.
pub struct SweepArgs {
    pub boundary: Boundary,
    pub order: Option<crate::model::sweep::Order>,
}

fn direction(id: &Ident) -> syn::Result<bool> {
    match id.to_string().as_str() {
        "forward" => Ok(true),
        "backward" => Ok(false),
        other => Err(syn::Error::new_spanned(
            id,
            format!("unknown direction `{other}`; expected `forward` (increasing indices) or `backward`"),
        )),
    }
}

impl Parse for SweepArgs {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let mut boundary = None;
        let mut order = None;
        while !input.is_empty() {
            let key: Ident = input.parse()?;
            input.parse::<Token![=]>()?;
            match key.to_string().as_str() {
                "boundary" => {
                    let value: Ident = input.parse()?;
                    if boundary.is_some() {
                        return Err(syn::Error::new_spanned(&key, "`boundary` is given twice"));
                    }
                    boundary = Some(match value.to_string().as_str() {
                        "fixed" => Boundary::Fixed,
                        "clamp" => Boundary::Clamp,
                        "periodic" => {
                            return Err(syn::Error::new_spanned(
                                &value,
                                "a sweep cannot be periodic: its first point would read new values of its last, \
                                 which is computed after it (a cycle); use `fixed` or `clamp`",
                            ))
                        }
                        other => {
                            return Err(syn::Error::new_spanned(
                                &value,
                                format!("unknown boundary `{other}`; a sweep's boundary is `fixed` or `clamp`"),
                            ))
                        }
                    });
                }
                "order" => {
                    if order.is_some() {
                        return Err(syn::Error::new_spanned(&key, "`order` is given twice"));
                    }
                    let (forward, span) = if input.peek(syn::token::Paren) {
                        let content;
                        let parens = syn::parenthesized!(content in input);
                        let ids = content.parse_terminated(Ident::parse, Token![,])?;
                        if ids.is_empty() || ids.len() > 3 {
                            return Err(syn::Error::new(
                                parens.span.join(),
                                "give one direction per axis: `order = (forward, backward)`",
                            ));
                        }
                        (
                            ids.iter().map(direction).collect::<syn::Result<Vec<_>>>()?,
                            parens.span.join(),
                        )
                    } else {
                        let value: Ident = input.parse()?;
                        (vec![direction(&value)?], value.span())
                    };
                    order = Some(crate::model::sweep::Order { forward, span });
                }
                other => {
                    return Err(syn::Error::new_spanned(
                        &key,
                        format!("unknown sweep argument `{other}`; expected `order` or `boundary`"),
                    ))
                }
            }
            if !input.is_empty() {
                input.parse::<Token![,]>()?;
            }
        }
        Ok(SweepArgs {
            boundary: boundary.unwrap_or(Boundary::Fixed),
            order,
        })
    }
}

/// Arguments of `#[lattice(...)]`: `boundary = periodic | fixed | clamp` (default `periodic`).
pub struct LatticeArgs {
    pub boundary: Boundary,
}

impl Parse for LatticeArgs {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let mut boundary = None;
        while !input.is_empty() {
            let key: Ident = input.parse()?;
            input.parse::<Token![=]>()?;
            let value: Ident = input.parse()?;
            match key.to_string().as_str() {
                "boundary" => boundary_arg(&key, &value, &mut boundary)?,
                other => {
                    return Err(syn::Error::new_spanned(
                        &key,
                        format!("unknown lattice argument `{other}`; expected `boundary`"),
                    ))
                }
            }
            if !input.is_empty() {
                input.parse::<Token![,]>()?;
            }
        }
        Ok(LatticeArgs {
            boundary: boundary.unwrap_or(Boundary::Periodic),
        })
    }
}

/// `boundary = fixed | periodic | clamp` into `slot`, given at most once.
fn boundary_arg(key: &Ident, value: &Ident, slot: &mut Option<Boundary>) -> syn::Result<()> {
    if slot.is_some() {
        return Err(syn::Error::new_spanned(key, "`boundary` is given twice"));
    }
    *slot = Some(match value.to_string().as_str() {
        "fixed" => Boundary::Fixed,
        "periodic" => Boundary::Periodic,
        "clamp" => Boundary::Clamp,
        other => {
            return Err(syn::Error::new_spanned(
                value,
                format!("unknown boundary `{other}`; expected `fixed`, `periodic` or `clamp`"),
            ))
        }
    });
    Ok(())
}
