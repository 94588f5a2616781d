//! Element model -> IR program: symbolic derivatives of the shape functions (exact, on
//! polynomials), checks that the shape functions interpolate at their nodes, the nodes' places
//! on a structured node grid, and the kernels of every schedule with their signatures.

use super::stencil::{define, tunable};
use crate::ir::element::{ElementBody, Forming};
use crate::ir::{Access, Binding, Body, Completion, Elem, Extension, Kernel, Origin, Param, Program, Ty};
use crate::model::element::Element;
use crate::model::family::{UserFamily, UserParamKind};
use crate::model::Scalar;
use clforge_abi::element as abi;
use syn::ext::IdentExt;

const TOL: f64 = 1e-9;

pub fn lower(e: &Element) -> syn::Result<Program> {
    let forming = Forming {
        modal: e
            .modal
            .as_ref()
            .map(|m| format!("modal {} basis of order {}", m.space.name(), m.order)),
        dim: e.dim,
        nf: e.nodes,
        ng: e.local_nodes.len(),
        dofs: e.dofs,
        strains: e.operator.strains(e.dim),
        cell: e.cell,
        nq1: e.quadrature,
        b: clforge_abi::modal::b_entries(e.dim, e.dofs, e.operator.strains(e.dim)).collect(),
    };
    let origin = Origin {
        name: e.name.unraw().to_string(),
        file: e.file.clone(),
        line: e.line,
        doc: e.doc.clone(),
    };
    if e.modal.is_some() {
        // No nodes on a grid: only the element-matrix kernels.
        let body = ElementBody {
            dim: e.dim,
            nodes: e.nodes,
            dofs: e.dofs,
            order: 1,
            node_offsets: Vec::new(),
            strains: forming.strains,
            dshape: Vec::new(),
            lanes: clforge_abi::LANES,
            chunks: (e.nodes * e.dofs).div_ceil(clforge_abi::LANES),
            forming,
        };
        return Ok(Program {
            kernels: super::forming::kernels(&origin),
            origin,
            family: "element".into(),
            tunables: Vec::new(),
            contracts: Vec::new(),
            fp64: true,
            completion: Completion::default(),
            body: Body::Element(body),
            extension: None,
        });
    }
    let (order, node_offsets) = match e.cell {
        clforge_abi::Cell::Cube => {
            check_box(e)?;
            check_interpolation(e)?;
            check_partition_of_unity(e)?;
            check_box_rule(e)?;
            grid_offsets(e)?
        }
        clforge_abi::Cell::Simplex => {
            check_simplex(e)?;
            check_interpolation(e)?;
            check_partition_of_unity(e)?;
            check_simplex_rule(e)?;
            // No place on a box grid: only unstructured meshes (the runtime refuses grids).
            (1, vec![[0; 3]; e.nodes])
        }
    };
    let dshape = (0..e.dim)
        .map(|axis| e.shape.iter().map(|n| n.poly.derivative(axis)).collect())
        .collect();
    let lanes = clforge_abi::LANES;
    let nd = e.nodes * e.dofs;
    let body = ElementBody {
        dim: e.dim,
        nodes: e.nodes,
        dofs: e.dofs,
        order,
        node_offsets,
        strains: e.operator.strains(e.dim),
        dshape,
        lanes,
        chunks: nd.div_ceil(lanes),
        forming,
    };
    let mut p = program(origin, body);
    if let Some(f) = &e.family {
        extend(&mut p, f);
    }
    Ok(p)
}

/// Adds a user family's kernels, typed from their Rust declarations, and its template.
fn extend(p: &mut Program, f: &UserFamily) {
    for k in &f.kernels {
        let params = k
            .params
            .iter()
            .map(|q| {
                let elem = Elem::Scalar(q.scalar);
                let (ty, access) = match q.kind {
                    UserParamKind::Read => (Ty::Global { elem, lanes: 1 }, Access::Read),
                    UserParamKind::Write => (Ty::Global { elem, lanes: 1 }, Access::Write),
                    UserParamKind::Value => (Ty::Value(elem), Access::Read),
                };
                Param::new(&q.name.unraw().to_string(), ty, access, Binding::Named)
            })
            .collect();
        let mut kernel = Kernel::new(&p.origin, &k.name.unraw().to_string(), params);
        kernel.user = true;
        kernel.doc = k.doc.clone();
        p.kernels.push(kernel);
    }
    p.extension = Some(Extension {
        shown: f.shown.clone(),
        path: f.path.clone(),
        text: f.text.clone(),
        span: f.span,
    });
}

