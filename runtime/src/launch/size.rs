//! The shape checks every launch makes, whatever the kind.

use crate::error::{Error, Result};
use crate::grid::Shape;

/// A grid shape a generated kernel (`what`, e.g. "stencil `heat`") of `rank` can run on: its
/// rank, at least one point, and indices that fit the kernels' 32-bit `int`s.
pub(crate) fn check_kernel_shape(what: &str, rank: usize, shape: Shape) -> Result<()> {
    if !(1..=3).contains(&rank) || shape.rank() != rank {
        return Err(Error::InvalidConfig(format!(
            "{what} is {rank}-D but the grid has shape {shape}; pass a {rank}-D shape"
        )));
    }
    if shape.is_empty() {
        return Err(Error::InvalidConfig(format!(
            "grid of shape {shape} has no points; every extent must be at least 1"
        )));
    }
    let points = shape.checked_len();
    if points.is_none_or(|n| n > MAX_INDEX) {
        return Err(Error::TooLarge {
            what: format!("grid of shape {shape}"),
            detail: format!(
                "it has {} points; clforge kernels index grids with 32-bit `int`s, so a grid has 1 to \
                 {MAX_INDEX} points",
                points.map_or_else(|| "more than usize::MAX".to_string(), |n| n.to_string())
            ),
        });
    }
    Ok(())
}

/// Most points a kernel indexes: its indices are 32-bit `int`s.
pub(crate) const MAX_INDEX: usize = i32::MAX as usize;
