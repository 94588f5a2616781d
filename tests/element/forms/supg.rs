//! A form no built-in operator expresses: steady advection–diffusion `−εΔu + b·∇u = f` with
//! SUPG stabilisation (Brooks & Hughes 1982), non-symmetric, assembled from forms and solved by
//! GMRES on the device, against the manufactured solution `u = sin πx sin πy`. Also BiCGStab and
//! GMRES themselves against a direct solve of random non-symmetric systems.

use super::poisson::{triangles, Tri3Heat};
use super::*;

use clforge::runtime::element::form::time::{assemble, assemble_load, is_symmetric, l2_error, steady, Fixed};
use clforge::runtime::element::sparse::{self, CgOptions, CsrPattern, DeviceCsr, HostCsr};

/// Advection–diffusion with the SUPG parameter `tau` of the element.
#[derive(Clone, Copy, Debug)]
struct Flow {
    eps: f64,
    b: [f64; 3],
    tau: f64,
}

const B: [f64; 3] = [1.0, 0.5, 0.0];

/// `ε ∇u·∇v + (b·∇u) v + τ (b·∇u)(b·∇v)`: Galerkin plus the streamline term (the residual's
/// `−εΔu` vanishes on linear triangles).
fn supg(u: &Field, v: &Field, _x: &Position, m: &Flow) -> f64 {
    m.eps * dot(u.grad(), v.grad()) + dot(m.b, u.grad()) * v.value() + m.tau * dot(m.b, u.grad()) * dot(m.b, v.grad())
}

fn exact(x: [f64; 3]) -> f64 {
    let pi = std::f64::consts::PI;
    (pi * x[0]).sin() * (pi * x[1]).sin()
}

/// `f = −εΔu + b·∇u` of the exact solution.
fn source(x: [f64; 3], eps: f64) -> f64 {
    let pi = std::f64::consts::PI;
    let (sx, cx, sy, cy) = (
        (pi * x[0]).sin(),
        (pi * x[0]).cos(),
        (pi * x[1]).sin(),
        (pi * x[1]).cos(),
    );
    2.0 * eps * pi * pi * sx * sy + B[0] * pi * cx * sy + B[1] * pi * sx * cy
}

/// `−εΔu + b·∇u = f` with `u = 0` on the unit square's boundary, on `n × n × 2` linear
/// triangles; `stabilised = false` leaves τ = 0 (plain Galerkin). Returns the mesh, the nodal
/// solution and whether the assembled matrix is symmetric.
fn solve(
    n: usize,
    eps: f64,
    stabilised: bool,
    tol: f64,
    f: impl Fn([f64; 3]) -> f64,
) -> (Vec<f64>, Vec<u32>, Vec<f64>, bool) {
    let dev = common::device();
    let (coords, cells) = triangles(n, 1);
    let h = 1.0 / n as f64;
    let speed = dot(B, B).sqrt();
    // τ = h / (2|b|) (coth Pe − 1/Pe), Pe = |b| h / (2ε): the optimal value in 1-D.
    let pe = speed * h / (2.0 * eps);
    let tau = if stabilised {
        h / (2.0 * speed) * (1.0 / pe.tanh() - 1.0 / pe)
    } else {
        0.0
    };
    let flow = Flow { eps, b: B, tau };
    let (_, a) = assemble::<Tri3Heat, _>(&coords, &cells, &[1.0], |u: &Field, v: &Field, x: &Position, _| {
        supg(u, v, x, &flow)
    })
    .unwrap();
    let load = assemble_load::<Tri3Heat, _>(&coords, &cells, &[1.0], |v: &Field, x: &Position, _| {
        let f = f(x.x);
        f * v.value() + flow.tau * f * dot(flow.b, v.grad())
    })
    .unwrap();
    let boundary: Vec<u32> = coords
        .chunks(2)
        .enumerate()
        .filter(|(_, p)| p.iter().any(|&c| c == 0.0 || c == 1.0))
        .map(|(i, _)| i as u32)
        .collect();
    let fixed = Fixed {
        values: vec![0.0; boundary.len()],
        dofs: boundary,
    };
    let opts = CgOptions { tol, max_iter: 5000 };
    let u = steady(&dev, &a, &load, &fixed, &opts).unwrap().x;
    let symmetric = is_symmetric(&a);
    (coords, cells, u, symmetric)
}

