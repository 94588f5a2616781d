//! Scalar acoustics `ü / c² = Δu` written as forms of a declared element, stepped by Newmark-β
//! (average acceleration) on the device: a Gaussian pulse splits into two travelling at `c`; the
//! measured speed of the right-going one is `c` to 1 %. Central differences (β = 0) measure the
//! same speed; energy is conserved by the average-acceleration rule.

use super::*;

use clforge::prelude::*;
use clforge::runtime::element::form::newmark::Newmark;
use clforge::runtime::element::form::time::{assemble, Fixed};
use clforge::runtime::element::sparse::CgOptions;

/// The medium: its sound speed.
#[derive(Clone, Copy, Debug)]
pub struct Medium {
    pub c: f64,
}

#[element(dim = 2, nodes = 4, quadrature = 2)]
pub mod quad4_wave {
    use super::Medium;
    use clforge::runtime::element::form::{dot, Field, Position};

    pub const NODES: [[f64; 2]; 4] = [[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]];

    pub fn shape(r: f64, s: f64) -> [f64; 4] {
        [
            0.25 * (1.0 - r) * (1.0 - s),
            0.25 * (1.0 + r) * (1.0 - s),
            0.25 * (1.0 + r) * (1.0 + s),
            0.25 * (1.0 - r) * (1.0 + s),
        ]
    }

    /// `∇u·∇v`.
    #[form(stiffness)]
    pub fn laplace(u: &Field, v: &Field, _x: &Position, _m: &Medium) -> f64 {
        dot(u.grad(), v.grad())
    }

    /// `u v / c²`.
    #[form(mass)]
    pub fn compliance(u: &Field, v: &Field, _x: &Position, m: &Medium) -> f64 {
        u.value() * v.value() / (m.c * m.c)
    }
}

/// A strip `[0, len] × [0, width]` of `nx × ny` bilinear quads.
fn strip(len: f64, width: f64, nx: usize, ny: usize) -> (Vec<f64>, Vec<u32>) {
    let coords = (0..=ny)
        .flat_map(|j| (0..=nx).flat_map(move |i| [len * i as f64 / nx as f64, width * j as f64 / ny as f64]))
        .collect();
    let node = |i: usize, j: usize| (j * (nx + 1) + i) as u32;
    let cells = (0..ny)
        .flat_map(|j| (0..nx).flat_map(move |i| [node(i, j), node(i + 1, j), node(i + 1, j + 1), node(i, j + 1)]))
        .collect();
    (coords, cells)
}

/// The pulse's peak right of `from` on the strip's bottom row, interpolated by a parabola.
fn peak(u: &[f64], nx: usize, h: f64, from: f64) -> f64 {
    let i = (0..=nx)
        .filter(|&i| i as f64 * h > from && i > 0 && i < nx)
        .max_by(|&a, &b| u[a].total_cmp(&u[b]))
        .unwrap();
    let (l, c, r) = (u[i - 1], u[i], u[i + 1]);
    h * (i as f64 + 0.5 * (l - r) / (l - 2.0 * c + r))
}

