//! Seed 000 (Lithuanian thesis on 2-D elastic waves by FEM on GPUs), figure 13: an elastic wave
//! in a rectangular steel plate with a defect. Bilinear plane-stress quads on a structured grid,
//! lumped masses, explicit central-difference stepping (seed section 3.2, appendix 10.1) on the
//! default OpenCL device (`CLFORGE_DEVICE` picks another).
//!
//! ```text
//! # 256×128 elements, 600 steps: a few seconds on 2 PoCL cores
//! cargo run --release --example elastic_wave
//! # figure 13: 512K elements on 1 mm × 0.5 mm, 64×8-element defect: ~35 s on 2 PoCL cores
//! cargo run --release --example elastic_wave -- --nx 1024 --ny 512 --steps 900 --frames 300
//! ```
//!
//! - **Geometry.** Square elements of edge `h` = 1 mm / 1024 (figure 13: 512K elements on a
//!   1 mm × 0.5 mm plate, so `--nx 1024 --ny 512` is the seed's model; the default 256×128 is a
//!   0.25 mm × 0.125 mm cut of it with the same element size and defect). The defect is a
//!   `--defect-w` × `--defect-h` = 64 × 8-element block of dead (cracked) elements in the middle
//!   of the plate (figure 13: 0.064 mm × 0.008 mm). Dead elements carry no force and no mass;
//!   nodes inside the defect that no live element touches are held fixed. All edges are free.
//! - **Material.** Steel, E = 210 GPa, ν = 0.3, ρ = 7850 kg/m³ (the seed names steel but gives
//!   no values); thickness 0.1 mm (the caption's "elemento aukštis – 0,1m", read as 0.1 mm; the
//!   thickness scales K and M alike, so it does not change the wave).
//! - **Excitation.** A Hann-windowed sine of `--freq` (default 150 MHz: a P wavelength of ~37
//!   elements) and `--cycles` periods, normal to the top edge: spread over the whole edge (the
//!   seed's `apply_external_forces`, `FORCE_TYPE_EDGE` branch; the default), which sends a plane
//!   wave at the defect, or with `--load point` at the edge's middle node (its other branch:
//!   `node_forces[g_size/2].y += force`).
//! - **Stability.** `Δx < c_min / (5 ω_exc)` (seed eq. 3.3.2) is checked for the pulse. The time
//!   step is checked by the runtime's `Stepper::new` against the explicit stability bound it
//!   computes from `K_e` and the lumped masses (`Δt ≤ 0.95 Δt_crit`,
//!   `Δt_crit = 4 / (α + sqrt(α² + 4 λ_max))`, docs/STABILITY.md), not from the seed's
//!   `Δx / (2 c_max)`; the run uses `--cfl` (default 0.9) of the largest accepted step and prints
//!   the bound, Δt and the Courant number `c Δt / Δx`. (Figure 13 used Δt = 0.001 ns, under 1 %
//!   of the bound.)
//! - **Schedules.** Cracked elements need the per-block crack masks of seed algorithm 4
//!   (`--schedule blocked-mat`, the default). The other schedules keep one `K_e` for all
//!   elements and cannot carry a defect: the example refuses them unless `--no-defect` is given,
//!   which runs the intact plate (useful to compare schedules and speeds).
//! - **Output.** Every `--frames` steps, `out/elastic_wave_NNNN.png` (NNNN: the step) shows the
//!   von Mises stress of each element, `sqrt(σx² - σx σy + σy² + 3 τxy²)`, on a Viridis colour
//!   map with a square-root scale saturating at the frame's 99.7th percentile (the source's near
//!   field would otherwise hide the waves); the defect is drawn grey with a white outline.
//!   Frames from an earlier run are removed first. Steps/s are measured on the wall clock,
//!   excluding the PNG writing (the `Stepper` does not expose its kernels' profiling events).
//! - **VTK.** `--vtk <dir>` also writes each frame as `<dir>/elastic_wave_NNNN.vtu` (NNNN: the
//!   frame's index; quad4 cells; displacement and velocity per node, stress (σx, σy, τxy) and von Mises per
//!   element, dead elements 0) and `<dir>/elastic_wave.pvd`, the time series ParaView opens
//!   (`element::io`, docs/MESH-FILES.md). Excluded from the steps/s like the PNGs.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::{Parser, ValueEnum};
use clforge::prelude::*;
use clforge::runtime::element::io::{CellKind, Field, VtkSeries};
use clforge::runtime::element::mesh::{ElementMap, Mesh, StructuredMesh, UnstructuredMesh};
use clforge::runtime::element::schedule::{Blocking, ForceSchedule};
use clforge::runtime::element::stepper::{
    check_resolution, stability_bound, wave_speed, Explicit, Load, Model, Stepper, StepperConfig, TimeFunction,
};
use clforge::runtime::element::Element;