#[test]
fn supg_advection_diffusion_converges_to_the_manufactured_solution() {
    let eps = 0.01;
    let errors: Vec<f64> = [8, 16, 32]
        .iter()
        .map(|&n| {
            let (coords, cells, u, symmetric) = solve(n, eps, true, 1e-12, |x| source(x, eps));
            assert!(!symmetric, "advection makes the system non-symmetric");
            l2_error::<Tri3Heat>(&coords, &cells, &u, exact).unwrap()
        })
        .collect();
    for w in errors.windows(2) {
        let order = (w[0] / w[1]).log2();
        // SUPG: between h^1.5 (advection-dominated) and h^2 (resolved).
        assert!((1.4..2.4).contains(&order), "L2 order {order} ({errors:?})");
    }
    assert!(errors[2] < 2e-3, "{errors:?}");
}

/// Where advection dominates (Pe ≈ 28 per cell), `f = 1` makes boundary layers at the outflow
/// edges. The exact solution is positive inside; plain Galerkin oscillates to negative
/// values (8 % of the maximum here), SUPG stays non-negative.
#[test]
fn supg_removes_the_galerkin_oscillations_of_a_boundary_layer() {
    let (eps, n) = (1e-3, 16);
    let undershoot = |stabilised| {
        let (_, _, u, _) = solve(n, eps, stabilised, 1e-12, |_| 1.0);
        let top = u.iter().fold(0.0f64, |m, v| m.max(*v));
        let low = u.iter().fold(0.0f64, |m, v| m.min(*v));
        assert!(top > 0.5 && top.is_finite(), "max {top}");
        -low / top
    };
    let (galerkin, supg) = (undershoot(false), undershoot(true));
    assert!(galerkin > 0.04, "Galerkin undershoot {galerkin}, SUPG {supg}");
    assert!(supg < 0.01, "SUPG undershoot {supg} (Galerkin {galerkin})");
}

/// Solves `a x = b` by Gaussian elimination with partial pivoting.
fn dense_solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Vec<f64> {
    let n = b.len();
    for c in 0..n {
        let p = (c..n).max_by(|&i, &j| a[i][c].abs().total_cmp(&a[j][c].abs())).unwrap();
        a.swap(c, p);
        b.swap(c, p);
        let (top, rest) = a.split_at_mut(c + 1);
        let pivot = &top[c];
        for (r, row) in rest.iter_mut().enumerate() {
            let f = row[c] / pivot[c];
            for (x, p) in row[c..].iter_mut().zip(&pivot[c..]) {
                *x -= f * p;
            }
            b[c + 1 + r] -= f * b[c];
        }
    }
    let mut x = vec![0.0; n];
    for r in (0..n).rev() {
        x[r] = (b[r] - (r + 1..n).map(|k| a[r][k] * x[k]).sum::<f64>()) / a[r][r];
    }
    x
}

type Solver = fn(&DeviceCsr, &[f64], Option<&[f64]>, &CgOptions) -> clforge::runtime::Result<sparse::CgReport>;

/// GMRES with a short restart (5), so that restarts are exercised on these small systems.
fn gmres5(a: &DeviceCsr, b: &[f64], x0: Option<&[f64]>, o: &CgOptions) -> clforge::runtime::Result<sparse::CgReport> {
    sparse::gmres(a, b, x0, o, 5)
}

