//! Lattice model -> IR program: the checkerboard's legality (every read of the state at an odd
//! offset, or the site itself; with `boundary = clamp` only the nearest neighbour along one
//! axis, since a clamped read moves to a site of the reader's colour otherwise), the body
//! lowered once as a stencil body, and the one kernel that updates the sites of one colour.

use super::stencil::{lower_body, region_contracts, Lowered};
use super::sweep::signature;
use crate::ir::sweep::LatticeBody;
use crate::ir::{Access, Binding, Body, Elem, Kernel, Param, Program, Ty};
use crate::model::lattice::Lattice;
use crate::model::{Boundary, Scalar};

/// Why a read of the state breaks the checkerboard, if it does.
fn illegal(offset: [i64; 3], boundary: Boundary) -> Option<String> {
    let distance: i64 = offset.iter().map(|d| d.abs()).sum();
    if distance == 0 {
        return None;
    }
    if distance % 2 == 0 {
        return Some(format!(
            "it reads a site of the reader's own colour (the offsets add up to {distance}, an even number): \
             on the checkerboard both update at once, so the value read would depend on their order. A \
             lattice rule reads its own site and neighbours at odd offsets (`s.at(1, 0)`, `s.at(0, -1)`, ...); \
             keep other values in a separate grid"
        ));
    }
    let axes = offset.iter().filter(|d| **d != 0).count();
    if boundary == Boundary::Clamp && (axes > 1 || distance > 1) {
        return Some(
            "with `boundary = clamp` a read beyond the edge lands on the edge site, which for this offset can \
             have the reader's colour: use `boundary = periodic` or `fixed`, or read only the nearest \
             neighbours along one axis"
                .to_string(),
        );
    }
    None
}

pub fn lower(l: &Lattice) -> syn::Result<Program> {
    let s = &l.stencil;
    for r in &l.reads {
        if let Some(why) = illegal(r.offset, s.boundary) {
            return Err(syn::Error::new_spanned(
                &r.tokens,
                format!("`{}` cannot be read by a checkerboard lattice rule: {why}", r.text),
            ));
        }
    }
    let Lowered {
        body,
        origin,
        completion,
        fp64,
    } = lower_body(s, Some(s.args[l.state].name()))?;
    let mut params = signature(&body, l.state, Access::ReadWrite);
    for (name, ty) in [
        ("clforge_seed_lo", Scalar::U32),
        ("clforge_seed_hi", Scalar::U32),
        ("clforge_step", Scalar::U32),
        ("clforge_colour", Scalar::I32),
    ] {
        params.push(Param::new(
            name,
            Ty::Value(Elem::Scalar(ty)),
            Access::Read,
            Binding::Named,
        ));
    }
    let kernel = Kernel::new(&origin, "checkerboard", params);
    Ok(Program {
        origin,
        family: "lattice".into(),
        kernels: vec![kernel],
        tunables: Vec::new(),
        contracts: region_contracts(&body),
        fp64,
        completion,
        body: Body::Lattice(Box::new(LatticeBody { body, state: l.state })),
        extension: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checkerboard_legality() {
        for ok in [[0, 0, 0], [1, 0, 0], [0, -1, 0], [0, 0, 3], [2, 1, 0], [1, 1, 1]] {
            assert!(illegal(ok, Boundary::Periodic).is_none(), "{ok:?}");
            assert!(illegal(ok, Boundary::Fixed).is_none(), "{ok:?}");
        }
        for bad in [[1, 1, 0], [2, 0, 0], [0, -1, 1], [3, 1, 0]] {
            assert!(illegal(bad, Boundary::Periodic).is_some(), "{bad:?}");
        }
        assert!(illegal([1, 0, 0], Boundary::Clamp).is_none());
        for bad in [[3, 0, 0], [2, 1, 0], [1, 1, 1]] {
            assert!(illegal(bad, Boundary::Clamp).is_some(), "{bad:?}");
        }
    }
}
