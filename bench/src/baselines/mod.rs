//! The hand-written baselines: seed 002's Jacobi kernels (the `stencils` suite) and seed
//! 000's appendix kernels (the `elements` suite), ported to OpenCL in `bench/baselines/*.cl`
//! and launched through `Device::program` / `Program::launch` with the seeds' work sizes.

pub mod ising;
pub mod seed000;
pub mod seed002;
