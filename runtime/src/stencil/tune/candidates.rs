//! The configurations the tuner tries for one stencil, device and grid shape.

use crate::device::DeviceInfo;
use crate::grid::Shape;
use crate::stencil::{LaunchConfig, StencilSpec, Tile, Variant};

use super::SEED_002_TILES;

/// The configurations a tuning pass tries for `spec` on grids of `shape` on a device
/// described by `info`: the default launch first, then plain and vector launches with a
/// few work-group shapes, tiled launches with seed 002's tiles and a few others, and for 3-D
/// stencils march launches (2.5-D blocking) with a few tiles and depths.
/// Launches the device cannot run (the checks of [`StencilPlan::new`](crate::StencilPlan::new): work-group size and
/// extents, local memory, 32-bit indices) and work-groups far wider than the grid are left out.
pub fn candidates(spec: &StencilSpec, info: &DeviceInfo, shape: Shape) -> Vec<LaunchConfig> {
    let dims = shape.dims();
    // Device limits (work-group size, local memory) are the plan's own checks.
    let fits_device = |c: &LaunchConfig| crate::stencil::plan::size_launch(spec, info, c, shape).is_ok();
    // The default launch first, so that a pass can report what tuning gained over it;
    // later candidates that launch the same way, or that the device cannot run, are left out.
    let mut out = vec![LaunchConfig::default()];
    let mut seen = vec![LaunchConfig::default().effective(spec)];
    let mut push = |c: LaunchConfig| {
        let e = c.effective(spec);
        let fits = fits_device(&c);
        if fits && !seen.contains(&e) {
            seen.push(e);
            out.push(c);
        }
        fits
    };
    let wgs = work_groups(spec.rank);
    flat(spec, dims, wgs, &mut push);
    point_walks(spec, info, dims, wgs, &mut push);
    vector_walks(spec, info, dims, &mut push);
    tiled(spec, dims, &mut push);
    marches(spec, info, dims, &mut push);
    out
}

/// A work-group dimension wider than the grid's next power of two only idles work-items.
fn fits_grid(wg: [usize; 3], items: [usize; 3]) -> bool {
    (0..3).all(|d| wg[d] <= items[d].checked_next_power_of_two().unwrap_or(usize::MAX))
}

/// The work-group shapes tried for a stencil of `rank` dimensions.
fn work_groups(rank: usize) -> &'static [[usize; 3]] {
    match rank {
        1 => &[[64, 1, 1], [128, 1, 1], [256, 1, 1], [512, 1, 1]],
        2 => &[
            [32, 4, 1],
            [32, 8, 1],
            [64, 4, 1],
            [128, 2, 1],
            [256, 1, 1],
            [16, 16, 1],
        ],
        _ => &[[32, 4, 1], [32, 8, 1], [64, 4, 1], [128, 2, 1], [32, 4, 2], [16, 8, 2]],
    }
}

/// The plain and vector kernels in each work-group shape, and each in its default launch (the
/// only vector one where rows hold fewer vectors than any shape is wide: 64³ on a CPU, where
/// the vector kernel is the fastest).
fn flat(spec: &StencilSpec, dims: [usize; 3], wgs: &[[usize; 3]], push: &mut dyn FnMut(LaunchConfig) -> bool) {
    let vec_items = [dims[0].div_ceil(spec.lanes.max(1)), dims[1], dims[2]];
    for (variant, items) in [(Variant::Plain, dims), (Variant::Vector, vec_items)] {
        push(LaunchConfig {
            variant,
            ..LaunchConfig::default()
        });
        for &wg in wgs {
            let c = LaunchConfig {
                variant,
                work_group: Some(wg),
                ..LaunchConfig::default()
            };
            if fits_grid(wg, items) {
                push(c);
            }
        }
    }
}

/// The plain kernel walking several points along the slowest axis per work-item.
fn point_walks(
    spec: &StencilSpec,
    info: &DeviceInfo,
    dims: [usize; 3],
    wgs: &[[usize; 3]],
    push: &mut dyn FnMut(LaunchConfig) -> bool,
) {
    // The plain kernel walking 2, 4 or 8 points along the slowest axis per work-item in the
    // first work-group shapes, and in 2-D 3 rows in 32 x 4 and 3 or 4 in 64 x 2: on the H100
    // Jacobi at 8192² ran fastest so, f32 and f64 (docs/PERFORMANCE.md). Each candidate is a
    // build (a few seconds on PoCL), so the list stays short.
    if spec.rank > 1 {
        let slow = spec.rank - 1;
        // In 3-D on a GPU also wide rows and deeper walks along z (each plane read once for
        // up to 16 points: 2.5-D blocking in registers and the caches); not on a CPU, where
        // every candidate is a build of seconds and none of these pays.
        let gpu = info.kind == crate::DeviceKind::Gpu;
        let extra: &[([usize; 3], usize)] = match (spec.rank, gpu) {
            (2, _) => &[([32, 4, 1], 3), ([64, 2, 1], 3), ([64, 2, 1], 4)],
            (_, true) => &[
                ([64, 2, 1], 8),
                ([128, 2, 1], 4),
                ([128, 2, 1], 8),
                ([128, 1, 1], 8),
                ([256, 1, 1], 4),
                ([32, 4, 1], 16),
                ([64, 2, 1], 16),
                ([128, 1, 1], 16),
            ],
            _ => &[],
        };
        let pairs = wgs
            .iter()
            .take(3)
            .flat_map(|&wg| [2, 4, 8].map(|p| (wg, p)))
            .chain(extra.iter().copied());
        for (wg, points) in pairs {
            let c = LaunchConfig {
                variant: Variant::Plain,
                work_group: Some(wg),
                points: Some(points),
                ..LaunchConfig::default()
            };
            let mut items = dims;
            items[slow] = items[slow].div_ceil(points);
            if items[slow] >= 1 && dims[slow] >= 2 * points && fits_grid(wg, items) {
                push(c);
            }
        }
    }
}

