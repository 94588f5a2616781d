//! What the runtime checks for every kind: launch sizes and memory beyond the device's limits,
//! sizes that overflow, meshes that do not fit their element, time steps beyond the stability
//! bound, and OpenCL build failures as typed errors.

#[path = "../common/mod.rs"]
mod common;
#[path = "../elements/mod.rs"]
mod elements;
#[path = "../kernels/mod.rs"]
mod kernels;

mod build_errors;
mod checks;
mod faults;
