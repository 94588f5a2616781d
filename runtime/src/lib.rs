//! Runtime for clforge: finds an OpenCL device, builds the OpenCL C that the
//! clforge macros generate, moves data and launches kernels.
//!
//! Start with [`Device::default`] (honours `CLFORGE_DEVICE`), build source with
//! [`Device::program`], allocate [`Buffer`]s and call [`Program::launch`] with
//! [`Arg`]s. Every fallible call returns [`Result`]; nothing here panics.
//! The OpenCL binding used underneath is an implementation detail and does
//! not appear in this API.
//!
//! The layout (docs/ARCHITECTURE.md): a core that knows no kind — [`grid`], [`launch`],
//! [`dist`] above the OpenCL layer — under four kind folders laid out alike ([`stencil`],
//! [`sweep`], [`lattice`], [`element`]), each with its spec, its plan on one device, its
//! split plan over [`Devices`] and its plan across MPI ranks.

#![warn(missing_docs)]

#[doc(hidden)]
pub mod assume;
pub mod buffer;
mod cache;
mod cl;
pub mod device;
pub mod error;
pub mod files;
pub(crate) mod num;
pub mod program;
pub mod source;
mod sync;

pub mod dist;
pub mod grid;
pub mod launch;
pub mod params;

pub mod element;
pub mod lattice;
pub mod stencil;
pub mod sweep;

pub use buffer::{Buffer, ConstBuffer, Scalar};
pub use cl::fault;
/// The contracts shared with the macros (modal bases, element and lattice layouts).
pub use clforge_abi as abi;
pub use device::{Device, DeviceInfo, DeviceKind};
pub use error::{Error, Result};
pub use program::{Arg, Event, Local, Program};

pub use dist::{ArgOn, Devices, GridOn, Levels, Past, PingPong, Place, SplitGrid};
#[cfg(feature = "mpi")]
pub use dist::{RankGrid, Ranks};
pub use grid::{
    check_shape, Boundary, DeviceGrid, Grid, Grid1, Grid2, Grid3, HostGrid, Packable, PackedGrid, Point, Shape, Sweep,
    Sweep1, Sweep2, Sweep3, TargetGrid, UpdateRegion,
};
pub use launch::{Bind, KernelArg, KernelScalar, Max, Min, PackedArg, Reduce, Reduction, Sum};
pub use params::{Params, StructBytes, StructDecl};

#[cfg(feature = "mpi")]
pub use element::RankStepper;
#[cfg(feature = "mpi")]
pub use lattice::RankLatticePlan;
#[cfg(feature = "mpi")]
pub use stencil::RankPlan;
pub use stencil::{
    tune, Launch, LaunchConfig, SplitPlan, StencilPlan, StencilSpec, StencilTarget, Tile, Variant, VariantSpec,
};
#[cfg(feature = "mpi")]
pub use sweep::RankSweepPlan;
pub use sweep::{
    Schedule, ScheduleSpec, SplitSweepPlan, SweepConfig, SweepEvents, SweepLaunch, SweepPlan, SweepSpec, SweepTarget,
};

/// Where every kind runs: a [`Device`], [`Devices`] or MPI `Ranks` builds stencil, sweep and
/// lattice plans on its own grids. A function written against `D: Target` runs unchanged on
/// one device, several or many ranks:
///
/// ```
/// use clforge_runtime::{GridOn, HostGrid, Result, Target};
/// fn upload_twice<D: Target>(target: &D, host: &HostGrid<f32>) -> Result<[GridOn<D, f32>; 2]> {
///     Ok([target.upload(host)?, target.upload(host)?])
/// }
/// # let device = clforge_runtime::Device::default().unwrap();
/// # let host = HostGrid::new(clforge_runtime::Shape::d2(4, 4)).unwrap();
/// # let [a, _] = upload_twice(&device, &host).unwrap();
/// # assert_eq!(clforge_runtime::TargetGrid::to_host(&a).unwrap(), host);
/// ```
///
/// Each kind's own trait ([`StencilTarget`], [`SweepTarget`], [`lattice::LatticeTarget`])
/// bounds code that plans only that kind; [`Place`] is what every target shares (its grids
/// and launch arguments).
pub trait Target: StencilTarget + SweepTarget + lattice::LatticeTarget {}

impl<D: StencilTarget + SweepTarget + lattice::LatticeTarget> Target for D {}

/// The argument type every kind's launch takes on one device, at its old name.
#[deprecated(note = "renamed `KernelArg`: every kind's launch takes it, not only stencils")]
pub type StencilArg<'a> = KernelArg<'a>;

/// The element kind at its old path: `fem::X` is [`element::X`].
#[deprecated(note = "the element kind's runtime is `clforge::runtime::element`")]
pub mod fem {
    pub use crate::element::*;
}
