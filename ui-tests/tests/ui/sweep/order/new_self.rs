// The point's own new value is what the function computes.
use clforge::prelude::*;

#[sweep]
pub fn me(u: &Sweep3<f64>) -> f64 {
    u.new(0, 0, 0) + u.new(-1, 0, 0)
}

fn main() {}
