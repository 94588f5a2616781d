// `state = k` names the params struct: the state of temporal blocking is the grid the
// output replaces at each step.
use clforge::prelude::*;

#[derive(Clone, Copy, Params)]
pub struct Coeffs {
    pub a: f32,
}

#[stencil(state = k)]
pub fn relax(rhs: &Grid<f32>, u: &Grid<f32>, k: &Coeffs) -> f32 {
    k.a * (u.at(1, 0) + u.at(-1, 0)) + rhs.at(0, 0)
}

fn main() {}
