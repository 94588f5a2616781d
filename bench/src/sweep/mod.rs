//! The `sweeps` suite: seed 001's in-place sweeps on every schedule and block edge,
//! each checked bit for bit against the sequential host sweep on a small grid first, then
//! timed (device time of the whole sweep, first launch's start to last launch's end; median of
//! the runs) beside the device's copy bandwidth measured in the same run, the sequential host
//! sweep on one core, and the performance model fitted by `tune` (its error per sample).
//!
//! Problems: the 2-D splitting step of convection–diffusion (eqs. 13-14: a forward and a
//! backward sweep with u, v, f and a mask) at 3600×1800; an in-place 5-point Gauss–Seidel
//! sweep at 16384² (two f32 arrays per point: the bandwidth case); seed 001's 3-D Poisson step
//! (eq. 10, forward) at 320×320×240.

pub mod chain;

use std::time::Instant;

use anyhow::{bail, Context, Result};
use clforge::prelude::*;
use clforge::runtime::sweep::model::Tuning;
use clforge::runtime::sweep::{handover_allowed, DEFAULT_PHASE, DEFAULT_PREFETCH, DEFAULT_ROWS};
use clforge::runtime::{DeviceKind, Scalar, SweepEvents, SweepSpec};
use serde::Serialize;

use crate::measure::{Progress, Reps, Stats};
use crate::roofline;

#[derive(Params, Clone, Copy, Debug)]
pub struct Transport {
    pub mu: f32,
    pub sigma: f32,
    pub tau: f32,
    pub h1: f32,
    pub h2: f32,
}

/// Seed 001 eq. (13): forward half-step, upwind in u+, v+; mask 0 updates, others keep.
#[sweep(order = forward)]
pub fn transport_fwd(
    c: &Sweep<f32>,
    u: &Grid<f32>,
    v: &Grid<f32>,
    f: &Grid<f32>,
    mask: &Grid<u8>,
    k: &Transport,
) -> f32 {
    let a = 0.5 * (u.at(0, 0) + u.at(0, 0).abs());
    let b = 0.5 * (v.at(0, 0) + v.at(0, 0).abs());
    let d1 = k.mu / (2.0 * k.h1 * k.h1) - a / (2.0 * k.h1);
    let d2 = k.mu / (2.0 * k.h2 * k.h2) - b / (2.0 * k.h2);
    let diag = 1.0 / k.tau
        + k.mu / (2.0 * k.h1 * k.h1)
        + k.mu / (2.0 * k.h2 * k.h2)
        + a / (2.0 * k.h1)
        + b / (2.0 * k.h2)
        + 0.5 * k.sigma;
    let rhs = (1.0 / k.tau - d1 - d2) * c.old(0, 0)
        + (a / k.h1 + d1) * c.new(-1, 0)
        + (b / k.h2 + d2) * c.new(0, -1)
        + d1 * c.old(1, 0)
        + d2 * c.old(0, 1)
        + 0.5 * f.at(0, 0);
    if mask.at(0, 0) == 0 {
        rhs / diag
    } else {
        c.old(0, 0)
    }
}

/// Seed 001 eq. (14): backward half-step, upwind in u-, v-.
#[sweep(order = backward)]
pub fn transport_bwd(
    c: &Sweep<f32>,
    u: &Grid<f32>,
    v: &Grid<f32>,
    f: &Grid<f32>,
    mask: &Grid<u8>,
    k: &Transport,
) -> f32 {
    let a = 0.5 * (u.at(0, 0) - u.at(0, 0).abs());
    let b = 0.5 * (v.at(0, 0) - v.at(0, 0).abs());
    let g1 = k.mu / (2.0 * k.h1 * k.h1) + a / (2.0 * k.h1);
    let g2 = k.mu / (2.0 * k.h2 * k.h2) + b / (2.0 * k.h2);
    let diag = 1.0 / k.tau - a / k.h1 - b / k.h2 + 0.5 * k.sigma + g1 + g2;
    let rhs = (1.0 / k.tau - g1 - g2) * c.old(0, 0)
        + (g1 - a / k.h1) * c.new(1, 0)
        + (g2 - b / k.h2) * c.new(0, 1)
        + g1 * c.old(-1, 0)
        + g2 * c.old(0, -1)
        + 0.5 * f.at(0, 0);
    if mask.at(0, 0) == 0 {
        rhs / diag
    } else {
        c.old(0, 0)
    }
}

