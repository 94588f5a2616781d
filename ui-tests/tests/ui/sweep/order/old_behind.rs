// In place, an old value behind the point is already overwritten.
use clforge::prelude::*;

#[sweep(order = (forward, backward))]
pub fn gs(u: &Sweep<f32>) -> f32 {
    0.5 * (u.new(-1, 0) + u.old(0, -1) + u.old(0, 1))
}

fn main() {}
