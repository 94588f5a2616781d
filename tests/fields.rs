//! Systems of fields, the stencil's point, reductions fused into the update, and time levels
//! (docs/SYSTEMS.md): every kernel against its Rust function, one test binary.

mod common;
mod kernels;

mod fields {
    mod points;
    mod reductions;
    mod systems;
}
