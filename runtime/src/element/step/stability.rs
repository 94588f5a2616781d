//! The stability limit of explicit stepping, computed from the model's own matrices, and the
//! resolution rule of seed 000 (eq. 3.3.2).
//!
//! # The bound
//! The steppers integrate `M ü + C u̇ + K u = f` with central differences and `C = α·M`
//! (seed 000, section 5.3): `v⁺ = v⁻ + Δt·M⁻¹(f − K u − α·M v⁻)`, `u += Δt·v⁺`. Because `C` is
//! proportional to `M`, the eigenvectors of `M⁻¹K` decouple the scheme; a mode of `M⁻¹K x = λ x`
//! (`λ = ω²`) steps as `z² − (2 − αΔt − λΔt²) z + (1 − αΔt) = 0`, whose roots stay in the unit
//! circle exactly when `λΔt² + 2αΔt < 4`, that is
//!
//! ```text
//! Δt < Δt_crit = 4 / (α + sqrt(α² + 4 λ_max))      (= 2 / sqrt(λ_max) without damping)
//! ```
//!
//! `λ_max` of the whole mesh is bounded by the largest `λ` of the element problems
//! `K_e x = λ M_e x` when the element masses `M_e` add up to `M` (Irons' element bound:
//! `xᵀKx = Σ x_eᵀK_e x_e ≤ max λ_e · Σ x_eᵀM_e x_e`). The runtime gives each live element the
//! share `m_i / c_i` of the lumped mass `m_i` the stepper actually uses on its DOF `i` (`c_i`
//! live elements touch that node), which adds up to `M` whatever masses the model holds, and
//! drops fixed DOFs (they do not move). It then computes `λ_max` of every distinct
//! (material, mass shares) pair used by the mesh: power iteration on the symmetric
//! `W^½ K_e W^½` (`W = M_e⁻¹`), from a pseudo-random start of fixed seed, then a Cholesky
//! factorisation of `μI − W^½ K_e W^½` that proves no eigenvalue exceeds `μ` (bisection where
//! it does not). The Rayleigh quotient is never above `λ_max`, so the proof is what makes the
//! bound safe; rigid-body modes (`λ = 0`) do not matter since only the largest counts.
//!
//! The steppers accept `0 < Δt ≤ SAFETY · Δt_crit` ([`SAFETY`] = 0.95). A wave speed given by
//! the user ([`StepperConfig::c_max`](crate::element::problem::StepperConfig::c_max)) is reported
//! beside the bound, never used as it: `Δx / (2 sqrt(E/ρ))` is unsafe for nearly
//! incompressible materials, whose P waves are much faster than `sqrt(E/ρ)`.

use std::collections::HashMap;

use crate::element::problem::Model;
use crate::error::{Error, Result};

/// The fraction of `Δt_crit` the steppers accept. The bound itself is computed, not estimated
/// (certified `λ_max` of the exact `K_e` and lumped masses in use, an element bound that is
/// never below the mesh's): the 5 % margin covers the kernels' single-precision arithmetic and
/// keeps runs away from the limit itself, where the highest mode no longer decays.
pub const SAFETY: f64 = 0.95;

/// The explicit time-step limit of a model, from [`stability_bound`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StabilityBound {
    /// The largest eigenvalue `λ_max` (1/s²) of `K_e x = λ M_e x` over the distinct element
    /// matrices and mass shares in use: an upper bound of `λ_max(M⁻¹K)` of the mesh.
    pub lambda_max: f64,
    /// The mass-proportional damping `α` (1/s) the limit is for.
    pub alpha: f64,
    /// `Δt_crit = 4 / (α + sqrt(α² + 4 λ_max))` (s): central differences grow beyond it
    /// (infinite when nothing is stiff and nothing is damped).
    pub dt_critical: f64,
    /// `SAFETY · Δt_crit` (s): the largest time step the steppers accept.
    pub dt_max: f64,
    /// An element with `λ_max` (the first of its kind).
    pub element: usize,
}

/// Longitudinal wave speed `c = sqrt(E/ρ)` (seed 000, eq. 3.3.2): information about a material,
/// not a stability bound (see the module documentation).
pub fn wave_speed(young: f64, density: f64) -> f64 {
    (young / density).sqrt()
}

