// A clamped read three sites away can land on a site of the reader's colour.
use clforge::prelude::*;

#[lattice(boundary = clamp)]
pub fn far(s: &Lattice<f32>) -> f32 {
    s.at(1, 0) + s.at(-3, 0)
}

fn main() {}
