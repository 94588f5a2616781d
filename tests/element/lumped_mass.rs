//! Lumped mass (docs/LUMPED-MASS.md): row sums where every row sum is positive, HRZ where one
//! is not (8-node serendipity corners), chosen per element; the masses are positive and add up
//! to ρ·volume on distorted elements. `Model::new` shares an element mass by the reference
//! element's lumping; structured grids whose elements leave nodes out (Q8 on an order-2 grid)
//! give models that validate and run; misuse is a typed error that says what is wrong.

use crate::common;
use crate::elements;

use clforge::element;
use clforge::runtime::element::matrices::{self, Lumping};
use clforge::runtime::element::mesh::{Mesh, StructuredMesh, UnstructuredMesh};
use clforge::runtime::element::problem::{reference_lumping, Model};
use clforge::runtime::element::schedule::ForceSchedule;
use clforge::runtime::element::stepper::{stability_bound, HostStepper, Stepper, StepperConfig};
use clforge::runtime::element::Element;
use clforge::runtime::Error;
use elements::hex8::{Hex8, Solid};
use elements::quad4::{Plate, Quad4};
use elements::quad9::{Body, Quad9};

/// A plate of thickness `t` in plane strain (the serendipity element's material).
#[derive(Clone, Copy, Debug)]
pub struct Slab {
    pub e: f64,
    pub nu: f64,
    pub rho: f64,
    pub t: f64,
}

/// 8-node serendipity quadrilateral: corners counter-clockwise, then the mid-sides; on the
/// order-2 node grid it leaves each element's centre node out.
#[element(dim = 2, nodes = 8, operator = plane_strain, quadrature = 3)]
pub mod quad8 {
    use super::Slab;

    pub const NODES: [[f64; 2]; 8] = [
        [-1.0, -1.0],
        [1.0, -1.0],
        [1.0, 1.0],
        [-1.0, 1.0],
        [0.0, -1.0],
        [1.0, 0.0],
        [0.0, 1.0],
        [-1.0, 0.0],
    ];

    pub fn shape(r: f64, s: f64) -> [f64; 8] {
        [
            0.25 * (1.0 - r) * (1.0 - s) * (-r - s - 1.0),
            0.25 * (1.0 + r) * (1.0 - s) * (r - s - 1.0),
            0.25 * (1.0 + r) * (1.0 + s) * (r + s - 1.0),
            0.25 * (1.0 - r) * (1.0 + s) * (-r + s - 1.0),
            0.5 * (1.0 - r.powi(2)) * (1.0 - s),
            0.5 * (1.0 + r) * (1.0 - s.powi(2)),
            0.5 * (1.0 - r.powi(2)) * (1.0 + s),
            0.5 * (1.0 - r) * (1.0 - s.powi(2)),
        ]
    }

    pub fn material(m: &Slab) -> [[f64; 3]; 3] {
        let c = m.e / ((1.0 + m.nu) * (1.0 - 2.0 * m.nu));
        [
            [c * (1.0 - m.nu), c * m.nu, 0.0],
            [c * m.nu, c * (1.0 - m.nu), 0.0],
            [0.0, 0.0, c * (0.5 - m.nu)],
        ]
    }

    pub fn density(m: &Slab) -> f64 {
        m.rho
    }

    pub fn thickness(m: &Slab) -> f64 {
        m.t
    }
}

/// A modal (hierarchical) quad: its modes are not nodes.
#[element(dim = 2, operator = plane_strain, basis = trunk, order = 2)]
pub mod quad_p2 {
    use super::Slab;

    pub fn material(m: &Slab) -> [[f64; 3]; 3] {
        super::quad8::material(m)
    }

    pub fn density(m: &Slab) -> f64 {
        m.rho
    }
}

const PLATE: Plate = Plate {
    e: 2.0e3,
    nu: 0.25,
    rho: 3.0,
    thickness: 0.1,
};
const BODY: Body = Body {
    e: 1.0e3,
    nu: 0.3,
    rho: 2.5,
};
const SLAB: Slab = Slab {
    e: 1.0e3,
    nu: 0.3,
    rho: 1.7,
    t: 0.4,
};
const SOLID: Solid = Solid {
    lambda: 1.0e3,
    mu: 0.6e3,
    rho: 4.0,
};

