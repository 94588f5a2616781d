// An accumulator assigned inside a branch.

use clforge::prelude::*;

#[clforge::stencil]
fn filter(u: &Grid<f32>, n: i32, k: f32) -> f32 {
    const W: [f32; 3] = [0.25, 0.5, 0.25];
    let mut s = u.at(0, 0);
    if k > 0.0 {
        s += k;
    }
    s * W[1]
}

fn main() {}
