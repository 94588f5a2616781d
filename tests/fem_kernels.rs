//! Element kernels of seed 000's explicit dynamics on PoCL: every schedule equals the host
//! reference stepper for N steps from random fields, schedules agree with each other, and the
//! physics holds (energy conservation, P-wave speed, cracked elements carry no force).

mod common;
mod elements;

use clforge::runtime::element::mesh::{Mesh, StructuredMesh, UnstructuredMesh};
use clforge::runtime::element::schedule::{Blocking, ForceSchedule};
use clforge::runtime::element::stepper::{
    HostStepper, Load, Model, Stepper, StepperConfig, StepsBox, TimeFunction, MAX_GATHER_STEPS,
};
use clforge::runtime::element::Real;
use clforge::runtime::element::{Element, ElementSpec};
use common::{device, rng, slice_rel_error};
use rand::seq::SliceRandom;
use rand::Rng;

// The element kernels under test come from the DSL fixtures, through the one front door.
fn quad4() -> ElementSpec {
    elements::quad4::Quad4::spec()
}

fn hex8() -> ElementSpec {
    elements::hex8::Hex8::spec()
}

fn quad9() -> ElementSpec {
    elements::quad9::Quad9::spec()
}

/// Plane-stress `K_e` (8×8) and centre-point `G_e` (3×8) of an `a × b` bilinear rectangle of unit
/// thickness, nodes counter-clockwise from the lower left; 2×2 Gauss is exact here.
fn quad4_plane_stress(a: f64, b: f64, young: f64, nu: f64) -> (Vec<f64>, Vec<f64>) {
    let c = young / (1.0 - nu * nu);
    let d = [[c, c * nu, 0.0], [c * nu, c, 0.0], [0.0, 0.0, c * (1.0 - nu) / 2.0]];
    let corners = [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)];
    let bmat = |r: f64, s: f64| {
        let mut bm = [[0.0; 8]; 3];
        for (i, &(ri, si)) in corners.iter().enumerate() {
            let dx = ri * (1.0 + si * s) / 4.0 * 2.0 / a;
            let dy = si * (1.0 + ri * r) / 4.0 * 2.0 / b;
            bm[0][2 * i] = dx;
            bm[1][2 * i + 1] = dy;
            bm[2][2 * i] = dy;
            bm[2][2 * i + 1] = dx;
        }
        bm
    };
    let g = 1.0 / 3f64.sqrt();
    let mut k = vec![0.0f64; 64];
    for (r, s) in [(-g, -g), (g, -g), (g, g), (-g, g)] {
        let bm = bmat(r, s);
        let w = a * b / 4.0;
        for i in 0..8 {
            for j in 0..8 {
                let mut sum = 0.0;
                for p in 0..3 {
                    for q in 0..3 {
                        sum += bm[p][i] * d[p][q] * bm[q][j];
                    }
                }
                k[i * 8 + j] += w * sum;
            }
        }
    }
    let b0 = bmat(0.0, 0.0);
    let gm: Vec<f64> = (0..3)
        .flat_map(|p| (0..8).map(move |j| (0..3).map(|q| d[p][q] * b0[q][j]).sum::<f64>()))
        .collect();
    (k, gm)
}

/// A random symmetric matrix (element stiffnesses are symmetric; the stability bound needs it).
fn random_matrix(n: usize, seed: u64) -> Vec<f64> {
    let mut r = rng(seed);
    let a: Vec<f64> = (0..n * n).map(|_| r.random_range(-1.0..1.0)).collect();
    (0..n * n).map(|ij| 0.5 * (a[ij] + a[(ij % n) * n + ij / n])).collect()
}

fn config(schedule: ForceSchedule) -> StepperConfig {
    StepperConfig {
        schedule,
        dt: 0.05,
        alpha: 0.05,
        c_max: 1.0,
    }
}

/// Runs `steps` steps of every schedule from the same random state with a pulse load and
/// damping, against the host reference, in `f32` (relative error ≤ 1e-5) and in `f64`
/// (≤ 1e-12); returns the `f32` device displacements per schedule.
fn parity(model: &Model, schedules: &[ForceSchedule], steps: usize, seed: u64) -> Vec<Vec<f32>> {
    parity_in::<f64>(model, schedules, steps, seed, 1e-12);
    parity_in::<f32>(model, schedules, steps, seed, 1e-5)
}

/// [`parity`] in precision `R` with relative tolerance `tol`.
fn parity_in<R: Real>(model: &Model, schedules: &[ForceSchedule], steps: usize, seed: u64, tol: f64) -> Vec<Vec<R>> {
    let n = model.dof_count();
    let mut r = rng(seed);
    let u: Vec<R> = (0..n).map(|_| R::of(r.random_range(-1.0..1.0))).collect();
    let v: Vec<R> = (0..n).map(|_| R::of(r.random_range(-1.0..1.0))).collect();
    let load = Load::point(
        n / model.spec.dofs / 2,
        model.spec.dofs,
        0,
        3.0,
        TimeFunction::WindowedSine {
            frequency: 2.0,
            cycles: 1.5,
        },
    );
    let mut host = HostStepper::<R>::with_precision(model, &config(schedules[0])).unwrap();
    host.set_state(&u, &v).unwrap();
    host.add_load(load.clone()).unwrap();
    host.step(steps);
    let host_stress = (!model.stress.is_empty()).then(|| host.stress().unwrap());
    let mut out = vec![];
    for &s in schedules {
        let what = format!(
            "{} {:?} on {} elements in {}",
            model.spec.name,
            s,
            model.mesh.element_count(),
            R::NAME
        );
        let mut dev =
            Stepper::<R>::with_precision(&device(), model, &config(s)).unwrap_or_else(|e| panic!("{what}: {e}"));
        dev.set_state(&u, &v).unwrap();
        dev.add_load(&load).unwrap();
        dev.step(steps).unwrap_or_else(|e| panic!("{what}: {e}"));
        let (du, dv) = (dev.displacement().unwrap(), dev.velocity().unwrap());
        let (eu, ev) = (slice_rel_error(&du, &host.u), slice_rel_error(&dv, &host.v));
        assert!(eu <= tol && ev <= tol, "{what}: relative error u {eu:e}, v {ev:e}");
        if let Some(hs) = &host_stress {
            let e = slice_rel_error(&dev.stress().unwrap(), hs);
            assert!(e <= tol, "{what}: stress relative error {e:e}");
        }
        out.push(du);
    }
    out
}

