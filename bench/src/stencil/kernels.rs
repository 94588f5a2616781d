//! The stencils the benchmark times, declared as a user would: `#[clforge::stencil]` on
//! plain Rust functions, which stay the host reference.

use clforge::prelude::*;

/// Seed 002's cell kinds (its `inside()` result): body, walls and inlet keep their value.
pub const BODY: u8 = 0;
/// The seed's INSIDE: the Jacobi update.
pub const FLUID: u8 = 1;
/// The seed's OUTFLOW (the right edge column): copy the left neighbour.
pub const OUTFLOW: u8 = 2;

/// The Jacobi weights of seed 002 (`jacobi_s { a, b, c }` in constant memory), single precision.
#[derive(Clone, Copy, Debug, Params)]
pub struct Coeffs {
    pub a: f32,
    pub b: f32,
    pub c: f32,
}

/// The Jacobi weights in double precision.
#[derive(Clone, Copy, Debug, Params)]
pub struct Coeffs64 {
    pub a: f64,
    pub b: f64,
    pub c: f64,
}

/// Seed 002, `jacobi_d`: one Jacobi iteration of `Δψ = ω` (eq. 1.2) with the cell mask.
/// `clamp` so that every point runs the mask logic, as the seed's kernel does.
#[stencil(boundary = clamp)]
pub fn jacobi(psi: &Grid<f32>, w: &Grid<f32>, cell: &Grid<u8>, k: &Coeffs) -> f32 {
    match cell.at(0, 0) {
        FLUID => k.a * (psi.at(1, 0) + psi.at(-1, 0)) + k.b * (psi.at(0, 1) + psi.at(0, -1)) + k.c * w.at(0, 0),
        OUTFLOW => psi.at(-1, 0),
        _ => psi.at(0, 0),
    }
}

/// [`jacobi`] in double precision.
#[stencil(boundary = clamp)]
pub fn jacobi_f64(psi: &Grid<f64>, w: &Grid<f64>, cell: &Grid<u8>, k: &Coeffs64) -> f64 {
    match cell.at(0, 0) {
        FLUID => k.a * (psi.at(1, 0) + psi.at(-1, 0)) + k.b * (psi.at(0, 1) + psi.at(0, -1)) + k.c * w.at(0, 0),
        OUTFLOW => psi.at(-1, 0),
        _ => psi.at(0, 0),
    }
}

/// [`jacobi`] with the cell kinds stored 2 bits per point on the device (a mask that has to be
/// read, read in fewer bytes): a quarter of a byte per point instead of a byte, 12.25 bytes per point in f32
/// instead of 13. The host reference is the same function, taking the `HostGrid<u8>`.
#[stencil(boundary = clamp, packed(cell = 2))]
pub fn jacobi_packed(psi: &Grid<f32>, w: &Grid<f32>, cell: &Grid<u8>, k: &Coeffs) -> f32 {
    match cell.at(0, 0) {
        FLUID => k.a * (psi.at(1, 0) + psi.at(-1, 0)) + k.b * (psi.at(0, 1) + psi.at(0, -1)) + k.c * w.at(0, 0),
        OUTFLOW => psi.at(-1, 0),
        _ => psi.at(0, 0),
    }
}

/// [`jacobi_packed`] in double precision.
#[stencil(boundary = clamp, packed(cell = 2))]
pub fn jacobi_packed_f64(psi: &Grid<f64>, w: &Grid<f64>, cell: &Grid<u8>, k: &Coeffs64) -> f64 {
    match cell.at(0, 0) {
        FLUID => k.a * (psi.at(1, 0) + psi.at(-1, 0)) + k.b * (psi.at(0, 1) + psi.at(0, -1)) + k.c * w.at(0, 0),
        OUTFLOW => psi.at(-1, 0),
        _ => psi.at(0, 0),
    }
}

/// Explicit heat step with the 3-D 7-point Laplacian; `r = κ·Δt/h²`.
#[stencil]
pub fn heat3d(u: &Grid3<f32>, r: f32) -> f32 {
    let centre = u.at(0, 0, 0);
    let lap =
        u.at(1, 0, 0) + u.at(-1, 0, 0) + u.at(0, 1, 0) + u.at(0, -1, 0) + u.at(0, 0, 1) + u.at(0, 0, -1) - 6.0 * centre;
    centre + r * lap
}

/// [`jacobi`] with seed 002's fixed edges (the walls keep their value, as the grid's outermost
/// ring is never updated): the form that temporal blocking (`Variant::Steps`) supports.
#[stencil(state = psi)]
pub fn jacobi_fixed(psi: &Grid<f32>, w: &Grid<f32>, cell: &Grid<u8>, k: &Coeffs) -> f32 {
    match cell.at(0, 0) {
        FLUID => k.a * (psi.at(1, 0) + psi.at(-1, 0)) + k.b * (psi.at(0, 1) + psi.at(0, -1)) + k.c * w.at(0, 0),
        OUTFLOW => psi.at(-1, 0),
        _ => psi.at(0, 0),
    }
}

/// The body square of seed 002's channel, inclusive (`square_s`), as the computed-mask
/// stencil reads it.
#[derive(Clone, Copy, Debug, Params)]
pub struct Body {
    pub x1: i32,
    pub y1: i32,
    pub x2: i32,
    pub y2: i32,
}

/// [`jacobi`] with the cell kind computed from the point, as seed 002's `inside()` does, instead
/// of read from a mask grid: 12 bytes per point instead of 13. The same values as [`jacobi`]
/// with the mask `JacobiHost` builds.
#[stencil(boundary = clamp)]
pub fn jacobi_computed(psi: &Grid<f32>, w: &Grid<f32>, at: Point, b: &Body, k: &Coeffs) -> f32 {
    let wall = at.y == 0 || at.y == at.ny - 1 || at.x == 0;
    let body = at.x >= b.x1 && at.x <= b.x2 && at.y >= b.y1 && at.y <= b.y2;
    if wall || body {
        psi.at(0, 0)
    } else if at.x == at.nx - 1 {
        psi.at(-1, 0)
    } else {
        k.a * (psi.at(1, 0) + psi.at(-1, 0)) + k.b * (psi.at(0, 1) + psi.at(0, -1)) + k.c * w.at(0, 0)
    }
}

/// [`jacobi_computed`] in double precision.
#[stencil(boundary = clamp)]
pub fn jacobi_computed_f64(psi: &Grid<f64>, w: &Grid<f64>, at: Point, b: &Body, k: &Coeffs64) -> f64 {
    let wall = at.y == 0 || at.y == at.ny - 1 || at.x == 0;
    let body = at.x >= b.x1 && at.x <= b.x2 && at.y >= b.y1 && at.y <= b.y2;
    if wall || body {
        psi.at(0, 0)
    } else if at.x == at.nx - 1 {
        psi.at(-1, 0)
    } else {
        k.a * (psi.at(1, 0) + psi.at(-1, 0)) + k.b * (psi.at(0, 1) + psi.at(0, -1)) + k.c * w.at(0, 0)
    }
}