/// The explicit stability limit of `model` stepped with mass-proportional damping `alpha`
/// (see the module documentation for what is computed and why it is safe).
///
/// Errors where the model is invalid ([`Model::validate`]), a material's `K_e` is not symmetric
/// (the eigenproblem needs it), or `alpha` is negative or not finite.
pub fn stability_bound(model: &Model, alpha: f64) -> Result<StabilityBound> {
    model.validate()?;
    if !(alpha.is_finite() && alpha >= 0.0) {
        return Err(Error::InvalidConfig(format!(
            "damping α = {alpha} must be finite and non-negative; C = α·M with α < 0 feeds energy in"
        )));
    }
    let nd = model.nd();
    let what = if model.per_element { "element" } else { "material" };
    // Per element, each group is one element: its symmetric part is made when it is used.
    let symmetric: Vec<Vec<f64>> = if model.per_element {
        Vec::new()
    } else {
        model
            .stiffness
            .iter()
            .enumerate()
            .map(|(m, k)| symmetric_part(k, nd, what, m))
            .collect::<Result<_>>()?
    };
    let mut best = (0.0f64, 0usize);
    for group in mass_share_groups(model) {
        let own;
        let k = if model.per_element {
            own = symmetric_part(&model.stiffness[group.material], nd, what, group.material)?;
            &own
        } else {
            &symmetric[group.material]
        };
        let s: Vec<f64> = group.inv_mass.iter().map(|&w| w.sqrt()).collect();
        let a: Vec<f64> = (0..nd * nd).map(|ij| s[ij / nd] * k[ij] * s[ij % nd]).collect();
        let lambda = largest_eigenvalue(&a, nd);
        if lambda > best.0 {
            best = (lambda, group.element);
        }
    }
    let (lambda_max, element) = best;
    let dt_critical = 4.0 / (alpha + (alpha * alpha + 4.0 * lambda_max).sqrt());
    Ok(StabilityBound {
        lambda_max,
        alpha,
        dt_critical,
        dt_max: SAFETY * dt_critical,
        element,
    })
}

/// [`stability_bound`] for `alpha`, and [`Error::UnstableTimeStep`] unless
/// `0 < dt ≤ SAFETY · Δt_crit`. `c_max` (0: not given) only adds the wave-speed estimate
/// `Δx / (2 c_max)` to the message, for comparison.
pub fn check_time_step(model: &Model, dt: f64, alpha: f64, c_max: f64) -> Result<StabilityBound> {
    let bound = stability_bound(model, alpha)?;
    if !(dt.is_finite() && dt > 0.0 && dt <= bound.dt_max) {
        let note = if c_max > 0.0 {
            let dx = model.mesh.min_spacing();
            format!(
                "; the wave-speed estimate Δx / (2 c_max) = {:e} s (Δx = {dx:e} m, c_max = {c_max:e} m/s) is not \
                 a bound and was not used",
                dx / (2.0 * c_max)
            )
        } else {
            String::new()
        };
        return Err(Error::UnstableTimeStep {
            dt,
            dt_max: bound.dt_max,
            dt_critical: bound.dt_critical,
            safety: SAFETY,
            lambda_max: bound.lambda_max,
            alpha,
            element: bound.element,
            note,
        });
    }
    Ok(bound)
}

/// Checks the spatial resolution of seed 000 eq. 3.3.2: `Δx < c_min / (5 ω_exc)`.
pub fn check_resolution(dx_max: f64, c_min: f64, omega: f64) -> Result<()> {
    let bound = c_min / (5.0 * omega);
    if dx_max >= bound {
        return Err(Error::InvalidConfig(format!(
            "element size {dx_max:e} m is too coarse for excitation ω = {omega:e} rad/s: seed 000 eq. 3.3.2 \
             asks Δx < c_min / (5 ω) = {bound:e} m"
        )));
    }
    Ok(())
}