/// Fixes the DOFs of the nodes at x = 0 of a structured model, and one more DOF inside.
fn fix_left_edge(model: &mut Model) {
    let d = model.spec.dofs;
    let Mesh::Structured(m) = &model.mesh else {
        unreachable!("a structured model")
    };
    let nx = m.nodes()[0];
    for c in (0..model.mesh.node_count()).filter(|c| c % nx == 0) {
        for k in 0..d {
            model.fixed[c * d + k] = true;
        }
    }
    model.fixed[(nx + 2) * d] = true;
}

fn structured(spec: ElementSpec, elements: [usize; 3]) -> Mesh {
    Mesh::Structured(StructuredMesh::for_element(&spec, elements, [1.0; 3]).unwrap())
}

/// Non-finite and extreme values step as on the host in every schedule and both precisions:
/// a NaN, ±inf and the largest finite value in the state give NaN and ±inf at the same DOFs,
/// and the finite DOFs agree.
#[test]
fn non_finite_and_extreme_states_step_as_on_the_host() {
    fn check<R: Real>(model: &Model, tol: f64) {
        let n = model.dof_count();
        let mut r = rng(31);
        let mut u: Vec<R> = (0..n).map(|_| R::of(r.random_range(-1.0..1.0))).collect();
        let v = vec![R::default(); n];
        let big = if size_of::<R>() == 4 {
            f64::from(f32::MAX)
        } else {
            f64::MAX
        };
        for (i, x) in [(10, f64::NAN), (40, f64::INFINITY), (70, f64::NEG_INFINITY), (100, big)] {
            u[i] = R::of(x);
        }
        let mut host = HostStepper::<R>::with_precision(model, &config(ForceSchedule::Coloured)).unwrap();
        host.set_state(&u, &v).unwrap();
        host.step(2);
        for s in ForceSchedule::structured(Blocking::default()) {
            let mut dev = Stepper::<R>::with_precision(&device(), model, &config(s)).unwrap();
            dev.set_state(&u, &v).unwrap();
            dev.step(2).unwrap();
            for (what, d, h) in [
                ("u", dev.displacement().unwrap(), &host.u),
                ("v", dev.velocity().unwrap(), &host.v),
            ] {
                let class = |x: f64| (x.is_nan(), x.is_infinite() && x > 0.0, x.is_infinite() && x < 0.0);
                let mut finite = (Vec::new(), Vec::new());
                for (i, (a, b)) in d.iter().zip(h).enumerate() {
                    let (a, b) = (a.widen(), b.widen());
                    assert_eq!(
                        class(a),
                        class(b),
                        "{s:?} {}: {what}[{i}] = {a} on the device, {b} on the host",
                        R::NAME
                    );
                    if a.is_finite() {
                        finite.0.push(a);
                        finite.1.push(b);
                    }
                }
                assert!(
                    finite.0.len() < n && !finite.0.is_empty(),
                    "{s:?}: the test needs both kinds"
                );
                let e = slice_rel_error(&finite.0, &finite.1);
                assert!(e <= tol, "{s:?} {}: finite {what} relative error {e:e}", R::NAME);
            }
        }
    }
    let (k, _) = quad4_plane_stress(1.0, 1.0, 1.0, 0.3);
    let model = Model::new(quad4(), structured(quad4(), [12, 9, 1]), k, 1.0).unwrap();
    check::<f32>(&model, 1e-5);
    check::<f64>(&model, 1e-12);
}

#[test]
fn quad4_schedules_match_host() {
    let (k, g) = quad4_plane_stress(1.0, 1.0, 1.0, 0.3);
    let small = Blocking {
        l_x: 4,
        l_y: 2,
        wi_size: 3,
    };
    for (elements, blocking) in [
        ([13, 11, 1], small),
        ([1, 1, 1], small),
        ([20, 9, 1], Blocking::default()),
    ] {
        let mut model = Model::new(quad4(), structured(quad4(), elements), k.clone(), 1.0).unwrap();
        model.stress = vec![g.clone()];
        let results = parity(&model, &ForceSchedule::structured(blocking), 20, 7);
        for r in &results[1..] {
            assert!(
                slice_rel_error(r, &results[0]) <= 1e-5,
                "schedules disagree on {elements:?}"
            );
        }
    }
}

