//! Access analysis: from the (argument, offset) pairs a body reads to the halo per axis, the
//! arguments staged in local memory, and the offsets that need wrapped/clamped coordinates.
//! Stencils use it today; sweeps (reads behind and ahead) and lattice neighbourhoods will too.

use crate::ir::stencil::Accesses;
use crate::model::{Arg, Scalar};
use std::collections::BTreeSet;

pub fn analyse(args: &[Arg], out: Scalar, reads: &BTreeSet<(usize, [i64; 3])>) -> Accesses {
    let mut halo = [0usize; 3];
    let mut staged = vec![false; args.len()];
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
    }
    Accesses {
        halo,
        staged,
        axis_offsets: axis.map(|a| a.into_iter().collect()),
        // The grid the output replaces when iterating: the first grid of the output's type.
        iterated: args.iter().position(|a| matches!(a, Arg::Field(f) if f.elem == out)),
    }
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
            })
        };
        let args = [f("u", Scalar::F32), f("mask", Scalar::U8)];
        let reads: BTreeSet<_> = [(0, [1, 0, 0]), (0, [0, -2, 0]), (1, [0, 0, 0])].into();
        let a = analyse(&args, Scalar::F32, &reads);
        assert_eq!(a.halo, [1, 2, 0]);
        assert_eq!(a.staged, vec![true, false]);
        assert_eq!(a.axis_offsets[1], vec![-2]);
        assert_eq!(a.iterated, Some(0));
    }
}
