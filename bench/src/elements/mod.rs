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

pub(crate) mod model;
mod tets;

use std::time::Instant;

use anyhow::{bail, Context, Result};
use clforge::runtime::element::mesh::Mesh;
use clforge::runtime::element::schedule::{Blocking, Schedule};
use clforge::runtime::element::stepper::{HostStepper, Model, Stepper, StepsBox};
use clforge::runtime::element::Real;
use clforge::runtime::{Device, DeviceKind, Shape};

use crate::baselines::seed000::{Seed000, SeedCase};
use crate::measure::{device_sum_ns, Progress, Reps, Stats};
use crate::options::{new_report, Options};
use crate::report::{Check, ElementRow, Report};
use crate::roofline;
use model::{config, model, ALPHA, DT};

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

/// How the minimum bytes of a schedule are counted: (bytes per node, bytes per element, text).
fn min_bytes(kind: Kind) -> (f64, f64, &'static str) {
    const INDEX: &str = "element pass: read u, read+write F (24 B/node) + node indices (16 B/element); \
                         integration: read M^-1, C, u, v, F, write u, v, F (64 B/node)";
    const COMPUTED: &str = "element pass: read u, read+write F (24 B/node); integration: read M^-1, C, u, v, F, \
                            write u, v, F (64 B/node)";
    const BLOCK: &str = "element pass: read u, read+write F (24 B/node) + a 16 B control word per 512-element \
                         block; integration: read M^-1, C, u, v, F, write u, v, F (64 B/node)";
    match kind {
        Kind::Schedule(Schedule::Gather) => (
            32.0,
            0.0,
            "fused: read u, v, write u, v (32 B/node); M^-1 and C looked up by node class, fixed DOFs one bit each",
        ),
        Kind::GatherArrays => (48.0, 0.0, "fused: read u, v, M^-1, C, write u, v (48 B/node)"),
        Kind::Schedule(Schedule::Coloured | Schedule::Unstructured) | Kind::Seed(1) => (88.0, 16.0, INDEX),
        Kind::Schedule(Schedule::BlockedMaterial(_)) | Kind::Seed(4) => (88.0, 16.0 / 512.0, BLOCK),
        _ => (88.0, 0.0, COMPUTED),
    }
}

/// A runtime schedule or a seed algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Schedule(Schedule),
    /// The structured gather reading M⁻¹ and C per DOF (`Stepper::set_derived_mass(false)`).
    GatherArrays,
    Seed(u8),
}

/// A timed variant of a schedule: the structured gather with M⁻¹ and C by node class (`derived`)
/// or per DOF, its nodes per work-item along y and its work-group (`None`: the stepper's
/// default); other schedules ignore all three.
#[derive(Clone, Copy)]
struct Variant {
    derived: bool,
    /// Nodes per work-item along y (0: the stepper's default).
    rows: usize,
    group: Option<[usize; 2]>,
    /// `Stepper::tune_gather` picks rows and group (the others are then ignored).
    tuned: bool,
    /// The class-table gather sums the elements' rows (`Stepper::set_assembled(false)`)
    /// rather than the assembled node stencil.
    roles: bool,
    /// Steps per launch (`Stepper::set_gather_steps`; 0: the stepper's default) and the box of
    /// nodes of a work-group (`None`: the default box).
    steps: usize,
    bx: Option<StepsBox>,
}

/// The several-steps gather's boxes the bench tries besides the default: steps per launch,
/// nodes along x and y, work-items (rows of 64 or 128 local nodes with the margin).
const STEPS_BOXES: [(usize, [usize; 2], usize); 7] = [
    (2, [60, 24], 256),
    (3, [58, 16], 256),
    (3, [58, 24], 256),
    (3, [122, 10], 256),
    (3, [58, 16], 128),
    (4, [56, 16], 256),
    (4, [56, 24], 256),
];

/// The class-table gather's work-groups the bench tries besides the default, at 1 and 2 rows.
const GATHER_GROUPS: [[usize; 2]; 7] = [[64, 2], [128, 1], [32, 4], [32, 8], [32, 16], [16, 8], [16, 16]];

