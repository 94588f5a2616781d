// `packed(k = 2)` names a scalar argument: only grids are stored packed.
use clforge::prelude::*;

#[stencil(packed(k = 2))]
pub fn relax(u: &Grid<f32>, cell: &Grid<u8>, k: u32) -> f32 {
    if cell.at(0, 0) as u32 == k { u.at(1, 0) } else { u.at(0, 0) }
}

fn main() {}