/// `(K + Kᵀ) / 2` in f64, or an error naming material `m` if `K` is not symmetric up to the
/// rounding of single precision.
fn symmetric_part(k: &[f64], nd: usize, what: &str, m: usize) -> Result<Vec<f64>> {
    let scale = k.iter().fold(0.0f64, |a, &v| a.max(v.abs()));
    let mut out = vec![0.0; nd * nd];
    for i in 0..nd {
        for j in 0..nd {
            let (a, b) = (k[i * nd + j], k[j * nd + i]);
            if !(a.is_finite() && (a - b).abs() <= 1e-5 * scale) {
                return Err(Error::InvalidConfig(format!(
                    "K_e of {what} {m} is not symmetric and finite: K[{i}][{j}] = {a:e}, K[{j}][{i}] = {b:e}; \
                     an element stiffness is symmetric, and the stability bound needs it"
                )));
            }
            out[i * nd + j] = 0.5 * (a + b);
        }
    }
    Ok(out)
}

/// Elements of one material (one element, with per-element matrices) whose DOFs get the same
/// inverse mass shares.
struct Group {
    /// The index of the group's `K_e` in `Model::stiffness` ([`Model::matrix_index`]).
    material: usize,
    /// `c_i / m_i` per element DOF (0 on fixed DOFs): the elementwise largest over the group.
    inv_mass: Vec<f64>,
    element: usize,
}

/// Groups beyond which the elements of one material share one group (elementwise largest
/// inverse masses: still an upper bound, looser where masses vary a lot).
const MAX_GROUPS: usize = 1024;

/// The distinct (material, inverse mass shares) of the live elements. Shares are keyed at
/// `f32` precision and each group keeps the elementwise largest, so the bound stays an upper
/// one: `λ_max(W^½ K W^½)` grows with `W` for a positive semi-definite `K`.
fn mass_share_groups(model: &Model) -> Vec<Group> {
    let spec = &model.spec;
    let (nodes, dofs) = (spec.nodes, spec.dofs);
    let conn = model.mesh.connectivity(spec.node_offsets);
    let live = |e: usize| !model.elements.dead[e];
    let mut touching = vec![0u32; model.mesh.node_count()];
    for e in (0..model.mesh.element_count()).filter(|&e| live(e)) {
        for &n in &conn[e * nodes..(e + 1) * nodes] {
            touching[n as usize] += 1;
        }
    }
    let mut groups: Vec<Group> = Vec::new();
    let mut index: HashMap<Vec<u32>, usize> = HashMap::new();
    let mut merged = false;
    let mut key = Vec::with_capacity(1 + nodes * dofs);
    let mut shares = vec![0.0f64; nodes * dofs];
    for e in (0..model.mesh.element_count()).filter(|&e| live(e)) {
        let material = model.matrix_index(e);
        for (a, &n) in conn[e * nodes..(e + 1) * nodes].iter().enumerate() {
            for d in 0..dofs {
                let i = n as usize * dofs + d;
                shares[a * dofs + d] = if model.fixed[i] {
                    0.0
                } else {
                    f64::from(touching[n as usize]) / model.mass[i]
                };
            }
        }
        key.clear();
        key.push(u32::from(!merged));
        key.push(material as u32);
        if !merged {
            key.extend(shares.iter().map(|&w| (w as f32).to_bits()));
        }
        match index.get(key.as_slice()) {
            Some(&g) => {
                let group = &mut groups[g];
                for (w, &s) in group.inv_mass.iter_mut().zip(&shares) {
                    *w = w.max(s);
                }
            }
            None => {
                index.insert(key.clone(), groups.len());
                groups.push(Group {
                    material,
                    inv_mass: shares.clone(),
                    element: e,
                });
            }
        }
        // Per-element matrices: one group per element, nothing to merge.
        if !merged && !model.per_element && groups.len() > MAX_GROUPS {
            // One group per material from here on, holding everything seen so far.
            merged = true;
            index.clear();
            let mut per_material: Vec<Group> = Vec::new();
            for g in groups.drain(..) {
                match per_material.iter_mut().find(|p| p.material == g.material) {
                    Some(p) => {
                        for (w, &s) in p.inv_mass.iter_mut().zip(&g.inv_mass) {
                            *w = w.max(s);
                        }
                    }
                    None => per_material.push(g),
                }
            }
            for (i, g) in per_material.iter().enumerate() {
                index.insert(vec![0, g.material as u32], i);
            }
            groups = per_material;
        }
    }
    groups
}

