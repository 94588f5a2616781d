//! What the runtime knows of a generated stencil (from the macro), and how to launch it.

use crate::device::DeviceInfo;
use crate::grid::Boundary;
use clforge_abi::Bind;

use super::plan::local_points;
use crate::launch::PackedArg;

/// Which generated kernel to launch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Variant {
    /// One point per work-item, neighbours from global memory (through the caches).
    #[default]
    Plain,
    /// Tile plus halo staged in local memory (seed 002's shared-memory kernel).
    Tiled,
    /// Several consecutive points along x per work-item with vector loads.
    Vector,
    /// Several iterations per launch: the state grid stays in local memory on a tile whose
    /// halo shrinks each step (temporal blocking). Writes the state after
    /// [`LaunchConfig::steps`] applications of the stencil. Every rank and boundary (periodic:
    /// wrapped tile points; clamp: ghost tile points copy their edge point each step); in 3-D
    /// the tile is `y` points deep along z.
    Steps,
    /// 2.5-D blocking, 3-D stencils only: an `x` by `rows` work-group owns an `x` by `y` column
    /// of the grid and marches along z over [`LaunchConfig::march`] planes (default
    /// [`DEFAULT_MARCH_Z`]), keeping the `2 HZ + 2` planes it reads and loads next of every
    /// staged grid in a ring in local memory: each step loads one plane with its x/y halo, so
    /// a point is read from global memory about once instead of `2 HZ + 1` times.
    March,
}

impl Variant {
    /// Every variant, in the order of [`StencilSpec::variants`].
    pub const ALL: [Variant; 5] = [
        Variant::Plain,
        Variant::Tiled,
        Variant::Vector,
        Variant::Steps,
        Variant::March,
    ];

    /// The variant's name in messages and the tuner's cache (`plain`, `tiled`, `vector`,
    /// `steps`, `march`).
    pub fn name(self) -> &'static str {
        match self {
            Variant::Plain => "plain",
            Variant::Tiled => "tiled",
            Variant::Vector => "vector",
            Variant::Steps => "steps",
            Variant::March => "march",
        }
    }

    /// The variant [`Variant::name`] names.
    pub fn from_name(name: &str) -> Option<Variant> {
        Variant::ALL.into_iter().find(|v| v.name() == name)
    }
}

/// Tile of the tiled, steps and march variants: `x` by `y` points, walked by an `x` by `rows`
/// work-group. In 3-D the steps variant's tile is also `y` points deep along z (the tiled
/// variant takes one plane per work-group, the march variant [`LaunchConfig::march`] planes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Tile {
    /// Points along x (= work-group width).
    pub x: usize,
    /// Points along y.
    pub y: usize,
    /// Work-items along y; each walks `y / rows` rows.
    pub rows: usize,
}

/// One generated variant of a stencil, as the macro decided it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VariantSpec {
    /// The kernel's OpenCL name.
    pub kernel: &'static str,
    /// Why the variant is not generated for this stencil, if it is not.
    pub unavailable: Option<&'static str>,
    /// Bytes of `__local` memory per point of the work-group's tile (0: none).
    pub local_bytes_per_point: usize,
    /// Where each of the kernel's parameters comes from, in its parameter order.
    pub params: &'static [Bind],
}

/// The kernel that folds one reduction output's work-group partials into its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FoldSpec {
    /// The kernel's OpenCL name.
    pub kernel: &'static str,
    /// Where each of its parameters comes from: the partials, their count and the result,
    /// by name.
    pub params: &'static [Bind],
}

/// What the runtime knows about one generated stencil (from the macro).
#[derive(Clone, Copy, Debug)]
pub struct StencilSpec {
    /// The Rust function's name.
    pub name: &'static str,
    /// Number of dimensions.
    pub rank: usize,
    /// Largest offset read along each axis.
    pub halo: [usize; 3],
    /// Boundary policy.
    pub boundary: Boundary,
    /// Points per work-item of the vector variant.
    pub lanes: usize,
    /// The vector variant's narrow kernel and its lanes (`<name>_vec4`, 4), compiled where the
    /// source is built with `-D CLFORGE_VEC4=1`: on GPUs by default (eight points per
    /// work-item are too many there), or where a launch names its lanes
    /// ([`LaunchConfig::lanes`]). `None`: the source has only the `lanes` kernel.
    pub narrow: Option<(&'static str, usize)>,
    /// The body reads its point (`at: Point`): the kernels take the grid's origin in the whole
    /// grid and the whole grid's extents after `nx, ny, nz`.
    pub point: bool,
    /// The kernels that fold each reduction output's work-group partials into its value, in
    /// the order of the reduction outputs (empty for a stencil without reductions).
    pub folds: &'static [FoldSpec],
    /// The variants in [`Variant`] order: plain, tiled, vector, steps, march.
    pub variants: [VariantSpec; 5],
    /// The grid arguments the stencil reads packed (`#[stencil(packed(cell = 2))]`); a launch
    /// must bind exactly these as [`PackedGrid`]s of these bits ([`Error::PackedBinding`]).
    pub packed: &'static [PackedArg],
    /// Tile used when the launch config names none.
    pub default_tile: Tile,
    /// `file.rs:line` of the Rust function.
    pub origin: &'static str,
    /// The generated OpenCL C.
    pub source: &'static str,
}

impl StencilSpec {
    /// The macro's facts about one variant.
    pub fn variant(&self, v: Variant) -> &VariantSpec {
        &self.variants[v as usize]
    }

