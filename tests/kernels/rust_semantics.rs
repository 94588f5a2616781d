use clforge::prelude::*;

/// Cell kind with a reserved OpenCL name (a macro of the templates): printed `rs_INTERIOR`.
pub const INTERIOR: u8 = 1;

/// Where Rust and C differ, and how the kernel follows Rust (docs/SEMANTICS.md): saturating
/// float-to-integer casts, NaN-keeping `clamp`, wrapping `i32` and `u8` arithmetic, guarded
/// integer division, bools beside per-point masks, a `let` typed by a later use. */ stays in the comment.
#[stencil]
pub fn rust_semantics(u: &Grid<f32>, cell: &Grid<u8>, n: &Grid<i32>, half: f32) -> f32 {
    let level = (u.at(0, 0) * 255.0) as u8;
    let wrapped = (!cell.at(0, 0)) << (level & 7);
    let count = n.at(1, 0) * 3 - n.at(-1, 0);
    let q = if n.at(0, 0) != 0 { count / n.at(0, 0) } else { 0 };
    let scale = 0.5;
    let on = (u.at(0, 0) > 0.0) | (half > 0.0);
    let v = if on && cell.at(0, 0) == INTERIOR {
        u.at(1, 0).clamp(-1.0, 1.0)
    } else {
        u.at(-1, 0)
    };
    v * scale + (wrapped as f32) + (q as f32) + ((level as i32) as f32)
}
