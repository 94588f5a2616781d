//! `clforge-bench`: how fast clforge's generated kernels run on one device, against the
//! device's own roofline measured in the same run and against hand-written baselines
//! (the seeds' kernels ported to OpenCL). The suites are laid out by kind, like the runtime:
//!
//! | suite | kind | module |
//! |---|---|---|
//! | `stencils` | stencil: Jacobi (seed 002) vs the seed's kernels, 3-D heat, tuning, small grids | `stencil/` |
//! | `sweeps`, `sweeps-check`, `chain` | sweep: seed 001's sweeps, their bitwise check, the latency floor | `sweep/` |
//! | `lattice`, `fracture`, `fracture-study` | lattice: Ising, seed 003's fracture and its statistics | `lattice/` |
//! | `elements`, `element-matrices` | element: one explicit step (seed 000), matrices (seed 004) | `element/` |
//! | `scaling` | stencils and the explicit FEM step split over several devices | `scaling.rs` |
//! | `roofline` | copy bandwidth and FMA rate only | `roofline.rs` |
//!
//! ```text
//! cargo run --release --bin clforge-bench -- stencils [--device gpu] [--sizes 512x256,4096,512x512x512]
//!     [--quick] [--json target/bench.json] [--reps 50] [--retune] [--no-f64]
//! cargo run --release --bin clforge-bench -- elements [--quick] [--json F] [--sizes 2048x1024,4096x2048,56x56x56]
//! cargo run --release --bin clforge-bench -- element-matrices --device-only --min-order 3 --max-order 6
//! ```
//!
//! Every time is the device time of profiling events (median, min, max of `--reps`
//! launches after two warm-up launches) unless a suite says otherwise. Every kernel is checked
//! against its host reference on a small grid before it is timed. Shared by the suites:
//! `measure.rs` (timing), `options.rs` and `report.rs` (the stencil and element tables),
//! `roofline.rs`, `real.rs`, and `baselines/` (the seeds' kernels, sources in `bench/baselines/`).

mod baselines;
mod element;
mod lattice;
mod measure;
mod options;
mod real;
mod report;
mod roofline;
mod scaling;
mod stencil;
mod sweep;

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::{Parser, ValueEnum};
use clforge::runtime::{Device, Shape};

use options::Options;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Suite {
    /// Roofline, Jacobi (seed 002) in f32/f64 vs the seed's kernels, 3-D 7-point heat step,
    /// tuning, many small iterations.
    Stencils,
    /// Copy bandwidth and FMA throughput only.
    Roofline,
    /// One explicit FEM step (seed 000) per element-force schedule at several sizes, vs the
    /// seed's appendix kernels (algorithms 1-4).
    Elements,
    /// Seed 001's in-place sweeps on every schedule, the sequential host sweep on one core and
    /// the fitted performance model.
    Sweeps,
    /// The one-launch sweep schedules checked bit for bit against the host sweep at `--sizes`
    /// (default 2048² and 16384²): the first differing point of each configuration.
    SweepsCheck,
    /// The 2-D Ising model as a `#[clforge::lattice]` rule (checkerboard Metropolis): flips
    /// per ns at several sizes, the host reference on one core.
    Lattice,
    /// The latency floor of a bitwise-equal sweep: one update's dependent chain in one
    /// work-item, and the wavefront's in-block step (docs/SWEEPS.md).
    Chain,
    /// Seed 003's fracture to the four vertical faces on the device's work queue, the serial
    /// reference on one core beside it.
    Fracture,
    /// Seed 003's fracture: the parallel schedule against the serial reference over many seeds
    /// for the six (K1, K2) pairs of appendix A (means, confidence intervals, Welch's t-test).
    FractureStudy,
    /// Seed 004's table: f64 element stiffness matrices of trunk hexahedra, p = 1..6.
    ElementMatrices,
    /// Split over every device of the chosen kind (`Devices`): weak and strong scaling of
    /// Jacobi 2-D, the 3-D heat step and the explicit FEM step, halo exchange time.
    Scaling,
}