#[test]
fn quad4_unstructured_matches_structured() {
    let (k, g) = quad4_plane_stress(1.0, 1.0, 1.0, 0.3);
    let sm = StructuredMesh::for_element(&quad4(), [9, 7, 1], [1.0; 3]).unwrap();
    // Same nodes, elements in random order: greedy colouring sees an unordered mesh.
    let mut order: Vec<usize> = (0..sm.element_count()).collect();
    order.shuffle(&mut rng(3));
    let conn: Vec<u32> = order
        .iter()
        .flat_map(|&e| sm.element_nodes(quad4().node_offsets, e))
        .map(|n| n as u32)
        .collect();
    let coords = (0..sm.node_count()).map(|n| sm.node_position(n)).collect();
    let um = UnstructuredMesh::new(coords, 4, conn).unwrap();
    let (colour, colours) = um.greedy_colours().unwrap();
    assert!((4..=8).contains(&colours), "{colours} colours");
    // A colouring: no two elements of one colour share a node, every colour is used.
    for c in 0..colours as u32 {
        let mut seen = std::collections::HashSet::new();
        let members = (0..um.element_count()).filter(|&e| colour[e] == c);
        let nodes: Vec<u32> = members.flat_map(|e| um.element_nodes(e).to_vec()).collect();
        assert!(!nodes.is_empty(), "colour {c} unused");
        assert!(nodes.iter().all(|n| seen.insert(*n)), "colour {c} shares a node");
    }
    let mut model = Model::new(quad4(), Mesh::Unstructured(um), k.clone(), 1.0).unwrap();
    model.stress = vec![g];
    let unstructured = parity(&model, &[ForceSchedule::Unstructured], 20, 11);
    let model = Model::new(quad4(), Mesh::Structured(sm), k, 1.0).unwrap();
    let structured = parity(&model, &[ForceSchedule::Coloured, ForceSchedule::Computed], 20, 11);
    assert!(slice_rel_error(&unstructured[0], &structured[0]) <= 1e-5);
}

#[test]
fn hex8_schedules_match_host() {
    let k = random_matrix(24, 5);
    let model = Model::new(hex8(), structured(hex8(), [5, 4, 3]), k, 1.0).unwrap();
    let mut g_model = model.clone();
    g_model.stress = vec![random_matrix(24, 6)[..6 * 24].to_vec()];
    let results = parity(
        &g_model,
        &ForceSchedule::structured(Blocking {
            l_x: 3,
            l_y: 2,
            wi_size: 2,
        }),
        10,
        9,
    );
    for r in &results[1..] {
        assert!(slice_rel_error(r, &results[0]) <= 1e-5);
    }
}

#[test]
fn quad9_schedules_match_host() {
    let k = random_matrix(18, 8);
    let model = Model::new(quad9(), structured(quad9(), [5, 7, 1]), k, 1.0).unwrap();
    parity(
        &model,
        &ForceSchedule::structured(Blocking {
            l_x: 2,
            l_y: 2,
            wi_size: 2,
        }),
        10,
        10,
    );
}

#[test]
fn block_materials_and_cracks_match_host() {
    let (k, _) = quad4_plane_stress(1.0, 1.0, 1.0, 0.3);
    let b = Blocking {
        l_x: 4,
        l_y: 2,
        wi_size: 3,
    };
    let sm = StructuredMesh::for_element(&quad4(), [13, 11, 1], [1.0; 3]).unwrap();
    let mut model = Model::new(quad4(), Mesh::Structured(sm.clone()), k.clone(), 1.0).unwrap();
    model.stiffness.push(k.iter().map(|v| 2.0 * v).collect());
    for e in 0..sm.element_count() {
        let [ex, ey, _] = sm.element_coords(e);
        model.elements.material[e] = u8::from(ex / 4 == 1 && ey / 6 == 0);
    }
    model.elements.crack_box(&sm, [2, 3, 0], [9, 5, 1]);
    parity(&model, &[ForceSchedule::BlockedMaterial(b)], 20, 12);
    let err = Stepper::new(&device(), &model, &config(ForceSchedule::Computed)).unwrap_err();
    assert!(err.to_string().contains("BlockedMaterial"), "{err}");
}

#[test]
fn cracked_elements_carry_no_force() {
    let (k, g) = quad4_plane_stress(1.0, 1.0, 1.0, 0.3);
    let sm = StructuredMesh::for_element(&quad4(), [12, 12, 1], [1.0; 3]).unwrap();
    let mut model = Model::new(quad4(), Mesh::Structured(sm.clone()), k, 1.0).unwrap();
    model.stress = vec![g];
    // Displace only nodes strictly inside a cracked 4×4 region: every element touching them is dead.
    let mut u = vec![0.0f32; model.dof_count()];
    for iy in 5..8 {
        for ix in 5..8 {
            u[sm.node_index([ix, iy, 0]) * 2] = 0.1;
            u[sm.node_index([ix, iy, 0]) * 2 + 1] = -0.2;
        }
    }
    let zeros = vec![0.0f32; u.len()];
    let run = |model: &Model| {
        let cfg = StepperConfig {
            alpha: 0.0,
            ..config(ForceSchedule::BlockedMaterial(Blocking {
                l_x: 4,
                l_y: 2,
                wi_size: 2,
            }))
        };
        let mut dev = Stepper::new(&device(), model, &cfg).unwrap();
        dev.set_state(&u, &zeros).unwrap();
        dev.step(1).unwrap();
        (dev.velocity().unwrap(), dev.stress().unwrap())
    };
    let (v_intact, _) = run(&model);
    assert!(v_intact.iter().any(|&v| v != 0.0), "an intact plate must react");
    model.elements.crack_box(&sm, [4, 4, 0], [8, 8, 1]);
    let (v, stress) = run(&model);
    assert!(v.iter().all(|&v| v == 0.0), "dead elements passed forces on");
    for e in 0..sm.element_count() {
        if model.elements.dead[e] {
            assert!(stress[e * 3..e * 3 + 3].iter().all(|&s| s == 0.0));
        }
    }
}