/// In-place Gauss–Seidel for Δu = 0 (two f32 arrays of traffic per point: read and write u).
#[sweep(order = forward)]
pub fn gauss_seidel(u: &Sweep<f32>) -> f32 {
    0.25 * (u.new(-1, 0) + u.new(0, -1) + u.old(1, 0) + u.old(0, 1))
}

#[derive(Params, Clone, Copy, Debug)]
pub struct Pseudo {
    /// 1/τ − s
    pub a: f32,
    /// 0.5 / h²
    pub w: f32,
    /// 1 / (1/τ + s)
    pub inv: f32,
}

/// Seed 001 eq. (10): the forward step of the 3-D pseudo-time Poisson splitting.
#[sweep(order = forward)]
pub fn poisson3_fwd(p: &Sweep3<f32>, f: &Grid3<f32>, k: &Pseudo) -> f32 {
    let s =
        (p.old(1, 0, 0) + p.new(-1, 0, 0)) + (p.old(0, 1, 0) + p.new(0, -1, 0)) + (p.old(0, 0, 1) + p.new(0, 0, -1));
    (k.a * p.old(0, 0, 0) + k.w * s + 0.5 * f.at(0, 0, 0)) * k.inv
}

/// One timed configuration.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub problem: String,
    pub size: String,
    pub schedule: String,
    pub block: usize,
    pub launches: usize,
    pub time: Stats,
    /// Bytes the sweep must move (each field read once, the swept field read and written).
    pub gb_s: f64,
    pub pct_copy: f64,
    /// The model's prediction for this configuration (fitted on the same size).
    pub model_us: Option<f64>,
    /// The strip schedule's steps between progress publications.
    pub phase: Option<usize>,
    /// The strip schedule's prefetch stride (columns).
    pub prefetch: Option<usize>,
    /// The strip schedule's rows per work-item.
    pub rows: Option<usize>,
}

/// One problem's summary.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    pub problem: String,
    pub size: String,
    pub host_one_core_ms: f64,
    pub best: String,
    pub best_us: f64,
    pub speedup_vs_host: f64,
    pub tuning: Tuning,
    /// Mean |model − measured| / measured over the tuner's samples.
    pub model_error: f64,
    pub model_choice_us: f64,
}

#[derive(Debug, Serialize)]
pub struct Report {
    pub device: String,
    pub copy_gb_s: f64,
    pub rows: Vec<Row>,
    pub summaries: Vec<Summary>,
    /// The 2-D splitting step (forward + backward sweep, each on its fastest schedule).
    pub splitting_step_us: Option<f64>,
    pub wall_s: f64,
}

fn fill<T: Scalar>(shape: Shape, mut f: impl FnMut(usize) -> T) -> Result<HostGrid<T>> {
    let mut i = 0;
    Ok(HostGrid::from_fn(shape, |_| {
        i += 1;
        f(i)
    })?)
}