/// Benchmarks clforge's generated OpenCL kernels on one device.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Cli {
    /// What to measure.
    #[arg(value_enum)]
    suite: Suite,
    /// Device: `gpu`, `cpu`, an index or a name substring (default: CLFORGE_DEVICE, else the
    /// first GPU, else the CPU).
    #[arg(long)]
    device: Option<String>,
    /// Grid sizes, comma separated: `512x256`, `4096` (square), `512x512x512` (3-D, heat step);
    /// for `elements`, grids of quad elements (`2048x1024` = 2M elements) and boxes of cubes cut into 6 tetrahedra each (`56x56x56` = 1M tets).
    #[arg(long, value_delimiter = ',', value_parser = parse_shape)]
    sizes: Option<Vec<Shape>>,
    /// A smoke run: small sizes and few configurations (under a minute on two CPU cores).
    #[arg(long)]
    quick: bool,
    /// Also write the results as JSON to this file.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Timed launches per kernel and size, at least 20 (default: 20 with --quick, else 50).
    #[arg(long)]
    reps: Option<usize>,
    /// Tune afresh (in memory) instead of reading the tuning cache.
    #[arg(long)]
    retune: bool,
    /// Skip double precision.
    #[arg(long)]
    no_f64: bool,
    /// Iterations of the small-grid study (batched vs synchronous launches; 0 skips it).
    #[arg(long, default_value_t = 1000)]
    iterations: usize,
    /// Grid of the small-grid study (seed 002's 512x256).
    #[arg(long, default_value = "512x256", value_parser = parse_shape)]
    small: Shape,
    /// fracture: run the serial reference at sizes up to this many bonds.
    #[arg(long, default_value_t = 500_000_000)]
    serial_up_to: u64,
    /// fracture-study: seeds per pair and schedule.
    #[arg(long, default_value_t = 30)]
    seeds: usize,
    /// fracture-study: thinning of the parallel schedule (each live bond proposes in a launch
    /// with probability 1 / thinning).
    #[arg(long, default_value_t = 8)]
    thinning: u32,
    /// fracture-study: run the parallel schedule on the device (else its exact host replay on
    /// the cores).
    #[arg(long)]
    on_device: bool,
    /// fracture-study: worker threads for the host runs (default: every core).
    #[arg(long)]
    threads: Option<usize>,
    /// element-matrices: highest order p (1 to 6).
    #[arg(long, default_value_t = 6)]
    max_order: usize,
    /// element-matrices: lowest order p (1 to 6).
    #[arg(long, default_value_t = 1)]
    min_order: usize,
    /// element-matrices: only the kernels whose label starts with one of these, comma
    /// separated (`staged,tiled-2x`); elements: only the schedules (and `seed` rows) whose
    /// names start with one (`gather,seed`).
    #[arg(long, value_delimiter = ',')]
    kernels: Vec<String>,
    /// element-matrices: the device kernels alone (no host columns, splits or mixed mesh).
    #[arg(long)]
    device_only: bool,
    /// element-matrices: also run `Forming::tune` over `Forming::candidates` per order and
    /// report its choice (checked against the host like the others).
    #[arg(long)]
    tune: bool,
    /// element-matrices: also form each order's element declared with Lamé's form (the same
    /// physics as the built-in operator) and report it beside.
    #[arg(long)]
    forms: bool,
    /// scaling: halo depths (planes) to measure, comma separated.
    #[arg(long, value_delimiter = ',', default_value = "8")]
    depths: Vec<usize>,
    /// scaling: only the cases whose name starts with one of these (`jacobi`, `heat`, `fem`).
    #[arg(long, value_delimiter = ',')]
    cases: Vec<String>,
}

