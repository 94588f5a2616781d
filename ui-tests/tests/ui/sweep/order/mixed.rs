// (x+1, y-1) is ahead along x and behind along y: its state depends on the loop order.
use clforge::prelude::*;

#[sweep(order = forward)]
pub fn skew(u: &Sweep<f32>) -> f32 {
    u.new(-1, 0) + u.new(1, -1)
}

fn main() {}
