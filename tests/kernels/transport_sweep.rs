//! Seed 001, scheme (13): the first half-step of the splitting for convection–diffusion,
//! upwind in the positive wind parts, swept forward in x and y in place; cells marked
//! Dirichlet keep their value, Neumann cells copy the neighbour inside.
use clforge::prelude::*;

#[derive(Params, Clone, Copy, Debug)]
pub struct Transport {
    /// Diffusion coefficient μ.
    pub mu: f32,
    /// Decay σ.
    pub sigma: f32,
    /// Time step τ.
    pub tau: f32,
    pub h1: f32,
    pub h2: f32,
}

pub const INTERIOR: u8 = 0;
pub const NEUMANN_WEST: u8 = 2;

/// φ^{n+1/2} from φ^n: new values at (i-1, j) and (i, j-1), old at (i+1, j), (i, j+1), (i, j).
#[sweep(order = forward)]
pub fn transport_forward(
    c: &Sweep<f32>,
    u: &Grid<f32>,
    v: &Grid<f32>,
    f: &Grid<f32>,
    mask: &Grid<u8>,
    k: &Transport,
) -> f32 {
    let a = 0.5 * (u.at(0, 0) + u.at(0, 0).abs());
    let b = 0.5 * (v.at(0, 0) + v.at(0, 0).abs());
    let d1 = k.mu / (2.0 * k.h1 * k.h1) - a / (2.0 * k.h1);
    let d2 = k.mu / (2.0 * k.h2 * k.h2) - b / (2.0 * k.h2);
    let diag = 1.0 / k.tau
        + k.mu / (2.0 * k.h1 * k.h1)
        + k.mu / (2.0 * k.h2 * k.h2)
        + a / (2.0 * k.h1)
        + b / (2.0 * k.h2)
        + 0.5 * k.sigma;
    let rhs = (1.0 / k.tau - d1 - d2) * c.old(0, 0)
        + (a / k.h1 + d1) * c.new(-1, 0)
        + (b / k.h2 + d2) * c.new(0, -1)
        + d1 * c.old(1, 0)
        + d2 * c.old(0, 1)
        + 0.5 * f.at(0, 0);
    match mask.at(0, 0) {
        INTERIOR => rhs / diag,
        NEUMANN_WEST => c.old(1, 0),
        _ => c.old(0, 0),
    }
}
