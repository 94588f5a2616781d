//! The stencils, sweep and lattice rules the tests pin and check: one file each, so that a
//! snapshot can show the DSL input exactly as written beside the OpenCL it generates. Shared by
//! the kinds' test binaries; each file stays at its path and lines, which the generated code
//! names and `tests/snapshots.rs` pins.
#![allow(dead_code)]

pub mod advect_periodic;
pub mod d2q9_filter;
pub mod diffusion_f64;
pub mod gray_scott;
pub mod heat3d;
pub mod heated;
pub mod ising;
pub mod ising_bits;
pub mod jacobi;
pub mod jacobi_checked;
pub mod jacobi_packed;
pub mod limiter_clamp;
pub mod packed3d;
pub mod rust_semantics;
pub mod transport_sweep;
