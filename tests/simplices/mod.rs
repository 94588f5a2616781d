//! Simplex elements declared in their natural reference coordinates (the unit triangle and
//! tetrahedron, vertices at 0 and the unit vectors), nodes in Gmsh's order: tri3, tri6, tet4,
//! tet10. Plane-stress triangles and 3-D elastic tetrahedra of an isotropic material.
#![allow(dead_code)]

use clforge::prelude::*;
use clforge::runtime::element::Element;
use rand::Rng;
use std::collections::HashMap;

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

/// Signed length/area/volume of a simplex from its vertices (positive when counter-clockwise).
pub fn signed_volume(v: &[[f64; 3]], dim: usize) -> f64 {
    let d = |i: usize, a: usize| v[i][a] - v[0][a];
    if dim == 2 {
        (d(1, 0) * d(2, 1) - d(1, 1) * d(2, 0)) / 2.0
    } else {
        (d(1, 0) * (d(2, 1) * d(3, 2) - d(2, 2) * d(3, 1)) - d(1, 1) * (d(2, 0) * d(3, 2) - d(2, 2) * d(3, 0))
            + d(1, 2) * (d(2, 0) * d(3, 1) - d(2, 1) * d(3, 0)))
            / 6.0
    }
}

/// A distorted unstructured simplex mesh of the unit square (cube): `n` cells per side, each
/// split into triangles (Kuhn tetrahedra), interior vertices moved by up to `jitter`, then the
/// element's further nodes on edge midpoints (shared by neighbours). Returns the nodes, the
/// elements' node lists and whether each node lies on the boundary.
pub fn patch_mesh<E: Element>(
    n: usize,
    jitter: f64,
    rng: &mut impl Rng,
) -> (Vec<[f64; 3]>, Vec<Vec<usize>>, Vec<bool>) {
    let dim = E::DIM;
    let side = n + 1;
    let count = side.pow(dim as u32);
    let index = |i: [usize; 3]| i[0] + side * (i[1] + side * i[2]);
    let mut nodes = Vec::with_capacity(count);
    let mut boundary = Vec::with_capacity(count);
    for id in 0..count {
        let i = [
            id % side,
            (id / side) % side,
            if dim == 3 { id / (side * side) } else { 0 },
        ];
        let edge = (0..dim).any(|a| i[a] == 0 || i[a] == n);
        let mut x = [0.0; 3];
        for a in 0..dim {
            x[a] = i[a] as f64 / n as f64
                + if edge {
                    0.0
                } else {
                    rng.random_range(-jitter..=jitter) / n as f64
                };
        }
        nodes.push(x);
        boundary.push(edge);
    }
    let mut simplices: Vec<Vec<usize>> = Vec::new();
    let cells = n.pow(dim as u32);
    for c in 0..cells {
        let o = [c % n, (c / n) % n, if dim == 3 { c / (n * n) } else { 0 }];
        let perms: &[[usize; 3]] = if dim == 2 {
            &[[0, 1, 2], [1, 0, 2]]
        } else {
            &[[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]]
        };
        for p in perms {
            let mut at = o;
            let mut s = vec![index(at)];
            for &axis in &p[..dim] {
                at[axis] += 1;
                s.push(index(at));
            }
            let v: Vec<[f64; 3]> = s.iter().map(|&k| nodes[k]).collect();
            if signed_volume(&v, dim) < 0.0 {
                s.swap(1, 2);
            }
            simplices.push(s);
        }
    }
    // Further nodes: each local node past the vertices is the midpoint of the edge between
    // the two vertices where its barycentric coordinates are 1/2.
    let mut edges: HashMap<(usize, usize), usize> = HashMap::new();
    let mut elements = Vec::new();
    for s in &simplices {
        let mut el = s.clone();
        for l in &E::local_nodes()[dim + 1..] {
            let bary: Vec<f64> = std::iter::once(1.0 - l[..dim].iter().sum::<f64>())
                .chain(l[..dim].iter().copied())
                .collect();
            let ends: Vec<usize> = (0..=dim)
                .filter(|&k| (bary[k] - 0.5).abs() < 1e-12)
                .map(|k| s[k])
                .collect();
            assert_eq!(ends.len(), 2, "{}: node {l:?} is not a mid-edge node", E::NAME);
            let key = (ends[0].min(ends[1]), ends[0].max(ends[1]));
            let id = *edges.entry(key).or_insert_with(|| {
                let (a, b) = (nodes[key.0], nodes[key.1]);
                nodes.push(std::array::from_fn(|k| (a[k] + b[k]) / 2.0));
                boundary.push(
                    boundary[key.0]
                        && boundary[key.1]
                        && (0..dim).any(|k| a[k] == b[k] && (a[k] == 0.0 || a[k] == 1.0)),
                );
                nodes.len() - 1
            });
            el.push(id);
        }
        elements.push(el);
    }
    (nodes, elements, boundary)
}
