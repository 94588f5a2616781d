//! STAGE model -> IR. One file per kind (`stencil.rs`, `element.rs`) and one per shared analysis
//! or rewrite: `body.rs` (the body language: hoisting, selects), `typing.rs` (Rust's literal
//! typing), `access.rs` (halo and staging from the reads), `variants.rs` (which variants exist).
//! Everything about a kernel is decided here; later stages only print.

pub mod access;
pub mod body;
pub mod element;
pub mod forming;
pub mod lattice;
pub mod per_element;
pub mod stencil;
pub mod sweep;
pub mod typing;
pub mod variants;
