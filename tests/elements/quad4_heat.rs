use clforge::prelude::*;

/// An orthotropic heat conductor: conductivities along x and y, heat capacity per volume.
#[derive(Clone, Copy, Debug)]
pub struct Conductor {
    pub kx: f64,
    pub ky: f64,
    pub rho_c: f64,
}

/// Bilinear quadrilateral for heat conduction: one temperature per node.
#[element(dim = 2, nodes = 4, operator = diffusion, quadrature = 2)]
pub mod quad4_heat {
    use super::Conductor;

    pub const NODES: [[f64; 2]; 4] = [[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]];

    /// The same bilinear functions as `quad4`, written with `let`s and a division.
    pub fn shape(r: f64, s: f64) -> [f64; 4] {
        let a = 1.0 - r;
        let b = 1.0 + r;
        [
            a * (1.0 - s) / 4.0,
            b * (1.0 - s) / 4.0,
            b * (1.0 + s) / 4.0,
            a * (1.0 + s) / 4.0,
        ]
    }

    /// The conductivity tensor, 2×2.
    pub fn material(m: &Conductor) -> [[f64; 2]; 2] {
        [[m.kx, 0.0], [0.0, m.ky]]
    }

    pub fn density(m: &Conductor) -> f64 {
        m.rho_c
    }
}
