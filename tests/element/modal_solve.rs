//! p-convergence of modal hexahedra on a mesh: 3-D elasticity on the unit cube with the
//! manufactured solution `u = sin πx sin πy sin πz · (1, 2, -1)`, `λ = μ = 1`, homogeneous
//! Dirichlet conditions on the whole boundary. The modes are numbered globally with
//! orientation signs by `element::modal_mesh`, `K_e` formed on the device, assembled with
//! `element::sparse`, solved by CG; the load and the L2 error by quadrature on the host. The trunk
//! hexahedra of `tests/modal` (p = 1..5) and tensor ones (Q_2..Q_4, declared here) on 2 × 2 × 2
//! lightly distorted elements.

use crate::common;
use crate::modal;

use clforge::prelude::*;
use clforge::runtime::element::forming::{Algorithm, Forming};
use clforge::runtime::element::matrices::{self, gauss_legendre};
use clforge::runtime::element::modal_mesh::{box_mesh, dof_map, BoxMesh};
use clforge::runtime::element::sparse::{self, CgOptions};
use clforge::runtime::element::{Basis, Element};
use modal::*;
use std::f64::consts::PI;

macro_rules! tensor_hex {
    ($($name:ident = $p:literal),*) => {$(
        /// Tensor-space (Q_p) hexahedron for 3-D elasticity.
        #[element(dim = 3, operator = elasticity, basis = tensor, order = $p)]
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
tensor_hex!(tensor_p2 = 2, tensor_p3 = 3, tensor_p4 = 4);

const LAMBDA: f64 = 1.0;
const MU: f64 = 1.0;
const DIR: [f64; 3] = [1.0, 2.0, -1.0];

/// The exact displacement.
fn exact(x: [f64; 3]) -> [f64; 3] {
    let s = (PI * x[0]).sin() * (PI * x[1]).sin() * (PI * x[2]).sin();
    DIR.map(|d| d * s)
}

/// `f = -div σ(u)` for `u = s(x) d`: `div σ = (λ + μ) ∇(div u) + μ Δu` with `div u = d · ∇s`,
/// so `∇(div u) = H d` (`H` the Hessian of `s`) and `Δu = -3π² s d`:
/// `f = -(λ + μ) H d + 3 μ π² s d`. With `s_i = sin πx_i`, `c_i = cos πx_i`:
/// `H_ii = -π² s`, `H_ij = π² c_i c_j s_k` (`k` the third axis).
fn body_force(x: [f64; 3]) -> [f64; 3] {
    let si = x.map(|v| (PI * v).sin());
    let ci = x.map(|v| (PI * v).cos());
    let s = si[0] * si[1] * si[2];
    let pi2 = PI * PI;
    let h = |i: usize, j: usize| {
        if i == j {
            -pi2 * s
        } else {
            let k = 3 - i - j;
            pi2 * ci[i] * ci[j] * si[k]
        }
    };
    core::array::from_fn(|i| {
        let hd: f64 = (0..3).map(|j| h(i, j) * DIR[j]).sum();
        -(LAMBDA + MU) * hd + 3.0 * MU * pi2 * s * DIR[i]
    })
}

/// The element's vertex coordinates as rows.
fn vertices_of(mesh: &BoxMesh, e: usize) -> Vec<[f64; 3]> {
    mesh.coords[e * 24..(e + 1) * 24]
        .chunks_exact(3)
        .map(|c| [c[0], c[1], c[2]])
        .collect()
}

/// The global point of a local one: the vertex modes are the trilinear map.
fn global_point(xs: &[[f64; 3]], n: &[f64]) -> [f64; 3] {
    let mut x = [0.0; 3];
    for (v, p) in xs.iter().enumerate() {
        for a in 0..3 {
            x[a] += n[v] * p[a];
        }
    }
    x
}

/// Tensor Gauss points of `n` per direction on the reference cube.
fn cube_rule(n: usize) -> Vec<([f64; 3], f64)> {
    let g = gauss_legendre(n).unwrap();
    let mut out = Vec::new();
    for &(x, wx) in &g {
        for &(y, wy) in &g {
            for &(z, wz) in &g {
                out.push(([x, y, z], wx * wy * wz));
            }
        }
    }
    out
}

/// Solves on `mesh` with element `E`; returns (DOFs, CG iterations, relative L2 error).
fn solve<E: Element<Material = Iso>>(mesh: &BoxMesh) -> (usize, usize, f64) {
    let Basis::Modal { space, order } = E::basis() else {
        panic!("{} is not modal", E::NAME)
    };
    let m = mesh.elements.len() / 8;
    let (map, numbering) = dof_map(3, order, space, 3, &mesh.elements, mesh.vertices.len() / 3).unwrap();
    let ne = E::NODES * 3;
    assert_eq!(map.per_element(), ne);

    // Load: f_e = ∫ N^T f dV with the element's own points, assembled with signs.
    let rule = matrices::quadrature_points::<E>().unwrap();
    let mut rhs = vec![0.0; map.dofs()];
    for e in 0..m {
        let xs = vertices_of(mesh, e);
        let mut fe = vec![0.0; ne];
        for &(local, w) in &rule {
            let n = E::shape(local);
            let det = matrices::jacobian::<E, _>(&xs, local).unwrap().det;
            let f = body_force(global_point(&xs, &n));
            for (i, ni) in n.iter().enumerate() {
                for c in 0..3 {
                    fe[3 * i + c] += ni * f[c] * w * det;
                }
            }
        }
        for ((&d, &s), v) in map.element_dofs(e).iter().zip(map.element_signs(e)).zip(&fe) {
            rhs[d as usize] += s as f64 * v;
        }
    }

    // K_e on the device, assembled, Dirichlet u = 0 on the boundary, CG.
    let dev = common::device();
    let forming = Forming::<E>::new(&dev).unwrap();
    let materials = vec![Iso { lambda: LAMBDA, mu: MU }; m];
    let elements = forming.upload(&mesh.coords, &materials).unwrap();
    let (ke, _) = forming.form(&elements, Algorithm::default_for::<E>()).unwrap();
    let colours = sparse::colour(&map);
    let mut k = sparse::assemble(&dev, &ke.ke, &map, &colours).unwrap();
    let fixed = numbering.boundary_dofs(&mesh.elements);
    sparse::apply_dirichlet(&mut k, &fixed, &vec![0.0; fixed.len()], &mut rhs).unwrap();
    let opts = CgOptions {
        tol: 1e-12,
        max_iter: 20_000,
    };
    let report = sparse::cg(&k, &rhs, None, &opts).unwrap();

    // Relative L2 error with a rule finer than any element's.
    let fine = cube_rule(10);
    let (mut err2, mut norm2) = (0.0, 0.0);
    for e in 0..m {
        let xs = vertices_of(mesh, e);
        let dofs = map.element_dofs(e);
        let signs = map.element_signs(e);
        for &(local, w) in &fine {
            let n = E::shape(local);
            let det = matrices::jacobian::<E, _>(&xs, local).unwrap().det;
            let mut uh = [0.0; 3];
            for (i, ni) in n.iter().enumerate() {
                for (c, v) in uh.iter_mut().enumerate() {
                    let j = 3 * i + c;
                    *v += ni * signs[j] as f64 * report.x[dofs[j] as usize];
                }
            }
            let u = exact(global_point(&xs, &n));
            for c in 0..3 {
                err2 += (uh[c] - u[c]).powi(2) * w * det;
                norm2 += u[c] * u[c] * w * det;
            }
        }
    }
    (map.dofs(), report.iterations, (err2 / norm2).sqrt())
}

#[test]
fn body_force_is_minus_div_sigma() {
    // Central differences of the analytic σ at a few points.
    let sigma = |x: [f64; 3]| -> [[f64; 3]; 3] {
        let h = 1e-6;
        let mut grad = [[0.0; 3]; 3]; // grad[i][j] = ∂u_i/∂x_j
        for j in 0..3 {
            let (mut p, mut q) = (x, x);
            p[j] += h;
            q[j] -= h;
            let (up, uq) = (exact(p), exact(q));
            for i in 0..3 {
                grad[i][j] = (up[i] - uq[i]) / (2.0 * h);
            }
        }
        let div = grad[0][0] + grad[1][1] + grad[2][2];
        core::array::from_fn(|i| {
            core::array::from_fn(|j| MU * (grad[i][j] + grad[j][i]) + if i == j { LAMBDA * div } else { 0.0 })
        })
    };
    for x in [[0.3, 0.6, 0.2], [0.71, 0.15, 0.9], [0.5, 0.5, 0.5]] {
        let h = 1e-3;
        let f = body_force(x);
        for i in 0..3 {
            let mut div = 0.0;
            for j in 0..3 {
                let (mut p, mut q) = (x, x);
                p[j] += h;
                q[j] -= h;
                div += (sigma(p)[i][j] - sigma(q)[i][j]) / (2.0 * h);
            }
            assert!(
                (f[i] + div).abs() < 1e-3 * (1.0 + f[i].abs()),
                "{x:?}: f = {f:?}, div σ_{i} = {div}"
            );
        }
    }
}

#[test]
fn elasticity_on_a_cube_converges_exponentially_in_p() {
    let mesh = box_mesh(3, [2, 2, 2], [1.0; 3], 0.1, 2024).unwrap();
    let runs = [
        solve::<HexP1>(&mesh),
        solve::<HexP2>(&mesh),
        solve::<HexP3>(&mesh),
        solve::<HexP4>(&mesh),
        solve::<HexP5>(&mesh),
    ];
    for (p, (dofs, iters, err)) in runs.iter().enumerate() {
        println!(
            "p = {}: {dofs} DOFs, {iters} CG iterations, relative L2 error {err:.3e}",
            p + 1
        );
    }
    // Measured (PoCL, distortion 0.1): 2.66e-1, 4.19e-2, 2.80e-2, 6.28e-3, 2.22e-3. The odd
    // orders gain less: with the whole boundary fixed on 2 × 2 × 2 elements, trunk p = 3 adds
    // only the cubic modes of the 6 interior edges (21 -> 39 free DOFs) and p = 5 the quintic
    // edge and (2,3)/(3,2) face modes, while p = 4 brings the first face modes.
    let err: Vec<f64> = runs.iter().map(|r| r.2).collect();
    for p in 1..err.len() {
        assert!(err[p] < 0.8 * err[p - 1], "p = {}: {err:?}", p + 1);
    }
    for p in 3..err.len() {
        assert!(
            err[p] < 0.25 * err[p - 2],
            "p = {} against p = {}: {err:?}",
            p + 1,
            p - 1
        );
    }
    assert!(err[4] < err[0] / 50.0, "{err:?}");
}

#[test]
fn tensor_space_converges_by_an_order_of_magnitude_per_degree() {
    let mesh = box_mesh(3, [2, 2, 2], [1.0; 3], 0.1, 2024).unwrap();
    let runs = [
        solve::<TensorP2>(&mesh),
        solve::<TensorP3>(&mesh),
        solve::<TensorP4>(&mesh),
    ];
    for (p, (dofs, iters, err)) in runs.iter().enumerate() {
        println!(
            "Q_{}: {dofs} DOFs, {iters} CG iterations, relative L2 error {err:.3e}",
            p + 2
        );
    }
    // Measured: 3.70e-2, 3.49e-3, 2.67e-4 (a factor of about 10 per order).
    for q in 1..runs.len() {
        assert!(runs[q].2 < 0.2 * runs[q - 1].2, "Q_{}: {runs:?}", q + 2);
    }
}
