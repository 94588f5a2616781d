//! The generated Jacobi solves a manufactured Poisson problem with second-order accuracy:
//! ψ = sin(πx)·sin(πy) on the unit square, ω = Δψ = -2π²ψ, ψ = 0 on the boundary.

use crate::kernels;

use clforge::prelude::*;
use kernels::jacobi::*;

/// Max-norm error of the converged Jacobi solution on an n x n grid (spacing h = 1/(n-1)).
fn solve(n: usize) -> f64 {
    let h = 1.0 / (n - 1) as f64;
    let shape = Shape::d2(n, n);
    let exact = |[x, y, _]: [usize; 3]| {
        (std::f64::consts::PI * x as f64 * h).sin() * (std::f64::consts::PI * y as f64 * h).sin()
    };
    let omega = HostGrid::from_fn(shape, |p| (-2.0 * std::f64::consts::PI.powi(2) * exact(p)) as f32).unwrap();
    let cell = HostGrid::from_fn(shape, |[x, y, _]| {
        if x == 0 || y == 0 || x == n - 1 || y == n - 1 {
            BODY
        } else {
            FLUID
        }
    })
    .unwrap();
    // ψ = (ψE + ψW + ψN + ψS - h²ω) / 4
    let k = Coeffs {
        a: 0.25,
        b: 0.25,
        c: (-0.25 * h * h) as f32,
    };
    let device = Device::default().unwrap();
    let mut psi = PingPong::from_host(&device, &HostGrid::new(shape).unwrap()).unwrap();
    let (w, cell) = (
        DeviceGrid::from_host(&device, &omega).unwrap(),
        DeviceGrid::from_host(&device, &cell).unwrap(),
    );
    let plan = Jacobi::plan(&device, &LaunchConfig::variant(Variant::Vector), shape).unwrap();
    // Jacobi's error shrinks by cos(πh) per sweep: enough sweeps to bring it below 1e-6.
    let sweeps = (2.0 * (1e6f64).ln() / (std::f64::consts::PI * h).powi(2)) as usize;
    for _ in 0..sweeps {
        let (next, cur) = psi.split();
        Jacobi::launch_plan(&plan, next, cur, &w, &cell, &k).unwrap();
        psi.swap();
    }
    let result = psi.current().to_host().unwrap();
    clforge::runtime::UpdateRegion::new(shape, [0, 0, 0], Boundary::Periodic)
        .points()
        .map(|p| (f64::from(result.get(p).unwrap()) - exact(p)).abs())
        .fold(0.0, f64::max)
}

#[test]
fn jacobi_converges_at_second_order() {
    let errors: Vec<f64> = [9, 17, 33].into_iter().map(solve).collect();
    for pair in errors.windows(2) {
        let order = (pair[0] / pair[1]).log2();
        assert!(
            (1.8..2.3).contains(&order),
            "observed order {order:.2} from errors {errors:?}"
        );
    }
}
