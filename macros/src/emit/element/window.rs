//! The gather's register window (order 1, 2-D and 3-D): node `c` as local node `a` reads
//! element node `b` at offset `offs[b] - offs[a]` from itself (each component -1, 0 or 1),
//! held in three rows of registers `p<row>_<x>_<z>_<k>` (rows `m`, `c`, `p`: y - 1, y, y + 1;
//! `x`, `z` the offset plus 1) slid along y.

use super::{at, row_product, Shape};
use crate::emit::c::{self, assign, bin, call, decl, int, var, Op, E, S};

/// The register of DOF `k` at offset `(dx, dy, dz)` from the window's centre.
pub(super) fn reg(dy: i64, dx: i64, dz: i64, k: usize) -> String {
    let row_name = ["m", "c", "p"][(dy + 1) as usize];
    format!("p{row_name}_{}_{}_{k}", dx + 1, dz + 1)
}

pub(super) struct Window {
    /// DOFs per node.
    pub(super) d: usize,
    /// The z offsets of the window (only 0 in 2-D).
    pub(super) zs: Vec<i64>,
    /// A row's registers, `(dx, dz, k)` with z slowest (the same for every row).
    pub(super) row_regs: Vec<(i64, i64, usize)>,
}

impl Window {
    pub(super) fn new(s: &Shape) -> Window {
        let d = s.d;
        let zs: Vec<i64> = if s.v.dim == 3 { vec![-1, 0, 1] } else { vec![0] };
        let row_regs = zs
            .iter()
            .flat_map(|&dz| (-1..=1).flat_map(move |dx| (0..d).map(move |k| (dx, dz, k))))
            .collect();
        Window { d, zs, row_regs }
    }

    /// `p<row>_.. = u_in[(base + dx + nxyn * dz) * DOFS + k]`, one line per (dz, dx).
    pub(super) fn load_row(&self, dy: i64, base: E) -> Vec<S> {
        let d = self.d;
        self.row_regs
            .chunks(d)
            .map(|dofs| {
                let (dx, dz, _) = dofs[0];
                let mut node = base.clone();
                if dx != 0 {
                    node = bin(
                        if dx > 0 { Op::Add } else { Op::Sub },
                        node,
                        int(dx.unsigned_abs() as usize),
                    );
                }
                if dz != 0 {
                    node = bin(if dz > 0 { Op::Add } else { Op::Sub }, node, var("nxyn"));
                }
                if d == 2 {
                    // Both DOFs of the node as one 8-byte load.
                    let pair = call(
                        "vload2",
                        vec![int(0), bin(Op::Add, var("u_in"), bin(Op::Mul, node, var("DOFS")))],
                    );
                    let mut block = vec![decl("real2", "w2", pair)];
                    block.extend(
                        dofs.iter()
                            .map(|&(dx, dz, k)| assign(var(reg(dy, dx, dz, k)), "", var(format!("w2.s{k}")))),
                    );
                    return S::Block(block);
                }
                S::Line(
                    dofs.iter()
                        .map(|&(dx, dz, k)| assign(var(reg(dy, dx, dz, k)), "", at("u_in", node.clone(), "DOFS", k)))
                        .collect(),
                )
            })
            .collect()
    }

    /// Declares the window's registers: one declaration per row and z offset.
    pub(super) fn decl(&self) -> Vec<S> {
        let decl_row = |dy: i64| -> Vec<S> {
            self.row_regs
                .chunks(3 * self.d)
                .map(|group| S::Decl {
                    konst: false,
                    ty: "real".into(),
                    vars: group.iter().map(|&(dx, dz, k)| (reg(dy, dx, dz, k), int(0))).collect(),
                    comment: Some(format!("y {:+}, z {:+}", dy, group[0].1)),
                })
                .collect()
        };
        (-1..=1).flat_map(decl_row).collect()
    }

    /// Loads rows y − 1 and y of node `c0`'s window.
    pub(super) fn first(&self) -> Vec<S> {
        let mut first = self.load_row(-1, bin(Op::Sub, var("c0"), var("nxn")));
        first.extend(self.load_row(0, var("c0")));
        first
    }

    /// Loads row y + 1 of node `c`'s window.
    pub(super) fn next(&self) -> Vec<S> {
        self.load_row(1, bin(Op::Add, var("c"), var("nxn")))
    }

    /// Slides the window one row along y (row y becomes y − 1, y + 1 becomes y).
    pub(super) fn shift(&self) -> Vec<S> {
        [(-1, 0), (0, 1)]
            .into_iter()
            .flat_map(|(to, from)| {
                self.row_regs
                    .chunks(self.d)
                    .map(move |dofs| {
                        S::Line(
                            dofs.iter()
                                .map(|&(dx, dz, k)| assign(var(reg(to, dx, dz, k)), "", var(reg(from, dx, dz, k))))
                                .collect(),
                        )
                    })
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// Per role `a`: `u_e` from the window's registers, packed, and the role's rows of `K·U`
    /// subtracted from `g_<k>` (the same arithmetic in the same order as the gather's roles).
    pub(super) fn roles(&self, s: &Shape, pack_u: &[S]) -> Vec<Vec<S>> {
        let (n, d, offs) = (s.n, s.d, s.offs);
        (0..n)
            .map(|a| {
                let mut lines: Vec<S> = s
                    .dofs_of((0..n).collect())
                    .map(|(b, k)| {
                        let rel = |ax: usize| offs[b][ax] as i64 - offs[a][ax] as i64;
                        decl("real", s.ui(b, k), var(reg(rel(1), rel(0), rel(2), k)))
                    })
                    .collect();
                lines.extend(pack_u.iter().cloned());
                lines.extend(
                    (0..d).map(|k| assign(var(format!("g_{k}")), "-", row_product("K", None, a * d + k, s.nv))),
                );
                lines
            })
            .collect()
    }
}

/// The roles as blocks, each behind its comment.
pub(super) fn role_blocks(s: &Shape, roles: &[Vec<S>]) -> Vec<String> {
    roles
        .iter()
        .enumerate()
        .flat_map(|(a, role)| {
            let mut out = vec![format!(
                "/* as local node {a} (offset {:?}) of its element */",
                s.offs[a]
            )];
            out.push("{".into());
            out.extend(c::lines(role).into_iter().map(|l| format!("    {l}")));
            out.push("}".into());
            out
        })
        .collect()
}
