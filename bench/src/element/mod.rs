//! The `elements` suite: one explicit step of seed 000's elastic-wave model (bilinear
//! plane-stress quads on a structured grid, lumped masses) for every element-force schedule
//! of the runtime's [`Stepper`], against seed 000's appendix kernels (algorithms 1-4 with the
//! node integration of appendix 10.1) ported in `bench/baselines/seed000.cl` and launched
//! through `Device::program` / `Program::launch` with the seed's work sizes.
//!
//! Every schedule and every seed kernel is first checked against the [`HostStepper`] on a
//! small mesh (the run stops if one is wrong). Then, per size, each is timed over `reps.timed`
//! steps after `reps.warmup` warm-up steps: one step is the sum of its kernels' profiled
//! device times (colours + integration, or the one fused gather launch). A batch of steps
//! enqueued back to back (one finish) gives the wall time per step, launch gaps included.
//!
//! # Minimum bytes per step (the "own roofline" of each schedule)
//!
//! Counted as if every array were read and written exactly once per step (perfect reuse of
//! nodes shared by elements); `u`, `v`, `F`, `M⁻¹`, `C` are `float2` per node (8 B):
//! - **gather** (fused): read `u`, `v`, `M⁻¹`, `C`, write `u`, `v` = 6 × 8 = **48 B/node**. With
//!   `M⁻¹` and `C` constant (all elements alike, no fixed nodes) it would be 4 × 8 = 32 B/node,
//!   about 23 ms per 1000 steps of 2M elements at the H100's measured copy rate (2.97 TB/s),
//!   under the table's 50 ms target line; the generated kernel reads both arrays, so 48 is its
//!   floor (measured there: 62 ms).
//! - **scatter schedules** (element pass, then the integration pass): element pass reads `u` and
//!   reads + writes `F` (24 B/node); integration reads `M⁻¹`, `C`, `u`, `v`, `F` and writes
//!   `u`, `v`, `F` (64 B/node): **88 B/node** for computed and blocked indices, plus the node
//!   index array (4 × 4 = 16 B/element) for coloured, unstructured and seed algorithm 1, plus one
//!   16-byte control word per 512-element block for blocked-mat and seed algorithm 4.
//!
//! `K_e` (256 B) sits in constant memory or is staged per work-group and is not counted. The
//! fraction of the copy bandwidth measured in the same run (the roofline's copy kernel or
//! `clEnqueueCopyBuffer`, whichever is faster) is `% roofline`: min bytes / median time / copy.

pub mod forming;
pub(crate) mod model;
mod schedules;
mod tets;
mod timing;

use std::time::Instant;

use anyhow::{bail, Context, Result};
use clforge::runtime::element::schedule::ForceSchedule;
use clforge::runtime::element::stepper::{HostStepper, Model, Stepper};
use clforge::runtime::{Device, DeviceKind, Shape};

use crate::baselines::seed000::{Seed000, SeedCase};
use crate::measure::{device_sum_ns, Progress, Stats};
use crate::options::{new_report, Options};
use crate::report::{Check, ElementRow, Report};
use crate::roofline;
use model::{config, model, ALPHA, DT};
use schedules::{
    apply, defaults_note, kernel_name, launches_of, min_bytes, schedule_config, schedule_name, schedules,
    variant_config, variant_name, variants, Kind,
};
use timing::{time_stepper, timed_row, RowHead};

/// The small mesh of the checks: whole blocks and work-groups of every seed kernel.
const CHECK_ELEMENTS: [usize; 2] = [64, 64];
const CHECK_STEPS: usize = 10;
/// Largest relative error (max |diff| / max |value| of u and v) a check accepts.
const CHECK_TOL: f64 = 1e-4;