/// A convex, non-parallelogram quadrilateral, counter-clockwise.
const QUAD: [[f64; 2]; 4] = [[0.0, 0.0], [2.0, 0.2], [2.3, 1.9], [-0.2, 1.5]];

fn shoelace(p: &[[f64; 2]]) -> f64 {
    (0..p.len())
        .map(|i| p[i][0] * p[(i + 1) % p.len()][1] - p[(i + 1) % p.len()][0] * p[i][1])
        .sum::<f64>()
        / 2.0
}

fn mid(a: [f64; 2], b: [f64; 2]) -> [f64; 2] {
    [(a[0] + b[0]) / 2.0, (a[1] + b[1]) / 2.0]
}

/// Corners, then the mid-sides (bottom, right, top, left) of a straight-sided quad.
fn quad8_nodes(c: [[f64; 2]; 4]) -> Vec<[f64; 2]> {
    let mut p = c.to_vec();
    p.extend((0..4).map(|i| mid(c[i], c[(i + 1) % 4])));
    p
}

/// `quad8_nodes` and the centre of the bilinear map.
fn quad9_nodes(c: [[f64; 2]; 4]) -> Vec<[f64; 2]> {
    let mut p = quad8_nodes(c);
    p.push([
        c.iter().map(|q| q[0]).sum::<f64>() / 4.0,
        c.iter().map(|q| q[1]).sum::<f64>() / 4.0,
    ]);
    p
}

fn det3(a: [[f64; 3]; 3]) -> f64 {
    a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0])
        + a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0])
}

/// Positive masses summing to `expected` to 1e-12 relative, by `scheme`.
fn check(what: &str, lumped: &matrices::LumpedMass, scheme: Lumping, expected: f64) {
    assert_eq!(lumped.scheme, scheme, "{what}: scheme");
    assert!(
        lumped.masses.iter().all(|&m| m.is_finite() && m > 0.0),
        "{what}: masses {:?}",
        lumped.masses
    );
    let total: f64 = lumped.masses.iter().sum();
    assert!(
        (total - expected).abs() <= 1e-12 * expected,
        "{what}: total {total} vs ρ·volume {expected}"
    );
}

#[test]
fn masses_are_positive_and_sum_to_rho_volume_on_distorted_elements() {
    let area = shoelace(&QUAD);
    let quad4 = matrices::lumped_mass::<Quad4, _>(&QUAD, &PLATE).unwrap();
    check("quad4", &quad4, Lumping::RowSum, PLATE.rho * area * PLATE.thickness);
    let quad9 = matrices::lumped_mass::<Quad9, _>(&quad9_nodes(QUAD), &BODY).unwrap();
    check("quad9", &quad9, Lumping::RowSum, BODY.rho * area);
    let quad8 = matrices::lumped_mass::<Quad8, _>(&quad8_nodes(QUAD), &SLAB).unwrap();
    check("quad8", &quad8, Lumping::Hrz, SLAB.rho * area * SLAB.t);
    // The generated `Quad8::mass_lumped` is the same lumping.
    assert_eq!(Quad8::mass_lumped(&quad8_nodes(QUAD), &SLAB).unwrap(), quad8.masses);

    // A frustum (square 2 × 2 under a 1 × 1 square, its top shifted sideways, height 1.5) under
    // a general linear map: volume det A · h (a² + ab + b²) / 3.
    let a = [[1.2, 0.3, 0.0], [0.1, 0.9, 0.2], [0.0, 0.4, 1.1]];
    let (bottom, top, h) = (2.0, 1.0, 1.5);
    let hex: Vec<[f64; 3]> = Hex8::local_nodes()
        .iter()
        .map(|p| {
            let z = (p[2] + 1.0) / 2.0;
            let side = bottom + (top - bottom) * z;
            let x = [p[0] * side / 2.0 + 0.3 * z, p[1] * side / 2.0 - 0.2 * z, h * z];
            std::array::from_fn(|i| (0..3).map(|j| a[i][j] * x[j]).sum())
        })
        .collect();
    let volume = det3(a) * h * (bottom * bottom + bottom * top + top * top) / 3.0;
    let hex8 = matrices::lumped_mass::<Hex8, _>(&hex, &SOLID).unwrap();
    check("hex8", &hex8, Lumping::RowSum, SOLID.rho * volume);
}