#[test]
fn energy_is_conserved_without_damping() {
    let (k, _) = quad4_plane_stress(1.0, 1.0, 1.0, 0.3);
    let sm = StructuredMesh::for_element(&quad4(), [16, 16, 1], [1.0; 3]).unwrap();
    let model = Model::new(quad4(), Mesh::Structured(sm.clone()), k, 1.0).unwrap();
    let mut u = vec![0.0f32; model.dof_count()];
    for n in 0..sm.node_count() {
        let [x, y, _] = sm.node_position(n);
        let s = (std::f64::consts::PI * x / 16.0).sin() * (std::f64::consts::PI * y / 16.0).cos();
        u[2 * n] = (0.01 * s) as f32;
        u[2 * n + 1] = (0.005 * s) as f32;
    }
    let zeros = vec![0.0f32; u.len()];
    let cfg = StepperConfig {
        schedule: ForceSchedule::Gather,
        dt: 0.2,
        alpha: 0.0,
        c_max: 1.0,
    };
    let mut dev = Stepper::new(&device(), &model, &cfg).unwrap();
    dev.set_state(&u, &zeros).unwrap();
    // Energy at whole steps: v averaged over the two half steps around u.
    let energy = |dev: &mut Stepper| {
        let (u, v0) = (dev.displacement().unwrap(), dev.velocity().unwrap());
        dev.step(1).unwrap();
        let v1 = dev.velocity().unwrap();
        let v: Vec<f32> = v0.iter().zip(&v1).map(|(a, b)| 0.5 * (a + b)).collect();
        model.energy(&u, &v).unwrap()
    };
    let e0 = energy(&mut dev);
    dev.step(998).unwrap();
    let e1 = energy(&mut dev);
    eprintln!("energy {e0} -> {e1}");
    assert!(
        e0 > 0.0 && ((e1 - e0) / e0).abs() < 0.01,
        "energy {e0} -> {e1} over 1000 steps"
    );
}

#[test]
fn pulse_travels_at_plane_stress_p_wave_speed() {
    let (young, nu, rho) = (1.0, 0.3, 1.0);
    let (k, _) = quad4_plane_stress(1.0, 1.0, young, nu);
    let sm = StructuredMesh::for_element(&quad4(), [300, 1, 1], [1.0; 3]).unwrap();
    let mut model = Model::new(quad4(), Mesh::Structured(sm.clone()), k, rho).unwrap();
    // No lateral motion: uniaxial strain, whose speed is sqrt(E / (ρ (1 - ν²))) in plane stress.
    for n in 0..sm.node_count() {
        model.fixed[2 * n + 1] = true;
    }
    let dt = 0.25;
    let cfg = StepperConfig {
        schedule: ForceSchedule::Gather,
        dt,
        alpha: 0.0,
        c_max: (young / rho).sqrt(),
    };
    let mut dev = Stepper::new(&device(), &model, &cfg).unwrap();
    let edge = [sm.node_index([0, 0, 0]), sm.node_index([0, 1, 0])];
    dev.add_load(&Load::edge(
        &edge,
        2,
        0,
        1e-3,
        TimeFunction::WindowedSine {
            frequency: 0.02,
            cycles: 0.5,
        },
    ))
    .unwrap();
    let probes = [50, 250].map(|ix| 2 * sm.node_index([ix, 0, 0]));
    let mut series = [vec![], vec![]];
    for _ in 0..1100 {
        dev.step(1).unwrap();
        let v = dev.velocity().unwrap();
        for (s, &p) in series.iter_mut().zip(&probes) {
            s.push(f64::from(v[p]));
        }
    }
    // Peak time with parabolic interpolation.
    let peak = |s: &[f64]| {
        let i = (1..s.len() - 1).max_by(|&a, &b| s[a].total_cmp(&s[b])).unwrap_or(1);
        let (a, b, c) = (s[i - 1], s[i], s[i + 1]);
        (i as f64 + 0.5 * (a - c) / (a - 2.0 * b + c)) * dt
    };
    let speed = 200.0 / (peak(&series[1]) - peak(&series[0]));
    let expected = (young / (rho * (1.0 - nu * nu))).sqrt();
    eprintln!("pulse speed {speed}, expected {expected}");
    assert!(
        ((speed - expected) / expected).abs() < 0.03,
        "pulse speed {speed}, expected {expected}"
    );
}

#[test]
fn unstable_time_step_is_a_typed_error() {
    let (k, _) = quad4_plane_stress(1.0, 1.0, 1.0, 0.3);
    let model = Model::new(quad4(), structured(quad4(), [4, 4, 1]), k, 1.0).unwrap();
    // The bound comes from K_e and the lumped masses (tests/runtime_checks.rs checks it).
    let bound = clforge::runtime::element::stability::stability_bound(&model, 0.0).unwrap();
    let cfg = StepperConfig {
        schedule: ForceSchedule::Computed,
        dt: 1.01 * bound.dt_max,
        alpha: 0.0,
        c_max: 1.0,
    };
    let err = Stepper::new(&device(), &model, &cfg).unwrap_err();
    assert!(matches!(err, clforge::runtime::Error::UnstableTimeStep { .. }));
    assert!(err.to_string().contains("stability bound"), "{err}");
    let ok = Stepper::new(
        &device(),
        &model,
        &StepperConfig {
            dt: bound.dt_max,
            ..cfg
        },
    )
    .unwrap();
    assert_eq!(ok.stability_bound(), &bound);
}

