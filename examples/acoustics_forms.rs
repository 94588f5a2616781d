//! Sound in a room, the physics written as forms in an element module.
//!
//! ```text
//! cargo run --release --example acoustics_forms -- --out out/acoustics.png
//! ```
//!
//! - **Physics.** The pressure wave equation `p̈ / c² = Δp` on the plate of
//!   `examples/meshes/plate.msh` (2 m × 1 m, linear triangles; rigid walls: the natural boundary
//!   condition), from a Gaussian pressure pulse at rest. The element module declares
//!   `#[form(stiffness)] ∇p·∇q` and `#[form(mass)] p q / c²`; both are assembled and stepped by
//!   Newmark's average-acceleration rule, each step solved on the device.
//! - **Check.** The pulse spreads as a ring. The run bins the pressure by distance from the
//!   source, follows the ring's crest at two times and prints the measured speed of sound against
//!   `c` (and the energy drift, which the rule conserves).
//! - **Output.** `--out` (default `out/acoustics.png`): the pressure at the last step.

use anyhow::{bail, Result};
use clap::Parser;
use clforge::prelude::*;
use clforge::runtime::element::form::newmark::{Newmark, State};
use clforge::runtime::element::form::time::{assemble, Fixed};
use clforge::runtime::element::io::{read_msh, CellKind};
use clforge::runtime::element::sparse::{CgOptions, HostCsr};
use clforge::runtime::Device;
use std::path::PathBuf;

#[path = "support/picture.rs"]
mod picture;

/// Air: its speed of sound.
#[derive(Clone, Copy, Debug)]
pub struct Air {
    pub c: f64,
}

/// Linear triangle for acoustics.
#[element(dim = 2, nodes = 3, cell = simplex, quadrature = 2)]
mod tri3_sound {
    use super::Air;
    use clforge::runtime::element::form::{dot, Field, Position};

    pub const NODES: [[f64; 2]; 3] = [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]];

    pub fn shape(r: f64, s: f64) -> [f64; 3] {
        [1.0 - r - s, r, s]
    }

    /// `∇p·∇q`.
    #[form(stiffness)]
    pub fn laplace(p: &Field, q: &Field, _x: &Position, _air: &Air) -> f64 {
        dot(p.grad(), q.grad())
    }

    /// `p q / c²`.
    #[form(mass)]
    pub fn compressibility(p: &Field, q: &Field, _x: &Position, air: &Air) -> f64 {
        p.value() * q.value() / (air.c * air.c)
    }
}

#[derive(Parser)]
#[command(about = "Sound in a room: the wave equation written as forms, Newmark-β on the device")]
struct Args {
    /// The mesh: linear triangles.
    #[arg(long, default_value = "examples/meshes/plate.msh")]
    mesh: PathBuf,
    /// Speed of sound, m/s.
    #[arg(long, default_value_t = 343.0)]
    c: f64,
    /// Time step as a fraction of the time sound needs to cross the mesh size (0.03 m).
    #[arg(long, default_value_t = 0.5)]
    courant: f64,
    /// The picture of the last step.
    #[arg(long, default_value = "out/acoustics.png")]
    out: PathBuf,
}

/// The source: a Gaussian pulse at `CENTRE` of width `WIDTH` (m).
const CENTRE: [f64; 2] = [0.7, 0.5];
const WIDTH: f64 = 0.06;