/// The program of an element structure: kernels, tunables and contracts.
pub fn program(origin: Origin, body: ElementBody) -> Program {
    let nd = body.nd();
    let kernels = kernels(&origin, &body);
    let tunables = vec![
        tunable("L_X", abi::L_X, "blocked schedules: work-items along x per block"),
        tunable("L_Y", abi::L_Y, "blocked schedules: work-items along y per block"),
        tunable(
            "WI_SIZE",
            abi::WI_SIZE,
            "blocked schedules: elements each work-item walks up its column",
        ),
    ];
    let contracts = vec![
        define("DIM", body.dim, "spatial dimension"),
        define("NODES", body.nodes, "nodes per element"),
        define("DOFS", body.dofs, "degrees of freedom per node"),
        define("ND", nd, "degrees of freedom per element"),
        define("NV", body.chunks, "real8 chunks per row of K_e"),
        define("STRAINS", body.strains, "rows of G_e"),
        define("ORDER", body.order, "node-grid steps per element edge"),
        define("DEAD_MATERIAL", abi::DEAD_MATERIAL, "material index of a dead element"),
        define(
            "MASK_WORDS",
            format!("((L_X * L_Y * WI_SIZE + {0} - 1) / {0})", abi::MASK_BITS),
            "words of a block's crack mask",
        ),
        define(
            "CRACK_BIT(lx, ly, w)",
            format!("({})", abi::CRACK_BIT_C),
            "crack-mask bit of an element of a block",
        ),
    ];
    Program {
        origin,
        family: "element".into(),
        kernels,
        tunables,
        contracts,
        fp64: false,
        completion: Completion::default(),
        body: Body::Element(body),
        extension: None,
    }
}

/// Every kernel of the element family and its ABI. The generated launchers (`expand`) and the
/// templates' signatures are printed from these lists.
fn kernels(origin: &Origin, b: &ElementBody) -> Vec<Kernel> {
    let ps = Params { lanes: b.lanes };
    let k = |variant: &str, params: Vec<Param>| Kernel::new(origin, variant, params);
    let cat = |parts: &[&[Param]]| parts.concat();
    let [blocked, blocked_mat] = blocked_kernels(origin, b, &ps);
    let [gather, gather_derived, gather_steps] = gather_kernels(origin, b, &ps);
    let mut all = vec![
        k(
            "coloured",
            cat(&[
                &[ps.rows("K"), ps.global("elem_nodes", Scalar::I32), ps.u(), ps.f()],
                &ps.grid(),
                &ps.colour(),
            ]),
        ),
        k(
            "unstructured",
            cat(&[
                &[ps.rows("K"), ps.global("elem_nodes", Scalar::I32), ps.u(), ps.f()],
                &[ps.int("first"), ps.int("count")],
            ]),
        ),
        k(
            "computed",
            cat(&[&[ps.rows("K"), ps.u(), ps.f()], &ps.grid(), &ps.colour()]),
        ),
        blocked,
        blocked_mat,
        gather,
        gather_derived,
        gather_steps,
    ];
    all.extend(node_kernels(origin, &ps));
    all.extend(super::forming::kernels(origin));
    if b.forming.cell == clforge_abi::Cell::Simplex {
        // A simplex has no place on a box grid: only the unstructured schedules exist for it.
        for kn in all.iter_mut().filter(|k| STRUCTURED_ONLY.contains(&k.variant.as_str())) {
            kn.unavailable = Some(
                "a `cell = simplex` element has no place on a structured grid: it steps on unstructured meshes only"
                    .into(),
            );
        }
    }
    all
}

/// The element kernels' parameters by kind, all bound by name (`lanes`: the packed rows' width).
struct Params {
    lanes: usize,
}

impl Params {
    /// `__global real*`.
    fn real(&self, name: &str, access: Access) -> Param {
        Param::new(
            name,
            Ty::Global {
                elem: Elem::Real,
                lanes: 1,
            },
            access,
            Binding::Named,
        )
    }

