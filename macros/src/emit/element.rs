//! The element kernels' statements: node indices, loads, `real8` packs, row products with the
//! seed's pairwise `sum_v8`, scatters, register shifts and the gather's roles, from the IR's
//! element structure. Templates in `templates/element/` lay them out.

use super::c::{self, assign, bin, call, chain, decl, index, int, neg, var, Op, E, S};
use crate::ir::element::ElementBody;
use serde::Serialize;

/// One role a node plays in the gather kernel: local node `a` of the element whose first node
/// is `(ix, iy, iz) - offset(a)`.
#[derive(Serialize)]
pub struct GatherRole {
    comment: String,
    /// The role's bit in the node's class (the derived-mass gather's table row).
    bit: u32,
    cond: String,
    coords: Vec<String>,
    lines: Vec<String>,
}

/// The column walk of the blocked schedules (seed algorithm 3): registers `u_<i>`, `f_<i>`,
/// fetched bottom nodes first, accumulated, written in one phase per x offset, shifted up.
#[derive(Serialize)]
pub struct BlockedLines {
    decl: Vec<String>,
    fetch_bottom: Vec<String>,
    fetch_rest: Vec<String>,
    accum: Vec<String>,
    accum_live: Vec<String>,
    write: Vec<Vec<String>>,
    shift: Vec<String>,
    #[serde(rename = "final")]
    last: Vec<Vec<String>>,
}

/// The element kernels' statements, one string per line, laid out by the templates with
/// `{{-<lines list={load_u} indent="    "/>}}`. This is part of the template contract
/// (docs/TEMPLATES.md): each field names what it reads from the kernel's scope and what it
/// defines. Names: `n<a>` the global index of local node `a`, `u_<i>` DOF `i` of the element
/// (`i = a * DOFS + k`), `U<c>` the `c`-th `real8` chunk of `u_e`, `ku_<i>` row `i` of `K_e u_e`.
#[derive(Serialize)]
pub struct ElementLines {
    /// Reads `node0`, `nxn`, `nxyn` (structured grid); defines `n<a>` for every node.
    node_ids: Vec<String>,
    /// Reads `elem_nodes`, `e`; defines `n<a>` from the connectivity.
    node_ids_loaded: Vec<String>,
    /// Reads `u`, `n<a>`; defines `u_<i>`, one line per node.
    load_u: Vec<String>,
    /// Reads `u_<i>`; defines the chunks `U<c>` (zero-padded), with the lanes of each node.
    pack_u: Vec<String>,
    /// Reads `K` (`real8` rows, `NV` per row), `U<c>`; defines `ku_<i>`.
    rows_k: Vec<String>,
    /// As `rows_k` from `Kl` (the block's material in local memory).
    rows_kl: Vec<String>,
    /// Reads `Ke` (`real`s), `kr` (the first of one row's `ND` reals of the element's own `K_e`,
    /// stored without padding), `U<c>`; defines `ku`, that row of `K_e u_e` (summed as `rows_k`
    /// sums).
    row_ke: Vec<String>,
    /// Reads `f`, `n<a>`, `ku_<i>`: `f[n<a> * DOFS + k] -= ku_<i>`.
    scatter: Vec<String>,
    /// Reads `G`, `gb`, `U<c>`, `e`; writes `stress[e * STRAINS + s]`.
    stress: Vec<String>,
    /// The blocked schedules' register shifting (seed algorithm 3).
    blk: BlockedLines,
    // The node-centric gather.
    gather_init: Vec<String>,
    gather: Vec<GatherRole>,
    /// As `gather`, each role reading its element `kb`'s own `K_e` from `Ke`, chunk `i` at
    /// `kb + i * ks` (the matrices of all elements interleaved chunk by chunk, `ks` apart).
    gather_pe: Vec<GatherRole>,
    gather_tail: Vec<String>,
    /// The derived-mass gather: reads `cls` (the node's class, one bit per role that has an
    /// element), `mass_tab`, `fixed`, `v`, `c`; defines `tb`, `mi_<k>` (M⁻¹) and `g_<k>` (the
    /// damping force, as `gather_init`).
    gather_init_derived: Vec<String>,
    /// The derived-mass gather's roles where every role of node `c` has an element: `u_e` read
    /// from the window of registers `p<row>_<x>_<z>_<k>` (rows `m`, `c`, `p` at y − 1, y, y + 1;
    /// `x`, `z` the offset plus 1; DOF `k`) instead of from `u_in`; same arithmetic in the same
    /// order as `gather`. Empty where the window is not laid out (order above 1, or 1-D).
    gather_patch: Vec<String>,
    /// Declares the window's registers.
    gather_patch_decl: Vec<String>,
    /// Reads `c0`, `nxn`, `nxyn`, `u_in`: loads rows y − 1 and y of node `c0`'s window.
    gather_patch_first: Vec<String>,
    /// Reads `c`: loads row y + 1 of node `c`'s window.
    gather_patch_next: Vec<String>,
    /// Slides the window one row along y (row y becomes y − 1, y + 1 becomes y).
    gather_patch_shift: Vec<String>,
    /// As `gather_tail` with `mi_<k>` for `minv[i]`.
    gather_tail_derived: Vec<String>,
    /// The derived-mass gather of a node playing every role from the assembled node stencil;
    /// `None` where the window is not laid out.
    gather_assembled: Option<Assembled>,
    /// The class-table gather over several steps per launch (`_gather_steps`); `None` where
    /// the window is not laid out.
    gather_steps: Option<StepsLines>,
}

