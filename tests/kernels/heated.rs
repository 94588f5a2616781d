//! A source term that depends on the point's position (`at: Point`).

use clforge::prelude::*;

/// Heat with a source that depends on position, `x(1 - x)(y - 1/2)` at `h = 1/nx` (polynomial,
/// so that device and host round alike; transcendental functions may differ by an ulp).
#[clforge::stencil(boundary = periodic)]
pub fn heated(u: &Grid<f32>, at: Point, r: f32) -> f32 {
    let x = at.x as f32 / at.nx as f32;
    let y = at.y as f32 / at.ny as f32;
    let source = x * (1.0 - x) * (y - 0.5);
    u.at(0, 0) + r * (u.at(1, 0) + u.at(-1, 0) + u.at(0, 1) + u.at(0, -1) - 4.0 * u.at(0, 0)) + 0.01 * source
}
