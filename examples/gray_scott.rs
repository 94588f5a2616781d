//! Gray-Scott reaction-diffusion (Pearson, "Complex patterns in a simple system", Science 1993):
//! two fields `u`, `v` on a periodic square,
//!
//! ```text
//! u' = Du Δu - u v² + F (1 - u)
//! v' = Dv Δv + u v² - (F + k) v
//! ```
//!
//! stepped by explicit Euler with the 5-point Laplacian on a unit grid (`Du = 0.16`,
//! `Dv = 0.08`, `Δt = 1`: the dimensionless form of Pearson's runs). Both fields are one
//! stencil with two outputs (a system of fields): each step is one kernel that reads every
//! neighbour once and writes both fields. The initial state is Pearson's: `u = 1`, `v = 0`, and
//! a square in the middle perturbed to `u = 1/2`, `v = 1/4`, ±1 % noise everywhere; the seeding
//! square's position comes from the stencil's point (`at: Point`), not from a host-made field.
//! Every `--report-every` steps a fused reduction (`Sum<f64>` of `v`, in the same launch as the
//! step) prints the total of `v`.
//!
//! ```text
//! cargo run --release --example gray_scott                     # 256², F = 0.0367, k = 0.0649: mitosis
//! cargo run --release --example gray_scott -- --feed 0.026 --kill 0.051 --steps 20000  # stripes
//! cargo run --release --example gray_scott -- --devices 2      # split over 2 devices, same picture
//! ```
//!
//! The first steps are checked against the Rust function on the host (bit for bit); the
//! picture of `v` goes to `out/gray_scott.png`.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Parser;
use clforge::prelude::*;
use clforge::runtime::{Reduction, Sum};

/// The model's constants.
#[derive(clforge::Params, Clone, Copy, Debug)]
struct Gs {
    du: f32,
    dv: f32,
    feed: f32,
    kill: f32,
    dt: f32,
}

/// One explicit Euler step of both fields.
#[clforge::stencil(boundary = periodic)]
fn gray_scott(u: &Grid<f32>, v: &Grid<f32>, k: &Gs) -> (f32, f32) {
    let uc = u.at(0, 0);
    let vc = v.at(0, 0);
    let lap_u = u.at(1, 0) + u.at(-1, 0) + u.at(0, 1) + u.at(0, -1) - 4.0 * uc;
    let lap_v = v.at(1, 0) + v.at(-1, 0) + v.at(0, 1) + v.at(0, -1) - 4.0 * vc;
    let uvv = uc * vc * vc;
    (
        uc + k.dt * (k.du * lap_u - uvv + k.feed * (1.0 - uc)),
        vc + k.dt * (k.dv * lap_v + uvv - (k.feed + k.kill) * vc),
    )
}

/// The same step, also summing `v` over the grid in the same launch (the report).
#[clforge::stencil(boundary = periodic)]
fn gray_scott_mass(u: &Grid<f32>, v: &Grid<f32>, k: &Gs) -> (f32, f32, Sum<f64>) {
    let uc = u.at(0, 0);
    let vc = v.at(0, 0);
    let lap_u = u.at(1, 0) + u.at(-1, 0) + u.at(0, 1) + u.at(0, -1) - 4.0 * uc;
    let lap_v = v.at(1, 0) + v.at(-1, 0) + v.at(0, 1) + v.at(0, -1) - 4.0 * vc;
    let uvv = uc * vc * vc;
    let vn = vc + k.dt * (k.dv * lap_v + uvv - (k.feed + k.kill) * vc);
    (
        uc + k.dt * (k.du * lap_u - uvv + k.feed * (1.0 - uc)),
        vn,
        Sum(vn as f64),
    )
}

/// Pearson's initial state: a square of side `n/10` in the middle perturbed, by position.
#[clforge::stencil(boundary = periodic)]
fn seed(noise: &Grid<f32>, at: Point) -> (f32, f32) {
    let half = at.nx / 20;
    let inside = (at.x - at.nx / 2).abs() <= half && (at.y - at.ny / 2).abs() <= half;
    if inside {
        (
            0.5 * (1.0 + 0.01 * noise.at(0, 0)),
            0.25 * (1.0 + 0.01 * noise.at(0, 0)),
        )
    } else {
        (1.0 + 0.01 * noise.at(0, 0), 0.0)
    }
}

