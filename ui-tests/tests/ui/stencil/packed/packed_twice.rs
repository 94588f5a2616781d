// `cell` is packed twice (in two `packed(..)` lists): each grid gets one `name = bits`.
use clforge::prelude::*;

#[stencil(packed(cell = 2), packed(cell = 4))]
pub fn relax(u: &Grid<f32>, cell: &Grid<u8>) -> f32 {
    if cell.at(0, 0) == 1 { u.at(1, 0) } else { u.at(0, 0) }
}

fn main() {}
