// A call to an unknown function `foo(x)`: only math functions may be called.
use clforge::prelude::*;

#[clforge::stencil]
pub fn smooth(u: &Grid<f32>) -> f32 {
    let x = u.at(0, 0);
    foo(x)
}

fn main() {}
