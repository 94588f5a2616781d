// Draws are numbered by literals, so host and device draw the same ones.
use clforge::prelude::*;

#[lattice]
pub fn by_value(s: &Lattice<i32>, rng: &Draws, k: u32) -> i32 {
    if rng.draw(k) < 7 { -s.at(0, 0) } else { s.at(1, 0) }
}

fn main() {}