    /// `__constant real8*`: packed matrix rows.
    fn rows(&self, name: &str) -> Param {
        Param::new(
            name,
            Ty::Constant {
                elem: Elem::Real,
                lanes: self.lanes,
            },
            Access::Read,
            Binding::Named,
        )
    }

    /// `__global const T*`.
    fn global(&self, name: &str, s: Scalar) -> Param {
        Param::new(
            name,
            Ty::Global {
                elem: Elem::Scalar(s),
                lanes: 1,
            },
            Access::Read,
            Binding::Named,
        )
    }

    /// `__global const real8*`: packed rows in global memory.
    fn packed(&self, name: &str) -> Param {
        Param::new(
            name,
            Ty::Global {
                elem: Elem::Real,
                lanes: self.lanes,
            },
            Access::Read,
            Binding::Named,
        )
    }

    fn int(&self, name: &str) -> Param {
        Param::new(name, Ty::Value(Elem::Scalar(Scalar::I32)), Access::Read, Binding::Named)
    }

    fn value(&self, name: &str) -> Param {
        Param::new(name, Ty::Value(Elem::Real), Access::Read, Binding::Named)
    }

    /// The element grid's extents.
    fn grid(&self) -> [Param; 3] {
        ["nx", "ny", "nz"].map(|n| self.int(n))
    }

    /// The colour of a coloured launch.
    fn colour(&self) -> [Param; 3] {
        ["sx", "sy", "sz"].map(|n| self.int(n))
    }

    fn u(&self) -> Param {
        self.real("u", Access::Read)
    }

    fn f(&self) -> Param {
        self.real("f", Access::ReadWrite)
    }
}

/// The blocked schedules (seed algorithm 3): one material, and per-block materials.
fn blocked_kernels(origin: &Origin, b: &ElementBody, ps: &Params) -> [Kernel; 2] {
    let cat = |parts: &[&[Param]]| parts.concat();
    let mut blocked = Kernel::new(
        origin,
        "blocked",
        cat(&[&[ps.rows("K"), ps.u(), ps.f()], &ps.grid(), &ps.colour()]),
    );
    let mut blocked_mat = Kernel::new(
        origin,
        "blocked_mat",
        cat(&[
            &[
                Param::new(
                    "control",
                    Ty::Global {
                        elem: Elem::Int4,
                        lanes: 1,
                    },
                    Access::Read,
                    Binding::Named,
                ),
                ps.global("masks", Scalar::U32),
                ps.packed("Kg"),
                ps.u(),
                ps.f(),
            ],
            &ps.grid(),
            &ps.colour(),
        ]),
    );
    for kn in [&mut blocked, &mut blocked_mat] {
        kn.unavailable = blocking_unavailable(b);
    }
    [blocked, blocked_mat]
}

/// The node-centric gathers: per DOF, by the node's class, several steps per launch.
fn gather_kernels(origin: &Origin, b: &ElementBody, ps: &Params) -> [Kernel; 3] {
    let cat = |parts: &[&[Param]]| parts.concat();
    let k = |variant: &str, params: Vec<Param>| Kernel::new(origin, variant, params);
    let (real, rows, global, value, grid) = (
        |n: &str, a| ps.real(n, a),
        |n: &str| ps.rows(n),
        |n: &str, s| ps.global(n, s),
        |n: &str| ps.value(n),
        || ps.grid(),
    );
    let gather = k(
        "gather",
        cat(&[
            &[
                rows("K"),
                real("minv", Access::Read),
                real("damp", Access::Read),
                real("u_in", Access::Read),
                real("u_out", Access::Write),
                real("v", Access::ReadWrite),
                value("dt"),
            ],
            &grid(),
        ]),
    );
    // The gather with M⁻¹ and C = −αM looked up by the node's class (which of its roles have an
    // element, `2^NODES` classes) instead of read per DOF, and fixed DOFs from a bit mask.
    let mut gather_derived = k(
        "gather_derived",
        cat(&[
            &[
                rows("K"),
                real("mass_tab", Access::Read),
                global("fixed", Scalar::U32),
                real("u_in", Access::Read),
                real("u_out", Access::Write),
                real("v", Access::ReadWrite),
                value("dt"),
            ],
            &grid(),
        ]),
    );
    if b.node_offsets.len() > MAX_DERIVED_ROLES {
        gather_derived.unavailable = Some(format!(
            "the derived-mass gather tells a node's class by which of its {} roles have an element, \
             one table row per class; above {MAX_DERIVED_ROLES} nodes per element the table is too large",
            b.node_offsets.len()
        ));
    }
    // Several class-table gather steps per launch in local memory: the window of registers
    // (elements of order 1 in 2-D and 3-D) and the class table's roles.
    let mut gather_steps = k(
        "gather_steps",
        cat(&[
            &[
                rows("K"),
                real("mass_tab", Access::Read),
                global("fixed", Scalar::U32),
                real("u_in", Access::Read),
                real("u_out", Access::Write),
                real("v_in", Access::Read),
                real("v_out", Access::Write),
                value("dt"),
            ],
            &grid(),
        ]),
    );
    gather_steps.unavailable = gather_derived.unavailable.clone().or_else(|| {
        (b.order != 1 || b.dim < 2).then(|| {
            format!(
                "several gather steps per launch keep a window of nodes in registers: elements of order 1 in \
                 2-D or 3-D (order {}, {}-D)",
                b.order, b.dim
            )
        })
    });
    [gather, gather_derived, gather_steps]
}