/// A cheap deterministic pseudo-random value in [-1, 1).
fn noise(i: usize) -> f32 {
    let x = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40;
    (x as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
}

/// Median device time of `runs` sweeps after one warm-up.
fn time_sweeps(runs: usize, mut sweep: impl FnMut() -> clforge::runtime::Result<SweepEvents>) -> Result<Stats> {
    sweep()?.wait()?;
    let mut ns = Vec::with_capacity(runs);
    for _ in 0..runs {
        ns.push(sweep()?.elapsed_ns()?);
    }
    Ok(Stats::from_ns(&ns))
}

fn sizes(dev: &Device, quick: bool) -> ([Shape; 2], Shape) {
    if quick || dev.info().kind != DeviceKind::Gpu {
        ([Shape::d2(360, 180), Shape::d2(512, 512)], Shape::d3(32, 32, 24))
    } else {
        (
            [Shape::d2(3600, 1800), Shape::d2(16384, 16384)],
            Shape::d3(320, 320, 240),
        )
    }
}

pub fn run(dev: &Device, quick: bool, reps: Reps) -> Result<Report> {
    let start = Instant::now();
    let mut progress = Progress::new(9);
    let roof = roofline::measure(dev, quick, reps, |m| progress.step(m))?;
    let ([s2, s16], s3) = sizes(dev, quick);
    let mut suite = Suite {
        dev,
        runs: if quick { 3 } else { 10 },
        copy: roof.copy_gb_s(),
        rows: Vec::new(),
        summaries: Vec::new(),
    };
    // Correctness first, on a small grid, every schedule and two blocks.
    suite.check_transport()?;
    progress.step(&format!("transport {s2}"));
    let splitting_step_us = suite.transport(s2)?;
    progress.step(&format!("Gauss-Seidel {s16}"));
    suite.gauss_seidel(s16)?;
    progress.step(&format!("Poisson 3-D {s3}"));
    suite.poisson3(s3)?;
    progress.finish();
    Ok(Report {
        device: dev.info().name.clone(),
        copy_gb_s: suite.copy,
        rows: suite.rows,
        summaries: suite.summaries,
        splitting_step_us,
        wall_s: start.elapsed().as_secs_f64(),
    })
}

/// One run of the suite: its device, sweeps per timing, the copy rate and the tables so far.
struct Suite<'a> {
    dev: &'a Device,
    runs: usize,
    copy: f64,
    rows: Vec<Row>,
    summaries: Vec<Summary>,
}

/// The transport sweeps' inputs: c, u, v, f and the mask.
type TransportInputs = (HostGrid<f32>, HostGrid<f32>, HostGrid<f32>, HostGrid<f32>, HostGrid<u8>);

/// The transport sweeps' coefficients.
const TRANSPORT: Transport = Transport {
    mu: 10.0,
    sigma: 1e-4,
    tau: 1.0,
    h1: 10.0,
    h2: 10.0,
};

/// 2-D transport: wind and source fields as the example's, mask on the outer ring.
fn transport_inputs(shape: Shape) -> Result<TransportInputs> {
    let [nx, ny, _] = shape.dims();
    let u = fill(shape, |i| 5.0 + noise(i))?;
    let v = fill(shape, |i| 2.0 * noise(i + 7))?;
    let f = fill(shape, |i| if i % 9973 == 0 { 100.0 } else { 0.0 })?;
    let mask = HostGrid::from_fn(shape, |[x, y, _]| {
        u8::from(x == 0 || y == 0 || x + 1 == nx || y + 1 == ny)
    })?;
    let c = fill(shape, |i| (1.0 + noise(i + 3)).max(0.0))?;
    Ok((c, u, v, f, mask))
}

/// Whether two grids hold the same bits.
fn same_bits(a: &HostGrid<f32>, b: &HostGrid<f32>) -> bool {
    a.data().iter().zip(b.data()).all(|(a, b)| a.to_bits() == b.to_bits())
}

