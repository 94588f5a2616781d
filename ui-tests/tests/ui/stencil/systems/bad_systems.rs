// Systems of fields written wrongly: each stencil below is refused at the offending token.
use clforge::prelude::*;

// One element is not a system: return the scalar.
#[clforge::stencil]
pub fn single(u: &Grid<f32>) -> (f32,) {
    (u.at(0, 0),)
}

// A `bool` output.
#[clforge::stencil]
pub fn flag(u: &Grid<f32>) -> (f32, bool) {
    (u.at(0, 0), true)
}

// Three values for two outputs.
#[clforge::stencil]
pub fn three(u: &Grid<f32>) -> (f32, f32) {
    (u.at(0, 0), u.at(1, 0), u.at(-1, 0))
}

// Not a tuple at all.
#[clforge::stencil]
pub fn scalar_tail(u: &Grid<f32>) -> (f32, f32) {
    u.at(0, 0)
}

// A tuple bound to a `let`.
#[clforge::stencil]
pub fn tuple_let(u: &Grid<f32>) -> (f32, f32) {
    let t = (u.at(0, 0), 1.0);
    (t, t)
}

// Temporal blocking of a system is not generated.
#[clforge::stencil(state = u)]
pub fn blocked(u: &Grid<f32>, v: &Grid<f32>) -> (f32, f32) {
    (v.at(0, 0), u.at(0, 0))
}

fn main() {}
