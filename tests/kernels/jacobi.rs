use clforge::prelude::*;

/// Cell kinds of seed 002: fluid cells are updated, outflow cells copy their left
/// neighbour, body (and boundary) cells keep their value.
pub const FLUID: u8 = 1;
pub const OUTFLOW: u8 = 2;
pub const BODY: u8 = 0;

/// Coefficients of the five-point Jacobi update (seed 002 keeps them in constant memory).
#[derive(Clone, Copy, Debug, Params)]
pub struct Coeffs {
    pub a: f32,
    pub b: f32,
    pub c: f32,
}

/// One Jacobi iteration for Δψ = ω (seed 002).
#[stencil(state = psi)]
pub fn jacobi(psi: &Grid<f32>, w: &Grid<f32>, cell: &Grid<u8>, k: &Coeffs) -> f32 {
    match cell.at(0, 0) {
        FLUID => k.a * (psi.at(1, 0) + psi.at(-1, 0)) + k.b * (psi.at(0, 1) + psi.at(0, -1)) + k.c * w.at(0, 0),
        OUTFLOW => psi.at(-1, 0),
        _ => psi.at(0, 0),
    }
}
