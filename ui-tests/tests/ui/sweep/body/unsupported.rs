// The swept field is read with `.new`/`.old`, and a sweep has no periodic boundary.
use clforge::prelude::*;

#[sweep(order = forward)]
pub fn at_read(u: &Sweep<f32>) -> f32 {
    u.at(-1, 0)
}

#[sweep(boundary = periodic)]
pub fn wrapped(u: &Sweep<f32>) -> f32 {
    u.new(-1, 0)
}

#[sweep]
pub fn no_field(f: &Grid<f32>) -> f32 {
    f.at(0, 0)
}

#[stencil]
pub fn stencil_new(u: &Grid<f32>) -> f32 {
    u.new(-1, 0)
}

#[sweep(order = (forward, forward, forward))]
pub fn wrong_rank(u: &Sweep<f32>) -> f32 {
    u.new(-1, 0)
}

#[sweep]
pub fn wrong_type(u: &Sweep<f64>) -> f32 {
    1.0
}

fn main() {}
