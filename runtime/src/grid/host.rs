//! Host side of the DSL: grids in host memory, the cursors a stencil function reads its
//! neighbours through (`psi.at(1, 0)`), and the parameter structs' layout.

use crate::buffer::Scalar;
use crate::error::{Error, Result};

use crate::grid::Shape;

/// How points near the edge of the grid are treated (the stencil attribute's `boundary`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Boundary {
    /// Points closer to the edge than the halo are left untouched (seed 002).
    Fixed,
    /// Reads wrap around; every point is updated.
    Periodic,
    /// Reads are clamped to the nearest point inside; every point is updated.
    Clamp,
}

/// A grid in host memory.
#[derive(Clone, Debug, PartialEq)]
pub struct HostGrid<T> {
    shape: Shape,
    data: Vec<T>,
}

impl<T: Copy + Default> HostGrid<T> {
    /// A grid filled with `T::default()`; [`Error::TooLarge`] if the shape's point count
    /// overflows `usize` or the host cannot allocate it.
    ///
    /// ```
    /// # use clforge_runtime::{Error, HostGrid, Shape};
    /// assert_eq!(HostGrid::<f32>::new(Shape::d2(3, 2)).unwrap().data().len(), 6);
    /// assert!(matches!(HostGrid::<f32>::new(Shape::d2(usize::MAX, 2)), Err(Error::TooLarge { .. })));
    /// ```
    pub fn new(shape: Shape) -> Result<HostGrid<T>> {
        let len = shape.checked_len().ok_or_else(|| crate::grid::overflow(shape))?;
        Ok(HostGrid {
            shape,
            data: crate::grid::try_filled(len, T::default(), || format!("host grid of shape {shape}"))?,
        })
    }
    /// Wraps data laid out x-fastest; [`Error::LengthMismatch`] if it does not fill the shape.
    pub fn from_vec(shape: Shape, data: Vec<T>) -> Result<HostGrid<T>> {
        let len = shape.checked_len().ok_or_else(|| crate::grid::overflow(shape))?;
        if data.len() != len {
            return Err(Error::LengthMismatch {
                what: format!("grid data for shape {shape}"),
                expected: len,
                found: data.len(),
            });
        }
        Ok(HostGrid { shape, data })
    }
    /// A grid whose value at each point is `f([x, y, z])`; errors as [`HostGrid::new`].
    pub fn from_fn(shape: Shape, mut f: impl FnMut([usize; 3]) -> T) -> Result<HostGrid<T>> {
        let len = shape.checked_len().ok_or_else(|| crate::grid::overflow(shape))?;
        let mut data = crate::grid::try_with_capacity(len, || format!("host grid of shape {shape}"))?;
        let [nx, ny, nz] = shape.dims();
        for z in 0..nz {
            for y in 0..ny {
                for x in 0..nx {
                    data.push(f([x, y, z]));
                }
            }
        }
        Ok(HostGrid { shape, data })
    }
    /// The shape.
    pub fn shape(&self) -> Shape {
        self.shape
    }
    /// The values, x fastest.
    pub fn data(&self) -> &[T] {
        &self.data
    }
    /// The values, mutable.
    pub fn data_mut(&mut self) -> &mut [T] {
        &mut self.data
    }
    /// The value at a point, or `None` outside the grid.
    pub fn get(&self, p: [usize; 3]) -> Option<T> {
        let inside = (0..3).all(|a| p[a] < self.shape.dims()[a]);
        if inside {
            self.data.get(self.shape.index(p)).copied()
        } else {
            None
        }
    }
    /// Sets the value at a point; points outside the grid are ignored.
    pub fn set(&mut self, p: [usize; 3], v: T) {
        let inside = (0..3).all(|a| p[a] < self.shape.dims()[a]);
        if !inside {
            return;
        }
        if let Some(slot) = self.data.get_mut(self.shape.index(p)) {
            *slot = v;
        }
    }
    /// Gives the data back.
    pub fn into_vec(self) -> Vec<T> {
        self.data
    }
}

/// The points a stencil writes: all of them, or the interior for [`Boundary::Fixed`].
#[derive(Clone, Copy, Debug)]
pub struct UpdateRegion {
    lo: [usize; 3],
    hi: [usize; 3],
}

