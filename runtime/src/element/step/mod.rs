//! What the explicit step is made of: the element kernels and their precision, the force
//! schedule, the problem and its loads, the stability bound and the host reference.

pub(crate) mod blocks;
pub(crate) mod gather;
#[cfg(test)]
mod gather_tests;
pub mod kernels;
pub(crate) mod launch;
pub mod load;
pub mod problem;
pub(crate) mod real;
pub mod reference;
pub mod schedule;
pub mod stability;
pub(crate) mod upload;
