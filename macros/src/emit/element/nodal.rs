//! The element-by-element kernels' statements: node indices, the element's DOFs loaded and
//! packed into `real8` chunks, row products, the scatter and the stresses.

use super::{at, chunk_nodes, node, node_place, offset, row_product, Shape};
use crate::emit::c::{assign, decl, int, var, E, S};

/// `n<a>` from the structured grid: `node0` plus the node's offset.
pub(super) fn node_ids(s: &Shape) -> Vec<S> {
    (0..s.n)
        .map(|a| decl("int", format!("n{a}"), offset(var("node0"), s.offs[a])))
        .collect()
}

/// `n<a>` from the connectivity `elem_nodes`.
pub(super) fn node_ids_loaded(s: &Shape) -> Vec<S> {
    (0..s.n)
        .map(|a| decl("int", format!("n{a}"), at("elem_nodes", var("e"), "NODES", a)))
        .collect()
}

/// `u_<i>`, one line per node, so that the element's node structure reads in the kernel.
pub(super) fn load_u(s: &Shape) -> Vec<S> {
    (0..s.n)
        .map(|a| S::Decl {
            konst: true,
            ty: "real".into(),
            vars: (0..s.d).map(|k| (s.ui(a, k), at("u", node(a), "DOFS", k))).collect(),
            comment: Some(format!("node {a} {}", node_place(s.offs[a], s.v.dim))),
        })
        .collect()
}

/// The chunks `U<c>` of `u_e`, zero-padded, with the lanes of each node.
pub(super) fn pack_u(s: &Shape) -> Vec<S> {
    let lanes_of = s.v.lanes;
    (0..s.nv)
        .map(|c| {
            let lanes = (0..lanes_of)
                .map(|l| {
                    let i = c * lanes_of + l;
                    if i < s.nd {
                        var(format!("u_{i}"))
                    } else {
                        int(0)
                    }
                })
                .collect();
            S::Decl {
                konst: true,
                ty: "real8".into(),
                vars: vec![(format!("U{c}"), E::Vector("real8".into(), lanes))],
                comment: Some(chunk_nodes(c, lanes_of, s.nd, s.d)),
            }
        })
        .collect()
}

/// `ku_<r>`: row `r` of `mat · U` for every row.
pub(super) fn rows(s: &Shape, mat: &str) -> Vec<S> {
    (0..s.nd)
        .map(|r| decl("real", format!("ku_{r}"), row_product(mat, None, r, s.nv)))
        .collect()
}

/// `f[n<a> * DOFS + k] -= ku_<i>`.
pub(super) fn scatter(s: &Shape) -> Vec<S> {
    s.dofs_of((0..s.n).collect())
        .map(|(a, k)| assign(at("f", node(a), "DOFS", k), "-", var(format!("ku_{}", a * s.d + k))))
        .collect()
}

/// `stress[e * STRAINS + s] = G·U` from the material's block `gb`.
pub(super) fn stress(s: &Shape) -> Vec<S> {
    (0..s.v.strains)
        .map(|st| {
            assign(
                at("stress", var("e"), "STRAINS", st),
                "",
                row_product("G", Some("gb"), st, s.nv),
            )
        })
        .collect()
}
