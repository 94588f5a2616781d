// A params member used with the wrong type: `n: i32` compared with a float in an `f32`
// stencil; the stencil takes it for an `f32`, and the error points at `n`.
use clforge::prelude::*;

#[derive(clforge::Params)]
pub struct Coeffs {
    pub a: f32,
    pub n: i32,
}

#[clforge::stencil]
pub fn threshold(u: &Grid<f32>, k: &Coeffs) -> f32 {
    if k.n > 0.5 {
        k.a * u.at(0, 0)
    } else {
        0.0
    }
}

fn main() {}