/// The statements of `_gather_steps`, which advances a box of nodes several steps in local
/// memory: DOF `k` of local node `lc` at `lc + k * GS_N` of the local arrays, rows `GS_W` and
/// planes `GS_WH` apart. Each node's arithmetic is the class-table gather's, in the same order.
#[derive(Serialize)]
pub struct StepsLines {
    /// Declares the window's registers.
    decl: Vec<String>,
    /// Loads rows y − 1 and y of the window from the local array `src` around local node `lc`.
    load_first: Vec<String>,
    /// Loads row y + 1 of the window around `lc`.
    load_next: Vec<String>,
    /// Slides the window one row along y (as `gather_patch_shift`).
    shift: Vec<String>,
    /// Reads `cls`, `lv`, `lc`, `mass_tab`, `fixed`, `c`; defines `tb`, `v_<k>` (the node's
    /// velocity), `mi_<k>` and `g_<k>` (as `gather_init_derived`).
    init: Vec<String>,
    /// The roles from the window's registers, each taken where its bit is set in `cls`.
    roles: Vec<StepsRole>,
    /// Defines `vv_<k>` and `un_<k>`: the node's new velocity and displacement (as
    /// `gather_tail_derived` computes them).
    update: Vec<String>,
    /// Stores `un_<k>` to `dst` and `vv_<k>` to `lv` at `lc`.
    store_local: Vec<String>,
    /// Stores `un_<k>` to `u_out` and `vv_<k>` to `v_out` at node `c`.
    store_global: Vec<String>,
}

/// One role of `_gather_steps`: its bit in the node's class and its lines.
#[derive(Serialize)]
pub struct StepsRole {
    comment: String,
    bit: u32,
    lines: Vec<String>,
}

/// The class-table gather's assembled node stencil `ka` (the sum of `K_e` over a node's
/// elements, after `K_e`'s rows in `K`, then two limits), for a node playing every role.
#[derive(Serialize)]
pub struct Assembled {
    /// Declares `ka` and `ua` (Σ|u| over the window's registers).
    head: Vec<String>,
    /// Where the stencil is taken (`ua` and each `|g_k|` within their limits), else the roles.
    cond: String,
    /// Subtracts the stencil times the window from `g_<k>`.
    sum: Vec<String>,
    /// Declares and loads the window's registers around node `c` (the general path).
    load: Vec<String>,
}

