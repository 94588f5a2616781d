//! Transient heat on a Gmsh mesh, the physics written as forms.
//!
//! ```text
//! cargo run --release --example heat_forms -- --steps 200 --out out/heat_forms.png
//! ```
//!
//! - **Physics.** `ρc u̇ = ∇·(k ∇u)` on the plate of `examples/meshes/plate.msh` (linear
//!   triangles), the left edge held at 1, the right edge at 0, the top and bottom insulated,
//!   from `u = 0`. Conduction `k ∇u·∇v` and capacity `ρc u v` are written as forms
//!   (`runtime::element::form`), assembled, and stepped by Crank–Nicolson, each step a
//!   conjugate-gradient solve on the device.
//! - **Check.** The steady state of this problem is `u = (x_right − x) / (x_right − x_left)`;
//!   the run reports how far the last step is from it, and the steady solve's distance (which
//!   linear triangles reproduce to the solver's tolerance).
//! - **Output.** `--out` (default `out/heat_forms.png`): the temperature at the last step.

use anyhow::{bail, Context, Result};
use clap::Parser;
use clforge::runtime::element::form::time::{assemble, steady, Fixed, ThetaMethod};
use clforge::runtime::element::form::{dot, Field, Position};
use clforge::runtime::element::io::{read_msh, CellKind};
use clforge::runtime::element::sparse::CgOptions;
use clforge::runtime::Device;
use std::path::PathBuf;

#[path = "support/picture.rs"]
mod picture;

/// Conductivity and heat capacity per volume.
#[derive(Clone, Copy, Debug)]
struct Conductor {
    k: f64,
    rho_c: f64,
}

/// Linear triangle for conduction.
#[clforge::element(dim = 2, nodes = 3, operator = diffusion, cell = simplex, quadrature = 2)]
mod tri3 {
    use super::Conductor;

    pub const NODES: [[f64; 2]; 3] = [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]];

    pub fn shape(r: f64, s: f64) -> [f64; 3] {
        [1.0 - r - s, r, s]
    }

    pub fn material(m: &Conductor) -> [[f64; 2]; 2] {
        [[m.k, 0.0], [0.0, m.k]]
    }

    pub fn density(m: &Conductor) -> f64 {
        m.rho_c
    }
}

#[derive(Parser)]
#[command(about = "Transient heat on a Gmsh mesh, conduction and capacity written as forms")]
struct Args {
    /// The mesh: linear triangles with boundary groups `left` and `right`.
    #[arg(long, default_value = "examples/meshes/plate.msh")]
    mesh: PathBuf,
    /// Crank–Nicolson steps.
    #[arg(long, default_value_t = 200)]
    steps: usize,
    /// The time step as a fraction of the diffusion time `ρc L² / k` of the plate's length.
    #[arg(long, default_value_t = 1e-3)]
    dt: f64,
    /// The picture of the last step.
    #[arg(long, default_value = "out/heat_forms.png")]
    out: PathBuf,
}

fn main() -> Result<()> {
    let args = Args::parse();
    if !(args.dt > 0.0 && args.dt.is_finite()) || args.steps == 0 {
        bail!("--dt must be positive and --steps at least 1");
    }
    let dev = Device::default()?;
    let msh = read_msh(&args.mesh)?;
    let plate = msh.to_mesh(CellKind::Tri3)?;
    let coords: Vec<f64> = plate.mesh.coords.iter().flat_map(|p| [p[0], p[1]]).collect();
    let cells = &plate.mesh.connectivity;
    let side = |name: &str| -> Result<Vec<u32>> {
        let nodes = msh
            .boundary_nodes(name)
            .with_context(|| format!("{}", args.mesh.display()))?;
        Ok(plate.map_nodes(&nodes))
    };
    let (left, right) = (side("left")?, side("right")?);
    let xs: Vec<f64> = plate.mesh.coords.iter().map(|p| p[0]).collect();
    let (x0, x1) = (
        xs.iter().copied().fold(f64::MAX, f64::min),
        xs.iter().copied().fold(f64::MIN, f64::max),
    );
    let m = Conductor { k: 45.0, rho_c: 3.6e6 };

    let (_, k) = assemble::<Tri3, _>(&coords, cells, &[m], |u: &Field, v: &Field, _: &Position, m| {
        m.k * dot(u.grad(), v.grad())
    })?;
    let (_, mass) = assemble::<Tri3, _>(&coords, cells, &[m], |u: &Field, v: &Field, _: &Position, m| {
        m.rho_c * u.value() * v.value()
    })?;
    let fixed = Fixed {
        values: left.iter().map(|_| 1.0).chain(right.iter().map(|_| 0.0)).collect(),
        dofs: left.iter().chain(&right).copied().collect(),
    };
    let opts = CgOptions {
        tol: 1e-10,
        max_iter: 10_000,
    };
    let dt = args.dt * m.rho_c * (x1 - x0).powi(2) / m.k;
    let scheme = ThetaMethod::new(&dev, &mass, &k, 0.5, dt, &fixed, opts)?;
    let mut u = vec![0.0; xs.len()];
    let mut iterations = 0;
    for _ in 0..args.steps {
        iterations += scheme.step(&mut u, None)?.iterations;
    }
    let linear = |x: f64| (x1 - x) / (x1 - x0);
    let distance = |u: &[f64]| {
        xs.iter()
            .zip(u)
            .map(|(x, v)| (v - linear(*x)).abs())
            .fold(0.0, f64::max)
    };
    let steady_u = steady(&dev, &k, &vec![0.0; xs.len()], &fixed, &opts)?.x;
    println!(
        "{} nodes, {} triangles; {} Crank–Nicolson steps of {dt:.3e} s ({} CG iterations); \
         t = {:.3e} s: max |u − u_steady| = {:.3e}; the steady solve is {:.1e} from the linear profile",
        xs.len(),
        cells.len() / 3,
        args.steps,
        iterations,
        dt * args.steps as f64,
        distance(&u),
        distance(&steady_u)
    );
    picture::triangles(&args.out, &plate.mesh.coords, cells, &u, (0.0, 1.0))?;
    println!("wrote {}", args.out.display());
    Ok(())
}
