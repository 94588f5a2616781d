//! The floating-point element types of the benchmarks (the bottom of the crate: the cases
//! and the seed baselines both build on it).

use clforge::runtime::Scalar;

/// A floating-point element type of the benchmarks.
pub trait Real: Scalar + From<f32> + Into<f64> + PartialEq {
    const NAME: &'static str;
    /// Relative tolerance of the kernel checks: a few ulps.
    const TOL: f64;
}

impl Real for f32 {
    const NAME: &'static str = "f32";
    const TOL: f64 = 4.0 * f32::EPSILON as f64;
}

impl Real for f64 {
    const NAME: &'static str = "f64";
    const TOL: f64 = 4.0 * f64::EPSILON;
}