/// Element grids: 64K, 256K, 1M, 2M (and 4M, 8M) quads on GPUs, smaller on CPUs; then a 3-D
/// size, the box of `nx × ny × nz` cubes cut into tetrahedra ([`tets`]): 56³ · 6 = 1 053 696
/// elements on GPUs.
pub fn default_sizes(dev: &Device, quick: bool) -> Vec<Shape> {
    let gpu = dev.info().kind == DeviceKind::Gpu;
    let s = Shape::d2;
    let cubes = |n| Shape::d3(n, n, n);
    match (gpu, quick) {
        (true, false) => vec![
            s(256, 256),
            s(512, 512),
            s(1024, 1024),
            s(2048, 1024),
            s(2048, 2048),
            s(4096, 2048),
            cubes(56),
        ],
        (true, true) => vec![s(256, 256), s(2048, 1024), cubes(32)],
        (false, false) => vec![s(256, 256), s(512, 512), s(1024, 1024), cubes(16)],
        (false, true) => vec![s(128, 128), cubes(8)],
    }
}

/// Deterministic pseudo-random values in `[-scale, scale)`.
fn noise(n: usize, seed: u64, scale: f32) -> Vec<f32> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            ((x >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0) * scale
        })
        .collect()
}

/// `max |a - b| / max |b|`.
fn rel_error(a: &[f32], b: &[f32]) -> f64 {
    let scale = b.iter().fold(1e-30f64, |m, v| m.max(f64::from(v.abs())));
    let diff = a.iter().zip(b).fold(0f64, |m, (x, y)| m.max(f64::from((x - y).abs())));
    if a.len() != b.len() || diff.is_nan() {
        return f64::INFINITY;
    }
    diff / scale
}

/// Checks every schedule and seed algorithm against the host stepper on the small mesh.
fn check_all(dev: &Device, seed: &Seed000, progress: &mut Progress) -> Result<Vec<Check>> {
    let structured = model(CHECK_ELEMENTS, false)?;
    let unstructured = model(CHECK_ELEMENTS, true)?;
    let n = structured.dof_count();
    let (u0, v0) = (noise(n, 1, 1.0), noise(n, 2, 1.0));
    let mut host = HostStepper::new(&structured, &config(ForceSchedule::Gather))?;
    host.set_state(&u0, &v0)?;
    host.step(CHECK_STEPS);
    let shape = format!(
        "{}x{} elements, {CHECK_STEPS} steps",
        CHECK_ELEMENTS[0], CHECK_ELEMENTS[1]
    );
    let mut checks = Vec::new();
    let mut push = |kernel: String, config: String, u: Vec<f32>, v: Vec<f32>| -> Result<()> {
        let err = rel_error(&u, &host.u).max(rel_error(&v, &host.v));
        if err.is_nan() || err > CHECK_TOL {
            bail!(
                "{kernel} ({config}) differs from the host reference on {shape}: relative error {err:.2e} > \
                 {CHECK_TOL:.0e}; refusing to benchmark a wrong kernel"
            );
        }
        checks.push(Check {
            kernel,
            config,
            shape: shape.clone(),
            max_rel_err: err,
            exact: u == host.u && v == host.v,
        });
        Ok(())
    };
    for s in schedules() {
        progress.step(&format!("check {} against the host stepper", schedule_name(s)));
        let m = if s == ForceSchedule::Unstructured {
            &unstructured
        } else {
            &structured
        };
        for var in variants(s, true) {
            let st = Stepper::new(dev, m, &config(s)).with_context(|| format!("building {s:?}"))?;
            let Some(mut st) = apply(st, var)? else {
                continue;
            };
            st.set_state(&u0, &v0)?;
            st.step(CHECK_STEPS)?;
            push(
                kernel_name(s, st.derived_mass()),
                format!("{}{}", schedule_config(s, CHECK_ELEMENTS), variant_config(var)),
                st.displacement()?,
                st.velocity()?,
            )?;
        }
    }
    for alg in 1..=4u8 {
        progress.step(&format!("check seed 000 algorithm {alg} against the host stepper"));
        let case = SeedCase::new(dev, &structured, CHECK_ELEMENTS, &u0, &v0, (DT, ALPHA))?;
        for _ in 0..CHECK_STEPS {
            case.step(seed, alg)?;
        }
        push(
            format!("seed000 algorithm {alg}"),
            Seed000::config(alg).to_owned(),
            case.shifts.to_vec()?,
            case.speeds.to_vec()?,
        )?;
    }
    Ok(checks)
}

