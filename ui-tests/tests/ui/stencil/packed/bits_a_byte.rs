// `packed(cell = 8)`: eight bits per point is the `u8` grid unpacked; packed grids hold 1, 2 or 4.
use clforge::prelude::*;

#[stencil(packed(cell = 8))]
pub fn relax(u: &Grid<f32>, cell: &Grid<u8>) -> f32 {
    if cell.at(0, 0) == 1 { u.at(1, 0) } else { u.at(0, 0) }
}

fn main() {}
