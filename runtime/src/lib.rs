//! Runtime for clforge: finds an OpenCL device, builds the OpenCL C that the
//! clforge macros generate, moves data and launches kernels.
//!
//! Start with [`Device::default`] (honours `CLFORGE_DEVICE`), build source with
//! [`Device::program`], allocate [`Buffer`]s and call [`Program::launch`] with
//! [`Arg`]s. Every fallible call returns [`Result`]; nothing here panics.
//! The OpenCL binding used underneath is an implementation detail and does
//! not appear in this API.

#![warn(missing_docs)]

#[doc(hidden)]
pub mod assume;
pub mod buffer;
mod cache;
mod cl;
pub mod device;
pub mod error;
mod grid;
pub mod program;
mod sync;

pub use buffer::{Buffer, ConstBuffer, Scalar};
/// The contracts shared with the macros (modal bases, element and lattice layouts).
pub use clforge_abi as abi;
pub use device::{Device, DeviceInfo, DeviceKind};
pub use error::{Error, Result};
pub use program::{Arg, Event, Program};
pub mod host;
pub mod source;
/// The stencil kind: specs, plans, device grids, launches and autotuning.
pub mod stencil;
/// The stencil autotuner (`stencil::tune`), at its historical path.
pub use stencil::tune;

pub use host::{
    check_shape, Boundary, Grid, Grid1, Grid2, Grid3, HostGrid, Params, Point, Shape, StructBytes, StructDecl, Sweep,
    Sweep1, Sweep2, Sweep3, UpdateRegion,
};
pub use stencil::{
    DeviceGrid, KernelScalar, LaunchConfig, Levels, Packable, PackedArg, PackedGrid, Past, PingPong, StencilArg,
    StencilPlan, StencilSpec, Tile, Variant, VariantSpec,
};
/// Several devices in one host: grids split into slabs with deep halos.
pub mod reduce;
pub use reduce::{Max, Min, Reduce, Reduction, Sum};
pub mod split;
pub use split::{Devices, SplitGrid, SplitPlan};
/// MPI across hosts: one rank per device, the grid split among ranks (feature `mpi`).
#[cfg(feature = "mpi")]
pub mod ranks;
#[cfg(feature = "mpi")]
pub use ranks::{RankGrid, RankLatticePlan, RankPlan, RankStepper, RankSweepPlan, Ranks};
pub use stencil::target::{GridOn, Launch, Target, TargetGrid};
/// The element kind: element types, meshes, host matrices and the explicit stepper.
pub mod fem;
/// The lattice kind's building blocks: counter-based random streams and bit-packed state.
pub mod lattice;
/// The sweep kind: in-place directional recurrences on legal wavefront schedules.
pub mod sweep;
pub use sweep::split::{SplitSweepPlan, SweepLaunch, SweepTarget};
pub use sweep::{Schedule, ScheduleSpec, SweepConfig, SweepEvents, SweepPlan, SweepSpec};
