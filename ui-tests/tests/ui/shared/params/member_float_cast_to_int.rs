// A params member of unseen type cast from a float to an integer: C's conversion would not
// saturate as Rust's `as` does, so the cast asks for the member's type first.
use clforge::prelude::*;

#[derive(Clone, Copy, Debug, Params)]
pub struct K {
    pub w: f32,
}

#[clforge::stencil]
pub fn truncated(u: &Grid<i32>, k: &K) -> i32 {
    u.at(0, 0) + k.w as i32
}

fn main() {}
