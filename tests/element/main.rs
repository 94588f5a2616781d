//! The element kind: host element matrices, lumped masses, element matrices formed on the
//! device, the explicit stepper on structured and unstructured meshes, simplices, the sparse
//! solver, mesh files and user template families.
//!
//! The elements pinned by the snapshots are shared fixtures: `tests/elements/` (nodal),
//! `tests/modal/` (modal hexahedra) and `tests/simplices/`.

#[path = "../common/mod.rs"]
mod common;
#[path = "../elements/mod.rs"]
mod elements;
#[path = "../modal/mod.rs"]
mod modal;
#[path = "../simplices/mod.rs"]
mod simplices;

mod forming;
mod forms;
mod lumped_mass;
mod matrices;
mod mesh_io;
mod modal_solve;
mod model;
mod simplex;
mod sparse;
mod stepper;
mod unstructured;
mod user_template;
mod wave_speed;