/// An isotropic elastic plate in plane stress.
#[derive(Clone, Copy, Debug)]
pub struct Plate {
    /// Young's modulus, Pa.
    pub e: f64,
    /// Poisson's ratio.
    pub nu: f64,
    /// Density, kg/m³.
    pub rho: f64,
    /// Out-of-plane thickness, m.
    pub thickness: f64,
}

/// The seed's element (seed 000, section 3.1): the bilinear quadrilateral of plane-stress
/// elasticity, 4 nodes × 2 DOF (`K_e` 8×8, `G_e` 3×8), 2×2 Gauss points, lumped mass ¼ per node.
#[element(dim = 2, nodes = 4, dofs = 2, operator = plane_stress, quadrature = 2)]
mod quad4 {
    use super::Plate;

    /// Counter-clockwise from the lower left corner.
    pub const NODES: [[f64; 2]; 4] = [[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]];

    pub fn shape(r: f64, s: f64) -> [f64; 4] {
        [
            0.25 * (1.0 - r) * (1.0 - s),
            0.25 * (1.0 + r) * (1.0 - s),
            0.25 * (1.0 + r) * (1.0 + s),
            0.25 * (1.0 - r) * (1.0 + s),
        ]
    }

    /// Hooke's law in plane stress over (ε_xx, ε_yy, γ_xy).
    pub fn material(m: &Plate) -> [[f64; 3]; 3] {
        let c = m.e / (1.0 - m.nu * m.nu);
        [
            [c, c * m.nu, 0.0],
            [c * m.nu, c, 0.0],
            [0.0, 0.0, c * (1.0 - m.nu) / 2.0],
        ]
    }

    pub fn density(m: &Plate) -> f64 {
        m.rho
    }

