// A read two sites away along one axis has the reader's parity in every colouring by parity:
// the sites would race on it.
use clforge::prelude::*;

#[lattice]
pub fn two_away(s: &Lattice<i32>, rng: &Draws) -> i32 {
    if rng.draw(0) < 100 { s.at(2, 0) } else { s.at(1, 0) }
}

fn main() {}
