use clforge::prelude::*;

/// Minmod-limited slope on a 1-D line with clamped (zero-gradient) ends, exercising
/// math functions, `if`/`else` on varying values and wider offsets.
#[stencil(boundary = clamp)]
pub fn limiter_clamp(q: &Grid1<f32>) -> f32 {
    let left = q.at(0) - q.at(-1);
    let right = q.at(1) - q.at(0);
    let slope = if left * right <= 0.0 {
        0.0
    } else {
        left.abs().min(right.abs()) * (left / left.abs())
    };
    let smooth = (q.at(2) + q.at(-2) + 2.0 * q.at(0)).sqrt().exp().ln();
    q.at(0) + 0.5 * slope + 0.0 * smooth.max(0.0).powf(2.0)
}