/// Gray-Scott patterns on the default OpenCL device (CLFORGE_DEVICE picks another).
#[derive(Parser, Debug)]
#[command(version)]
struct Args {
    /// Grid points per side (periodic square).
    #[arg(long, default_value_t = 256)]
    n: usize,
    /// Steps of Δt = 1.
    #[arg(long, default_value_t = 10_000)]
    steps: usize,
    /// Feed rate F.
    #[arg(long, default_value_t = 0.0367)]
    feed: f32,
    /// Kill rate k.
    #[arg(long, default_value_t = 0.0649)]
    kill: f32,
    /// Steps between reports of the total of v.
    #[arg(long, default_value_t = 2000)]
    report_every: usize,
    /// Where to write the picture of v.
    #[arg(long, default_value = "out/gray_scott.png")]
    out: PathBuf,
    /// Split the square along y over this many devices (the default device repeated); the
    /// same bits as one device.
    #[arg(long, default_value_t = 1)]
    devices: usize,
}

fn main() -> Result<()> {
    let args = Args::parse();
    if args.n < 16 || args.report_every == 0 {
        bail!("--n must be at least 16 and --report-every at least 1");
    }
    let k = Gs {
        du: 0.16,
        dv: 0.08,
        feed: args.feed,
        kill: args.kill,
        dt: 1.0,
    };
    let device = Device::default().context("no OpenCL device (set CLFORGE_DEVICE to choose one)")?;
    println!("device: {}", device.info().name);
    let shape = Shape::d2(args.n, args.n);
    // ±1 noise from a fixed linear congruential sequence (reproducible runs).
    let mut state = 12345u32;
    let noise = HostGrid::from_fn(shape, |_| {
        state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        (state >> 8) as f32 / (1u32 << 24) as f32 * 2.0 - 1.0
    })?;
    let (mut u0, mut v0) = (HostGrid::new(shape)?, HostGrid::new(shape)?);
    Seed::apply_host((&mut u0, &mut v0), &noise)?;
    let d_noise = DeviceGrid::from_host(&device, &noise)?;
    let mut u = PingPong::from_host(&device, &u0)?;
    let mut v = PingPong::from_host(&device, &v0)?;
    {
        let ((u_init, _), (v_init, _)) = (u.split(), v.split());
        Seed::launch(&LaunchConfig::default(), (u_init, v_init), &d_noise)?;
    }
    u.swap();
    v.swap();
    self_check(&device, &k, &u0, &v0, &u, &v)?;

    let config = fastest(&device, &k, &u0, &v0)?;
    let v_host = if args.devices > 1 {
        let devices = Devices::new(vec![device.clone(); args.devices])?.periodic(true);
        println!("split along y over {} devices", args.devices);
        run(&devices, &config, &args, &k, &u0, &v0)?
    } else {
        run(&device, &config, &args, &k, &u0, &v0)?
    };
    plot(&args.out, &v_host)?;
    println!("wrote {}", args.out.display());
    Ok(())
}

/// The run on one device or split over several (the same calls, the same bits): the step's
/// plan, the reporting step with its fused `Sum<f64>` every `--report-every` steps. Returns `v`.
fn run<D: Target>(
    target: &D,
    config: &LaunchConfig,
    args: &Args,
    k: &Gs,
    u0: &HostGrid<f32>,
    v0: &HostGrid<f32>,
) -> Result<HostGrid<f32>> {
    let shape = u0.shape();
    let plan = GrayScott::plan(target, config, shape)?;
    // The reduction's launch: rows per work-item amortise the work-group's fold.
    let report_config = LaunchConfig {
        points: Some(4),
        ..LaunchConfig::variant(Variant::Plain)
    };
    let report = GrayScottMass::plan(target, &report_config, shape)?;
    let (mut u, mut v) = (PingPong::from_host(target, u0)?, PingPong::from_host(target, v0)?);
    let mut mass = Reduction::new();
    let start = Instant::now();
    for step in 1..=args.steps {
        let ((un, uc), (vn, vc)) = (u.split(), v.split());
        if step % args.report_every == 0 || step == args.steps {
            GrayScottMass::launch_plan(&report, (un, vn, &mut mass), uc, vc, k)?;
            let total = mass.value()?;
            if !total.is_finite() {
                bail!("diverged at step {step}");
            }
            println!("step {step:6}: sum of v = {total:.4}");
        } else {
            GrayScott::enqueue_plan(&plan, (un, vn), uc, vc, k)?;
        }
        u.swap();
        v.swap();
    }
    let v_host = v.current().to_host()?;
    let wall = start.elapsed().as_secs_f64();
    println!(
        "{} steps of {shape} in {wall:.2} s ({:.1} us/step, both fields)",
        args.steps,
        wall * 1e6 / args.steps as f64
    );
    Ok(v_host)
}

