// Mixed dimensions: a `&Grid<f32>` (2-D) next to a `&Grid3<f32>` (3-D).
use clforge::prelude::*;

#[clforge::stencil]
pub fn mix(u: &Grid<f32>, v: &Grid3<f32>) -> f32 {
    u.at(0, 0) + v.at(0, 0, 0)
}

fn main() {}
