//! One `K_e`, `G_e` per element (meshes whose elements differ): `Model::per_element` on
//! distorted and simplex meshes steps on the device (`ForceSchedule::Unstructured` reading `K_e` by
//! element index) as on the host, per step within 1e-5 relative in f32 and 1e-12 in f64;
//! per-element masses sum to ρ·V; inverted elements and misuse are typed errors.

use crate::common;
use crate::elements;
use crate::simplices;

use clforge::runtime::element::mesh::{ElementMap, Mesh, StructuredMesh, UnstructuredMesh};
use clforge::runtime::element::problem::Model;
use clforge::runtime::element::schedule::ForceSchedule;
use clforge::runtime::element::stepper::{stability_bound, HostStepper, Load, Stepper, StepperConfig, TimeFunction};
use clforge::runtime::element::{Element, Real};
use clforge::runtime::Error;
use common::{device, rng, slice_rel_error};
use elements::hex8::{Hex8, Solid as HexSolid};
use elements::quad4::{Plate, Quad4};
use rand::Rng;
use simplices::{Solid, Tet10, Tet4, Tri3, Tri6};

/// A unit square of `n × n` quad4 elements, interior nodes moved by up to `jitter` of a cell.
pub(crate) fn jittered_quads(n: usize, jitter: f64, seed: u64) -> UnstructuredMesh {
    let mut r = rng(seed);
    let side = n + 1;
    let coords = (0..side * side)
        .map(|id| {
            let (i, j) = (id % side, id / side);
            let inner = i > 0 && i < n && j > 0 && j < n;
            let mut move_by = || if inner { r.random_range(-jitter..=jitter) } else { 0.0 };
            [
                (i as f64 + move_by()) / n as f64,
                (j as f64 + move_by()) / n as f64,
                0.0,
            ]
        })
        .collect();
    let mut conn = Vec::new();
    for j in 0..n {
        for i in 0..n {
            let a = (i + side * j) as u32;
            conn.extend([a, a + 1, a + 1 + side as u32, a + side as u32]);
        }
    }
    UnstructuredMesh::new(coords, 4, conn).unwrap()
}

/// The unit square (cube) cut into `n^dim` cells of 2 triangles (6 tetrahedra), interior
/// vertices jittered, mid-edge nodes added for quadratic simplices (`simplices::patch_mesh`).
fn simplex_mesh<E: Element>(n: usize, jitter: f64, seed: u64) -> UnstructuredMesh {
    let (nodes, elements, _) = simplices::patch_mesh::<E>(n, jitter, &mut rng(seed));
    let conn = elements.iter().flatten().map(|&k| k as u32).collect();
    UnstructuredMesh::new(nodes, E::NODES, conn).unwrap()
}

fn solid(r: &mut impl Rng) -> Solid {
    Solid {
        e: r.random_range(0.5..2.0),
        nu: r.random_range(0.1..0.4),
        rho: r.random_range(0.5..3.0),
        h: r.random_range(0.5..2.0),
    }
}

/// The per-element schedule of the model's mesh: the coloured scatter on an unstructured mesh,
/// the fused node gather on a structured grid.
fn config(model: &Model) -> StepperConfig {
    config_with(
        model,
        match model.mesh {
            Mesh::Unstructured(_) => ForceSchedule::Unstructured,
            Mesh::Structured(_) => ForceSchedule::Gather,
        },
    )
}

fn config_with(model: &Model, schedule: ForceSchedule) -> StepperConfig {
    let alpha = 0.05;
    StepperConfig {
        schedule,
        dt: 0.9 * stability_bound(model, alpha).unwrap().dt_max,
        alpha,
        c_max: 0.0,
    }
}

/// The schedules that step per-element matrices on the model's mesh: on an unstructured mesh
/// the coloured scatter and the node gather, on a structured grid the gather.
fn schedules(model: &Model) -> Vec<ForceSchedule> {
    match model.mesh {
        Mesh::Unstructured(_) => vec![ForceSchedule::Unstructured, ForceSchedule::Gather],
        Mesh::Structured(_) => vec![ForceSchedule::Gather],
    }
}

