// A loop over a range that is not constant.

use clforge::prelude::*;

#[clforge::stencil]
fn filter(u: &Grid<f32>, n: i32, k: f32) -> f32 {
    const W: [f32; 3] = [0.25, 0.5, 0.25];
    let mut s = 0.0;
    for q in 0..n {
        s += u.at(q as isize, 0);
    }
    s
}

fn main() {}
