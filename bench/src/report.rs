//! What a run found: the JSON document (`--json`) and the table on stdout.

use std::fmt::Write as _;

use clforge::runtime::DeviceInfo;
use serde::Serialize;

use crate::measure::{Reps, Stats};
use crate::roofline::Roofline;

/// Worst point of a comparison with the host reference.
#[derive(Clone, Debug, Serialize)]
pub struct Check {
    pub kernel: String,
    pub config: String,
    pub shape: String,
    pub max_rel_err: f64,
    pub exact: bool,
}

/// One timed kernel at one size.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// Problem and precision, e.g. `jacobi f32`.
    pub case: String,
    /// Grid shape, e.g. `4096x4096`.
    pub shape: String,
    pub points: usize,
    /// `clforge` (generated) or `seed002` (hand-ported baseline).
    pub implementation: &'static str,
    pub kernel: String,
    /// Variant and tile/work-group, e.g. `tiled 32x16/32x4`.
    pub config: String,
    /// Whether this is the configuration the tuner chose.
    pub tuned: bool,
    /// Fewest bytes the kernel must move per point (reads + writes of each field once).
    pub bytes_per_point: f64,
    /// Floating-point operations per updated point.
    pub flops_per_point: f64,
    pub time: Stats,
    /// `points * bytes_per_point / median time`.
    pub gb_s: f64,
    pub gflop_s: f64,
    /// `gb_s` over the copy bandwidth measured in this run.
    pub frac_copy: f64,
    /// Median of the fastest seed 002 kernel at this case and shape over this median
    /// (above 1: faster than the baseline).
    pub vs_seed: Option<f64>,
}

impl Row {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        case: &str,
        shape: clforge::runtime::Shape,
        implementation: &'static str,
        kernel: &str,
        config: String,
        bytes_per_point: f64,
        flops_per_point: f64,
        time: Stats,
        copy_gb_s: f64,
    ) -> Row {
        let points = shape.len();
        let rate = |per_point: f64| {
            if time.median_us > 0.0 {
                points as f64 * per_point / time.median_us / 1e3
            } else {
                0.0
            }
        };
        let gb_s = rate(bytes_per_point);
        Row {
            case: case.to_owned(),
            shape: shape.to_string(),
            points,
            implementation,
            kernel: kernel.to_owned(),
            config,
            tuned: false,
            bytes_per_point,
            flops_per_point,
            time,
            gb_s,
            gflop_s: rate(flops_per_point),
            frac_copy: if copy_gb_s > 0.0 { gb_s / copy_gb_s } else { 0.0 },
            vs_seed: None,
        }
    }
}

/// What tuning chose for one kernel and shape, against the default configuration.
#[derive(Clone, Debug, Serialize)]
pub struct TuneRow {
    pub case: String,
    pub shape: String,
    pub chosen: String,
    pub from_cache: bool,
    /// Candidates timed (0 when the answer came from the cache).
    pub candidates: usize,
    /// Candidates that failed to build or launch.
    pub failed: usize,
    /// Seconds the tuning pass took (build + timing).
    pub tuning_s: f64,
    pub default_us: f64,
    pub tuned_us: f64,
    /// `default_us / tuned_us`.
    pub speedup: f64,
}

/// Many small iterations: µs per iteration with and without a host sync after each.
#[derive(Clone, Debug, Serialize)]
pub struct IterRow {
    pub case: String,
    pub shape: String,
    pub config: String,
    pub iterations: usize,
    /// Wall time per iteration, all launches enqueued back to back, one finish at the end.
    pub batched_wall_us: f64,
    /// Sum of the launches' profiled device times per iteration (batched).
    pub batched_device_us: f64,
    /// Host time per launch spent enqueueing (batched loop before the finish).
    pub batched_enqueue_us: f64,
    /// Wall time per iteration, batched, with launches that ask the driver for no event
    /// (`StencilPlan::enqueue`).
    pub no_event_wall_us: f64,
    /// Wall time per iteration when each launch is waited for.
    pub sync_wall_us: Option<f64>,
    /// Device time per iteration in the synchronous loop.
    pub sync_device_us: Option<f64>,
    /// Host enqueue time per launch through `Program::launch` with prepared arguments
    /// (the same kernel without `StencilPlan`), for the runtime's own overhead.
    pub raw_enqueue_us: Option<f64>,
}

