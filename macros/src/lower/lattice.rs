//! Lattice model -> IR program: the checkerboard's legality (every read of the state at an odd
//! offset, or the site itself; with `boundary = clamp` only the nearest neighbour along one
//! axis, since a clamped read moves to a site of the reader's colour otherwise), the body
//! lowered once as a stencil body, and the one kernel that updates the sites of one colour.

use super::stencil::{lower_body, region_contracts, Lowered};
use super::sweep::signature;
use crate::ir::sweep::LatticeBody;
use crate::ir::{Access, Binding, Body, Elem, Kernel, Param, Program, Ty};
use crate::model::lattice::Lattice;
use crate::model::sweep::SweepRead;
use crate::model::{Boundary, Scalar};

/// Why a read of the state breaks the checkerboard `(x + y + z) % 2`, if it does.
fn illegal(offset: [i64; 3], boundary: Boundary) -> Option<String> {
    // In u128: an offset may be any i64 the user wrote (its size is checked elsewhere).
    let distance: u128 = offset.iter().map(|d| u128::from(d.unsigned_abs())).sum();
    if distance == 0 {
        return None;
    }
    if distance.is_multiple_of(2) {
        return Some(format!(
            "it reads a site of the reader's own colour (the offsets add up to {distance}, an even number)"
        ));
    }
    let axes = offset.iter().filter(|d| **d != 0).count();
    if boundary == Boundary::Clamp && (axes > 1 || distance > 1) {
        return Some(
            "with `boundary = clamp` a read beyond the edge lands on the edge site, which for this offset can \
             have the reader's colour"
                .to_string(),
        );
    }
    None
}

/// Why a read of the state breaks the parity classes `(x % 2) + 2 (y % 2) + 4 (z % 2)`, if it
/// does: a read reaches another class exactly when one of its components is odd.
fn illegal_parity(offset: [i64; 3], boundary: Boundary) -> Option<String> {
    if offset == [0; 3] {
        return None;
    }
    if offset.iter().all(|d| d % 2 == 0) {
        return Some(
            "every component of its offset is even, so it reads a site of the reader's own parity class \
             (x % 2, y % 2, z % 2), and no colouring of the lattice by parity separates the two"
                .to_string(),
        );
    }
    if boundary == Boundary::Clamp && offset.iter().any(|d| d.unsigned_abs() > 1) {
        return Some(
            "with `boundary = clamp` a read beyond the edge lands on the edge site, which for a component \
             beyond 1 can have the reader's parity"
                .to_string(),
        );
    }
    None
}

/// The colours a rule needs: 2 when the checkerboard separates every read, else `2^rank` when
/// the parity classes do; else the read that no colouring by parity separates, and why.
fn colouring(reads: &[SweepRead], boundary: Boundary, rank: usize) -> Result<usize, (&SweepRead, String)> {
    if reads.iter().all(|r| illegal(r.offset, boundary).is_none()) {
        return Ok(2);
    }
    match reads
        .iter()
        .find_map(|r| illegal_parity(r.offset, boundary).map(|why| (r, why)))
    {
        None => Ok(1 << rank),
        Some(bad) => Err(bad),
    }
}

pub fn lower(l: &Lattice) -> syn::Result<Program> {
    let s = &l.stencil;
    let colours = colouring(&l.reads, s.boundary, s.rank).map_err(|(r, why)| {
        syn::Error::new_spanned(
            &r.tokens,
            format!(
                "`{}` cannot be read by a lattice rule: {why}. The sites of one colour update at once, so a \
                 rule reads its own site and sites of other colours only: neighbours with an odd component \
                 (`s.at(1, 0)`, `s.at(1, 1)`, `s.at(0, -1, 1)`, ...); keep other values in a separate grid",
                r.text
            ),
        )
    })?;
    let Lowered {
        body,
        origin,
        completion,
        fp64,
    } = lower_body(s, Some(s.args[l.state].name()))?;
    let mut params = signature(&body, l.state, Access::ReadWrite);
    // `Lattice<bool>`: 32 sites of one colour per word (see `clforge_runtime::lattice::DeviceBits`).
    let packed = s.out == Scalar::Bool;
    if packed {
        if let Some(p) = params.get_mut(l.state) {
            p.ty = Ty::Packed {
                word: Scalar::U32,
                bits: 1,
            };
        }
    }
    // An unpacked lattice may be a slab of a split one: where its rows and planes start in the
    // whole lattice, and the whole lattice's rows (colours and random streams are the whole's).
    let placed: &[(&str, Scalar)] = if packed {
        &[]
    } else {
        &[
            ("clforge_oy", Scalar::I32),
            ("clforge_oz", Scalar::I32),
            ("clforge_gny", Scalar::I32),
            ("clforge_gnz", Scalar::I32),
        ]
    };
    for &(name, ty) in [
        ("clforge_seed_lo", Scalar::U32),
        ("clforge_seed_hi", Scalar::U32),
        ("clforge_step", Scalar::U32),
        ("clforge_colour", Scalar::I32),
    ]
    .iter()
    .chain(placed)
    {
        params.push(Param::new(
            name,
            Ty::Value(Elem::Scalar(ty)),
            Access::Read,
            Binding::Named,
        ));
    }
    let mut windows: Vec<[i64; 3]> = Vec::new();
    for r in &l.reads {
        if r.offset != [0; 3] && !windows.contains(&r.offset) {
            windows.push(r.offset);
        }
    }
    let schedule = match (colours, packed) {
        (2, false) => "checkerboard",
        (2, true) => "checkerboard_bits",
        (_, false) => "parity",
        (_, true) => "parity_bits",
    };
    let kernel = Kernel::new(&origin, schedule, params);
    Ok(Program {
        origin,
        family: "lattice".into(),
        kernels: vec![kernel],
        tunables: Vec::new(),
        contracts: region_contracts(&body),
        fp64,
        completion,
        body: Body::Lattice(Box::new(LatticeBody {
            body,
            state: l.state,
            colours,
            packed,
            windows,
        })),
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

    #[test]
    fn parity_legality() {
        for ok in [[1, 1, 0], [1, -1, 1], [0, 1, 1], [2, 1, 0], [3, 0, 0]] {
            assert!(illegal_parity(ok, Boundary::Periodic).is_none(), "{ok:?}");
        }
        for bad in [[2, 0, 0], [2, 2, 0], [0, -2, 4]] {
            assert!(illegal_parity(bad, Boundary::Fixed).is_some(), "{bad:?}");
        }
        assert!(illegal_parity([1, 1, 1], Boundary::Clamp).is_none());
        // Extreme offsets are judged, not overflowed (fuzz seed 0x7eb).
        assert!(illegal([i64::MAX, 1, 0], Boundary::Clamp).is_some());
        assert!(illegal([i64::MIN, i64::MIN, 1], Boundary::Periodic).is_none());
        assert!(illegal_parity([i64::MIN, 0, 0], Boundary::Fixed).is_some());
        assert!(illegal_parity([2, 1, 0], Boundary::Clamp).is_some());
    }
}
