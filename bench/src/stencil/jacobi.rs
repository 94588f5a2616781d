//! Jacobi (seed 002) at one size and precision: the seed's two hand-written kernels in the
//! shapes of its tables, then clforge's variants and the tuned configuration.

use std::mem::size_of;

use anyhow::{Context, Result};
use clforge::runtime::{LaunchConfig, Shape, Tile, Variant};

use super::cases::{ComputedKernel, JacobiCase, JacobiHost, JacobiKernel, PackedCase, PackedKernel};
use super::{time_and_tune, time_configs, Ctx, Timed};
use crate::baselines::seed002::{self, Seed, SeedKernel, SeedShape};
use crate::measure::time_launches;
use crate::real::Real;
use crate::report::Row;

pub(super) fn jacobi_configs(quick: bool) -> Vec<LaunchConfig> {
    let mut configs = vec![LaunchConfig::default(), LaunchConfig::variant(Variant::Vector)];
    let tiles: &[SeedShape] = if quick {
        &[seed002::TABLE_1[0], seed002::TABLE_2]
    } else {
        &seed002::TABLE_1
    };
    configs.extend(tiles.iter().map(|s| {
        LaunchConfig::tiled(Tile {
            x: s.block_x,
            y: s.tile_y,
            rows: s.block_y,
        })
    }));
    // Several points along y per work-item (the seed's "no shared" walks 4 rows).
    for (wg, points) in [([32, 4, 1], 4), ([32, 8, 1], 4), ([32, 4, 1], 8), ([32, 8, 1], 2)] {
        configs.push(LaunchConfig {
            work_group: Some(wg),
            points: Some(points),
            ..LaunchConfig::variant(Variant::Plain)
        });
    }
    if !quick {
        // Whole aligned vectors of 8 points, 2 or 4 rows of them per work-item.
        for (wg, points) in [([32, 4, 1], 2), ([32, 4, 1], 4), ([64, 2, 1], 4)] {
            configs.push(LaunchConfig {
                work_group: Some(wg),
                points: Some(points),
                ..LaunchConfig::variant(Variant::Vector)
            });
        }
        // Wider tiles than the seed's: longer contiguous rows per work-group.
        configs.extend([Tile { x: 64, y: 16, rows: 4 }, Tile { x: 128, y: 8, rows: 2 }].map(LaunchConfig::tiled));
    }
    configs
}

/// The packed-mask Jacobi's table: the masked one's configurations (in a quick run only the
/// default and the vector variant: program builds dominate it on a CPU).
pub(super) fn packed_configs(quick: bool) -> Vec<LaunchConfig> {
    if quick {
        vec![LaunchConfig::default(), LaunchConfig::variant(Variant::Vector)]
    } else {
        jacobi_configs(false)
    }
}

pub(super) fn seed_configs(quick: bool) -> Vec<(SeedKernel, SeedShape)> {
    let shapes: &[SeedShape] = if quick {
        &[seed002::TABLE_1[0], seed002::TABLE_2]
    } else {
        &seed002::TABLE_1
    };
    let mut out = Vec::new();
    for &s in shapes {
        out.push((SeedKernel::Shared, s));
        out.push((SeedKernel::NoShared, s));
    }
    out
}

/// Sets `vs_seed` on the rows of one case and shape.
fn compare_with_seed(rows: &mut [Row]) {
    let best = rows
        .iter()
        .filter(|r| r.implementation == "seed002")
        .map(|r| r.time.median_us)
        .reduce(f64::min);
    if let Some(best) = best {
        for r in rows.iter_mut() {
            if r.time.median_us > 0.0 {
                r.vs_seed = Some(best / r.time.median_us);
            }
        }
    }
}