/// One timed schedule or seed kernel at one size (the `elements` suite).
#[derive(Clone, Debug, Serialize)]
pub struct ElementRow {
    /// `quad4 plane stress f32`.
    pub case: String,
    /// Element grid `nx x ny`.
    pub elements: String,
    pub element_count: usize,
    pub node_count: usize,
    /// `clforge` (a runtime schedule) or `seed000` (the hand-ported appendix kernel).
    pub implementation: &'static str,
    /// Schedule (`gather`, `blocked`, ...) or seed algorithm (`algorithm 3`).
    pub schedule: String,
    /// Kernels of one step.
    pub kernels: String,
    /// Work sizes and tunables.
    pub config: String,
    /// Kernel launches per step.
    pub launches_per_step: usize,
    /// Fewest bytes one step must move (see the `elements` module docs), and per node.
    pub min_bytes_per_step: f64,
    pub bytes_per_node: f64,
    /// How `min_bytes_per_step` is counted.
    pub min_bytes: &'static str,
    /// Device time per step: sum of the step's profiled kernel times.
    pub time: Stats,
    pub steps_per_s: f64,
    /// `1000 × median`: device time of 1000 steps.
    pub ms_per_1000_steps: f64,
    /// Wall time of `batch_steps` steps enqueued back to back (launch gaps included), per 1000.
    pub wall_ms_per_1000_steps: f64,
    pub batch_steps: usize,
    /// `min_bytes_per_step / median`.
    pub gb_s: f64,
    /// Min bytes at the copy bandwidth of this run, per 1000 steps.
    pub roofline_ms_per_1000_steps: f64,
    /// `gb_s / copy bandwidth` = roofline time / measured time.
    pub frac_roofline: f64,
    /// Median of the fastest seed 000 kernel at this size over this median (above 1: faster).
    pub vs_seed: Option<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub tool: &'static str,
    pub version: &'static str,
    pub suite: String,
    pub quick: bool,
    pub reps: Reps,
    pub device: DeviceInfo,
    pub roofline: Roofline,
    /// Copy bandwidth the stencils are compared with (GB/s).
    pub copy_gb_s: f64,
    /// Kernel checks against the host reference, before any timing.
    pub checks: Vec<Check>,
    pub results: Vec<Row>,
    pub tuning: Vec<TuneRow>,
    pub iterations: Vec<IterRow>,
    /// The `elements` suite: one explicit FEM step per schedule and size.
    pub elements: Vec<ElementRow>,
    /// Sizes or kernels left out, and why.
    pub skipped: Vec<String>,
    /// Where the tuning cache is, and whether it could be written.
    pub tune_cache: Option<String>,
    pub wall_s: f64,
}

impl Report {
    /// The table for stdout.
    pub fn table(&self) -> String {
        let mut s = String::new();
        self.head(&mut s);
        self.results_table(&mut s);
        self.tuning_table(&mut s);
        self.iterations_table(&mut s);
        if !self.elements.is_empty() {
            s.push_str(&elements_table(&self.elements, self.copy_gb_s));
        }
        for skip in &self.skipped {
            let _ = writeln!(s, "skipped: {skip}");
        }
        if let Some(cache) = &self.tune_cache {
            let _ = writeln!(s, "\ntuning cache: {cache}");
        }
        let _ = writeln!(s, "wall time {:.1} s", self.wall_s);
        s
    }

    /// The suite, the device, how times are taken, the roofline and the checks.
    fn head(&self, s: &mut String) {
        let d = &self.device;
        let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
        let _ = writeln!(
            s,
            "clforge-bench {} — suite `{}`{}",
            self.version,
            self.suite,
            if self.quick { " (quick)" } else { "" }
        );
        let _ = writeln!(
            s,
            "device: {} ({}, {:?}), driver {}, {}, {} CUs, {:.1} GiB, max alloc {:.1} GiB, local {} KiB, max work-group {}, fp64 {}",
            d.name,
            d.platform,
            d.kind,
            d.driver_version,
            d.opencl_version,
            d.compute_units,
            gib(d.global_mem_bytes),
            gib(d.max_alloc_bytes),
            d.local_mem_bytes >> 10,
            d.max_work_group_size,
            if d.fp64 { "yes" } else { "no" }
        );
        let _ = writeln!(
            s,
            "timing: profiling events, {} warm-up + {} timed launches each; median [min, max]",
            self.reps.warmup, self.reps.timed
        );
        let _ = writeln!(s, "\nroofline");
        let r = &self.roofline;
        for (p, unit) in [
            (&r.copy_kernel, "GB/s"),
            (&r.copy_buffer, "GB/s"),
            (&r.triad, "GB/s"),
            (&r.fma_f32, "GFLOP/s"),
        ]
        .into_iter()
        .chain(r.fma_f64.as_ref().map(|p| (p, "GFLOP/s")))
        {
            let _ = writeln!(
                s,
                "  {:<44} {:>10.1} {unit:<7} (best {:.1})  {:>9.1} us [{:.1}, {:.1}]",
                p.what, p.rate_g, p.best_rate_g, p.time.median_us, p.time.min_us, p.time.max_us
            );
        }
        let _ = writeln!(s, "  stencils are compared with copy = {:.1} GB/s", self.copy_gb_s);

        let exact = self.checks.iter().filter(|c| c.exact).count();
        let worst = self.checks.iter().map(|c| c.max_rel_err).fold(0.0, f64::max);
        let _ = writeln!(
            s,
            "\nchecks: {} kernels/configs match the host reference on small grids ({exact} bit for bit, worst relative error {worst:.1e})",
            self.checks.len()
        );
    }

