use clforge::prelude::*;

/// An isotropic elastic solid given by its Lamé constants.
#[derive(Clone, Copy, Debug)]
pub struct Solid {
    pub lambda: f64,
    pub mu: f64,
    pub rho: f64,
}

/// The trilinear hexahedron of `hex8.rs` with a user template family: the strain energy
/// density kernel of `examples/templates/strain_energy.cl.tera`, declared below.
#[element(
    dim = 3,
    nodes = 8,
    dofs = 3,
    operator = elasticity,
    quadrature = 2,
    template = "examples/templates/strain_energy.cl.tera"
)]
pub mod hex8_energy {
    use super::Solid;

    /// The bottom face counter-clockwise, then the top face above it.
    pub const NODES: [[f64; 3]; 8] = [
        [-1.0, -1.0, -1.0],
        [1.0, -1.0, -1.0],
        [1.0, 1.0, -1.0],
        [-1.0, 1.0, -1.0],
        [-1.0, -1.0, 1.0],
        [1.0, -1.0, 1.0],
        [1.0, 1.0, 1.0],
        [-1.0, 1.0, 1.0],
    ];

    pub fn shape(r: f64, s: f64, t: f64) -> [f64; 8] {
        [
            0.125 * (1.0 - r) * (1.0 - s) * (1.0 - t),
            0.125 * (1.0 + r) * (1.0 - s) * (1.0 - t),
            0.125 * (1.0 + r) * (1.0 + s) * (1.0 - t),
            0.125 * (1.0 - r) * (1.0 + s) * (1.0 - t),
            0.125 * (1.0 - r) * (1.0 - s) * (1.0 + t),
            0.125 * (1.0 + r) * (1.0 - s) * (1.0 + t),
            0.125 * (1.0 + r) * (1.0 + s) * (1.0 + t),
            0.125 * (1.0 - r) * (1.0 + s) * (1.0 + t),
        ]
    }

    /// Isotropic Hooke's law over (ε_xx, ε_yy, ε_zz, γ_yz, γ_xz, γ_xy).
    pub fn material(m: &Solid) -> [[f64; 6]; 6] {
        let (l, g) = (m.lambda, m.mu);
        let d = l + 2.0 * g;
        [
            [d, l, l, 0.0, 0.0, 0.0],
            [l, d, l, 0.0, 0.0, 0.0],
            [l, l, d, 0.0, 0.0, 0.0],
            [0.0, 0.0, 0.0, g, 0.0, 0.0],
            [0.0, 0.0, 0.0, 0.0, g, 0.0],
            [0.0, 0.0, 0.0, 0.0, 0.0, g],
        ]
    }

    pub fn density(m: &Solid) -> f64 {
        m.rho
    }

    extern "OpenCL" {
        /// Strain energy density `u_eᵀ K_e u_e / (2 V_e)` of elements `0 .. count`.
        fn strain_energy(k: &[f32], elem_nodes: &[i32], u: &[f32], energy: &mut [f32], volume: f32, count: i32);
    }
}