/// `base + ox + oy * nxn + oz * nxyn`, zero terms dropped.
fn offset(base: E, o: [usize; 3]) -> E {
    let mut terms = vec![base];
    for (k, stride) in [(0, None), (1, Some("nxn")), (2, Some("nxyn"))] {
        match (o[k], stride) {
            (0, _) => {}
            (m, None) => terms.push(int(m)),
            (1, Some(st)) => terms.push(var(st)),
            (m, Some(st)) => terms.push(bin(Op::Mul, int(m), var(st))),
        }
    }
    chain(Op::Add, terms).unwrap_or_else(|| var("node0"))
}

/// `array[node * per + k]`.
fn at(array: &str, node: E, per: &str, k: usize) -> E {
    index(array, bin(Op::Add, bin(Op::Mul, node, var(per)), int(k)))
}

/// One row of `M·U` with `nv` packed chunks: chunks pairwise-summed by `sum_v8`, then added
/// left to right (the host reference sums in the same order). `base`: an offset added to the
/// row index (`gb`, the block of a material's rows).
fn row_product(mat: &str, base: Option<&str>, r: usize, nv: usize) -> E {
    row_product_strided(mat, base, None, r, nv)
}

/// [`row_product`] with chunk `i` of the matrix at `base + i · stride`: matrices of a group of
/// elements interleaved chunk by chunk, so neighbouring work-items read neighbouring chunks.
fn row_product_strided(mat: &str, base: Option<&str>, stride: Option<&str>, r: usize, nv: usize) -> E {
    let terms = (0..nv).map(|c| {
        let k = r * nv + c;
        // `kb + 2 * ks`; `kb` and `kb + ks` for the first two chunks.
        let offset = match (stride, k) {
            (Some(_), 0) => None,
            (Some(st), 1) => Some(var(st)),
            (Some(st), _) => Some(bin(Op::Mul, int(k), var(st))),
            (None, _) => Some(int(k)),
        };
        let i = match (base, offset) {
            (Some(b), Some(o)) => bin(Op::Add, var(b), o),
            (Some(b), None) => var(b),
            (None, o) => o.unwrap_or_else(|| int(0)),
        };
        call("sum_v8", vec![bin(Op::Mul, index(mat, i), var(format!("U{c}")))])
    });
    chain(Op::Add, terms).unwrap_or(E::Int(0))
}

/// One row of `nd` reals stored without padding at `mat[base ..]` times `U`: whole chunks by
/// `vload8`, the last `nd % 8` reals as scalars zero-padded to a `real8`, each chunk summed by
/// `sum_v8` and the chunks added left to right, as [`row_product`] sums a padded row (the
/// padding lanes were zeros there, so the sum is the same).
fn row_unpadded(mat: &str, base: &str, nd: usize, lanes: usize) -> E {
    let at = |k: usize| {
        if k == 0 {
            var(base)
        } else {
            bin(Op::Add, var(base), int(k))
        }
    };
    let terms = (0..nd.div_ceil(lanes)).map(|c| {
        let first = c * lanes;
        let chunk = if first + lanes <= nd {
            call("vload8", vec![int(0), bin(Op::Add, var(mat), at(first))])
        } else {
            let parts = (first..first + lanes)
                .map(|k| if k < nd { index(mat, at(k)) } else { int(0) })
                .collect();
            E::Vector("real8".into(), parts)
        };
        call("sum_v8", vec![bin(Op::Mul, chunk, var(format!("U{c}")))])
    });
    chain(Op::Add, terms).unwrap_or(E::Int(0))
}

/// `(1, 0)`: a node's place on the element's node grid, as far as the element has dimensions.
fn node_place(o: [usize; 3], dim: usize) -> String {
    let c: Vec<String> = o[..dim].iter().map(|x| x.to_string()).collect();
    format!("({})", c.join(", "))
}

