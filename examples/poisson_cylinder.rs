//! Seed 002 (Perezhogin, "Shared memory efficiency for the Poisson equation solved by
//! Jacobi iteration"): the stream function ψ of the flow around a rectangular body in
//! the middle of a 512×256 channel, `Δψ = ω`, solved by Jacobi iteration (seed eq. 1.2).
//!
//! ```text
//! cargo run --release --example poisson_cylinder -- --variant tiled --tol 1e-6
//! ```
//!
//! Cells carry a mask as in the seed's `inside()`: FLUID cells (the seed's INSIDE) take
//! the Jacobi update, OUTFLOW cells (the right edge column) copy their left neighbour
//! (`∂ψ/∂x = 0`), every other cell (body, walls, inlet) keeps its value.
//!
//! Boundary values (the seed gives the geometry, Fig. 1, but no numbers): a uniform
//! channel flow of speed U = 1 from left to right, so `ψ = U·y` on the bottom wall
//! (ψ = 0), the top wall (ψ = U·Ly) and the inlet column; the body is a streamline,
//! `ψ = U·Ly/2`, the value of the channel's centre line, which is the dividing streamline
//! of a body placed symmetrically about it. The physical grid step is `h = Ly/(ny-1)`
//! in both directions, so `a = b = 1/4`, `c = -h²/4`. The right-hand side ω is zero by
//! default, as in the seed's Fig. 1 ("isolines of ψ for a zero right-hand side");
//! `--vortex G` adds a Gaussian vorticity blob of circulation-like strength G behind
//! the body to exercise the `c·ω` term.
//!
//! Convergence is checked every `--check-every` iterations: that iteration runs
//! `jacobi_checked`, which also reduces the largest change it makes, `max |ψ_new - ψ|`, on
//! the device in the same launch (a `Max<f32>` output). (The Poisson residual `|Δ_h ψ - ω|` is
//! that change times `4/h²`.)

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::{Parser, ValueEnum};
use clforge::prelude::*;
use clforge::runtime::stencil::tune::Tuner;
use clforge::runtime::{Event, Max, Reduction};

/// Body, walls and inlet: ψ is fixed.
const SOLID: u8 = 0;
/// The seed's INSIDE: ψ takes the Jacobi update.
const FLUID: u8 = 1;
/// The seed's OUTFLOW: ψ copies its left neighbour.
const OUTFLOW: u8 = 2;

/// The Jacobi weights of seed 002 (its `jacobi_s { a, b, c }`, kept in constant memory).
#[derive(clforge::Params, Clone, Copy, Debug)]
struct Coeffs {
    a: f32,
    b: f32,
    c: f32,
}

/// Seed 002, `jacobi_d`: one Jacobi iteration of `Δψ = ω` (eq. 1.2) with the cell mask:
/// INSIDE (fluid) points take `a(ψ[i+1]+ψ[i-1]) + b(ψ[j+1]+ψ[j-1]) + c·ω`, OUTFLOW points
/// copy their left neighbour, all other points keep their value.
///
/// `boundary = clamp` so that every point, the right edge column included, runs the mask
/// logic as the seed's kernel does (a `fixed` boundary would never visit the outflow column).
#[clforge::stencil(boundary = clamp, state = psi)]
fn jacobi(psi: &Grid<f32>, omega: &Grid<f32>, cell: &Grid<u8>, k: &Coeffs) -> f32 {
    match cell.at(0, 0) {
        FLUID => k.a * (psi.at(1, 0) + psi.at(-1, 0)) + k.b * (psi.at(0, 1) + psi.at(0, -1)) + k.c * omega.at(0, 0),
        OUTFLOW => psi.at(-1, 0),
        _ => psi.at(0, 0),
    }
}

