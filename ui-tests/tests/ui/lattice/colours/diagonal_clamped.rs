// A diagonal read is legal with four colours, but not two sites out with a clamped edge.
use clforge::prelude::*;

#[lattice(boundary = clamp)]
pub fn far_diagonal(s: &Lattice<f32>) -> f32 {
    s.at(1, 1) + s.at(2, 1)
}

fn main() {}
