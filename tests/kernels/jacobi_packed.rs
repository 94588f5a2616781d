use clforge::prelude::*;

pub use super::jacobi::{Coeffs, FLUID, OUTFLOW};

/// Seed 002's Jacobi iteration with its cell kinds (0, 1, 2) stored 2 bits per point on the
/// device: a quarter of a byte per point instead of a byte.
#[stencil(state = psi, packed(cell = 2))]
pub fn jacobi_packed(psi: &Grid<f32>, w: &Grid<f32>, cell: &Grid<u8>, k: &Coeffs) -> f32 {
    match cell.at(0, 0) {
        FLUID => k.a * (psi.at(1, 0) + psi.at(-1, 0)) + k.b * (psi.at(0, 1) + psi.at(0, -1)) + k.c * w.at(0, 0),
        OUTFLOW => psi.at(-1, 0),
        _ => psi.at(0, 0),
    }
}
