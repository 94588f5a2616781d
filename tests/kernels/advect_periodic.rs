use clforge::prelude::*;

/// Upwind advection on a periodic 2-D domain with Courant numbers `cx`, `cy`:
/// the upwind side is chosen per point from the sign of the velocity.
#[stencil(boundary = periodic)]
pub fn advect_periodic(q: &Grid<f32>, cx: f32, cy: f32) -> f32 {
    let dqx = if cx > 0.0 {
        q.at(0, 0) - q.at(-1, 0)
    } else {
        q.at(1, 0) - q.at(0, 0)
    };
    let dqy = if cy > 0.0 {
        q.at(0, 0) - q.at(0, -1)
    } else {
        q.at(0, 1) - q.at(0, 0)
    };
    q.at(0, 0) - cx.abs() * dqx - cy.abs() * dqy
}