/// Steps host and device `steps` times from a random state under a pulse load, comparing
/// displacements and velocities after every step and the stresses at the end, for every
/// schedule of the mesh: in f32 within 1e-5 relative, in f64 within 1e-12.
pub(crate) fn parity(model: &Model, steps: usize, seed: u64) {
    for schedule in schedules(model) {
        let cfg = config_with(model, schedule);
        parity_in::<f32>(model, &cfg, steps, seed, 1e-5);
        parity_in::<f64>(model, &cfg, steps, seed, 1e-12);
    }
}

fn parity_in<R: Real>(model: &Model, cfg: &StepperConfig, steps: usize, seed: u64, tol: f64) {
    let n = model.dof_count();
    let mut r = rng(seed);
    let u: Vec<R> = (0..n).map(|_| R::of(r.random_range(-1e-2..1e-2))).collect();
    let v: Vec<R> = (0..n).map(|_| R::of(r.random_range(-1e-2..1e-2))).collect();
    let load = Load::point(
        model.mesh.node_count() / 2,
        model.spec.dofs,
        1,
        0.5,
        TimeFunction::WindowedSine {
            frequency: 0.5 / (steps as f64 * cfg.dt),
            cycles: 1.0,
        },
    );
    let what = format!(
        "{} per element ({:?}) on {} elements in {}",
        model.spec.name,
        cfg.schedule,
        model.mesh.element_count(),
        R::NAME
    );
    let mut host = HostStepper::<R>::with_precision(model, cfg).unwrap();
    host.set_state(&u, &v).unwrap();
    host.add_load(load.clone()).unwrap();
    let mut dev = Stepper::<R>::with_precision(&device(), model, cfg).unwrap_or_else(|e| panic!("{what}: {e}"));
    dev.set_state(&u, &v).unwrap();
    dev.add_load(&load).unwrap();
    let mut moved = 0.0f64;
    for step in 0..steps {
        host.step(1);
        dev.step(1).unwrap();
        let (du, dv) = (dev.displacement().unwrap(), dev.velocity().unwrap());
        let (eu, ev) = (slice_rel_error(&du, &host.u), slice_rel_error(&dv, &host.v));
        assert!(
            eu <= tol && ev <= tol,
            "{what}, step {step}: relative error u {eu:e}, v {ev:e}"
        );
        moved = moved.max(slice_rel_error(&du, &u));
    }
    assert!(
        moved > 1e-3,
        "{what}: the state hardly changed ({moved:e}): the test would not see wrong forces"
    );
    let (ds, hs) = (dev.stress().unwrap(), host.stress().unwrap());
    assert!(hs.iter().any(|&s| s != R::default()), "{what}: no stress");
    let e = slice_rel_error(&ds, &hs);
    assert!(e <= tol, "{what}: stress relative error {e:e}");
}

fn plate(r: &mut impl Rng) -> Plate {
    Plate {
        e: r.random_range(0.5..2.0),
        nu: r.random_range(0.1..0.4),
        rho: r.random_range(0.5..3.0),
        thickness: r.random_range(0.5..2.0),
    }
}

#[test]
fn distorted_quad4_in_many_materials_matches_host_per_step() {
    let mut r = rng(1);
    let mesh = jittered_quads(6, 0.3, 2);
    let materials: Vec<Plate> = (0..mesh.element_count()).map(|_| plate(&mut r)).collect();
    let model = Model::per_element::<Quad4>(Mesh::Unstructured(mesh.clone()), &materials).unwrap();
    assert!(model.per_element && model.stiffness.len() == 36 && model.stress.len() == 36);
    // The matrices differ from element to element: the device must read each one.
    assert!(model.stiffness.windows(2).all(|w| w[0] != w[1]));
    parity(&model, 40, 3);
    // `Model::of` shares one K_e and says where to go instead.
    let err = Model::of::<Quad4>(Mesh::Unstructured(mesh), &materials[0]).unwrap_err();
    assert!(err.to_string().contains("Model::per_element"), "{err}");
}

