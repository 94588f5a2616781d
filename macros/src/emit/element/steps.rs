//! The class-table gather over several steps per launch (`_gather_steps`): the window from
//! local memory, each role behind its class bit, the node's velocity from `lv`; the
//! arithmetic of the gather's lines.

use super::gather::{c_dof, derived_init};
use super::window::{reg, Window};
use super::{Shape, StepsLines, StepsRole};
use crate::emit::c::{self, assign, bin, index, int, var, Op, E, S};

/// `array[lc + dx + dy * GS_W + dz * GS_WH + k * GS_N]`: DOF `k` of the local node at offset
/// `(dx, dy, dz)` from `lc`.
fn local_at(array: &str, dx: i64, dy: i64, dz: i64, k: usize) -> E {
    let mut e = var("lc");
    for (o, unit) in [(dx, None), (dy, Some("GS_W")), (dz, Some("GS_WH"))] {
        if o == 0 {
            continue;
        }
        let op = if o > 0 { Op::Add } else { Op::Sub };
        let term = match unit {
            None => int(o.unsigned_abs() as usize),
            Some(u) => var(u),
        };
        e = bin(op, e, term);
    }
    if k > 0 {
        let plane = if k == 1 {
            var("GS_N")
        } else {
            bin(Op::Mul, int(k), var("GS_N"))
        };
        e = bin(Op::Add, e, plane);
    }
    index(array, e)
}

pub(super) fn lines(s: &Shape, w: &Window, patch_decl: &[S], patch_shift: &[S], patch_roles: &[Vec<S>]) -> StepsLines {
    let d = s.d;
    let load_rows = |rows: &[i64]| -> Vec<S> {
        rows.iter()
            .flat_map(|&dy| {
                w.row_regs.chunks(d).map(move |dofs| {
                    S::Line(
                        dofs.iter()
                            .map(|&(dx, dz, k)| assign(var(reg(dy, dx, dz, k)), "", local_at("src", dx, dy, dz, k)))
                            .collect(),
                    )
                })
            })
            .collect()
    };
    let velocity = S::Decl {
        konst: true,
        ty: "real".into(),
        vars: (0..d).map(|k| (format!("v_{k}"), local_at("lv", 0, 0, 0, k))).collect(),
        comment: Some("the node's velocity".into()),
    };
    let init = derived_init(s, Some(velocity), &|k| var(format!("v_{k}")));
    let roles = patch_roles
        .iter()
        .enumerate()
        .map(|(a, role)| StepsRole {
            comment: format!("as local node {a} (offset {:?}) of its element", s.offs[a]),
            bit: 1u32.checked_shl(a as u32).unwrap_or(0),
            lines: c::lines(role),
        })
        .collect();
    // Each store: one line of DOFs `to(k) = value(k)`.
    let store = |to: &dyn Fn(usize) -> E, value: &str| {
        S::Line((0..d).map(|k| assign(to(k), "", var(format!("{value}_{k}")))).collect())
    };
    StepsLines {
        decl: c::lines(patch_decl),
        load_first: c::lines(&load_rows(&[-1, 0])),
        load_next: c::lines(&load_rows(&[1])),
        shift: c::lines(patch_shift),
        init: c::lines(&init),
        roles,
        update: c::lines(&update(d)),
        store_local: c::lines(&[
            store(&|k| local_at("dst", 0, 0, 0, k), "un"),
            store(&|k| local_at("lv", 0, 0, 0, k), "vv"),
        ]),
        store_global: c::lines(&[store(&|k| c_dof("u_out", k), "un"), store(&|k| c_dof("v_out", k), "vv")]),
    }
}

/// `v + g·M⁻¹·dt`, then `u + v·dt` with `u` the window's centre: the tails' expressions.
fn update(d: usize) -> Vec<S> {
    vec![
        S::Decl {
            konst: true,
            ty: "real".into(),
            vars: (0..d)
                .map(|k| {
                    (
                        format!("vv_{k}"),
                        bin(
                            Op::Add,
                            var(format!("v_{k}")),
                            bin(
                                Op::Mul,
                                bin(Op::Mul, var(format!("g_{k}")), var(format!("mi_{k}"))),
                                var("dt"),
                            ),
                        ),
                    )
                })
                .collect(),
            comment: None,
        },
        S::Decl {
            konst: true,
            ty: "real".into(),
            vars: (0..d)
                .map(|k| {
                    (
                        format!("un_{k}"),
                        bin(
                            Op::Add,
                            var(reg(0, 0, 0, k)),
                            bin(Op::Mul, var(format!("vv_{k}")), var("dt")),
                        ),
                    )
                })
                .collect(),
            comment: None,
        },
    ]
}
