//! The 2-D Ising model as a `#[clforge::lattice]` rule (checkerboard Metropolis with
//! Philox4x32-10 draws) on the default OpenCL device: runs a quench from a random start, prints
//! the magnetisation and energy per site against Onsager's and Yang's exact values, and writes
//! the final spins as a PNG.
//!
//! ```sh
//! cargo run --release --example ising -- --size 1024 --beta 0.6 --steps 2000 --out out/ising.png
//! cargo run --release --example ising -- --devices 2     # the lattice split over 2 devices
//! mpirun -np 2 target/release/examples/ising --ranks     # across MPI ranks (--features mpi)
//! ```
//!
//! Split runs give the single device's spins bit for bit: a site's colour and random stream
//! are the whole lattice's, wherever it is updated.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Parser;
use clforge::prelude::*;
use clforge::runtime::lattice::{rng, LatticeLaunch};
use clforge::runtime::GridOn;

/// One site: flip when the energy falls, else with probability exp(-β ΔE), as integer thresholds
/// (`t4`, `t8` for ΔE = 4, 8 in units of J) so that host and device accept the same draws.
#[lattice(boundary = periodic)]
pub fn ising(s: &Lattice<i32>, rng: &Draws, t4: u32, t8: u32) -> i32 {
    let h = s.at(1, 0) + s.at(-1, 0) + s.at(0, 1) + s.at(0, -1);
    let de = 2 * s.at(0, 0) * h;
    let u = rng.draw(0);
    if de <= 0 || (de == 4 && u < t4) || (de == 8 && u < t8) {
        -s.at(0, 0)
    } else {
        s.at(0, 0)
    }
}

#[derive(Parser, Debug)]
#[command(about = "2-D Ising model on the default OpenCL device (checkerboard Metropolis)")]
struct Cli {
    /// Lattice edge (even): size x size spins, periodic.
    #[arg(long, default_value_t = 512)]
    size: usize,
    /// Inverse temperature β J (critical: 0.4407).
    #[arg(long, default_value_t = 0.6)]
    beta: f64,
    /// Steps (each updates every spin once: both colours).
    #[arg(long, default_value_t = 1000)]
    steps: u32,
    /// Seed of the random stream.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Where to write the final spins.
    #[arg(long, default_value = "out/ising.png")]
    out: PathBuf,
    /// Split the lattice along y over this many devices (every GPU in turn, else the default
    /// device repeated).
    #[arg(long, default_value_t = 1)]
    devices: usize,
    /// Split the lattice across the MPI ranks of this job (built with `--features mpi`, started
    /// with `mpirun -np N`); rank 0 reports and writes the picture.
    #[cfg(feature = "mpi")]
    #[arg(long)]
    ranks: bool,
}

/// The grids a lattice plan `P` steps.
type GridOf<P, T> = GridOn<<P as LatticeLaunch>::On, T>;

/// The quench on any target: `plan` and `state` are one device's, several devices' or this
/// rank's. Returns the final spins and the device time of the sampled steps.
fn simulate<P: LatticeLaunch>(
    plan: &P,
    state: &mut GridOf<P, i32>,
    cli: &Cli,
    (t4, t8): (u32, u32),
    report: bool,
) -> Result<(HostGrid<i32>, u64, u32)> {
    let every = (cli.steps / 10).max(1);
    let (mut device_ns, mut sampled) = (0u64, 0u32);
    for step in 0..cli.steps {
        let ev = Ising::step_plan(plan, cli.seed, step, &mut *state, t4, t8)?;
        if (step + 1) % every == 0 || step + 1 == cli.steps {
            device_ns += ev.elapsed_ns()?;
            sampled += 1;
            let (m, e) = observables(&state.to_host()?);
            if report {
                println!("step {:>7}: m = {m:+.4}, E/N = {e:+.4}", step + 1);
            }
        }
    }
    Ok((state.to_host()?, device_ns, sampled))
}