/// The structured gather with M⁻¹ and the damping looked up by node class gives the bits of the
/// gather that reads them per DOF: quad4, hex8 and quad9 grids with fixed DOFs on one side, a
/// load, damping, random states with NaN, ±inf and the largest finite value, f32 and f64.
#[test]
fn derived_mass_gather_gives_the_bits_of_the_array_gather() {
    // Twelve steps from a finite state; one from one with NaN, ±inf and the largest finite
    // value (they spread through the elements every step: more steps leave mostly NaN).
    fn check<R: Real>(model: &Model, seed: u64, specials: bool) {
        let n = model.dof_count();
        let mut r = rng(seed);
        let mut u: Vec<R> = (0..n).map(|_| R::of(r.random_range(-1.0..1.0))).collect();
        let v: Vec<R> = (0..n).map(|_| R::of(r.random_range(-1.0..1.0))).collect();
        let big = if size_of::<R>() == 4 {
            f64::from(f32::MAX)
        } else {
            f64::MAX
        };
        if specials {
            for (i, x) in [(n / 3, f64::NAN), (n / 2, f64::INFINITY), (2 * n / 3, -big)] {
                u[i] = R::of(x);
            }
        }
        let steps = if specials { 1 } else { 12 };
        let load = Load::point(n / model.spec.dofs / 2, model.spec.dofs, 0, 3.0, TimeFunction::Constant);
        // The class table's order-1 elements sum the assembled node stencil unless told not to.
        let stencil = model.spec.order == 1;
        let run_with = |derived: bool, assembled: bool, rows: usize, group: Option<[usize; 2]>| {
            let mut dev = Stepper::<R>::with_precision(&device(), model, &config(ForceSchedule::Gather)).unwrap();
            assert!(
                dev.derived_mass(),
                "{}: the class table applies to a uniform grid",
                model.spec.name
            );
            assert_eq!(dev.assembled(), stencil, "{}", model.spec.name);
            if stencil {
                dev.set_assembled(assembled).unwrap();
            } else {
                assert!(dev.set_assembled(true).is_err(), "{}: no stencil", model.spec.name);
            }
            dev.set_derived_mass(derived).unwrap();
            dev.set_gather_rows(rows).unwrap();
            assert_eq!(dev.gather_rows(), rows);
            if let Some(g) = group {
                dev.set_gather_group(g).unwrap();
                assert_eq!(dev.gather_group(), Some(g));
            }
            dev.set_state(&u, &v).unwrap();
            dev.add_load(&load).unwrap();
            dev.step(steps).unwrap();
            (dev.displacement().unwrap(), dev.velocity().unwrap())
        };
        // Several rows per work-item: the patch path on the rows away from the edges (the grids
        // have interior rows iy0 .. iy0 + rows - 1 for these counts), the general one elsewhere,
        // a last block cut short by the grid's end.
        // Work-groups that do not divide the grid (the launch rounds up, the kernel skips the rest).
        // The element-by-element sums: the bits of the arrays' gather.
        let run = |derived, rows, group| run_with(derived, false, rows, group);
        let arrays = run(false, 1, None);
        let rows = if model.spec.dim == 3 { 2 } else { 3 };
        let bits = |x: &R| {
            if x.widen().is_nan() {
                u64::MAX
            } else {
                x.widen().to_bits()
            }
        };
        if stencil {
            // The assembled stencil: the same bits for every rows and work-group (the window's
            // path and the general one sum alike), the arrays' values to rounding, the same
            // NaN and ±inf, and not the arrays' bits everywhere (the stencil is taken).
            let one = run_with(true, true, 1, None);
            for other in [
                run_with(true, true, rows, None),
                run_with(true, true, rows, Some([8, 3])),
            ] {
                for (a, b) in [(&one.0, &other.0), (&one.1, &other.1)] {
                    assert!(
                        a.iter().map(bits).eq(b.iter().map(bits)),
                        "{} {}: the assembled stencil's bits depend on rows or work-group",
                        model.spec.name,
                        R::NAME
                    );
                }
            }
            let tol = if size_of::<R>() == 4 { 1e-5 } else { 1e-12 };
            for (what, a, b) in [("u", &one.0, &arrays.0), ("v", &one.1, &arrays.1)] {
                let class = |x: &R| (x.widen().is_nan(), x.widen().is_infinite() && x.widen() > 0.0);
                assert!(
                    a.iter().map(class).eq(b.iter().map(class)),
                    "{} {what}: classes",
                    model.spec.name
                );
                let (fa, fb): (Vec<f64>, Vec<f64>) = a
                    .iter()
                    .zip(b)
                    .filter(|(x, _)| x.widen().is_finite())
                    .map(|(x, y)| (x.widen(), y.widen()))
                    .unzip();
                let e = slice_rel_error(&fa, &fb);
                assert!(e <= tol, "{} {} {what}: relative error {e:e}", model.spec.name, R::NAME);
                if !specials {
                    assert!(
                        !a.iter().map(bits).eq(b.iter().map(bits)),
                        "{} {} {what}: the same bits as the element rows: was the stencil taken?",
                        model.spec.name,
                        R::NAME
                    );
                }
            }
        }
        for (rows, table) in [
            (1, run(true, 1, None)),
            (rows, run(true, rows, None)),
            (rows, run(true, rows, Some([8, 3]))),
        ] {
            for (what, a, b) in [("u", &table.0, &arrays.0), ("v", &table.1, &arrays.1)] {
                let finite = a.iter().filter(|x| x.widen().is_finite()).count();
                assert!(
                    finite > n / 2,
                    "{}: only {finite} of {n} finite values to compare",
                    model.spec.name
                );
                // Bit for bit; a NaN's sign and payload are not part of the arithmetic.
                for (i, (x, y)) in a.iter().zip(b).enumerate() {
                    assert_eq!(
                    bits(x),
                    bits(y),
                    "{} {}: {what}[{i}] {x:?} with the class table ({rows} rows per work-item), {y:?} with the arrays",
                    model.spec.name,
                    R::NAME
                );
                }
            }
        }
    }
    let (k, _) = quad4_plane_stress(1.0, 0.5, 1.0, 0.3);
    let models = [
        Model::new(quad4(), structured(quad4(), [13, 7, 1]), k, 2.0).unwrap(),
        Model::new(hex8(), structured(hex8(), [4, 5, 5]), random_matrix(24, 5), 1.5).unwrap(),
        Model::new(quad9(), structured(quad9(), [8, 6, 1]), random_matrix(18, 8), 1.0).unwrap(),
    ];
    for (s, mut model) in models.into_iter().enumerate() {
        fix_left_edge(&mut model);
        for specials in [false, true] {
            check::<f32>(&model, 40 + s as u64, specials);
            check::<f64>(&model, 50 + s as u64, specials);
        }
    }
}

