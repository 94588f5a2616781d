//! Temporal blocking: several Jacobi iterations per launch with the state in local memory
//! (`Variant::Steps`), against one iteration per launch.

use std::time::Instant;

use anyhow::Result;
use clforge::runtime::{DeviceGrid, DeviceKind, Event, HostGrid, LaunchConfig, PingPong, Shape, Tile, Variant};

use super::kernels::{Coeffs, JacobiFixed, BODY, FLUID};
use super::Ctx;
use crate::measure::device_sum_ns;
use crate::options::describe;
use crate::report::IterRow;

/// `steps` Jacobi iterations per launch with the state in local memory (`Variant::Steps`),
/// checked against the host function first, then timed over `n` iterations enqueued without
/// events. Several steps per launch divide the launch cost on the small grid (on the H100, 2.3 µs
/// per iteration at 512x256 with 8 steps against 6.0 µs with one) and, on large grids, re-read
/// only ω, the mask and the halo between steps (264 µs per iteration at 8192² with 4 steps
/// against 384 µs with one). On PoCL's CPU device it does not pay: barriers are expensive there.
pub(super) fn temporal_blocking(ctx: &mut Ctx) -> Result<()> {
    let n = ctx.opts.iterations;
    if n == 0 || ctx.opts.small.rank() != 2 {
        return Ok(());
    }
    temporal_blocking_at(ctx, ctx.opts.small, n, true)?;
    // On a GPU also the largest 2-D grid: there temporal blocking trades global traffic for
    // redundant halo work, so a step can cost less than one sweep at copy bandwidth.
    if ctx.dev.info().kind == DeviceKind::Gpu {
        if let Some(&big) = ctx
            .opts
            .sizes_2d
            .iter()
            .filter(|s| s.len() >= 4096 * 4096)
            .max_by_key(|s| s.len())
        {
            if ctx.fits("jacobi fixed steps", big, 4, 4, 0) {
                temporal_blocking_at(ctx, big, 64, false)?;
            }
        }
    }
    Ok(())
}

/// One shape of [`temporal_blocking`]; `check` compares one launch with the host function
/// (done on the small grid: the kernel is the same at every size).
fn temporal_blocking_at(ctx: &mut Ctx, shape: Shape, n: usize, check: bool) -> Result<()> {
    let dev = ctx.dev;
    let [nx, ny, _] = shape.dims();
    let cell = HostGrid::from_fn(shape, |[x, y, _]| {
        if x == 0 || y == 0 || x == nx - 1 || y == ny - 1 {
            BODY
        } else {
            FLUID
        }
    })?;
    let psi0 = HostGrid::from_fn(shape, |[x, y, _]| ((x * 7 + y * 13) % 17) as f32 / 17.0)?;
    let w = HostGrid::from_fn(shape, |[x, y, _]| ((x * 3 + y * 5) % 11) as f32 / 11.0 - 0.5)?;
    let k = Coeffs {
        a: 0.25,
        b: 0.25,
        c: -1e-3,
    };
    let (w_d, cell_d) = (DeviceGrid::from_host(dev, &w)?, DeviceGrid::from_host(dev, &cell)?);
    let spec = JacobiFixed::spec();
    let mut configs = vec![
        LaunchConfig::variant(Variant::Plain),
        LaunchConfig::variant(Variant::Vector),
    ];
    // Large tiles for large grids; on a GPU's small grid smaller tiles give the
    // multiprocessors more work-groups (512x256 in 32x32 tiles is 128 groups for the H100's
    // 132). On a CPU (where temporal blocking does not pay) two configurations check the path.
    let gpu = dev.info().kind == DeviceKind::Gpu;
    let mut tiles = vec![Tile { x: 32, y: 32, rows: 8 }];
    if gpu {
        tiles.push(Tile { x: 64, y: 16, rows: 4 });
    }
    if check && gpu {
        tiles.extend([
            Tile { x: 32, y: 16, rows: 8 },
            Tile { x: 32, y: 16, rows: 16 },
            Tile { x: 16, y: 16, rows: 8 },
            Tile { x: 32, y: 8, rows: 8 },
            Tile { x: 32, y: 8, rows: 4 },
            Tile { x: 64, y: 8, rows: 4 },
            Tile { x: 16, y: 8, rows: 8 },
            Tile { x: 32, y: 4, rows: 4 },
        ]);
    }
    let steps_tried: &[usize] = if gpu { &[2, 3, 4, 6, 8, 16] } else { &[4, 8] };
    for &steps in steps_tried {
        for &tile in &tiles {
            configs.push(LaunchConfig::steps(steps, tile));
        }
    }
    for config in configs {
        let per_launch = config.iterations();
        ctx.progress.step(&format!(
            "jacobi (fixed) f32 {shape}: {n} iterations, {}",
            describe(&config, &spec)
        ));
        let plan = match JacobiFixed::plan(dev, &config, shape) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("skipping {}: {e}", describe(&config, &spec));
                continue;
            }
        };
        // Correctness first: one launch against `per_launch` host steps.
        if check {
            let mut host = psi0.clone();
            for _ in 0..per_launch {
                let mut next = host.clone();
                JacobiFixed::apply_host(&mut next, &host, &w, &cell, &k)?;
                host = next;
            }
            let mut out = DeviceGrid::from_host(dev, &psi0)?;
            JacobiFixed::launch_plan(&plan, &mut out, &DeviceGrid::from_host(dev, &psi0)?, &w_d, &cell_d, &k)?;
            let got = out.to_host()?;
            let err = got
                .data()
                .iter()
                .zip(host.data())
                .map(|(a, b)| (a - b).abs())
                .fold(0.0f32, f32::max);
            anyhow::ensure!(
                err <= 1e-5,
                "{} differs from the host function by {err}",
                describe(&config, &spec)
            );
        }

        let launches = n.div_ceil(per_launch);
        let iterations = launches * per_launch;
        let mut psi = PingPong::from_host(dev, &psi0)?;
        let mut run = |events: Option<&mut Vec<Event>>| -> Result<()> {
            let mut events = events;
            for _ in 0..launches {
                let (next, cur) = psi.split();
                match events.as_deref_mut() {
                    Some(ev) => ev.push(JacobiFixed::launch_plan(&plan, next, cur, &w_d, &cell_d, &k)?),
                    None => JacobiFixed::enqueue_plan(&plan, next, cur, &w_d, &cell_d, &k)?,
                }
                psi.swap();
            }
            Ok(())
        };
        run(None)?;
        dev.finish()?;
        let mut events = Vec::with_capacity(launches);
        let start = Instant::now();
        run(Some(&mut events))?;
        let enqueued = start.elapsed();
        dev.finish()?;
        let batched_wall = start.elapsed();
        let batched_device = device_sum_ns(&events)?;
        let start = Instant::now();
        run(None)?;
        dev.finish()?;
        let no_event_wall = start.elapsed();
        let per = |d: std::time::Duration| d.as_secs_f64() * 1e6 / iterations as f64;
        ctx.report.iterations.push(IterRow {
            case: "jacobi fixed f32".to_owned(),
            shape: shape.to_string(),
            config: describe(&config, &spec),
            iterations,
            batched_wall_us: per(batched_wall),
            batched_device_us: batched_device as f64 / 1e3 / iterations as f64,
            batched_enqueue_us: enqueued.as_secs_f64() * 1e6 / launches as f64,
            no_event_wall_us: per(no_event_wall),
            sync_wall_us: None,
            sync_device_us: None,
            raw_enqueue_us: None,
        });
    }
    Ok(())
}