    /// The tile a tiled, steps or march launch that names none uses on the device `info`: the
    /// stencil's [`StencilSpec::default_tile`], halved in y (then in x) until its `__local`
    /// arrays fit `CL_DEVICE_LOCAL_MEM_SIZE` (a 3-D stencil with a deep z halo and wide
    /// types overflows a GPU's 48 KiB at 32 x 8). A tile the caller names is never changed:
    /// one that does not fit is an error. When not even 1 x 1 fits, the default is returned
    /// and the launch reports the shortfall.
    pub fn tile_on(&self, info: &DeviceInfo, variant: Variant, steps: usize) -> Tile {
        let per_point = self.variant(variant).local_bytes_per_point as u64;
        let fits = |t: Tile| {
            local_points(variant, t, steps, self.halo, self.rank)
                .is_some_and(|p| (p as u64).saturating_mul(per_point) <= info.local_mem_bytes)
        };
        let mut t = self.default_tile;
        while !fits(t) {
            if t.y > 1 {
                t.y /= 2;
            } else if t.x > 1 {
                t.x /= 2;
            } else {
                return self.default_tile;
            }
            t.rows = t.rows.min(t.y);
        }
        t
    }
}

/// How to launch: the variant and its tunables.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct LaunchConfig {
    /// Which kernel.
    pub variant: Variant,
    /// Tile of the tiled variant (default: the stencil's).
    pub tile: Option<Tile>,
    /// Work-group of the plain and vector variants (default: 32 x 4, 64 in 1-D).
    pub work_group: Option<[usize; 3]>,
    /// Iterations per launch of the [`Variant::Steps`] kernel (default 4).
    pub steps: Option<usize>,
    /// Points per work-item of the [`Variant::Plain`] kernel along the slowest axis (y in
    /// 2-D, z in 3-D; default 1), so that a neighbour one point further along it is read once
    /// for two points; for the [`Variant::Vector`] kernel, vectors of points. 2-D and 3-D
    /// stencils.
    pub points: Option<usize>,
    /// Planes along z per work-group of the [`Variant::March`] kernel (`MARCH_Z`, default
    /// [`DEFAULT_MARCH_Z`]; the last work-group of a column stops at the grid's end).
    pub march: Option<usize>,
    /// Points per work-item of the [`Variant::Vector`] kernel: the spec's `lanes` (8) or its
    /// `narrow` ones (4); default: the narrow ones on a GPU, else `lanes`.
    pub lanes: Option<usize>,
}

impl LaunchConfig {
    /// The given variant with default tunables.
    pub fn variant(variant: Variant) -> LaunchConfig {
        LaunchConfig {
            variant,
            ..LaunchConfig::default()
        }
    }
    /// The tiled variant with this tile.
    pub fn tiled(tile: Tile) -> LaunchConfig {
        LaunchConfig {
            variant: Variant::Tiled,
            tile: Some(tile),
            ..LaunchConfig::default()
        }
    }
    /// `steps` iterations per launch on tiles of `tile` (temporal blocking; in 3-D the tile is
    /// `tile.y` deep along z).
    pub fn steps(steps: usize, tile: Tile) -> LaunchConfig {
        LaunchConfig {
            variant: Variant::Steps,
            tile: Some(tile),
            steps: Some(steps),
            work_group: None,
            points: None,
            march: None,
            lanes: None,
        }
    }
    /// The march variant (2.5-D blocking, 3-D stencils): `tile.x` by `tile.y` columns walked
    /// along z over `planes` planes by `tile.x` by `tile.rows` work-groups.
    pub fn march(tile: Tile, planes: usize) -> LaunchConfig {
        LaunchConfig {
            variant: Variant::March,
            tile: Some(tile),
            march: Some(planes),
            ..LaunchConfig::default()
        }
    }
    /// Planes per work-group of a [`Variant::March`] launch (the default when it names none).
    pub fn march_planes(&self) -> usize {
        self.march.unwrap_or(DEFAULT_MARCH_Z)
    }
    /// Iterations one launch performs (1 except for [`Variant::Steps`]).
    pub fn iterations(&self) -> usize {
        match self.variant {
            Variant::Steps => self.steps.unwrap_or(DEFAULT_STEPS),
            _ => 1,
        }
    }
    /// This configuration with the defaults it leaves open filled in for `spec`: the tile of
    /// the tiled variant, the work-group of the others. Launches the same kernel the same way.
    pub fn effective(&self, spec: &StencilSpec) -> LaunchConfig {
        match self.variant {
            Variant::Tiled => LaunchConfig::tiled(self.tile.unwrap_or(spec.default_tile)),
            Variant::Steps => LaunchConfig::steps(self.iterations(), self.tile.unwrap_or(spec.default_tile)),
            Variant::March => LaunchConfig::march(self.tile.unwrap_or(spec.default_tile), self.march_planes()),
            v => LaunchConfig {
                variant: v,
                work_group: Some(self.work_group.unwrap_or(default_work_group(spec.rank))),
                // one point (or vector) per work-item is the default
                points: self
                    .points
                    .filter(|&p| matches!(v, Variant::Plain | Variant::Vector) && p != 1),
                lanes: self.lanes.filter(|_| v == Variant::Vector),
                ..LaunchConfig::default()
            },
        }
    }
}

/// Iterations per launch of the steps variant when the launch config names none.
pub const DEFAULT_STEPS: usize = 4;

/// Planes per work-group of the march variant when the launch config names none.
pub const DEFAULT_MARCH_Z: usize = clforge_abi::DEFAULT_MARCH_Z;

/// Work-group of the plain and vector variants when the launch config names none.
pub(crate) fn default_work_group(rank: usize) -> [usize; 3] {
    match rank {
        1 => [64, 1, 1],
        _ => [32, 4, 1],
    }
}
