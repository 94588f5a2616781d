//! An elastic P wave in a steel plate meshed by Gmsh: the unstructured counterpart of
//! `elastic_wave`. The mesh is read from `examples/meshes/plate.msh` (2 m × 1 m, 5984 linear
//! triangles, physical groups `left`, `right`, `bottom`, `top`, `plate`; docs/MESH-FILES.md),
//! every triangle gets its own `K_e` (`Model::per_element`), and the explicit step runs on the
//! default OpenCL device (`CLFORGE_DEVICE` picks another) with `ForceSchedule::Unstructured`.
//!
//! ```text
//! # 5984 tri3, a few hundred steps: well under a second of stepping on 2 PoCL cores
//! cargo run --release --example elastic_wave_unstructured
//! # ParaView: open out/plate/plate.pvd, colour by velocity, play
//! cargo run --release --example elastic_wave_unstructured -- --vtk out/plate --vtk-every 5
//! cargo run --release --example elastic_wave_unstructured -- --f64
//! ```
//!
//! - **Element.** The plane-stress linear triangle declared below with `cell = simplex` on the
//!   unit triangle, nodes in Gmsh's order (so `MshMesh::to_mesh` needs no permutation).
//! - **Load.** One Hann-windowed sine cycle of `--freq` (default 10 kHz: a wavelength of
//!   ~18 elements), normal to the `left` edge, spread over it as the consistent load of its
//!   segments. The `top` and `bottom` edges are on rollers (`u_y = 0`) unless `--free-edges`:
//!   the pulse is then a plane wave in uniaxial strain, which travels at the plane-stress
//!   `c_p = sqrt(E / (ρ (1 − ν²)))`.
//! - **Front.** The pulse's position is the centroid of its kinetic energy,
//!   `Σ m v² x / Σ m v²`; since the velocity is `∝ f(t − x / c_p)` and `f²` is symmetric about
//!   the window's middle, it should be at `c_p (t − T/2)` once the whole cycle has left the
//!   edge. The default run stops when that is 1.3 m from the left edge, before the right edge
//!   reflects it. tests/element/wave_speed.rs checks the speed within 3 % on a longer strip.
//! - **Time step.** `--cfl` (default 0.9) of the largest step the runtime accepts, computed
//!   from every element's `K_e` and lumped masses (docs/STABILITY.md).
//! - **Output.** `--vtk <dir>`: `plate_NNNN.vtu` every `--vtk-every` steps (displacement and
//!   velocity per node, stress (σx, σy, τxy) per element) and `plate.pvd`, the time series
//!   ParaView opens.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Parser;
use clforge::prelude::*;
use clforge::runtime::element::io::{read_msh, CellKind, Field, VtkSeries};
use clforge::runtime::element::mesh::{Mesh, UnstructuredMesh};
use clforge::runtime::element::schedule::ForceSchedule;
use clforge::runtime::element::stepper::{stability_bound, Load, Model, Stepper, StepperConfig, TimeFunction};
use clforge::runtime::element::Real;

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

/// Linear (constant-strain) triangle in plane stress on the unit triangle.
#[element(dim = 2, nodes = 3, operator = plane_stress, cell = simplex, quadrature = 2)]
mod tri3 {
    use super::Plate;

