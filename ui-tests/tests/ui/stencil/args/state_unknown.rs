// `state = v`: there is no argument `v`.
use clforge::prelude::*;

#[stencil(state = v)]
pub fn relax(u: &Grid<f32>) -> f32 {
    u.at(1, 0) + u.at(-1, 0)
}

fn main() {}