    /// Per case and shape, every implementation's times.
    fn results_table(&self, s: &mut String) {
        let mut groups: Vec<(&str, &str)> = Vec::new();
        for r in &self.results {
            if !groups.contains(&(r.case.as_str(), r.shape.as_str())) {
                groups.push((&r.case, &r.shape));
            }
        }
        for (case, shape) in groups {
            let rows: Vec<&Row> = self
                .results
                .iter()
                .filter(|r| r.case == case && r.shape == shape)
                .collect();
            let Some(first) = rows.first() else { continue };
            let clforge = rows.iter().find(|r| r.implementation == "clforge");
            let bpp = clforge.map_or(first.bytes_per_point, |r| r.bytes_per_point);
            let seed = rows.iter().find(|r| r.implementation == "seed002");
            let _ = writeln!(
                s,
                "\n{case} {shape} ({} points; clforge {bpp} B/pt -> {:.1} MB per sweep{}; {} flop/pt)",
                first.points,
                first.points as f64 * bpp / 1e6,
                seed.map_or(String::new(), |r| format!(
                    ", seed 002 {} B/pt (no mask array)",
                    r.bytes_per_point
                )),
                first.flops_per_point
            );
            let _ = writeln!(
                s,
                "  {:<8} {:<20} {:<24} {:>10} {:>10} {:>10} {:>9} {:>7} {:>8}",
                "impl", "kernel", "config", "median us", "min us", "max us", "GB/s", "% copy", "vs seed"
            );
            for r in rows {
                let vs = r.vs_seed.map_or("-".to_owned(), |v| format!("{v:.2}x"));
                let config = if r.tuned {
                    format!("{} (tuned)", r.config)
                } else {
                    r.config.clone()
                };
                let _ = writeln!(
                    s,
                    "  {:<8} {:<20} {:<24} {:>10.1} {:>10.1} {:>10.1} {:>9.1} {:>6.1}% {:>8}",
                    r.implementation,
                    r.kernel,
                    config,
                    r.time.median_us,
                    r.time.min_us,
                    r.time.max_us,
                    r.gb_s,
                    100.0 * r.frac_copy,
                    vs
                );
            }
        }
    }

    /// The tuner's choice per case against the default configuration.
    fn tuning_table(&self, s: &mut String) {
        if !self.tuning.is_empty() {
            let _ = writeln!(
                s,
                "\ntuning (default = plain 32x4 work-groups; speedup = default / tuned median)"
            );
            for t in &self.tuning {
                let how = if t.from_cache {
                    "from cache".to_owned()
                } else {
                    format!("{} candidates, {} failed, {:.1} s", t.candidates, t.failed, t.tuning_s)
                };
                let _ = writeln!(
                    s,
                    "  {:<12} {:<14} -> {:<22} {:>9.1} us vs {:>9.1} us default  {:>5.2}x  ({how})",
                    t.case, t.shape, t.chosen, t.tuned_us, t.default_us, t.speedup
                );
            }
        }
    }