/// One Jacobi iteration (see `jacobi`) with seed 002's stopping test fused into it: besides
/// the new ψ, the largest change it makes anywhere, `max |ψ_new - ψ|` (zero on fixed points),
/// reduced on the device in the same launch. NaN anywhere makes the maximum NaN.
#[clforge::stencil(boundary = clamp)]
fn jacobi_checked(psi: &Grid<f32>, omega: &Grid<f32>, cell: &Grid<u8>, k: &Coeffs) -> (f32, Max<f32>) {
    match cell.at(0, 0) {
        FLUID => {
            let next =
                k.a * (psi.at(1, 0) + psi.at(-1, 0)) + k.b * (psi.at(0, 1) + psi.at(0, -1)) + k.c * omega.at(0, 0);
            (next, Max((next - psi.at(0, 0)).abs()))
        }
        OUTFLOW => (psi.at(-1, 0), Max((psi.at(-1, 0) - psi.at(0, 0)).abs())),
        _ => (psi.at(0, 0), Max(0.0)),
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum VariantArg {
    /// The fastest per iteration on this device, measured by the tuner among the others
    /// (temporal blocking with 4 and 8 steps per launch included).
    Auto,
    /// One point per work-item, neighbours through the caches (the seed's "no shared").
    Plain,
    /// Tile and halo in local memory (the seed's shared-memory kernel).
    Tiled,
    /// Several points along x per work-item with vector loads.
    Vector,
    /// Temporal blocking: `--steps` iterations per launch in local memory.
    Steps,
}

/// Stream function around a rectangular body in a channel (seed 002), Jacobi iteration on
/// the default OpenCL device (CLFORGE_DEVICE picks another).
#[derive(Parser, Debug)]
#[command(version)]
struct Args {
    /// Grid points along the channel.
    #[arg(long, default_value_t = 512)]
    nx: usize,
    /// Grid points across the channel.
    #[arg(long, default_value_t = 256)]
    ny: usize,
    /// Stop when one iteration changes ψ by at most this much anywhere (ψ spans 0..1).
    /// Jacobi's error is about 3000× its last change on the default grid: 1e-5 stops after
    /// ~1500 iterations 2 % off, 2e-7 after ~20000 iterations 0.04 % off; f32 cannot resolve
    /// changes below ~6e-8 (one ulp of ψ near 1).
    #[arg(long, default_value_t = 2e-7)]
    tol: f32,
    /// Give up after this many iterations.
    #[arg(long, default_value_t = 50_000)]
    max_iter: usize,
    /// Which generated kernel to run (`auto`: the tuner's choice; with `--ranks`, plain).
    #[arg(long, value_enum, default_value_t = VariantArg::Auto)]
    variant: VariantArg,
    /// Iterations per launch of `--variant steps`.
    #[arg(long, default_value_t = 8)]
    steps: usize,
    /// Iterations between convergence checks.
    #[arg(long, default_value_t = 500)]
    check_every: usize,
    /// Side of the square body in grid cells (default: ny/6, rounded to even).
    #[arg(long)]
    body: Option<usize>,
    /// Strength of a Gaussian vorticity blob behind the body, e.g. 20 (0: the seed's Fig. 1).
    #[arg(long, default_value_t = 0.0)]
    vortex: f32,
    /// Print the generated OpenCL C of the Jacobi stencil and exit.
    #[arg(long)]
    print_source: bool,
    /// Split the channel along y over this many devices: every GPU of the machine in turn
    /// (the default device repeated where there are fewer), halos exchanged through the host.
    /// The iterations are the same bits as on one device.
    #[arg(long, default_value_t = 1)]
    devices: usize,
    /// Split the channel across the MPI ranks of this job, one device each (built with
    /// `--features mpi`, started with `mpirun -np N`); rank 0 writes the picture.
    #[cfg(feature = "mpi")]
    #[arg(long)]
    ranks: bool,
    /// Where to write the picture of the streamlines.
    #[arg(long, default_value = "out/poisson_cylinder.png")]
    out: PathBuf,
}

/// The problem on the host: initial ψ, ω, the cell mask and the Jacobi weights.
struct Problem {
    shape: Shape,
    psi0: HostGrid<f32>,
    omega: HostGrid<f32>,
    cell: HostGrid<u8>,
    k: Coeffs,
    /// Body cells: `x0..x1`, `y0..y1`.
    body: [usize; 4],
    /// `4/h²`: turns a Jacobi change into the Poisson residual `|Δ_h ψ - ω|`.
    residual_scale: f32,
}

impl Problem {
    fn new(args: &Args) -> Result<Problem> {
        let (nx, ny) = (args.nx, args.ny);
        let side = args.body.unwrap_or((ny / 6) & !1).max(2);
        if nx < 8 || ny < 8 || side + 4 > ny || side + 4 > nx {
            bail!("grid {nx}x{ny} too small for a body of side {side}");
        }
        let shape = Shape::d2(nx, ny);
        // Symmetric about the centre line y = (ny-1)/2 when ny and side are even.
        let (x0, y0) = (nx / 2 - side / 2, ny / 2 - side / 2);
        let body = [x0, x0 + side, y0, y0 + side];
        let in_body = |x: usize, y: usize| (body[0]..body[1]).contains(&x) && (body[2]..body[3]).contains(&y);
        let h = 1.0 / (ny - 1) as f32; // Ly = 1, U = 1
        let cell = HostGrid::from_fn(shape, |[x, y, _]| {
            if y == 0 || y == ny - 1 || x == 0 || in_body(x, y) {
                SOLID
            } else if x == nx - 1 {
                OUTFLOW
            } else {
                FLUID
            }
        })?;
        // ψ = U·y: the uniform channel flow, exact on walls and inlet, the initial guess inside.
        let psi0 = HostGrid::from_fn(shape, |[x, y, _]| if in_body(x, y) { 0.5 } else { y as f32 * h })?;
        let (vx, vy, sigma) = ((body[1] + 2 * side) as f32, (ny / 2) as f32, side as f32 / 2.0);
        let omega = HostGrid::from_fn(shape, |[x, y, _]| {
            let r2 = (x as f32 - vx).powi(2) + (y as f32 - vy).powi(2);
            args.vortex * (-r2 / (2.0 * sigma * sigma)).exp()
        })?;
        // Eq. 1.2 solved for ψ_ij with h_x = h_y = h.
        let k = Coeffs {
            a: 0.25,
            b: 0.25,
            c: -0.25 * h * h,
        };
        Ok(Problem {
            shape,
            psi0,
            omega,
            cell,
            k,
            body,
            residual_scale: 4.0 / (h * h),
        })
    }
}

/// Max |a - b| and whether the two grids are bit-identical.
fn compare(a: &HostGrid<f32>, b: &HostGrid<f32>) -> (f32, bool) {
    let max = a
        .data()
        .iter()
        .zip(b.data())
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max);
    let same = a.data().iter().zip(b.data()).all(|(x, y)| x.to_bits() == y.to_bits());
    (max, same)
}

/// One step of every variant against the host reference, from the initial ψ with a
/// non-zero test ω (so that the `c·ω` term is checked too); fails on any mismatch.
fn self_check(device: &Device, p: &Problem) -> Result<()> {
    let omega = HostGrid::from_fn(p.shape, |[x, y, _]| {
        ((x as f32) * 0.05).sin() * ((y as f32) * 0.07).cos() * 3.0
    })?;
    let psi = HostGrid::from_fn(p.shape, |[x, y, _]| {
        p.psi0.get([x, y, 0]).unwrap_or(0.0) + 1e-3 * ((x * 7 + y * 13) % 17) as f32
    })?;
    let mut want = psi.clone();
    Jacobi::apply_host(&mut want, &psi, &omega, &p.cell, &p.k)?;
    let mut want_checked = HostGrid::new(p.shape)?;
    let mut want_change = Max(0.0f32);
    JacobiChecked::apply_host((&mut want_checked, &mut want_change), &psi, &omega, &p.cell, &p.k)?;
    let d_psi = DeviceGrid::from_host(device, &psi)?;
    let d_omega = DeviceGrid::from_host(device, &omega)?;
    let d_cell = DeviceGrid::from_host(device, &p.cell)?;
    for variant in [Variant::Plain, Variant::Tiled, Variant::Vector] {
        let config = LaunchConfig::variant(variant);
        let mut out = DeviceGrid::new(device, p.shape)?;
        Jacobi::launch(&config, &mut out, &d_psi, &d_omega, &d_cell, &p.k)?.wait()?;
        let (err, same) = compare(&out.to_host()?, &want);
        let mut checked = DeviceGrid::new(device, p.shape)?;
        let mut change = Reduction::new();
        JacobiChecked::launch(&config, (&mut checked, &mut change), &d_psi, &d_omega, &d_cell, &p.k)?;
        let (err_c, same_c) = compare(&checked.to_host()?, &want_checked);
        let change = change.value()?;
        println!(
            "self-check {variant:?}: jacobi max |device - host| = {err:.3e}{}, checked {err_c:.3e}{}, max change {change:.6e} (host {:.6e})",
            if same { " (bit-identical)" } else { "" },
            if same_c { " (bit-identical)" } else { "" },
            want_change.0
        );
        if err > 1e-6 || err_c > 1e-6 || change.to_bits() != want_change.0.to_bits() {
            bail!("the {variant:?} kernels disagree with the host reference (max error {err:e} / {err_c:e}, change {change:e} vs {:e})", want_change.0);
        }
    }
    // Temporal blocking: one launch of 3 steps against 3 host iterations.
    let mut want = psi.clone();
    for _ in 0..3 {
        let mut next = want.clone();
        Jacobi::apply_host(&mut next, &want, &omega, &p.cell, &p.k)?;
        want = next;
    }
    let config = LaunchConfig {
        steps: Some(3),
        ..LaunchConfig::variant(Variant::Steps)
    };
    let mut out = DeviceGrid::new(device, p.shape)?;
    Jacobi::launch(&config, &mut out, &d_psi, &d_omega, &d_cell, &p.k)?.wait()?;
    let (err, same) = compare(&out.to_host()?, &want);
    println!(
        "self-check Steps (3 per launch): jacobi max |device - host| = {err:.3e}{}",
        if same { " (bit-identical)" } else { "" }
    );
    if err > 1e-6 {
        bail!("the steps kernel disagrees with 3 host iterations (max error {err:e})");
    }
    Ok(())
}

fn max_of(g: &HostGrid<f32>) -> f32 {
    // NaN wins, so that a diverging run is noticed (f32::max would skip it).
    g.data()
        .iter()
        .fold(0.0, |m: f32, &v| if v > m || v.is_nan() { v } else { m })
}

fn total_ns(events: &mut Vec<Event>) -> Result<u64> {
    let mut sum = 0;
    for e in events.drain(..) {
        sum += e.duration_ns()?;
    }
    Ok(sum)
}

fn main() -> Result<()> {
    let args = Args::parse();
    if args.print_source {
        print!("{}", Jacobi::source());
        return Ok(());
    }
    if args.check_every == 0 {
        bail!("--check-every must be at least 1");
    }
    if args.steps == 0 {
        bail!("--steps must be at least 1");
    }
    let p = Problem::new(&args)?;
    let device = Device::default().context("no OpenCL device (set CLFORGE_DEVICE to choose one)")?;
    let info = device.info();
    println!(
        "device: {} ({}, {:?}, {} compute units)",
        info.name, info.platform, info.kind, info.compute_units
    );
    println!(
        "grid {}, body x {}..{} y {}..{}, variant {:?}, tol {:e}, check every {}",
        p.shape, p.body[0], p.body[1], p.body[2], p.body[3], args.variant, args.tol, args.check_every
    );
    self_check(&device, &p)?;

    #[cfg(feature = "mpi")]
    if args.ranks {
        // Every rank must launch alike: `auto` would let each rank's own timings decide.
        let config = match args.variant {
            VariantArg::Auto => LaunchConfig::variant(Variant::Plain),
            _ => configure(&device, &args, &p)?,
        };
        let ranks = clforge::runtime::Ranks::init(device.clone())?;
        println!(
            "rank {} of {}: split along y across the ranks",
            ranks.rank(),
            ranks.size()
        );
        let psi_host = solve(&ranks, &config, &args, &p)?;
        if ranks.rank() == 0 {
            plot(&args.out, &psi_host, &p)?;
            println!("wrote {}", args.out.display());
        }
        return Ok(());
    }
    let config = configure(&device, &args, &p)?;
    let psi_host = if args.devices <= 1 {
        solve(&device, &config, &args, &p)?
    } else {
        // halos deep enough for the launches of several steps (each reads one plane per step)
        let devices = Devices::spread(&device, args.devices)?.depth(config.iterations().max(8))?;
        println!(
            "split along y over {} devices: {}",
            args.devices,
            devices
                .devices()
                .iter()
                .map(|d| d.info().name.clone())
                .collect::<Vec<_>>()
                .join(", ")
        );
        solve(&devices, &config, &args, &p)?
    };

    plot(&args.out, &psi_host, &p)?;
    println!("wrote {}", args.out.display());
    Ok(())
}

/// The launch configuration `--variant` asks for; `auto` times every variant on `device` (the
/// steps variant per iteration, with 4 and 8 steps per launch) and takes the fastest.
fn configure(device: &Device, args: &Args, p: &Problem) -> Result<LaunchConfig> {
    let steps = |n: usize| LaunchConfig {
        steps: Some(n),
        ..LaunchConfig::variant(Variant::Steps)
    };
    Ok(match args.variant {
        VariantArg::Plain => LaunchConfig::variant(Variant::Plain),
        VariantArg::Tiled => LaunchConfig::variant(Variant::Tiled),
        VariantArg::Vector => LaunchConfig::variant(Variant::Vector),
        VariantArg::Steps => steps(args.steps),
        VariantArg::Auto => {
            let candidates = [
                LaunchConfig::variant(Variant::Plain),
                LaunchConfig::variant(Variant::Tiled),
                LaunchConfig::variant(Variant::Vector),
                steps(4),
                steps(8),
            ];
            let omega = DeviceGrid::from_host(device, &p.omega)?;
            let cell = DeviceGrid::from_host(device, &p.cell)?;
            let psi = DeviceGrid::from_host(device, &p.psi0)?;
            let mut out = DeviceGrid::new(device, p.shape)?;
            let tuned = Tuner::in_memory().tune_among(device, Jacobi::spec(), p.shape, &candidates, |plan| {
                Jacobi::launch_plan(plan, &mut out, &psi, &omega, &cell, &p.k)
            })?;
            for t in &tuned.trials {
                match (t.median_ns, &t.error) {
                    (Some(ns), _) => println!("  tuning {}: {:.2} us/iter", describe(&t.config), ns as f64 * 1e-3),
                    (None, e) => println!("  tuning {}: {}", describe(&t.config), e.as_deref().unwrap_or("failed")),
                }
            }
            println!("variant: {} (the fastest per iteration here)", describe(&tuned.config));
            tuned.config
        }
    })
}

/// `plain`, `steps 8`, ...
fn describe(config: &LaunchConfig) -> String {
    match config.variant {
        Variant::Steps => format!("steps {}", config.iterations()),
        v => v.name().to_string(),
    }
}

/// Jacobi iterations until the change is below the tolerance, on one device or split over
/// several: the same calls either way. `config` may do several iterations per launch (the
/// steps variant); the iterations a block leaves over run one per launch. Returns ψ.
fn solve<D: Target>(target: &D, config: &LaunchConfig, args: &Args, p: &Problem) -> Result<HostGrid<f32>> {
    let plan = Jacobi::plan(target, config, p.shape)?;
    let per_launch = config.iterations().max(1);
    let single = Jacobi::plan(target, &LaunchConfig::variant(Variant::Plain), p.shape)?;
    // Four rows per work-item: the work-group's fold of the maximum is paid once per four
    // points (H100, 8192²: 502 us with one point per work-item, against 394 unchecked).
    let check_config = LaunchConfig {
        points: Some(4),
        ..LaunchConfig::variant(Variant::Plain)
    };
    let check_plan = JacobiChecked::plan(target, &check_config, p.shape)?;
    let omega = target.upload(&p.omega)?;
    let cell = target.upload(&p.cell)?;
    let mut psi = PingPong::from_host(target, &p.psi0)?;
    let mut change = Reduction::<Max<f32>>::new();

    let mut events = Vec::with_capacity(args.check_every);
    let mut kernel_ns = 0u64;
    let mut iterations = 0;
    let mut last_change = f32::INFINITY;
    // Contraction per iteration, from two successive checks: estimates the distance to the
    // solution. Only from changes well above f32 rounding of ψ, which blurs the ratio.
    let mut rho = None;
    let rounding = 16.0 * f32::EPSILON * max_of(&p.psi0).max(1.0);
    let start = Instant::now();
    while iterations < args.max_iter {
        let block = args.check_every.min(args.max_iter - iterations);
        // The block's last iteration is the checked one: it also reduces its largest change.
        let unchecked = block - 1;
        for launch in 0..unchecked / per_launch + unchecked % per_launch {
            let plan = if launch < unchecked / per_launch {
                &plan
            } else {
                &single
            };
            let (next, current) = psi.split();
            events.push(Jacobi::launch_plan(plan, next, current, &omega, &cell, &p.k)?);
            psi.swap();
        }
        let (next, current) = psi.split();
        events.push(JacobiChecked::launch_plan(
            &check_plan,
            (next, &mut change),
            current,
            &omega,
            &cell,
            &p.k,
        )?);
        psi.swap();
        iterations += block;
        kernel_ns += total_ns(&mut events)?;
        let previous = last_change;
        last_change = change.value()?;
        if last_change > rounding && previous.is_finite() && last_change < previous {
            rho = Some(f64::from(last_change / previous).powf(1.0 / block as f64));
        }
        if !last_change.is_finite() {
            bail!("diverged after {iterations} iterations");
        }
        if last_change <= args.tol {
            break;
        }
    }
    let wall = start.elapsed();
    let converged = last_change <= args.tol;
    let psi_host = psi.current().to_host()?;

    println!(
        "{} after {iterations} iterations: max |psi_new - psi| = {last_change:.3e} (tol {:e}), max |lap psi - omega| = {:.3e}",
        if converged { "converged" } else { "NOT converged" },
        args.tol,
        last_change * p.residual_scale
    );
    if let Some(rho) = rho {
        // Jacobi's error shrinks like its corrections: |ψ - ψ*| ≲ |ψ_new - ψ| · ρ / (1 - ρ).
        println!(
            "contraction per iteration {rho:.6}; estimated max |psi - psi_converged| ~ {:.1e}",
            f64::from(last_change) * rho / (1.0 - rho)
        );
    }
    let n = iterations.max(1) as f64;
    println!(
        "time: {:.3} s wall ({:.1} us/iter incl. checks), jacobi kernels {:.3} s ({:.1} us/iter from profiling events)",
        wall.as_secs_f64(),
        wall.as_secs_f64() * 1e6 / n,
        kernel_ns as f64 * 1e-9,
        kernel_ns as f64 * 1e-3 / n
    );

    Ok(psi_host)
}

/// A colour map of ψ, 20 black isolines (the streamlines of seed 002's Fig. 1), the body grey.
fn plot(path: &Path, psi: &HostGrid<f32>, p: &Problem) -> Result<()> {
    // Drawn into a temporary file renamed over `path` once complete: a previous picture
    // survives any failure, and no partial picture is left.
    let mut drawn = None;
    clforge::runtime::files::replace_file_at(path, |tmp| {
        drawn = Some(plot_at(tmp, psi, p).map_err(std::io::Error::other)?);
        Ok(())
    })
    .with_context(|| format!("writing {}", path.display()))?;
    drawn.ok_or_else(|| anyhow::anyhow!("{} was not drawn", path.display()))
}

fn plot_at(path: &Path, psi: &HostGrid<f32>, p: &Problem) -> Result<()> {
    use plotters::prelude::*;

    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let [nx, ny, _] = p.shape.dims();
    let scale = (1024 / nx).clamp(1, 8);
    let (w, h) = ((nx * scale) as u32, (ny * scale) as u32);
    let root = BitMapBackend::new(path, (w, h)).into_drawing_area();
    let values: Vec<f64> = psi.data().iter().map(|&v| f64::from(v)).collect();
    let (lo, hi) = values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &v| (l.min(v), h.max(v)));
    let span = (hi - lo).max(f64::MIN_POSITIVE);

    // Colour map; image row 0 is the top of the channel.
    for py in 0..h {
        let y = ny - 1 - py as usize / scale;
        for px in 0..w {
            let x = px as usize / scale;
            let i = p.shape.index([x, y, 0]);
            let color = if p.cell.data()[i] == SOLID
                && (p.body[0]..p.body[1]).contains(&x)
                && (p.body[2]..p.body[3]).contains(&y)
            {
                RGBColor(150, 150, 150)
            } else {
                let c: RGBColor = ViridisRGB::get_color(((values[i] - lo) / span) as f32);
                // Lighten so that the black isolines stand out.
                RGBColor(lighten(c.0), lighten(c.1), lighten(c.2))
            };
            root.draw_pixel((px as i32, py as i32), &color)?;
        }
    }

    // Isolines midway between 20 equal steps of ψ (so none runs along the body, ψ = 0.5).
    let thresholds: Vec<f64> = (0..20).map(|k| lo + span * (k as f64 + 0.5) / 20.0).collect();
    let lines = contour::ContourBuilder::new(nx, ny, true).lines(&values, &thresholds)?;
    // The contour crate closes every isoline along the frame of the grid (value i sits at
    // i + 0.5, the frame at 0 and nx); drop those frame segments.
    let on_frame = |a: &contour::Pt, b: &contour::Pt| {
        let at = |v: f64, e: f64| (v - e).abs() < 1e-9;
        (at(a.x, 0.0) && at(b.x, 0.0))
            || (at(a.x, nx as f64) && at(b.x, nx as f64))
            || (at(a.y, 0.0) && at(b.y, 0.0))
            || (at(a.y, ny as f64) && at(b.y, ny as f64))
    };
    let to_px = |q: &contour::Pt| {
        (
            (q.x * scale as f64).round() as i32,
            ((ny as f64 - q.y) * scale as f64).round() as i32,
        )
    };
    let style = ShapeStyle::from(&BLACK).stroke_width(2);
    for line in &lines {
        for ring in line.geometry() {
            let mut run: Vec<(i32, i32)> = Vec::new();
            for seg in ring.0.windows(2) {
                if on_frame(&seg[0], &seg[1]) {
                    if run.len() > 1 {
                        root.draw(&PathElement::new(std::mem::take(&mut run), style))?;
                    }
                    run.clear();
                    continue;
                }
                if run.is_empty() {
                    run.push(to_px(&seg[0]));
                }
                run.push(to_px(&seg[1]));
            }
            if run.len() > 1 {
                root.draw(&PathElement::new(run, style))?;
            }
        }
    }
    root.present()?;
    Ok(())
}

fn lighten(c: u8) -> u8 {
    (f32::from(c) * 0.6 + 255.0 * 0.4) as u8
}