/// Whether the run at `elements` fits the device (about 100 B per element at most).
fn fits(dev: &Device, elements: [usize; 2]) -> Option<String> {
    let info = dev.info();
    let ne = (elements[0] * elements[1]) as u64;
    let nodes = ((elements[0] + 1) * (elements[1] + 1)) as u64;
    let largest = (16 * ne).max(8 * nodes);
    let cap = if info.kind == DeviceKind::Cpu {
        info.max_alloc_bytes.min(1 << 30)
    } else {
        info.max_alloc_bytes
    };
    if 2 * nodes >= i32::MAX as u64 {
        Some("more DOFs than 32-bit indices reach".to_owned())
    } else if largest > cap {
        Some("a buffer exceeds the allocation limit".to_owned())
    } else if 100 * ne > info.global_mem_bytes / 10 * 8 {
        Some("exceeds 80% of device memory".to_owned())
    } else {
        None
    }
}

/// Steps of the wall-clock batch.
fn batch_steps(dev: &Device, quick: bool) -> usize {
    match (dev.info().kind == DeviceKind::Gpu, quick) {
        (true, false) => 200,
        (true, true) => 50,
        (false, _) => 10,
    }
}
/// Runs the suite.
pub fn run(dev: &Device, opts: &Options, sizes: &[Shape]) -> Result<Report> {
    let start = Instant::now();
    let per_size = schedules().len() + 4 + 1;
    let mut progress = Progress::new((5 + 1 + schedules().len() + 4 + sizes.len() * per_size + 4) as u64);
    let roof = roofline::measure(dev, opts.quick, opts.reps, |m| progress.step(m))?;
    let copy = roof.copy_gb_s();
    let mut report = new_report(dev, opts, "elements", roof, copy);
    progress.step("building seed 000's kernels");
    let seed = Seed000::build(dev).context("building the seed 000 baseline (bench/baselines/seed000.cl)")?;
    report.checks = check_all(dev, &seed, &mut progress)?;

    let run = Run {
        dev,
        opts,
        copy,
        batch: batch_steps(dev, opts.quick),
    };
    for shape in sizes {
        let [nx, ny, nz] = shape.dims();
        match shape.rank() {
            3 => tets::run_tets(dev, opts, &mut report, copy, &mut progress, [nx, ny, nz])?,
            2 => run.quads(&seed, &mut report, &mut progress, [nx, ny])?,
            _ => report.skipped.push(format!(
                "{shape}: the elements suite takes 2-D quad grids and 3-D tetrahedral boxes"
            )),
        }
    }
    progress.finish();
    report.wall_s = start.elapsed().as_secs_f64();
    Ok(report)
}

/// What the timed rows of one run share.
struct Run<'a> {
    dev: &'a Device,
    opts: &'a Options,
    /// The copy rate measured in the same run (GB/s).
    copy: f64,
    /// Steps of the wall-clock batch.
    batch: usize,
}

/// One grid of quads: its label, counts and initial state.
struct Quads<'a> {
    run: &'a Run<'a>,
    elements: [usize; 2],
    label: String,
    ne: usize,
    nodes: usize,
    u0: Vec<f32>,
    v0: Vec<f32>,
}

