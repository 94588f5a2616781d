// `.at` with the wrong number of offsets: a 2-D stencil reads `u.at(dx, dy)`.
use clforge::prelude::*;

#[clforge::stencil]
pub fn smooth(u: &Grid<f32>) -> f32 {
    0.5 * (u.at(1, 0) + u.at(-1, 0, 0))
}

fn main() {}
