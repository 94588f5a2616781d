// A non-literal offset `u.at(i, 0)`: offsets must be integer literals.
use clforge::prelude::*;

#[clforge::stencil]
pub fn shift(u: &Grid<f32>) -> f32 {
    let i = 1;
    u.at(i, 0)
}

fn main() {}