impl Run<'_> {
    /// `--kernels`: only the schedules (and `seed` rows) whose names start with one given.
    fn wanted(&self, name: &str) -> bool {
        self.opts.kernels.is_empty() || self.opts.kernels.iter().any(|k| name.starts_with(k.as_str()))
    }

    /// The rows of `elements` quads: seed 000's algorithms, then every schedule and variant,
    /// each with its speed against the fastest seed algorithm.
    fn quads(&self, seed: &Seed000, report: &mut Report, progress: &mut Progress, elements: [usize; 2]) -> Result<()> {
        let label = format!("{}x{}", elements[0], elements[1]);
        progress.step(&format!("{label} elements: model"));
        if let Some(why) = fits(self.dev, elements) {
            progress.note(&format!("skipping {label}: {why}"));
            report.skipped.push(format!("{label} elements: {why}"));
            return Ok(());
        }
        let structured = model(elements, false)?;
        let n = structured.dof_count();
        let quads = Quads {
            run: self,
            elements,
            label,
            ne: structured.mesh.element_count(),
            nodes: structured.mesh.node_count(),
            u0: noise(n, 3, 1e-3),
            v0: noise(n, 4, 1e-3),
        };
        let mut rows = quads.seed_rows(seed, &structured, &mut report.skipped, progress)?;
        rows.extend(quads.schedule_rows(&structured, progress)?);
        let best_seed = rows
            .iter()
            .filter(|r| r.implementation == "seed000")
            .map(|r| r.time.median_us)
            .reduce(f64::min);
        if let Some(best) = best_seed {
            for r in rows.iter_mut().filter(|r| r.time.median_us > 0.0) {
                r.vs_seed = Some(best / r.time.median_us);
            }
        }
        report.elements.extend(rows);
        Ok(())
    }
}

