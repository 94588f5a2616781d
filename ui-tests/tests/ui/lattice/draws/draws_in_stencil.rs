// A random stream belongs to a lattice rule; a stencil is deterministic.
use clforge::prelude::*;

#[stencil]
pub fn noisy(u: &Grid<f32>, rng: &Draws) -> f32 {
    u.at(0, 0)
}

fn main() {}
