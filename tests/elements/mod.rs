//! The elements the tests pin and check: one file each, so that a snapshot can show the DSL
//! input exactly as written beside the OpenCL it generates. Shared by the element and runtime
//! test binaries; each file stays at its path and lines, which the generated code names and
//! `tests/snapshots.rs` pins.
#![allow(dead_code)]

pub mod hex8;
pub mod hex8_energy;
pub mod quad4;
pub mod quad4_heat;
pub mod quad9;
