//! The θ-method's stability limit over forms. For θ < ½ a step of `M u̇ + K u = f` is stable
//! only while `Δt ≤ 2 / ((1 − 2θ) λ_max)`, `λ_max` the largest eigenvalue of `M⁻¹K`. Irons'
//! element bound gives `λ_max` from above: the largest generalized eigenvalue of `K_e x = λ M_e x`
//! over the elements (the mesh's `M` and `K` are sums of the element ones), each certified by
//! [`largest_eigenvalue`] on `L⁻¹ K_e L⁻ᵀ` (`M_e = L Lᵀ`).

use super::time::{of_element, Mesh};
use super::{bilinear, Field, Position};
use crate::element::matrices::Matrix;
use crate::element::sparse::{cg_host, CgOptions, HostCsr};
use crate::element::spec::Element;
use crate::element::stability::{largest_eigenvalue, SAFETY};
use crate::error::{Error, Result};

/// The largest `λ` of `K_e x = λ M_e x` over the mesh of [`super::time::assemble`], `K_e` and
/// `M_e` the forms `k` and `m` (each `M_e` symmetric positive definite).
pub fn lambda_max<E, K, M>(coords: &[f64], cells: &[u32], materials: &[E::Material], k: K, m: M) -> Result<f64>
where
    E: Element,
    K: Fn(&Field, &Field, &Position, &E::Material) -> f64,
    M: Fn(&Field, &Field, &Position, &E::Material) -> f64,
{
    let mesh = Mesh::<E>::new(coords, cells, materials.len())?;
    let mut best = 0.0f64;
    for (e, cell) in cells.chunks(E::NODES).enumerate() {
        let x = mesh.element(cell);
        let material = of_element(materials, e);
        let (ke, me) = (
            bilinear::<E, _, _>(&x, material, &k)?,
            bilinear::<E, _, _>(&x, material, &m)?,
        );
        let l = cholesky(&me)
            .ok_or_else(|| Error::InvalidConfig(format!("the mass form is not positive definite on element {e}")))?;
        let n = me.rows();
        let a = congruence(&l, &ke);
        best = best.max(largest_eigenvalue(&a, n));
    }
    Ok(best)
}

/// Refuses a θ-method step `dt` that is unstable for `λ_max` ([`lambda_max`]): for θ < ½,
/// `dt ≤ SAFETY · 2 / ((1 − 2θ) λ_max)`; θ ≥ ½ is stable at every step.
pub fn check_theta_step(theta: f64, dt: f64, lambda_max: f64) -> Result<()> {
    if theta >= 0.5 || lambda_max <= 0.0 {
        return Ok(());
    }
    let critical = 2.0 / ((1.0 - 2.0 * theta) * lambda_max);
    if dt.is_finite() && dt > 0.0 && dt <= SAFETY * critical {
        return Ok(());
    }
    Err(Error::UnstableTimeStep {
        dt,
        dt_max: SAFETY * critical,
        dt_critical: critical,
        safety: SAFETY,
        lambda_max,
        alpha: 0.0,
        element: 0,
        note: format!("; θ = {theta} < ½ is stable only below 2 / ((1 − 2θ) λ_max)"),
    })
}

/// `λ_max(M⁻¹K)` of assembled matrices by power iteration (each step a host CG solve with
/// `M`, the Rayleigh quotient `xᵀKx / xᵀMx`), until it changes by less than 1e-6 or after 200
/// steps, from an alternating start that excites the highest modes. It converges from below:
/// the integrators refuse steps beyond [`SAFETY`] of the limit it gives, and [`lambda_max`]
/// gives a certified bound from the forms where a caller needs one.
///
/// [`Error::NotPositiveDefinite`] when `M` is not (CG's refusal).
pub fn lambda_max_assembled(m: &HostCsr, k: &HostCsr) -> Result<f64> {
    let n = m.n();
    let opts = CgOptions {
        tol: 1e-10,
        max_iter: 10 * n.max(100),
    };
    let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
    let mut x: Vec<f64> = (0..n)
        .map(|i| if i % 2 == 0 { 1.0 } else { -1.0 } * (1.0 + 0.1 * (i % 7) as f64))
        .collect();
    let mut lambda = 0.0f64;
    for _ in 0..200 {
        let kx = k.mul(&x)?;
        let mx = m.mul(&x)?;
        let next = dot(&x, &kx) / dot(&x, &mx);
        if !next.is_finite() || next <= 0.0 {
            return Ok(lambda.max(0.0));
        }
        let converged = (next - lambda).abs() <= 1e-6 * next;
        lambda = next;
        if converged {
            break;
        }
        let z = cg_host(m, &kx, Some(&x), &opts)?.x;
        let top = z.iter().fold(0.0f64, |a, v| a.max(v.abs()));
        if top == 0.0 {
            break;
        }
        x = z.iter().map(|v| v / top).collect();
    }
    Ok(lambda)
}

/// Refuses a Newmark step `dt` (β < γ/2: conditionally stable) beyond [`SAFETY`] of
/// `Ω / ω_max`, `Ω = 1 / √(γ/2 − β)` (2 for central differences), `ω_max = √λ_max`.
pub fn check_newmark_step(beta: f64, gamma: f64, dt: f64, lambda_max: f64) -> Result<()> {
    if beta >= 0.5 * gamma || lambda_max <= 0.0 {
        return Ok(());
    }
    let critical = 1.0 / ((0.5 * gamma - beta).sqrt() * lambda_max.sqrt());
    if dt.is_finite() && dt > 0.0 && dt <= SAFETY * critical {
        return Ok(());
    }
    Err(Error::UnstableTimeStep {
        dt,
        dt_max: SAFETY * critical,
        dt_critical: critical,
        safety: SAFETY,
        lambda_max,
        alpha: 0.0,
        element: 0,
        note: format!(
            "; Newmark β = {beta} < γ/2 = {} is stable only below 1 / (√(γ/2 − β) ω_max), ω_max² = λ_max(M⁻¹K)",
            0.5 * gamma
        ),
    })
}

/// `L` with `a = L Lᵀ`, or `None` where `a` is not positive definite.
fn cholesky(a: &Matrix) -> Option<Vec<f64>> {
    let n = a.rows();
    let mut l = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..=i {
            let s: f64 = a[(i, j)] - (0..j).map(|k| l[i * n + k] * l[j * n + k]).sum::<f64>();
            if i == j {
                if s.is_nan() || s <= 0.0 {
                    return None;
                }
                l[i * n + i] = s.sqrt();
            } else {
                l[i * n + j] = s / l[j * n + j];
            }
        }
    }
    Some(l)
}

/// `L⁻¹ K L⁻ᵀ`, row-major, symmetrised.
fn congruence(l: &[f64], k: &Matrix) -> Vec<f64> {
    let n = k.rows();
    // Solve L Y = K (columns), then L Z = Yᵀ: Z = L⁻¹ K L⁻ᵀ.
    let forward = |b: &mut [f64], col: usize, src: &dyn Fn(usize) -> f64| {
        for i in 0..n {
            let s = src(i) - (0..i).map(|k| l[i * n + k] * b[k * n + col]).sum::<f64>();
            b[i * n + col] = s / l[i * n + i];
        }
    };
    let mut y = vec![0.0; n * n];
    for c in 0..n {
        forward(&mut y, c, &|i| k[(i, c)]);
    }
    let mut z = vec![0.0; n * n];
    for c in 0..n {
        let yt = y.clone();
        forward(&mut z, c, &|i| yt[c * n + i]);
    }
    (0..n * n).map(|ij| 0.5 * (z[ij] + z[(ij % n) * n + ij / n])).collect()
}
