// The stream has `draw` and `uniform`.
use clforge::prelude::*;

#[lattice]
pub fn gaussian(s: &Lattice<f32>, rng: &Draws) -> f32 {
    s.at(1, 0) + rng.normal(0)
}

fn main() {}