    pub fn thickness(m: &Plate) -> f64 {
        m.thickness
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ScheduleArg {
    /// 4 colours, node indices loaded (seed algorithm 1).
    Coloured,
    /// 4 colours, node indices computed (seed algorithm 2).
    Computed,
    /// Coloured blocks with register shifting (seed algorithm 3).
    Blocked,
    /// As `blocked` with per-block material and crack masks (seed algorithm 4): carries the defect.
    BlockedMat,
    /// Node-centric gather fused with the node integration.
    Gather,
    /// Greedy colouring of the mesh written as an unstructured one.
    Unstructured,
}

impl ScheduleArg {
    fn schedule(self, blocking: Blocking) -> ForceSchedule {
        match self {
            ScheduleArg::Coloured => ForceSchedule::Coloured,
            ScheduleArg::Computed => ForceSchedule::Computed,
            ScheduleArg::Blocked => ForceSchedule::Blocked(blocking),
            ScheduleArg::BlockedMat => ForceSchedule::BlockedMaterial(blocking),
            ScheduleArg::Gather => ForceSchedule::Gather,
            ScheduleArg::Unstructured => ForceSchedule::Unstructured,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum LoadArg {
    /// A point force normal to the top edge at its middle.
    Point,
    /// The same total force spread over the whole top edge (a plane wave).
    Edge,
}

/// Elastic wave in a steel plate with a defect (seed 000, figure 13), explicit FEM on the
/// default OpenCL device.
#[derive(Parser, Debug)]
#[command(version)]
struct Args {
    /// Elements along x (figure 13: 1024).
    #[arg(long, default_value_t = 256)]
    nx: usize,
    /// Elements along y (figure 13: 512).
    #[arg(long, default_value_t = 128)]
    ny: usize,
    /// Time steps.
    #[arg(long, default_value_t = 600)]
    steps: usize,
    /// Steps between PNG frames (0: no frames).
    #[arg(long, default_value_t = 100)]
    frames: usize,
    /// How element forces are scattered; only `blocked-mat` carries the defect.
    #[arg(long, value_enum, default_value_t = ScheduleArg::BlockedMat)]
    schedule: ScheduleArg,
    /// Defect width in elements (figure 13: 64).
    #[arg(long, default_value_t = 64)]
    defect_w: usize,
    /// Defect height in elements (figure 13: 8).
    #[arg(long, default_value_t = 8)]
    defect_h: usize,
    /// Run the intact plate (lets every schedule run).
    #[arg(long)]
    no_defect: bool,
    /// Element edge in m (figure 13: 1 mm / 1024).
    #[arg(long, default_value_t = 1e-3 / 1024.0)]
    h: f64,
    /// Excitation frequency in Hz.
    #[arg(long, default_value_t = 150e6)]
    freq: f64,
    /// Periods of the sine under the Hann window.
    #[arg(long, default_value_t = 2.0)]
    cycles: f64,
    /// Load on the top edge: spread over it (a plane wave) or at its middle node.
    #[arg(long, value_enum, default_value_t = LoadArg::Edge)]
    load: LoadArg,
    /// Time step as a fraction of the largest step the runtime accepts (0.95 of the computed
    /// stability limit), in (0, 1].
    #[arg(long, default_value_t = 0.9)]
    cfl: f64,
    /// Mass-proportional damping α (C = α M), 1/s.
    #[arg(long, default_value_t = 0.0)]
    alpha: f64,
    /// Directory of the PNG frames.
    #[arg(long, default_value = "out")]
    out: PathBuf,
    /// Also write every frame as VTK (`.vtu` per frame, `elastic_wave.pvd` time series) here.
    #[arg(long)]
    vtk: Option<PathBuf>,
    /// Split the plate over this many devices (every GPU in turn, else the default device
    /// repeated): each steps its part with the node gather, ghosts exchanged every step.
    #[arg(long, default_value_t = 1)]
    devices: usize,
    /// Split the plate across the MPI ranks of this job, one device each (built with
    /// `--features mpi`, started with `mpirun -np N`); rank 0 writes the frames.
    #[cfg(feature = "mpi")]
    #[arg(long)]
    ranks: bool,
}

const STEEL: Plate = Plate {
    e: 210e9,
    nu: 0.3,
    rho: 7850.0,
    thickness: 1e-4,
};

/// Total peak force of the excitation, N (the response is linear: only the pictures' scale).
const FORCE: f64 = 1.0;

fn main() -> Result<()> {
    let args = Args::parse();
    let (nx, ny, h) = (args.nx, args.ny, args.h);
    if nx < 4 || ny < 4 {
        bail!("the plate needs at least 4×4 elements, got {nx}×{ny}");
    }
    let defect = if args.no_defect {
        None
    } else {
        let (w, d) = (args.defect_w, args.defect_h);
        if w == 0 || d == 0 || w + 2 > nx || d + 2 > ny {
            bail!("a {w}×{d}-element defect does not fit inside a {nx}×{ny} plate");
        }
        let (x0, y0) = ((nx - w) / 2, (ny - d) / 2);
        Some([x0, x0 + w, y0, y0 + d])
    };
    if defect.is_some() && args.schedule != ScheduleArg::BlockedMat {
        let name = args.schedule.to_possible_value().map(|v| v.get_name().to_owned());
        bail!(
            "schedule `{}` keeps one K_e for all elements and cannot carry the cracked elements of the \
             defect; use `--schedule blocked-mat` (seed algorithm 4, per-block crack masks; the default) or \
             add `--no-defect` to run the intact plate",
            name.unwrap_or_default()
        );
    }
    if args.vtk.is_some() && args.frames == 0 {
        bail!("--vtk writes the frame steps: give --frames a positive step count");
    }
    if args.frames > 0 && args.frames > args.steps {
        println!(
            "note: --frames {} > --steps {}: no frame will be written",
            args.frames, args.steps
        );
    }

    // Lumped masses of one h × h square (the element's local nodes ±1 scaled to [0, h]), for
    // the live elements' masses below.
    let coords = quad4::NODES.map(|p| p.map(|r| 0.5 * (r + 1.0) * h));
    let m_e = Quad4::mass_lumped(&coords, &STEEL)?;

    let spec = Quad4::spec();
    let sm = StructuredMesh::for_element(&spec, [nx, ny, 1], [h, h, 1.0])?;
    let mut elements = ElementMap::uniform(sm.element_count())?;
    if let Some([x0, x1, y0, y1]) = defect {
        elements.crack_box(&sm, [x0, y0, 0], [x1, y1, 1]);
    }
    let mesh = if args.schedule == ScheduleArg::Unstructured {
        Mesh::Unstructured(UnstructuredMesh::from_structured(&sm, spec.node_offsets)?)
    } else {
        Mesh::Structured(sm.clone())
    };
    // K_e, G_e and masses from the element type at the mesh's geometry.
    let mut model = Model::of::<Quad4>(mesh, &STEEL)?;
    // Lumped masses of the live elements only: the defect is a void. Nodes no live element
    // touches get no mass and are held fixed.
    let mut mass = vec![0f64; sm.node_count()];
    for e in (0..sm.element_count()).filter(|&e| !elements.dead[e]) {
        for (node, m) in sm.element_nodes(spec.node_offsets, e).into_iter().zip(&m_e) {
            mass[node] += m;
        }
    }
    for (n, &m) in mass.iter().enumerate() {
        for d in 0..2 {
            model.mass[2 * n + d] = m;
            model.fixed[2 * n + d] = m == 0.0;
        }
    }
    model.elements = elements;

    // Seed 000 eqs. 3.3.1-3.3.2.
    let c = wave_speed(STEEL.e, STEEL.rho);
    let c_p = (STEEL.e / (STEEL.rho * (1.0 - STEEL.nu * STEEL.nu))).sqrt();
    let omega = 2.0 * std::f64::consts::PI * args.freq;
    check_resolution(h, c, omega).context("the pulse is too short for the mesh: lower --freq")?;
    // The explicit stability bound from K_e and the lumped masses (with the defect's voids).
    let bound = stability_bound(&model, args.alpha)?;
    if !(args.cfl > 0.0 && args.cfl <= 1.0) {
        bail!(
            "--cfl {} must lie in (0, 1]: the time step is that fraction of the largest stable step",
            args.cfl
        );
    }
    let dt = args.cfl * bound.dt_max;
    let blocking = Blocking::default();
    let schedule = args.schedule.schedule(blocking);
    let config = StepperConfig {
        schedule,
        dt,
        alpha: args.alpha,
        c_max: c,
    };

    let device = Device::default().context("no OpenCL device (set CLFORGE_DEVICE to choose one)")?;
    let info = device.info();
    println!(
        "device: {} ({}, {:?}, {} compute units)",
        info.name, info.platform, info.kind, info.compute_units
    );
    println!(
        "plate {nx}×{ny} = {} elements, {} nodes, {:.3} mm × {:.3} mm, h = {:.4} µm; defect {}",
        sm.element_count(),
        sm.node_count(),
        nx as f64 * h * 1e3,
        ny as f64 * h * 1e3,
        h * 1e6,
        match defect {
            Some([x0, x1, y0, y1]) => format!("{}×{} elements at x {x0}..{x1}, y {y0}..{y1}", x1 - x0, y1 - y0),
            None => "none".into(),
        }
    );
    println!(
        "steel E = {} GPa, ν = {}, ρ = {} kg/m³: c = sqrt(E/ρ) = {c:.0} m/s (plane-stress P wave {c_p:.0} m/s)",
        STEEL.e * 1e-9,
        STEEL.nu,
        STEEL.rho
    );
    println!(
        "pulse: {:?} load, {:.0} MHz × {} cycles, Hann window ({:.2} ns); resolution Δx = {:.3} µm < c/(5ω) = {:.3} µm",
        args.load,
        args.freq * 1e-6,
        args.cycles,
        args.cycles / args.freq * 1e9,
        h * 1e6,
        c / (5.0 * omega) * 1e6
    );
    let time = TimeFunction::WindowedSine {
        frequency: args.freq,
        cycles: args.cycles,
    };
    let build = Instant::now();
    // Whether this process writes the frames (rank 0 of an MPI job, else the only one).
    #[allow(unused_mut)]
    let mut writer = true;
    #[allow(unused_mut)]
    let mut across_ranks: Option<Box<dyn Explicit<f32>>> = None;
    #[cfg(feature = "mpi")]
    if args.ranks {
        let r = clforge::runtime::Ranks::init(device.clone())?;
        writer = r.rank() == 0;
        println!("rank {} of {}: its part of the plate", r.rank(), r.size());
        across_ranks = Some(Box::new(clforge::runtime::RankStepper::with_precision(
            &r, &model, &config,
        )?));
    }
    let mut stepper: Box<dyn Explicit<f32>> = if let Some(s) = across_ranks {
        s
    } else if args.devices > 1 {
        let mut all: Vec<Device> = Device::list()?
            .iter()
            .filter(|i| matches!(i.kind, clforge::runtime::DeviceKind::Gpu) && i.platform == device.info().platform)
            .map(|i| Device::select(&i.index.to_string()))
            .collect::<clforge::runtime::Result<_>>()?;
        if all.is_empty() {
            all.push(device.clone());
        }
        let devices = Devices::new((0..args.devices).map(|i| all[i % all.len()].clone()).collect())?;
        println!(
            "split over {} devices (node gather per part, ghosts exchanged every step)",
            args.devices
        );
        Box::new(clforge::runtime::element::split::SplitStepper::with_precision(
            &devices, &model, &config,
        )?)
    } else {
        let mut stepper = Stepper::new(&device, &model, &config)?;
        // On a GPU the class-table gather's rows per work-item and work-groups are timed once
        // and the fastest kept (`Stepper::tune_gather`: the same results whatever it picks).
        if matches!(device.info().kind, clforge::runtime::DeviceKind::Gpu) && stepper.derived_mass() {
            if let Some(best) = stepper.tune_gather(5)?.first() {
                println!(
                    "gather tuned: {} node rows per work-item, work-groups {}x{} ({:.1} us per step)",
                    best.rows,
                    best.group[0],
                    best.group[1],
                    best.median_ns as f64 / 1e3
                );
            }
        }
        Box::new(stepper)
    };
    // The grid as cells for VTK: the structured numbering of nodes and elements, unchanged.
    let mut vtk = match args.vtk.as_ref().filter(|_| writer) {
        Some(dir) => Some((
            VtkSeries::new(dir, "elastic_wave")?,
            UnstructuredMesh::from_structured(&sm, spec.node_offsets)?,
        )),
        None => None,
    };
    let top: Vec<usize> = (0..=nx).map(|ix| sm.node_index([ix, ny, 0])).collect();
    let load = match args.load {
        LoadArg::Point => Load::point(top[nx / 2], 2, 1, -FORCE, time),
        LoadArg::Edge => Load::edge(&top, 2, 1, -FORCE, time),
    };
    stepper.add_load(&load)?;
    println!(
        "stability bound Δt ≤ 0.95·Δt_crit = {:.4} ns, Δt_crit = {:.4} ns from λ_max of K_e x = λ M_e x \
         (checked by the runtime; the wave-speed estimate Δx/(2c) = {:.4} ns is not a bound); Δt = {:.4} ns \
         ({} of the bound), Courant number c·Δt/Δx = {:.3} (P wave {:.3}); seed figure 13 used Δt = 0.001 ns",
        stepper.stability_bound().dt_max * 1e9,
        stepper.stability_bound().dt_critical * 1e9,
        h / (2.0 * c) * 1e9,
        dt * 1e9,
        args.cfl,
        c * dt / h,
        c_p * dt / h
    );
    println!(
        "schedule {} ({:?}), {} steps = {:.2} ns, frame every {} steps; setup {:.2} s",
        schedule.suffix(),
        schedule,
        args.steps,
        args.steps as f64 * dt * 1e9,
        args.frames,
        build.elapsed().as_secs_f64()
    );

    if args.frames > 0 && writer {
        remove_old_frames(&args.out)?;
    }
    let mut step_time = Duration::ZERO;
    let mut written = 0;
    let mut done = 0;
    while done < args.steps {
        let n = if args.frames > 0 {
            (args.frames - done % args.frames).min(args.steps - done)
        } else {
            args.steps - done
        };
        let t0 = Instant::now();
        stepper.step(n)?;
        done += n;
        let frame = args.frames > 0 && done.is_multiple_of(args.frames);
        if frame {
            let stress = stepper.stress()?;
            step_time += t0.elapsed();
            let vm = von_mises(&stress);
            if let Some(bad) = vm.iter().position(|v| !v.is_finite()) {
                bail!("stress is not finite at element {bad} after {done} steps: the run diverged");
            }
            let path = args.out.join(format!("elastic_wave_{done:04}.png"));
            // Every rank reads the state (a collective across ranks); the writer writes it.
            let uv = match args.vtk {
                Some(_) => Some((stepper.displacement()?, stepper.velocity()?)),
                None => None,
            };
            if !writer {
                continue;
            }
            let (max, scale) = plot(&path, &vm, nx, ny, defect)?;
            written += 1;
            if let (Some((series, cells)), Some((u, v))) = (vtk.as_mut(), uv) {
                series.write(
                    done as f64 * dt,
                    cells,
                    CellKind::Quad4,
                    &[
                        Field::displacement(2, &u)?,
                        Field::velocity(2, &v)?,
                        Field::stress(2, &stress)?,
                        Field::cell("von_mises", 1, &vm),
                    ],
                )?;
            }
            println!(
                "step {done:5}  t = {:7.3} ns  max σ_vM = {:.3e} Pa  colour scale {:.3e} Pa  -> {}",
                done as f64 * dt * 1e9,
                max,
                scale,
                path.display()
            );
        } else {
            stepper.displacement()?; // waits for the queued steps
            step_time += t0.elapsed();
        }
    }
    if let Some((series, _)) = &vtk {
        println!("VTK: {} steps -> {}", series.steps().len(), series.pvd().display());
    }
    let secs = step_time.as_secs_f64().max(1e-9);
    println!(
        "{} steps in {secs:.3} s wall ({:.1} steps/s, {:.2} ms/step, {:.1} M element-steps/s; includes the \
         stress kernel and read-back of {written} frames, excludes PNG writing)",
        args.steps,
        args.steps as f64 / secs,
        secs * 1e3 / args.steps.max(1) as f64,
        (sm.element_count() * args.steps) as f64 / secs * 1e-6
    );
    Ok(())
}

/// Von Mises stress of plane stress per element from `(σx, σy, τxy)` triples.
fn von_mises(stress: &[f32]) -> Vec<f32> {
    stress
        .chunks_exact(3)
        .map(|s| {
            let (x, y, t) = (f64::from(s[0]), f64::from(s[1]), f64::from(s[2]));
            (x * x - x * y + y * y + 3.0 * t * t).sqrt() as f32
        })
        .collect()
}

/// Removes `elastic_wave_<digits>.png` files of an earlier run from `dir` (and creates `dir`).
fn remove_old_frames(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let old = name
            .strip_prefix("elastic_wave_")
            .and_then(|r| r.strip_suffix(".png"))
            .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()));
        if old {
            std::fs::remove_file(&path).with_context(|| format!("removing {}", path.display()))?;
        }
    }
    Ok(())
}

/// Writes the von Mises stress as a colour map (y up), the defect grey with a white outline.
/// Returns the largest stress and the colour scale's top.
fn plot(path: &Path, vm: &[f32], nx: usize, ny: usize, defect: Option<[usize; 4]>) -> Result<(f32, f32)> {
    // Drawn into a temporary file renamed over `path` once complete: a previous picture
    // survives any failure, and no partial picture is left.
    let mut drawn = None;
    clforge::runtime::files::replace_file_at(path, |tmp| {
        drawn = Some(plot_at(tmp, vm, nx, ny, defect).map_err(std::io::Error::other)?);
        Ok(())
    })
    .with_context(|| format!("writing {}", path.display()))?;
    drawn.ok_or_else(|| anyhow::anyhow!("{} was not drawn", path.display()))
}

fn plot_at(path: &Path, vm: &[f32], nx: usize, ny: usize, defect: Option<[usize; 4]>) -> Result<(f32, f32)> {
    use plotters::backend::DrawingBackend;
    use plotters::prelude::*;

    let max = vm.iter().fold(0f32, |m, &v| m.max(v));
    let mut sorted = vm.to_vec();
    sorted.sort_by(f32::total_cmp);
    let scale = sorted[(sorted.len() - 1) * 997 / 1000]
        .max(max * 1e-3)
        .max(f32::MIN_POSITIVE);
    let inside =
        |x: usize, y: usize| defect.is_some_and(|[x0, x1, y0, y1]| (x0..x1).contains(&x) && (y0..y1).contains(&y));

    let s = (1024 / nx).clamp(1, 8);
    let (w, hgt) = (nx * s, ny * s);
    let mut rgb = vec![0u8; w * hgt * 3];
    for py in 0..hgt {
        let y = ny - 1 - py / s;
        for px in 0..w {
            let x = px / s;
            let c = if inside(x, y) {
                RGBColor(110, 110, 110)
            } else {
                let v = (vm[x + nx * y] / scale).clamp(0.0, 1.0).sqrt();
                ViridisRGB::get_color(v)
            };
            rgb[(py * w + px) * 3..][..3].copy_from_slice(&[c.0, c.1, c.2]);
        }
    }
    let mut backend = BitMapBackend::new(path, (w as u32, hgt as u32));
    backend
        .blit_bitmap((0, 0), (w as u32, hgt as u32), &rgb)
        .map_err(|e| anyhow::anyhow!("drawing {}: {e}", path.display()))?;
    if let Some([x0, x1, y0, y1]) = defect {
        let px = |x: usize| (x * s) as i32;
        let py = |y: usize| ((ny - y) * s) as i32;
        let style = ShapeStyle::from(&WHITE).stroke_width(1);
        backend
            .draw_rect((px(x0) - 1, py(y1) - 1), (px(x1), py(y0)), &style, false)
            .map_err(|e| anyhow::anyhow!("drawing {}: {e}", path.display()))?;
    }
    backend
        .present()
        .map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
    Ok((max, scale))
}