#[test]
fn per_element_gather_on_a_structured_grid_of_many_materials_matches_host_per_step() {
    // A grid whose elements are alike in shape but each in its own material, some cracked: the
    // gather reads K_e by element index (element order).
    let mut r = rng(21);
    let grid = StructuredMesh::for_element(&Quad4::spec(), [7, 5, 1], [0.5, 0.8, 1.0]).unwrap();
    let materials: Vec<Plate> = (0..grid.element_count()).map(|_| plate(&mut r)).collect();
    let mut model = Model::per_element::<Quad4>(Mesh::Structured(grid.clone()), &materials).unwrap();
    model.elements.crack_box(&grid, [2, 1, 0], [4, 3, 1]);
    assert!(model.elements.dead.iter().any(|&d| d));
    parity(&model, 30, 22);
    // The same model on the unstructured twin steps alike (colours instead of the gather).
    let twin = Model {
        mesh: Mesh::Unstructured(UnstructuredMesh::from_structured(&grid, Quad4::spec().node_offsets).unwrap()),
        ..model.clone()
    };
    let run = |m: &Model| {
        let mut s = Stepper::new(&device(), m, &config(m)).unwrap();
        let n = m.dof_count();
        let u: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin() * 1e-2).collect();
        s.set_state(&u, &vec![0.0; n]).unwrap();
        s.step(20).unwrap();
        (s.displacement().unwrap(), s.stress().unwrap())
    };
    let ((ug, sg), (uu, su)) = (run(&model), run(&twin));
    assert!(slice_rel_error(&ug, &uu) < 1e-5 && slice_rel_error(&sg, &su) < 1e-5);
    // A 3-D grid: hex8 in many materials.
    let grid = StructuredMesh::for_element(&Hex8::spec(), [3, 4, 2], [1.0, 0.7, 1.2]).unwrap();
    let materials: Vec<HexSolid> = (0..grid.element_count())
        .map(|_| HexSolid {
            lambda: r.random_range(0.5..2.0),
            mu: r.random_range(0.3..1.0),
            rho: r.random_range(0.5..2.0),
        })
        .collect();
    parity(
        &Model::per_element::<Hex8>(Mesh::Structured(grid), &materials).unwrap(),
        20,
        23,
    );
}

#[test]
fn cracked_elements_carry_no_force_per_element() {
    let mut r = rng(4);
    let mesh = jittered_quads(5, 0.25, 5);
    let materials: Vec<Plate> = (0..mesh.element_count()).map(|_| plate(&mut r)).collect();
    let mut model = Model::per_element::<Quad4>(Mesh::Unstructured(mesh), &materials).unwrap();
    let mut elements = ElementMap::uniform(25).unwrap();
    for e in [3, 12, 13] {
        elements.dead[e] = true;
    }
    model.elements = elements;
    parity(&model, 30, 6);
}

#[test]
fn tri3_matches_host_per_step() {
    let mut r = rng(7);
    let mesh = simplex_mesh::<Tri3>(5, 0.3, 8);
    let materials: Vec<Solid> = (0..mesh.element_count()).map(|_| solid(&mut r)).collect();
    parity(
        &Model::per_element::<Tri3>(Mesh::Unstructured(mesh), &materials).unwrap(),
        40,
        9,
    );
}

#[test]
fn tri6_matches_host_per_step() {
    let mut r = rng(10);
    let mesh = simplex_mesh::<Tri6>(3, 0.2, 11);
    let materials: Vec<Solid> = (0..mesh.element_count()).map(|_| solid(&mut r)).collect();
    parity(
        &Model::per_element::<Tri6>(Mesh::Unstructured(mesh), &materials).unwrap(),
        30,
        12,
    );
}

#[test]
fn tet4_matches_host_per_step() {
    let mut r = rng(13);
    let mesh = simplex_mesh::<Tet4>(3, 0.2, 14);
    let materials: Vec<Solid> = (0..mesh.element_count()).map(|_| solid(&mut r)).collect();
    parity(
        &Model::per_element::<Tet4>(Mesh::Unstructured(mesh), &materials).unwrap(),
        30,
        15,
    );
}

#[test]
fn tet10_matches_host_per_step() {
    let mut r = rng(16);
    let mesh = simplex_mesh::<Tet10>(2, 0.15, 17);
    let materials: Vec<Solid> = (0..mesh.element_count()).map(|_| solid(&mut r)).collect();
    parity(
        &Model::per_element::<Tet10>(Mesh::Unstructured(mesh), &materials).unwrap(),
        24,
        18,
    );
}

