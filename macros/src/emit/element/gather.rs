//! The node-centric gather: a node is local node `a` of up to `nodes` elements; per role its
//! element's `K_e` rows times the element's DOFs, then the node's update (the tails).

use super::{at, node, row_product_strided, GatherRole, Shape};
use crate::emit::c::{self, assign, bin, call, chain, decl, index, int, var, Op, E, S};

/// The roles of the gather; `pe`: each element's own `K_e` at `kb` in `Ke` (one per element,
/// element order) instead of the shared `K`.
pub(super) fn roles(s: &Shape, pe: bool, node_ids: &[S], pack_u: &[S]) -> Vec<GatherRole> {
    (0..s.n).map(|a| role(s, a, pe, node_ids, pack_u)).collect()
}

/// The role of local node `a`.
fn role(s: &Shape, a: usize, pe: bool, node_ids: &[S], pack_u: &[S]) -> GatherRole {
    let axes = ["ix", "iy", "iz"];
    let sizes = ["nx", "ny", "nz"];
    let (d, p, v) = (s.d, s.p, s.v);
    let o = s.offs[a];
    let mut cond = Vec::new();
    let mut coords = Vec::new();
    for ax in 0..v.dim {
        let (i, m, size) = (var(axes[ax]), o[ax], sizes[ax]);
        let shifted = if m == 0 {
            i.clone()
        } else {
            bin(Op::Sub, i.clone(), int(m))
        };
        if m > 0 {
            cond.push(bin(Op::Ge, i, int(m)));
        }
        if p > 1 {
            cond.push(bin(Op::Eq, bin(Op::Rem, shifted.clone(), int(p)), int(0)));
        }
        let e = if p > 1 { bin(Op::Div, shifted, int(p)) } else { shifted };
        cond.push(bin(Op::Lt, e.clone(), var(size)));
        coords.push(decl("int", format!("e{}", ["x", "y", "z"][ax]), e));
    }
    if v.dim < 3 {
        coords.push(decl("int", "ez", int(0)));
    }
    if v.dim < 2 {
        coords.push(decl("int", "ey", int(0)));
    }
    let mut lines: Vec<S> = vec![decl(
        "int",
        "node0",
        call("NODE0", vec![var("ex"), var("ey"), var("ez")]),
    )];
    if pe {
        let e = bin(
            Op::Add,
            var("ex"),
            bin(
                Op::Mul,
                var("nx"),
                bin(Op::Add, var("ey"), bin(Op::Mul, var("ny"), var("ez"))),
            ),
        );
        lines.push(decl("int", "kb", e));
    }
    lines.extend(node_ids.iter().cloned());
    lines.extend(
        s.dofs_of((0..s.n).collect())
            .map(|(b, k)| decl("real", s.ui(b, k), at("u_in", node(b), "DOFS", k))),
    );
    lines.extend(pack_u.iter().cloned());
    // Per element: chunk `i` of element `kb`'s K_e at `kb + i * ks` (`ks` = elements).
    let (mat, base, stride) = if pe {
        ("Ke", Some("kb"), Some("ks"))
    } else {
        ("K", None, None)
    };
    lines.extend((0..d).map(|k| {
        assign(
            var(format!("g_{k}")),
            "-",
            row_product_strided(mat, base, stride, a * d + k, s.nv),
        )
    }));
    GatherRole {
        comment: format!("as local node {a} (offset {:?}) of its element", o),
        // (Only read where the kernel exists: at most `MAX_DERIVED_ROLES` roles.)
        bit: 1u32.checked_shl(a as u32).unwrap_or(0),
        cond: chain(Op::And, cond).map(|c| c::expr(&c)).unwrap_or_else(|| "1".into()),
        coords: c::lines(&coords),
        lines: c::lines(&lines),
    }
}

/// `array[c * DOFS + k]`: DOF `k` of the gathering node `c`.
pub(super) fn c_dof(array: &str, k: usize) -> E {
    at(array, var("c"), "DOFS", k)
}

/// Two DOFs per node: the node's `v` read once as a `real2` (`v2`, which the tail reuses).
pub(super) fn v_pair() -> S {
    decl(
        "real2",
        "v2",
        call(
            "vload2",
            vec![int(0), bin(Op::Add, var("v"), bin(Op::Mul, var("c"), var("DOFS")))],
        ),
    )
}

/// DOF `k` of the node's `v` (from `v2` where there are two DOFs).
pub(super) fn v_of(s: &Shape, k: usize) -> E {
    if s.d == 2 {
        var(format!("v2.s{k}"))
    } else {
        c_dof("v", k)
    }
}

/// The gather's start: `g_<k>`, the node's damping force.
pub(super) fn init(s: &Shape) -> Vec<S> {
    let mut init: Vec<S> = if s.d == 2 { vec![v_pair()] } else { vec![] };
    init.extend((0..s.d).map(|k| S::Decl {
        konst: false,
        ty: "real".into(),
        vars: vec![(format!("g_{k}"), bin(Op::Mul, c_dof("damp", k), v_of(s, k)))],
        comment: None,
    }));
    init
}

