// `return` in a body: a stencil's value is its last expression.
use clforge::prelude::*;

#[clforge::stencil]
pub fn early(u: &Grid<f32>) -> f32 {
    let x = u.at(0, 0);
    return 0.5 * x;
}

fn main() {}