impl Suite<'_> {
    /// The transport step (forward and backward) on every schedule the device allows and two
    /// blocks, bit for bit against the sequential host sweeps on a small grid.
    fn check_transport(&self) -> Result<()> {
        let (dev, k) = (self.dev, &TRANSPORT);
        let small = Shape::d2(45, 29);
        let (c, u, v, f, mask) = transport_inputs(small)?;
        let mut want = c.clone();
        TransportFwd::apply_host(&mut want, &u, &v, &f, &mask, k)?;
        TransportBwd::apply_host(&mut want, &u, &v, &f, &mask, k)?;
        let spec = TransportFwd::spec();
        for s in spec
            .available()
            .filter(|&s| !s.is_persistent() || handover_allowed(dev.info()))
        {
            for l in [5, 16] {
                let config = SweepConfig::with_block(s, l);
                let mut dc = DeviceGrid::from_host(dev, &c)?;
                let (du, dv, df, dm) = (
                    DeviceGrid::from_host(dev, &u)?,
                    DeviceGrid::from_host(dev, &v)?,
                    DeviceGrid::from_host(dev, &f)?,
                    DeviceGrid::from_host(dev, &mask)?,
                );
                TransportFwd::sweep(&config, &mut dc, &du, &dv, &df, &dm, k)?;
                TransportBwd::sweep(&config, &mut dc, &du, &dv, &df, &dm, k)?;
                if !same_bits(&dc.to_host()?, &want) {
                    bail!("transport step on {s} L={l} differs from the sequential host sweeps");
                }
            }
        }
        Ok(())
    }

    /// The transport forward sweep on every configuration the tuner measured, the backward one
    /// on the fastest; returns the splitting step (the two fastest, µs).
    fn transport(&mut self, s2: Shape) -> Result<Option<f64>> {
        let (dev, k) = (self.dev, &TRANSPORT);
        let (mut best_fwd, mut best_bwd) = (f64::MAX, f64::MAX);
        let (c, u, v, f, mask) = transport_inputs(s2)?;
        let mut host = c.clone();
        let t = Instant::now();
        TransportFwd::apply_host(&mut host, &u, &v, &f, &mask, k)?;
        let host_ms = t.elapsed().as_secs_f64() * 1e3;
        let mut dc = DeviceGrid::from_host(dev, &c)?;
        let (du, dv, df, dm) = (
            DeviceGrid::from_host(dev, &u)?,
            DeviceGrid::from_host(dev, &v)?,
            DeviceGrid::from_host(dev, &f)?,
            DeviceGrid::from_host(dev, &mask)?,
        );
        let tuning = TransportFwd::tune(&mut dc, &du, &dv, &df, &dm, k)?;
        // u, v, f (f32) and the mask (u8) read once, c read and written: 21 bytes per point.
        let bytes = 21.0 * s2.len() as f64;
        let spec = TransportFwd::spec();
        for config in measured_configs(&tuning) {
            let plan = TransportFwd::plan(dev, &config, s2)?;
            let stats = time_sweeps(self.runs, || {
                TransportFwd::sweep_plan(&plan, &mut dc, &du, &dv, &df, &dm, k)
            })?;
            best_fwd = best_fwd.min(stats.median_us);
            let predicted = tuning.model.predict_ns(&spec, s2, &config);
            self.rows
                .push(row("transport forward", s2, &plan, stats, bytes, self.copy, predicted));
        }
        let plan_b = TransportBwd::plan(dev, &tuning.fastest, s2)?;
        let stats_b = time_sweeps(self.runs, || {
            TransportBwd::sweep_plan(&plan_b, &mut dc, &du, &dv, &df, &dm, k)
        })?;
        best_bwd = best_bwd.min(stats_b.median_us);
        self.rows
            .push(row("transport backward", s2, &plan_b, stats_b, bytes, self.copy, None));
        self.summaries
            .push(summary("transport forward", s2, host_ms, &self.rows, tuning, &spec));
        Ok((best_fwd < f64::MAX && best_bwd < f64::MAX).then_some(best_fwd + best_bwd))
    }

    /// The in-place Gauss–Seidel sweep on every configuration the tuner measured; one sweep from
    /// the same start on both sides compared bit for bit.
    fn gauss_seidel(&mut self, s16: Shape) -> Result<()> {
        let dev = self.dev;
        let u = fill(s16, noise)?;
        let mut host = u.clone();
        let t = Instant::now();
        GaussSeidel::apply_host(&mut host)?;
        let host_ms = t.elapsed().as_secs_f64() * 1e3;
        let mut du = DeviceGrid::from_host(dev, &u)?;
        let tuning = GaussSeidel::tune(&mut du)?;
        let bytes = 8.0 * s16.len() as f64;
        let spec = GaussSeidel::spec();
        for config in measured_configs(&tuning) {
            let plan = GaussSeidel::plan(dev, &config, s16)?;
            let stats = time_sweeps(self.runs, || GaussSeidel::sweep_plan(&plan, &mut du))?;
            let predicted = tuning.model.predict_ns(&spec, s16, &config);
            self.rows
                .push(row("gauss-seidel", s16, &plan, stats, bytes, self.copy, predicted));
        }
        let mut check = DeviceGrid::from_host(dev, &u)?;
        GaussSeidel::sweep(&tuning.fastest, &mut check)?;
        if !same_bits(&check.to_host()?, &host) {
            bail!("Gauss-Seidel {s16} on {:?} differs from the host sweep", tuning.fastest);
        }
        self.summaries
            .push(summary("gauss-seidel", s16, host_ms, &self.rows, tuning, &spec));
        Ok(())
    }

    /// Seed 001's 3-D Poisson forward step on every sample the tuner took, the fastest checked
    /// bit for bit against the host sweep.
    fn poisson3(&mut self, s3: Shape) -> Result<()> {
        let dev = self.dev;
        let h = 1.0f32 / 320.0;
        let tau = 0.5 * h;
        let s = 0.5 * 3.0 / (h * h);
        let k = Pseudo {
            a: 1.0 / tau - s,
            w: 0.5 / (h * h),
            inv: 1.0 / (1.0 / tau + s),
        };
        let p = fill(s3, noise)?;
        let f = fill(s3, |i| noise(i + 11))?;
        let mut host = p.clone();
        let t = Instant::now();
        Poisson3Fwd::apply_host(&mut host, &f, &k)?;
        let host_ms = t.elapsed().as_secs_f64() * 1e3;
        let mut dp = DeviceGrid::from_host(dev, &p)?;
        let df = DeviceGrid::from_host(dev, &f)?;
        let tuning = Poisson3Fwd::tune(&mut dp, &df, &k)?;
        let bytes = 12.0 * s3.len() as f64;
        let spec = Poisson3Fwd::spec();
        for sample in &tuning.samples {
            let config = SweepConfig::with_block(sample.schedule, sample.block);
            let plan = Poisson3Fwd::plan(dev, &config, s3)?;
            let stats = time_sweeps(self.runs, || Poisson3Fwd::sweep_plan(&plan, &mut dp, &df, &k))?;
            let predicted = tuning.model.predict_ns(&spec, s3, &config);
            self.rows
                .push(row("poisson 3-D", s3, &plan, stats, bytes, self.copy, predicted));
        }
        let mut check = DeviceGrid::from_host(dev, &p)?;
        Poisson3Fwd::sweep(&tuning.fastest, &mut check, &df, &k)?;
        if !same_bits(&check.to_host()?, &host) {
            bail!("Poisson 3-D on {:?} differs from the host sweep", tuning.fastest);
        }
        self.summaries
            .push(summary("poisson 3-D", s3, host_ms, &self.rows, tuning, &spec));
        Ok(())
    }
}