/// The derived-mass gather's start: row `tb` of the class table holds M⁻¹ of the class's
/// DOFs, then their damping −α·m; a fixed DOF takes 0 for both, as `minv`, `damp` hold it.
/// Two DOFs per node: both fixed bits from one word `fw` (`c * DOFS` is even, so the pair
/// never straddles two words). `v` declared by `v_decl` (where given) and read as `v_of(k)`.
pub(super) fn derived_init(s: &Shape, v_decl: Option<S>, v_of: &dyn Fn(usize) -> E) -> Vec<S> {
    let d = s.d;
    let mut init: Vec<S> = vec![decl(
        "int",
        "tb",
        bin(Op::Mul, var("cls"), bin(Op::Mul, int(2), var("DOFS"))),
    )];
    init.extend(v_decl);
    if d == 2 {
        init.push(S::Decl {
            konst: true,
            ty: "uint".into(),
            vars: vec![(
                "fw".into(),
                index("fixed", bin(Op::Shr, bin(Op::Mul, var("c"), var("DOFS")), int(5))),
            )],
            comment: Some("the node's fixed bits".into()),
        });
    }
    for k in 0..d {
        let dof = bin(Op::Add, bin(Op::Mul, var("c"), var("DOFS")), int(k));
        let row = |o: E| bin(Op::Add, var("tb"), o);
        let tab = |row: E| {
            if d == 2 {
                call("derived_mass_w", vec![var("mass_tab"), var("fw"), row, dof.clone()])
            } else {
                call("derived_mass", vec![var("mass_tab"), var("fixed"), row, dof.clone()])
            }
        };
        init.push(decl("real", format!("mi_{k}"), tab(row(int(k)))));
        init.push(S::Decl {
            konst: false,
            ty: "real".into(),
            vars: vec![(
                format!("g_{k}"),
                bin(Op::Mul, tab(row(bin(Op::Add, var("DOFS"), int(k)))), v_of(k)),
            )],
            comment: None,
        });
    }
    init
}

/// The node's update from `g_<k>` and M⁻¹ (`minv(k)`): `v += g·M⁻¹·dt`, `u_out = u_in + v·dt`.
/// Two DOFs per node: the node's pair of `u_in` loaded and of `u_out`, `v` stored with
/// `vload2`/`vstore2` (`v` comes from the init), the arithmetic per DOF as below. NVIDIA
/// compiles these to scalar accesses (it cannot prove 8-byte alignment); what they save is
/// the reloads of the per-DOF form (docs/PERFORMANCE.md, stop 34).
pub(super) fn tail(s: &Shape, minv: &dyn Fn(usize) -> E) -> Vec<S> {
    if s.d == 2 {
        return tail_pair(minv);
    }
    (0..s.d)
        .map(|k| {
            let i = |a: &str| index(a, var("i"));
            S::Block(vec![
                decl("int", "i", bin(Op::Add, bin(Op::Mul, var("c"), var("DOFS")), int(k))),
                decl(
                    "real",
                    "vv",
                    bin(
                        Op::Add,
                        i("v"),
                        bin(Op::Mul, bin(Op::Mul, var(format!("g_{k}")), minv(k)), var("dt")),
                    ),
                ),
                assign(
                    i("u_out"),
                    "",
                    bin(Op::Add, i("u_in"), bin(Op::Mul, var("vv"), var("dt"))),
                ),
                assign(i("v"), "", var("vv")),
            ])
        })
        .collect()
}

/// [`tail`] of a node with two DOFs.
fn tail_pair(minv: &dyn Fn(usize) -> E) -> Vec<S> {
    let dof = |name: &str, k: usize| var(format!("{name}.s{k}"));
    let vv = |k: usize| {
        bin(
            Op::Add,
            dof("v2", k),
            bin(Op::Mul, bin(Op::Mul, var(format!("g_{k}")), minv(k)), var("dt")),
        )
    };
    let at = |a: &str| bin(Op::Add, var(a), var("i"));
    let store = |value: E, to: &str| call("vstore2", vec![value, int(0), at(to)]);
    // `v2`: the node's `v`, loaded by the init.
    vec![S::Block(vec![
        decl("int", "i", bin(Op::Mul, var("c"), var("DOFS"))),
        decl("real2", "u2", call("vload2", vec![int(0), at("u_in")])),
        S::Decl {
            konst: true,
            ty: "real".into(),
            vars: vec![("vv_0".into(), vv(0)), ("vv_1".into(), vv(1))],
            comment: None,
        },
        S::Expr(store(
            E::Vector(
                "real2".into(),
                (0..2)
                    .map(|k| bin(Op::Add, dof("u2", k), bin(Op::Mul, var(format!("vv_{k}")), var("dt"))))
                    .collect(),
            ),
            "u_out",
        )),
        S::Expr(store(E::Vector("real2".into(), vec![var("vv_0"), var("vv_1")]), "v")),
    ])]
}
