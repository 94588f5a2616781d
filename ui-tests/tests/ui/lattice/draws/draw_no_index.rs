// A draw without its number: the error points at the method.
use clforge::prelude::*;

#[lattice]
pub fn unnumbered(s: &Lattice<f32>, rng: &Draws) -> f32 {
    s.at(1, 0) * rng.uniform()
}

fn main() {}
