//! Modal (hierarchical) elements for the tests: trunk hexahedra p = 1..6 for 3-D elasticity
//! (the seed's), and some others (2-D, tensor space, diffusion, user-written `modes`).
#![allow(dead_code)]

use clforge::prelude::*;

/// An isotropic elastic solid given by its Lamé constants.
#[derive(Clone, Copy, Debug)]
pub struct Iso {
    pub lambda: f64,
    pub mu: f64,
}

/// Hooke's law over (ε_xx, ε_yy, ε_zz, γ_yz, γ_xz, γ_xy).
pub fn hooke(m: &Iso) -> [[f64; 6]; 6] {
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

macro_rules! trunk_hex {
    ($($name:ident = $p:literal),*) => {$(
        /// Trunk-space hexahedron for 3-D elasticity (seed 004).
        #[element(dim = 3, operator = elasticity, basis = trunk, order = $p)]
        pub mod $name {
            use super::Iso;
            pub fn material(m: &Iso) -> [[f64; 6]; 6] {
                super::hooke(m)
            }
            pub fn density(_m: &Iso) -> f64 {
                1.0
            }
        }
    )*};
}
trunk_hex!(hex_p1 = 1, hex_p2 = 2, hex_p3 = 3, hex_p4 = 4, hex_p5 = 5, hex_p6 = 6);

/// p = 4 with the points of p = 5, so that its matrix is exactly the leading block of p = 5's.
#[element(dim = 3, operator = elasticity, basis = trunk, order = 4, quadrature = 7)]
pub mod hex_p4_q7 {
    use super::Iso;
    pub fn material(m: &Iso) -> [[f64; 6]; 6] {
        super::hooke(m)
    }
    pub fn density(_m: &Iso) -> f64 {
        1.0
    }
}

/// The seed's 2 points per direction at p = 2: too few (spurious zero-energy modes).
#[element(dim = 3, operator = elasticity, basis = trunk, order = 2, quadrature = 2)]
pub mod hex_p2_q2 {
    use super::Iso;
    pub fn material(m: &Iso) -> [[f64; 6]; 6] {
        super::hooke(m)
    }
    pub fn density(_m: &Iso) -> f64 {
        1.0
    }
}

/// A thin plate.
#[derive(Clone, Copy, Debug)]
pub struct Plate {
    pub e: f64,
    pub nu: f64,
    pub h: f64,
}

/// Tensor-space quadrilateral, plane stress, order 3, with the 1-D functions written out
/// (scaled integrated Legendre: any bubble of the right degree is allowed).
#[element(dim = 2, operator = plane_stress, basis = tensor, order = 3)]
pub mod quad_q3 {
    use super::Plate;
    pub fn modes(x: f64) -> [f64; 4] {
        let b = 1.0 - x * x;
        [0.5 * (1.0 - x), 0.5 * (1.0 + x), b, b * x]
    }
    pub fn material(m: &Plate) -> [[f64; 3]; 3] {
        let c = m.e / (1.0 - m.nu * m.nu);
        [
            [c, c * m.nu, 0.0],
            [c * m.nu, c, 0.0],
            [0.0, 0.0, c * (1.0 - m.nu) / 2.0],
        ]
    }
    pub fn density(_m: &Plate) -> f64 {
        1.0
    }
    pub fn thickness(m: &Plate) -> f64 {
        m.h
    }
}

/// Heat conduction on a trunk hexahedron of order 4 (anisotropic conductivity).
#[element(dim = 3, operator = diffusion, basis = trunk, order = 4)]
pub mod heat_p4 {
    pub fn material(k: &[[f64; 3]; 3]) -> [[f64; 3]; 3] {
        *k
    }
    pub fn density(_k: &[[f64; 3]; 3]) -> f64 {
        1.0
    }
}
