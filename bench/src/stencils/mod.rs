//! The `stencils` suite: Jacobi (seed 002) in f32 and f64 at several sizes, with the
//! seed's hand-written kernels as the baseline, the 3-D 7-point heat step, tuning, and
//! many small iterations.

use std::collections::HashSet;
use std::mem::size_of;
use std::time::Instant;

use anyhow::{Context, Result};
use clforge::runtime::tune::Tuner;
use clforge::runtime::{
    Arg, Buffer, ConstBuffer, Device, DeviceKind, Event, LaunchConfig, Params, Shape, StencilPlan, StencilSpec, Tile,
    Variant,
};

use crate::cases::{self, Check, HeatCase, JacobiCase, JacobiHost, JacobiKernel, Real};
use crate::kernels::{Heat3d, Jacobi};
use crate::measure::{time_launches, Progress, Reps};
use crate::report::{IterRow, Report, Row, TuneRow};
use crate::roofline::{self, Roofline};
use crate::seed002::{self, Seed, SeedKernel, SeedShape};

/// What to run.
#[derive(Clone, Debug)]
pub struct Options {
    pub quick: bool,
    pub reps: Reps,
    /// 2-D sizes (Jacobi).
    pub sizes_2d: Vec<Shape>,
    /// 3-D sizes (heat step).
    pub sizes_3d: Vec<Shape>,
    pub f64: bool,
    /// Tune afresh in memory instead of using the cache file.
    pub retune: bool,
    /// Iterations of the small-grid study.
    pub iterations: usize,
    /// Shape of the small-grid study.
    pub small: Shape,
}

impl Options {
    /// Default sizes: seed 002's 512x256 and large grids on GPUs, smaller ones on CPUs.
    pub fn defaults(dev: &Device, quick: bool) -> (Vec<Shape>, Vec<Shape>) {
        let gpu = dev.info().kind == DeviceKind::Gpu;
        let sq = |n| Shape::d2(n, n);
        let cube = |n| Shape::d3(n, n, n);
        match (gpu, quick) {
            (true, false) => (
                vec![Shape::d2(512, 256), sq(4096), sq(8192), sq(16384)],
                vec![cube(512)],
            ),
            (true, true) => (vec![Shape::d2(512, 256), sq(4096)], vec![cube(256)]),
            (false, false) => (vec![Shape::d2(512, 256), sq(2048)], vec![cube(256)]),
            (false, true) => (vec![Shape::d2(512, 256)], vec![cube(64)]),
        }
    }
}

/// Short text for a launch configuration of `spec` (defaults filled in), in the seed's
/// tile/block notation for tiles.
pub fn describe(config: &LaunchConfig, spec: &StencilSpec) -> String {
    let config = &config.effective(spec);
    let dims = |d: &[usize; 3]| {
        let n = if d[2] > 1 { 3 } else { 2 };
        d[..n].iter().map(usize::to_string).collect::<Vec<_>>().join("x")
    };
    let wg = config.work_group.as_ref().map_or("default".to_owned(), dims);
    match config.variant {
        Variant::Plain => format!("plain {wg}"),
        Variant::Vector => format!("vector {wg}"),
        Variant::Tiled => match config.tile {
            Some(t) => format!("tiled {}x{}/{}x{}", t.x, t.y, t.x, t.rows),
            None => "tiled default".to_owned(),
        },
        Variant::Steps => match config.tile {
            Some(t) => format!("steps {} on {}x{}/{}x{}", config.iterations(), t.x, t.y, t.x, t.rows),
            None => format!("steps {}", config.iterations()),
        },
    }
}

/// Shared state of one run.
struct Ctx<'a> {
    dev: &'a Device,
    opts: &'a Options,
    progress: Progress,
    copy_gb_s: f64,
    seed: Seed,
    tuner: Tuner,
    checked: HashSet<(String, String)>,
    report: Report,
}