fn main() -> Result<()> {
    let args = Args::parse();
    if !(args.c > 0.0 && args.c.is_finite() && args.courant > 0.0 && args.courant.is_finite()) {
        bail!("--c and --courant must be positive");
    }
    let dev = Device::default()?;
    let msh = read_msh(&args.mesh)?;
    let plate = msh.to_mesh(CellKind::Tri3)?;
    let coords: Vec<f64> = plate.mesh.coords.iter().flat_map(|p| [p[0], p[1]]).collect();
    let cells = &plate.mesh.connectivity;
    let air = [Air { c: args.c }];
    let (_, k) = assemble::<Tri3Sound, _>(&coords, cells, &air, tri3_sound::laplace)?;
    let (_, m) = assemble::<Tri3Sound, _>(&coords, cells, &air, tri3_sound::compressibility)?;
    let dt = args.courant * 0.03 / args.c;
    let opts = CgOptions {
        tol: 1e-11,
        max_iter: 5000,
    };
    let stepper = Newmark::new(&dev, &m, &k, None, (0.25, 0.5), dt, &Fixed::default(), opts)?;
    let radius = |p: &[f64; 3]| (p[0] - CENTRE[0]).hypot(p[1] - CENTRE[1]);
    let p0: Vec<f64> = plate
        .mesh
        .coords
        .iter()
        .map(|p| (-(radius(p) / WIDTH).powi(2)).exp())
        .collect();
    let mut s = stepper.start(p0, vec![0.0; coords.len() / 2], None)?;
    let e0 = energy(&m, &k, &s)?;
    // The crest from 0.2 m to 0.45 m: inside the plate (the nearest wall is 0.5 m away).
    let (t1, t2) = (0.2 / args.c, 0.45 / args.c);
    let (mut t, mut crests, mut steps) = (0.0, Vec::new(), 0);
    for target in [t1, t2] {
        while t < target - 1e-12 * target {
            stepper.step(&mut s, None)?;
            t += dt;
            steps += 1;
        }
        crests.push((t, crest(&plate.mesh.coords, &s.u, radius)));
    }
    let speed = (crests[1].1 - crests[0].1) / (crests[1].0 - crests[0].0);
    let drift = (energy(&m, &k, &s)? - e0).abs() / e0;
    println!(
        "{} nodes; {steps} Newmark steps of {dt:.3e} s; the crest at {:.3} m then {:.3} m: measured speed of sound \
         {speed:.1} m/s against c = {} m/s ({:+.2} %); energy drift {drift:.1e}",
        coords.len() / 2,
        crests[0].1,
        crests[1].1,
        args.c,
        100.0 * (speed / args.c - 1.0)
    );
    let top = s.u.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    picture::triangles(&args.out, &plate.mesh.coords, cells, &s.u, (-top, top))?;
    println!("wrote {}", args.out.display());
    Ok(())
}

/// `½ (v·M v + u·K u)`.
fn energy(m: &HostCsr, k: &HostCsr, s: &State) -> Result<f64> {
    let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
    Ok(0.5 * (dot(&s.v, &m.mul(&s.v)?) + dot(&s.u, &k.mul(&s.u)?)))
}

/// The ring's crest: the centre of the 1 cm radial bin of largest mean pressure beyond 0.1 m,
/// refined by a parabola through it and its neighbours.
fn crest(coords: &[[f64; 3]], u: &[f64], radius: impl Fn(&[f64; 3]) -> f64) -> f64 {
    let width = 0.01;
    let bins = 100;
    let mut sum = vec![0.0; bins];
    let mut count = vec![0usize; bins];
    for (p, v) in coords.iter().zip(u) {
        let b = (radius(p) / width) as usize;
        if b < bins {
            sum[b] += v;
            count[b] += 1;
        }
    }
    let mean: Vec<f64> = sum
        .iter()
        .zip(&count)
        .map(|(s, &c)| if c > 0 { s / c as f64 } else { 0.0 })
        .collect();
    let first = (0.1 / width) as usize;
    let b = (first..bins - 1)
        .max_by(|&a, &b| mean[a].total_cmp(&mean[b]))
        .unwrap_or(first);
    let (l, c, r) = (mean[b - 1], mean[b], mean[b + 1]);
    let shift = if l - 2.0 * c + r != 0.0 {
        0.5 * (l - r) / (l - 2.0 * c + r)
    } else {
        0.0
    };
    width * (b as f64 + 0.5 + shift)
}
