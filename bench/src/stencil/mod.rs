//! The `stencils` suite: Jacobi (seed 002) in f32 and f64 at several sizes, with the
//! seed's hand-written kernels as the baseline, the 3-D 7-point heat step, tuning, and
//! many small iterations.

mod cases;
mod heat;
mod iterations;
mod jacobi;
pub mod kernels;
mod temporal;

use std::collections::HashSet;
use std::time::Instant;

use anyhow::{Context, Result};
use clforge::runtime::tune::Tuner;
use clforge::runtime::{Device, DeviceKind, Event, LaunchConfig, Shape, StencilSpec, Variant};

use crate::baselines::seed002::{Seed, SeedKernel, SeedShape};
use crate::measure::{time_launches, Progress, Stats};
use crate::options::{describe, new_report, Options};
use crate::real::Real;
use crate::report::{Check, Report, Row, TuneRow};
use crate::roofline;
use cases::{JacobiKernel, PackedKernel, StencilCase};
use kernels::Heat3d;

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
    fn time(&self, launch: impl FnMut() -> Result<Event>) -> Result<Stats> {
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

    fn check_packed<T: Real, K>(&mut self, kernel: PackedKernel<T, K>, config: &LaunchConfig) -> Result<()>
    where
        PackedKernel<T, K>: Copy,
    {
        let dev = self.dev;
        let spec = (kernel.spec)();
        let key = (spec.name.to_owned(), format!("{:?}", config.effective(&spec)));
        self.check_once(key, || cases::check_packed(dev, kernel, config))
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

/// Progress steps of a run: the roofline's five, the seed build, per size and precision the
/// upload, every configuration, tuning and the tuned row, and two for the small-grid studies
/// (which may take more: [`Progress`] counts past its total).
fn steps(opts: &Options, fp64: bool) -> u64 {
    let precisions = if fp64 && opts.f64 { 2 } else { 1 };
    let per_2d = 1
        + jacobi::jacobi_configs(opts.quick).len()
        + jacobi::seed_configs(opts.quick).len()
        + 2
        + 1
        + jacobi::packed_configs(opts.quick).len()
        + if opts.quick { 0 } else { 2 };
    let per_3d = 1 + heat::heat_configs().len() + 2;
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
        jacobi::run_jacobi(&mut ctx, cases::jacobi_f32(), shape)?;
        jacobi::run_jacobi_computed(&mut ctx, cases::computed_f32(), shape)?;
        jacobi::run_jacobi_packed(&mut ctx, cases::packed_f32(), shape)?;
        if opts.f64 && dev.info().fp64 {
            jacobi::run_jacobi(&mut ctx, cases::jacobi_f64(), shape)?;
            jacobi::run_jacobi_computed(&mut ctx, cases::computed_f64(), shape)?;
            jacobi::run_jacobi_packed(&mut ctx, cases::packed_f64(), shape)?;
        }
    }
    for &shape in &opts.sizes_3d {
        heat::run_heat(&mut ctx, shape)?;
    }
    iterations::small_iterations(&mut ctx)?;
    temporal::temporal_blocking(&mut ctx)?;

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

/// What the clforge rows of one case and shape share.
struct Timed<'a> {
    /// Problem and precision, e.g. `jacobi f32`.
    case: &'a str,
    shape: Shape,
    spec: StencilSpec,
    /// Fewest bytes the kernel must move per point.
    bytes_per_point: f64,
    /// Floating-point operations per updated point.
    flops_per_point: f64,
}

impl Timed<'_> {
    /// A clforge row of this case: `kernel` in `config`, timed `t`.
    fn row(&self, kernel: &str, config: &LaunchConfig, t: Stats, copy_gb_s: f64) -> Row {
        Row::new(
            self.case,
            self.shape,
            "clforge",
            kernel,
            describe(config, &self.spec),
            self.bytes_per_point,
            self.flops_per_point,
            t,
            copy_gb_s,
        )
    }
}

/// Candidates of a quick tuning pass: plain and vector work-groups and only the tiles (and
/// marches) already built for the table (program builds dominate a quick run on a CPU).
fn quick_candidates(spec: &StencilSpec, dev: &Device, shape: Shape, tiles: &[LaunchConfig]) -> Vec<LaunchConfig> {
    clforge::runtime::tune::candidates(spec, dev.info(), shape)
        .into_iter()
        .filter(|c| !matches!(c.variant, Variant::Tiled | Variant::March) || tiles.contains(c))
        .collect()
}

/// Times the clforge kernel of `case` in each of `configs`, then lets the tuner choose a
/// configuration (among [`quick_candidates`] with `--quick`) and times that one too. Every
/// configuration goes through `check` before it is timed. Returns the rows, the tuned one
/// last, and records the tuning against the default configuration in the report.
fn time_and_tune<C: StencilCase>(
    ctx: &mut Ctx,
    case: &mut C,
    timed: &Timed,
    configs: &[LaunchConfig],
    mut check: impl FnMut(&mut Ctx, &LaunchConfig) -> Result<()>,
) -> Result<Vec<Row>> {
    let Timed {
        case: case_name,
        shape,
        spec,
        ..
    } = *timed;
    let dev = ctx.dev;
    let (mut rows, default_us) = time_configs(ctx, case, timed, configs, &mut check)?;

    ctx.progress.step(&format!("{case_name} {shape}: tuning"));
    let tune_start = Instant::now();
    let tuned = if ctx.opts.quick {
        let candidates = quick_candidates(&spec, dev, shape, configs);
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
    check(ctx, &tuned.config)?;
    let plan = case.plan(dev, &tuned.config)?;
    let t = ctx.time(|| Ok(case.step(&plan)?))?;
    let mut row = timed.row(plan.kernel(), &tuned.config, t, ctx.copy_gb_s);
    row.tuned = true;
    rows.push(row);
    ctx.report.tuning.push(TuneRow {
        case: case_name.to_owned(),
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
    Ok(rows)
}

/// The first part of [`time_and_tune`]: each of `configs` checked, then timed; the rows and
/// the default configuration's median (NaN if it is not among them).
fn time_configs<C: StencilCase>(
    ctx: &mut Ctx,
    case: &mut C,
    timed: &Timed,
    configs: &[LaunchConfig],
    check: &mut impl FnMut(&mut Ctx, &LaunchConfig) -> Result<()>,
) -> Result<(Vec<Row>, f64)> {
    let Timed {
        case: case_name,
        shape,
        spec,
        ..
    } = *timed;
    let dev = ctx.dev;
    let mut rows = Vec::new();
    let mut default_us = f64::NAN;
    for config in configs {
        ctx.progress
            .step(&format!("{case_name} {shape}: {}", describe(config, &spec)));
        // A configuration this device cannot launch (a work-group past the kernel's own
        // limit, local memory) is reported and skipped, not the end of the run.
        let plan = match case.plan(dev, config) {
            Ok(plan) => plan,
            Err(e @ clforge::runtime::Error::DeviceLimit { .. }) => {
                eprintln!("skipping {case_name} {shape} {}: {e}", describe(config, &spec));
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        check(ctx, config)?;
        let t = ctx.time(|| Ok(case.step(&plan)?))?;
        if *config == LaunchConfig::default() {
            default_us = t.median_us;
        }
        rows.push(timed.row(plan.kernel(), config, t, ctx.copy_gb_s));
    }
    Ok((rows, default_us))
}
