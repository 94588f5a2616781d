use clforge::prelude::*;

/// An isotropic elastic plate (seed 000: steel, E = 210 GPa, ν = 0.3, ρ = 7800 kg/m³).
#[derive(Clone, Copy, Debug)]
pub struct Plate {
    pub e: f64,
    pub nu: f64,
    pub rho: f64,
    pub thickness: f64,
}

/// Bilinear plane-stress quadrilateral (seed 000): 4 nodes × 2 DOF, `K_e` is 8×8.
#[element(dim = 2, nodes = 4, dofs = 2, operator = plane_stress, quadrature = 2)]
pub mod quad4 {
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
