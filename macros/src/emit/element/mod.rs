//! The element kernels' statements: node indices, loads, `real8` packs, row products with the
//! seed's pairwise `sum_v8`, scatters, register shifts and the gather's roles, from the IR's
//! element structure. Templates in `templates/element/` lay them out.
//!
//! One file per kernel family: `nodal.rs` (element by element), `blocked.rs` (the column walk),
//! `gather.rs` (the node-centric gather), `window.rs` (its register window), `assembled.rs`
//! (the assembled node stencil) and `steps.rs` (several steps per launch).

mod assembled;
mod blocked;
mod gather;
mod nodal;
mod steps;
mod window;

use super::c::{self, bin, call, chain, decl, index, int, var, Op, E};
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

/// The element's node structure as every statement builder reads it.
struct Shape<'a> {
    v: &'a ElementBody,
    /// Nodes, DOFs per node, polynomial order.
    n: usize,
    d: usize,
    p: usize,
    /// DOFs of the element, and `real8` chunks of them.
    nd: usize,
    nv: usize,
    offs: &'a [[usize; 3]],
}

impl Shape<'_> {
    /// `u_<i>`: DOF `k` of local node `a`.
    fn ui(&self, a: usize, k: usize) -> String {
        format!("u_{}", a * self.d + k)
    }

    /// `(node, dof)` of every DOF of `nodes`, node by node.
    fn dofs_of(&self, nodes: Vec<usize>) -> impl Iterator<Item = (usize, usize)> {
        let d = self.d;
        nodes.into_iter().flat_map(move |a| (0..d).map(move |k| (a, k)))
    }
}

/// `n<a>`: the global index of local node `a`.
fn node(a: usize) -> E {
    var(format!("n{a}"))
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
    let s = Shape {
        v,
        n,
        d,
        p,
        nd,
        nv: nd.div_ceil(v.lanes),
        offs: &v.node_offsets,
    };
    let node_ids = nodal::node_ids(&s);
    let pack_u = nodal::pack_u(&s);
    // The window of registers is laid out at order 1 in 2-D and 3-D.
    let patch = p == 1 && v.dim >= 2;
    let w = window::Window::new(&s);
    let (patch_decl, patch_first, patch_next, patch_shift, patch_roles) = if patch {
        (w.decl(), w.first(), w.next(), w.shift(), w.roles(&s, &pack_u))
    } else {
        Default::default()
    };
    let gather_tail_derived = gather::tail(&s, &|k| var(format!("mi_{k}")));
    let gather_tail = gather::tail(&s, &|k| {
        index("minv", bin(Op::Add, bin(Op::Mul, var("c"), var("DOFS")), int(k)))
    });
    Ok(ElementLines {
        node_ids_loaded: c::lines(&nodal::node_ids_loaded(&s)),
        node_ids: c::lines(&node_ids),
        load_u: c::lines(&nodal::load_u(&s)),
        pack_u: c::lines(&pack_u),
        rows_k: c::lines(&nodal::rows(&s, "K")),
        rows_kl: c::lines(&nodal::rows(&s, "Kl")),
        row_ke: c::lines(&[decl("real", "ku", row_unpadded("Ke", "kr", nd, v.lanes))]),
        scatter: c::lines(&nodal::scatter(&s)),
        stress: c::lines(&nodal::stress(&s)),
        blk: blocked::lines(&s),
        gather_init: c::lines(&gather::init(&s)),
        gather: gather::roles(&s, false, &node_ids, &pack_u),
        gather_pe: gather::roles(&s, true, &node_ids, &pack_u),
        gather_tail: c::lines(&gather_tail),
        gather_init_derived: c::lines(&gather::derived_init(&s, (d == 2).then(gather::v_pair), &|k| {
            gather::v_of(&s, k)
        })),
        gather_tail_derived: c::lines(&gather_tail_derived),
        gather_patch: window::role_blocks(&s, &patch_roles),
        gather_patch_decl: c::lines(&patch_decl),
        gather_patch_first: c::lines(&patch_first),
        gather_patch_next: c::lines(&patch_next),
        gather_patch_shift: c::lines(&patch_shift),
        gather_assembled: patch.then(|| assembled::lines(&s, &w, &patch_decl)),
        gather_steps: patch.then(|| steps::lines(&s, &w, &patch_decl, &patch_shift, &patch_roles)),
    })
}