/// Which node owns which lanes of chunk `c`: `n0 .s01, n1 .s23, ...` (the seed's `U.s01`).
fn chunk_nodes(c: usize, lanes: usize, nd: usize, dofs: usize) -> String {
    let mut groups: Vec<(usize, String)> = Vec::new();
    for l in 0..lanes {
        let i = c * lanes + l;
        if i >= nd {
            break;
        }
        let node = i / dofs;
        match groups.last_mut() {
            Some((a, s)) if *a == node => s.push_str(&format!("{l}")),
            _ => groups.push((node, format!(".s{l}"))),
        }
    }
    groups
        .iter()
        .map(|(a, s)| format!("n{a} {s}"))
        .collect::<Vec<_>>()
        .join(", ")
}

pub fn lines(v: &ElementBody) -> Result<ElementLines, String> {
    let (n, d, p) = (v.nodes, v.dofs, v.order);
    if v.node_offsets.len() != n || n == 0 || d == 0 || p == 0 || !(1..=3).contains(&v.dim) {
        return Err(format!(
            "element: {} node offsets for {n} nodes, {d} dofs, order {p}, dim {}",
            v.node_offsets.len(),
            v.dim
        ));
    }
    let nd = n * d;
    let nv = nd.div_ceil(v.lanes);
    let offs = &v.node_offsets;
    let ui = |a: usize, k: usize| format!("u_{}", a * d + k);
    let node = |a: usize| var(format!("n{a}"));
    let dofs_of = |nodes: Vec<usize>| nodes.into_iter().flat_map(move |a| (0..d).map(move |k| (a, k)));
    let node_ids: Vec<S> = (0..n)
        .map(|a| decl("int", format!("n{a}"), offset(var("node0"), offs[a])))
        .collect();
    // One line per node, so that the element's node structure reads in the kernel.
    let load_u: Vec<S> = (0..n)
        .map(|a| S::Decl {
            konst: true,
            ty: "real".into(),
            vars: (0..d).map(|k| (ui(a, k), at("u", node(a), "DOFS", k))).collect(),
            comment: Some(format!("node {a} {}", node_place(offs[a], v.dim))),
        })
        .collect();
    let pack_u: Vec<S> = (0..nv)
        .map(|c| {
            let lanes = (0..v.lanes)
                .map(|l| {
                    let i = c * v.lanes + l;
                    if i < nd {
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
                comment: Some(chunk_nodes(c, v.lanes, nd, d)),
            }
        })
        .collect();
    let rows = |mat: &str| -> Vec<S> {
        (0..nd)
            .map(|r| decl("real", format!("ku_{r}"), row_product(mat, None, r, nv)))
            .collect()
    };
    let scatter: Vec<S> = dofs_of((0..n).collect())
        .map(|(a, k)| assign(at("f", node(a), "DOFS", k), "-", var(format!("ku_{}", a * d + k))))
        .collect();
    let stress: Vec<S> = (0..v.strains)
        .map(|s| {
            assign(
                at("stress", var("e"), "STRAINS", s),
                "",
                row_product("G", Some("gb"), s, nv),
            )
        })
        .collect();

    // Register shifting along y (seed algorithm 3): top nodes (y offset = order) become the
    // bottom nodes (y offset 0, same x and z) of the next element up the column.
    let partner: Vec<Option<usize>> = (0..n)
        .map(|a| {
            (offs[a][1] == p)
                .then(|| (0..n).find(|&b| offs[b] == [offs[a][0], 0, offs[a][2]]))
                .flatten()
        })
        .collect();
    let tops: Vec<usize> = (0..n).filter(|&a| offs[a][1] == p).collect();
    let bottoms: Vec<usize> = (0..n).filter(|&a| offs[a][1] == 0).collect();
    let fetch = |nodes: Vec<usize>| -> Vec<S> {
        dofs_of(nodes)
            .map(|(a, k)| assign(var(ui(a, k)), "", at("u", node(a), "DOFS", k)))
            .collect()
    };
    let rest: Vec<usize> = (0..n).filter(|&a| offs[a][1] != 0).collect();
    let phase = |pick: &dyn Fn(usize) -> bool, place: &dyn Fn(usize) -> E, value: &dyn Fn(usize) -> usize| {
        (0..=p)
            .map(|x| {
                let nodes: Vec<usize> = (0..n).filter(|&a| pick(a) && offs[a][0] == x).collect();
                let stmts: Vec<S> = dofs_of(nodes)
                    .map(|(a, k)| {
                        assign(
                            at("f", place(a), "DOFS", k),
                            "+",
                            var(format!("f_{}", value(a) * d + k)),
                        )
                    })
                    .collect();
                c::lines(&stmts)
            })
            .collect::<Vec<Vec<String>>>()
    };
    let blk_write = phase(&|a| offs[a][1] < p, &node, &|a| a);
    let blk_final = phase(&|a| offs[a][1] == p, &|a| offset(var("last0"), offs[a]), &|a| {
        partner[a].unwrap_or(a)
    });
    let zero = |i: usize| assign(var(format!("f_{i}")), "", int(0));
    let mut blk_shift: Vec<S> = Vec::new();
    for &a in &tops {
        let b = partner[a].unwrap_or(a);
        for k in 0..d {
            let (t, bt) = (a * d + k, b * d + k);
            blk_shift.push(S::Line(vec![
                assign(var(format!("u_{bt}")), "", var(format!("u_{t}"))),
                assign(var(format!("f_{bt}")), "", var(format!("f_{t}"))),
                zero(t),
            ]));
        }
    }
    for a in (0..n).filter(|&a| offs[a][1] > 0 && offs[a][1] < p) {
        blk_shift.push(S::Line((0..d).map(|k| zero(a * d + k)).collect()));
    }

    // Node-centric gather (e): this node is local node `a` of up to `nodes` elements.
    let axes = ["ix", "iy", "iz"];
    let sizes = ["nx", "ny", "nz"];
    // `pe`: the element's own `K_e` at `kb` in `Ke` (one per element, element order).
    let gather_roles = |pe: bool| -> Vec<GatherRole> {
        (0..n)
            .map(|a| {
                let o = offs[a];
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
                    dofs_of((0..n).collect()).map(|(b, k)| decl("real", ui(b, k), at("u_in", node(b), "DOFS", k))),
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
                        row_product_strided(mat, base, stride, a * d + k, nv),
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
            })
            .collect()
    };
    let c_dof = |array: &str, k: usize| at(array, var("c"), "DOFS", k);
    // Two DOFs per node: the node's `v` read once as a `real2` (`v2`, which the tail reuses).
    let v_pair = decl(
        "real2",
        "v2",
        call(
            "vload2",
            vec![int(0), bin(Op::Add, var("v"), bin(Op::Mul, var("c"), var("DOFS")))],
        ),
    );
    let v_of = |k: usize| if d == 2 { var(format!("v2.s{k}")) } else { c_dof("v", k) };
    let mut gather_init: Vec<S> = if d == 2 { vec![v_pair.clone()] } else { vec![] };
    gather_init.extend((0..d).map(|k| S::Decl {
        konst: false,
        ty: "real".into(),
        vars: vec![(format!("g_{k}"), bin(Op::Mul, c_dof("damp", k), v_of(k)))],
        comment: None,
    }));
    // The derived-mass gather: row `tb` of the class table holds M⁻¹ of the class's DOFs, then
    // their damping −α·m; a fixed DOF takes 0 for both, as `minv`, `damp` hold it.
    // Two DOFs per node: both fixed bits from one word `fw` (`c * DOFS` is even, so the pair
    // never straddles two words).
    // `v` declared by `v_decl` (where given) and read as `v_of(k)`.
    let derived_init = |v_decl: Option<S>, v_of: &dyn Fn(usize) -> E| -> Vec<S> {
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
    };
    let gather_init_derived = derived_init((d == 2).then_some(v_pair), &v_of);
    // Two DOFs per node: the node's pair of `u_in` loaded and of `u_out`, `v` stored with
    // `vload2`/`vstore2` (`v` comes from the init), the arithmetic per DOF as below. NVIDIA
    // compiles these to scalar accesses (it cannot prove 8-byte alignment); what they save is
    // the reloads of the per-DOF form (docs/PERFORMANCE.md, stop 34).
    let tail = |minv: &dyn Fn(usize) -> E| -> Vec<S> {
        if d == 2 {
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
            return vec![S::Block(vec![
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
            ])];
        }
        (0..d)
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
    };
    // The patch: node `c` as local node `a` reads element node `b` at offset
    // `offs[b] - offs[a]` from itself (order 1: each component -1, 0 or 1), held in a window of
    // three rows of registers `p<row>_<x>_<z>_<k>` (rows `m`, `c`, `p`: y - 1, y, y + 1; `x`,
    // `z` the offset plus 1) slid along y.
    let patch = p == 1 && v.dim >= 2;
    let zs: Vec<i64> = if v.dim == 3 { vec![-1, 0, 1] } else { vec![0] };
    let row_name = |dy: i64| ["m", "c", "p"][(dy + 1) as usize];
    let reg = |dy: i64, dx: i64, dz: i64, k: usize| format!("p{}_{}_{}_{k}", row_name(dy), dx + 1, dz + 1);
    // A row's registers, `(dx, dz, k)` with z slowest (the same for every row).
    let row_regs: Vec<(i64, i64, usize)> = zs
        .iter()
        .flat_map(|&dz| (-1..=1).flat_map(move |dx| (0..d).map(move |k| (dx, dz, k))))
        .collect();
    // `p<row>_.. = u_in[(base + dx + nxyn * dz) * DOFS + k]`, one line per (dz, dx).
    let load_row = |dy: i64, base: E| -> Vec<S> {
        row_regs
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
    };
    let (patch_decl, patch_first, patch_next, patch_shift, patch_roles) = if patch {
        // One declaration per row and z offset.
        let decl_row = |dy: i64| -> Vec<S> {
            row_regs
                .chunks(3 * d)
                .map(|group| S::Decl {
                    konst: false,
                    ty: "real".into(),
                    vars: group.iter().map(|&(dx, dz, k)| (reg(dy, dx, dz, k), int(0))).collect(),
                    comment: Some(format!("y {:+}, z {:+}", dy, group[0].1)),
                })
                .collect()
        };
        let decls: Vec<S> = (-1..=1).flat_map(decl_row).collect();
        let mut first = load_row(-1, bin(Op::Sub, var("c0"), var("nxn")));
        first.extend(load_row(0, var("c0")));
        let next = load_row(1, bin(Op::Add, var("c"), var("nxn")));
        let shift: Vec<S> = [(-1, 0), (0, 1)]
            .into_iter()
            .flat_map(|(to, from)| {
                row_regs
                    .chunks(d)
                    .map(move |dofs| {
                        S::Line(
                            dofs.iter()
                                .map(|&(dx, dz, k)| assign(var(reg(to, dx, dz, k)), "", var(reg(from, dx, dz, k))))
                                .collect(),
                        )
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
        let roles: Vec<Vec<S>> = (0..n)
            .map(|a| {
                let mut lines: Vec<S> = dofs_of((0..n).collect())
                    .map(|(b, k)| {
                        let rel = |ax: usize| offs[b][ax] as i64 - offs[a][ax] as i64;
                        decl("real", ui(b, k), var(reg(rel(1), rel(0), rel(2), k)))
                    })
                    .collect();
                lines.extend(pack_u.iter().cloned());
                lines.extend((0..d).map(|k| assign(var(format!("g_{k}")), "-", row_product("K", None, a * d + k, nv))));
                lines
            })
            .collect();
        (decls, first, next, shift, roles)
    } else {
        Default::default()
    };
    let gather_patch: Vec<String> = patch_roles
        .iter()
        .enumerate()
        .flat_map(|(a, role)| {
            let mut out = vec![format!("/* as local node {a} (offset {:?}) of its element */", offs[a])];
            out.push("{".into());
            out.extend(c::lines(role).into_iter().map(|l| format!("    {l}")));
            out.push("}".into());
            out
        })
        .collect();
    // The assembled node stencil (order 1, where the window is laid out): a node playing every
    // role sums `K_e` over its elements once for all, `ka[(n * DOFS + k) * DOFS + j]` the
    // coefficient of DOF `j` of its neighbour `n` (x fastest, then y, then z; offsets -1, 0, 1)
    // in the force on its DOF `k`, read after `K_e`'s rows (`ND * NV` chunks) in the same
    // constant buffer (the runtime's `assembled_stencil`), then two limits. One statement per
    // row of neighbours (`dy`, `dz`) and DOF: NODES² · DOFS² products become 3^dim · DOFS².
    // The guard keeps the element-by-element sums where the two could round differently into
    // an overflow or turn ±inf into NaN in one form and not the other: it takes the stencil
    // only where Σ|u| of the window is at most `ka[L]` (no product or partial sum of either
    // form reaches a quarter of the largest real) and |g_k| at most `ka[L + 1]`; a NaN or ±inf
    // fails it.
    let assembled = if patch {
        let neighbour = |dx: i64, dy: i64, dz: i64| -> usize {
            let z = if v.dim == 3 { (dz + 1) as usize } else { 0 };
            (z * 3 + (dy + 1) as usize) * 3 + (dx + 1) as usize
        };
        let limit = (if v.dim == 3 { 27 } else { 9 }) * d * d;
        // The window's registers `(dx, dy, dz, k)`: z slowest, then y, x, DOF (a row's registers
        // come z by z, `3 · d` at a time).
        let window: Vec<(i64, i64, i64, usize)> = row_regs
            .chunks(3 * d)
            .flat_map(|plane| (-1..=1i64).flat_map(move |dy| plane.iter().map(move |&(dx, dz, k)| (dx, dy, dz, k))))
            .collect();
        // Σ|u| as a pairwise tree (short dependency chains).
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
        let head = vec![
            format!(
                "__constant const real* ka = (__constant const real*)(K + {}); /* assembled: after K_e's {nd} rows */",
                nd * nv
            ),
            c::lines(&[decl("real", "ua", level.pop().unwrap_or(E::Int(0)))]).concat(),
        ];
        let cond = std::iter::once(format!("ua <= ka[{limit}]"))
            .chain((0..d).map(|k| format!("fabs(g_{k}) <= ka[{}]", limit + 1)))
            .collect::<Vec<_>>()
            .join(" && ");
        // Each product fused into the running force, `g = fma(-ka[i], u, g)` term by term (one
        // rounding per term instead of two: the stencil's form agrees with the host to rounding
        // in any case, and half the instructions of separate products and sums).
        let mut stmts: Vec<S> = Vec::new();
        for &dz in &zs {
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
        let mut load = patch_decl.clone();
        load.extend(load_row(-1, bin(Op::Sub, var("c"), var("nxn"))));
        load.extend(load_row(0, var("c")));
        load.extend(load_row(1, bin(Op::Add, var("c"), var("nxn"))));
        Some(Assembled {
            head,
            cond,
            sum: c::lines(&stmts),
            load: c::lines(&load),
        })
    } else {
        None
    };
    // The steps kernel (`_gather_steps`): the window from local memory, each role behind its
    // class bit, the node's velocity from `lv`; the arithmetic of the lines above.
    let steps = if patch {
        let local_at = |array: &str, dx: i64, dy: i64, dz: i64, k: usize| -> E {
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
        };
        let load_rows = |rows: &[i64]| -> Vec<S> {
            rows.iter()
                .flat_map(|&dy| {
                    row_regs.chunks(d).map(move |dofs| {
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
        let init = derived_init(Some(velocity), &|k| var(format!("v_{k}")));
        let roles = patch_roles
            .iter()
            .enumerate()
            .map(|(a, role)| StepsRole {
                comment: format!("as local node {a} (offset {:?}) of its element", offs[a]),
                bit: 1u32.checked_shl(a as u32).unwrap_or(0),
                lines: c::lines(role),
            })
            .collect();
        // `v + g·M⁻¹·dt`, then `u + v·dt` with `u` the window's centre: the tails' expressions.
        let update = vec![
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
        ];
        let store_local = vec![
            S::Line(
                (0..d)
                    .map(|k| assign(local_at("dst", 0, 0, 0, k), "", var(format!("un_{k}"))))
                    .collect(),
            ),
            S::Line(
                (0..d)
                    .map(|k| assign(local_at("lv", 0, 0, 0, k), "", var(format!("vv_{k}"))))
                    .collect(),
            ),
        ];
        let store_global = vec![
            S::Line(
                (0..d)
                    .map(|k| assign(c_dof("u_out", k), "", var(format!("un_{k}"))))
                    .collect(),
            ),
            S::Line(
                (0..d)
                    .map(|k| assign(c_dof("v_out", k), "", var(format!("vv_{k}"))))
                    .collect(),
            ),
        ];
        Some(StepsLines {
            decl: c::lines(&patch_decl),
            load_first: c::lines(&load_rows(&[-1, 0])),
            load_next: c::lines(&load_rows(&[1])),
            shift: c::lines(&patch_shift),
            init: c::lines(&init),
            roles,
            update: c::lines(&update),
            store_local: c::lines(&store_local),
            store_global: c::lines(&store_global),
        })
    } else {
        None
    };
    let gather_tail_derived = tail(&|k| var(format!("mi_{k}")));
    let gather_tail = tail(&|k| index("minv", bin(Op::Add, bin(Op::Mul, var("c"), var("DOFS")), int(k))));
    let registers = |i: usize| S::Decl {
        konst: false,
        ty: "real".into(),
        vars: vec![(format!("u_{i}"), int(0)), (format!("f_{i}"), int(0))],
        comment: None,
    };
    let accum = |live: bool| -> Vec<S> {
        (0..nd)
            .map(|i| {
                let ku = var(format!("ku_{i}"));
                let ku = if live { bin(Op::Mul, var("live"), ku) } else { ku };
                assign(var(format!("f_{i}")), "-", ku)
            })
            .collect()
    };

    Ok(ElementLines {
        node_ids_loaded: c::lines(
            &(0..n)
                .map(|a| decl("int", format!("n{a}"), at("elem_nodes", var("e"), "NODES", a)))
                .collect::<Vec<_>>(),
        ),
        node_ids: c::lines(&node_ids),
        load_u: c::lines(&load_u),
        pack_u: c::lines(&pack_u),
        rows_k: c::lines(&rows("K")),
        rows_kl: c::lines(&rows("Kl")),
        row_ke: c::lines(&[decl("real", "ku", row_unpadded("Ke", "kr", nd, v.lanes))]),
        scatter: c::lines(&scatter),
        stress: c::lines(&stress),
        blk: BlockedLines {
            decl: c::lines(&(0..nd).map(registers).collect::<Vec<_>>()),
            fetch_bottom: c::lines(&fetch(bottoms)),
            fetch_rest: c::lines(&fetch(rest)),
            accum: c::lines(&accum(false)),
            accum_live: c::lines(&accum(true)),
            write: blk_write,
            shift: c::lines(&blk_shift),
            last: blk_final,
        },
        gather_init: c::lines(&gather_init),
        gather: gather_roles(false),
        gather_pe: gather_roles(true),
        gather_tail: c::lines(&gather_tail),
        gather_init_derived: c::lines(&gather_init_derived),
        gather_tail_derived: c::lines(&gather_tail_derived),
        gather_patch,
        gather_patch_decl: c::lines(&patch_decl),
        gather_patch_first: c::lines(&patch_first),
        gather_patch_next: c::lines(&patch_next),
        gather_patch_shift: c::lines(&patch_shift),
        gather_assembled: assembled,
        gather_steps: steps,
    })
}
