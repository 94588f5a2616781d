//! A system of two fields: Gray-Scott reaction-diffusion, both fields from one kernel.

use clforge::prelude::*;

/// Gray-Scott reaction-diffusion parameters.
#[derive(clforge::Params, Clone, Copy, Debug)]
pub struct Gs {
    pub du: f32,
    pub dv: f32,
    pub feed: f32,
    pub kill: f32,
    pub dt: f32,
}

/// One explicit Euler step of Gray-Scott (Pearson 1993): both fields in one kernel, each
/// neighbour read once.
#[clforge::stencil(boundary = periodic)]
pub fn gray_scott(u: &Grid<f32>, v: &Grid<f32>, k: &Gs) -> (f32, f32) {
    let uc = u.at(0, 0);
    let vc = v.at(0, 0);
    let lap_u = u.at(1, 0) + u.at(-1, 0) + u.at(0, 1) + u.at(0, -1) - 4.0 * uc;
    let lap_v = v.at(1, 0) + v.at(-1, 0) + v.at(0, 1) + v.at(0, -1) - 4.0 * vc;
    let uvv = uc * vc * vc;
    (
        uc + k.dt * (k.du * lap_u - uvv + k.feed * (1.0 - uc)),
        vc + k.dt * (k.dv * lap_v + uvv - (k.feed + k.kill) * vc),
    )
}