/// Where the masses are not the same at every node of a class (a mass added at one node), the
/// stepper reads them per DOF, and asking for the class table is an error that says why.
#[test]
fn derived_mass_is_refused_where_a_class_has_two_masses() {
    let (k, _) = quad4_plane_stress(1.0, 1.0, 1.0, 0.3);
    let mut model = Model::new(quad4(), structured(quad4(), [6, 5, 1]), k, 1.0).unwrap();
    let uniform_model = model.clone();
    let uniform = Stepper::new(&device(), &model, &config(ForceSchedule::Gather)).unwrap();
    assert!(uniform.derived_mass());
    model.mass[2 * 9 + 1] *= 1.5;
    let mut dev = Stepper::new(&device(), &model, &config(ForceSchedule::Gather)).unwrap();
    assert!(!dev.derived_mass());
    let e = dev.set_derived_mass(true).unwrap_err().to_string();
    assert!(e.contains("same") && e.contains("class"), "{e}");
    // The other schedules never use it.
    let mut coloured = Stepper::new(&device(), &model, &config(ForceSchedule::Coloured)).unwrap();
    assert!(!coloured.derived_mass() && coloured.set_derived_mass(true).is_err());
    // Rows per work-item: 1 to MAX_GATHER_ROWS, and only where the class-table gather runs.
    for rows in [0, clforge::runtime::element::stepper::MAX_GATHER_ROWS + 1] {
        let e = dev.set_gather_rows(rows).unwrap_err().to_string();
        assert!(e.contains("rows") && e.contains(&rows.to_string()), "{e}");
    }
    assert!(dev.set_gather_rows(2).is_err(), "no class table here");
    assert!(dev.set_gather_group([32, 4]).is_err(), "no class table here");
    let mut table = Stepper::new(&device(), &uniform_model, &config(ForceSchedule::Gather)).unwrap();
    for group in [[0, 4], [32, 0], [1 << 16, 1 << 8]] {
        let e = table.set_gather_group(group).unwrap_err().to_string();
        assert!(e.contains("work-group") && e.contains(&format!("{group:?}")), "{e}");
    }
    table.set_gather_group([16, 2]).unwrap();
    let e = coloured.set_gather_rows(2).unwrap_err().to_string();
    assert!(e.contains("class-table gather"), "{e}");
    // Turning it off is always allowed, and the steps still equal the host's.
    dev.set_derived_mass(false).unwrap();
    parity(&model, &[ForceSchedule::Gather], 5, 3);
}

