// `if` without `else`: every path must compute the new value.
use clforge::prelude::*;

#[clforge::stencil]
pub fn clip(u: &Grid<f32>) -> f32 {
    if u.at(0, 0) > 1.0 {
        1.0
    }
}

fn main() {}
