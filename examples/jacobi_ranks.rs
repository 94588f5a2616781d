//! Jacobi iterations split across MPI ranks (feature `mpi`): the same `solve` runs on one
//! device and on `Ranks`, and every rank checks that the split run gives the single device's
//! bits. Then symmetric Gauss–Seidel sweeps (forward, then backward) on the Jacobi result, on
//! one device and across the ranks (the ranks sweep their slabs in turn): the same bits again.
//!
//! ```text
//! cargo build --release --features mpi --example jacobi_ranks
//! mpirun -np 4 target/release/examples/jacobi_ranks --nx 256 --ny 512
//! ```
//!
//! `--fail-rank R --fail-at S` makes rank R stop with an error at step S: every other rank
//! then returns an error naming it (no rank waits for ever). `--expect N` refuses a job of
//! another size on every rank.

use anyhow::{bail, Result};
use clap::Parser;
use clforge::prelude::*;
use clforge::runtime::Ranks;

/// Gauss–Seidel for `Δu = f`, forward in x and y: new values behind the point.
#[clforge::sweep(order = forward)]
fn gs_up(u: &Sweep<f32>, f: &Grid<f32>) -> f32 {
    0.25 * (u.new(-1, 0) + u.new(0, -1) + u.old(1, 0) + u.old(0, 1)) - 0.25 * f.at(0, 0)
}

/// The backward half of a symmetric Gauss–Seidel step.
#[clforge::sweep(order = backward)]
fn gs_down(u: &Sweep<f32>, f: &Grid<f32>) -> f32 {
    0.25 * (u.new(1, 0) + u.new(0, 1) + u.old(-1, 0) + u.old(0, -1)) - 0.25 * f.at(0, 0)
}

/// `sweeps` symmetric Gauss–Seidel steps from `u0` on any sweep target; `stop` may end the run
/// early with an error. Returns the whole grid.
fn smooth<D: SweepTarget>(
    target: &D,
    u0: &HostGrid<f32>,
    f: &HostGrid<f32>,
    sweeps: usize,
    stop: impl Fn(usize) -> Result<()>,
) -> Result<HostGrid<f32>> {
    let config = SweepConfig::new(Schedule::Wave);
    let (up, down) = (
        GsUp::plan(target, &config, u0.shape())?,
        GsDown::plan(target, &config, u0.shape())?,
    );
    let f = target.upload(f)?;
    let mut u = target.upload(u0)?;
    for sweep in 0..sweeps {
        stop(sweep)?;
        GsUp::sweep_plan(&up, &mut u, &f)?;
        GsDown::sweep_plan(&down, &mut u, &f)?;
    }
    Ok(u.to_host()?)
}

/// Jacobi for `Δu = f` with a fixed boundary.
#[clforge::stencil]
fn jacobi(u: &Grid<f32>, f: &Grid<f32>) -> f32 {
    0.25 * (u.at(1, 0) + u.at(-1, 0) + u.at(0, 1) + u.at(0, -1)) - 0.25 * f.at(0, 0)
}

/// Jacobi split across MPI ranks, checked against one device.
#[derive(Parser, Debug)]
struct Args {
    /// Grid points along x.
    #[arg(long, default_value_t = 96)]
    nx: usize,
    /// Grid points along y (the split axis).
    #[arg(long, default_value_t = 64)]
    ny: usize,
    /// Jacobi iterations.
    #[arg(long, default_value_t = 40)]
    steps: usize,
    /// Halo planes per shared side.
    #[arg(long, default_value_t = 3)]
    depth: usize,
    /// Exchange halos before each launch that needs them instead of overlapping the exchange
    /// with the interior planes (`Ranks::overlap(false)`); the bits are the same.
    #[arg(long)]
    exchange_first: bool,
    /// Also print the split run's wall time per step (the slowest rank's, on rank 0), for
    /// `scripts/bench-ranks.sh`.
    #[arg(long)]
    time: bool,
    /// Refuse to run unless the job has this many ranks.
    #[arg(long)]
    expect: Option<usize>,
    /// This rank stops with an error (to show that every rank then stops).
    #[arg(long)]
    fail_rank: Option<usize>,
    /// The step at which `--fail-rank` stops (past `--steps`: between Gauss–Seidel sweeps).
    #[arg(long, default_value_t = 10)]
    fail_at: usize,
    /// Each rank also writes its outcome (`ok` or its error) to `DIR/rank-R.txt` (the ranks'
    /// terminal lines may interleave).
    #[arg(long)]
    report_dir: Option<std::path::PathBuf>,
}

/// `steps` Jacobi iterations from `u0` on any target; `stop` may end the run early with an
/// error. Returns the whole grid and the seconds from the first launch until it was read back.
fn solve<D: Target>(
    target: &D,
    u0: &HostGrid<f32>,
    f: &HostGrid<f32>,
    steps: usize,
    stop: impl Fn(usize) -> Result<()>,
) -> Result<(HostGrid<f32>, f64)> {
    let plan = Jacobi::plan(target, &LaunchConfig::default(), u0.shape())?;
    let f = target.upload(f)?;
    let mut u = PingPong::from_host(target, u0)?;
    let start = std::time::Instant::now();
    for step in 0..steps {
        stop(step)?;
        let (next, current) = u.split();
        Jacobi::enqueue_plan(&plan, next, current, &f)?;
        u.swap();
    }
    let grid = u.current().to_host()?;
    Ok((grid, start.elapsed().as_secs_f64()))
}

