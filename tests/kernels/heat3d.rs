use clforge::prelude::*;

/// Explicit heat step with the 3-D 7-point Laplacian; `r = κ·Δt/h²`.
#[stencil]
pub fn heat3d(u: &Grid3<f32>, r: f32) -> f32 {
    let centre = u.at(0, 0, 0);
    let lap =
        u.at(1, 0, 0) + u.at(-1, 0, 0) + u.at(0, 1, 0) + u.at(0, -1, 0) + u.at(0, 0, 1) + u.at(0, 0, -1) - 6.0 * centre;
    centre + r * lap
}