pub(super) fn run_jacobi<T: Real, K>(ctx: &mut Ctx, kernel: JacobiKernel<T, K>, shape: Shape) -> Result<()>
where
    JacobiKernel<T, K>: Copy,
{
    let case_name = format!("jacobi {}", T::NAME);
    let elem = size_of::<T>();
    let quick = ctx.opts.quick;
    let configs = jacobi_configs(quick);
    let seeds = seed_configs(quick);
    ctx.progress.step(&format!("{case_name} {shape}: host data and upload"));
    // ψ twice (ping-pong), ω, the u8 mask.
    if !ctx.fits(&case_name, shape, elem, 3, 1) {
        return Ok(());
    }
    let dev = ctx.dev;
    let mut case = {
        let host = JacobiHost::<T>::new(shape)?;
        JacobiCase::new(dev, kernel, &host).with_context(|| format!("{case_name} {shape}: allocating"))?
    };
    let spec = (kernel.spec)();
    // Read ψ, ω, the mask, write ψ (clforge); the seed reads no mask.
    let bytes = (3 * elem + 1) as f64;
    let seed_bytes = (3 * elem) as f64;
    // a(ψe + ψw) + b(ψn + ψs) + c·ω: 4 additions, 3 multiplications at a fluid point.
    let flops = 7.0;
    let mut rows = Vec::new();

    for (which, s) in seeds {
        ctx.progress
            .step(&format!("{case_name} {shape}: seed 002 {} {s}", which.label()));
        if !Seed::fits(shape, s) {
            ctx.report
                .skipped
                .push(format!("seed 002 {} {s} at {shape}: not whole tiles", which.name()));
            continue;
        }
        ctx.check_seed(kernel, which, s)?;
        let consts = ctx.seed.constants::<T>(shape, s, case.body, case.coeffs)?;
        let seed = &ctx.seed;
        let t = time_launches(ctx.opts.reps, || case.seed_step(seed, which, s, &consts))?;
        let config = format!("{} {s}", which.label());
        rows.push(Row::new(
            &case_name,
            shape,
            "seed002",
            which.name(),
            config,
            seed_bytes,
            flops,
            t,
            ctx.copy_gb_s,
        ));
    }

    let timed = Timed {
        case: &case_name,
        shape,
        spec,
        bytes_per_point: bytes,
        flops_per_point: flops,
    };
    let clforge = time_and_tune(ctx, &mut case, &timed, &configs, |ctx, config| {
        ctx.check_jacobi(kernel, config)
    })?;
    rows.extend(clforge);

    compare_with_seed(&mut rows);
    ctx.report.results.extend(rows);
    Ok(())
}

