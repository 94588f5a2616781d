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
use plotters::prelude::*;
use std::path::{Path, PathBuf};

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
    picture(&args.out, &plate.mesh.coords, cells, &u)?;
    println!("wrote {}", args.out.display());
    Ok(())
}

/// The temperature, triangle by triangle (barycentric interpolation), as a PNG written
/// atomically.
fn picture(path: &Path, coords: &[[f64; 3]], cells: &[u32], u: &[f64]) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let (lo, hi) = coords.iter().fold(([f64::MAX; 2], [f64::MIN; 2]), |(lo, hi), p| {
        ([lo[0].min(p[0]), lo[1].min(p[1])], [hi[0].max(p[0]), hi[1].max(p[1])])
    });
    let w = 800usize;
    let h = ((w as f64) * (hi[1] - lo[1]) / (hi[0] - lo[0])).ceil().max(1.0) as usize;
    let mut rgb = vec![40u8; w * h * 3];
    let to_px = |p: &[f64; 3]| {
        [
            (p[0] - lo[0]) / (hi[0] - lo[0]) * (w - 1) as f64,
            (hi[1] - p[1]) / (hi[1] - lo[1]) * (h - 1) as f64,
        ]
    };
    for t in cells.chunks(3) {
        let [a, b, c] = [0, 1, 2].map(|i| to_px(&coords[t[i] as usize]));
        let det = (b[0] - a[0]) * (c[1] - a[1]) - (c[0] - a[0]) * (b[1] - a[1]);
        if det.abs() < 1e-12 {
            continue;
        }
        let (x_lo, x_hi) = (
            a[0].min(b[0]).min(c[0]).floor() as usize,
            a[0].max(b[0]).max(c[0]).ceil() as usize,
        );
        let (y_lo, y_hi) = (
            a[1].min(b[1]).min(c[1]).floor() as usize,
            a[1].max(b[1]).max(c[1]).ceil() as usize,
        );
        for py in y_lo..=y_hi.min(h - 1) {
            for px in x_lo..=x_hi.min(w - 1) {
                let (x, y) = (px as f64, py as f64);
                let l1 = ((b[0] - x) * (c[1] - y) - (c[0] - x) * (b[1] - y)) / det;
                let l2 = ((c[0] - x) * (a[1] - y) - (a[0] - x) * (c[1] - y)) / det;
                let l3 = 1.0 - l1 - l2;
                if l1 < -1e-9 || l2 < -1e-9 || l3 < -1e-9 {
                    continue;
                }
                let v = (l1 * u[t[0] as usize] + l2 * u[t[1] as usize] + l3 * u[t[2] as usize]).clamp(0.0, 1.0);
                let colour = ViridisRGB::get_color(v);
                rgb[(py * w + px) * 3..][..3].copy_from_slice(&[colour.0, colour.1, colour.2]);
            }
        }
    }
    clforge::runtime::files::replace_file_at(path, |tmp| {
        let mut backend = BitMapBackend::new(tmp, (w as u32, h as u32));
        backend
            .blit_bitmap((0, 0), (w as u32, h as u32), &rgb)
            .map_err(|e| std::io::Error::other(format!("{e:?}")))?;
        backend.present().map_err(|e| std::io::Error::other(format!("{e:?}")))
    })
    .with_context(|| format!("writing {}", path.display()))
}