/// On a congruent mesh in one material, per-element matrices step as the shared one.
#[test]
fn per_element_equals_shared_on_congruent_elements() {
    let mesh = jittered_quads(4, 0.0, 0);
    let m = plate(&mut rng(19));
    let shared = Model::of::<Quad4>(Mesh::Unstructured(mesh.clone()), &m).unwrap();
    let own = Model::per_element::<Quad4>(Mesh::Unstructured(mesh), &vec![m; 16]).unwrap();
    assert!(slice_rel_error(&own.mass, &shared.mass) < 1e-6);
    let cfg = config(&shared);
    let run = |model: &Model| {
        let mut s = Stepper::new(&device(), model, &cfg).unwrap();
        let n = model.dof_count();
        let u: Vec<f32> = (0..n).map(|i| ((i * 7919) % 13) as f32 * 1e-3).collect();
        s.set_state(&u, &vec![0.0; n]).unwrap();
        s.step(20).unwrap();
        s.displacement().unwrap()
    };
    let e = slice_rel_error(&run(&own), &run(&shared));
    assert!(e <= 1e-5, "per element vs shared: {e:e}");
}

#[test]
fn per_element_masses_sum_to_density_times_volume() {
    let mut r = rng(20);
    let check = |name: &str, model: &Model, want: f64| {
        let d = model.spec.dofs;
        for k in 0..d {
            let total: f64 = model.mass.iter().skip(k).step_by(d).sum();
            assert!(
                (total - want).abs() <= 1e-5 * want,
                "{name}: DOF {k} mass {total} vs ρV {want}"
            );
        }
        assert!(model.mass.iter().all(|&m| m > 0.0), "{name}: a mass is not positive");
    };
    // Different densities per element: Σ ρ_e V_e, V_e from the element's own corners.
    let mesh = jittered_quads(5, 0.3, 21);
    let materials: Vec<Plate> = (0..25).map(|_| plate(&mut r)).collect();
    let want: f64 = (0..25)
        .map(|e| {
            let c = Mesh::Unstructured(mesh.clone()).element_coords(Quad4::spec().node_offsets, e);
            let area = 0.5
                * (0..4)
                    .map(|a| c[a][0] * c[(a + 1) % 4][1] - c[(a + 1) % 4][0] * c[a][1])
                    .sum::<f64>();
            materials[e].rho * materials[e].thickness * area
        })
        .sum();
    check(
        "quad4",
        &Model::per_element::<Quad4>(Mesh::Unstructured(mesh), &materials).unwrap(),
        want,
    );
    // One material on the unit square and cube: ρ·h·1 and ρ·1.
    let s = solid(&mut r);
    for (name, model, want) in [
        (
            "tri3",
            Model::per_element::<Tri3>(Mesh::Unstructured(simplex_mesh::<Tri3>(4, 0.3, 22)), &vec![s; 32]),
            s.rho * s.h,
        ),
        (
            "tri6",
            Model::per_element::<Tri6>(Mesh::Unstructured(simplex_mesh::<Tri6>(3, 0.2, 23)), &vec![s; 18]),
            s.rho * s.h,
        ),
        (
            "tet4",
            Model::per_element::<Tet4>(Mesh::Unstructured(simplex_mesh::<Tet4>(2, 0.2, 24)), &vec![s; 48]),
            s.rho,
        ),
        (
            "tet10",
            Model::per_element::<Tet10>(Mesh::Unstructured(simplex_mesh::<Tet10>(2, 0.1, 25)), &vec![s; 48]),
            s.rho,
        ),
    ] {
        check(name, &model.unwrap(), want);
    }
}

#[test]
fn an_inverted_element_is_refused_by_name() {
    let mesh = simplex_mesh::<Tri3>(3, 0.2, 26);
    let (coords, mut conn) = (mesh.coords.clone(), mesh.connectivity.clone());
    conn.swap(3 * 7 + 1, 3 * 7 + 2);
    let bad = UnstructuredMesh::new(coords, 3, conn).unwrap();
    let s = solid(&mut rng(27));
    match Model::per_element::<Tri3>(Mesh::Unstructured(bad), &vec![s; 18]) {
        Err(Error::InvertedElement {
            index, element, det, ..
        }) => {
            assert_eq!((index, element), (7, "tri3"));
            assert!(det < 0.0, "{det}");
        }
        other => panic!("expected InvertedElement for element 7, got {other:?}"),
    }
}

