//! The assembled node stencil (order 1, where the window is laid out): a node playing every
//! role sums `K_e` over its elements once for all, `ka[(n * DOFS + k) * DOFS + j]` the
//! coefficient of DOF `j` of its neighbour `n` (x fastest, then y, then z; offsets -1, 0, 1)
//! in the force on its DOF `k`, read after `K_e`'s rows (`ND * NV` chunks) in the same
//! constant buffer (the runtime's `assembled_stencil`), then two limits. One statement per
//! row of neighbours (`dy`, `dz`) and DOF: NODES² · DOFS² products become 3^dim · DOFS².
//! The guard keeps the element-by-element sums where the two could round differently into
//! an overflow or turn ±inf into NaN in one form and not the other: it takes the stencil
//! only where Σ|u| of the window is at most `ka[L]` (no product or partial sum of either
//! form reaches a quarter of the largest real) and |g_k| at most `ka[L + 1]`; a NaN or ±inf
//! fails it.

use super::window::{reg, Window};
use super::{Assembled, Shape};
use crate::emit::c::{self, assign, bin, call, decl, index, int, neg, var, Op, E, S};

pub(super) fn lines(s: &Shape, w: &Window, patch_decl: &[S]) -> Assembled {
    let (d, nd, nv) = (s.d, s.nd, s.nv);
    let dim = s.v.dim;
    let neighbour = |dx: i64, dy: i64, dz: i64| -> usize {
        let z = if dim == 3 { (dz + 1) as usize } else { 0 };
        (z * 3 + (dy + 1) as usize) * 3 + (dx + 1) as usize
    };
    let limit = (if dim == 3 { 27 } else { 9 }) * d * d;
    let head = vec![
        format!(
            "__constant const real* ka = (__constant const real*)(K + {}); /* assembled: after K_e's {nd} rows */",
            nd * nv
        ),
        c::lines(&[decl("real", "ua", window_sum(w))]).concat(),
    ];
    let cond = std::iter::once(format!("ua <= ka[{limit}]"))
        .chain((0..d).map(|k| format!("fabs(g_{k}) <= ka[{}]", limit + 1)))
        .collect::<Vec<_>>()
        .join(" && ");
    // Each product fused into the running force, `g = fma(-ka[i], u, g)` term by term (one
    // rounding per term instead of two: the stencil's form agrees with the host to rounding
    // in any case, and half the instructions of separate products and sums).
    let mut stmts: Vec<S> = Vec::new();
    for &dz in &w.zs {
        for dy in -1..=1i64 {
            for k in 0..d {
                let g = || var(format!("g_{k}"));
                let terms = (-1..=1i64).flat_map(|dx| (0..d).map(move |j| (dx, j)));
                stmts.push(S::Line(
                    terms
                        .map(|(dx, j)| {
                            let n = neighbour(dx, dy, dz);
                            let coefficient = index("ka", int((n * d + k) * d + j));
                            assign(
                                g(),
                                "",
                                call("fma", vec![neg(coefficient), var(reg(dy, dx, dz, j)), g()]),
                            )
                        })
                        .collect(),
                ));
            }
        }
    }
    // The general path's node: the window's registers declared and loaded around `c`.
    let mut load = patch_decl.to_vec();
    load.extend(w.load_row(-1, bin(Op::Sub, var("c"), var("nxn"))));
    load.extend(w.load_row(0, var("c")));
    load.extend(w.load_row(1, bin(Op::Add, var("c"), var("nxn"))));
    Assembled {
        head,
        cond,
        sum: c::lines(&stmts),
        load: c::lines(&load),
    }
}

/// Σ|u| over the window's registers as a pairwise tree (short dependency chains): z slowest,
/// then y, x, DOF (a row's registers come z by z, `3 · d` at a time).
fn window_sum(w: &Window) -> E {
    let d = w.d;
    let window: Vec<(i64, i64, i64, usize)> = w
        .row_regs
        .chunks(3 * d)
        .flat_map(|plane| (-1..=1i64).flat_map(move |dy| plane.iter().map(move |&(dx, dz, k)| (dx, dy, dz, k))))
        .collect();
    let mut level: Vec<E> = window
        .iter()
        .map(|&(dx, dy, dz, k)| call("fabs", vec![var(reg(dy, dx, dz, k))]))
        .collect();
    while level.len() > 1 {
        level = level
            .chunks(2)
            .map(|p| {
                if p.len() == 2 {
                    bin(Op::Add, p[0].clone(), p[1].clone())
                } else {
                    p[0].clone()
                }
            })
            .collect();
    }
    level.pop().unwrap_or(E::Int(0))
}