/// The gather's tuner times rows per work-item and work-groups, keeps the fastest, and changes
/// no result: the state after tuning is the state before, and the steps after it give the bits
/// of a stepper that was never tuned.
#[test]
fn tuning_the_gather_keeps_the_state_and_the_bits() {
    let (k, _) = quad4_plane_stress(1.0, 0.5, 1.0, 0.3);
    let model = Model::new(quad4(), structured(quad4(), [13, 9, 1]), k, 2.0).unwrap();
    let n = model.dof_count();
    let mut r = rng(61);
    let u: Vec<f32> = (0..n).map(|_| r.random_range(-1.0..1.0)).collect();
    let v: Vec<f32> = (0..n).map(|_| r.random_range(-1.0..1.0)).collect();
    let load = Load::point(n / model.spec.dofs / 2, model.spec.dofs, 0, 3.0, TimeFunction::Constant);
    let start = || {
        let mut st = Stepper::new(&device(), &model, &config(ForceSchedule::Gather)).unwrap();
        st.set_state(&u, &v).unwrap();
        st.add_load(&load).unwrap();
        st.step(2).unwrap();
        st
    };
    let (mut plain, mut tuned) = (start(), start());
    let before = (tuned.displacement().unwrap(), tuned.velocity().unwrap(), tuned.time());
    let timings = tuned.tune_gather(2).unwrap();
    assert!(
        timings.windows(2).all(|w| w[0].median_ns <= w[1].median_ns),
        "{timings:?}"
    );
    for rows in [1, 2, 4] {
        assert!(
            timings.iter().any(|t| t.rows == rows && t.group == [32, 4]),
            "{rows} rows in 32 x 4 not timed: {timings:?}"
        );
    }
    assert_eq!(tuned.gather_rows(), timings[0].rows);
    assert_eq!(tuned.gather_group(), Some(timings[0].group));
    let bits = |x: &[f32]| x.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    let after = (tuned.displacement().unwrap(), tuned.velocity().unwrap(), tuned.time());
    assert_eq!(bits(&after.0), bits(&before.0), "tuning changed the displacements");
    assert_eq!(bits(&after.1), bits(&before.1), "tuning changed the velocities");
    assert_eq!(after.2, before.2, "tuning changed the time");
    plain.step(5).unwrap();
    tuned.step(5).unwrap();
    assert_eq!(
        bits(&tuned.displacement().unwrap()),
        bits(&plain.displacement().unwrap())
    );
    assert_eq!(bits(&tuned.velocity().unwrap()), bits(&plain.velocity().unwrap()));
    // With a load the state is kicked between steps: no candidate runs several per launch.
    assert!(timings.iter().all(|t| t.steps == 1), "{timings:?}");
    // Without one, 2, 3 and 4 steps per launch are timed too, and the choice changes no bits.
    let start_free = || {
        let mut st = Stepper::new(&device(), &model, &config(ForceSchedule::Gather)).unwrap();
        st.set_state(&u, &v).unwrap();
        st
    };
    let (mut plain, mut tuned) = (start_free(), start_free());
    let timings = tuned.tune_gather(1).unwrap();
    for k in [2, 3, 4] {
        assert!(
            timings.iter().any(|t| t.steps == k),
            "{k} steps per launch not timed: {timings:?}"
        );
    }
    assert_eq!(tuned.gather_steps(), timings[0].steps, "{timings:?}");
    plain.step(7).unwrap();
    tuned.step(7).unwrap();
    assert_eq!(tuned.steps(), 7);
    assert_eq!(
        bits(&tuned.displacement().unwrap()),
        bits(&plain.displacement().unwrap())
    );
    assert_eq!(bits(&tuned.velocity().unwrap()), bits(&plain.velocity().unwrap()));
    // Nothing to tune on another schedule; no steps to time is an error too.
    let mut coloured = Stepper::new(&device(), &model, &config(ForceSchedule::Coloured)).unwrap();
    let e = coloured.tune_gather(2).unwrap_err().to_string();
    assert!(e.contains("class-table gather"), "{e}");
    assert!(tuned.tune_gather(0).is_err());
}

