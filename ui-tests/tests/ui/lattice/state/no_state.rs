// A lattice rule updates a state in place: `&Grid` alone is not one.
use clforge::prelude::*;

#[lattice]
pub fn stateless(u: &Grid<f32>, rng: &Draws) -> f32 {
    u.at(1, 0) * rng.uniform(0)
}

fn main() {}
