//! Element kernels: `ElementView` -> Tera (`templates/element.cl.tera`) -> OpenCL source.
//!
//! Every unrolled line (node indices, loads, `float8` row products with the seed's pairwise
//! `sum_v8`, scatters, register shifts) is computed here; the template only lays them out.

use serde::Serialize;

/// Everything the element templates need; computed by the element lowering.
#[derive(Clone, Debug, Serialize)]
pub struct ElementView {
    /// Module name, e.g. `quad4`.
    pub name: String,
    /// The user's doc comment lines.
    pub doc: Vec<String>,
    /// The user's file as rustc names it, and the line of the module.
    pub file: String,
    pub line: usize,
    /// Spatial dimension, nodes per element, DOFs per node.
    pub dim: usize,
    pub nodes: usize,
    pub dofs: usize,
    /// Node-grid steps per element edge (1 linear, 2 quadratic).
    pub order: usize,
    /// Structured-grid offsets of the local nodes, in node-grid steps.
    pub node_offsets: Vec<[usize; 3]>,
    /// Rows of `G_e`.
    pub strains: usize,
}

/// Lanes of the packed rows (`float8`).
const LANES: usize = 8;

/// One role a node plays in the gather kernel: local node `a` of the element whose first node
/// is `(ix, iy, iz) - offset(a)`.
#[derive(Serialize)]
struct GatherRole {
    comment: String,
    cond: String,
    coords: Vec<String>,
    lines: Vec<String>,
}

#[derive(Serialize)]
struct Render<'a> {
    #[serde(flatten)]
    view: &'a ElementView,
    nd: usize,
    nv: usize,
    ndp: usize,
    real: &'static str,
    real8: &'static str,
    zero: &'static str,
    /// `sum_v8` of the seed (appendix 10.2), the 8-lane pairwise sum.
    sum_v8: String,
    node_ids: Vec<String>,
    node_ids_loaded: Vec<String>,
    load_u: Vec<String>,
    pack_u: Vec<String>,
    rows_k: Vec<String>,
    rows_kl: Vec<String>,
    scatter: Vec<String>,
    stress: Vec<String>,
    /// Blocked schedules need a shift map (every top node has a bottom partner).
    blocked: bool,
    blk_decl: Vec<String>,
    blk_fetch_bottom: Vec<String>,
    blk_fetch_rest: Vec<String>,
    blk_accum: Vec<String>,
    blk_accum_live: Vec<String>,
    blk_write: Vec<Vec<String>>,
    blk_shift: Vec<String>,
    blk_final: Vec<Vec<String>>,
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

/// One row of `M·U` with `nv` packed chunks: chunks pairwise-summed by `sum_v8`, then added
/// left to right (the host reference sums in the same order).
fn row_product(mat: &str, base: &str, r: usize, nv: usize) -> String {
    (0..nv)
        .map(|c| format!("sum_v8({mat}[{base}{}] * U{c})", r * nv + c))
        .collect::<Vec<_>>()
        .join(" + ")
}

