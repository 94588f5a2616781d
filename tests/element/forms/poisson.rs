//! Poisson's equation written as forms: `∫ ∇u·∇v = ∫ f v` on the unit square or cube with
//! `u = 0` on the boundary and `f = dim π² Π sin πx_k`, whose solution is `Π sin πx_k`. The L2
//! error of linear and quadratic triangles and tetrahedra falls as `h^{p+1}`.

use super::*;

use clforge::runtime::element::form::time::{assemble, assemble_load, l2_error, steady, Fixed};
use clforge::runtime::element::sparse::CgOptions;

/// Linear triangle for conduction.
#[clforge::element(dim = 2, nodes = 3, operator = diffusion, cell = simplex, quadrature = 2)]
pub mod tri3_heat {
    pub const NODES: [[f64; 2]; 3] = [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]];

    pub fn shape(r: f64, s: f64) -> [f64; 3] {
        [1.0 - r - s, r, s]
    }

    pub fn material(k: &f64) -> [[f64; 2]; 2] {
        [[*k, 0.0], [0.0, *k]]
    }

    pub fn density(_k: &f64) -> f64 {
        1.0
    }
}

/// Quadratic triangle for conduction: vertices, then the mid-edge nodes of edges 01, 12, 20.
#[clforge::element(dim = 2, nodes = 6, operator = diffusion, cell = simplex, quadrature = 3)]
pub mod tri6_heat {
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

    pub fn material(k: &f64) -> [[f64; 2]; 2] {
        [[*k, 0.0], [0.0, *k]]
    }

    pub fn density(_k: &f64) -> f64 {
        1.0
    }
}

/// The unit square in `n × n` squares, each cut into two triangles, on a node grid of `q · n + 1`
/// per side (`q` = 1 for linear triangles, 2 for quadratic ones); cells in `tri3`/`tri6` order.
pub(super) fn triangles(n: usize, q: usize) -> (Vec<f64>, Vec<u32>) {
    let side = q * n + 1;
    let node = |i: usize, j: usize| (j * side + i) as u32;
    let coords = (0..side)
        .flat_map(|j| (0..side).flat_map(move |i| [i as f64 / (side - 1) as f64, j as f64 / (side - 1) as f64]))
        .collect();
    let mut cells = Vec::new();
    for j in 0..n {
        for i in 0..n {
            let (x, y) = (q * i, q * j);
            let corners = [
                [(x, y), (x + q, y), (x, y + q)],
                [(x + q, y + q), (x, y + q), (x + q, y)],
            ];
            for t in corners {
                cells.extend(t.iter().map(|&(a, b)| node(a, b)));
                if q == 2 {
                    for (p0, p1) in [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])] {
                        cells.push(node((p0.0 + p1.0) / 2, (p0.1 + p1.1) / 2));
                    }
                }
            }
        }
    }
    (coords, cells)
}

/// The L2 error of `−Δu = dim π² Π_k sin πx_k` with `u = 0` on the unit box's boundary, whose
/// solution is `Π_k sin πx_k`, on the mesh `(coords, cells)` of `E`s, stiffness and load
/// written as forms.
fn poisson_error<E: Element<Material = f64>>((coords, cells): (Vec<f64>, Vec<u32>)) -> f64 {
    let dev = common::device();
    let (pi, dim) = (std::f64::consts::PI, E::DIM);
    let exact = |x: [f64; 3]| (0..dim).map(|k| (pi * x[k]).sin()).product::<f64>();
    let (_, k) = assemble::<E, _>(&coords, &cells, &[1.0], |u: &Field, v: &Field, _: &Position, k| {
        k * dot(u.grad(), v.grad())
    })
    .unwrap();
    let f = assemble_load::<E, _>(&coords, &cells, &[1.0], |v: &Field, x: &Position, _| {
        dim as f64 * pi * pi * exact(x.x) * v.value()
    })
    .unwrap();
    let boundary: Vec<u32> = coords
        .chunks(dim)
        .enumerate()
        .filter(|(_, p)| p.iter().any(|&c| c == 0.0 || c == 1.0))
        .map(|(i, _)| i as u32)
        .collect();
    let fixed = Fixed {
        values: vec![0.0; boundary.len()],
        dofs: boundary,
    };
    let opts = CgOptions {
        tol: 1e-13,
        max_iter: 5000,
    };
    let u = steady(&dev, &k, &f, &fixed, &opts).unwrap().x;
    l2_error::<E>(&coords, &cells, &u, exact).unwrap()
}

