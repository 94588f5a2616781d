//! The contracts between clforge's generated OpenCL, the macros that print it and the runtime
//! that launches it, each stated once. The macros emit these values as `#define`s (or bake them
//! into the kernel IR); the runtime encodes its buffers with the same constants and functions.
//! A contract that exists once cannot drift.

#![no_std]
#![warn(missing_docs)]

pub mod modal;
pub mod names;

/// Lanes of the vector types the kernels compute with (`float8`, `double8`): the vector variant
/// of a stencil updates this many consecutive points, element rows are packed in chunks of it.
pub const LANES: usize = 8;

/// Highest number of Gauss-Legendre points per direction the host quadrature provides.
pub const MAX_QUADRATURE: usize = 12;

/// The stencil's default tile per rank: (points along x, points along y, work-group rows).
/// Seed 002 used 32x32 tiles walked by 32x4 work-groups.
pub const fn default_tile(rank: usize) -> (usize, usize, usize) {
    match rank {
        1 => (256, 1, 1),
        2 => (32, 32, 4),
        _ => (32, 8, 4),
    }
}

/// Planes a work-group of the 3-D march variant (2.5-D blocking) walks along z when the launch
/// names no depth (`MARCH_Z`): its ring of planes is loaded once per column and reused for every
/// plane after the first, so a deeper march pays the 2 HZ planes it loads up front less often.
pub const DEFAULT_MARCH_Z: usize = 16;

/// Bits per point of a packed grid (`#[stencil(packed(cell = 2))]`): powers of two dividing 32,
/// so no value straddles two 32-bit words, below a byte (a byte per point is the grid unpacked).
/// Point `i` is bits `(i % (32 / b)) * b ..` of word `i / (32 / b)`.
pub const PACKED_BITS: [u32; 3] = [1, 2, 4];

/// The reference cell an element is defined on, and so how it is integrated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cell {
    /// The box `[-1, 1]^dim`, tensor Gauss-Legendre points (`n` per direction, `n^dim` in all).
    Cube,
    /// The unit simplex `{x ≥ 0, Σx ≤ 1}` (vertices 0 and the unit vectors): collapsed
    /// (Duffy) Gauss rules exact to total degree `2n - 1` ([`simplex_points`]).
    Simplex,
}

impl Cell {
    /// The name as written in `#[clforge::element(cell = ...)]`.
    pub const fn name(self) -> &'static str {
        match self {
            Cell::Cube => "cube",
            Cell::Simplex => "simplex",
        }
    }

    /// Points of the rule of degree `2n - 1` on this cell in `dim` dimensions.
    pub const fn points(self, dim: usize, n: usize) -> usize {
        match self {
            Cell::Cube => n.pow(dim as u32),
            Cell::Simplex => simplex_points(dim, n),
        }
    }
}

/// Points of the collapsed simplex rule with `n` (exact to total degree `2n - 1`): the simplex
/// is the image of the box `[0, 1]^dim` under `x = ξ`, `y = (1 - ξ) η`, `z = (1 - ξ)(1 - η) ζ`,
/// whose Jacobian `(1 - ξ)^(dim-1) (1 - η)^(dim-2)` raises the degree along `ξ` (and `η` in 3-D)
/// by up to 2, so those axes get `n + 1` Gauss-Legendre points and the last axis `n`:
/// `n` in 1-D, `(n + 1) n` in 2-D, `(n + 1)² n` in 3-D.
pub const fn simplex_points(dim: usize, n: usize) -> usize {
    match dim {
        0 | 1 => n,
        2 => (n + 1) * n,
        _ => (n + 1) * (n + 1) * n,
    }
}

/// Element contracts: per-element material indices, blocked schedules and crack masks.
pub mod element {
    /// Material index of a dead (cracked or removed) element in the per-element material array:
    /// it contributes no force and no stress.
    pub const DEAD_MATERIAL: u8 = 255;

    /// Default work-group width of the blocked schedules (elements along x per block).
    pub const L_X: usize = 16;
    /// Default work-group height of the blocked schedules (columns along y per block).
    pub const L_Y: usize = 4;
    /// Default elements each work-item of a blocked schedule walks up its column.
    pub const WI_SIZE: usize = 8;

    /// Bits per word of a block's crack mask.
    pub const MASK_BITS: usize = 32;

    /// Words of one block's crack mask: one bit per element of an `l_x` x (`l_y` x `wi_size`) block.
    pub const fn mask_words(l_x: usize, l_y: usize, wi_size: usize) -> usize {
        (l_x * l_y * wi_size).div_ceil(MASK_BITS)
    }

    /// Bit of the crack mask for the element walked at step `w` by work-item (`lx`, `ly`):
    /// `lx * (l_y * wi_size) + ly * wi_size + w`. The kernels print the same formula from
    /// [`CRACK_BIT_C`].
    pub const fn crack_bit(lx: usize, ly: usize, w: usize, l_y: usize, wi_size: usize) -> usize {
        lx * (l_y * wi_size) + ly * wi_size + w
    }

    /// [`crack_bit`] as OpenCL C over the kernel's `lx`, `ly`, `w` and the tunables `L_Y`, `WI_SIZE`.
    pub const CRACK_BIT_C: &str = "lx * (L_Y * WI_SIZE) + ly * WI_SIZE + w";
}

#[cfg(test)]
mod tests {
    use super::element::*;

    #[test]
    fn crack_bits_cover_a_block_once() {
        let (lx, ly, wi) = (L_X, L_Y, WI_SIZE);
        let mut seen = [false; L_X * L_Y * WI_SIZE];
        for x in 0..lx {
            for y in 0..ly {
                for w in 0..wi {
                    let b = crack_bit(x, y, w, ly, wi);
                    assert!(!seen[b], "bit {b} twice");
                    seen[b] = true;
                }
            }
        }
        assert!(seen.iter().all(|s| *s));
        assert_eq!(mask_words(lx, ly, wi) * MASK_BITS, seen.len());
        assert_eq!(mask_words(3, 1, 1), 1);
    }
}

/// Where a generated kernel's parameter comes from at launch. The macro prints one list per
/// kernel from the IR (`ir::Param::binding`), in the kernel's parameter order; the runtime
/// binds every launch of every kind from it, so no argument order is written twice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Bind {
    /// The launch's argument `i`: the user's function arguments in order, less `at: Point`.
    Arg(usize),
    /// Output `i` of a stencil (0: the first; a reduction output binds its partials).
    Out(usize),
    /// The launched grid's extent along an axis (`nx`, `ny`, `nz`).
    Extent(usize),
    /// Where the launched grid starts in the whole grid along an axis (0 on one device).
    Origin(usize),
    /// The whole grid's extent along an axis (the launched grid's on one device).
    Whole(usize),
    /// The box whose points a reduction counts: its low corner (0..3), then its high (3..6).
    ReduceBox(usize),
    /// A value the kind's plan supplies by name (a sweep's diagonal, a lattice's seed and
    /// colour, an element schedule's arrays).
    Named(&'static str),
}
