//! Finite elements: element types declared with `#[clforge::element]`, their host matrices,
//! meshes and the explicit central-difference stepping of seed 000 on the device.

mod blocks;
pub mod element;
pub mod forming;
pub mod geometry;
pub mod hybrid;
pub mod io;
pub mod kernels;
pub mod load;
pub mod matrices;
pub mod matrix;
pub mod mesh;
pub mod modal_mesh;
pub mod problem;
mod real;
pub mod reference;
pub mod schedule;
pub mod sparse;
pub mod split;
pub mod stability;
pub mod stepper;

pub use element::{Basis, Cell, Element, ElementSpec, Operator, WithQuadrature};
pub use kernels::{At, DeviceKernels, ElementKernels};
pub use matrix::Matrix;
pub use real::Real;