/// On a GPU, the vector kernel with its wide lanes and walking several vectors per work-item.
fn vector_walks(spec: &StencilSpec, info: &DeviceInfo, dims: [usize; 3], push: &mut dyn FnMut(LaunchConfig) -> bool) {
    let vec_items = [dims[0].div_ceil(spec.lanes.max(1)), dims[1], dims[2]];
    // On a GPU the vector kernel with its wide lanes too (the narrow ones are the default there).
    if spec.narrow.is_some() && info.kind == crate::DeviceKind::Gpu {
        let c = LaunchConfig {
            variant: Variant::Vector,
            lanes: Some(spec.lanes),
            ..LaunchConfig::default()
        };
        push(c);
    }
    // On a GPU the vector kernel walking 2 to 8 vectors along the slowest axis: where rows are
    // multiples of its lanes it loads whole aligned vectors (VEC_ALIGNED; the H100's 3-D heat
    // step at 512³ ran at 97-99 % of copy so, docs/PERFORMANCE.md).
    if spec.rank > 1 && info.kind == crate::DeviceKind::Gpu {
        let slow = spec.rank - 1;
        let vector: &[([usize; 3], usize)] = &[
            ([32, 4, 1], 2),
            ([32, 4, 1], 4),
            ([64, 2, 1], 4),
            ([32, 8, 1], 4),
            ([128, 2, 1], 4),
            ([64, 4, 1], 8),
            ([32, 4, 1], 8),
        ];
        for &(wg, points) in vector {
            let c = LaunchConfig {
                variant: Variant::Vector,
                work_group: Some(wg),
                points: Some(points),
                ..LaunchConfig::default()
            };
            let mut items = vec_items;
            items[slow] = items[slow].div_ceil(points);
            if dims[slow] >= 2 * points && fits_grid(wg, items) {
                push(c);
            }
        }
    }
}

/// The tiled kernel in seed 002's tiles, a few others and the stencil's default tile.
fn tiled(spec: &StencilSpec, dims: [usize; 3], push: &mut dyn FnMut(LaunchConfig) -> bool) {
    let tiles: Vec<Tile> = match spec.rank {
        1 => [64, 128, 256, 512, 1024].map(|x| Tile { x, y: 1, rows: 1 }).to_vec(),
        2 => {
            let mut t = SEED_002_TILES.to_vec();
            t.extend([
                Tile { x: 64, y: 16, rows: 4 },
                Tile { x: 64, y: 32, rows: 8 },
                Tile { x: 128, y: 8, rows: 2 },
            ]);
            t
        }
        _ => vec![
            Tile { x: 32, y: 4, rows: 4 },
            Tile { x: 32, y: 8, rows: 4 },
            Tile { x: 32, y: 8, rows: 8 },
            Tile { x: 32, y: 16, rows: 4 },
            Tile { x: 64, y: 4, rows: 4 },
            Tile { x: 64, y: 8, rows: 2 },
        ],
    };
    for t in tiles.iter().chain([&spec.default_tile]) {
        let c = LaunchConfig::tiled(*t);
        if t.rows <= t.y && fits_grid([t.x, t.y, 1], dims) {
            push(c);
        }
    }
}

/// 3-D: the march variant over a few columns and depths.
fn marches(spec: &StencilSpec, info: &DeviceInfo, dims: [usize; 3], push: &mut dyn FnMut(LaunchConfig) -> bool) {
    // 3-D: the march variant (2.5-D blocking), columns of a few tiles walked over 8 to 64
    // planes; on a CPU two shapes only (each is a build of seconds).
    if spec.rank == 3 && spec.variant(Variant::March).unavailable.is_none() {
        let gpu = info.kind == crate::DeviceKind::Gpu;
        let marches: &[(Tile, usize)] = if gpu {
            &[
                (Tile { x: 32, y: 8, rows: 4 }, 16),
                (Tile { x: 32, y: 8, rows: 4 }, 64),
                (Tile { x: 32, y: 16, rows: 4 }, 32),
                (Tile { x: 32, y: 16, rows: 8 }, 32),
                (Tile { x: 64, y: 4, rows: 4 }, 32),
                (Tile { x: 64, y: 8, rows: 4 }, 32),
                (Tile { x: 64, y: 16, rows: 8 }, 64),
                (Tile { x: 128, y: 4, rows: 2 }, 32),
            ]
        } else {
            &[(Tile { x: 32, y: 8, rows: 4 }, 16), (Tile { x: 32, y: 8, rows: 4 }, 64)]
        };
        for &(t, planes) in marches {
            let c = LaunchConfig::march(t, planes);
            // Planes past the grid's depth only idle; the deepest march is the whole grid.
            let c = if planes > dims[2] {
                LaunchConfig::march(t, dims[2])
            } else {
                c
            };
            if fits_grid([t.x, t.y, 1], dims) {
                push(c);
            }
        }
    }
}