#[test]
fn bicgstab_and_gmres_solve_random_non_symmetric_systems_at_any_scale() {
    for (name, solve) in [("BiCGStab", sparse::bicgstab as Solver), ("GMRES(5)", gmres5 as Solver)] {
        solver_case(name, solve);
    }
    // A restart of 0 is refused.
    let dev = common::device();
    let host = HostCsr::new(CsrPattern::new(vec![0, 1, 2], vec![0, 1]).unwrap(), vec![1.0, 2.0]).unwrap();
    let csr = DeviceCsr::from_host(&dev, &host).unwrap();
    assert!(matches!(
        sparse::gmres(&csr, &[1.0, 1.0], None, &CgOptions::default(), 0),
        Err(Error::InvalidConfig(_))
    ));
}

fn solver_case(name: &str, solve: Solver) {
    let dev = common::device();
    let mut rng = common::rng(51);
    for (case, scale) in [1.0, 1e-200, 1e150, 3.0].into_iter().enumerate() {
        let n = 40 + 17 * case;
        // A banded non-symmetric matrix, diagonally dominant with a negative diagonal in places.
        let mut dense = vec![vec![0.0; n]; n];
        for (i, row) in dense.iter_mut().enumerate() {
            for x in &mut row[i.saturating_sub(3)..(i + 4).min(n)] {
                *x = rng.random_range(-1.0..1.0);
            }
            row[i] = if i % 5 == 0 { -8.0 } else { 8.0 };
        }
        let row_ptr: Vec<u32> = (0..=n)
            .map(|i| (0..i).map(|r| (r.saturating_sub(3)..(r + 4).min(n)).len() as u32).sum())
            .collect();
        let cols: Vec<u32> = (0..n)
            .flat_map(|r| (r.saturating_sub(3)..(r + 4).min(n)).map(|c| c as u32))
            .collect();
        let values: Vec<f64> = (0..n)
            .flat_map(|r| {
                (r.saturating_sub(3)..(r + 4).min(n))
                    .map(|c| dense[r][c])
                    .collect::<Vec<_>>()
            })
            .collect();
        let host = HostCsr::new(CsrPattern::new(row_ptr, cols).unwrap(), values).unwrap();
        let b: Vec<f64> = (0..n).map(|_| scale * rng.random_range(-1.0..1.0)).collect();
        let want = dense_solve(dense, b.clone());
        let csr = DeviceCsr::from_host(&dev, &host).unwrap();
        let got = sparse::bicgstab(
            &csr,
            &b,
            None,
            &CgOptions {
                tol: 1e-13,
                max_iter: 500,
            },
        )
        .unwrap();
        let top = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        for (g, w) in got.x.iter().zip(&want) {
            assert!((g - w).abs() <= 1e-9 * top, "{name}, scale {scale}: {g} vs {w}");
        }
        assert!(got.residual <= 1e-12, "{name}: {}", got.residual);
    }
    // Typed refusals: a zero diagonal, a non-finite right-hand side, too few iterations.
    let host = HostCsr::new(CsrPattern::new(vec![0, 1, 2], vec![0, 1]).unwrap(), vec![1.0, 0.0]).unwrap();
    let csr = DeviceCsr::from_host(&dev, &host).unwrap();
    assert!(matches!(
        solve(&csr, &[1.0, 1.0], None, &CgOptions::default()),
        Err(Error::NotPositiveDefinite { .. })
    ));
    let host = HostCsr::new(CsrPattern::new(vec![0, 1, 2], vec![0, 1]).unwrap(), vec![1.0, 2.0]).unwrap();
    let csr = DeviceCsr::from_host(&dev, &host).unwrap();
    assert!(matches!(
        solve(&csr, &[f64::NAN, 1.0], None, &CgOptions::default()),
        Err(Error::InvalidConfig(_))
    ));
    let x = solve(&csr, &[0.0, 0.0], None, &CgOptions::default()).unwrap();
    assert_eq!(x.x, vec![0.0, 0.0]);
}