impl UpdateRegion {
    /// The region of `shape` a stencil with this halo and boundary updates.
    pub fn new(shape: Shape, halo: [usize; 3], boundary: Boundary) -> UpdateRegion {
        let d = shape.dims();
        match boundary {
            Boundary::Fixed => {
                let lo = halo;
                let hi = [0, 1, 2].map(|a| d[a].saturating_sub(halo[a]).max(halo[a]));
                UpdateRegion { lo, hi }
            }
            _ => UpdateRegion { lo: [0; 3], hi: d },
        }
    }
    /// The points, x fastest.
    pub fn points(&self) -> impl Iterator<Item = [usize; 3]> + '_ {
        self.into_points()
    }
    /// The points, x fastest, owning the region (the iterator outlives it).
    pub fn into_points(self) -> impl Iterator<Item = [usize; 3]> + 'static {
        let (lo, hi) = (self.lo, self.hi);
        (lo[2]..hi[2]).flat_map(move |z| (lo[1]..hi[1]).flat_map(move |y| (lo[0]..hi[0]).map(move |x| [x, y, z])))
    }
}

/// The coordinate a read at `p + d` resolves to on an axis of `n` points (`n` ≥ 1; an empty
/// axis resolves to 0, which no grid holds, so the read gives the default).
fn resolve(p: usize, d: isize, n: usize, boundary: Boundary) -> usize {
    if n == 0 {
        return 0;
    }
    match boundary {
        // (p + d) mod n without overflow: p mod n plus d mod n, both below n.
        Boundary::Periodic => {
            let back = d.unsigned_abs() % n;
            let step = if d >= 0 { back } else { (n - back) % n };
            let p = p % n;
            if p >= n - step {
                p - (n - step)
            } else {
                p + step
            }
        }
        // Fixed: only interior points are visited, so reads never leave the grid; clamping
        // keeps a bad halo from turning into a panic.
        _ => p.saturating_add_signed(d).min(n - 1),
    }
}

macro_rules! cursor {
    ($(#[$doc:meta])* $name:ident, $($d:ident: $axis:literal),+) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug)]
        pub struct $name<'a, T> {
            grid: &'a HostGrid<T>,
            p: [usize; 3],
            boundary: Boundary,
        }

        impl<'a, T: Copy + Default> $name<'a, T> {
            /// A cursor at point `p` of `grid`.
            pub fn new(grid: &'a HostGrid<T>, p: [usize; 3], boundary: Boundary) -> Self {
                $name { grid, p, boundary }
            }
            /// The value at the neighbour `(dx, ...)` of the cursor's point.
            pub fn at(&self, $($d: isize),+) -> T {
                let mut q = self.p;
                $(q[$axis] = resolve(self.p[$axis], $d, self.grid.shape.dims()[$axis], self.boundary);)+
                self.grid.data.get(self.grid.shape.index(q)).copied().unwrap_or_default()
            }
        }
    };
}

cursor!(
    /// A 1-D grid as a stencil function sees it: `u.at(-1)`.
    Grid1, dx: 0
);
cursor!(
    /// A 2-D grid as a stencil function sees it: `psi.at(1, 0)`.
    Grid2, dx: 0, dy: 1
);
cursor!(
    /// A 3-D grid as a stencil function sees it: `u.at(0, 0, -1)`.
    Grid3, dx: 0, dy: 1, dz: 2
);

macro_rules! sweep_cursor {
    ($(#[$doc:meta])* $name:ident, $($d:ident: $axis:literal),+) => {
        $(#[$doc])*
        ///
        /// The host sweep updates the field in place, so both reads see the array as it is when
        /// the point is computed: `new` at a point the sweep has passed, `old` at one it has not
        /// (the macro proves which is which from the declared order).
        #[derive(Clone, Copy, Debug)]
        pub struct $name<'a, T> {
            grid: &'a HostGrid<T>,
            p: [usize; 3],
            boundary: Boundary,
        }

        impl<'a, T: Scalar> $name<'a, T> {
            /// A cursor at point `p` of the field being swept.
            pub fn cursor(grid: &'a HostGrid<T>, p: [usize; 3], boundary: Boundary) -> Self {
                $name { grid, p, boundary }
            }
            fn read(&self, $($d: isize),+) -> T {
                let mut q = self.p;
                $(q[$axis] = resolve(self.p[$axis], $d, self.grid.shape.dims()[$axis], self.boundary);)+
                self.grid.data.get(self.grid.shape.index(q)).copied().unwrap_or_default()
            }
            /// The value this sweep has already computed at the neighbour `(dx, ...)` (behind the
            /// point, or level with it, along every axis).
            #[allow(clippy::new_ret_no_self, clippy::wrong_self_convention)]
            pub fn new(&self, $($d: isize),+) -> T {
                self.read($($d),+)
            }
            /// The value before this sweep at the neighbour `(dx, ...)` (ahead of the point, or
            /// level with it, along every axis; `old(0, ..)` is the point's own value).
            pub fn old(&self, $($d: isize),+) -> T {
                self.read($($d),+)
            }
        }
    };
}

sweep_cursor!(
    /// The field a 1-D sweep updates in place: `c.new(-1)`, `c.old(1)`.
    Sweep1, dx: 0
);
sweep_cursor!(
    /// The field a 2-D sweep updates in place: `c.new(-1, 0)`, `c.old(1, 0)`.
    Sweep2, dx: 0, dy: 1
);
sweep_cursor!(
    /// The field a 3-D sweep updates in place: `c.new(0, 0, -1)`, `c.old(0, 0, 1)`.
    Sweep3, dx: 0, dy: 1, dz: 2
);

/// `Sweep<T>` is the 2-D swept field, the common case.
pub type Sweep<'a, T> = Sweep2<'a, T>;

/// `Grid<T>` is the 2-D grid, the common case.
pub type Grid<'a, T> = Grid2<'a, T>;

/// The point a stencil updates, as its body reads it through an argument `at: Point`: its
/// index along each axis in the whole grid and the whole grid's extents (`x`, `nx`, ...; axes
/// beyond the stencil's rank are 0 and 1). The generated host reference builds it at each
/// point; the kernels compute the same numbers from the work-item, on a split grid from the
/// slab's place in the whole grid. A position is the user's arithmetic on it, e.g.
/// `origin + at.x as f32 * h`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Point {
    /// Index along x.
    pub x: i32,
    /// Index along y (0 in 1-D).
    pub y: i32,
    /// Index along z (0 below 3-D).
    pub z: i32,
    /// The whole grid's extent along x.
    pub nx: i32,
    /// The whole grid's extent along y (1 in 1-D).
    pub ny: i32,
    /// The whole grid's extent along z (1 below 3-D).
    pub nz: i32,
}