/// The tuner's samples, and the strip schedule's also with other phases than the default.
fn measured_configs(tuning: &Tuning) -> Vec<SweepConfig> {
    let mut out = Vec::new();
    for sample in &tuning.samples {
        let config = SweepConfig::with_block(sample.schedule, sample.block);
        out.push(config);
        if sample.schedule == Schedule::Strip {
            for c in [8, 16, 32] {
                out.push(config.with_phase(c).with_prefetch(32));
            }
            out.push(config.with_phase(16).with_prefetch(32).with_rows(2));
        }
    }
    out
}

fn row(
    problem: &str,
    shape: Shape,
    plan: &SweepPlan,
    time: Stats,
    bytes: f64,
    copy: f64,
    model_ns: Option<f64>,
) -> Row {
    let gb_s = bytes / (time.median_us * 1e3);
    Row {
        problem: problem.into(),
        size: shape.to_string(),
        schedule: plan.schedule().to_string(),
        block: plan.block(),
        phase: plan.phase(),
        prefetch: plan.prefetch(),
        rows: plan.rows(),
        launches: plan.launches(),
        time,
        gb_s,
        pct_copy: 100.0 * gb_s / copy,
        model_us: model_ns.map(|n| n / 1e3),
    }
}

fn summary(problem: &str, shape: Shape, host_ms: f64, rows: &[Row], tuning: Tuning, spec: &SweepSpec) -> Summary {
    let mine: Vec<&Row> = rows
        .iter()
        .filter(|r| r.problem == problem && r.size == shape.to_string())
        .collect();
    let best = mine
        .iter()
        .min_by(|a, b| a.time.median_us.total_cmp(&b.time.median_us))
        .map(|r| {
            let c = r.phase.map_or(String::new(), |c| {
                format!(" C={c} PF={} R={}", r.prefetch.unwrap_or(0), r.rows.unwrap_or(1))
            });
            (format!("{} L={}{c}", r.schedule, r.block), r.time.median_us)
        })
        .unwrap_or_default();
    let errors: Vec<f64> = tuning
        .samples
        .iter()
        .filter_map(|s| {
            let p = tuning
                .model
                .predict_ns(spec, shape, &SweepConfig::with_block(s.schedule, s.block))?;
            Some((p - s.measured_ns).abs() / s.measured_ns)
        })
        .collect();
    let model_error = errors.iter().sum::<f64>() / errors.len().max(1) as f64;
    let model_choice_us = mine
        .iter()
        .find(|r| {
            r.schedule == tuning.chosen.schedule.to_string()
                && Some(r.block) == tuning.chosen.block
                && r.phase.unwrap_or(DEFAULT_PHASE) == DEFAULT_PHASE
                && r.prefetch.unwrap_or(DEFAULT_PREFETCH) == DEFAULT_PREFETCH
                && r.rows.unwrap_or(DEFAULT_ROWS) == DEFAULT_ROWS
        })
        .map_or(tuning.predicted_ns / 1e3, |r| r.time.median_us);
    Summary {
        problem: problem.into(),
        size: shape.to_string(),
        host_one_core_ms: host_ms,
        speedup_vs_host: host_ms * 1e3 / best.1.max(1e-9),
        best: best.0,
        best_us: best.1,
        tuning,
        model_error,
        model_choice_us,
    }
}