impl Quads<'_> {
    /// A row of this grid: `[schedule, kernels, config]`, launches per step, the device time per
    /// step and the wall time per 1000 steps.
    fn row(
        &self,
        kind: Kind,
        [schedule, kernels, config]: [String; 3],
        launches: usize,
        (time, wall_ms): (Stats, f64),
    ) -> ElementRow {
        let (per_node, per_elem, how) = min_bytes(kind);
        let head = RowHead {
            case: "quad4 plane stress f32".to_owned(),
            elements: self.label.clone(),
            element_count: self.ne,
            node_count: self.nodes,
            implementation: if matches!(kind, Kind::Seed(_)) {
                "seed000"
            } else {
                "clforge"
            },
            schedule,
            kernels,
            config,
            launches_per_step: launches,
        };
        let bytes = per_node * self.nodes as f64 + per_elem * self.ne as f64;
        timed_row(head, (bytes, how), time, (wall_ms, self.run.batch), self.run.copy)
    }

    /// Seed 000's algorithms 1-4 where their work-groups and blocks tile the grid.
    fn seed_rows(
        &self,
        seed: &Seed000,
        structured: &Model,
        skipped: &mut Vec<String>,
        progress: &mut Progress,
    ) -> Result<Vec<ElementRow>> {
        let (dev, reps, batch, label) = (self.run.dev, self.run.opts.reps, self.run.batch, &self.label);
        let mut rows = Vec::new();
        for alg in (1..=4u8).filter(|_| self.run.wanted("seed")) {
            progress.step(&format!("{label} elements: seed 000 algorithm {alg}"));
            if !Seed000::fits(alg, self.elements) {
                skipped.push(format!(
                    "seed 000 algorithm {alg} at {label}: not whole work-groups/blocks"
                ));
                continue;
            }
            let case = SeedCase::new(dev, structured, self.elements, &self.u0, &self.v0, (DT, ALPHA))?;
            for _ in 0..reps.warmup {
                for e in case.step(seed, alg)? {
                    e.wait()?;
                }
            }
            let mut ns = Vec::with_capacity(reps.timed);
            for _ in 0..reps.timed {
                ns.push(device_sum_ns(&case.step(seed, alg)?)?);
            }
            let t0 = Instant::now();
            for _ in 0..batch {
                case.step(seed, alg)?;
            }
            dev.finish()?;
            let wall_ms = t0.elapsed().as_secs_f64() * 1e3 / batch as f64 * 1000.0;
            let what = [
                format!("algorithm {alg}"),
                Seed000::kernels(alg).to_owned(),
                Seed000::config(alg).to_owned(),
            ];
            rows.push(self.row(Kind::Seed(alg), what, 5, (Stats::from_ns(&ns), wall_ms)));
        }
        Ok(rows)
    }

    /// Every runtime schedule, and every variant of the structured gather: M⁻¹ and C by node
    /// class (the default; also with the elements' rows for the assembled stencil, other rows
    /// and work-groups), then per DOF.
    fn schedule_rows(&self, structured: &Model, progress: &mut Progress) -> Result<Vec<ElementRow>> {
        let (dev, opts, label) = (self.run.dev, self.run.opts, &self.label);
        let mut rows = Vec::new();
        let mut unstructured = None;
        for s in schedules().into_iter().filter(|&s| self.run.wanted(&schedule_name(s))) {
            progress.step(&format!("{label} elements: {}", schedule_name(s)));
            let m = if s == ForceSchedule::Unstructured {
                unstructured.get_or_insert(model(self.elements, true)?)
            } else {
                structured
            };
            for var in variants(s, opts.quick) {
                let st = Stepper::new(dev, m, &config(s)).with_context(|| format!("{label}: building {s:?}"))?;
                let Some(mut st) = apply(st, var)? else {
                    continue;
                };
                st.set_state(&self.u0, &self.v0)?;
                let timed = time_stepper(&mut st, opts.reps, self.run.batch)?;
                let (kind, name) = if s == ForceSchedule::Gather && !st.derived_mass() {
                    (Kind::GatherArrays, "gather-arrays".to_owned())
                } else if s == ForceSchedule::Gather
                    && (var.rows > 0 || var.group.is_some() || var.tuned || var.roles || var.steps > 0)
                {
                    (Kind::ForceSchedule(s), variant_name(var))
                } else {
                    (Kind::ForceSchedule(s), schedule_name(s))
                };
                let integrate = if s == ForceSchedule::Gather {
                    ""
                } else {
                    " + quad4_integrate"
                };
                let what = [
                    name,
                    format!("{}{integrate}", kernel_name(s, st.derived_mass())),
                    format!(
                        "{}{}{}",
                        schedule_config(s, self.elements),
                        variant_config(var),
                        defaults_note(&st, var)
                    ),
                ];
                rows.push(self.row(kind, what, launches_of(s, m), timed));
            }
        }
        Ok(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_work_sizes_tile_the_default_sizes() {
        for s in [
            [256, 256],
            [512, 512],
            [1024, 1024],
            [2048, 1024],
            [4096, 2048],
            [128, 128],
            CHECK_ELEMENTS,
        ] {
            for alg in 1..=4 {
                assert!(Seed000::fits(alg, s), "algorithm {alg} at {s:?}");
            }
        }
        assert!(!Seed000::fits(3, [96, 64]));
    }

    #[test]
    fn min_bytes_of_the_gather_and_the_scatter() {
        assert_eq!(min_bytes(Kind::ForceSchedule(ForceSchedule::Gather)).0, 32.0);
        assert_eq!(min_bytes(Kind::GatherArrays).0, 48.0);
        assert_eq!(
            min_bytes(Kind::ForceSchedule(ForceSchedule::Computed)),
            min_bytes(Kind::Seed(2))
        );
        assert_eq!(min_bytes(Kind::Seed(1)).1, 16.0);
    }

    #[test]
    fn noise_is_in_range() {
        let v = noise(1000, 5, 2.0);
        assert!(v.iter().all(|x| (-2.0..2.0).contains(x)) && v.iter().any(|&x| x < 0.0) && v.iter().any(|&x| x > 0.0));
    }
}
