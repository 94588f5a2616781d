//! The stability and resolution limits of explicit stepping (seed 000, eqs. 3.3.1-3.3.2).

use crate::error::{Error, Result};

/// Longitudinal wave speed `c = sqrt(E/ρ)` (seed 000, eq. 3.3.2).
pub fn wave_speed(young: f64, density: f64) -> f64 {
    (young / density).sqrt()
}

/// The largest stable time step of seed 000 eq. 3.3.2: `Δt < Δx / (2 c_max)`.
///
/// ```
/// # use clforge_runtime::fem::stability::{stability_bound, wave_speed};
/// let c = wave_speed(200e9, 7800.0); // steel, ≈ 5064 m/s
/// assert!((stability_bound(1e-6, c) - 9.87e-11).abs() < 1e-12);
/// ```
pub fn stability_bound(dx_min: f64, c_max: f64) -> f64 {
    dx_min / (2.0 * c_max)
}

/// Checks `dt` against seed 000 eqs. 3.3.1-3.3.2 and explains the bound when it is violated.
pub fn check_time_step(dt: f64, dx_min: f64, c_max: f64) -> Result<()> {
    let bound = stability_bound(dx_min, c_max);
    if !(dt > 0.0 && dt < bound) {
        return Err(Error::InvalidConfig(format!(
            "time step {dt:e} s violates the stability bound Δt < Δx / (2 c_max) = {bound:e} s (seed 000, \
             eqs. 3.3.1-3.3.2) with Δx = {dx_min:e} m the shortest node distance and c_max = sqrt(E/ρ) = \
             {c_max:e} m/s the fastest longitudinal wave speed; choose 0 < dt < {bound:e}"
        )));
    }
    Ok(())
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
