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
    /// Number of points, or `usize::MAX` when their count overflows `usize` (no grid can
    /// hold that many: making one is an error); [`Shape::checked_len`] tells the two apart.
    pub fn len(&self) -> usize {
        self.checked_len().unwrap_or(usize::MAX)
    }
    /// Number of points, or `None` when the product of the extents overflows `usize`.
    ///
    /// ```
    /// # use clforge_runtime::Shape;
    /// assert_eq!(Shape::d2(3, 4).checked_len(), Some(12));
    /// assert_eq!(Shape::d2(usize::MAX, 2).checked_len(), None);
    /// assert_eq!(Shape::d3(usize::MAX, 2, 0).checked_len(), Some(0));
    /// ```
    pub fn checked_len(&self) -> Option<usize> {
        if self.is_empty() {
            return Some(0);
        }
        self.dims.iter().try_fold(1usize, |n, &d| n.checked_mul(d))
    }
    /// Whether the grid has no points (an extent is 0).
    pub fn is_empty(&self) -> bool {
        self.dims.contains(&0)
    }
    /// Linear index of a point inside the shape (x fastest). Points outside give a
    /// meaningless index rather than a panic; check them against [`Shape::dims`] first.
    pub fn index(&self, p: [usize; 3]) -> usize {
        let [nx, ny, _] = self.dims;
        p[0].wrapping_add(nx.wrapping_mul(p[1].wrapping_add(ny.wrapping_mul(p[2]))))
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = &self.dims[..self.rank];
        let parts: Vec<String> = d.iter().map(|n| n.to_string()).collect();
        write!(f, "{}", parts.join("x"))
    }
}
