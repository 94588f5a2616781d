// `match` without a `_` arm: a stencil `match` must end with `_ => ...`.
use clforge::prelude::*;

#[clforge::stencil]
pub fn masked(u: &Grid<f32>, cell: &Grid<u8>) -> f32 {
    match cell.at(0, 0) {
        0 => u.at(0, 0),
        1 => 0.0,
    }
}

fn main() {}