#[test]
fn serendipity_corners_have_negative_row_sums_so_hrz_is_used() {
    // On a rectangle the consistent mass of Q8 gives each corner -1/12 of the element's mass
    // and each mid-side 1/3: row-sum lumping is impossible.
    let rect = [[0.0, 0.0], [3.0, 0.0], [3.0, 2.0], [0.0, 2.0]];
    let mass = SLAB.rho * 6.0 * SLAB.t;
    let m = Quad8::mass_consistent(&quad8_nodes(rect), &SLAB).unwrap();
    for node in 0..8 {
        let row: f64 = m.row(2 * node).iter().sum();
        let want = if node < 4 { -mass / 12.0 } else { mass / 3.0 };
        assert!(
            (row - want).abs() < 1e-12 * mass,
            "row sum of node {node}: {row} vs {want}"
        );
    }
    // HRZ: the diagonal ∫ρN_i² is in ratio 3 : 16 (corner : mid-side), so 3/76 and 16/76.
    let lumped = matrices::lumped_mass::<Quad8, _>(&quad8_nodes(rect), &SLAB).unwrap();
    assert_eq!(lumped.scheme, Lumping::Hrz);
    for (node, &got) in lumped.masses.iter().enumerate() {
        let want = mass * if node < 4 { 3.0 } else { 16.0 } / 76.0;
        assert!(
            (got - want).abs() < 1e-12 * mass,
            "HRZ mass of node {node}: {got} vs {want}"
        );
    }
    // Q9 keeps row sums: Simpson's products 1/36, 4/36, 16/36.
    let q9 = matrices::lumped_mass::<Quad9, _>(&quad9_nodes(rect), &BODY).unwrap();
    assert_eq!(q9.scheme, Lumping::RowSum);
    for (node, &got) in q9.masses.iter().enumerate() {
        let want = BODY.rho * 6.0 * [1.0, 4.0, 16.0][usize::from(node >= 4) + usize::from(node == 8)] / 36.0;
        assert!(
            (got - want).abs() < 1e-12 * want,
            "Q9 mass of node {node}: {got} vs {want}"
        );
    }
}

#[test]
fn model_new_shares_the_element_mass_like_the_element_itself() {
    // On rectangles the reference shares are exact: Model::new with ρ·area equals Model::of.
    let (size, elements) = ([0.5, 0.25, 1.0], [3, 2, 1]);
    let area = size[0] * size[1];
    for (spec, of) in [
        (
            Quad9::spec(),
            Model::of::<Quad9>(
                Mesh::Structured(StructuredMesh::for_element(&Quad9::spec(), elements, size).unwrap()),
                &BODY,
            )
            .unwrap(),
        ),
        (
            Quad4::spec(),
            Model::of::<Quad4>(
                Mesh::Structured(StructuredMesh::for_element(&Quad4::spec(), elements, size).unwrap()),
                &PLATE,
            )
            .unwrap(),
        ),
    ] {
        let element_mass = if spec.nodes == 9 {
            BODY.rho * area
        } else {
            PLATE.rho * area * PLATE.thickness
        };
        let new = Model::new(spec, of.mesh.clone(), of.stiffness[0].clone(), element_mass).unwrap();
        for (i, (a, b)) in new.mass.iter().zip(&of.mass).enumerate() {
            assert!((a - b).abs() <= 1e-6 * b, "{}: DOF {i}: {a} vs {b}", spec.name);
        }
        new.validate().unwrap();
    }
    assert_eq!(reference_lumping(&Quad9::spec()).unwrap().scheme, Lumping::RowSum);
    let hex = reference_lumping(&Hex8::spec()).unwrap();
    assert!(hex.masses.iter().all(|&m| (m - 0.125).abs() < 1e-15), "{hex:?}");
    // Q8: the spec does not fix the shares; Model::new says to use Model::of.
    let spec = Quad8::spec();
    let sm = StructuredMesh::for_element(&spec, [2, 2, 1], [1.0; 3]).unwrap();
    let err = Model::new(spec, Mesh::Structured(sm), vec![0.0; spec.nd() * spec.nd()], 1.0).unwrap_err();
    assert!(
        matches!(err, Error::LumpedMass { element: "quad8", .. }) && err.to_string().contains("Model::of"),
        "{err}"
    );
}

