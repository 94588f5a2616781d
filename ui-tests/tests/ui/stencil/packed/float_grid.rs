// `packed(w = 2)` names a float grid: only unsigned integer grids (`u8`, `u32`) are packed.
use clforge::prelude::*;

#[stencil(packed(w = 2))]
pub fn relax(u: &Grid<f32>, w: &Grid<f32>) -> f32 {
    u.at(1, 0) + w.at(0, 0)
}

fn main() {}
