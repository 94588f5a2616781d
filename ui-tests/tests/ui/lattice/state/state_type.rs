// The returned value replaces the site's: the types must agree.
use clforge::prelude::*;

#[lattice]
pub fn mismatch(s: &Lattice<i32>) -> f32 {
    s.at(1, 0) as f32
}

fn main() {}
