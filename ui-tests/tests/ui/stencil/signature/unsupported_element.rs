// A grid of unsupported element type `&Grid<i64>`.
use clforge::prelude::*;

#[clforge::stencil]
pub fn widen(u: &Grid<i64>) -> f32 {
    u.at(0, 0) as f32
}

fn main() {}
