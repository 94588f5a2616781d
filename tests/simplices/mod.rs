//! Simplex elements declared in their natural reference coordinates (the unit triangle and
//! tetrahedron, vertices at 0 and the unit vectors), nodes in Gmsh's order: tri3, tri6, tet4,
//! tet10. Plane-stress triangles and 3-D elastic tetrahedra of an isotropic material.
#![allow(dead_code)]

use clforge::prelude::*;

/// An isotropic solid: Young's modulus, Poisson's ratio, density, thickness (2-D).
#[derive(Clone, Copy, Debug)]
pub struct Solid {
    pub e: f64,
    pub nu: f64,
    pub rho: f64,
    pub h: f64,
}

pub fn plane_stress(m: &Solid) -> [[f64; 3]; 3] {
    let c = m.e / (1.0 - m.nu * m.nu);
    [
        [c, c * m.nu, 0.0],
        [c * m.nu, c, 0.0],
        [0.0, 0.0, c * (1.0 - m.nu) / 2.0],
    ]
}

pub fn hooke(m: &Solid) -> [[f64; 6]; 6] {
    let l = m.e * m.nu / ((1.0 + m.nu) * (1.0 - 2.0 * m.nu));
    let g = m.e / (2.0 * (1.0 + m.nu));
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

/// Linear triangle (constant strain).
#[element(dim = 2, nodes = 3, operator = plane_stress, cell = simplex, quadrature = 2)]
pub mod tri3 {
    use super::Solid;

    pub const NODES: [[f64; 2]; 3] = [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]];

    pub fn shape(r: f64, s: f64) -> [f64; 3] {
        [1.0 - r - s, r, s]
    }

    pub fn material(m: &Solid) -> [[f64; 3]; 3] {
        super::plane_stress(m)
    }

    pub fn density(m: &Solid) -> f64 {
        m.rho
    }

    pub fn thickness(m: &Solid) -> f64 {
        m.h
    }
}

/// Quadratic triangle: vertices, then the mid-edge nodes of edges 01, 12, 20.
#[element(dim = 2, nodes = 6, operator = plane_stress, cell = simplex, quadrature = 3)]
pub mod tri6 {
    use super::Solid;

    pub const NODES: [[f64; 2]; 6] = [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.5, 0.0], [0.5, 0.5], [0.0, 0.5]];

    pub fn shape(r: f64, s: f64) -> [f64; 6] {
        let l0 = 1.0 - r - s;
        [
            l0 * (2.0 * l0 - 1.0),
            r * (2.0 * r - 1.0),
            s * (2.0 * s - 1.0),
            4.0 * l0 * r,
            4.0 * r * s,
            4.0 * s * l0,
        ]
    }

    pub fn material(m: &Solid) -> [[f64; 3]; 3] {
        super::plane_stress(m)
    }

    pub fn density(m: &Solid) -> f64 {
        m.rho
    }

    pub fn thickness(m: &Solid) -> f64 {
        m.h
    }
}

/// Linear tetrahedron.
#[element(dim = 3, nodes = 4, operator = elasticity, cell = simplex, quadrature = 2)]
pub mod tet4 {
    use super::Solid;

    pub const NODES: [[f64; 3]; 4] = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];

    pub fn shape(r: f64, s: f64, t: f64) -> [f64; 4] {
        [1.0 - r - s - t, r, s, t]
    }

    pub fn material(m: &Solid) -> [[f64; 6]; 6] {
        super::hooke(m)
    }

    pub fn density(m: &Solid) -> f64 {
        m.rho
    }
}

/// Quadratic tetrahedron, Gmsh's order: vertices, then edges 01, 12, 20, 30, 32, 31.
#[element(dim = 3, nodes = 10, operator = elasticity, cell = simplex, quadrature = 3)]
pub mod tet10 {
    use super::Solid;

    pub const NODES: [[f64; 3]; 10] = [
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [0.0, 1.0, 0.0],
        [0.0, 0.0, 1.0],
        [0.5, 0.0, 0.0],
        [0.5, 0.5, 0.0],
        [0.0, 0.5, 0.0],
        [0.0, 0.0, 0.5],
        [0.0, 0.5, 0.5],
        [0.5, 0.0, 0.5],
    ];

    pub fn shape(r: f64, s: f64, t: f64) -> [f64; 10] {
        let l0 = 1.0 - r - s - t;
        [
            l0 * (2.0 * l0 - 1.0),
            r * (2.0 * r - 1.0),
            s * (2.0 * s - 1.0),
            t * (2.0 * t - 1.0),
            4.0 * l0 * r,
            4.0 * r * s,
            4.0 * s * l0,
            4.0 * t * l0,
            4.0 * t * s,
            4.0 * r * t,
        ]
    }

    pub fn material(m: &Solid) -> [[f64; 6]; 6] {
        super::hooke(m)
    }

    pub fn density(m: &Solid) -> f64 {
        m.rho
    }
}
