// `state = mask` names a `u8` grid of an `f32` stencil: the output cannot replace it.
use clforge::prelude::*;

#[stencil(state = mask)]
pub fn relax(u: &Grid<f32>, mask: &Grid<u8>) -> f32 {
    if mask.at(0, 0) == 1 { u.at(1, 0) } else { u.at(0, 0) }
}

fn main() {}
