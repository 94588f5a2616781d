// An assignment to a binding that is not `let mut`.
use clforge::prelude::*;

#[clforge::stencil]
pub fn smooth(u: &Grid<f32>) -> f32 {
    let x = u.at(0, 0);
    x = 2.0 * x;
    x
}

fn main() {}
