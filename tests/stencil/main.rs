//! The stencil kind: every generated kernel against its Rust host function (parity, the
//! semantics regressions, the march variant, packed grids), systems of fields, points and
//! fused reductions, grids split over several devices, and the Jacobi's order of accuracy.
//!
//! The stencils pinned by the snapshots are shared fixtures in `tests/kernels/`.

#[path = "../common/mod.rs"]
mod common;
#[path = "../kernels/mod.rs"]
mod kernels;

mod convergence;
mod march;
mod packed;
mod parity;
mod semantics;
mod split;

/// Systems of fields, the stencil's point, reductions fused into the update, and time levels
/// (docs/SYSTEMS.md).
mod fields {
    mod loops;
    mod macros;
    mod points;
    mod reductions;
    mod systems;
}
