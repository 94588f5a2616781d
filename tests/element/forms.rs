//! Element physics as forms on the host (`element::form`): the library's operator and mass forms
//! give the built-in matrices for nodal, simplex and modal elements on distorted geometry; forms
//! written as a physicist writes them (`k ∇u·∇v`, Lamé) give the built-ins' matrices for the
//! same physics; a form that is not bilinear, or not finite, is a typed error.

use crate::{common, elements, modal, simplices};

use clforge::runtime::element::form::{self, dot, library, Field, Position};
use clforge::runtime::element::matrices::{self, Matrix};
use clforge::runtime::element::Element;
use clforge::runtime::Error;
use rand::Rng;

mod acoustics;
mod declared;
mod gmsh_heat;
mod poisson;
mod supg;

/// `E`'s geometry nodes, stretched and each moved by up to `distort`.
fn distorted<E: Element>(rng: &mut impl Rng, distort: f64) -> Vec<Vec<f64>> {
    let nodes: Vec<[f64; 3]> = match E::basis() {
        clforge::runtime::element::Basis::Nodal => E::local_nodes().to_vec(),
        clforge::runtime::element::Basis::Modal { .. } => E::local_nodes()[..E::GEOMETRY_NODES].to_vec(),
    };
    nodes
        .iter()
        .map(|p| {
            (0..E::DIM)
                .map(|k| 1.3 * p[k] + 0.2 * k as f64 + rng.random_range(-distort..=distort))
                .collect()
        })
        .collect()
}

fn close(a: &Matrix, b: &Matrix, what: &str) {
    assert_eq!((a.rows(), a.cols()), (b.rows(), b.cols()), "{what}: sizes");
    let scale = b.max_abs();
    for i in 0..a.rows() {
        for j in 0..a.cols() {
            assert!(
                (a[(i, j)] - b[(i, j)]).abs() <= 1e-12 * scale,
                "{what} ({i}, {j}): form {:e}, built-in {:e}",
                a[(i, j)],
                b[(i, j)]
            );
        }
    }
}

/// The library's forms of `E` equal `E`'s built-in stiffness and consistent mass.
fn library_equals_builtin<E: Element>(material: &E::Material, seed: u64) {
    let mut rng = common::rng(seed);
    let coords = distorted::<E>(&mut rng, 0.1);
    let k = form::bilinear::<E, _, _>(&coords, material, library::operator::<E>(material).unwrap()).unwrap();
    close(
        &k,
        &matrices::stiffness::<E, _>(&coords, material).unwrap(),
        &format!("{} stiffness", E::NAME),
    );
    let m = form::bilinear::<E, _, _>(&coords, material, library::mass::<E>(material).unwrap()).unwrap();
    close(
        &m,
        &matrices::mass_consistent::<E, _>(&coords, material).unwrap(),
        &format!("{} mass", E::NAME),
    );
}

#[test]
fn library_forms_give_the_built_in_matrices() {
    use elements::{hex8, quad4, quad4_heat, quad9};
    let plate = quad4::Plate {
        e: 2.0,
        nu: 0.3,
        rho: 1.5,
        thickness: 0.2,
    };
    library_equals_builtin::<quad4::Quad4>(&plate, 1);
    let heat = quad4_heat::Conductor {
        kx: 1.5,
        ky: 0.5,
        rho_c: 2.0,
    };
    library_equals_builtin::<quad4_heat::Quad4Heat>(&heat, 2);
    let body = quad9::Body {
        e: 3.0,
        nu: 0.25,
        rho: 1.0,
    };
    library_equals_builtin::<quad9::Quad9>(&body, 3);
    let solid = hex8::Solid {
        lambda: 1.2,
        mu: 0.8,
        rho: 2.0,
    };
    library_equals_builtin::<hex8::Hex8>(&solid, 4);
    let s = simplices::Solid {
        e: 2.0,
        nu: 0.3,
        rho: 1.0,
        h: 0.5,
    };
    library_equals_builtin::<simplices::Tri6>(&s, 5);
    library_equals_builtin::<simplices::Tet10>(&s, 6);
    library_equals_builtin::<modal::HexP2>(&modal::Iso { lambda: 1.0, mu: 0.7 }, 7);
}

