//! Grids' shapes, and the shape check that generated launchers call.

pub(crate) mod shape;

pub use shape::Shape;

use crate::error::{Error, Result};

/// Returns [`Error::ShapeMismatch`] unless `found == expected`.
pub fn check_shape(field: &str, expected: Shape, found: Shape) -> Result<()> {
    if expected == found {
        Ok(())
    } else {
        Err(Error::ShapeMismatch {
            field: field.to_string(),
            expected,
            found,
        })
    }
}
