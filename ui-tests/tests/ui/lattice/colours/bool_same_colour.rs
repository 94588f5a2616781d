// The checkerboard's legality holds for bit-packed sites too: `s.at(2, 0)` has the reader's colour.
use clforge::prelude::*;

#[lattice]
pub fn rule(s: &Lattice<bool>) -> bool {
    s.at(1, 0) ^ s.at(2, 0)
}

fn main() {}
