//! `#[stencil] fn ...` -> `model::Stencil`.

use super::update::{parse_fn, Mode};
use super::Errors;
use crate::model::{Arg, Boundary, Scalar, Stencil};
use syn::ItemFn;

pub fn from_syn(
    item: &ItemFn,
    boundary: Boundary,
    state: Option<syn::Ident>,
    packed: &[crate::parse::attr::Packed],
) -> syn::Result<Stencil> {
    let (mut s, _, _) = parse_fn(item, boundary, state, Mode::Stencil)?;
    pack_fields(&mut s, packed)?;
    Ok(s)
}

/// Marks the grids `packed(name = bits)` names as packed, or refuses, at the name, one that
/// is not a grid argument, holds other than an unsigned integer (a packed value is its bits:
/// `u8` and `u32`, whose every pattern of 1, 2 or 4 low bits is itself) or is the state the
/// steps variant writes (a packed grid is read-only; the state's new values are whole points).
fn pack_fields(s: &mut Stencil, packed: &[crate::parse::attr::Packed]) -> syn::Result<()> {
    let mut errors = Errors::default();
    for p in packed {
        let name = &p.name;
        let Some(arg) = s.args.iter_mut().find(|a| a.name() == name) else {
            errors.spanned(
                name,
                format!("`packed({name} = ..)`: the stencil has no argument `{name}`"),
            );
            continue;
        };
        let Arg::Field(f) = arg else {
            errors.spanned(
                name,
                format!(
                    "`packed({name} = ..)`: `{name}` is not a grid; only grids of `u8` or `u32` (masks, cell kinds) \
                     may be packed"
                ),
            );
            continue;
        };
        if !matches!(f.elem, Scalar::U8 | Scalar::U32) {
            errors.spanned(
                name,
                format!(
                    "`packed({name} = ..)`: `{name}` is a grid of `{}`; only grids of unsigned integers (`u8`, `u32`) \
                     may be packed",
                    f.elem.rust()
                ),
            );
            continue;
        }
        if s.state.as_ref() == Some(name) {
            errors.spanned(
                name,
                format!(
                    "`packed({name} = ..)`: `{name}` is the state (`state = {name}`) that the steps variant replaces \
                     with the stencil's output at each step; a packed grid is read-only, so pack another grid or \
                     drop `state`"
                ),
            );
            continue;
        }
        f.packed = Some(p.bits);
    }
    errors.finish()
}
