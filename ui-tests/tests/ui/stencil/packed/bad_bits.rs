// `packed(cell = 3)`: a packed grid holds 1, 2 or 4 bits per point (powers of two dividing 32).
use clforge::prelude::*;

#[stencil(packed(cell = 3))]
pub fn relax(u: &Grid<f32>, cell: &Grid<u8>) -> f32 {
    if cell.at(0, 0) == 1 { u.at(1, 0) } else { u.at(0, 0) }
}

fn main() {}