/// The measured speed of the right-going pulse, and the energy drift, for Newmark (β, γ).
fn measured_speed(beta: f64, c: f64) -> (f64, f64) {
    let dev = common::device();
    let (len, nx, ny) = (4.0, 200, 2);
    let h = len / nx as f64;
    let (coords, cells) = strip(len, 0.1, nx, ny);
    let medium = [Medium { c }];
    let (_, k) = assemble::<Quad4Wave, _>(&coords, &cells, &medium, quad4_wave::laplace).unwrap();
    let (_, m) = assemble::<Quad4Wave, _>(&coords, &cells, &medium, quad4_wave::compliance).unwrap();
    let dt = 0.25 * h / c;
    let opts = CgOptions {
        tol: 1e-12,
        max_iter: 2000,
    };
    let stepper = Newmark::new(&dev, &m, &k, None, (beta, 0.5), dt, &Fixed::default(), opts).unwrap();
    let u0: Vec<f64> = coords
        .chunks(2)
        .map(|p| (-((p[0] - 1.0) / 0.15).powi(2)).exp())
        .collect();
    let mut s = stepper.start(u0, vec![0.0; coords.len() / 2], None).unwrap();
    let energy = |s: &clforge::runtime::element::form::newmark::State| {
        let (mv, ku) = (m.mul(&s.v).unwrap(), k.mul(&s.u).unwrap());
        0.5 * (dot_all(&s.v, &mv) + dot_all(&s.u, &ku))
    };
    let e0 = energy(&s);
    // The pulse's centre from x = 1.6 to 2.8 (the left-going one reflects far behind).
    let (t1, t2) = (0.6 / c, 1.8 / c);
    let mut at = Vec::new();
    let mut t = 0.0;
    for target in [t1, t2] {
        while t < target - 1e-12 {
            stepper.step(&mut s, None).unwrap();
            t += dt;
        }
        at.push((t, peak(&s.u, nx, h, 1.2)));
    }
    let speed = (at[1].1 - at[0].1) / (at[1].0 - at[0].0);
    (speed, (energy(&s) - e0).abs() / e0)
}

fn dot_all(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[test]
fn an_acoustic_pulse_travels_at_the_sound_speed() {
    for c in [2.0, 340.0] {
        let (speed, drift) = measured_speed(0.25, c);
        assert!(
            (speed / c - 1.0).abs() < 0.01,
            "average acceleration: {speed} for c = {c}"
        );
        assert!(drift < 1e-8, "energy drift {drift}");
    }
    let (speed, _) = measured_speed(0.0, 2.0);
    assert!((speed / 2.0 - 1.0).abs() < 0.01, "central differences: {speed}");
}

#[test]
fn newmark_refuses_bad_parameters() {
    let dev = common::device();
    let (coords, cells) = strip(1.0, 0.1, 4, 1);
    let medium = [Medium { c: 1.0 }];
    let (_, k) = assemble::<Quad4Wave, _>(&coords, &cells, &medium, quad4_wave::laplace).unwrap();
    let (_, m) = assemble::<Quad4Wave, _>(&coords, &cells, &medium, quad4_wave::compliance).unwrap();
    let opts = CgOptions::default();
    for (beta, gamma, dt) in [
        (0.6, 0.5, 0.1),
        (0.25, 0.4, 0.1),
        (0.25, 0.5, 0.0),
        (0.25, 0.5, f64::NAN),
    ] {
        assert!(matches!(
            Newmark::new(&dev, &m, &k, None, (beta, gamma), dt, &Fixed::default(), opts),
            Err(Error::InvalidConfig(_))
        ));
    }
    // Central differences beyond 2 / ω_max are refused; average acceleration takes any step.
    let omega = clforge::runtime::element::form::bound::lambda_max_assembled(&m, &k)
        .unwrap()
        .sqrt();
    assert!(matches!(
        Newmark::new(
            &dev,
            &m,
            &k,
            None,
            (0.0, 0.5),
            1.5 * 2.0 / omega,
            &Fixed::default(),
            opts
        ),
        Err(Error::UnstableTimeStep { .. })
    ));
    assert!(Newmark::new(
        &dev,
        &m,
        &k,
        None,
        (0.0, 0.5),
        0.9 * 2.0 / omega,
        &Fixed::default(),
        opts
    )
    .is_ok());
    assert!(Newmark::new(&dev, &m, &k, None, (0.25, 0.5), 100.0 / omega, &Fixed::default(), opts).is_ok());
    let stepper = Newmark::new(&dev, &m, &k, None, (0.25, 0.5), 0.1, &Fixed::default(), opts).unwrap();
    assert!(matches!(
        stepper.start(vec![0.0; 3], vec![0.0; 10], None),
        Err(Error::LengthMismatch { .. })
    ));
}