#[test]
fn misuse_is_an_error_that_says_what_to_do() {
    let mesh = jittered_quads(3, 0.2, 28);
    let m = plate(&mut rng(29));
    // One material per element, not one in all.
    let err = Model::per_element::<Quad4>(Mesh::Unstructured(mesh.clone()), &[m]).unwrap_err();
    assert!(
        matches!(
            err,
            Error::LengthMismatch {
                expected: 9,
                found: 1,
                ..
            }
        ) && err.to_string().contains("vec![material; 9]"),
        "{err}"
    );
    let model = Model::per_element::<Quad4>(Mesh::Unstructured(mesh), &[m; 9]).unwrap();
    // Per-element matrices step only with the unstructured schedule.
    let mut cfg = config(&model);
    cfg.schedule = ForceSchedule::Coloured;
    let err = Stepper::new(&device(), &model, &cfg).unwrap_err();
    assert!(err.to_string().contains("ForceSchedule::Unstructured"), "{err}");
    // A matrix missing: the count must be the element count.
    let mut short = model.clone();
    short.stiffness.pop();
    let err = short.validate().unwrap_err();
    assert!(
        matches!(
            err,
            Error::LengthMismatch {
                expected: 9,
                found: 8,
                ..
            }
        ),
        "{err}"
    );
    let mut short = model.clone();
    short.stress.truncate(3);
    assert!(short.validate().is_err() && HostStepper::new(&short, &config(&model)).is_err());
}

/// Steps host and device `steps` times from `(u, v)` without loads and returns whether every
/// displacement and velocity has the same bits (NaN for NaN), with the first difference.
fn same_bits<R: Real>(model: &Model, cfg: &StepperConfig, u: &[R], v: &[R], steps: usize) -> Result<(), String> {
    let mut host = HostStepper::<R>::with_precision(model, cfg).unwrap();
    host.set_state(u, v).unwrap();
    let mut dev = Stepper::<R>::with_precision(&device(), model, cfg).unwrap();
    dev.set_state(u, v).unwrap();
    for step in 0..steps {
        host.step(1);
        dev.step(1).unwrap();
        for (what, d, h) in [
            ("u", dev.displacement().unwrap(), &host.u),
            ("v", dev.velocity().unwrap(), &host.v),
        ] {
            let differs = |(a, b): (&R, &R)| {
                a.widen().to_bits() != b.widen().to_bits() && !(a.widen().is_nan() && b.widen().is_nan())
            };
            if let Some(i) = d.iter().zip(h.iter()).position(differs) {
                return Err(format!("step {step}, {what}[{i}]: device {:?}, host {:?}", d[i], h[i]));
            }
        }
    }
    Ok(())
}