/// The kernels over nodes and elements beside the force schedules: stresses, the node
/// integration, loads and kicks.
fn node_kernels(origin: &Origin, ps: &Params) -> Vec<Kernel> {
    let cat = |parts: &[&[Param]]| parts.concat();
    let k = |variant: &str, params: Vec<Param>| Kernel::new(origin, variant, params);
    let (real, global, int, value) = (
        |n: &str, a| ps.real(n, a),
        |n: &str, s| ps.global(n, s),
        |n: &str| ps.int(n),
        |n: &str| ps.value(n),
    );
    vec![
        k(
            "stress",
            cat(&[
                &[
                    ps.packed("G"),
                    global("emat", Scalar::U8),
                    ps.u(),
                    real("stress", Access::Write),
                ],
                &ps.grid(),
            ]),
        ),
        k(
            "stress_unstructured",
            vec![
                ps.packed("G"),
                global("emat", Scalar::U8),
                global("elem_nodes", Scalar::I32),
                ps.u(),
                real("stress", Access::Write),
                int("ne"),
            ],
        ),
        k(
            "integrate",
            vec![
                real("minv", Access::Read),
                real("damp", Access::Read),
                real("u", Access::ReadWrite),
                real("v", Access::ReadWrite),
                real("f", Access::ReadWrite),
                value("dt"),
                int("n"),
            ],
        ),
        k(
            "load",
            vec![
                global("idx", Scalar::I32),
                real("w", Access::Read),
                value("s"),
                real("f", Access::ReadWrite),
                int("n"),
            ],
        ),
        k(
            "kick",
            vec![
                global("idx", Scalar::I32),
                real("w", Access::Read),
                value("s"),
                real("minv", Access::Read),
                real("u", Access::ReadWrite),
                real("v", Access::ReadWrite),
                value("dt"),
                int("n"),
            ],
        ),
    ]
}

/// The kernels that walk a structured element grid (the kick of loads serves both gathers,
/// `_gather_unstructured` too, and stays).
const STRUCTURED_ONLY: [&str; 7] = [
    "coloured",
    "computed",
    "blocked",
    "blocked_mat",
    "gather",
    "gather_derived",
    "stress",
];

/// The derived-mass gather's class table has `2^NODES` rows: up to 512 (quad9).
pub const MAX_DERIVED_ROLES: usize = 9;

/// Register shifting along y (seed algorithm 3) passes the top nodes of one element to the
/// next element up the column as its bottom nodes: every top node needs a bottom partner.
fn blocking_unavailable(b: &ElementBody) -> Option<String> {
    let offs = &b.node_offsets;
    let p = b.order;
    let tops: Vec<&[usize; 3]> = offs.iter().filter(|o| o[1] == p).collect();
    let bottoms = offs.iter().filter(|o| o[1] == 0).count();
    let paired = tops.iter().all(|t| offs.contains(&[t[0], 0, t[2]]));
    (!(paired && tops.len() == bottoms)).then(|| {
        "the element's top nodes do not mirror its bottom nodes, so the blocked schedules cannot shift them up a column"
            .to_string()
    })
}

