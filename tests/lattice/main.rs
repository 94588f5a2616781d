//! The lattice kind: checkerboard rules with counter-based random numbers and bit-packed state
//! against their host replays, on one device and split over several, bond models and the
//! fracture schedule.
//!
//! The lattice rules pinned by the snapshots are `tests/kernels/ising*.rs`.

mod bits;
mod bond_models;
mod checkerboard;
mod fracture;
mod split;