/// Jacobi with the cell kind computed from the point (`at: Point`) instead of read from the
/// mask, as seed 002's own kernel does (12 bytes per point instead of 13, where the geometry is a
/// formula the user can write): checked bit for bit against
/// the masked stencil's host reference, then timed in plain configurations.
pub(super) fn run_jacobi_computed<T: Real, K>(ctx: &mut Ctx, kernel: ComputedKernel<T, K>, shape: Shape) -> Result<()> {
    use super::kernels::Body;
    use clforge::runtime::{DeviceGrid, HostGrid, PingPong, StencilPlan};
    let case_name = format!("jacobi {} computed mask", T::NAME);
    let elem = size_of::<T>();
    ctx.progress.step(&format!("{case_name} {shape}: host data and upload"));
    if !ctx.fits(&case_name, shape, elem, 3, 0) {
        return Ok(());
    }
    let host = JacobiHost::<T>::new(shape)?;
    let [x1, y1, x2, y2] = host.body.map(|v| v as i32);
    let body = Body { x1, y1, x2, y2 };
    let k = (kernel.masked.coeffs)([0.25, 0.25, -0.05]);
    let dev = ctx.dev;
    // The check: the computed kind gives the masked stencil's values, bit for bit.
    let mut want = HostGrid::new(shape)?;
    (kernel.masked.host)(&mut want, &host.psi, &host.w, &host.cell, &k)?;
    let (psi, w) = (
        DeviceGrid::from_host(dev, &host.psi)?,
        DeviceGrid::from_host(dev, &host.w)?,
    );
    let mut out = DeviceGrid::new(dev, shape)?;
    let plan = StencilPlan::new(dev, (kernel.spec)(), &LaunchConfig::default(), shape)?;
    (kernel.launch)(&plan, &mut out, &psi, &w, &body, &k)?.wait()?;
    if out.to_host()?.data() != want.data() {
        anyhow::bail!("{case_name} {shape}: the computed cell kinds disagree with the mask");
    }
    let mut pp = PingPong::from_host(dev, &host.psi)?;
    let mut rows = Vec::new();
    let configs: &[([usize; 3], usize)] = if ctx.opts.quick {
        &[([32, 4, 1], 1), ([32, 4, 1], 4)]
    } else {
        &[
            ([32, 4, 1], 1),
            ([32, 4, 1], 2),
            ([32, 4, 1], 3),
            ([32, 4, 1], 4),
            ([32, 4, 1], 6),
            ([32, 4, 1], 8),
            ([32, 2, 1], 4),
            ([32, 8, 1], 4),
            ([64, 2, 1], 4),
            ([64, 4, 1], 4),
            ([128, 2, 1], 4),
            ([256, 1, 1], 4),
        ]
    };
    for &(wg, points) in configs {
        let config = LaunchConfig {
            points: Some(points),
            work_group: Some(wg),
            ..LaunchConfig::variant(Variant::Plain)
        };
        ctx.progress.step(&format!(
            "{case_name} {shape}: plain {}x{} x{points} points",
            wg[0], wg[1]
        ));
        let plan = StencilPlan::new(dev, (kernel.spec)(), &config, shape)?;
        let t = time_launches(ctx.opts.reps, || {
            let (next, cur) = pp.split();
            let ev = (kernel.launch)(&plan, next, cur, &w, &body, &k).map_err(anyhow::Error::from);
            pp.swap();
            ev
        })?;
        rows.push(Row::new(
            &case_name,
            shape,
            "clforge",
            if elem == 4 {
                "jacobi_computed_plain"
            } else {
                "jacobi_computed_f64_plain"
            },
            format!("plain {}x{} x{points} points", wg[0], wg[1]),
            (3 * elem) as f64,
            7.0,
            t,
            ctx.copy_gb_s,
        ));
    }
    ctx.report.results.extend(rows);
    Ok(())
}

/// Jacobi with the cell kinds packed 2 bits per point (`packed(cell = 2)`: a mask that has to
/// be read, read in fewer bytes): every configuration checked bit for bit against the masked stencil's host
/// reference, then timed and tuned like the masked one (`--quick`: timed only). ψ read and written, ω read, a quarter
/// of a byte of mask: `3 elem + 0.25` bytes per point.
pub(super) fn run_jacobi_packed<T: Real, K>(ctx: &mut Ctx, kernel: PackedKernel<T, K>, shape: Shape) -> Result<()>
where
    PackedKernel<T, K>: Copy,
{
    let case_name = format!("jacobi {} packed mask", T::NAME);
    let elem = size_of::<T>();
    ctx.progress.step(&format!("{case_name} {shape}: host data and upload"));
    if !ctx.fits(&case_name, shape, elem, 3, 1) {
        return Ok(());
    }
    let dev = ctx.dev;
    let mut case = {
        let host = JacobiHost::<T>::new(shape)?;
        PackedCase::new(dev, kernel, &host).with_context(|| format!("{case_name} {shape}: allocating"))?
    };
    let timed = Timed {
        case: &case_name,
        shape,
        spec: (kernel.spec)(),
        bytes_per_point: 3.0 * elem as f64 + 0.25,
        flops_per_point: 7.0,
    };
    let configs = packed_configs(ctx.opts.quick);
    let check = |ctx: &mut Ctx, config: &LaunchConfig| ctx.check_packed(kernel, config);
    // A quick run only checks and times (the tuner's candidates cost a program build each).
    let rows = if ctx.opts.quick {
        time_configs(ctx, &mut case, &timed, &configs, &mut { check })?.0
    } else {
        time_and_tune(ctx, &mut case, &timed, &configs, check)?
    };
    ctx.report.results.extend(rows);
    Ok(())
}