fn lines(v: &ElementView) -> Result<Render<'_>, String> {
    let (n, d, p) = (v.nodes, v.dofs, v.order);
    if v.node_offsets.len() != n || n == 0 || d == 0 || p == 0 || !(1..=3).contains(&v.dim) {
        return Err(format!(
            "element `{}`: {} node offsets for {n} nodes, {d} dofs, order {p}, dim {}",
            v.name,
            v.node_offsets.len(),
            v.dim
        ));
    }
    let nd = n * d;
    let nv = nd.div_ceil(LANES);
    let ndp = nv * LANES;
    let offs = &v.node_offsets;
    let ui = |a: usize, k: usize| format!("u_{}", a * d + k);
    let node_ids = (0..n)
        .map(|a| format!("const int n{a} = {};", offset_expr("node0", offs[a])))
        .collect();
    let load_u = (0..n)
        .flat_map(|a| (0..d).map(move |k| (a, k)))
        .map(|(a, k)| format!("const real {} = u[n{a} * DOFS + {k}];", ui(a, k)))
        .collect();
    let pack_u: Vec<String> = (0..nv)
        .map(|c| {
            let lanes: Vec<String> = (0..LANES)
                .map(|l| {
                    if c * LANES + l < nd {
                        format!("u_{}", c * LANES + l)
                    } else {
                        "0".into()
                    }
                })
                .collect();
            format!("const real8 U{c} = (real8)({});", lanes.join(", "))
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
    let blocked = tops.iter().all(|&a| partner[a].is_some()) && tops.len() == bottoms.len();
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

    Ok(Render {
        view: v,
        nd,
        nv,
        ndp,
        real: "float",
        real8: "float8",
        zero: "0.0f",
        sum_v8: "(((v).s0 + (v).s1) + ((v).s2 + (v).s3)) + (((v).s4 + (v).s5) + ((v).s6 + (v).s7))".into(),
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
        blocked,
        blk_decl: (0..nd).map(|i| format!("real u_{i} = 0, f_{i} = 0;")).collect(),
        blk_fetch_bottom: assign(&bottoms),
        blk_fetch_rest: assign(&rest),
        blk_accum: (0..nd).map(|i| format!("f_{i} -= ku_{i};")).collect(),
        blk_accum_live: (0..nd).map(|i| format!("f_{i} -= live * ku_{i};")).collect(),
        blk_write,
        blk_shift,
        blk_final,
        gather_init,
        gather,
        gather_tail,
    })
}

/// Renders the element family: the explicit central-difference step of seed 000 for one
/// element type (element forces in every schedule, stresses, node integration, loads).
pub fn render_element(view: &ElementView) -> Result<String, String> {
    let r = lines(view)?;
    crate::render::render_template("element.cl.tera", &format!("element `{}`", view.name), &r)
}

/// `__element_source!(name = quad4, dim = 2, nodes = 4, dofs = 2, order = 1, strains = 3,
/// offsets = [[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]])`: the rendered source as a string
/// literal. Lets the runtime's element kernels be tested without the `#[element]` front end.
pub fn element_source(input: proc_macro2::TokenStream) -> syn::Result<proc_macro2::TokenStream> {
    use syn::parse::Parser;
    let pairs = syn::punctuated::Punctuated::<syn::MetaNameValue, syn::Token![,]>::parse_terminated.parse2(input)?;
    let mut view = ElementView {
        name: String::new(),
        doc: vec![],
        file: "element_source!".into(),
        line: 0,
        dim: 0,
        nodes: 0,
        dofs: 0,
        order: 1,
        node_offsets: vec![],
        strains: 0,
    };
    let int = |e: &syn::Expr| -> syn::Result<usize> {
        match e {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(i), ..
            }) => i.base10_parse(),
            _ => Err(syn::Error::new_spanned(e, "expected an integer literal")),
        }
    };
    for kv in &pairs {
        let key = kv.path.get_ident().map(ToString::to_string).unwrap_or_default();
        match key.as_str() {
            "name" => match &kv.value {
                syn::Expr::Path(p) if p.path.get_ident().is_some() => {
                    view.name = p.path.get_ident().map(ToString::to_string).unwrap_or_default()
                }
                other => return Err(syn::Error::new_spanned(other, "expected an identifier")),
            },
            "dim" => view.dim = int(&kv.value)?,
            "nodes" => view.nodes = int(&kv.value)?,
            "dofs" => view.dofs = int(&kv.value)?,
            "order" => view.order = int(&kv.value)?,
            "strains" => view.strains = int(&kv.value)?,
            "offsets" => {
                let syn::Expr::Array(rows) = &kv.value else {
                    return Err(syn::Error::new_spanned(&kv.value, "expected `[[x, y, z], ...]`"));
                };
                for row in &rows.elems {
                    let syn::Expr::Array(xyz) = row else {
                        return Err(syn::Error::new_spanned(row, "expected `[x, y, z]`"));
                    };
                    let v: Vec<usize> = xyz.elems.iter().map(int).collect::<syn::Result<_>>()?;
                    let [x, y, z] = v[..] else {
                        return Err(syn::Error::new_spanned(row, "expected three offsets"));
                    };
                    view.node_offsets.push([x, y, z]);
                }
            }
            _ => return Err(syn::Error::new_spanned(&kv.path, format!("unknown key `{key}`"))),
        }
    }
    let span = proc_macro2::Span::call_site();
    let source = render_element(&view).map_err(|e| syn::Error::new(span, e))?;
    Ok(quote::quote!(#source))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(name: &str, dim: usize, nodes: usize, dofs: usize, offs: Vec<[usize; 3]>) -> ElementView {
        ElementView {
            name: name.into(),
            doc: vec![" test element".into()],
            file: "tests.rs".into(),
            line: 1,
            dim,
            nodes,
            dofs,
            order: 1,
            node_offsets: offs,
            strains: if dim == 2 { 3 } else { 6 },
        }
    }

    #[test]
    fn quad4_is_one_float8_per_row() {
        let src = render_element(&view(
            "quad4",
            2,
            4,
            2,
            vec![[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]],
        ))
        .unwrap();
        for k in [
            "coloured",
            "unstructured",
            "computed",
            "blocked",
            "blocked_mat",
            "gather",
            "stress",
            "integrate",
        ] {
            assert!(src.contains(&format!("void quad4_{k}(")), "quad4_{k} missing\n{src}");
        }
        assert!(src.contains("const real ku_7 = sum_v8(K[7] * U0);"), "{src}");
        assert!(src.contains("#pragma OPENCL FP_CONTRACT OFF"));
        assert!(!src.contains("U1"), "8 DOFs fit one float8\n{src}");
    }

    #[test]
    fn hex8_is_three_float8_per_row() {
        let offs = vec![
            [0, 0, 0],
            [1, 0, 0],
            [1, 1, 0],
            [0, 1, 0],
            [0, 0, 1],
            [1, 0, 1],
            [1, 1, 1],
            [0, 1, 1],
        ];
        let src = render_element(&view("hex8", 3, 8, 3, offs)).unwrap();
        assert!(
            src.contains("const real ku_23 = sum_v8(K[69] * U0) + sum_v8(K[70] * U1) + sum_v8(K[71] * U2);"),
            "{src}"
        );
        assert!(
            src.contains("const real8 U2 = (real8)(u_16, u_17, u_18, u_19, u_20, u_21, u_22, u_23);"),
            "{src}"
        );
        assert!(src.contains("void hex8_gather("), "{src}");
    }

    #[test]
    fn quad9_pads_the_last_float8() {
        let mut offs = vec![];
        for y in 0..3 {
            for x in 0..3 {
                offs.push([x, y, 0]);
            }
        }
        let mut v = view("quad9", 2, 9, 2, offs);
        v.order = 2;
        let src = render_element(&v).unwrap();
        assert!(src.contains("(real8)(u_16, u_17, 0, 0, 0, 0, 0, 0)"), "{src}");
        assert!(src.contains("% 2 == 0"), "{src}");
    }

    #[test]
    fn bad_view_is_an_error() {
        assert!(render_element(&view("bad", 2, 4, 2, vec![])).is_err());
    }
}