/// The largest eigenvalue of the symmetric `n × n` matrix `a` (row-major), from above: power
/// iteration from a fixed pseudo-random start gives the Rayleigh quotient `ρ ≤ λ_max`, and a
/// Cholesky factorisation of `μI − a` with `μ = ρ (1 + 10⁻⁹)` proves `λ_max < μ`; where it
/// fails (an unconverged top of the spectrum) bisection between `ρ` and the Gershgorin bound
/// finds `μ` to a relative `10⁻¹⁰`. Returns `μ`, within a relative `10⁻⁹` above `λ_max`
/// (0 for a negative definite or zero matrix).
///
/// ```
/// # use clforge_runtime::fem::stability::largest_eigenvalue;
/// // The 1-D Laplacian of 6 points: eigenvalues 2 − 2 cos(kπ / 7).
/// let n: usize = 6;
/// let a: Vec<f64> = (0..n * n)
///     .map(|ij| match (ij / n).abs_diff(ij % n) { 0 => 2.0, 1 => -1.0, _ => 0.0 })
///     .collect();
/// let exact = 2.0 - 2.0 * (6.0 * std::f64::consts::PI / 7.0).cos();
/// let got = largest_eigenvalue(&a, n);
/// assert!(got >= exact && got <= exact * (1.0 + 1e-9), "{got} vs {exact}");
/// ```
pub fn largest_eigenvalue(a: &[f64], n: usize) -> f64 {
    if n == 0 || a.len() != n * n {
        return 0.0;
    }
    if a.iter().any(|v| !v.is_finite()) {
        return f64::INFINITY;
    }
    // On `a` scaled exactly to entries of order one, and scaled back: sums, products and the
    // factorisation of `a` near 1e-300 or 1e300 would underflow or overflow.
    let Some(e) = crate::num::binary_exponent(a) else {
        return 0.0;
    };
    let unit: Vec<f64> = a.iter().map(|&v| crate::num::times_pow2(v, -e)).collect();
    crate::num::times_pow2(largest_eigenvalue_unit(&unit, n), e)
}