#[test]
fn forms_written_as_physics_give_the_same_matrices() {
    use elements::{quad4_heat, quad9};
    let mut rng = common::rng(11);
    // Conduction `k ∇u·∇v` (isotropic) on the diffusion quad, with the thickness of one.
    let coords = distorted::<quad4_heat::Quad4Heat>(&mut rng, 0.15);
    let heat = quad4_heat::Conductor {
        kx: 1.7,
        ky: 1.7,
        rho_c: 1.0,
    };
    let k = form::bilinear::<quad4_heat::Quad4Heat, _, _>(&coords, &heat, |u: &Field, v: &Field, _: &Position, m| {
        m.kx * dot(u.grad(), v.grad())
    })
    .unwrap();
    close(
        &k,
        &matrices::stiffness::<quad4_heat::Quad4Heat, _>(&coords, &heat).unwrap(),
        "k ∇u·∇v",
    );
    let lib = form::bilinear::<quad4_heat::Quad4Heat, _, _>(&coords, &heat, library::conduction(1.7)).unwrap();
    close(&lib, &k, "library::conduction");
    // Lamé's `λ div u div v + 2μ ε(u):ε(v)` is plane strain for the 9-node quad.
    let coords = distorted::<quad9::Quad9>(&mut rng, 0.1);
    let body = quad9::Body {
        e: 2.5,
        nu: 0.3,
        rho: 1.0,
    };
    let (lambda, mu) = (
        body.e * body.nu / ((1.0 + body.nu) * (1.0 - 2.0 * body.nu)),
        body.e / (2.0 * (1.0 + body.nu)),
    );
    let k = form::bilinear::<quad9::Quad9, _, _>(&coords, &body, library::lame(lambda, mu)).unwrap();
    close(
        &k,
        &matrices::stiffness::<quad9::Quad9, _>(&coords, &body).unwrap(),
        "Lamé plane strain",
    );
    // A body load `f·v` sums to the load times the area.
    let area: f64 = matrices::mass_lumped::<quad9::Quad9, _>(&coords, &body)
        .unwrap()
        .iter()
        .sum();
    let f = form::linear::<quad9::Quad9, _, _>(&coords, &body, |v: &Field, _: &Position, _| 3.0 * v.comp(1)).unwrap();
    let total: f64 = f.iter().skip(1).step_by(2).sum();
    assert!((total - 3.0 * area).abs() <= 1e-12 * area, "{total} vs {}", 3.0 * area);
    assert!(f.iter().step_by(2).all(|&x| x == 0.0), "no load along x");
}

#[test]
fn forms_that_are_not_bilinear_or_not_finite_are_refused() {
    use elements::quad4_heat::{Conductor, Quad4Heat};
    let coords = distorted::<Quad4Heat>(&mut common::rng(12), 0.1);
    let m = Conductor {
        kx: 1.0,
        ky: 1.0,
        rho_c: 1.0,
    };
    let refused = |r: Result<Matrix, Error>, which: &str| match r {
        Err(Error::InvalidConfig(msg)) => assert!(msg.contains(which), "{msg}"),
        other => panic!("expected a refusal naming `{which}`, got {other:?}"),
    };
    // Quadratic in the trial function, affine in the test function, not finite.
    refused(
        form::bilinear::<Quad4Heat, _, _>(&coords, &m, |u: &Field, v: &Field, _: &Position, _| {
            u.value() * u.value() * v.value()
        }),
        "trial",
    );
    refused(
        form::bilinear::<Quad4Heat, _, _>(&coords, &m, |u: &Field, v: &Field, _: &Position, _| {
            u.value() * (v.value() + 1.0)
        }),
        "test",
    );
    refused(
        form::bilinear::<Quad4Heat, _, _>(&coords, &m, |u: &Field, v: &Field, _: &Position, _| {
            u.value() * v.value() / 0.0
        }),
        "finite",
    );
    assert!(matches!(
        form::linear::<Quad4Heat, _, _>(&coords, &m, |v: &Field, _: &Position, _| v.value() + 1.0),
        Err(Error::InvalidConfig(_))
    ));
    // A symmetric-gradient form of a scalar field is its own business, but a degenerate element
    // is refused as the built-ins refuse it.
    let flat = vec![vec![0.0, 0.0], vec![1.0, 0.0], vec![2.0, 0.0], vec![3.0, 0.0]];
    assert!(matches!(
        form::bilinear::<Quad4Heat, _, _>(&flat, &m, library::conduction(1.0)),
        Err(Error::DegenerateElement { .. })
    ));
}

