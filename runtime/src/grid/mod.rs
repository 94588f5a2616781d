//! Grids: shapes, host grids and the cursors a body reads them through, device grids, packed
//! grids and bit-packed lattices. Knows no kind and no target.

pub mod bits;
pub(crate) mod device;
pub(crate) mod host;
pub mod packed;
pub(crate) mod shape;

pub use bits::DeviceBits;
pub use device::DeviceGrid;
pub use host::{Boundary, Grid, Grid1, Grid2, Grid3, HostGrid, Point, Sweep, Sweep1, Sweep2, Sweep3, UpdateRegion};
pub use packed::{Packable, PackedGrid, PACKED_BITS};
pub use shape::Shape;

use crate::buffer::Scalar;
use crate::error::{Error, Result};

/// What every target's grid can do ([`DeviceGrid`], a split grid, a rank's slab).
pub trait TargetGrid<T: Scalar>: Sized {
    /// The shape of the whole grid.
    fn shape(&self) -> Shape;
    /// Reads the whole grid back (waits for the launches that write it).
    fn to_host(&self) -> Result<HostGrid<T>>;
    /// Overwrites the grid with a host grid of its shape.
    fn upload(&mut self, host: &HostGrid<T>) -> Result<()>;
    /// Reads the grid into a host grid of its shape.
    fn download(&self, host: &mut HostGrid<T>) -> Result<()>;
}

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

/// `len` copies of `value` in a vector whose allocation failure is an error, not an abort:
/// a size that passed every overflow check can still be more than the host has.
pub(crate) fn try_filled<T: Clone>(len: usize, value: T, what: impl Fn() -> String) -> Result<Vec<T>> {
    let mut v = try_with_capacity(len, what)?;
    v.resize(len, value);
    Ok(v)
}

/// An empty vector with room for `len` elements, or [`Error::TooLarge`] if the host cannot
/// allocate it.
pub(crate) fn try_with_capacity<T>(len: usize, what: impl Fn() -> String) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| Error::TooLarge {
        what: what(),
        detail: format!(
            "host memory cannot hold its {len} elements of {} bytes",
            std::mem::size_of::<T>()
        ),
    })?;
    Ok(v)
}
