// With no declared order, reads that need opposite directions of one axis are a cycle.
use clforge::prelude::*;

#[sweep]
pub fn both_ways(u: &Sweep<f32>) -> f32 {
    0.5 * (u.new(-1, 0) + u.new(1, 0)) + u.old(0, 1)
}

fn main() {}
