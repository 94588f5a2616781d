// Reduction outputs written wrongly: each is refused at the offending token.
use clforge::prelude::*;
use clforge::runtime::{Max, Sum};

// Masks are not reduced.
#[clforge::stencil]
pub fn bytes(u: &Grid<u8>) -> Max<u8> {
    Max(u.at(0, 0))
}

// The value of a `Max` output is `Max(v)`.
#[clforge::stencil]
pub fn unwrapped(u: &Grid<f32>) -> (f32, Max<f32>) {
    (u.at(0, 0), u.at(1, 0))
}

// `Sum(..)` where the output is a `Max`.
#[clforge::stencil]
pub fn wrong_op(u: &Grid<f32>) -> (f32, Max<f32>) {
    (u.at(0, 0), Sum(u.at(1, 0)))
}

// `Max(..)` is only the value of a reduction output.
#[clforge::stencil]
pub fn inside(u: &Grid<f32>) -> f32 {
    let m = Max(u.at(0, 0));
    u.at(0, 0)
}

// Temporal blocking does not reduce.
#[clforge::stencil(state = u)]
pub fn blocked(u: &Grid<f32>) -> (f32, Sum<f32>) {
    (u.at(0, 0), Sum(u.at(0, 0)))
}

fn main() {}