impl Ctx<'_> {
    fn time(&self, launch: impl FnMut() -> Result<Event>) -> Result<crate::measure::Stats> {
        time_launches(self.opts.reps, launch)
    }

    /// Runs `check` once per key (kernel + config), keeping its result.
    fn check_once(&mut self, key: (String, String), check: impl FnOnce() -> Result<Check>) -> Result<()> {
        if self.checked.insert(key) {
            let c = check()?;
            self.report.checks.push(c);
        }
        Ok(())
    }

    fn check_jacobi<T: Real, K>(&mut self, kernel: JacobiKernel<T, K>, config: &LaunchConfig) -> Result<()> {
        let dev = self.dev;
        let spec = (kernel.spec)();
        let key = (spec.name.to_owned(), format!("{:?}", config.effective(&spec)));
        self.check_once(key, || cases::check_jacobi(dev, kernel, config))
    }

    fn check_heat(&mut self, config: &LaunchConfig) -> Result<()> {
        let dev = self.dev;
        let key = ("heat3d".to_owned(), format!("{:?}", config.effective(&Heat3d::spec())));
        self.check_once(key, || cases::check_heat(dev, config))
    }

    fn check_seed<T: Real, K>(&mut self, kernel: JacobiKernel<T, K>, which: SeedKernel, s: SeedShape) -> Result<()> {
        let (dev, seed) = (self.dev, &self.seed);
        let key = (format!("seed002 {} {}", which.name(), T::NAME), s.to_string());
        if self.checked.insert(key) {
            let c = cases::check_seed(dev, seed, kernel, which, s)?;
            self.report.checks.push(c);
        }
        Ok(())
    }

    /// Whether `fields` grids of `elem` bytes per point (plus `extra` bytes per point) fit
    /// the device; records why not.
    fn fits(&mut self, what: &str, shape: Shape, elem: usize, fields: usize, extra: usize) -> bool {
        let info = self.dev.info();
        let points = shape.len() as u64;
        let per_buffer = points * elem as u64;
        let total = points * (elem * fields + extra) as u64;
        // PoCL's per-buffer limit was seen between 1 and 4 GiB whatever it reports.
        let cpu_cap = if info.kind == DeviceKind::Cpu {
            1 << 30
        } else {
            u64::MAX
        };
        let why = if shape.len() >= i32::MAX as usize {
            Some("more points than 32-bit indices reach".to_owned())
        } else if per_buffer > info.max_alloc_bytes.min(cpu_cap) {
            Some(format!(
                "a {:.1} GiB buffer exceeds the allocation limit",
                per_buffer as f64 / (1u64 << 30) as f64
            ))
        } else if total > info.global_mem_bytes / 10 * 8 {
            Some(format!(
                "{:.1} GiB exceeds 80% of device memory",
                total as f64 / (1u64 << 30) as f64
            ))
        } else {
            None
        };
        match why {
            Some(why) => {
                let text = format!("{what} {shape}: {why}");
                self.progress.note(&format!("skipping {text}"));
                self.report.skipped.push(text);
                false
            }
            None => true,
        }
    }
}

fn jacobi_configs(quick: bool) -> Vec<LaunchConfig> {
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
    if !quick {
        // Wider tiles than the seed's: longer contiguous rows per work-group.
        configs.extend([Tile { x: 64, y: 16, rows: 4 }, Tile { x: 128, y: 8, rows: 2 }].map(LaunchConfig::tiled));
    }
    configs
}