/// Each schedule's timed variants: the structured gather by node class at its default, at 2,
/// 4 and 8 rows per work-item (`Stepper::set_gather_rows`) and at [`GATHER_GROUPS`]
/// (`quick`: 2 rows and one other group), then per DOF; the others once.
fn variants(s: Schedule, quick: bool) -> Vec<Variant> {
    // Variants of rows, groups and the element rows time one step per launch.
    let v = |derived, rows, group| Variant {
        derived,
        rows,
        group,
        tuned: false,
        roles: false,
        steps: if rows > 0 || group.is_some() { 1 } else { 0 },
        bx: None,
    };
    let several = |steps, bx| Variant {
        steps,
        bx,
        ..v(true, 0, None)
    };
    if s != Schedule::Gather {
        return vec![v(true, 0, None)];
    }
    // Rows 0: the stepper's defaults (`class_gather_defaults`).
    let mut all = vec![
        v(true, 0, None),
        Variant {
            roles: true,
            steps: 1,
            ..v(true, 0, None)
        },
    ];
    let (rows, groups): (&[usize], &[[usize; 2]]) = if quick {
        (&[1], &GATHER_GROUPS[..1])
    } else {
        (&[1, 2, 4, 8], &GATHER_GROUPS)
    };
    all.extend(rows.iter().map(|&r| v(true, r, None)));
    for r in [1, 2] {
        all.extend(groups.iter().map(|&g| v(true, r, Some(g))));
    }
    // One step per launch, and several (temporal blocking): 2, 3 and 4 in the default box, then
    // others.
    all.push(several(1, None));
    all.push(several(2, None));
    if !quick {
        all.extend([3, 4].map(|k| several(k, None)));
        all.extend(STEPS_BOXES.iter().map(|&(steps, [x, y], items)| {
            several(
                steps,
                Some(StepsBox {
                    nodes: [x, y, 1],
                    items,
                }),
            )
        }));
    }
    if !quick {
        all.push(Variant {
            tuned: true,
            ..v(true, 0, None)
        });
    }
    all.push(v(false, 0, None));
    all
}

/// `", 4 rows per work-item, work-groups 64x2"` for a gather variant off the defaults.
fn variant_config(v: Variant) -> String {
    let mut s = String::new();
    if v.tuned {
        return ", tuned by Stepper::tune_gather".to_owned();
    }
    if v.roles {
        s += ", element rows (set_assembled(false))";
    }
    if v.steps > 0 {
        s += &format!(", {} steps per launch", v.steps);
    }
    if let Some(b) = v.bx {
        s += &format!(", boxes of {}x{} nodes, {} work-items", b.nodes[0], b.nodes[1], b.items);
    }
    if v.rows > 0 {
        s += &format!(", {} rows per work-item", v.rows);
    }
    if let Some([x, y]) = v.group {
        s += &format!(", work-groups {x}x{y}");
    }
    s
}

/// `", 3 steps per launch (default)"` where the stepper's default runs several steps per launch
/// and the variant did not choose its own.
fn defaults_note<R: Real>(st: &Stepper<R>, v: Variant) -> String {
    if v.steps == 0 && st.derived_mass() && st.gather_steps() > 1 {
        let b = st.steps_box();
        format!(
            ", {} steps per launch in boxes of {}x{} nodes (default)",
            st.gather_steps(),
            b.nodes[0],
            b.nodes[1]
        )
    } else {
        String::new()
    }
}

/// `gather-r2-64x2` for a gather variant off the defaults.
fn variant_name(v: Variant) -> String {
    let mut s = "gather".to_owned();
    if v.tuned {
        return "gather-tuned".to_owned();
    }
    if v.roles {
        s += "-roles";
    }
    if v.steps > 0 && v.rows == 0 && v.group.is_none() && !v.roles {
        s += &format!("-s{}", v.steps);
    }
    if let Some(b) = v.bx {
        s += &format!("-b{}x{}i{}", b.nodes[0], b.nodes[1], b.items);
    }
    if v.rows > 0 {
        s += &format!("-r{}", v.rows);
    }
    if let Some([x, y]) = v.group {
        s += &format!("-{x}x{y}");
    }
    s
}