/// Magnetisation per site and energy per site (J = 1) of a periodic configuration.
fn observables(s: &HostGrid<i32>) -> (f64, f64) {
    let [nx, ny, _] = s.shape().dims();
    let d = s.data();
    let (mut m, mut e) = (0i64, 0i64);
    for y in 0..ny {
        for x in 0..nx {
            let v = i64::from(d[x + nx * y]);
            m += v;
            e -= v * (i64::from(d[(x + 1) % nx + nx * y]) + i64::from(d[x + nx * ((y + 1) % ny)]));
        }
    }
    let n = (nx * ny) as f64;
    (m as f64 / n, e as f64 / n)
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    if cli.size < 2 || cli.size % 2 == 1 {
        bail!("--size must be even and at least 2 (the checkerboard needs an even periodic lattice)");
    }
    if !(cli.beta.is_finite() && cli.beta >= 0.0) {
        bail!("--beta must be a finite, non-negative number");
    }
    let device = Device::default()?;
    println!("device: {} ({})", device.info().name, device.info().platform);
    let shape = Shape::d2(cli.size, cli.size);
    let start = HostGrid::from_fn(shape, |p| {
        if rng::draw(cli.seed, u32::MAX, shape.index(p) as u64, 0) & 1 == 0 {
            1
        } else {
            -1
        }
    })?;
    let thresholds = (
        rng::threshold((-4.0 * cli.beta).exp()),
        rng::threshold((-8.0 * cli.beta).exp()),
    );
    #[cfg(feature = "mpi")]
    if cli.ranks {
        let ranks = clforge::runtime::Ranks::init(device.clone())?.periodic(true)?;
        let plan = Ising::plan(&ranks, shape)?;
        let mut state = ranks.upload(&start)?;
        let rank = ranks.rank();
        let (spins, _, _) = simulate(&plan, &mut state, &cli, thresholds, rank == 0)?;
        if rank == 0 {
            finish(&cli, &spins, None)?;
        }
        return Ok(());
    }
    let (spins, device_ns, sampled) = if cli.devices > 1 {
        let devices = Devices::new(vec![device.clone(); cli.devices])?.periodic(true);
        println!("split along y over {} devices", cli.devices);
        let plan = Ising::plan(&devices, shape)?;
        let mut state = SplitGrid::from_host(&devices, &start)?;
        simulate(&plan, &mut state, &cli, thresholds, true)?
    } else {
        let plan = Ising::plan(&device, shape)?;
        let mut state = DeviceGrid::from_host(&device, &start)?;
        simulate(&plan, &mut state, &cli, thresholds, true)?
    };
    finish(&cli, &spins, Some((device_ns, sampled)))
}

/// The observables against the exact values, the device time, the picture.
fn finish(cli: &Cli, spins: &HostGrid<i32>, timing: Option<(u64, u32)>) -> Result<()> {
    let (m, e) = observables(spins);
    if cli.beta > 0.4407 {
        let exact = (1.0 - (2.0 * cli.beta).sinh().powi(-4)).powf(0.125);
        println!(
            "|m| = {:.4}; Onsager-Yang spontaneous magnetisation at beta {}: {exact:.4}",
            m.abs(),
            cli.beta
        );
        println!("(a quench from a random start may hold domains for long: |m| then lies below)");
    }
    match timing {
        Some((device_ns, sampled)) => println!(
            "E/N = {e:.4}; device time per step (mean of {sampled} sampled steps): {:.1} us",
            device_ns as f64 / 1e3 / f64::from(sampled.max(1))
        ),
        None => println!("E/N = {e:.4}"),
    }
    write_png(&cli.out, spins).with_context(|| format!("writing {}", cli.out.display()))?;
    println!("wrote {}", cli.out.display());
    Ok(())
}

/// Up spins light, down spins dark, one pixel per spin (at most 1024 px a side: larger lattices
/// are sampled).
fn write_png(path: &std::path::Path, s: &HostGrid<i32>) -> Result<()> {
    // Drawn into a temporary file renamed over `path` once complete: a previous picture
    // survives any failure, and no partial picture is left.
    let mut drawn = None;
    clforge::runtime::files::replace_file_at(path, |tmp| {
        drawn = Some(write_png_at(tmp, s).map_err(std::io::Error::other)?);
        Ok(())
    })
    .with_context(|| format!("writing {}", path.display()))?;
    drawn.ok_or_else(|| anyhow::anyhow!("{} was not drawn", path.display()))
}

fn write_png_at(path: &std::path::Path, s: &HostGrid<i32>) -> Result<()> {
    use plotters::prelude::*;
    let [nx, ny, _] = s.shape().dims();
    let (w, h) = (nx.min(1024), ny.min(1024));
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let root = BitMapBackend::new(path, (w as u32, h as u32)).into_drawing_area();
    for py in 0..h {
        for px in 0..w {
            let (x, y) = (px * nx / w, py * ny / h);
            let up = s.data()[x + nx * y] > 0;
            let c = if up {
                RGBColor(240, 220, 120)
            } else {
                RGBColor(40, 50, 90)
            };
            root.draw_pixel((px as i32, py as i32), &c)?;
        }
    }
    root.present()?;
    Ok(())
}
