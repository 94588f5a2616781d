//! The explicit 3-D 7-point heat step at one size: clforge's variants and the tuned
//! configuration (no hand-written baseline).

use anyhow::{Context, Result};
use clforge::runtime::{LaunchConfig, Shape, Tile, Variant};

use super::cases::{self, HeatCase};
use super::kernels::Heat3d;
use super::{time_and_tune, Ctx, Timed};

pub(super) fn heat_configs() -> Vec<LaunchConfig> {
    vec![
        LaunchConfig::default(),
        LaunchConfig::variant(Variant::Vector),
        LaunchConfig::tiled(Heat3d::spec().default_tile),
        // 2.5-D blocking: the default tile's column walked over the default depth, and wider
        // or taller columns walked deeper
        LaunchConfig::variant(Variant::March),
        LaunchConfig::march(Tile { x: 64, y: 8, rows: 4 }, 32),
        LaunchConfig::march(Tile { x: 128, y: 4, rows: 2 }, 32),
        LaunchConfig::march(Tile { x: 32, y: 16, rows: 8 }, 64),
        LaunchConfig::march(Tile { x: 128, y: 8, rows: 4 }, 64),
        // marching along z: 4 and 8 planes per work-item
        LaunchConfig {
            work_group: Some([32, 4, 1]),
            points: Some(4),
            ..LaunchConfig::variant(Variant::Plain)
        },
        LaunchConfig {
            work_group: Some([32, 4, 1]),
            points: Some(8),
            ..LaunchConfig::variant(Variant::Plain)
        },
        LaunchConfig {
            work_group: Some([64, 2, 1]),
            points: Some(8),
            ..LaunchConfig::variant(Variant::Plain)
        },
        // 8 points along x per work-item as aligned vectors, 2 to 8 of them along z
        vector([32, 4, 1], 4),
        vector([64, 2, 1], 4),
        vector([32, 8, 1], 4),
        vector([64, 4, 1], 8),
        vector([32, 4, 1], 2),
    ]
}

/// The vector kernel in `work_group`, `points` vectors per work-item along z.
fn vector(work_group: [usize; 3], points: usize) -> LaunchConfig {
    LaunchConfig {
        work_group: Some(work_group),
        points: Some(points),
        ..LaunchConfig::variant(Variant::Vector)
    }
}

pub(super) fn run_heat(ctx: &mut Ctx, shape: Shape) -> Result<()> {
    let case_name = "heat3d f32".to_owned();
    ctx.progress.step(&format!("{case_name} {shape}: host data and upload"));
    if !ctx.fits(&case_name, shape, 4, 2, 0) {
        return Ok(());
    }
    let dev = ctx.dev;
    let mut case = HeatCase::new(dev, &cases::heat_initial(shape)?).with_context(|| format!("{case_name} {shape}"))?;
    // Read u, write u: 8 B per point. lap = 5 additions + 6·centre (1 multiplication) - (1
    // subtraction), then centre + r·lap (1 multiplication, 1 addition): 9 flops.
    let timed = Timed {
        case: &case_name,
        shape,
        spec: Heat3d::spec(),
        bytes_per_point: 8.0,
        flops_per_point: 9.0,
    };
    let rows = time_and_tune(ctx, &mut case, &timed, &heat_configs(), |ctx, config| {
        ctx.check_heat(config)
    })?;
    ctx.report.results.extend(rows);
    Ok(())
}
