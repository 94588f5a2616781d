// `packed(x = 2)` names no argument of the stencil.
use clforge::prelude::*;

#[stencil(packed(x = 2))]
pub fn relax(u: &Grid<f32>, cell: &Grid<u8>) -> f32 {
    if cell.at(0, 0) == 1 { u.at(1, 0) } else { u.at(0, 0) }
}

fn main() {}