/// Elements are integrated over the reference box [-1, 1]^dim (tensor Gauss rules), so their
/// nodes must include its 2^dim corners. A triangle or tetrahedron written on box corners
/// passes every other check and would be integrated over the square (K_e 2x, 6x in 3-D).
fn check_box(e: &Element) -> syn::Result<()> {
    for corner in 0..1usize << e.dim {
        let c: Vec<f64> = (0..e.dim)
            .map(|a| if corner >> a & 1 == 1 { 1.0 } else { -1.0 })
            .collect();
        let found = e
            .local_nodes
            .iter()
            .any(|n| (0..e.dim).all(|a| (n[a] - c[a]).abs() <= TOL));
        if !found {
            let at: Vec<String> = c.iter().map(|v| format!("{v:?}")).collect();
            return Err(syn::Error::new_spanned(
                &e.nodes_tokens,
                format!(
                    "`NODES` has no node at the corner ({}) of the reference box [-1, 1]^{}: clforge integrates elements over the whole box with tensor Gauss rules, so every corner must be a node. A simplex (triangle, tetrahedron) written on box corners would be integrated over the box, not the simplex: declare it with `cell = simplex` on the unit simplex",
                    at.join(", "),
                    e.dim
                ),
            ));
        }
    }
    Ok(())
}

/// A tensor Gauss rule of `n` points per axis integrates the stiffness of shape functions of
/// degree `k` per axis without zero-energy (hourglass) modes only from `n = k + 1`: fewer points
/// leave deformations that the element does not resist (quad4 with one point: two).
fn check_box_rule(e: &Element) -> syn::Result<()> {
    let k = e.shape.iter().map(|n| n.poly.axis_degree()).max().unwrap_or(0) as usize;
    let n = e.quadrature;
    if n < k + 1 {
        return Err(syn::Error::new(
            e.quadrature_span,
            format!(
                "`quadrature = {n}` under-integrates these shape functions (degree {k} per axis): the stiffness would \
                 have zero-energy (hourglass) modes the element does not resist; use `quadrature = {}` or more \
                 (for a reduced-integration study on the host, `WithQuadrature<E, {n}>`)",
                k + 1
            ),
        ));
    }
    Ok(())
}

/// The unit simplex's vertices (0 and the unit vectors) are nodes and every node lies in it.
fn check_simplex(e: &Element) -> syn::Result<()> {
    for v in 0..=e.dim {
        let c: Vec<f64> = (0..e.dim).map(|a| if v == a + 1 { 1.0 } else { 0.0 }).collect();
        if !e
            .local_nodes
            .iter()
            .any(|n| (0..e.dim).all(|a| (n[a] - c[a]).abs() <= TOL))
        {
            let at: Vec<String> = c.iter().map(|v| format!("{v:?}")).collect();
            return Err(syn::Error::new_spanned(
                &e.nodes_tokens,
                format!(
                    "`NODES` has no node at the vertex ({}) of the unit simplex: a `cell = simplex` element lives on \
                     the {} with vertices at 0 and the unit vectors, and each vertex must be a node",
                    at.join(", "),
                    if e.dim == 2 {
                        "triangle"
                    } else if e.dim == 3 {
                        "tetrahedron"
                    } else {
                        "segment [0, 1]"
                    }
                ),
            ));
        }
    }
    for (j, n) in e.local_nodes.iter().enumerate() {
        let sum: f64 = n[..e.dim].iter().sum();
        if n[..e.dim].iter().any(|&x| x < -TOL) || sum > 1.0 + TOL {
            let at: Vec<String> = n[..e.dim].iter().map(|v| format!("{v:?}")).collect();
            return Err(syn::Error::new_spanned(
                &e.nodes_tokens,
                format!(
                    "node {j} ({}) lies outside the unit simplex (every coordinate ≥ 0, their sum ≤ 1)",
                    at.join(", ")
                ),
            ));
        }
    }
    Ok(())
}

