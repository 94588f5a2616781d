//! Element kernels of seed 000's explicit dynamics on PoCL: every schedule equals the host
//! reference stepper for N steps from random fields, schedules agree with each other, and the
//! physics holds (energy conservation, P-wave speed, cracked elements carry no force).

use crate::common;
use crate::elements;

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

mod gather;

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
