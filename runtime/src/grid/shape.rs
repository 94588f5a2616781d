//! The extent of a grid: the bottom type that errors, grids and launches share.

use std::fmt;

/// The extent of a 1-, 2- or 3-D grid; x varies fastest in memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Shape {
    dims: [usize; 3],
    rank: usize,
}

impl Shape {
    /// A 1-D shape.
    pub fn d1(nx: usize) -> Shape {
        Shape {
            dims: [nx, 1, 1],
            rank: 1,
        }
    }
    /// A 2-D shape.
    pub fn d2(nx: usize, ny: usize) -> Shape {
        Shape {
            dims: [nx, ny, 1],
            rank: 2,
        }
    }
    /// A 3-D shape.
    pub fn d3(nx: usize, ny: usize, nz: usize) -> Shape {
        Shape {
            dims: [nx, ny, nz],
            rank: 3,
        }
    }
    /// Extents along x, y, z (1 beyond the rank).
    pub fn dims(&self) -> [usize; 3] {
        self.dims
    }
    /// Number of dimensions.
    pub fn rank(&self) -> usize {
        self.rank
    }
    /// Number of points.
    pub fn len(&self) -> usize {
        self.dims.iter().product()
    }
    /// Whether the grid has no points.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Linear index of a point.
    pub fn index(&self, p: [usize; 3]) -> usize {
        p[0] + self.dims[0] * (p[1] + self.dims[1] * p[2])
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = &self.dims[..self.rank];
        let parts: Vec<String> = d.iter().map(|n| n.to_string()).collect();
        write!(f, "{}", parts.join("x"))
    }
}
