//! `#[lattice] fn ...` (a site rule) -> `model::lattice::Lattice`.

use super::update::{parse_fn, Mode};
use crate::model::lattice::Lattice;
use crate::model::Boundary;
use syn::spanned::Spanned;
use syn::ItemFn;

/// A lattice rule: the stencil (without the draws argument), the state's argument index, the
/// draws argument's position in the signature and every read of the state.
pub fn from_syn(item: &ItemFn, boundary: Boundary) -> syn::Result<Lattice> {
    let (stencil, parts, draws) = parse_fn(item, boundary, None, Mode::Lattice)?;
    let (state, reads) = parts.ok_or_else(|| syn::Error::new(item.sig.span(), "invalid lattice rule"))?;
    Ok(Lattice {
        stencil,
        state,
        draws,
        reads,
    })
}