/// A structured mesh of `nx × ny` bilinear quads on `[0, 1] × [0, h]`: node coordinates and
/// cells (counter-clockwise, as `quad4_heat`'s nodes).
fn quads(nx: usize, ny: usize, h: f64) -> (Vec<f64>, Vec<u32>) {
    let node = |i: usize, j: usize| (j * (nx + 1) + i) as u32;
    let coords = (0..=ny)
        .flat_map(|j| (0..=nx).flat_map(move |i| [i as f64 / nx as f64, h * j as f64 / ny as f64]))
        .collect();
    let cells = (0..ny)
        .flat_map(|j| (0..nx).flat_map(move |i| [node(i, j), node(i + 1, j), node(i + 1, j + 1), node(i, j + 1)]))
        .collect();
    (coords, cells)
}

/// Transient heat `u̇ = Δu` on `[0, 1] × [0, ½]`, `u = 0` at `x = 0, 1`, insulated above and
/// below, from `u = sin πx`: `u = e^{-π² t} sin πx`. Conduction and capacity written as forms,
/// assembled, stepped by Crank–Nicolson and backward Euler with CG on the device: the nodal
/// error falls as `h²` for bilinear quads (Crank–Nicolson, a small step), and backward Euler
/// is first order in time. A steady problem with a held value solves exactly what a line does.
#[test]
fn transient_heat_from_forms_converges_to_the_analytic_solution() {
    use clforge::runtime::element::form::time::{assemble, steady, Fixed, ThetaMethod};
    use clforge::runtime::element::sparse::CgOptions;
    use elements::quad4_heat::{Conductor, Quad4Heat};
    let dev = common::device();
    let m = Conductor {
        kx: 1.0,
        ky: 1.0,
        rho_c: 1.0,
    };
    let opts = CgOptions {
        tol: 1e-12,
        max_iter: 2000,
    };
    let pi = std::f64::consts::PI;
    let run = |nx: usize, theta: f64, dt: f64, t_end: f64| -> f64 {
        let (coords, cells) = quads(nx, 2, 0.5);
        let (_, k) = assemble::<Quad4Heat, _>(&coords, &cells, &[m], |u: &Field, v: &Field, _: &Position, m| {
            m.kx * dot(u.grad(), v.grad())
        })
        .unwrap();
        let (_, mass) = assemble::<Quad4Heat, _>(&coords, &cells, &[m], |u: &Field, v: &Field, _: &Position, m| {
            m.rho_c * u.value() * v.value()
        })
        .unwrap();
        let xs: Vec<f64> = coords.chunks(2).map(|p| p[0]).collect();
        let walls: Vec<u32> = (0..xs.len() as u32)
            .filter(|&i| xs[i as usize] == 0.0 || xs[i as usize] == 1.0)
            .collect();
        let fixed = Fixed {
            values: vec![0.0; walls.len()],
            dofs: walls,
        };
        let scheme = ThetaMethod::new(&dev, &mass, &k, theta, dt, &fixed, opts).unwrap();
        let mut u: Vec<f64> = xs.iter().map(|x| (pi * x).sin()).collect();
        let steps = (t_end / dt).round() as usize;
        for _ in 0..steps {
            scheme.step(&mut u, None).unwrap();
        }
        let decay = (-pi * pi * t_end).exp();
        xs.iter()
            .zip(&u)
            .map(|(x, v)| (v - decay * (pi * x).sin()).abs())
            .fold(0.0, f64::max)
    };
    // Space: Crank–Nicolson with a step small enough that time errors do not show.
    let (e8, e16) = (run(8, 0.5, 2.5e-4, 0.05), run(16, 0.5, 2.5e-4, 0.05));
    let order = (e8 / e16).log2();
    assert!((1.8..2.3).contains(&order), "space order {order} ({e8:e} → {e16:e})");
    // Time: backward Euler halving the step halves the error on a fine mesh.
    let (t1, t2) = (run(32, 1.0, 0.01, 0.1), run(32, 1.0, 0.005, 0.1));
    let order = (t1 / t2).log2();
    assert!((0.8..1.2).contains(&order), "time order {order} ({t1:e} → {t2:e})");

    // Steady: u = 0 at x = 0, u = 2 at x = 1, insulated elsewhere: u = 2x at every node.
    let (coords, cells) = quads(6, 3, 0.5);
    let (_, k) = assemble::<Quad4Heat, _>(&coords, &cells, &[m], library::conduction(1.0)).unwrap();
    for (theta, dt) in [(1.5, 0.1), (0.5, 0.0), (0.5, f64::NAN)] {
        assert!(ThetaMethod::new(&dev, &k, &k, theta, dt, &Fixed::default(), opts).is_err());
    }
    let xs: Vec<f64> = coords.chunks(2).map(|p| p[0]).collect();
    let walls: Vec<u32> = (0..xs.len() as u32)
        .filter(|&i| xs[i as usize] == 0.0 || xs[i as usize] == 1.0)
        .collect();
    let fixed = Fixed {
        values: walls.iter().map(|&i| 2.0 * xs[i as usize]).collect(),
        dofs: walls,
    };
    let u = steady(&dev, &k, &vec![0.0; xs.len()], &fixed, &opts).unwrap().x;
    for (x, v) in xs.iter().zip(&u) {
        assert!((v - 2.0 * x).abs() < 1e-10, "u({x}) = {v}");
    }
}