    /// Gmsh's order: the corners counter-clockwise.
    pub const NODES: [[f64; 2]; 3] = [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]];

    pub fn shape(r: f64, s: f64) -> [f64; 3] {
        [1.0 - r - s, r, s]
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

/// A P-wave pulse in a Gmsh-meshed steel plate (tri3, one K_e per element) on the default
/// OpenCL device.
#[derive(Parser, Debug)]
#[command(version)]
struct Args {
    /// Gmsh MSH 4.1 mesh of tri3 with physical lines `left`, `top`, `bottom`.
    #[arg(long, default_value = "examples/meshes/plate.msh")]
    mesh: PathBuf,
    /// Time steps (default: until the pulse's centre is 1.3 m from the left edge).
    #[arg(long)]
    steps: Option<usize>,
    /// Excitation frequency in Hz (one cycle under a Hann window).
    #[arg(long, default_value_t = 10e3)]
    freq: f64,
    /// Time step as a fraction of the largest step the runtime accepts, in (0, 1].
    #[arg(long, default_value_t = 0.9)]
    cfl: f64,
    /// Leave the top and bottom edges free instead of on rollers.
    #[arg(long)]
    free_edges: bool,
    /// Write a VTK time series (`plate_NNNN.vtu`, `plate.pvd`) here.
    #[arg(long)]
    vtk: Option<PathBuf>,
    /// Steps between VTK files.
    #[arg(long, default_value_t = 10)]
    vtk_every: usize,
    /// Step in double precision (the same kernels built with `real` = `double`).
    #[arg(long)]
    f64: bool,
}

const STEEL: Plate = Plate {
    e: 210e9,
    nu: 0.3,
    rho: 7850.0,
    thickness: 0.01,
};

/// Peak stress of the load on the left edge, Pa.
const SIGMA: f64 = 1e6;

fn main() -> Result<()> {
    let args = Args::parse();
    if !(args.cfl > 0.0 && args.cfl <= 1.0) {
        bail!("--cfl {} must lie in (0, 1]", args.cfl);
    }
    if args.vtk.is_some() && args.vtk_every == 0 {
        bail!("--vtk-every must be at least 1");
    }
    let msh = read_msh(&args.mesh)?;
    let plate = msh.to_mesh(CellKind::Tri3)?;
    let coords = plate.mesh.coords.clone();
    let side = |name: &str| -> Result<Vec<usize>> {
        let nodes = msh
            .boundary_nodes(name)
            .with_context(|| format!("{}", args.mesh.display()))?;
        Ok(plate.map_nodes(&nodes).into_iter().map(|n| n as usize).collect())
    };
    let (mut left, top, bottom) = (side("left")?, side("top")?, side("bottom")?);
    let ne = plate.mesh.element_count();
    let nn = plate.mesh.node_count();
    let h_min = plate.mesh.min_spacing();
    let length =
        coords.iter().map(|p| p[0]).fold(f64::MIN, f64::max) - coords.iter().map(|p| p[0]).fold(f64::MAX, f64::min);

    let mut model = Model::per_element::<Tri3>(Mesh::Unstructured(plate.mesh.clone()), &vec![STEEL; ne])?;
    if !args.free_edges {
        for &n in top.iter().chain(&bottom) {
            model.fixed[2 * n + 1] = true;
        }
    }
    // The consistent load of the left edge's segments: each node takes half of each segment
    // it ends (the nodes are not evenly spaced).
    left.sort_by(|&a, &b| coords[a][1].total_cmp(&coords[b][1]));
    let mut weights = vec![0f64; left.len()];
    for (i, pair) in left.windows(2).enumerate() {
        let half = 0.5 * SIGMA * STEEL.thickness * (coords[pair[1]][1] - coords[pair[0]][1]);
        weights[i] += half;
        weights[i + 1] += half;
    }
    let pulse = TimeFunction::WindowedSine {
        frequency: args.freq,
        cycles: 1.0,
    };
    let load = Load {
        dofs: left.iter().map(|&n| 2 * n as u32).collect(),
        weights: weights.clone(),
        time: pulse,
    };

    let c_p = (STEEL.e / (STEEL.rho * (1.0 - STEEL.nu * STEEL.nu))).sqrt();
    let period = 1.0 / args.freq;
    let bound = stability_bound(&model, 0.0)?;
    let dt = args.cfl * bound.dt_max;
    let steps = args.steps.unwrap_or(((1.3 / c_p + 0.5 * period) / dt).ceil() as usize);
    let config = StepperConfig {
        schedule: ForceSchedule::Unstructured,
        dt,
        alpha: 0.0,
        c_max: c_p,
    };

    let device = Device::default().context("no OpenCL device (set CLFORGE_DEVICE to choose one)")?;
    let info = device.info();
    println!(
        "device: {} ({}, {:?}, {} compute units)",
        info.name, info.platform, info.kind, info.compute_units
    );
    println!(
        "mesh {}: {ne} tri3, {nn} nodes, {length:.2} m long, shortest edge {:.2} mm; one K_e per element; \
         top/bottom {}",
        args.mesh.display(),
        h_min * 1e3,
        if args.free_edges { "free" } else { "on rollers" }
    );
    println!(
        "steel E = {} GPa, ν = {}, ρ = {} kg/m³: plane-stress P wave c_p = {c_p:.0} m/s; pulse {:.1} kHz × 1 \
         cycle ({:.1} µs, wavelength {:.3} m) on the left edge ({} nodes)",
        STEEL.e * 1e-9,
        STEEL.nu,
        STEEL.rho,
        args.freq * 1e-3,
        period * 1e6,
        c_p * period,
        left.len()
    );
    let run = Run {
        args: &args,
        device: &device,
        model: &model,
        config: &config,
        load: &load,
        mesh: &plate.mesh,
        coords: &coords,
        steps,
        dt,
        c_p,
        period,
    };
    if args.f64 {
        run.go::<f64>()
    } else {
        run.go::<f32>()
    }
}

/// What a run steps, in either precision.
struct Run<'a> {
    args: &'a Args,
    device: &'a Device,
    model: &'a Model,
    config: &'a StepperConfig,
    load: &'a Load,
    mesh: &'a UnstructuredMesh,
    coords: &'a [[f64; 3]],
    steps: usize,
    dt: f64,
    c_p: f64,
    period: f64,
}

