//! `#[sweep] fn ...` -> the stencil parts of `model::sweep::Sweep`, the swept field and its reads.

use super::update::{parse_fn, Mode};
use crate::model::sweep::SweepRead;
use crate::model::{Boundary, Stencil};
use syn::spanned::Spanned;
use syn::ItemFn;

/// A sweep's function: the stencil parts, the swept argument and its reads.
pub fn from_syn(item: &ItemFn, boundary: Boundary) -> syn::Result<(Stencil, usize, Vec<SweepRead>)> {
    let (s, sweep, _) = parse_fn(item, boundary, None, Mode::Sweep)?;
    let (state, reads) = sweep.ok_or_else(|| syn::Error::new(item.sig.span(), "invalid sweep"))?;
    Ok((s, state, reads))
}