/// [`largest_eigenvalue`] of a matrix whose largest entry is of order one.
fn largest_eigenvalue_unit(a: &[f64], n: usize) -> f64 {
    let gershgorin = (0..n)
        .map(|i| a[i * n..(i + 1) * n].iter().map(|v| v.abs()).sum::<f64>())
        .fold(0.0f64, f64::max);
    if gershgorin == 0.0 || !gershgorin.is_finite() {
        return if gershgorin == 0.0 { 0.0 } else { f64::INFINITY };
    }
    let mul = |x: &[f64], y: &mut [f64]| {
        for (i, yi) in y.iter_mut().enumerate() {
            *yi = a[i * n..(i + 1) * n].iter().zip(x).map(|(p, q)| p * q).sum();
        }
    };
    // xorshift64*: a start vector with components along every eigenvector (almost surely),
    // the same on every run.
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut x: Vec<f64> = (0..n)
        .map(|_| {
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            (state.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        })
        .collect();
    let mut y = vec![0.0; n];
    let mut rho = 0.0f64;
    let mut steady = 0;
    for _ in 0..10_000 {
        let norm = x.iter().map(|v| v * v).sum::<f64>().sqrt();
        if norm == 0.0 {
            break;
        }
        x.iter_mut().for_each(|v| *v /= norm);
        mul(&x, &mut y);
        let next: f64 = x.iter().zip(&y).map(|(p, q)| p * q).sum();
        steady = if (next - rho).abs() <= 1e-14 * gershgorin {
            steady + 1
        } else {
            0
        };
        rho = next;
        if steady >= 8 {
            break;
        }
        // Power iteration on a + G·I: its spectrum is non-negative, so the largest eigenvalue
        // of `a` wins even when `a` has larger negative ones.
        for (xi, yi) in x.iter_mut().zip(&y) {
            *xi = yi + gershgorin * *xi;
        }
    }
    let below = |mu: f64| positive_definite(a, n, mu);
    if rho <= 0.0 && below(0.0) {
        return 0.0;
    }
    let mut lo = rho.max(0.0);
    let mu = lo * (1.0 + 1e-9) + 1e-15 * gershgorin;
    if below(mu) {
        return mu;
    }
    let mut hi = gershgorin * (1.0 + 1e-12);
    lo = lo.max(mu);
    while hi - lo > 1e-10 * hi {
        let mid = 0.5 * (lo + hi);
        if below(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

/// Whether `μI − a` is positive definite (every eigenvalue of `a` below `μ`), by Cholesky.
fn positive_definite(a: &[f64], n: usize, mu: f64) -> bool {
    let mut l = vec![0.0; n * n];
    for j in 0..n {
        let mut d = mu - a[j * n + j];
        for k in 0..j {
            d -= l[j * n + k] * l[j * n + k];
        }
        if d.is_nan() || d <= 0.0 {
            return false;
        }
        let d = d.sqrt();
        l[j * n + j] = d;
        for i in j + 1..n {
            let mut s = -a[i * n + j];
            for k in 0..j {
                s -= l[i * n + k] * l[j * n + k];
            }
            l[i * n + j] = s / d;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn laplacian(n: usize) -> Vec<f64> {
        (0..n * n)
            .map(|ij| match (ij / n).abs_diff(ij % n) {
                0 => 2.0,
                1 => -1.0,
                _ => 0.0,
            })
            .collect()
    }

    fn check(a: &[f64], n: usize, exact: f64) {
        let got = largest_eigenvalue(a, n);
        assert!(
            got >= exact && got <= exact + 1e-9 * exact.abs().max(1.0) + 1e-12,
            "{got} vs {exact}"
        );
    }

    #[test]
    fn largest_eigenvalue_is_bracketed_from_above() {
        for n in [1, 2, 5, 24, 60] {
            let exact = 2.0 - 2.0 * (n as f64 * std::f64::consts::PI / (n + 1) as f64).cos();
            check(&laplacian(n), n, exact);
        }
        // A repeated top eigenvalue, a near-degenerate gap, zero (rigid-body) modes, a larger
        // negative eigenvalue, and nothing positive at all.
        let diag = |d: &[f64]| {
            let n = d.len();
            (0..n * n)
                .map(|ij| if ij / n == ij % n { d[ij / n] } else { 0.0 })
                .collect::<Vec<f64>>()
        };
        check(&diag(&[3.0, 3.0, 1.0, 0.0]), 4, 3.0);
        check(&diag(&[1.0, 1.0 - 1e-9, 0.5]), 3, 1.0);
        check(&diag(&[0.0, 0.0, 2.0, 0.0]), 4, 2.0);
        check(&diag(&[-10.0, 1.0, 0.5]), 3, 1.0);
        assert_eq!(largest_eigenvalue(&diag(&[-1.0, -2.0]), 2), 0.0);
        // At every scale of f64, subnormal entries included: the scaled eigenvalue.
        for s in [1e-315, 1e-300, 1e-150, 1e150, 1e300, 1e307] {
            let n = 24;
            let exact = 2.0 - 2.0 * (n as f64 * std::f64::consts::PI / (n + 1) as f64).cos();
            let a: Vec<f64> = laplacian(n).iter().map(|v| v * s).collect();
            let got = largest_eigenvalue(&a, n);
            // Subnormal entries carry fewer digits: 1e-315 has about 14 bits.
            let tol = if s < 1e-307 { 1e-4 } else { 1e-9 };
            assert!(
                got >= exact * s * (1.0 - tol) && got <= exact * s * (1.0 + tol),
                "scale {s:e}: {got:e} vs {:e}",
                exact * s
            );
        }
        // Row sums beyond f64 (2e308) with a representable largest eigenvalue (√2 · 1e308).
        let s = 1e308;
        let got = largest_eigenvalue(&[s, s, s, -s], 2);
        let want = std::f64::consts::SQRT_2 * s;
        assert!(got >= want * (1.0 - 1e-12) && got <= want * (1.0 + 1e-8), "{got:e}");
        assert_eq!(largest_eigenvalue(&[0.0; 9], 3), 0.0);
        // A rotated copy: the start vector does not line up with the axes by luck.
        let (c, s) = (0.6f64, 0.8f64);
        let r = [c, -s, s, c];
        let d = [5.0, 0.0, 0.0, -1.0];
        let mut a = [0.0; 4];
        for i in 0..2 {
            for j in 0..2 {
                a[i * 2 + j] = (0..2).map(|k| r[i * 2 + k] * d[k * 2 + k] * r[j * 2 + k]).sum();
            }
        }
        check(&a, 2, 5.0);
    }
}
