//! Bond growth on a work queue of live bonds: seed 003's brittle intercrystalline fracture, and
//! any model of its shape (bonds bit-packed per site, a neighbourhood of bonds given as data, an
//! energy of global counters, Metropolis acceptance).
//!
//! The state is a bit per bond ([`PackedBits`]), a bit per *group* (seed 003: a column of grains
//! along z, marked when it holds a broken bond of the group kind) and a queue of live bonds (a
//! broken bond that may still break a neighbour). Three schedules run one model:
//!
//! - [`serial_reference`]: the thesis' reference algorithm on the host: one proposal at a time,
//!   from a uniformly chosen entry of the live list, with the current counters;
//! - [`BondRun`]: the device schedule: one launch proposes once from every live bond at once,
//!   with the counters of the launch's start (late synchronisation), atomic bit sets, atomic
//!   appends to a bounded [`WorkQueue`] and stable compaction of dead entries;
//! - [`replay_launch`]: that device schedule on the host, proposal by proposal: the device's
//!   bonds, groups, counters and queue (as a set) equal it exactly, launch by launch.
//!
//! Why the device schedule is deterministic: a proposal's outcome depends only on the state at
//! the launch's start (the thresholds, the group bits, which bonds were broken) and on its draws,
//! keyed by its bond rather than its place in the queue. When two work-items break one bond, the
//! same bond breaks whichever wins the atomic, and only the winner counts and queues it. So the
//! order of the queue, which atomic appends make arbitrary, changes no result; nor does the
//! moment dead entries are compacted away (a dead entry's proposals find only broken bonds).

mod bits;
mod geometry;
mod model;
mod queue;
mod run;
mod schedule;
mod state;
#[cfg(test)]
mod tests;

pub use bits::PackedBits;
pub use geometry::*;
pub use model::*;
pub use queue::{WorkQueue, QUEUE_CL};
pub use run::*;
pub use schedule::*;
pub use state::*;

/// OpenCL C of the schedule: `clforge_bonds_step` and `clforge_bonds_live`.
pub const BONDS_CL: &str = include_str!("../../../../templates/lattice/bonds.cl");