/// A stepper set to variant `v` (`None`: the variant does not apply, e.g. no class table).
fn apply(mut st: Stepper, v: Variant) -> Result<Option<Stepper>> {
    let custom = v.rows > 0 || v.group.is_some() || v.tuned || v.roles || v.steps > 0;
    if (!v.derived || custom) && !st.derived_mass() {
        return Ok(None);
    }
    if v.roles && !st.assembled() {
        return Ok(None);
    }
    st.set_derived_mass(v.derived && st.derived_mass())?;
    if v.roles {
        st.set_assembled(false)?;
    }
    if v.rows > 0 {
        st.set_gather_rows(v.rows)?;
    }
    if let Some(b) = v.bx {
        st.set_steps_box(b)?;
    }
    if v.steps > 0 {
        // A box or step count the device cannot take is reported and skipped.
        if let Err(e) = st.set_gather_steps(v.steps) {
            eprintln!("skipping {}: {e}", variant_name(v));
            return Ok(None);
        }
    }
    if v.tuned {
        let timings = st.tune_gather(5)?;
        if let Some(best) = timings.first() {
            eprintln!(
                "tune_gather: {} steps per launch, {} rows per work-item, work-groups {:?}, {:.1} us per step (of {} candidates)",
                best.steps,
                best.rows,
                best.group,
                best.median_ns as f64 / 1e3,
                timings.len()
            );
        }
    }
    if let Some(g) = v.group {
        // A work-group the kernel does not take on this device is reported and skipped.
        if let Err(e) = st.set_gather_group(g) {
            eprintln!("skipping {}: {e}", variant_name(v));
            return Ok(None);
        }
    }
    Ok(Some(st))
}

fn schedule_name(s: Schedule) -> String {
    match s {
        Schedule::BlockedMaterial(_) => "blocked-mat".to_owned(),
        _ => s.suffix().to_owned(),
    }
}

fn schedule_config(s: Schedule, elements: [usize; 2]) -> String {
    match s {
        Schedule::Coloured | Schedule::Computed => "4 colours, driver work-groups".to_owned(),
        Schedule::Blocked(b) | Schedule::BlockedMaterial(b) => {
            format!("L_X {} L_Y {} WI_SIZE {} (default), 4 colours", b.l_x, b.l_y, b.wi_size)
        }
        Schedule::Gather => format!("one launch over {}x{} nodes", elements[0] + 1, elements[1] + 1),
        Schedule::Unstructured => "greedy colours, node indices loaded".to_owned(),
    }
}

/// The kernel a stepper of schedule `s` launches (`derived`: the gather's class table).
fn kernel_name(s: Schedule, derived: bool) -> String {
    let derived = if derived { "_derived" } else { "" };
    format!("quad4_{}{derived}", s.suffix())
}