    /// The small-grid study: batched, synchronous and raw launches.
    fn iterations_table(&self, s: &mut String) {
        if !self.iterations.is_empty() {
            let _ = writeln!(
                s,
                "\nmany small iterations, us per iteration: batched (one finish at the end; wall, device, host \
                 enqueue per launch; without events), synchronous (wait after each), raw Program::launch enqueue"
            );
            let _ = writeln!(
                s,
                "  {:<36} {:>6} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}",
                "case / config", "iters", "wall", "device", "enqueue", "no event", "sync wall", "sync dev", "raw enq"
            );
            for it in &self.iterations {
                let opt = |v: Option<f64>| v.map_or("-".to_owned(), |v| format!("{v:.2}"));
                let raw = opt(it.raw_enqueue_us);
                let _ = writeln!(
                    s,
                    "  {:<36} {:>6} {:>10.2} {:>10.2} {:>10.2} {:>10.2} {:>10} {:>10} {:>10}",
                    format!("{} {} {}", it.case, it.shape, it.config),
                    it.iterations,
                    it.batched_wall_us,
                    it.batched_device_us,
                    it.batched_enqueue_us,
                    it.no_event_wall_us,
                    opt(it.sync_wall_us),
                    opt(it.sync_device_us),
                    raw
                );
            }
        }
    }
}

/// The `elements` suite's table: per size, every seed kernel and schedule; at 2M elements also
/// whether the best schedule runs 1000 steps in <= 50 ms and which schedules reach >= 70 % of
/// their own roofline.
fn elements_table(rows: &[ElementRow], copy_gb_s: f64) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "\nexplicit FEM step, quad4 plane stress f32 (seed 000); time per step = sum of its kernels' profiled \
         times, median [min, max]; ms/1000 = 1000 x median (device), wall/1000 = a batch enqueued back to back; \
         B/node = minimum bytes per step per node; % roof = min bytes / median / copy ({copy_gb_s:.1} GB/s)"
    );
    let mut sizes: Vec<&str> = Vec::new();
    for r in rows {
        if !sizes.contains(&r.elements.as_str()) {
            sizes.push(&r.elements);
        }
    }
    for size in sizes {
        let group: Vec<&ElementRow> = rows.iter().filter(|r| r.elements == size).collect();
        let Some(first) = group.first() else { continue };
        let _ = writeln!(
            s,
            "\n{size} elements ({} elements, {} nodes)",
            first.element_count, first.node_count
        );
        let _ = writeln!(
            s,
            "  {:<8} {:<13} {:<46} {:>3} {:>6} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>8} {:>6} {:>8}",
            "impl",
            "schedule",
            "config",
            "ln",
            "B/node",
            "median us",
            "min us",
            "max us",
            "steps/s",
            "ms/1000",
            "wall/1000",
            "GB/s",
            "% roof",
            "vs seed"
        );
        for r in &group {
            let vs = r.vs_seed.map_or("-".to_owned(), |v| format!("{v:.2}x"));
            let _ = writeln!(
                s,
                "  {:<8} {:<13} {:<46} {:>3} {:>6.1} {:>9.1} {:>9.1} {:>9.1} {:>9.0} {:>9.2} {:>9.2} {:>8.1} {:>5.1}% {:>8}",
                r.implementation,
                r.schedule,
                r.config,
                r.launches_per_step,
                r.bytes_per_node,
                r.time.median_us,
                r.time.min_us,
                r.time.max_us,
                r.steps_per_s,
                r.ms_per_1000_steps,
                r.wall_ms_per_1000_steps,
                r.gb_s,
                100.0 * r.frac_roofline,
                vs
            );
        }
        // The target line is stated at 2M elements (2^21, e.g. 2048x1024), within 10 %.
        if first.element_count.abs_diff(2 << 20) <= (2 << 20) / 10 {
            let best = group
                .iter()
                .filter(|r| r.implementation == "clforge")
                .min_by(|a, b| a.time.median_us.total_cmp(&b.time.median_us));
            if let Some(b) = best {
                let under = group
                    .iter()
                    .filter(|r| r.implementation == "clforge" && r.frac_roofline < 0.7);
                let under: Vec<&str> = under.map(|r| r.schedule.as_str()).collect();
                let _ = writeln!(
                    s,
                    "  target: 1000 steps of 2M elements <= 50 ms with the best schedule: {} {:.2} ms ({}; \
                     its own roofline {:.2} ms); >= 70 % of own roofline: {}",
                    b.schedule,
                    b.ms_per_1000_steps,
                    if b.ms_per_1000_steps <= 50.0 { "met" } else { "not met" },
                    b.roofline_ms_per_1000_steps,
                    if under.is_empty() {
                        "every schedule".to_owned()
                    } else {
                        format!("not {}", under.join(", "))
                    }
                );
            }
        }
    }
    s
}
