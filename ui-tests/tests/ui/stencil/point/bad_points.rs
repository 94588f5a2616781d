// The point argument (`at: Point`) read wrongly: each is refused at the offending token.
use clforge::prelude::*;

// A 2-D point has no `z`.
#[clforge::stencil]
pub fn no_z(u: &Grid<f32>, at: Point) -> f32 {
    u.at(0, 0) + at.z as f32
}

// The point itself is not a value.
#[clforge::stencil]
pub fn bare(u: &Grid<f32>, at: Point) -> f32 {
    let p = at;
    u.at(0, 0)
}

// One point per stencil.
#[clforge::stencil]
pub fn two(u: &Grid<f32>, a: Point, b: Point) -> f32 {
    u.at(0, 0)
}

// Sweeps do not read their point.
#[clforge::sweep]
pub fn swept(c: &Sweep<f32>, at: Point) -> f32 {
    c.old(0, 0)
}

fn main() {}