/// The node gather on an unstructured mesh sums each DOF's element forces in element order,
/// as the host does: without loads the device gives the host's bits, for random, non-finite
/// and extreme states, dead elements included, on tri3, tet4 and tet10 meshes.
#[test]
fn the_unstructured_gather_gives_the_host_bits() {
    let mut r = rng(30);
    let meshes = [
        simplex_mesh::<Tri3>(6, 0.3, 31),
        simplex_mesh::<Tet4>(3, 0.2, 32),
        simplex_mesh::<Tet10>(2, 0.15, 33),
    ];
    for (k, mesh) in meshes.into_iter().enumerate() {
        let materials: Vec<Solid> = (0..mesh.element_count()).map(|_| solid(&mut r)).collect();
        let mut model = match k {
            0 => Model::per_element::<Tri3>(Mesh::Unstructured(mesh), &materials),
            1 => Model::per_element::<Tet4>(Mesh::Unstructured(mesh), &materials),
            _ => Model::per_element::<Tet10>(Mesh::Unstructured(mesh), &materials),
        }
        .unwrap();
        let cfg = config_with(&model, ForceSchedule::Gather);
        let n = model.dof_count();
        fn state<R: Real>(r: &mut impl Rng, n: usize, specials: bool) -> Vec<R> {
            let mut x: Vec<R> = (0..n).map(|_| R::of(r.random_range(-1e-2..1e-2))).collect();
            if specials {
                let big = if R::NAME == "f32" { f32::MAX as f64 } else { f64::MAX };
                for (i, s) in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, big, -big, 1e-300]
                    .into_iter()
                    .enumerate()
                {
                    let j = (i * 7 + 3) % n;
                    x[j] = R::of(s);
                }
            }
            x
        }
        for specials in [false, true] {
            let (u, v) = (state::<f32>(&mut r, n, specials), state::<f32>(&mut r, n, false));
            same_bits(&model, &cfg, &u, &v, 12).unwrap_or_else(|e| panic!("{} f32: {e}", model.spec.name));
            let (u, v) = (state::<f64>(&mut r, n, specials), state::<f64>(&mut r, n, specials));
            same_bits(&model, &cfg, &u, &v, 12).unwrap_or_else(|e| panic!("{} f64: {e}", model.spec.name));
        }
        // Dead elements carry no force, even where their nodes hold NaN.
        let ne = model.mesh.element_count();
        for e in [1, ne / 2, ne - 1] {
            model.elements.dead[e] = true;
        }
        let (u, v) = (state::<f64>(&mut r, n, true), state::<f64>(&mut r, n, false));
        same_bits(&model, &cfg, &u, &v, 12).unwrap_or_else(|e| panic!("{} dead elements: {e}", model.spec.name));
    }
}

/// A node shared by 70 triangles: greedy colouring needs more than its 64 colours, the gather
/// needs none and steps as the host; shared matrices of several materials are expanded per
/// element by the gather.
#[test]
fn the_unstructured_gather_steps_meshes_the_colouring_cannot() {
    let ring = 70;
    let mut coords = vec![[0.0, 0.0, 0.0]];
    coords.extend((0..ring).map(|k| {
        let a = std::f64::consts::TAU * k as f64 / ring as f64;
        [a.cos(), a.sin(), 0.0]
    }));
    let conn: Vec<u32> = (0..ring as u32)
        .flat_map(|k| [0, 1 + k, 1 + (k + 1) % ring as u32])
        .collect();
    let mesh = UnstructuredMesh::new(coords, 3, conn).unwrap();
    let mut r = rng(34);
    let materials: Vec<Solid> = (0..ring).map(|_| solid(&mut r)).collect();
    let model = Model::per_element::<Tri3>(Mesh::Unstructured(mesh.clone()), &materials).unwrap();
    let err = Stepper::new(&device(), &model, &config_with(&model, ForceSchedule::Unstructured)).unwrap_err();
    assert!(err.to_string().contains("64 colours"), "{err}");
    let cfg = config_with(&model, ForceSchedule::Gather);
    parity_in::<f32>(&model, &cfg, 20, 35, 1e-5);
    parity_in::<f64>(&model, &cfg, 20, 35, 1e-12);
    // One matrix per material (congruent quads), two materials in alternate elements.
    let grid = jittered_quads(5, 0.0, 0);
    let mut shared = Model::of::<Quad4>(Mesh::Unstructured(grid.clone()), &plate(&mut r)).unwrap();
    let other = Model::of::<Quad4>(Mesh::Unstructured(grid), &plate(&mut r)).unwrap();
    shared.stiffness.push(other.stiffness[0].clone());
    shared.stress.push(other.stress[0].clone());
    for e in (1..shared.mesh.element_count()).step_by(2) {
        shared.elements.material[e] = 1;
    }
    let cfg = config_with(&shared, ForceSchedule::Gather);
    let n = shared.dof_count();
    let u: Vec<f64> = (0..n).map(|_| r.random_range(-1e-2..1e-2)).collect();
    same_bits(&shared, &cfg, &u, &vec![0.0; n], 10).unwrap();
    parity_in::<f32>(&shared, &cfg, 20, 36, 1e-5);
}

