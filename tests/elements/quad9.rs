use clforge::prelude::*;

/// An isotropic elastic body, thick in z (plane strain).
#[derive(Clone, Copy, Debug)]
pub struct Body {
    pub e: f64,
    pub nu: f64,
    pub rho: f64,
}

/// Biquadratic Lagrange quadrilateral in plane strain: 9 nodes × 2 DOF, `K_e` is 18×18, so each
/// row packs into three `float8`s.
#[element(dim = 2, nodes = 9, operator = plane_strain, quadrature = 3)]
pub mod quad9 {
    use super::Body;

    /// Corners counter-clockwise, then the mid-sides (bottom, right, top, left), then the centre.
    pub const NODES: [[f64; 2]; 9] = [
        [-1.0, -1.0],
        [1.0, -1.0],
        [1.0, 1.0],
        [-1.0, 1.0],
        [0.0, -1.0],
        [1.0, 0.0],
        [0.0, 1.0],
        [-1.0, 0.0],
        [0.0, 0.0],
    ];

    /// Products of the 1-D quadratic Lagrange polynomials through -1, 0, 1.
    pub fn shape(r: f64, s: f64) -> [f64; 9] {
        let r0 = 0.5 * r * (r - 1.0);
        let r1 = 1.0 - r.powi(2);
        let r2 = 0.5 * r * (r + 1.0);
        let s0 = 0.5 * s * (s - 1.0);
        let s1 = 1.0 - s.powi(2);
        let s2 = 0.5 * s * (s + 1.0);
        [
            r0 * s0,
            r2 * s0,
            r2 * s2,
            r0 * s2,
            r1 * s0,
            r2 * s1,
            r1 * s2,
            r0 * s1,
            r1 * s1,
        ]
    }

    /// Hooke's law in plane strain over (ε_xx, ε_yy, γ_xy).
    pub fn material(m: &Body) -> [[f64; 3]; 3] {
        let c = m.e / ((1.0 + m.nu) * (1.0 - 2.0 * m.nu));
        [
            [c * (1.0 - m.nu), c * m.nu, 0.0],
            [c * m.nu, c * (1.0 - m.nu), 0.0],
            [0.0, 0.0, c * (0.5 - m.nu)],
        ]
    }

    pub fn density(m: &Body) -> f64 {
        m.rho
    }
}