/// `Σ N_i = 1` as a polynomial identity: rigid translations are then exact, and the mass of
/// the element is its volume times the density.
fn check_partition_of_unity(e: &Element) -> syn::Result<()> {
    let sum = e
        .shape
        .iter()
        .fold(crate::model::element::Poly::default(), |acc, n| acc.add(&n.poly))
        .sub(&crate::model::element::Poly::constant(1.0));
    if let Some((exp, c)) = sum.0.iter().find(|(_, c)| c.abs() > TOL) {
        let term = if exp.iter().all(|&k| k == 0) {
            String::new()
        } else {
            (0..e.dim)
                .filter(|&a| exp[a] > 0)
                .map(|a| {
                    let x = e.coords.get(a).map_or("x".into(), |i| i.to_string());
                    if exp[a] == 1 {
                        format!("·{x}")
                    } else {
                        format!("·{x}^{}", exp[a])
                    }
                })
                .collect()
        };
        return Err(syn::Error::new_spanned(
            &e.nodes_tokens,
            format!(
                "the shape functions do not sum to 1 (partition of unity): their sum minus 1 has the term {c}{term}; \
                 a rigid translation would not be exact"
            ),
        ));
    }
    Ok(())
}

/// The collapsed rule must integrate the mass matrix exactly on an affine simplex: degree
/// `2k` for shape functions of degree `k`, so `2n - 1 ≥ 2k`.
fn check_simplex_rule(e: &Element) -> syn::Result<()> {
    let k = e.shape.iter().map(|n| n.poly.degree()).max().unwrap_or(0) as usize;
    let n = e.quadrature;
    if 2 * n < 2 * k + 1 {
        return Err(syn::Error::new(
            e.quadrature_span,
            format!(
                "`quadrature = {n}` integrates total degree {} exactly on the simplex, but the shape functions have degree {k}, \
                 so the mass matrix has degree {}: use `quadrature = {}` or more (the rule is exact to degree 2n - 1)",
                2 * n - 1,
                2 * k,
                k + 1
            ),
        ));
    }
    if n + 1 > clforge_abi::MAX_QUADRATURE {
        return Err(syn::Error::new(
            e.quadrature_span,
            format!(
                "a simplex rule of `quadrature = {n}` needs {} Gauss points along its collapsed axes; the host provides at most {}",
                n + 1,
                clforge_abi::MAX_QUADRATURE
            ),
        ));
    }
    Ok(())
}

/// `N_i(node_j) = δ_ij`: without it nodal values are not the field's values at the nodes, so a
/// wrong sign or a swapped node is caught here rather than as a wrong stiffness.
fn check_interpolation(e: &Element) -> syn::Result<()> {
    let mut errors = crate::diag::Errors::default();
    for (i, n) in e.shape.iter().enumerate() {
        for (j, node) in e.local_nodes.iter().enumerate() {
            let want = if i == j { 1.0 } else { 0.0 };
            let got = n.poly.eval(*node);
            if (got - want).abs() > TOL {
                let at: Vec<String> = node[..e.dim].iter().map(|v| format!("{v:?}")).collect();
                errors.push(syn::Error::new_spanned(
                    &n.tokens,
                    format!(
                        "shape function {i} is {got} at node {j} ({}) but must be {want}: each shape function is 1 at its own node of `NODES` and 0 at the others",
                        at.join(", ")
                    ),
                ));
                break;
            }
        }
    }
    errors.finish()
}

/// Node-grid steps per element edge and each node's offset: local -1 -> 0, +1 -> `order`.
fn grid_offsets(e: &Element) -> syn::Result<(usize, Vec<[usize; 3]>)> {
    let mut order = 1;
    for axis in 0..e.dim {
        let mut values: Vec<f64> = e.local_nodes.iter().map(|p| p[axis]).collect();
        values.sort_by(f64::total_cmp);
        values.dedup_by(|a, b| (*a - *b).abs() < TOL);
        order = order.max(values.len().saturating_sub(1));
    }
    let mut offsets = Vec::new();
    for p in &e.local_nodes {
        let mut o = [0usize; 3];
        for axis in 0..e.dim {
            let step = (p[axis] + 1.0) / 2.0 * order as f64;
            if (step - step.round()).abs() > TOL {
                return Err(syn::Error::new_spanned(
                    &e.nodes_tokens,
                    format!(
                        "the local nodes must lie on a regular grid of [-1, 1] with {} points per direction (corners at ±1{}), so that elements map onto a structured node grid",
                        order + 1,
                        if order == 2 { ", mid-sides at 0" } else { "" }
                    ),
                ));
            }
            o[axis] = step.round() as usize;
        }
        offsets.push(o);
    }
    Ok((order, offsets))
}
