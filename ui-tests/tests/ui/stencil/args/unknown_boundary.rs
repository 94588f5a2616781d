// An unknown boundary `boundary = reflective`: expected `fixed`, `periodic` or `clamp`.
use clforge::prelude::*;

#[clforge::stencil(boundary = reflective)]
pub fn smooth(u: &Grid<f32>) -> f32 {
    0.25 * (u.at(1, 0) + u.at(-1, 0) + u.at(0, 1) + u.at(0, -1))
}

fn main() {}