fn config(schedule: ForceSchedule, model: &Model) -> StepperConfig {
    StepperConfig {
        schedule,
        dt: 0.5 * stability_bound(model, 0.0).unwrap().dt_max,
        alpha: 0.0,
        c_max: 0.0,
    }
}

/// A smooth initial displacement per DOF from node positions.
fn initial(mesh: &Mesh, spec: &clforge::runtime::element::ElementSpec) -> Vec<f32> {
    let positions: Vec<[f64; 3]> = match mesh {
        Mesh::Structured(m) => (0..m.node_count()).map(|n| m.node_position(n)).collect(),
        Mesh::Unstructured(m) => m.coords.clone(),
    };
    positions
        .iter()
        .flat_map(|p| (0..spec.dofs).map(move |d| (1e-3 * (p[0] * 1.3 + p[1] * (d as f64 + 0.7)).sin()) as f32))
        .collect()
}

#[test]
fn quad8_on_a_structured_grid_validates_and_runs() {
    let spec = Quad8::spec();
    let elements = [4, 3, 1];
    let grid = StructuredMesh::for_element(&spec, elements, [1.0, 0.8, 1.0]).unwrap();
    let structured = Mesh::Structured(grid.clone());
    // The centre of every element belongs to no element.
    let orphans = structured.unused_nodes(spec.node_offsets);
    let centres: Vec<usize> = (0..grid.element_count())
        .map(|e| {
            let [x, y, _] = grid.element_coords(e);
            grid.node_index([2 * x + 1, 2 * y + 1, 0])
        })
        .collect();
    let mut sorted = centres.clone();
    sorted.sort_unstable();
    assert_eq!(orphans, sorted);

    let model = Model::of::<Quad8>(structured, &SLAB).unwrap();
    model.validate().unwrap();
    for (i, (&m, &fixed)) in model.mass.iter().zip(&model.fixed).enumerate() {
        let orphan = orphans.contains(&(i / 2));
        assert_eq!(fixed, orphan, "DOF {i}: fixed exactly where the node is in no element");
        assert!(orphan || m > 0.0, "DOF {i} is free with mass {m}");
    }
    let total: f64 = model.mass.iter().sum();
    let exact = 2.0 * SLAB.rho * SLAB.t * 4.0 * 3.0 * 0.8;
    assert!((total - exact).abs() < 1e-5 * exact, "{total} vs {exact}");

    // The same grid without its orphan nodes: nothing fixed, the same masses at the same nodes.
    let (raw, map) = UnstructuredMesh::new(
        (0..grid.node_count()).map(|n| grid.node_position(n)).collect(),
        spec.nodes,
        grid.connectivity(spec.node_offsets),
    )
    .unwrap()
    .compact()
    .unwrap();
    let compact = UnstructuredMesh::from_structured(&grid, spec.node_offsets).unwrap();
    assert_eq!(raw, compact);
    assert_eq!(compact.node_count(), grid.node_count() - grid.element_count());
    let unstructured = Model::of::<Quad8>(Mesh::Unstructured(compact), &SLAB).unwrap();
    assert!(unstructured.fixed.iter().all(|&f| !f));
    assert!(Mesh::Unstructured(raw).unused_nodes(spec.node_offsets).is_empty());
    for (n, new) in map.iter().enumerate() {
        if let Some(new) = new {
            assert_eq!(model.mass[2 * n], unstructured.mass[2 * *new as usize], "node {n}");
        }
    }

    // A few explicit steps: host and device agree, structured and unstructured agree, the
    // orphan nodes stay at rest and the energy stays bounded.
    let device = common::device();
    let steps = 40;
    let run = |model: &Model, schedule: ForceSchedule| -> Vec<f32> {
        let cfg = config(schedule, model);
        let u0 = initial(&model.mesh, &spec);
        let v0 = vec![0.0; u0.len()];
        let mut host = HostStepper::new(model, &cfg).unwrap();
        host.set_state(&u0, &v0).unwrap();
        let e0 = model.energy(&host.u, &host.v).unwrap();
        host.step(steps);
        let e1 = model.energy(&host.u, &host.v).unwrap();
        assert!(e0 > 0.0 && e1.is_finite() && e1 < 2.0 * e0, "energy {e0} -> {e1}");
        let mut dev = Stepper::new(&device, model, &cfg).unwrap();
        dev.set_state(&u0, &v0).unwrap();
        dev.step(steps).unwrap();
        let du = dev.displacement().unwrap();
        let scale = host.u.iter().fold(0f32, |m, v| m.max(v.abs()));
        for (i, (a, b)) in du.iter().zip(&host.u).enumerate() {
            assert!(
                (a - b).abs() <= 1e-5 * scale,
                "{schedule:?} DOF {i}: device {a}, host {b}"
            );
        }
        du
    };
    let s = run(&model, ForceSchedule::Coloured);
    let u = run(&unstructured, ForceSchedule::Unstructured);
    let u0 = initial(&model.mesh, &spec);
    let scale = s.iter().fold(0f32, |m, v| m.max(v.abs()));
    for (n, new) in map.iter().enumerate() {
        for d in 0..2 {
            match new {
                Some(new) => {
                    let (a, b) = (s[2 * n + d], u[2 * *new as usize + d]);
                    assert!(
                        (a - b).abs() <= 1e-5 * scale,
                        "node {n}: structured {a}, unstructured {b}"
                    );
                }
                None => assert_eq!(s[2 * n + d], u0[2 * n + d], "orphan node {n} moved"),
            }
        }
    }
    // Something did move.
    assert!(s.iter().zip(&u0).any(|(a, b)| (a - b).abs() > 1e-3 * scale));
}