/// `Err` naming the first point where `split` and `one` (one device's) differ in their bits.
fn same_bits(split: &HostGrid<f32>, one: &HostGrid<f32>, what: &str) -> Result<()> {
    match split
        .data()
        .iter()
        .zip(one.data())
        .position(|(a, b)| a.to_bits() != b.to_bits())
    {
        Some(i) => bail!(
            "{what}: point {i} is {} but {} on one device",
            split.data()[i],
            one.data()[i]
        ),
        None => Ok(()),
    }
}

fn run(args: &Args, ranks: &Ranks) -> Result<()> {
    let (r, n) = (ranks.rank(), ranks.size());
    let shape = Shape::d2(args.nx, args.ny);
    let u0 = HostGrid::from_fn(shape, |[x, y, _]| ((x * 7 + y * 13) % 17) as f32 * 0.1)?;
    let f = HostGrid::from_fn(shape, |[x, y, _]| ((x as f32) * 0.1).sin() * ((y as f32) * 0.07).cos())?;
    let (split, seconds) = solve(ranks, &u0, &f, args.steps, |step| {
        if args.fail_rank == Some(r) && step == args.fail_at {
            bail!("rank {r}: injected failure at step {step} (--fail-rank)");
        }
        Ok(())
    })?;
    let slowest = ranks.max(seconds)?;
    if args.time && r == 0 {
        println!(
            "timing: {n} ranks, {shape}, depth {}, overlap {}: {:.1} us per step (wall clock of {} steps and the gather, slowest rank)",
            args.depth,
            !args.exchange_first,
            slowest * 1e6 / args.steps as f64,
            args.steps
        );
    }
    let (one, _) = solve(ranks.device(), &u0, &f, args.steps, |_| Ok(()))?;
    same_bits(&split, &one, &format!("rank {r}: split across {n} ranks"))?;
    // Sweeps: the ranks take turns along y, each handing its new edge rows to the next.
    let sweeps = (args.steps / 10).max(1);
    // `--fail-at` past the Jacobi steps stops `--fail-rank` between two sweeps.
    let split_gs = smooth(ranks, &split, &f, sweeps, |sweep| {
        if args.fail_rank == Some(r) && args.steps + sweep == args.fail_at {
            bail!("rank {r}: injected failure at sweep {sweep} (--fail-rank)");
        }
        Ok(())
    })?;
    let one_gs = smooth(ranks.device(), &split, &f, sweeps, |_| Ok(()))?;
    same_bits(
        &split_gs,
        &one_gs,
        &format!("rank {r}: after {sweeps} Gauss–Seidel sweeps across {n} ranks"),
    )?;
    // A reduction through MPI: the largest |u| of each rank's own planes, over all ranks.
    let layout = ranks.layout(shape)?;
    let (lo, hi) = layout.owned()[r];
    let own = &split.data()[lo * args.nx..hi * args.nx];
    let local = own.iter().fold(0f64, |m, v| m.max(f64::from(v.abs())));
    let global = ranks.max(local)?;
    let whole = split.data().iter().fold(0f64, |m, v| m.max(f64::from(v.abs())));
    if global != whole {
        bail!("rank {r}: max |u| over ranks {global} differs from the whole grid's {whole}");
    }
    println!(
        "rank {r} of {n}: planes {lo}..{hi} on {}; {} steps of {shape} equal one device bit for bit; max |u| = {global}; \
         {sweeps} symmetric Gauss-Seidel sweeps equal one device bit for bit",
        ranks.device().info().name,
        args.steps
    );
    Ok(())
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let ranks = match Device::default()
        .map_err(anyhow::Error::from)
        .and_then(|d| Ok(Ranks::init(d)?))
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e:#}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let rank = ranks.rank();
    // Every error, `--expect`'s included, is reported in one write per rank.
    let a = &args;
    let outcome = (move || -> Result<()> {
        let ranks = match a.expect {
            Some(n) => ranks.expect(n)?,
            None => ranks,
        };
        let ranks = ranks.depth(a.depth)?.overlap(!a.exchange_first)?;
        run(a, &ranks)
    })();
    let line = match &outcome {
        Ok(()) => "ok\n".to_string(),
        Err(e) => format!("rank {rank} error: {e:#}\n"),
    };
    if let Some(dir) = &args.report_dir {
        if let Err(e) = std::fs::write(dir.join(format!("rank-{rank}.txt")), &line) {
            eprintln!("rank {rank}: writing the report: {e}");
        }
    }
    if outcome.is_err() {
        eprint!("{line}");
        return std::process::ExitCode::FAILURE;
    }
    std::process::ExitCode::SUCCESS
}
