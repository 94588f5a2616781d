//! A Jacobi sweep with its convergence check fused: the largest change as a reduction.

use clforge::prelude::*;
use clforge::runtime::Max;

/// One Jacobi sweep that also reports its largest change (the convergence check, fused).
#[clforge::stencil(boundary = clamp)]
pub fn jacobi_checked(u: &Grid<f32>, f: &Grid<f32>, h2: f32) -> (f32, Max<f32>) {
    let next = 0.25 * (u.at(1, 0) + u.at(-1, 0) + u.at(0, 1) + u.at(0, -1) - h2 * f.at(0, 0));
    (next, Max((next - u.at(0, 0)).abs()))
}