impl Point {
    /// Point `p` of a grid of `shape` (the kernels' indices are 32-bit `int`s: a grid has at
    /// most `i32::MAX` points, which every launch checks).
    pub fn at(p: [usize; 3], shape: Shape) -> Point {
        let [nx, ny, nz] = shape.dims().map(|d| d as i32);
        Point {
            x: p[0] as i32,
            y: p[1] as i32,
            z: p[2] as i32,
            nx,
            ny,
            nz,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_wrap_and_clamp() {
        let g = HostGrid::from_fn(Shape::d2(4, 3), |[x, y, _]| (10 * y + x) as i32).unwrap();
        assert_eq!(Grid2::new(&g, [0, 0, 0], Boundary::Periodic).at(-1, -1), 23);
        assert_eq!(Grid2::new(&g, [3, 2, 0], Boundary::Periodic).at(1, 1), 0);
        assert_eq!(Grid2::new(&g, [0, 2, 0], Boundary::Clamp).at(-2, 5), 20);
        assert_eq!(Grid2::new(&g, [1, 1, 0], Boundary::Fixed).at(1, -1), 2);
    }

    #[test]
    fn update_region_of_fixed_boundary_is_interior() {
        assert_eq!(
            UpdateRegion::new(Shape::d2(5, 4), [1, 2, 0], Boundary::Fixed)
                .points()
                .count(),
            0
        );
        let r = UpdateRegion::new(Shape::d2(5, 6), [1, 2, 0], Boundary::Fixed);
        let pts: Vec<_> = r.points().collect();
        assert_eq!(pts.first(), Some(&[1, 2, 0]));
        assert_eq!(pts.last(), Some(&[3, 3, 0]));
        assert_eq!(pts.len(), 3 * 2);
        assert_eq!(
            UpdateRegion::new(Shape::d1(1), [1, 0, 0], Boundary::Fixed)
                .points()
                .count(),
            0
        );
        assert_eq!(
            UpdateRegion::new(Shape::d1(1), [1, 0, 0], Boundary::Periodic)
                .points()
                .count(),
            1
        );
    }

    #[test]
    fn struct_bytes_follow_c_layout() {
        let mut b = crate::params::StructBytes::default();
        b.put(1u8);
        b.put(2.0f64);
        b.put(3i32);
        let bytes = b.finish();
        assert_eq!(bytes.len(), 24);
        assert_eq!(bytes[0], 1);
        assert_eq!(&bytes[8..16], &2.0f64.to_le_bytes());
        assert_eq!(&bytes[16..20], &3i32.to_le_bytes());
    }

    #[test]
    fn literals_round_trip() {
        assert_eq!(0.1f32.cl_literal(), "(0.1f)");
        assert_eq!((-2.5f64).cl_literal(), "(-2.5)");
        assert_eq!(f32::INFINITY.cl_literal(), "as_float(0x7f800000u)");
        assert_eq!(3u32.cl_literal(), "3u");
        assert_eq!(7u8.cl_literal(), "((uchar)7)");
    }
}