/// A structured grid steps with the unstructured scatter too (coloured as a mesh; before, no
/// colour was planned and the elements silently gave no force): as the host, per step.
#[test]
fn a_structured_grid_steps_with_the_unstructured_scatter() {
    let grid = StructuredMesh::for_element(&Quad4::spec(), [6, 5, 1], [0.6, 0.5, 1.0]).unwrap();
    let model = Model::of::<Quad4>(Mesh::Structured(grid), &plate(&mut rng(37))).unwrap();
    let cfg = config_with(&model, ForceSchedule::Unstructured);
    parity_in::<f32>(&model, &cfg, 20, 38, 1e-5);
    parity_in::<f64>(&model, &cfg, 20, 38, 1e-12);
}

/// The explicit step split over several devices in one host: with the node gather, each DOF
/// sums its elements in element order on every part, so without loads the split run gives the
/// single device's bits (f32 and f64, dead elements and non-finite values included); with a
/// load too (the owner applies it). On PoCL the devices are the one CPU device several times.
#[test]
fn a_split_fem_step_gives_the_single_device_bits() {
    use clforge::runtime::element::split::SplitStepper;
    use clforge::runtime::Devices;
    let mut r = rng(40);
    let mesh = simplex_mesh::<Tet4>(3, 0.2, 41);
    let materials: Vec<Solid> = (0..mesh.element_count()).map(|_| solid(&mut r)).collect();
    let mut model = Model::per_element::<Tet4>(Mesh::Unstructured(mesh), &materials).unwrap();
    for e in [2, 17, 40] {
        model.elements.dead[e] = true;
    }
    let cfg = config_with(&model, ForceSchedule::Gather);
    let n = model.dof_count();
    let d = device();
    fn run<R: Real>(
        model: &Model,
        cfg: &StepperConfig,
        parts: &[f64],
        depth: usize,
        u: &[R],
        v: &[R],
        load: Option<&Load>,
    ) -> Result<(), String> {
        let d = device();
        let devices = Devices::new(vec![d.clone(); parts.len()])
            .unwrap()
            .with_weights(parts)
            .unwrap()
            .depth(depth)
            .unwrap();
        // Both steppers from the same state and load.
        let pair = |devices: &Devices| -> Result<(Stepper<R>, SplitStepper<R>), String> {
            let mut one = Stepper::<R>::with_precision(&d, model, cfg).unwrap();
            let mut split = SplitStepper::<R>::with_precision(devices, model, cfg).map_err(|e| e.to_string())?;
            one.set_state(u, v).unwrap();
            split.set_state(u, v).unwrap();
            if let Some(l) = load {
                one.add_load(l).unwrap();
                split.add_load(l).unwrap();
            }
            Ok((one, split))
        };
        // The split's u and v bit for bit those of one device (a NaN's payload aside).
        let same = |one: &Stepper<R>, split: &SplitStepper<R>, when: &str| -> Result<(), String> {
            for (what, a, b) in [
                ("u", split.displacement().unwrap(), one.displacement().unwrap()),
                ("v", split.velocity().unwrap(), one.velocity().unwrap()),
            ] {
                let differs = |(x, y): (&R, &R)| {
                    x.widen().to_bits() != y.widen().to_bits() && !(x.widen().is_nan() && y.widen().is_nan())
                };
                if let Some(i) = a.iter().zip(&b).position(differs) {
                    return Err(format!(
                        "{} parts, depth {depth}, {when}, {what}[{i}]: split {:?}, one {:?}",
                        parts.len(),
                        a[i],
                        b[i]
                    ));
                }
            }
            Ok(())
        };
        let (mut one, mut split) = pair(&devices)?;
        for step in 0..15 {
            one.step(1).unwrap();
            split.step(1).unwrap();
            same(&one, &split, &format!("step {step}"))?;
        }
        // The same 15 steps in one call: the exchanges between them overlap the next step's
        // interior (and, asked not to, happen first); the bits of one device either way.
        for overlap in [true, false] {
            let (mut one, mut split) = pair(&devices.clone().overlap(overlap))?;
            assert_eq!(split.overlaps(), overlap && parts.len() > 1);
            one.step(15).unwrap();
            split.step(15).unwrap();
            same(&one, &split, &format!("15 steps in one call (overlap {overlap})"))?;
        }
        Ok(())
    }
    let u: Vec<f32> = (0..n).map(|_| r.random_range(-1e-2..1e-2)).collect();
    let v: Vec<f32> = (0..n).map(|_| r.random_range(-1e-2..1e-2)).collect();
    let mut u_nan = u.clone();
    u_nan[5] = f32::NAN;
    u_nan[11] = f32::INFINITY;
    let load = Load::point(
        model.mesh.node_count() / 2,
        model.spec.dofs,
        1,
        0.5,
        TimeFunction::WindowedSine {
            frequency: 0.5 / (15.0 * cfg.dt),
            cycles: 1.0,
        },
    );
    for (parts, depth) in [(vec![1.0, 1.0], 1), (vec![1.0, 3.0, 2.0], 3), (vec![1.0; 4], 8)] {
        run::<f32>(&model, &cfg, &parts, depth, &u, &v, None).unwrap();
        run::<f32>(&model, &cfg, &parts, depth, &u_nan, &v, None).unwrap();
        run::<f32>(&model, &cfg, &parts, depth, &u, &v, Some(&load)).unwrap();
        let (u64s, v64s): (Vec<f64>, Vec<f64>) = (
            u.iter().map(|&x| x as f64).collect(),
            v.iter().map(|&x| x as f64).collect(),
        );
        run::<f64>(&model, &cfg, &parts, depth, &u64s, &v64s, Some(&load)).unwrap();
    }
    // More devices than elements is refused with the count.
    let tiny = Model::per_element::<Tet4>(
        Mesh::Unstructured(simplex_mesh::<Tet4>(1, 0.0, 42)),
        &[solid(&mut r); 6],
    )
    .unwrap();
    let err = SplitStepper::<f32>::with_precision(&Devices::new(vec![d; 7]).unwrap(), &tiny, &cfg).unwrap_err();
    assert!(err.to_string().contains("use at most 6"), "{err}");
}

