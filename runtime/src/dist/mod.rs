//! Distribution: where grids live and kernels run. A [`Place`] (one device, several devices
//! of one host, MPI ranks) knows grids and launch arguments only; the slab layout and halo
//! bookkeeping are shared by every split target; each kind's split and ranks plans sit in the
//! kind's folder on top of these.

pub(crate) mod devices;
pub(crate) mod layout;
pub(crate) mod levels;
pub(crate) mod place;
#[cfg(feature = "mpi")]
pub(crate) mod ranks;

#[cfg(feature = "mpi")]
pub(crate) use devices::copy_rate;
pub(crate) use devices::slab_args;
pub use devices::{Devices, SplitArg, SplitGrid, DEFAULT_DEPTH};
pub use layout::Layout;
pub(crate) use layout::{check_layout, refresh_inputs, Halo};
pub use levels::{Levels, Past, PingPong};
pub use place::{ArgOn, GridOn, Place};
#[cfg(feature = "mpi")]
pub use ranks::{RankArg, RankGrid, Ranks};
