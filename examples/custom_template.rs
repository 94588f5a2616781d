//! A user template family: a new kernel for a user's element, written as a Tera template in
//! the user's crate and launched through a generated, typed function (docs/TEMPLATES.md).
//!
//! The element is the bilinear plane-stress quad of seed 000. Its module names the template
//! `examples/templates/strain_energy.cl.tera` and declares the kernel the template defines,
//! `strain_energy`, in an `extern "OpenCL"` block: clforge prints the kernel's signature from
//! that declaration and generates `Quad4::launch_strain_energy` with the same parameters.
//! The template reuses the element family's unrolled lines (node ids, `u_e`, `K_e u_e`).
//!
//! The kernel computes the strain energy density `w_e = u_eᵀ K_e u_e / (2 V_e)` of each element
//! and is checked twice on the default OpenCL device:
//! 1. against the host, element by element in `f64` from the same `K_e` (`Quad4::stiffness`),
//!    on random displacements;
//! 2. against the closed form for a uniform strain `u = (ε x, 0)`, which bilinear elements
//!    represent exactly: `w = ½ E ε² / (1 − ν²)` in plane stress.
//!
//! ```text
//! cargo run --example custom_template
//! ```
//! It exits with an error if either check fails.

use anyhow::{ensure, Result};
use clforge::prelude::*;
use clforge::runtime::element::mesh::StructuredMesh;
use clforge::runtime::element::{At, Element};
use clforge::runtime::Buffer;
use rand::{Rng, SeedableRng};

/// An isotropic elastic plate in plane stress.
#[derive(Clone, Copy, Debug)]
pub struct Plate {
    /// Young's modulus, Pa.
    pub e: f64,
    /// Poisson's ratio.
    pub nu: f64,
    /// Density, kg/m³.
    pub rho: f64,
    /// Thickness, m.
    pub thickness: f64,
}

/// Bilinear plane-stress quad with a user kernel family for its strain energy.
#[element(
    dim = 2,
    nodes = 4,
    dofs = 2,
    operator = plane_stress,
    quadrature = 2,
    template = "examples/templates/strain_energy.cl.tera"
)]
mod quad4 {
    use super::Plate;

    pub const NODES: [[f64; 2]; 4] = [[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]];

    pub fn shape(r: f64, s: f64) -> [f64; 4] {
        [
            0.25 * (1.0 - r) * (1.0 - s),
            0.25 * (1.0 + r) * (1.0 - s),
            0.25 * (1.0 + r) * (1.0 + s),
            0.25 * (1.0 - r) * (1.0 + s),
        ]
    }

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

    extern "OpenCL" {
        /// Strain energy density `u_eᵀ K_e u_e / (2 V_e)` of elements `0 .. count`.
        fn strain_energy(k: &[f32], elem_nodes: &[i32], u: &[f32], energy: &mut [f32], volume: f32, count: i32);
    }
}

fn main() -> Result<()> {
    let plate = Plate {
        e: 70e9,
        nu: 0.33,
        rho: 2700.0,
        thickness: 1e-3,
    };
    let (nx, ny) = (48usize, 32usize);
    // Element edge lengths: a 48 mm × 32 mm plate of 1 mm × 1 mm elements.
    let h = [1e-3, 1e-3, 1.0];
    let spec = Quad4::spec();
    let mesh = StructuredMesh::for_element(&spec, [nx, ny, 1], h)?;
    let conn: Vec<i32> = mesh.connectivity(spec.node_offsets).iter().map(|&n| n as i32).collect();
    let ne = mesh.element_count();

    // K_e of one (square) element of the structured mesh, and its volume.
    let first: Vec<[f64; 3]> = mesh
        .element_nodes(spec.node_offsets, 0)
        .iter()
        .map(|&n| mesh.node_position(n))
        .collect();
    let coords: Vec<[f64; 2]> = first.iter().map(|p| [p[0], p[1]]).collect();
    let k_e = Quad4::stiffness(&coords, &plate)?;
    let volume = h[0] * h[1] * plate.thickness;

    let device = Device::default()?;
    println!("device: {}", device.info().name);
    let program = device.program(Quad4::NAME, Quad4::SOURCE, "")?;
    let k = Buffer::from_slice(&device, &spec.device_rows(&k_e)?)?;
    let elem_nodes = Buffer::from_slice(&device, &conn)?;
    let mut energy = Buffer::<f32>::new(&device, ne)?;
    let run = |u: &[f32], energy: &mut Buffer<f32>| -> Result<Vec<f32>> {
        let u = Buffer::from_slice(&device, u)?;
        let at = At {
            program: &program,
            global: &[ne],
            local: None,
        };
        Quad4::launch_strain_energy(at, &k, &elem_nodes, &u, energy, volume as f32, ne as i32)?;
        Ok(energy.to_vec()?)
    };

    // 1. Random displacements against the host, in f64 from the same K_e.
    let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
    let u: Vec<f32> = (0..mesh.node_count() * 2)
        .map(|_| rng.random_range(-1e-6..1e-6))
        .collect();
    let got = run(&u, &mut energy)?;
    let nd = spec.nd();
    let mut worst = 0.0f64;
    for e in 0..ne {
        let ue: Vec<f64> = (0..nd)
            .map(|i| f64::from(u[conn[e * 4 + i / 2] as usize * 2 + i % 2]))
            .collect();
        let ku = k_e.mul_vec(&ue).expect("K_e is nd x nd");
        let want = 0.5 * ue.iter().zip(&ku).map(|(a, b)| a * b).sum::<f64>() / volume;
        let scale = 0.5 * ue.iter().map(|a| a * a).sum::<f64>() * k_e.max_abs() * nd as f64 / volume;
        worst = worst.max((f64::from(got[e]) - want).abs() / scale);
    }
    println!("random u: {ne} elements, worst error {worst:.2e} of the energy scale");
    ensure!(worst < 1e-5, "strain energy differs from the host: {worst:.2e}");

    // 2. Uniform strain u = (eps x, 0): w = E eps^2 / (2 (1 - nu^2)) in every element.
    let eps = 1e-4;
    let u: Vec<f32> = (0..mesh.node_count())
        .flat_map(|n| [(eps * mesh.node_position(n)[0]) as f32, 0.0])
        .collect();
    let got = run(&u, &mut energy)?;
    let exact = plate.e * eps * eps / (2.0 * (1.0 - plate.nu * plate.nu));
    let worst = got
        .iter()
        .map(|&w| (f64::from(w) - exact).abs() / exact)
        .fold(0.0, f64::max);
    println!("uniform strain: w = {exact:.6e} J/m³ exact, worst relative error {worst:.2e}");
    ensure!(worst < 1e-3, "uniform-strain energy density is off by {worst:.2e}");
    println!("custom template: OK");
    Ok(())
}