fn parse_shape(s: &str) -> Result<Shape, String> {
    let parts: Vec<usize> = s
        .trim()
        .split('x')
        .map(|p| {
            p.trim()
                .parse::<usize>()
                .map_err(|_| format!("`{s}` is not a size like 512x256, 4096 or 64x64x64"))
        })
        .collect::<Result<_, _>>()?;
    if parts.contains(&0) {
        return Err(format!("size `{s}` has a zero extent"));
    }
    match parts[..] {
        [n] => Ok(Shape::d2(n, n)),
        [x, y] => Ok(Shape::d2(x, y)),
        [x, y, z] => Ok(Shape::d3(x, y, z)),
        _ => Err(format!("size `{s}` must have 1 to 3 extents")),
    }
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    let timed = cli.reps.unwrap_or(if cli.quick { 20 } else { 50 });
    if timed < 20 {
        bail!("--reps {timed} is too few: time at least 20 launches");
    }
    let dev = match &cli.device {
        Some(sel) => Device::select(sel),
        None => Device::default(),
    }
    .context("choosing the OpenCL device")?;
    let reps = measure::Reps { warmup: 2, timed };
    let (mut sizes_2d, mut sizes_3d) = Options::defaults(&dev, cli.quick);
    if let Some(sizes) = &cli.sizes {
        sizes_2d = sizes.iter().copied().filter(|s| s.rank() == 2).collect();
        sizes_3d = sizes.iter().copied().filter(|s| s.rank() == 3).collect();
    }
    if cli.small.rank() != 2 {
        bail!("--small {} must be a 2-D size", cli.small);
    }
    let opts = Options {
        quick: cli.quick,
        reps,
        sizes_2d,
        sizes_3d,
        f64: !cli.no_f64,
        retune: cli.retune,
        iterations: cli.iterations,
        small: cli.small,
        kernels: cli.kernels.clone(),
    };
    eprintln!(
        "clforge-bench on {} ({}, driver {})",
        dev.info().name,
        dev.info().platform,
        dev.info().driver_version
    );

    if cli.suite == Suite::ElementMatrices {
        let threads = cli
            .threads
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        let m = cli.sizes.as_ref().and_then(|s| s.first()).map(|s| s.dims()[0]);
        let sel = element::forming::Selection {
            min_order: cli.min_order,
            kernels: cli.kernels.clone(),
            device_only: cli.device_only,
            tune: cli.tune,
            forms: cli.forms,
        };
        let report = element::forming::run(&dev, cli.quick, m, cli.max_order, reps, threads, &sel)?;
        return publish(&report.table(), &report, cli.json.as_deref());
    }
    if cli.suite == Suite::Scaling {
        if cli.depths.is_empty() || cli.depths.contains(&0) {
            bail!("--depths must name at least one depth of 1 plane or more");
        }
        let report = scaling::run(&dev, cli.quick, &cli.depths, &cli.cases)?;
        return publish(&report.table(), &report, cli.json.as_deref());
    }
    if cli.suite == Suite::Chain {
        let report = sweep::chain::run(&dev, reps)?;
        return publish(&report.table(), &report, cli.json.as_deref());
    }
    if cli.suite == Suite::Lattice {
        let report = lattice::run(&dev, cli.quick, cli.sizes.as_deref(), reps)?;
        return publish(&report.table(), &report, cli.json.as_deref());
    }
    if matches!(cli.suite, Suite::Fracture | Suite::FractureStudy) {
        let sizes: Option<Vec<[usize; 3]>> = cli.sizes.as_ref().map(|v| {
            v.iter()
                .map(|s| if s.rank() == 3 { s.dims() } else { [s.dims()[0]; 3] })
                .collect()
        });
        return if cli.suite == Suite::Fracture {
            let r = lattice::fracture::run(&dev, cli.quick, sizes.as_deref(), cli.serial_up_to)?;
            publish(&r.table(), &r, cli.json.as_deref())
        } else {
            let size = sizes.and_then(|s| s.first().copied()).unwrap_or(if cli.quick {
                [24, 24, 24]
            } else {
                [128, 128, 128]
            });
            let threads = cli
                .threads
                .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
            let seeds = if cli.quick { cli.seeds.min(4) } else { cli.seeds };
            if seeds < 2 {
                bail!("--seeds {seeds}: a statistical comparison needs at least 2 seeds per schedule");
            }
            let r = lattice::fracture::study(cli.on_device.then_some(&dev), size, seeds, cli.thinning, threads)?;
            publish(&r.table(), &r, cli.json.as_deref())
        };
    }
    if cli.suite == Suite::SweepsCheck {
        let sizes = cli
            .sizes
            .clone()
            .unwrap_or_else(|| vec![Shape::d2(2048, 2048), Shape::d2(16384, 16384)]);
        return sweep::check(&dev, &sizes);
    }
    if cli.suite == Suite::Sweeps {
        let report = sweep::run(&dev, cli.quick, reps)?;
        print!("{}", report.table());
        if let Some(path) = &cli.json {
            sweep::write_json(&report, path)?;
            eprintln!("wrote {}", path.display());
        }
        return Ok(());
    }
    let report = match cli.suite {
        Suite::Stencils => stencil::run(&dev, &opts, "stencils")?,
        Suite::Elements => {
            let sizes = match &cli.sizes {
                Some(sizes) => sizes.clone(),
                None => element::default_sizes(&dev, cli.quick),
            };
            element::run(&dev, &opts, &sizes)?
        }
        Suite::Sweeps
        | Suite::SweepsCheck
        | Suite::Chain
        | Suite::Lattice
        | Suite::Fracture
        | Suite::FractureStudy
        | Suite::ElementMatrices
        | Suite::Scaling => {
            bail!("the sweeps, chain and lattice suites report on their own")
        }
        Suite::Roofline => {
            let start = Instant::now();
            let mut progress = measure::Progress::new(5);
            let roofline = roofline::measure(&dev, cli.quick, reps, |m| progress.step(m))?;
            progress.finish();
            let copy = roofline.copy_gb_s();
            let mut report = options::new_report(&dev, &opts, "roofline", roofline, copy);
            report.wall_s = start.elapsed().as_secs_f64();
            report
        }
    };
    publish(&report.table(), &report, cli.json.as_deref())
}

/// Prints a suite's table and, with `--json`, writes its report there.
fn publish(table: &str, report: &impl serde::Serialize, json: Option<&std::path::Path>) -> Result<()> {
    print!("{table}");
    if let Some(path) = json {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        let text = serde_json::to_string_pretty(report)?;
        // Replaced only by a complete, synced report: a previous one survives any failure.
        clforge::runtime::files::replace_file(path, |w| std::io::Write::write_all(w, (text + "\n").as_bytes()))
            .with_context(|| format!("writing {}", path.display()))?;
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_shape("512x256"), Ok(Shape::d2(512, 256)));
        assert_eq!(parse_shape("4096"), Ok(Shape::d2(4096, 4096)));
        assert_eq!(parse_shape(" 64x32x16"), Ok(Shape::d3(64, 32, 16)));
        assert!(parse_shape("0x5").is_err() && parse_shape("1x2x3x4").is_err() && parse_shape("big").is_err());
    }

    #[test]
    fn cli_parses() {
        let cli = Cli::try_parse_from(["clforge-bench", "stencils", "--quick", "--sizes", "512x256,32x32x32"]).unwrap();
        assert_eq!((cli.suite, cli.quick), (Suite::Stencils, true));
        assert_eq!(cli.sizes.unwrap(), vec![Shape::d2(512, 256), Shape::d3(32, 32, 32)]);
        assert!(Cli::try_parse_from(["clforge-bench", "nope"]).is_err());
    }
}
