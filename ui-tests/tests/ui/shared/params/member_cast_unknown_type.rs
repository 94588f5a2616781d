// Valid Rust the attribute cannot type: `k.w as f32` does not say what `k.w` is, the kernel
// reads it as the stencil's float type (`f32`), and `w` is an `f64`. The error says so at
// `w` and how to name the type.
use clforge::prelude::*;

#[derive(clforge::Params)]
pub struct Coeffs {
    pub w: f64,
}

#[clforge::stencil]
pub fn scaled(u: &Grid<f32>, k: &Coeffs) -> f32 {
    u.at(0, 0) * k.w as f32
}

fn main() {}
