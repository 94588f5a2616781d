// An assignment to something that is not a `let mut` of the body.

use clforge::prelude::*;

#[clforge::stencil]
fn filter(u: &Grid<f32>, n: i32, k: f32) -> f32 {
    const W: [f32; 3] = [0.25, 0.5, 0.25];
    let s = u.at(0, 0);
    k = s * W[0];
    s
}

fn main() {}
