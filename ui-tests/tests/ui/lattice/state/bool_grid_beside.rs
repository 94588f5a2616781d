// `bool` sites are bit-packed only as a lattice rule's state: a grid beside it holds numbers.
use clforge::prelude::*;

#[lattice]
pub fn rule(s: &Lattice<bool>, w: &Grid<bool>) -> bool {
    s.at(1, 0) && w.at(0, 0)
}

fn main() {}