/// The fastest variant of the step on this device, timed by the tuner (one device time per
/// candidate, median of several launches): plain with 1, 2 or 4 rows per work-item, vector,
/// tiled.
fn fastest(device: &Device, k: &Gs, u0: &HostGrid<f32>, v0: &HostGrid<f32>) -> Result<LaunchConfig> {
    let rows = |n| LaunchConfig {
        points: Some(n),
        ..LaunchConfig::variant(Variant::Plain)
    };
    let candidates = [
        LaunchConfig::variant(Variant::Plain),
        rows(2),
        rows(4),
        LaunchConfig::variant(Variant::Vector),
        LaunchConfig::variant(Variant::Tiled),
    ];
    let (u, v) = (DeviceGrid::from_host(device, u0)?, DeviceGrid::from_host(device, v0)?);
    let (mut un, mut vn) = (
        DeviceGrid::new(device, u0.shape())?,
        DeviceGrid::new(device, u0.shape())?,
    );
    let tuned = clforge::runtime::stencil::tune::Tuner::in_memory().tune_among(
        device,
        GrayScott::spec(),
        u0.shape(),
        &candidates,
        |plan| GrayScott::launch_plan(plan, (&mut un, &mut vn), &u, &v, k),
    )?;
    for t in &tuned.trials {
        if let Some(ns) = t.median_ns {
            println!(
                "  tuning {:?} ({:?} rows): {:.1} us/step",
                t.config.variant,
                t.config.points.unwrap_or(1),
                ns as f64 * 1e-3
            );
        }
    }
    println!("variant: {:?} (the fastest here)", tuned.config.variant);
    Ok(tuned.config)
}

/// The seeded state and 20 steps (with the reduction on the last) against the Rust functions.
fn self_check(
    device: &Device,
    k: &Gs,
    u0: &HostGrid<f32>,
    v0: &HostGrid<f32>,
    u: &PingPong<f32>,
    v: &PingPong<f32>,
) -> Result<()> {
    if u.current().to_host()?.data() != u0.data() || v.current().to_host()?.data() != v0.data() {
        bail!("the seeding kernel disagrees with the host");
    }
    let shape = u0.shape();
    let (mut du, mut dv) = (PingPong::from_host(device, u0)?, PingPong::from_host(device, v0)?);
    let (mut hu, mut hv) = (u0.clone(), v0.clone());
    let mut mass = Reduction::new();
    let mut host_mass = Sum(0.0);
    for step in 0..20 {
        let ((un, uc), (vn, vc)) = (du.split(), dv.split());
        let (mut nu, mut nv) = (HostGrid::new(shape)?, HostGrid::new(shape)?);
        if step == 19 {
            GrayScottMass::launch(&LaunchConfig::variant(Variant::Vector), (un, vn, &mut mass), uc, vc, k)?;
            GrayScottMass::apply_host((&mut nu, &mut nv, &mut host_mass), &hu, &hv, k)?;
        } else {
            GrayScott::launch(&LaunchConfig::variant(Variant::Vector), (un, vn), uc, vc, k)?;
            GrayScott::apply_host((&mut nu, &mut nv), &hu, &hv, k)?;
        }
        du.swap();
        dv.swap();
        (hu, hv) = (nu, nv);
    }
    let same = du.current().to_host()?.data() == hu.data() && dv.current().to_host()?.data() == hv.data();
    let (dm, hm) = (mass.value()?, host_mass.0);
    println!(
        "self-check: 20 steps {} the host; sum of v {dm:.9} (host {hm:.9})",
        if same { "bit-identical to" } else { "DIFFER from" }
    );
    if !same || (dm - hm).abs() > 1e-9 * hm.abs().max(1.0) {
        bail!("the device disagrees with the host reference");
    }
    Ok(())
}

/// `v` on a Viridis colour map.
fn plot(path: &Path, v: &HostGrid<f32>) -> Result<()> {
    // Drawn into a temporary file renamed over `path` once complete: a previous picture
    // survives any failure, and no partial picture is left.
    let mut drawn = None;
    clforge::runtime::files::replace_file_at(path, |tmp| {
        drawn = Some(plot_at(tmp, v).map_err(std::io::Error::other)?);
        Ok(())
    })
    .with_context(|| format!("writing {}", path.display()))?;
    drawn.ok_or_else(|| anyhow::anyhow!("{} was not drawn", path.display()))
}

fn plot_at(path: &Path, v: &HostGrid<f32>) -> Result<()> {
    use plotters::prelude::*;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let [nx, ny, _] = v.shape().dims();
    let scale = (768 / nx).clamp(1, 4);
    let root = BitMapBackend::new(path, ((nx * scale) as u32, (ny * scale) as u32)).into_drawing_area();
    let hi = v.data().iter().fold(f32::MIN_POSITIVE, |m, &x| m.max(x));
    for py in 0..ny * scale {
        for px in 0..nx * scale {
            let x = v.data()[px / scale + nx * (ny - 1 - py / scale)];
            let c: RGBColor = ViridisRGB::get_color((x / hi).clamp(0.0, 1.0));
            root.draw_pixel((px as i32, py as i32), &c)?;
        }
    }
    root.present()?;
    Ok(())
}