/// Several class-table gather steps per launch (temporal blocking in local memory) give the
/// bits of as many single steps, in 2-D and 3-D, both precisions, with fixed DOFs, NaN, ±inf and
/// the largest finite value in the state, boxes that cut the grid anywhere and a step count
/// that leaves single steps over; with a load every step is a launch again.
#[test]
fn several_gather_steps_per_launch_give_the_bits_of_single_steps() {
    fn check<R: Real>(model: &Model, seed: u64, cases: &[(usize, StepsBox)]) {
        let name = format!("{} {}", model.spec.name, R::NAME);
        let n = model.dof_count();
        let mut r = rng(seed);
        let u: Vec<R> = (0..n).map(|_| R::of(r.random_range(-1.0..1.0))).collect();
        let v: Vec<R> = (0..n).map(|_| R::of(r.random_range(-1.0..1.0))).collect();
        let big = if size_of::<R>() == 4 {
            f64::from(f32::MAX)
        } else {
            f64::MAX
        };
        let mut special = u.clone();
        for (i, x) in [(n / 3, f64::NAN), (n / 2, f64::INFINITY), (2 * n / 3, -big)] {
            special[i] = R::of(x);
        }
        let bits = |x: &[R]| {
            x.iter()
                .map(|x| {
                    if x.widen().is_nan() {
                        u64::MAX
                    } else {
                        x.widen().to_bits()
                    }
                })
                .collect::<Vec<_>>()
        };
        let load = Load::point(n / model.spec.dofs / 2, model.spec.dofs, 0, 3.0, TimeFunction::Constant);
        let run = |st: &mut Stepper<R>, u: &[R], steps: usize, loaded: bool| {
            st.set_state(u, &v).unwrap();
            if loaded {
                st.add_load(&load).unwrap();
            }
            st.step(steps).unwrap();
            (
                bits(&st.displacement().unwrap()),
                bits(&st.velocity().unwrap()),
                st.last_launches(),
            )
        };
        let fresh = || Stepper::<R>::with_precision(&device(), model, &config(ForceSchedule::Gather)).unwrap();
        for (state, steps) in [(&u, 7), (&special, 3)] {
            let single = run(&mut fresh(), state, steps, false);
            assert_eq!(single.2, steps, "{name}: a launch per step");
            let finite = single
                .0
                .iter()
                .filter(|&&b| b != u64::MAX && f64::from_bits(b).is_finite())
                .count();
            assert!(finite > n / 8, "{name}: only {finite} of {n} finite values to compare");
            for &(several, bx) in cases {
                let mut st = fresh();
                st.set_steps_box(bx).unwrap();
                st.set_gather_steps(several).unwrap();
                assert_eq!((st.gather_steps(), st.steps_box()), (several, bx));
                let (du, dv, launches) = run(&mut st, state, steps, false);
                let what = format!("{name}: {several} steps per launch in {bx:?}, {steps} steps");
                assert_eq!(launches, steps / several + steps % several, "{what}: launches");
                assert_eq!(st.steps(), steps as u64, "{what}: step count");
                for (k, (a, b)) in du.iter().zip(&single.0).enumerate() {
                    assert_eq!(a, b, "{what}: u[{k}] differs from single steps");
                }
                for (k, (a, b)) in dv.iter().zip(&single.1).enumerate() {
                    assert_eq!(a, b, "{what}: v[{k}] differs from single steps");
                }
            }
        }
        // A load kicks the state after every step: one gather and one kick per step, the bits of
        // a stepper that never ran several.
        let (several, bx) = cases[0];
        let single = run(&mut fresh(), &u, 4, true);
        let mut st = fresh();
        st.set_steps_box(bx).unwrap();
        st.set_gather_steps(several).unwrap();
        let loaded = run(&mut st, &u, 4, true);
        assert_eq!(loaded, single, "{name}: with a load");
        assert_eq!(loaded.2, 8, "{name}: a gather and a kick per step");
    }
    let (k, _) = quad4_plane_stress(1.0, 0.5, 1.0, 0.3);
    let mut quad = Model::new(quad4(), structured(quad4(), [23, 15, 1]), k, 2.0).unwrap();
    let mut hex = Model::new(hex8(), structured(hex8(), [6, 5, 7]), random_matrix(24, 5), 1.5).unwrap();
    for model in [&mut quad, &mut hex] {
        fix_left_edge(model);
    }
    let b = |nodes: [usize; 3], items: usize| StepsBox { nodes, items };
    // Boxes smaller than the grid and not dividing it; the default box (one for the whole grid).
    check::<f32>(&quad, 71, &[(2, b([5, 3, 1], 32)), (3, StepsBox::default_for(2))]);
    check::<f64>(&quad, 72, &[(2, b([4, 4, 1], 16))]);
    check::<f32>(&hex, 73, &[(2, b([3, 2, 2], 16)), (3, b([2, 3, 4], 64))]);
    check::<f64>(&hex, 74, &[(2, StepsBox::default_for(3))]);
}

/// Several steps per launch are refused with a reason where they cannot run: out of range, off
/// the class-table gather, on elements without the register window, in boxes of no nodes, deeper
/// than a 2-D grid, larger than local memory or of more work-items than the kernel takes; a
/// refused setting leaves the stepper as it was.
#[test]
fn several_gather_steps_are_refused_where_they_cannot_run() {
    let (k, _) = quad4_plane_stress(1.0, 0.5, 1.0, 0.3);
    let model = Model::new(quad4(), structured(quad4(), [9, 6, 1]), k, 2.0).unwrap();
    let mut st = Stepper::new(&device(), &model, &config(ForceSchedule::Gather)).unwrap();
    for steps in [0, MAX_GATHER_STEPS + 1] {
        let e = st.set_gather_steps(steps).unwrap_err().to_string();
        assert!(e.contains("gather steps") && e.contains(&steps.to_string()), "{e}");
    }
    let b = |nodes: [usize; 3], items: usize| StepsBox { nodes, items };
    for bx in [b([0, 8, 1], 64), b([8, 8, 1], 0), b([8, 8, 2], 64)] {
        let e = st.set_steps_box(bx).unwrap_err().to_string();
        assert!(e.contains("box") && e.contains("1 node deep"), "{e}");
    }
    let e = st.set_steps_box(b([1 << 14, 1 << 12, 1], 256)).unwrap_err().to_string();
    assert!(
        e.contains("local memory") && e.contains("CL_DEVICE_LOCAL_MEM_SIZE"),
        "{e}"
    );
    st.set_gather_steps(2).unwrap();
    let e = st.set_steps_box(b([8, 8, 1], 1 << 16)).unwrap_err().to_string();
    assert!(e.contains("work-items") && e.contains("WORK_GROUP_SIZE"), "{e}");
    assert_eq!(
        (st.gather_steps(), st.steps_box()),
        (2, StepsBox::default_for(2)),
        "refused, unchanged"
    );
    st.set_derived_mass(false).unwrap();
    st.set_gather_steps(1).unwrap();
    let e = st.set_gather_steps(2).unwrap_err().to_string();
    assert!(e.contains("switched off"), "{e}");
    let mut coloured = Stepper::new(&device(), &model, &config(ForceSchedule::Coloured)).unwrap();
    let e = coloured.set_gather_steps(2).unwrap_err().to_string();
    assert!(e.contains("class-table gather"), "{e}");
    let quad9_model = Model::new(quad9(), structured(quad9(), [4, 3, 1]), random_matrix(18, 8), 1.0).unwrap();
    let mut q9 = Stepper::new(&device(), &quad9_model, &config(ForceSchedule::Gather)).unwrap();
    let e = q9.set_gather_steps(2).unwrap_err().to_string();
    assert!(e.contains("order 1"), "{e}");
}
