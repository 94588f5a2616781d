//! The element kernels' statements: node indices, loads, `real8` packs, row products with the
//! seed's pairwise `sum_v8`, scatters, register shifts and the gather's roles, from the IR's
//! element structure. Templates in `templates/element/` lay them out.

use crate::ir::element::ElementBody;
use serde::Serialize;

/// One role a node plays in the gather kernel: local node `a` of the element whose first node
/// is `(ix, iy, iz) - offset(a)`.
#[derive(Serialize)]
pub struct GatherRole {
    comment: String,
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
    /// Reads `f`, `n<a>`, `ku_<i>`: `f[n<a> * DOFS + k] -= ku_<i>`.
    scatter: Vec<String>,
    /// Reads `G`, `gb`, `U<c>`, `e`; writes `stress[e * STRAINS + s]`.
    stress: Vec<String>,
    /// The blocked schedules' register shifting (seed algorithm 3).
    blk: BlockedLines,
    // The node-centric gather.
    gather_init: Vec<String>,
    gather: Vec<GatherRole>,
    gather_tail: Vec<String>,
}

/// `node0 + ox + oy * nxn + oz * nxyn`, zero terms dropped.
fn offset_expr(base: &str, o: [usize; 3]) -> String {
    let mut s = base.to_string();
    for (k, stride) in [(0, ""), (1, " * nxn"), (2, " * nxyn")] {
        match (o[k], stride) {
            (0, _) => {}
            (1, "") => s.push_str(" + 1"),
            (1, _) => s.push_str(&format!(" +{}", &stride[2..])),
            (m, _) => s.push_str(&format!(" + {m}{stride}")),
        }
    }
    s
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

/// One row of `M·U` with `nv` packed chunks: chunks pairwise-summed by `sum_v8`, then added
/// left to right (the host reference sums in the same order).
fn row_product(mat: &str, base: &str, r: usize, nv: usize) -> String {
    (0..nv)
        .map(|c| format!("sum_v8({mat}[{base}{}] * U{c})", r * nv + c))
        .collect::<Vec<_>>()
        .join(" + ")
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
    let node_ids = (0..n)
        .map(|a| format!("const int n{a} = {};", offset_expr("node0", offs[a])))
        .collect();
    // One line per node, so that the element's node structure reads in the kernel.
    let load_u = (0..n)
        .map(|a| {
            let loads: Vec<String> = (0..d).map(|k| format!("{} = u[n{a} * DOFS + {k}]", ui(a, k))).collect();
            format!(
                "const real {}; /* node {a} {} */",
                loads.join(", "),
                node_place(offs[a], v.dim)
            )
        })
        .collect();
    let pack_u: Vec<String> = (0..nv)
        .map(|c| {
            let lanes: Vec<String> = (0..v.lanes)
                .map(|l| {
                    if c * v.lanes + l < nd {
                        format!("u_{}", c * v.lanes + l)
                    } else {
                        "0".into()
                    }
                })
                .collect();
            format!(
                "const real8 U{c} = (real8)({}); /* {} */",
                lanes.join(", "),
                chunk_nodes(c, v.lanes, nd, d)
            )
        })
        .collect();
    let rows = |mat: &str, base: &str| -> Vec<String> {
        (0..nd)
            .map(|r| format!("const real ku_{r} = {};", row_product(mat, base, r, nv)))
            .collect()
    };
    let scatter = (0..n)
        .flat_map(|a| (0..d).map(move |k| (a, k)))
        .map(|(a, k)| format!("f[n{a} * DOFS + {k}] -= ku_{};", a * d + k))
        .collect();
    let stress = (0..v.strains)
        .map(|s| format!("stress[e * STRAINS + {s}] = {};", row_product("G", "gb + ", s, nv)))
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
    let assign = |nodes: &[usize]| -> Vec<String> {
        nodes
            .iter()
            .flat_map(|&a| (0..d).map(move |k| (a, k)))
            .map(|(a, k)| format!("{} = u[n{a} * DOFS + {k}];", ui(a, k)))
            .collect()
    };
    let rest: Vec<usize> = (0..n).filter(|&a| offs[a][1] != 0).collect();
    let phase = |pick: &dyn Fn(usize) -> bool, index: &dyn Fn(usize) -> String, value: &dyn Fn(usize) -> usize| {
        (0..=p)
            .map(|x| {
                (0..n)
                    .filter(|&a| pick(a) && offs[a][0] == x)
                    .flat_map(|a| (0..d).map(move |k| (a, k)))
                    .map(|(a, k)| format!("f[{} * DOFS + {k}] += f_{};", index(a), value(a) * d + k))
                    .collect()
            })
            .collect::<Vec<Vec<String>>>()
    };
    let blk_write = phase(&|a| offs[a][1] < p, &|a| format!("n{a}"), &|a| a);
    let blk_final = phase(
        &|a| offs[a][1] == p,
        &|a| format!("({})", offset_expr("last0", offs[a])),
        &|a| partner[a].unwrap_or(a),
    );
    let mut blk_shift = Vec::new();
    for &a in &tops {
        let b = partner[a].unwrap_or(a);
        for k in 0..d {
            let (t, bt) = (a * d + k, b * d + k);
            blk_shift.push(format!("u_{bt} = u_{t}; f_{bt} = f_{t}; f_{t} = 0;"));
        }
    }
    for a in (0..n).filter(|&a| offs[a][1] > 0 && offs[a][1] < p) {
        blk_shift.push(
            (0..d)
                .map(|k| format!("f_{} = 0;", a * d + k))
                .collect::<Vec<_>>()
                .join(" "),
        );
    }

    // Node-centric gather (e): this node is local node `a` of up to `nodes` elements.
    let axes = ["ix", "iy", "iz"];
    let sizes = ["nx", "ny", "nz"];
    let gather = (0..n)
        .map(|a| {
            let o = offs[a];
            let mut cond = Vec::new();
            let mut coords = Vec::new();
            for ax in 0..v.dim {
                let (i, m, size) = (axes[ax], o[ax], sizes[ax]);
                let shifted = if m == 0 { i.to_string() } else { format!("({i} - {m})") };
                if m > 0 {
                    cond.push(format!("{i} >= {m}"));
                }
                if p > 1 {
                    cond.push(format!("{shifted} % {p} == 0"));
                }
                let e = if p > 1 { format!("{shifted} / {p}") } else { shifted };
                cond.push(format!("{e} < {size}"));
                coords.push(format!("const int e{} = {e};", ["x", "y", "z"][ax]));
            }
            if v.dim < 3 {
                coords.push("const int ez = 0;".into());
            }
            if v.dim < 2 {
                coords.push("const int ey = 0;".into());
            }
            let mut lines: Vec<String> = vec!["const int node0 = NODE0(ex, ey, ez);".into()];
            lines.extend((0..n).map(|b| format!("const int n{b} = {};", offset_expr("node0", offs[b]))));
            lines.extend(
                (0..n)
                    .flat_map(|b| (0..d).map(move |k| (b, k)))
                    .map(|(b, k)| format!("const real {} = u_in[n{b} * DOFS + {k}];", ui(b, k))),
            );
            lines.extend(pack_u.iter().cloned());
            lines.extend((0..d).map(|k| format!("g_{k} -= {};", row_product("K", "", a * d + k, nv))));
            GatherRole {
                comment: format!("as local node {a} (offset {:?}) of its element", o),
                cond: cond.join(" && "),
                coords,
                lines,
            }
        })
        .collect();
    let gather_init = (0..d)
        .map(|k| format!("real g_{k} = damp[c * DOFS + {k}] * v[c * DOFS + {k}];"))
        .collect();
    let gather_tail = (0..d)
        .map(|k| {
            format!(
                "{{ const int i = c * DOFS + {k}; const real vv = v[i] + g_{k} * minv[i] * dt; \
                 u_out[i] = u_in[i] + vv * dt; v[i] = vv; }}"
            )
        })
        .collect();

    Ok(ElementLines {
        node_ids,
        node_ids_loaded: (0..n)
            .map(|a| format!("const int n{a} = elem_nodes[e * NODES + {a}];"))
            .collect(),
        load_u,
        pack_u,
        rows_k: rows("K", ""),
        rows_kl: rows("Kl", ""),
        scatter,
        stress,
        blk: BlockedLines {
            decl: (0..nd).map(|i| format!("real u_{i} = 0, f_{i} = 0;")).collect(),
            fetch_bottom: assign(&bottoms),
            fetch_rest: assign(&rest),
            accum: (0..nd).map(|i| format!("f_{i} -= ku_{i};")).collect(),
            accum_live: (0..nd).map(|i| format!("f_{i} -= live * ku_{i};")).collect(),
            write: blk_write,
            shift: blk_shift,
            last: blk_final,
        },
        gather_init,
        gather,
        gather_tail,
    })
}
