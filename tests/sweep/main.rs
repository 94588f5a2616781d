//! The sweep kind: every schedule against the sequential host sweep, and the accuracy of the
//! running-count schemes as `examples/pollution_transport.rs` runs them.
//!
//! The sweep pinned by the snapshots is `tests/kernels/transport_sweep.rs`.

#[path = "../common/mod.rs"]
mod common;

mod accuracy;
mod parity;