impl Report {
    pub fn table(&self) -> String {
        let mut s = format!(
            "sweeps on {} — copy bandwidth {:.0} GB/s (same run)\n\n| problem | size | schedule | L | launches | median µs | min µs | GB/s | % copy | model µs |\n|---|---|---|---|---|---|---|---|---|---|\n",
            self.device, self.copy_gb_s
        );
        for r in &self.rows {
            s.push_str(&format!(
                "| {} | {} | {} | {} | {} | {:.1} | {:.1} | {:.1} | {:.1} | {} |\n",
                r.problem,
                r.size,
                r.schedule,
                r.phase.map_or(r.block.to_string(), |c| {
                    format!(
                        "{} (C {c}, PF {}, R {})",
                        r.block,
                        r.prefetch.unwrap_or(0),
                        r.rows.unwrap_or(1)
                    )
                }),
                r.launches,
                r.time.median_us,
                r.time.min_us,
                r.gb_s,
                r.pct_copy,
                r.model_us.map_or("—".into(), |m| format!("{m:.1}"))
            ));
        }
        s.push_str("\n| problem | size | host 1 core ms | best | best µs | × host | model error | model's choice | its µs | tuner's (fastest) |\n|---|---|---|---|---|---|---|---|---|---|\n");
        for m in &self.summaries {
            s.push_str(&format!(
                "| {} | {} | {:.1} | {} | {:.1} | {:.1} | {:.0} % | {} L={} | {:.1} | {} L={} |\n",
                m.problem,
                m.size,
                m.host_one_core_ms,
                m.best,
                m.best_us,
                m.speedup_vs_host,
                100.0 * m.model_error,
                m.tuning.chosen.schedule,
                m.tuning.chosen.block.unwrap_or(0),
                m.model_choice_us,
                m.tuning.fastest.schedule,
                m.tuning.fastest.block.unwrap_or(0),
            ));
        }
        if let Some(t) = self.splitting_step_us {
            s.push_str(&format!("\n2-D splitting step (forward + backward sweep): {t:.1} µs\n"));
        }
        s.push_str(&format!("\nwall time {:.1} s\n", self.wall_s));
        s
    }
}