#[test]
fn poisson_on_triangles_converges_at_order_p_plus_one() {
    for (q, want, name) in [(1usize, 2.0, "tri3"), (2, 3.0, "tri6")] {
        let errors: Vec<f64> = [4, 8, 16]
            .iter()
            .map(|&n| match q {
                1 => poisson_error::<Tri3Heat>(triangles(n, 1)),
                _ => poisson_error::<Tri6Heat>(triangles(n, 2)),
            })
            .collect();
        for w in errors.windows(2) {
            let order = (w[0] / w[1]).log2();
            assert!(
                (want - 0.25..want + 0.4).contains(&order),
                "{name}: L2 order {order} ({errors:?})"
            );
        }
    }
}

/// Linear tetrahedron for conduction.
#[clforge::element(dim = 3, nodes = 4, operator = diffusion, cell = simplex, quadrature = 2)]
pub mod tet4_heat {
    pub const NODES: [[f64; 3]; 4] = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];

    pub fn shape(r: f64, s: f64, t: f64) -> [f64; 4] {
        [1.0 - r - s - t, r, s, t]
    }

    pub fn material(k: &f64) -> [[f64; 3]; 3] {
        [[*k, 0.0, 0.0], [0.0, *k, 0.0], [0.0, 0.0, *k]]
    }

    pub fn density(_k: &f64) -> f64 {
        1.0
    }
}

/// Quadratic tetrahedron for conduction, Gmsh's order: vertices, then edges 01, 12, 20, 30, 32,
/// 31.
#[clforge::element(dim = 3, nodes = 10, operator = diffusion, cell = simplex, quadrature = 3)]
pub mod tet10_heat {
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

    pub fn material(k: &f64) -> [[f64; 3]; 3] {
        [[*k, 0.0, 0.0], [0.0, *k, 0.0], [0.0, 0.0, *k]]
    }

    pub fn density(_k: &f64) -> f64 {
        1.0
    }
}

/// The unit cube in `n³` cubes, each cut into six tetrahedra around its main diagonal (Kuhn),
/// positively oriented, on a node grid of `q · n + 1` per side; `q = 2` adds the mid-edge nodes
/// in `tet10_heat`'s order.
fn tetrahedra(n: usize, q: usize) -> (Vec<f64>, Vec<u32>) {
    let side = q * n + 1;
    let node = |p: [usize; 3]| ((p[2] * side + p[1]) * side + p[0]) as u32;
    let h = 1.0 / (side - 1) as f64;
    let coords: Vec<f64> = (0..side)
        .flat_map(|k| {
            (0..side).flat_map(move |j| (0..side).flat_map(move |i| [i as f64 * h, j as f64 * h, k as f64 * h]))
        })
        .collect();
    let mut cells = Vec::new();
    for k in 0..n {
        for j in 0..n {
            for i in 0..n {
                let o = [q * i, q * j, q * k];
                // Each path from corner 000 to 111 along the axes in one order is a tetrahedron.
                for perm in [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]] {
                    let mut v = [o; 4];
                    for step in 0..3 {
                        v[step + 1] = v[step];
                        v[step + 1][perm[step]] += q;
                    }
                    let d = |a: usize, c: usize| v[a][c] as f64 - v[0][c] as f64;
                    let det = d(1, 0) * (d(2, 1) * d(3, 2) - d(2, 2) * d(3, 1))
                        - d(1, 1) * (d(2, 0) * d(3, 2) - d(2, 2) * d(3, 0))
                        + d(1, 2) * (d(2, 0) * d(3, 1) - d(2, 1) * d(3, 0));
                    if det < 0.0 {
                        v.swap(1, 2);
                    }
                    cells.extend(v.iter().map(|&p| node(p)));
                    if q == 2 {
                        for (a, b) in [(0, 1), (1, 2), (2, 0), (3, 0), (3, 2), (3, 1)] {
                            cells.push(node(std::array::from_fn(|c| (v[a][c] + v[b][c]) / 2)));
                        }
                    }
                }
            }
        }
    }
    (coords, cells)
}

#[test]
fn poisson_on_tetrahedra_converges_at_order_p_plus_one() {
    let tet4: Vec<f64> = [4, 8]
        .iter()
        .map(|&n| poisson_error::<Tet4Heat>(tetrahedra(n, 1)))
        .collect();
    let tet10: Vec<f64> = [2, 4]
        .iter()
        .map(|&n| poisson_error::<Tet10Heat>(tetrahedra(n, 2)))
        .collect();
    for (errors, want, name) in [(tet4, 2.0, "tet4"), (tet10, 3.0, "tet10")] {
        let order = (errors[0] / errors[1]).log2();
        assert!(
            (want - 0.35..want + 0.5).contains(&order),
            "{name}: L2 order {order} ({errors:?})"
        );
    }
}
