// A bit-packed state is replaced by the rule's value: it returns `bool`.
use clforge::prelude::*;

#[lattice]
pub fn rule(s: &Lattice<bool>) -> u32 {
    s.at(1, 0) as u32
}

fn main() {}