/// Writes the report as JSON.
pub fn write_json(report: &Report, path: &std::path::Path) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let text = serde_json::to_string_pretty(report)? + "\n";
    clforge::runtime::files::replace_file(path, |w| std::io::Write::write_all(w, text.as_bytes()))
        .with_context(|| format!("writing {}", path.display()))
}

/// `sweeps-check`: Gauss–Seidel and the transport half-step on every one-launch schedule and
/// strip variant at `sizes`, each compared bit for bit with the sequential host sweep; prints
/// every configuration with its verdict and the first differing point (races show at scale
/// that the small grids of the tests miss). Fails if any differs.
pub fn check(dev: &Device, sizes: &[Shape]) -> Result<()> {
    let mut bad = 0;
    for &shape in sizes {
        let u = fill(shape, noise)?;
        let mut want = u.clone();
        GaussSeidel::apply_host(&mut want)?;
        let nx = shape.dims()[0];
        let mut configs = Vec::new();
        for l in [16, 32, 128] {
            configs.push(SweepConfig::with_block(Schedule::PersistentLocal, l.min(64)));
            for c in [8, 32] {
                for pf in [0, 32] {
                    configs.push(
                        SweepConfig::with_block(Schedule::Strip, l)
                            .with_phase(c)
                            .with_prefetch(pf),
                    );
                }
            }
            configs.push(
                SweepConfig::with_block(Schedule::Strip, l)
                    .with_rows(2)
                    .with_prefetch(32),
            );
        }
        for config in configs {
            let mut du = DeviceGrid::from_host(dev, &u)?;
            let plan = match GaussSeidel::plan(dev, &config, shape) {
                Ok(plan) => plan,
                Err(e) => {
                    println!("--   gauss-seidel {shape} {config:?}: refused: {e}");
                    continue;
                }
            };
            GaussSeidel::sweep_plan(&plan, &mut du)?.wait()?;
            plan.check()?;
            let got = du.to_host()?;
            let diff = got
                .data()
                .iter()
                .zip(want.data())
                .enumerate()
                .filter(|(_, (a, b))| a.to_bits() != b.to_bits())
                .map(|(i, _)| i)
                .collect::<Vec<_>>();
            match diff.first() {
                None => println!("ok   gauss-seidel {shape} {config:?}"),
                Some(&i) => {
                    bad += 1;
                    println!(
                        "DIFF gauss-seidel {shape} {config:?}: {} points, first at ({}, {})",
                        diff.len(),
                        i % nx,
                        i / nx
                    );
                    // Which inputs were stale or early: each neighbour old (before) or new (after).
                    let (o, n) = (u.data(), want.data());
                    let g = got.data()[i];
                    for mask in 0..16u32 {
                        let pick = |b: u32, j: usize| if mask & (1 << b) != 0 { n[j] } else { o[j] };
                        let v = 0.25 * (pick(0, i - 1) + pick(1, i - nx) + pick(2, i + 1) + pick(3, i + nx));
                        if v.to_bits() == g.to_bits() {
                            println!("     got {g} = inputs (W, S, E, N) new? {:04b} (want 0011)", mask);
                        }
                    }
                }
            }
        }
    }
    if bad > 0 {
        bail!("{bad} configurations differ from the host sweep");
    }
    Ok(())
}
