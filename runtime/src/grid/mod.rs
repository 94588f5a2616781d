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

/// The error for a shape whose point count overflows `usize`.
pub(crate) fn overflow(shape: Shape) -> Error {
    let dims = shape.dims();
    Error::TooLarge {
        what: format!("grid of shape {shape}"),
        detail: format!(
            "its {} points overflow usize; give extents whose product fits in memory",
            dims[..shape.rank()]
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(" × ")
        ),
    }
}
