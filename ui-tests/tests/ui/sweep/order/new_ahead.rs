// A forward sweep cannot read a new value ahead of the point: it is not computed yet.
use clforge::prelude::*;

#[sweep(order = forward)]
pub fn gs(u: &Sweep<f32>, f: &Grid<f32>) -> f32 {
    0.25 * (u.new(-1, 0) + u.new(1, 0) + u.old(0, 1) + u.new(0, -1)) + f.at(0, 0)
}

fn main() {}
