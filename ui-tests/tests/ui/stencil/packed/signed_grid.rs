// `packed(m = 1)` names an `i32` grid: only unsigned integer grids (`u8`, `u32`) are packed.
use clforge::prelude::*;

#[stencil(packed(m = 1))]
pub fn relax(u: &Grid<f32>, m: &Grid<i32>) -> f32 {
    if m.at(0, 0) == 1 { u.at(1, 0) } else { u.at(0, 0) }
}

fn main() {}