fn seed_configs(quick: bool) -> Vec<(SeedKernel, SeedShape)> {
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

fn heat_configs() -> Vec<LaunchConfig> {
    vec![
        LaunchConfig::default(),
        LaunchConfig::variant(Variant::Vector),
        LaunchConfig::tiled(Heat3d::spec().default_tile),
    ]
}

/// Candidates of a quick tuning pass: plain and vector work-groups and only the tiles
/// already built for the table (program builds dominate a quick run on a CPU).
fn quick_candidates(spec: &StencilSpec, dev: &Device, shape: Shape, tiles: &[LaunchConfig]) -> Vec<LaunchConfig> {
    clforge::runtime::tune::candidates(spec, dev.info(), shape)
        .into_iter()
        .filter(|c| c.variant != Variant::Tiled || tiles.contains(c))
        .collect()
}

fn steps(opts: &Options, fp64: bool) -> u64 {
    let precisions = if fp64 && opts.f64 { 2 } else { 1 };
    let per_2d = 1 + jacobi_configs(opts.quick).len() + seed_configs(opts.quick).len() + 2;
    let per_3d = 1 + heat_configs().len() + 2;
    (5 + 1 + opts.sizes_2d.len() * precisions * per_2d + opts.sizes_3d.len() * per_3d + 2) as u64
}

/// Runs the suite.
pub fn run(dev: &Device, opts: &Options, suite: &str) -> Result<Report> {
    let start = Instant::now();
    let mut progress = Progress::new(steps(opts, dev.info().fp64));
    let roofline = roofline::measure(dev, opts.quick, opts.reps, |m| progress.step(m))?;
    let copy_gb_s = roofline.copy_gb_s();
    progress.step("building seed 002's kernels");
    let seed = Seed::build(dev).context("building the seed 002 baseline (bench/baselines/seed002.cl)")?;
    let tuner = if opts.retune || opts.quick {
        Tuner::in_memory()
    } else {
        Tuner::new()
    };
    let mut ctx = Ctx {
        dev,
        opts,
        progress,
        copy_gb_s,
        seed,
        tuner,
        checked: HashSet::new(),
        report: new_report(dev, opts, suite, roofline, copy_gb_s),
    };

    for &shape in &opts.sizes_2d {
        run_jacobi(&mut ctx, cases::jacobi_f32(), shape)?;
        if opts.f64 && dev.info().fp64 {
            run_jacobi(&mut ctx, cases::jacobi_f64(), shape)?;
        }
    }
    for &shape in &opts.sizes_3d {
        run_heat(&mut ctx, shape)?;
    }
    small_iterations(&mut ctx)?;
    temporal_blocking(&mut ctx)?;

    ctx.progress.finish();
    let mut report = ctx.report;
    report.tune_cache = match (ctx.tuner.cache_path(), ctx.tuner.save_error()) {
        (None, _) => Some("in memory only (--quick or --retune)".to_owned()),
        (Some(p), None) => Some(format!("{} (set CLFORGE_TUNE_CACHE to move it)", p.display())),
        (Some(p), Some(e)) => Some(format!(
            "{} could not be written ({e}); answers were kept in memory",
            p.display()
        )),
    };
    report.wall_s = start.elapsed().as_secs_f64();
    Ok(report)
}

pub fn new_report(dev: &Device, opts: &Options, suite: &str, roofline: Roofline, copy_gb_s: f64) -> Report {
    Report {
        tool: "clforge-bench",
        version: env!("CARGO_PKG_VERSION"),
        suite: suite.to_owned(),
        quick: opts.quick,
        reps: opts.reps,
        device: dev.info().clone(),
        roofline,
        copy_gb_s,
        checks: Vec::new(),
        results: Vec::new(),
        tuning: Vec::new(),
        iterations: Vec::new(),
        elements: Vec::new(),
        skipped: Vec::new(),
        tune_cache: None,
        wall_s: 0.0,
    }
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

fn run_jacobi<T: Real, K>(ctx: &mut Ctx, kernel: JacobiKernel<T, K>, shape: Shape) -> Result<()>
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
        let host = JacobiHost::<T>::new(shape);
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

    let mut default_us = None;
    for config in &configs {
        ctx.progress
            .step(&format!("{case_name} {shape}: {}", describe(config, &spec)));
        ctx.check_jacobi(kernel, config)?;
        let plan = case.plan(dev, config)?;
        let t = ctx.time(|| Ok(case.step(&plan)?))?;
        if *config == LaunchConfig::default() {
            default_us = Some(t.median_us);
        }
        rows.push(Row::new(
            &case_name,
            shape,
            "clforge",
            plan.kernel(),
            describe(config, &spec),
            bytes,
            flops,
            t,
            ctx.copy_gb_s,
        ));
    }

    ctx.progress.step(&format!("{case_name} {shape}: tuning"));
    let tune_start = Instant::now();
    let tuned = if quick {
        let candidates = quick_candidates(&spec, dev, shape, &configs);
        ctx.tuner
            .tune_among(dev, spec, shape, &candidates, |plan| case.step(plan))?
    } else {
        ctx.tuner.tune(dev, spec, shape, |plan| case.step(plan))?
    };
    let tuning_s = tune_start.elapsed().as_secs_f64();
    ctx.progress.step(&format!(
        "{case_name} {shape}: tuned {}",
        describe(&tuned.config, &spec)
    ));
    ctx.check_jacobi(kernel, &tuned.config)?;
    let plan = case.plan(dev, &tuned.config)?;
    let t = ctx.time(|| Ok(case.step(&plan)?))?;
    let mut row = Row::new(
        &case_name,
        shape,
        "clforge",
        plan.kernel(),
        describe(&tuned.config, &spec),
        bytes,
        flops,
        t,
        ctx.copy_gb_s,
    );
    row.tuned = true;
    rows.push(row);
    let default_us = default_us.unwrap_or(f64::NAN);
    ctx.report.tuning.push(TuneRow {
        case: case_name.clone(),
        shape: shape.to_string(),
        chosen: describe(&tuned.config, &spec),
        from_cache: tuned.from_cache,
        candidates: tuned.trials.len(),
        failed: tuned.trials.iter().filter(|t| t.error.is_some()).count(),
        tuning_s,
        default_us,
        tuned_us: t.median_us,
        speedup: default_us / t.median_us,
    });

    compare_with_seed(&mut rows);
    ctx.report.results.extend(rows);
    Ok(())
}

fn run_heat(ctx: &mut Ctx, shape: Shape) -> Result<()> {
    let case_name = "heat3d f32".to_owned();
    ctx.progress.step(&format!("{case_name} {shape}: host data and upload"));
    if !ctx.fits(&case_name, shape, 4, 2, 0) {
        return Ok(());
    }
    let dev = ctx.dev;
    let mut case = HeatCase::new(dev, &cases::heat_initial(shape)).with_context(|| format!("{case_name} {shape}"))?;
    let spec = Heat3d::spec();
    // Read u, write u; 6 additions, 1 subtraction, 2 multiplications, 1 addition... per point:
    // lap = 5 adds + 6·c (1 mul) - (1 sub), centre + r·lap (1 mul, 1 add).
    let (bytes, flops) = (8.0, 9.0);
    let configs = heat_configs();
    let mut default_us = f64::NAN;
    for config in &configs {
        ctx.progress
            .step(&format!("{case_name} {shape}: {}", describe(config, &spec)));
        ctx.check_heat(config)?;
        let plan = case.plan(dev, config)?;
        let t = ctx.time(|| Ok(case.step(&plan)?))?;
        if *config == LaunchConfig::default() {
            default_us = t.median_us;
        }
        ctx.report.results.push(Row::new(
            &case_name,
            shape,
            "clforge",
            plan.kernel(),
            describe(config, &spec),
            bytes,
            flops,
            t,
            ctx.copy_gb_s,
        ));
    }
    ctx.progress.step(&format!("{case_name} {shape}: tuning"));
    let tune_start = Instant::now();
    let tuned = if ctx.opts.quick {
        let candidates = quick_candidates(&spec, dev, shape, &configs);
        ctx.tuner
            .tune_among(dev, spec, shape, &candidates, |plan| case.step(plan))?
    } else {
        ctx.tuner.tune(dev, spec, shape, |plan| case.step(plan))?
    };
    let tuning_s = tune_start.elapsed().as_secs_f64();
    ctx.progress.step(&format!(
        "{case_name} {shape}: tuned {}",
        describe(&tuned.config, &spec)
    ));
    ctx.check_heat(&tuned.config)?;
    let plan = case.plan(dev, &tuned.config)?;
    let t = ctx.time(|| Ok(case.step(&plan)?))?;
    let mut row = Row::new(
        &case_name,
        shape,
        "clforge",
        plan.kernel(),
        describe(&tuned.config, &spec),
        bytes,
        flops,
        t,
        ctx.copy_gb_s,
    );
    row.tuned = true;
    ctx.report.results.push(row);
    ctx.report.tuning.push(TuneRow {
        case: case_name,
        shape: shape.to_string(),
        chosen: describe(&tuned.config, &spec),
        from_cache: tuned.from_cache,
        candidates: tuned.trials.len(),
        failed: tuned.trials.iter().filter(|t| t.error.is_some()).count(),
        tuning_s,
        default_us,
        tuned_us: t.median_us,
        speedup: default_us / t.median_us,
    });
    Ok(())
}

/// Item 5 of issue 3: µs per iteration of the small grid, batched vs synchronous.
fn small_iterations(ctx: &mut Ctx) -> Result<()> {
    let shape = ctx.opts.small;
    let n = ctx.opts.iterations;
    if n == 0 {
        return Ok(());
    }
    let dev = ctx.dev;
    let host = JacobiHost::<f32>::new(shape);
    let mut case = JacobiCase::new(dev, cases::jacobi_f32(), &host)?;
    let spec = Jacobi::spec();
    let mut configs = vec![LaunchConfig::default()];
    if let Some(tuned) = ctx.tuner.cached(dev, &spec, shape) {
        if tuned.effective(&spec) != LaunchConfig::default().effective(&spec) {
            configs.push(tuned);
        }
    }
    for config in configs {
        ctx.progress.step(&format!(
            "jacobi f32 {shape}: {n} iterations, {}",
            describe(&config, &spec)
        ));
        ctx.check_jacobi(cases::jacobi_f32(), &config)?;
        let plan = case.plan(dev, &config)?;
        for _ in 0..10 {
            case.step(&plan)?;
        }
        dev.finish()?;

        let start = Instant::now();
        let mut events = Vec::with_capacity(n);
        for _ in 0..n {
            events.push(case.step(&plan)?);
        }
        let enqueued = start.elapsed();
        dev.finish()?;
        let batched_wall = start.elapsed();
        let batched_device = device_sum_ns(&events)?;

        let start = Instant::now();
        for _ in 0..n {
            case.step_without_event(&plan)?;
        }
        dev.finish()?;
        let no_event_wall = start.elapsed();

        let start = Instant::now();
        events.clear();
        for _ in 0..n {
            let ev = case.step(&plan)?;
            ev.wait()?;
            events.push(ev);
        }
        let sync_wall = start.elapsed();
        let sync_device = device_sum_ns(&events)?;
        drop(events);

        let raw_enqueue_us = if config.variant == Variant::Plain {
            Some(raw_enqueue_us(dev, &case, &plan, &spec, n)?)
        } else {
            None
        };
        let per = |d: std::time::Duration| d.as_secs_f64() * 1e6 / n as f64;
        ctx.report.iterations.push(IterRow {
            case: "jacobi f32".to_owned(),
            shape: shape.to_string(),
            config: describe(&config, &spec),
            iterations: n,
            batched_wall_us: per(batched_wall),
            batched_device_us: batched_device as f64 / 1e3 / n as f64,
            batched_enqueue_us: per(enqueued),
            no_event_wall_us: per(no_event_wall),
            sync_wall_us: Some(per(sync_wall)),
            sync_device_us: Some(sync_device as f64 / 1e3 / n as f64),
            raw_enqueue_us,
        });
    }
    Ok(())
}

fn device_sum_ns(events: &[Event]) -> Result<u64> {
    let mut sum = 0;
    for e in events {
        sum += e.duration_ns()?;
    }
    Ok(sum)
}

/// Host time per launch of the plan's kernel through `Program::launch` with the arguments
/// prepared once (ping-pong included, events kept as in the batched loop): what a launch
/// costs without `StencilPlan`'s per-launch work.
fn raw_enqueue_us(
    dev: &Device,
    case: &JacobiCase<f32, crate::kernels::Coeffs>,
    plan: &StencilPlan,
    spec: &StencilSpec,
    n: usize,
) -> Result<f64> {
    let program = dev.program(spec.origin, spec.source, "")?;
    let k = dev.constant_bytes(&case.k.to_bytes())?;
    let [nx, ny, nz] = case.shape.dims().map(|d| d as i32);
    let a = case.psi.current();
    let mut b = clforge::runtime::DeviceGrid::<f32>::new(dev, case.shape)?;
    b.copy_from(a)?.wait()?;
    let (w, cell) = (case.w.buffer(), case.cell.buffer());
    fn jacobi_args<'a>(
        bufs: [&'a Buffer<f32>; 3],
        cell: &'a Buffer<u8>,
        k: &'a ConstBuffer,
        n: [i32; 3],
    ) -> Vec<Arg<'a>> {
        let mut args: Vec<Arg> = bufs.into_iter().map(Arg::buffer).collect();
        args.extend([
            Arg::buffer(cell),
            Arg::constant(k),
            Arg::i32(n[0]),
            Arg::i32(n[1]),
            Arg::i32(n[2]),
        ]);
        args
    }
    let ping = jacobi_args([b.buffer(), a.buffer(), w], cell, &k, [nx, ny, nz]);
    let pong = jacobi_args([a.buffer(), b.buffer(), w], cell, &k, [nx, ny, nz]);
    let (global, local) = (plan.global(), plan.local());
    program.launch(plan.kernel(), global, Some(local), &ping)?.wait()?;
    let mut events = Vec::with_capacity(n);
    let start = Instant::now();
    for i in 0..n {
        let args = if i % 2 == 0 { &pong } else { &ping };
        events.push(program.launch(plan.kernel(), global, Some(local), args)?);
    }
    let enqueued = start.elapsed();
    dev.finish()?;
    Ok(enqueued.as_secs_f64() * 1e6 / n as f64)
}

/// Item 5 of issue 3, temporal blocking: `steps` Jacobi iterations per launch with the state
/// in local memory (`Variant::Steps`), checked against the host function first, then timed
/// over `n` iterations enqueued without events.
fn temporal_blocking(ctx: &mut Ctx) -> Result<()> {
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
    use crate::kernels::{Coeffs, JacobiFixed, BODY, FLUID};
    use clforge::runtime::{DeviceGrid, HostGrid, PingPong};
    let dev = ctx.dev;
    let [nx, ny, _] = shape.dims();
    let cell = HostGrid::from_fn(shape, |[x, y, _]| {
        if x == 0 || y == 0 || x == nx - 1 || y == ny - 1 {
            BODY
        } else {
            FLUID
        }
    });
    let psi0 = HostGrid::from_fn(shape, |[x, y, _]| ((x * 7 + y * 13) % 17) as f32 / 17.0);
    let w = HostGrid::from_fn(shape, |[x, y, _]| ((x * 3 + y * 5) % 11) as f32 / 11.0 - 0.5);
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
    for steps in [4, 8, 16] {
        for tile in [Tile { x: 32, y: 32, rows: 8 }, Tile { x: 64, y: 16, rows: 4 }] {
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
