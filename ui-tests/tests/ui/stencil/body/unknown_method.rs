// An unknown method `x.frobnicate()`: only the math methods of `f32`/`f64` are allowed.
use clforge::prelude::*;

#[clforge::stencil]
pub fn smooth(u: &Grid<f32>) -> f32 {
    let x = u.at(0, 0);
    x.frobnicate()
}

fn main() {}