/// Forward Euler over form matrices: the element bound of `λ_max(M⁻¹K)` (Irons) gives a step
/// that stays stable for hundreds of steps, a step above the checked limit is refused with the
/// limit in the error, and Crank–Nicolson takes any step.
#[test]
fn forward_euler_steps_within_the_element_bound_stay_bounded() {
    use clforge::runtime::element::form::bound::{check_theta_step, lambda_max};
    use clforge::runtime::element::form::time::{assemble, Fixed, ThetaMethod};
    use clforge::runtime::element::sparse::CgOptions;
    use elements::quad4_heat::{Conductor, Quad4Heat};
    let dev = common::device();
    let m = Conductor {
        kx: 1.0,
        ky: 1.0,
        rho_c: 1.0,
    };
    let (coords, cells) = quads(12, 2, 0.25);
    let kf = |u: &Field, v: &Field, _: &Position, m: &Conductor| m.kx * dot(u.grad(), v.grad());
    let mf = |u: &Field, v: &Field, _: &Position, m: &Conductor| m.rho_c * u.value() * v.value();
    let lambda = lambda_max::<Quad4Heat, _, _>(&coords, &cells, &[m], kf, mf).unwrap();
    assert!(lambda > 0.0 && lambda.is_finite(), "{lambda}");
    let critical = 2.0 / lambda;
    assert!(check_theta_step(0.0, 0.9 * critical, lambda).is_ok());
    match check_theta_step(0.0, 1.1 * critical, lambda) {
        Err(Error::UnstableTimeStep { dt_critical, .. }) => assert!((dt_critical - critical).abs() <= 1e-12 * critical),
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert!(check_theta_step(0.5, 100.0 * critical, lambda).is_ok());
    let (_, k) = assemble::<Quad4Heat, _>(&coords, &cells, &[m], kf).unwrap();
    let (_, mass) = assemble::<Quad4Heat, _>(&coords, &cells, &[m], mf).unwrap();
    let opts = CgOptions {
        tol: 1e-12,
        max_iter: 2000,
    };
    let run = |dt: f64| {
        let scheme = ThetaMethod::new(&dev, &mass, &k, 0.0, dt, &Fixed::default(), opts).unwrap();
        // A rough start excites the highest modes.
        let mut u: Vec<f64> = (0..mass.n()).map(|i| if i % 2 == 0 { 1.0 } else { -1.0 }).collect();
        for _ in 0..300 {
            scheme.step(&mut u, None).unwrap();
        }
        u.iter().fold(0.0f64, |a, v| a.max(v.abs()))
    };
    let stable = run(0.95 * critical);
    assert!(stable <= 1.0, "forward Euler within the bound grew to {stable:e}");
    // The scheme checks the step itself against the assembled matrices' λ_max (at or below
    // Irons' bound): three times the bound is refused before any step.
    let assembled = clforge::runtime::element::form::bound::lambda_max_assembled(&mass, &k).unwrap();
    assert!(
        assembled <= lambda * (1.0 + 1e-9) && assembled >= 0.3 * lambda,
        "{assembled} vs {lambda}"
    );
    assert!(matches!(
        ThetaMethod::new(&dev, &mass, &k, 0.0, 3.0 * critical, &Fixed::default(), opts),
        Err(Error::UnstableTimeStep { .. })
    ));
    // Just inside the assembled limit is accepted (and stays bounded, as the element bound's
    // 0.95 did above).
    assert!(ThetaMethod::new(&dev, &mass, &k, 0.0, 0.9 * 2.0 / assembled, &Fixed::default(), opts).is_ok());
}
