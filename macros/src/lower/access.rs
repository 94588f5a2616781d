//! Access analysis: from the (argument, offset) pairs a body reads to the halo per axis, the
//! arguments staged in local memory, and the offsets that need wrapped/clamped coordinates.
//! Stencils use it today; sweeps (reads behind and ahead) and lattice neighbourhoods will too.

use crate::ir::stencil::Accesses;
use crate::model::{Arg, Scalar};
use std::collections::BTreeSet;

/// The state of temporal blocking: the grid the output replaces at each step. Named by
/// `#[stencil(state = u)]`, or the only grid of the output's type; `Err` when the name is not
/// such a grid. Several candidates and no name: no state (the steps variant says why).
fn state(args: &[Arg], out: Scalar, named: Option<&syn::Ident>) -> syn::Result<(Option<usize>, Vec<usize>)> {
    let candidates: Vec<usize> = args
        .iter()
        .enumerate()
        // A packed grid is read-only (`packed(..)`): never the state.
        .filter(|(_, a)| matches!(a, Arg::Field(f) if f.elem == out && f.packed.is_none()))
        .map(|(i, _)| i)
        .collect();
    let Some(name) = named else {
        let only = match candidates[..] {
            [i] => Some(i),
            _ => None,
        };
        return Ok((only, candidates));
    };
    match args.iter().position(|a| a.name() == name) {
        Some(i) if candidates.contains(&i) => Ok((Some(i), candidates)),
        Some(i) => Err(syn::Error::new_spanned(
            name,
            match &args[i] {
                Arg::Field(f) => format!(
                    "`state = {name}`: the grid `{name}` holds `{}` but the stencil returns `{}`; the state is the grid the output replaces at each step",
                    f.elem.rust(),
                    out.rust()
                ),
                _ => format!("`state = {name}`: `{name}` is not a grid; the state is the grid the output replaces at each step"),
            },
        )),
        None => Err(syn::Error::new_spanned(
            name,
            format!("`state = {name}`: the stencil has no argument `{name}`"),
        )),
    }
}

pub fn analyse(
    args: &[Arg],
    out: Scalar,
    reads: &BTreeSet<(usize, [i64; 3])>,
    named_state: Option<&syn::Ident>,
) -> syn::Result<Accesses> {
    let (iterated, state_candidates) = state(args, out, named_state)?;
    let mut halo = [0usize; 3];
    let mut staged = vec![false; args.len()];
    let mut read = vec![false; args.len()];
    let mut axis: [BTreeSet<i64>; 3] = Default::default();
    for (arg, off) in reads {
        for k in 0..3 {
            halo[k] = halo[k].max(off[k].unsigned_abs() as usize);
            if off[k] != 0 {
                axis[k].insert(off[k]);
            }
        }
        if off.iter().any(|&d| d != 0) {
            staged[*arg] = true;
        }
        read[*arg] = true;
    }
    Ok(Accesses {
        halo,
        staged,
        read,
        axis_offsets: axis.map(|a| a.into_iter().collect()),
        iterated,
        state_candidates,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Field;

    #[test]
    fn halo_and_staging_follow_the_reads() {
        let f = |n: &str, elem| {
            Arg::Field(Field {
                name: syn::Ident::new(n, proc_macro2::Span::call_site()),
                elem,
                packed: None,
            })
        };
        let args = [f("u", Scalar::F32), f("mask", Scalar::U8)];
        let reads: BTreeSet<_> = [(0, [1, 0, 0]), (0, [0, -2, 0]), (1, [0, 0, 0])].into();
        let a = analyse(&args, Scalar::F32, &reads, None).unwrap();
        assert_eq!(a.halo, [1, 2, 0]);
        assert_eq!(a.staged, vec![true, false]);
        assert_eq!(a.read, vec![true, true]);
        assert_eq!(a.axis_offsets[1], vec![-2]);
        assert_eq!(a.iterated, Some(0));
    }

    #[test]
    fn the_state_is_named_or_the_only_grid_of_the_output_type() {
        let f = |n: &str, elem| {
            Arg::Field(Field {
                name: syn::Ident::new(n, proc_macro2::Span::call_site()),
                elem,
                packed: None,
            })
        };
        let id = |n: &str| syn::Ident::new(n, proc_macro2::Span::call_site());
        let args = [f("rhs", Scalar::F32), f("u", Scalar::F32), f("mask", Scalar::U8)];
        let reads = BTreeSet::new();
        let a = analyse(&args, Scalar::F32, &reads, None).unwrap();
        assert_eq!(a.iterated, None, "two f32 grids: ambiguous");
        assert_eq!(a.state_candidates, vec![0, 1]);
        let a = analyse(&args, Scalar::F32, &reads, Some(&id("u"))).unwrap();
        assert_eq!(a.iterated, Some(1));
        assert!(analyse(&args, Scalar::F32, &reads, Some(&id("mask"))).is_err());
        assert!(analyse(&args, Scalar::F32, &reads, Some(&id("nope"))).is_err());
        let a = analyse(&args[1..], Scalar::F32, &reads, None).unwrap();
        assert_eq!(a.iterated, Some(0));
    }
}