impl Run<'_> {
    /// Steps the model in precision `R`, writes the VTK series, reports the pulse's position.
    fn go<R: Real>(&self) -> Result<()> {
        let Run {
            args,
            device,
            model,
            config,
            load,
            mesh,
            coords,
            steps,
            dt,
            c_p,
            period,
        } = *self;
        let nn = mesh.node_count();
        let setup = Instant::now();
        let mut stepper = Stepper::<R>::with_precision(device, model, config)?;
        stepper.add_load(load)?;
        println!(
            "{}: stability bound Δt ≤ {:.4} µs (from every K_e and the lumped masses); Δt = {:.4} µs ({} of it); \
             {steps} steps = {:.1} µs; setup {:.2} s",
            R::NAME,
            stepper.stability_bound().dt_max * 1e6,
            dt * 1e6,
            args.cfl,
            steps as f64 * dt * 1e6,
            setup.elapsed().as_secs_f64()
        );

        let mut series = match &args.vtk {
            Some(dir) => Some(VtkSeries::new(dir, "plate")?),
            None => None,
        };
        let write = |series: &mut Option<VtkSeries>, stepper: &Stepper<R>| -> Result<()> {
            if let Some(series) = series {
                let (u, v, s) = (stepper.displacement()?, stepper.velocity()?, stepper.stress()?);
                series.write(
                    stepper.time(),
                    mesh,
                    CellKind::Tri3,
                    &[
                        Field::displacement(2, &u)?,
                        Field::velocity(2, &v)?,
                        Field::stress(2, &s)?,
                    ],
                )?;
            }
            Ok(())
        };
        let started = Instant::now();
        let mut done = 0;
        while done < steps {
            let n = if series.is_some() {
                (args.vtk_every - done % args.vtk_every).min(steps - done)
            } else {
                steps - done
            };
            stepper.step(n)?;
            done += n;
            if done % args.vtk_every == 0 || done == steps {
                write(&mut series, &stepper)?;
            }
        }
        let v = stepper.velocity()?;
        let wall = started.elapsed().as_secs_f64();
        if let Some(bad) = v.iter().position(|x| !x.widen().is_finite()) {
            bail!("velocity is not finite at DOF {bad} after {steps} steps: the run diverged");
        }

        // The pulse's centre: the centroid of the kinetic energy.
        let (mut energy, mut moment) = (0.0, 0.0);
        for n in 0..nn {
            let m = model.mass[2 * n];
            let e = m * (v[2 * n].widen().powi(2) + v[2 * n + 1].widen().powi(2));
            energy += e;
            moment += e * coords[n][0];
        }
        let t = stepper.time();
        let front = moment / energy.max(f64::MIN_POSITIVE);
        let expected = c_p * (t - 0.5 * period);
        println!(
            "{steps} steps, t = {:.1} µs, in {wall:.3} s wall ({:.0} steps/s{})",
            t * 1e6,
            steps as f64 / wall.max(1e-9),
            if series.is_some() { ", with VTK writing" } else { "" }
        );
        if t > period {
            println!(
                "pulse centre (kinetic-energy centroid) at x = {front:.4} m; c_p (t − T/2) = {expected:.4} m \
                 ({:+.2} %); measured speed {:.0} m/s vs c_p {c_p:.0} m/s",
                100.0 * (front / expected - 1.0),
                front / (t - 0.5 * period)
            );
        } else {
            println!(
                "pulse still being sent (t < T = {:.1} µs): no front position yet",
                period * 1e6
            );
        }
        if let Some(series) = &series {
            println!("VTK: {} files -> {}", series.steps().len(), series.pvd().display());
        }
        Ok(())
    }
}
