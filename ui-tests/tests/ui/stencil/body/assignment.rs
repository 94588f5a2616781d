// An assignment in the body: a stencil returns the new value instead of assigning.
use clforge::prelude::*;

#[clforge::stencil]
pub fn smooth(u: &Grid<f32>) -> f32 {
    let x = u.at(0, 0);
    x = 2.0 * x;
    x
}

fn main() {}