#[test]
fn misuse_is_a_typed_error_that_says_what_is_wrong() {
    let nodes = quad8_nodes(QUAD);
    for rho in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let err = matrices::lumped_mass::<Quad8, _>(&nodes, &Slab { rho, ..SLAB }).unwrap_err();
        assert!(
            matches!(err, Error::LumpedMass { element: "quad8", .. }) && err.to_string().contains("density"),
            "ρ = {rho}: {err}"
        );
    }
    // Shape functions that do not sum to one are refused by the macro (tests/ui/simplex/not_a_partition_of_unity.rs).
    let vertices = [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]];
    let err = matrices::lumped_mass::<QuadP2, _>(&vertices, &SLAB).unwrap_err();
    assert!(
        matches!(err, Error::LumpedMass { element: "quad_p2", .. }) && err.to_string().contains("consistent"),
        "{err}"
    );
    let err = Model::new(
        Quad4::spec(),
        Mesh::Structured(StructuredMesh::for_element(&Quad4::spec(), [2, 2, 1], [1.0; 3]).unwrap()),
        vec![0.0; 64],
        -2.0,
    )
    .unwrap_err();
    assert!(matches!(err, Error::LumpedMass { element: "quad4", .. }), "{err}");

    // An orphan node set free again: validate names the node and says why.
    let spec = Quad8::spec();
    let grid = StructuredMesh::for_element(&spec, [3, 2, 1], [1.0; 3]).unwrap();
    let mut model = Model::of::<Quad8>(Mesh::Structured(grid.clone()), &SLAB).unwrap();
    model.fixed.iter_mut().for_each(|f| *f = false);
    let centre = grid.node_index([1, 1, 0]);
    match model.validate().unwrap_err() {
        Error::MasslessDof {
            dof,
            node,
            mass,
            reason,
        } => {
            assert_eq!((dof, node, mass), (2 * centre, centre, 0.0));
            assert!(
                reason.contains(&format!("node {centre} belongs to no element")),
                "{reason}"
            );
            assert!(reason.contains("order-2 grid"), "{reason}");
        }
        other => panic!("expected Error::MasslessDof, got {other}"),
    }
    // A node of an element whose mass was zeroed: a different reason.
    let mut model = Model::of::<Quad8>(Mesh::Structured(grid), &SLAB).unwrap();
    model.mass[0] = 0.0;
    let err = model.validate().unwrap_err();
    assert!(
        matches!(&err, Error::MasslessDof { node: 0, reason, .. } if reason.contains("belongs to elements")),
        "{err}"
    );
}
