//! Advection–diffusion with SUPG, a form no built-in operator expresses.
//!
//! ```text
//! cargo run --release --example supg_forms -- --eps 1e-3 --out out/supg.png
//! ```
//!
//! - **Physics.** `−εΔu + b·∇u = 0` on the plate of `examples/meshes/plate.msh` (2 m × 1 m,
//!   linear triangles), `b = (1, 0.2)`; `u = 1` on the left edge above `y = 0.3`, `u = 0` below
//!   it and on the bottom and right edges, the top edge free. The inflow's jump is
//!   carried along `b` as an internal layer, and the right edge makes a boundary layer of width
//!   `ε/|b|`, thinner than the elements. The
//!   form is Galerkin plus the streamline term of Brooks & Hughes (1982),
//!   `ε ∇u·∇v + (b·∇u) v + τ_e (b·∇u)(b·∇v)`, with `τ_e` of each element from its own size
//!   (a material per element): non-symmetric, assembled from the form and solved by GMRES on
//!   the device. The same run with `τ = 0` is plain Galerkin.
//! - **Check.** The exact solution lies in `[0, 1]` (maximum principle). The run prints how far
//!   each solution leaves it: Galerkin oscillates ahead of the layer, SUPG does not.
//! - **Output.** `--out` (default `out/supg.png`) the SUPG solution, and beside it
//!   `<stem>_galerkin.png`.

use anyhow::{bail, Result};
use clap::Parser;
use clforge::runtime::element::form::time::{assemble, steady, Fixed};
use clforge::runtime::element::form::{dot, Field, Position};
use clforge::runtime::element::io::{read_msh, CellKind};
use clforge::runtime::element::sparse::CgOptions;
use clforge::runtime::Device;
use std::path::PathBuf;

#[path = "support/picture.rs"]
mod picture;

/// One element's flow: diffusivity, velocity and SUPG parameter.
#[derive(Clone, Copy, Debug)]
struct Flow {
    eps: f64,
    b: [f64; 3],
    tau: f64,
}

/// Linear triangle (the transport forms are host-integrated, so any operator serves).
#[clforge::element(dim = 2, nodes = 3, operator = diffusion, cell = simplex, quadrature = 2)]
mod tri3 {
    pub const NODES: [[f64; 2]; 3] = [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]];

    pub fn shape(r: f64, s: f64) -> [f64; 3] {
        [1.0 - r - s, r, s]
    }

    pub fn material(m: &super::Flow) -> [[f64; 2]; 2] {
        [[m.eps, 0.0], [0.0, m.eps]]
    }

    pub fn density(_m: &super::Flow) -> f64 {
        1.0
    }
}

/// `ε ∇u·∇v + (b·∇u) v + τ (b·∇u)(b·∇v)`.
fn supg(u: &Field, v: &Field, _x: &Position, m: &Flow) -> f64 {
    m.eps * dot(u.grad(), v.grad()) + dot(m.b, u.grad()) * v.value() + m.tau * dot(m.b, u.grad()) * dot(m.b, v.grad())
}

#[derive(Parser)]
#[command(about = "Advection-diffusion with SUPG written as a form, GMRES on the device")]
struct Args {
    /// The mesh: linear triangles with boundary groups `left`, `bottom` and `right`.
    #[arg(long, default_value = "examples/meshes/plate.msh")]
    mesh: PathBuf,
    /// Diffusivity ε (m²/s); the velocity is (1, 0.2) m/s.
    #[arg(long, default_value_t = 1e-3)]
    eps: f64,
    /// The picture of the SUPG solution (Galerkin's beside it, `_galerkin`).
    #[arg(long, default_value = "out/supg.png")]
    out: PathBuf,
}

fn main() -> Result<()> {
    let args = Args::parse();
    if !(args.eps > 0.0 && args.eps.is_finite()) {
        bail!("--eps must be positive");
    }
    let dev = Device::default()?;
    let msh = read_msh(&args.mesh)?;
    let plate = msh.to_mesh(CellKind::Tri3)?;
    let coords: Vec<f64> = plate.mesh.coords.iter().flat_map(|p| [p[0], p[1]]).collect();
    let cells = &plate.mesh.connectivity;
    // The left edge 1 above y = 0.3 and 0 below; the bottom and right edges 0.
    let mut dofs: Vec<u32> = Vec::new();
    for side in ["left", "bottom", "right"] {
        for d in plate.map_nodes(&msh.boundary_nodes(side)?) {
            if !dofs.contains(&d) {
                dofs.push(d);
            }
        }
    }
    let fixed = Fixed {
        values: dofs
            .iter()
            .map(|&d| {
                let p = plate.mesh.coords[d as usize];
                if p[0] == 0.0 && p[1] > 0.3 {
                    1.0
                } else {
                    0.0
                }
            })
            .collect(),
        dofs,
    };
    let b = [1.0, 0.2, 0.0];
    let speed = dot(b, b).sqrt();
    // τ_e = h_e / (2|b|) (coth Pe − 1/Pe), Pe = |b| h_e / (2ε), h_e from the element's area.
    let flows = |stabilised: bool| -> Vec<Flow> {
        cells
            .chunks(3)
            .map(|t| {
                let p = |i: usize| plate.mesh.coords[t[i] as usize];
                let (a, bb, c) = (p(0), p(1), p(2));
                let area = 0.5 * ((bb[0] - a[0]) * (c[1] - a[1]) - (c[0] - a[0]) * (bb[1] - a[1])).abs();
                let h = (2.0 * area).sqrt();
                let pe = speed * h / (2.0 * args.eps);
                let tau = if stabilised {
                    h / (2.0 * speed) * (1.0 / pe.tanh() - 1.0 / pe)
                } else {
                    0.0
                };
                Flow { eps: args.eps, b, tau }
            })
            .collect()
    };
    let opts = CgOptions {
        tol: 1e-9,
        max_iter: 20_000,
    };
    let n = coords.len() / 2;
    let mut results = Vec::new();
    for stabilised in [true, false] {
        let (_, a) = assemble::<Tri3, _>(&coords, cells, &flows(stabilised), supg)?;
        let report = steady(&dev, &a, &vec![0.0; n], &fixed, &opts)?;
        let (lo, hi) = report
            .x
            .iter()
            .fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(*v), hi.max(*v)));
        println!(
            "{}: {} solver iterations; u in [{lo:.4}, {hi:.4}]: {:.2} % outside [0, 1]",
            if stabilised { "SUPG    " } else { "Galerkin" },
            report.iterations,
            100.0 * (-lo).max(hi - 1.0).max(0.0)
        );
        results.push(report.x);
    }
    let galerkin_out = args.out.with_file_name(format!(
        "{}_galerkin.png",
        args.out.file_stem().map_or("supg".into(), |s| s.to_string_lossy())
    ));
    for (u, path) in results.iter().zip([&args.out, &galerkin_out]) {
        picture::triangles(path, &plate.mesh.coords, cells, u, (-0.2, 1.2))?;
        println!("wrote {}", path.display());
    }
    Ok(())
}
