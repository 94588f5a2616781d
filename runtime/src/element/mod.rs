//! The element kind: element types declared with `#[clforge::element]`, their host matrices,
//! meshes and the explicit central-difference stepping of seed 000 on the device — on one
//! device ([`Stepper`]), several ([`split::SplitStepper`]) or MPI ranks (`RankStepper`).

pub mod form;
pub mod forming;
pub mod matrices;
pub mod mesh;
pub(crate) mod plan;
#[cfg(feature = "mpi")]
pub(crate) mod ranks;
pub mod sparse;
pub(crate) mod spec;
pub mod split;
mod step;

pub use forming::{hybrid, FormingKernels};
pub use matrices::{geometry, matrix, Matrix};
pub use mesh::{io, modal as modal_mesh};
pub use plan::{Explicit, Stepper};
#[cfg(feature = "mpi")]
pub use ranks::RankStepper;
pub use spec::{Basis, Cell, Element, ElementSpec, Operator, WithQuadrature};
pub use step::kernels::{At, DeviceKernels, ElementKernels};
pub use step::real::Real;
pub use step::{kernels, load, problem, reference, schedule, stability};

/// The explicit stepper and what configures it (`element::stepper::Stepper`, `Model`, ...).
pub mod stepper {
    pub use super::plan::*;
}
