// A diagonal neighbour has the reader's colour: the checkerboard would race on it.
use clforge::prelude::*;

#[lattice]
pub fn diagonal(s: &Lattice<i32>, rng: &Draws) -> i32 {
    if rng.draw(0) < 100 { s.at(1, 1) } else { s.at(0, 0) }
}

fn main() {}