/// A structured grid in one material, stepped by the structured gather on one device and
/// split into unstructured parts: the same to 1e-6 relative in f32 (the summation order differs);
/// and with the coloured scatter on the parts.
#[test]
fn a_split_structured_grid_steps_as_one_device() {
    use clforge::runtime::element::split::SplitStepper;
    use clforge::runtime::Devices;
    let grid = StructuredMesh::for_element(&Quad4::spec(), [12, 9, 1], [1.2, 0.9, 1.0]).unwrap();
    let model = Model::of::<Quad4>(Mesh::Structured(grid), &plate(&mut rng(43))).unwrap();
    let n = model.dof_count();
    let u: Vec<f32> = (0..n).map(|i| ((i * 7919) % 13) as f32 * 1e-3).collect();
    let d = device();
    let cfg = config_with(&model, ForceSchedule::Gather);
    // The one device sums element by element as the parts do (the assembled node stencil sums
    // K_e first: another order, compared below to its own tolerance).
    let mut one = Stepper::new(&d, &model, &cfg).unwrap();
    let mut assembled = Stepper::new(&d, &model, &cfg).unwrap();
    assert!(assembled.assembled());
    one.set_assembled(false).unwrap();
    for s in [&mut one, &mut assembled] {
        s.set_state(&u, &vec![0.0; n]).unwrap();
        s.step(25).unwrap();
    }
    let want = one.displacement().unwrap();
    assert!(slice_rel_error(&want, &u) > 1e-3, "the state hardly moved");
    let e = slice_rel_error(&assembled.displacement().unwrap(), &want);
    assert!(e <= 1e-5, "assembled stencil vs element rows {e:e}");
    for schedule in [ForceSchedule::Gather, ForceSchedule::Unstructured] {
        let devices = Devices::new(vec![d.clone(); 3])
            .unwrap()
            .with_weights(&[2.0, 1.0, 1.0])
            .unwrap();
        let mut split = SplitStepper::<f32>::with_precision(&devices, &model, &config_with(&model, schedule)).unwrap();
        split.set_state(&u, &vec![0.0; n]).unwrap();
        split.step(25).unwrap();
        let e = slice_rel_error(&split.displacement().unwrap(), &want);
        assert!(e <= 1e-6, "{schedule:?}: split vs one device {e:e}");
    }
}