/// Schedules timed, in table order.
fn schedules() -> Vec<Schedule> {
    let b = Blocking::default();
    vec![
        Schedule::Coloured,
        Schedule::Computed,
        Schedule::Blocked(b),
        Schedule::BlockedMaterial(b),
        Schedule::Gather,
        Schedule::Unstructured,
    ]
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
    let mut host = HostStepper::new(&structured, &config(Schedule::Gather))?;
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
        let m = if s == Schedule::Unstructured {
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

    let reps = opts.reps;
    let batch = batch_steps(dev, opts.quick);
    for shape in sizes {
        let [nx, ny, _] = shape.dims();
        if shape.rank() == 3 {
            run_tets(dev, opts, &mut report, copy, &mut progress, [nx, ny, shape.dims()[2]])?;
            continue;
        }
        if shape.rank() != 2 {
            report.skipped.push(format!(
                "{shape}: the elements suite takes 2-D quad grids and 3-D tetrahedral boxes"
            ));
            continue;
        }
        let elements = [nx, ny];
        let label = format!("{nx}x{ny}");
        progress.step(&format!("{label} elements: model"));
        if let Some(why) = fits(dev, elements) {
            progress.note(&format!("skipping {label}: {why}"));
            report.skipped.push(format!("{label} elements: {why}"));
            continue;
        }
        let structured = model(elements, false)?;
        let ne = structured.mesh.element_count();
        let nodes = structured.mesh.node_count();
        let n = structured.dof_count();
        let (u0, v0) = (noise(n, 3, 1e-3), noise(n, 4, 1e-3));
        let mut rows = Vec::new();
        let row = |kind: Kind,
                   schedule: String,
                   kernels: String,
                   config: String,
                   launches: usize,
                   time: Stats,
                   wall_ms: f64| {
            let (per_node, per_elem, how) = min_bytes(kind);
            let head = RowHead {
                case: "quad4 plane stress f32".to_owned(),
                elements: label.clone(),
                element_count: ne,
                node_count: nodes,
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
            let bytes = per_node * nodes as f64 + per_elem * ne as f64;
            timed_row(head, (bytes, how), time, (wall_ms, batch), copy)
        };

        // `--kernels`: only the schedules (and `seed` rows) whose names start with one given.
        let wanted = |name: &str| opts.kernels.is_empty() || opts.kernels.iter().any(|k| name.starts_with(k.as_str()));
        for alg in (1..=4u8).filter(|_| wanted("seed")) {
            progress.step(&format!("{label} elements: seed 000 algorithm {alg}"));
            if !Seed000::fits(alg, elements) {
                report.skipped.push(format!(
                    "seed 000 algorithm {alg} at {label}: not whole work-groups/blocks"
                ));
                continue;
            }
            let case = SeedCase::new(dev, &structured, elements, &u0, &v0, (DT, ALPHA))?;
            for _ in 0..reps.warmup {
                for e in case.step(&seed, alg)? {
                    e.wait()?;
                }
            }
            let mut ns = Vec::with_capacity(reps.timed);
            for _ in 0..reps.timed {
                ns.push(device_sum_ns(&case.step(&seed, alg)?)?);
            }
            let t0 = Instant::now();
            for _ in 0..batch {
                case.step(&seed, alg)?;
            }
            dev.finish()?;
            let wall_ms = t0.elapsed().as_secs_f64() * 1e3 / batch as f64 * 1000.0;
            rows.push(row(
                Kind::Seed(alg),
                format!("algorithm {alg}"),
                Seed000::kernels(alg).to_owned(),
                Seed000::config(alg).to_owned(),
                5,
                Stats::from_ns(&ns),
                wall_ms,
            ));
        }

        let mut unstructured = None;
        for s in schedules().into_iter().filter(|&s| wanted(&schedule_name(s))) {
            progress.step(&format!("{label} elements: {}", schedule_name(s)));
            let m = if s == Schedule::Unstructured {
                unstructured.get_or_insert(model(elements, true)?)
            } else {
                &structured
            };
            // The structured gather: M⁻¹ and C by node class (the default; also with the
            // elements' rows for the assembled stencil, other rows and work-groups), then per DOF.
            for var in variants(s, opts.quick) {
                let st = Stepper::new(dev, m, &config(s)).with_context(|| format!("{label}: building {s:?}"))?;
                let Some(mut st) = apply(st, var)? else {
                    continue;
                };
                st.set_state(&u0, &v0)?;
                let (time, wall_ms) = time_stepper(&mut st, reps, batch)?;
                let launches = launches_of(s, m);
                let (kind, name) = if s == Schedule::Gather && !st.derived_mass() {
                    (Kind::GatherArrays, "gather-arrays".to_owned())
                } else if s == Schedule::Gather
                    && (var.rows > 0 || var.group.is_some() || var.tuned || var.roles || var.steps > 0)
                {
                    (Kind::Schedule(s), variant_name(var))
                } else {
                    (Kind::Schedule(s), schedule_name(s))
                };
                let integrate = if s == Schedule::Gather {
                    ""
                } else {
                    " + quad4_integrate"
                };
                rows.push(row(
                    kind,
                    name,
                    format!("{}{integrate}", kernel_name(s, st.derived_mass())),
                    format!(
                        "{}{}{}",
                        schedule_config(s, elements),
                        variant_config(var),
                        defaults_note(&st, var)
                    ),
                    launches,
                    time,
                    wall_ms,
                ));
            }
        }
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
    }
    progress.finish();
    report.wall_s = start.elapsed().as_secs_f64();
    Ok(report)
}

/// The per-element tetrahedra ([`tets`]) on `cubes`: checked against the host in f32 and f64
/// on a small mesh, then one step timed in each precision.
fn run_tets(
    dev: &Device,
    opts: &Options,
    report: &mut Report,
    copy: f64,
    progress: &mut Progress,
    cubes: [usize; 3],
) -> Result<()> {
    progress.step("tet4 per element: check f32 and f64 against the host stepper");
    let small = tets::model([5, 4, 3], 11)?;
    let shape = format!(
        "5x4x3 cubes x 6 tets ({} elements), {CHECK_STEPS} steps",
        small.mesh.element_count()
    );
    // The coloured scatter and the node gather, each with its own minimum bytes.
    let schedules = [
        (
            Schedule::Unstructured,
            "tet4_unstructured_pe",
            "greedy colours, K_e per element",
        ),
        (
            Schedule::Gather,
            "tet4_gather_unstructured",
            "node lists, K_e per element",
        ),
    ];
    for (schedule, kernel, config) in schedules {
        for (real, err) in [
            ("f32", tets::check::<f32>(dev, &small, schedule, CHECK_STEPS, 1e-5)?),
            ("f64", tets::check::<f64>(dev, &small, schedule, CHECK_STEPS, 1e-12)?),
        ] {
            report.checks.push(Check {
                kernel: format!("{kernel} {real}"),
                config: config.into(),
                shape: shape.clone(),
                max_rel_err: err,
                exact: err == 0.0,
            });
        }
    }
    let [nx, ny, nz] = cubes;
    progress.step(&format!("tet4 per element: model of {nx}x{ny}x{nz} cubes x 6 tets"));
    let model = tets::model(cubes, 3)?;
    let batch = batch_steps(dev, opts.quick);
    let (ne, nodes) = (model.mesh.element_count(), model.mesh.node_count());
    for real in ["f32", "f64"] {
        let label = format!("{nx}x{ny}x{nz} cubes x 6 tet4 {real}");
        let bytes = if real == "f32" { 4 } else { 8 };
        for (schedule, kernels, config, min) in [
            (
                Schedule::Unstructured,
                "tet4_unstructured_pe (one launch per colour) + tet4_integrate",
                "greedy colours, elements stored colour by colour",
                (tets::min_bytes(ne, nodes, bytes), tets::MIN_BYTES),
            ),
            (
                Schedule::Gather,
                "tet4_gather_unstructured (+ tet4_kick per load)",
                "a work-item per DOF walks its node's element list",
                (tets::min_bytes_gather(ne, nodes, bytes), tets::MIN_BYTES_GATHER),
            ),
        ] {
            progress.step(&format!("tet4 per element: {label}, {schedule:?}"));
            let (time, wall_ms, launches) = match real {
                "f32" => time_tets::<f32>(dev, &model, schedule, opts.reps, batch)?,
                _ => time_tets::<f64>(dev, &model, schedule, opts.reps, batch)?,
            };
            let head = RowHead {
                case: format!("tet4 elasticity, K_e per element, {real}"),
                elements: label.clone(),
                element_count: ne,
                node_count: nodes,
                implementation: "clforge",
                schedule: match schedule {
                    Schedule::Gather => "gather-unstructured".into(),
                    _ => "unstructured-pe".into(),
                },
                kernels: kernels.into(),
                config: config.into(),
                launches_per_step: launches,
            };
            report.elements.push(timed_row(head, min, time, (wall_ms, batch), copy));
        }
    }
    Ok(())
}

/// What a row of the table is, before its figures.
struct RowHead {
    case: String,
    elements: String,
    element_count: usize,
    node_count: usize,
    implementation: &'static str,
    schedule: String,
    kernels: String,
    config: String,
    launches_per_step: usize,
}

/// A row with its figures: `(bytes, how)` the minimum bytes of a step and how they are counted,
/// `time` the device time per step, `(wall_ms, batch)` the wall time per 1000 steps of a batch of
/// `batch` steps, `copy` the measured copy rate (GB/s).
fn timed_row(
    h: RowHead,
    (bytes, how): (f64, &'static str),
    time: Stats,
    (wall_ms, batch): (f64, usize),
    copy: f64,
) -> ElementRow {
    let med_s = time.median_us * 1e-6;
    let gb_s = if med_s > 0.0 { bytes / med_s / 1e9 } else { 0.0 };
    ElementRow {
        case: h.case,
        elements: h.elements,
        element_count: h.element_count,
        node_count: h.node_count,
        implementation: h.implementation,
        schedule: h.schedule,
        kernels: h.kernels,
        config: h.config,
        launches_per_step: h.launches_per_step,
        min_bytes_per_step: bytes,
        bytes_per_node: bytes / h.node_count as f64,
        min_bytes: how,
        steps_per_s: if med_s > 0.0 { 1.0 / med_s } else { 0.0 },
        ms_per_1000_steps: time.median_us,
        wall_ms_per_1000_steps: wall_ms,
        batch_steps: batch,
        gb_s,
        roofline_ms_per_1000_steps: if copy > 0.0 { bytes / copy * 1e-3 } else { 0.0 },
        frac_roofline: if copy > 0.0 { gb_s / copy } else { 0.0 },
        vs_seed: None,
        time,
    }
}

/// Device time per step (profiled kernels), wall time per 1000 steps of a batch, launches per step.
fn time_tets<R: Real>(
    dev: &Device,
    model: &Model,
    schedule: Schedule,
    reps: Reps,
    batch: usize,
) -> Result<(Stats, f64, usize)> {
    let mut st = Stepper::<R>::with_precision(dev, model, &tets::config(model, schedule)?)?;
    let n = model.dof_count();
    let u: Vec<R> = noise(n, 5, 1e-3).into_iter().map(|x| R::of(f64::from(x))).collect();
    st.set_state(&u, &vec![R::default(); n])?;
    let (time, wall_ms) = time_stepper(&mut st, reps, batch)?;
    Ok((time, wall_ms, launches_of(schedule, model)))
}

/// `reps.warmup` steps, then the device time of `reps.timed` single steps (profiling events),
/// then the wall time per 1000 steps of `batch` steps enqueued back to back.
fn time_stepper<R: Real>(st: &mut Stepper<R>, reps: Reps, batch: usize) -> Result<(Stats, f64)> {
    // Several steps per launch: each timed call runs one launch's steps, its time divided.
    let per_call = st.gather_steps();
    for _ in 0..reps.warmup {
        st.step(per_call)?;
        st.finish()?;
    }
    if per_call > 1 {
        // The batch below may end in single steps: their kernel's first launch too.
        st.step(1)?;
        st.finish()?;
    }
    let mut ns = Vec::with_capacity(reps.timed);
    for _ in 0..reps.timed {
        st.step(per_call)?;
        ns.push(st.last_step_ns()? / per_call as u64);
    }
    let t0 = Instant::now();
    st.step(batch)?;
    st.finish()?;
    Ok((
        Stats::from_ns(&ns),
        t0.elapsed().as_secs_f64() * 1e3 / batch as f64 * 1000.0,
    ))
}

/// Launches per step of a schedule on `model`'s mesh (no loads).
fn launches_of(s: Schedule, model: &Model) -> usize {
    match (s, &model.mesh) {
        (Schedule::Gather, _) => 1,
        (Schedule::Unstructured, Mesh::Unstructured(m)) => m.greedy_colours().map_or(0, |(_, c)| c) + 1,
        _ => 5,
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
        assert_eq!(min_bytes(Kind::Schedule(Schedule::Gather)).0, 32.0);
        assert_eq!(min_bytes(Kind::GatherArrays).0, 48.0);
        assert_eq!(min_bytes(Kind::Schedule(Schedule::Computed)), min_bytes(Kind::Seed(2)));
        assert_eq!(min_bytes(Kind::Seed(1)).1, 16.0);
    }

    #[test]
    fn noise_is_in_range() {
        let v = noise(1000, 5, 2.0);
        assert!(v.iter().all(|x| (-2.0..2.0).contains(x)) && v.iter().any(|&x| x < 0.0) && v.iter().any(|&x| x > 0.0));
    }
}
