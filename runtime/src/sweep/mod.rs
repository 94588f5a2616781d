//! Launching generated sweeps (`#[clforge::sweep]`): in-place directional recurrences run as
//! legal wavefronts, every schedule bitwise equal to the sequential sweep (docs/SWEEPS.md).
//!
//! A sweep updates a field in place in a fixed direction per axis; the macro has proved that
//! every `new` read lies behind the point (or level) along every axis and every `old` read
//! ahead (or level). Any order of the points that respects that partial order computes the
//! same values as the sequential sweep, bit for bit, because every point sees the same
//! inputs. The schedules below are such orders:
//!
//! - [`Schedule::Serial`]: one work-item walks the region in order (any rank; 1-D sweeps
//!   have no other, their points form one chain);
//! - [`Schedule::Wave`]: L×L blocks (of columns L×L×K in 3-D: seed 001's algorithm 1) on
//!   block anti-diagonals, one launch per diagonal; inside a block one work-item per row
//!   walks its 2L−1 diagonals with a barrier after each;
//! - [`Schedule::WaveLocal`]: the same with the block and its halo staged in local memory
//!   (2-D, fixed boundary);
//! - [`Schedule::Blocks`]: L×L×L blocks on block planes (seed 001's algorithm 2, 3-D), L²
//!   work-items each walking a column, 3L−2 in-block steps;
//! - [`Schedule::Persistent`]: one launch per sweep: every block is a work-group that takes a
//!   ticket in wavefront order and waits on the flags of its upstream neighbours;
//! - [`Schedule::PersistentLocal`]: the same with the block in local memory (2-D, fixed);
//! - [`Schedule::PersistentBlocks`]: algorithm 2's cubes in one launch, in plane order (3-D);
//! - [`Schedule::BlocksLocal`]: algorithm 2 with the cube in local memory (3-D, fixed);
//! - [`Schedule::Strip`]: one launch; work-groups own strips of L rows (one work-item per row,
//!   each row one column behind the row before) and walk the whole x extent, waiting every
//!   `phase` steps on the progress the strip above has published (2-D): the critical path is
//!   about nx + ny·(1 + phase/L) points, against 2(nx + ny) for the block wavefronts.

pub mod model;
pub(crate) mod plan;
#[cfg(feature = "mpi")]
pub(crate) mod ranks;
pub(crate) mod spec;
pub mod split;

pub use plan::*;
#[cfg(feature = "mpi")]
pub use ranks::RankSweepPlan;
pub use spec::*;
pub use split::SplitSweepPlan;

use crate::buffer::Scalar;
use crate::dist::{ArgOn, GridOn, Place};
use crate::error::Result;
use crate::grid::Shape;

/// Where a sweep runs: a [`Place`] (a [`Device`](crate::Device), [`Devices`](crate::Devices)
/// or MPI `Ranks`) that builds sweep plans, on its own grids: a function written against
/// `D: SweepTarget + StencilTarget` launches stencils and sweeps on the same grids.
pub trait SweepTarget: Place {
    /// The sweep built for this target.
    type SweepPlan: SweepLaunch<On = Self>;
    /// Builds and sizes the sweep `spec` with `config` for grids of `shape`.
    fn sweep_plan(&self, spec: SweepSpec, config: &SweepConfig, shape: Shape) -> Result<Self::SweepPlan>;
}

/// A built sweep: the generated `sweep_plan` calls [`SweepLaunch::run_sweep`] with the sweep's
/// arguments in order, made by [`SweepLaunch::On`]'s constructors.
pub trait SweepLaunch {
    /// The target the sweep runs on (its grids and arguments).
    type On: Place;
    /// One sweep of `state`, in place.
    fn run_sweep<T: Scalar>(&self, state: &GridOn<Self::On, T>, args: &[ArgOn<'_, Self::On>]) -> Result<SweepEvents>;
    /// `Err` if a persistent schedule gave up waiting for an upstream block anywhere
    /// ([`SweepPlan::check`]): the field is then incomplete.
    fn check(&self) -> Result<()>;
}
