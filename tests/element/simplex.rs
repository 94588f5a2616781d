//! Simplex elements (unstructured meshes): the collapsed rules are exact to their degree and no
//! further, K_e is symmetric and positive semi-definite with exactly the rigid motions as null
//! space, masses are ρ·volume and positive (HRZ where row sums fail), patch tests on distorted
//! unstructured meshes, the device's element matrices equal the host's, and a box grid is
//! refused.

use crate::common;
use crate::simplices;

use clforge::runtime::element::forming::{self, packed_len, Algorithm, Forming};
use clforge::runtime::element::matrices::{self, simplex_rule, Lumping};
use clforge::runtime::element::mesh::{Mesh, StructuredMesh};
use clforge::runtime::element::problem::Model;
use clforge::runtime::element::{At, Cell, Element, ElementKernels, Matrix};
use clforge::runtime::Buffer;
use clforge::runtime::Error;
use rand::Rng;
use simplices::*;

fn solid(rng: &mut impl Rng) -> Solid {
    Solid {
        e: rng.random_range(0.5..2.0),
        nu: rng.random_range(0.1..0.4),
        rho: rng.random_range(0.5..3.0),
        h: rng.random_range(0.5..2.0),
    }
}

fn factorial(n: u32) -> f64 {
    (1..=n).map(f64::from).product()
}

#[test]
fn collapsed_rules_are_exact_to_degree_2n_minus_1_and_no_further() {
    for dim in 2..=3usize {
        for n in 1..=6usize {
            let rule = simplex_rule(dim, n).unwrap();
            assert_eq!(rule.len(), Cell::Simplex.points(dim, n));
            let volume: f64 = rule.iter().map(|r| r.1).sum();
            assert!(
                (volume - 1.0 / factorial(dim as u32)).abs() < 1e-14,
                "dim {dim} n {n}: {volume}"
            );
            for (p, w) in &rule {
                assert!(*w > 0.0 && p.iter().all(|&x| x >= 0.0) && p.iter().sum::<f64>() <= 1.0 + 1e-15);
            }
            let deg = 2 * n as u32 - 1;
            let integral = |e: [u32; 3]| -> f64 {
                rule.iter()
                    .map(|(p, w)| w * (0..dim).map(|a| p[a].powi(e[a] as i32)).product::<f64>())
                    .sum()
            };
            // ∫ x^a y^b z^c over the unit simplex = a! b! c! / (a + b + c + dim)!.
            let exact = |e: [u32; 3]| -> f64 {
                e.iter().map(|&k| factorial(k)).product::<f64>() / factorial(e.iter().sum::<u32>() + dim as u32)
            };
            for a in 0..=deg {
                for b in 0..=deg - a {
                    for c in 0..=if dim == 3 { deg - a - b } else { 0 } {
                        let e = [a, b, c];
                        let (got, want) = (integral(e), exact(e));
                        assert!(
                            (got - want).abs() <= 1e-13 * want,
                            "dim {dim} n {n} x^{e:?}: {got} vs {want}"
                        );
                    }
                }
            }
            // y^(2n) is one degree too many for the n points along the last collapsed axis.
            let mut e = [0, 0, 0];
            e[dim - 1] = 2 * n as u32;
            assert!(
                (integral(e) - exact(e)).abs() > 1e-10 * exact(e),
                "dim {dim} n {n}: y^2n came out exact"
            );
        }
    }
    assert!(simplex_rule(4, 2).is_err() && simplex_rule(2, 0).is_err() && simplex_rule(3, 12).is_err());
}

/// Vertices of a random well-shaped simplex with positive orientation.
fn random_simplex(rng: &mut impl Rng, dim: usize) -> Vec<[f64; 3]> {
    loop {
        let v: Vec<[f64; 3]> = (0..=dim)
            .map(|i| {
                let mut p = [0.0; 3];
                for (a, x) in p.iter_mut().enumerate().take(dim) {
                    *x = if i == a + 1 { 1.0 } else { 0.0 } + rng.random_range(-0.3..0.3);
                }
                p
            })
            .collect();
        if signed_volume(&v, dim) > 0.05 {
            return v;
        }
    }
}

/// Node coordinates of element `E` on the given vertices: the vertices, then every further
/// local node by the affine map, displaced by up to `curve` (a curved, non-affine element).
fn nodes_on<E: Element>(v: &[[f64; 3]], curve: f64, rng: &mut impl Rng) -> Vec<[f64; 3]> {
    E::local_nodes()
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let mut x = v[0];
            for a in 0..E::DIM {
                for (k, xk) in x.iter_mut().enumerate().take(E::DIM) {
                    *xk += l[a] * (v[a + 1][k] - v[0][k]);
                }
            }
            if i > E::DIM {
                for xk in x.iter_mut().take(E::DIM) {
                    *xk += rng.random_range(-curve..=curve);
                }
            }
            x
        })
        .collect()
}

/// The rigid motions of `dim` dimensions at the given nodes, as DOF vectors.
fn rigid_modes(nodes: &[[f64; 3]], dim: usize) -> Vec<Vec<f64>> {
    type Motion = fn([f64; 3]) -> [f64; 3];
    let motions: Vec<Motion> = if dim == 2 {
        vec![|_| [1.0, 0.0, 0.0], |_| [0.0, 1.0, 0.0], |x| [-x[1], x[0], 0.0]]
    } else {
        vec![
            |_| [1.0, 0.0, 0.0],
            |_| [0.0, 1.0, 0.0],
            |_| [0.0, 0.0, 1.0],
            |x| [0.0, -x[2], x[1]],
            |x| [x[2], 0.0, -x[0]],
            |x| [-x[1], x[0], 0.0],
        ]
    };
    motions
        .iter()
        .map(|u| nodes.iter().flat_map(|&x| u(x)[..dim].to_vec()).collect())
        .collect()
}

fn check_element<E: Element<Material = Solid>>(seed: u64, curve: f64, row_sum: bool) {
    let mut rng = common::rng(seed);
    for _ in 0..5 {
        let v = random_simplex(&mut rng, E::DIM);
        let nodes = nodes_on::<E>(&v, curve, &mut rng);
        let m = solid(&mut rng);
        let x: Vec<&[f64]> = nodes.iter().map(|p| &p[..E::DIM]).collect();
        let k = matrices::stiffness::<E, _>(&x, &m).unwrap();
        let n = k.rows();
        assert_eq!(n, E::NODES * E::DIM);
        let scale = k.max_abs();
        for i in 0..n {
            for j in 0..i {
                assert!(
                    (k[(i, j)] - k[(j, i)]).abs() <= 1e-13 * scale,
                    "{}: K not symmetric",
                    E::NAME
                );
            }
        }
        let modes = rigid_modes(&nodes, E::DIM);
        let mut lifted = k.clone();
        for r in &modes {
            let kr = k.mul_vec(r).unwrap();
            let norm = kr.iter().fold(0.0f64, |a, v| a.max(v.abs()));
            assert!(norm <= 1e-10 * scale, "{}: a rigid motion has energy {norm:e}", E::NAME);
            let rr: f64 = r.iter().map(|x| x * x).sum();
            for i in 0..n {
                for j in 0..n {
                    lifted[(i, j)] += scale * r[i] * r[j] / rr;
                }
            }
        }
        assert!(
            common::positive_definite(&lifted),
            "{}: more zero modes than the rigid ones",
            E::NAME
        );
        // Masses: consistent and lumped sum to ρ·volume (× thickness in 2-D); lumped positive.
        let area = if curve == 0.0 {
            Some(signed_volume(&v, E::DIM))
        } else {
            None
        };
        let t = if E::DIM == 2 { m.h } else { 1.0 };
        let mc = matrices::mass_consistent::<E, _>(&x, &m).unwrap();
        let total_c: f64 = mc.data().iter().sum::<f64>() / E::DIM as f64;
        let lumped = matrices::lumped_mass::<E, _>(&x, &m).unwrap();
        let total_l: f64 = lumped.masses.iter().sum();
        assert!(
            lumped.masses.iter().all(|&x| x > 0.0),
            "{}: {:?}",
            E::NAME,
            lumped.masses
        );
        assert!(
            (total_c - total_l).abs() <= 1e-12 * total_c,
            "{}: {total_c} vs {total_l}",
            E::NAME
        );
        if let Some(vol) = area {
            let want = m.rho * vol * t;
            assert!(
                (total_l - want).abs() <= 1e-12 * want,
                "{}: mass {total_l}, ρ·V = {want}",
                E::NAME
            );
        }
        assert_eq!(
            lumped.scheme == Lumping::RowSum,
            row_sum,
            "{}: {:?}",
            E::NAME,
            lumped.scheme
        );
    }
}

#[test]
fn simplex_matrices_are_symmetric_semidefinite_with_the_rigid_null_space_and_right_masses() {
    check_element::<Tri3>(1, 0.0, true);
    check_element::<Tri6>(2, 0.0, false);
    check_element::<Tri6>(3, 0.05, false);
    check_element::<Tet4>(4, 0.0, true);
    check_element::<Tet10>(5, 0.0, false);
    check_element::<Tet10>(6, 0.04, false);
    assert_eq!(Tri3::CELL, Cell::Simplex);
    assert_eq!((Tri3::QUADRATURE, Tet10::QUADRATURE), (2, 3));
}

/// Patch test (A): the exact linear field leaves no force on interior nodes, and the strain
/// energy equals ½ εᵀ D ε times the domain's volume (1 here): integrated over the simplex, not
/// over a box.
fn patch_test<E: Element<Material = Solid>>(seed: u64) {
    let mut rng = common::rng(seed);
    let (nodes, elements, boundary) = patch_mesh::<E>(2, 0.3, &mut rng);
    let dim = E::DIM;
    let m = solid(&mut rng);
    let ndof = nodes.len() * dim;
    let mut k = Matrix::zeros(ndof, ndof);
    for el in &elements {
        let x: Vec<&[f64]> = el.iter().map(|&i| &nodes[i][..dim]).collect();
        let ke = matrices::stiffness::<E, _>(&x, &m).unwrap();
        for (a, &na) in el.iter().enumerate() {
            for (b, &nb) in el.iter().enumerate() {
                for i in 0..dim {
                    for j in 0..dim {
                        k[(na * dim + i, nb * dim + j)] += ke[(a * dim + i, b * dim + j)];
                    }
                }
            }
        }
    }
    let g: [[f64; 3]; 3] = std::array::from_fn(|_| std::array::from_fn(|_| rng.random_range(-1.0..1.0)));
    let u: Vec<f64> = nodes
        .iter()
        .flat_map(|x| (0..dim).map(move |i| 0.3 + (0..dim).map(|j| g[i][j] * x[j]).sum::<f64>()))
        .collect();
    let f = k.mul_vec(&u).unwrap();
    let scale = k.max_abs() * u.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    for (node, &b) in boundary.iter().enumerate() {
        if !b {
            for i in 0..dim {
                assert!(
                    f[node * dim + i].abs() <= 1e-11 * scale,
                    "{}: interior node {node} has force {}",
                    E::NAME,
                    f[node * dim + i]
                );
            }
        }
    }
    // Energy: ε in Voigt order (γ = 2ε off the diagonal), D from the element's material.
    let e = |i: usize, j: usize| (g[i][j] + g[j][i]) / 2.0;
    let voigt: Vec<f64> = if dim == 2 {
        vec![e(0, 0), e(1, 1), 2.0 * e(0, 1)]
    } else {
        vec![e(0, 0), e(1, 1), e(2, 2), 2.0 * e(1, 2), 2.0 * e(0, 2), 2.0 * e(0, 1)]
    };
    let d = E::material(&m);
    let t = if dim == 2 { m.h } else { 1.0 };
    let want = 0.5
        * t
        * d.mul_vec(&voigt)
            .unwrap()
            .iter()
            .zip(&voigt)
            .map(|(a, b)| a * b)
            .sum::<f64>();
    let got = 0.5 * u.iter().zip(&f).map(|(a, b)| a * b).sum::<f64>();
    assert!(
        (got - want).abs() <= 1e-11 * want,
        "{}: energy {got}, exact {want}",
        E::NAME
    );
}

#[test]
fn patch_tests_pass_on_distorted_unstructured_meshes() {
    patch_test::<Tri3>(11);
    patch_test::<Tri6>(12);
    patch_test::<Tet4>(13);
    patch_test::<Tet10>(14);
}

fn device_equals_host<E: Element<Material = Solid>>(seed: u64, curve: f64) {
    let dev = common::device();
    let mut rng = common::rng(seed);
    let m = 7;
    let mut coords = Vec::new();
    let mut mats = Vec::new();
    for _ in 0..m {
        let v = random_simplex(&mut rng, E::DIM);
        coords.extend(
            nodes_on::<E>(&v, curve, &mut rng)
                .iter()
                .flat_map(|x| x[..E::DIM].to_vec()),
        );
        mats.push(solid(&mut rng));
    }
    let reference = forming::form_host::<E>(&coords, &mats, 1).unwrap();
    // The host forming equals the element's own stiffness.
    let np = packed_len(E::NODES * E::DOFS);
    let per = E::NODES * E::DIM;
    for e in 0..m {
        let x: Vec<&[f64]> = coords[e * per..(e + 1) * per].chunks(E::DIM).collect();
        let k = matrices::stiffness::<E, _>(&x, &mats[e]).unwrap();
        let packed = forming::unpack(&reference[e * np..(e + 1) * np], E::NODES * E::DOFS);
        for i in 0..k.rows() {
            for j in 0..k.cols() {
                assert!(
                    (k[(i, j)] - packed[(i, j)]).abs() <= 1e-12 * k.max_abs(),
                    "{}: host forming",
                    E::NAME
                );
            }
        }
    }
    let forming = Forming::<E>::new(&dev).unwrap();
    let elements = forming.upload(&coords, &mats).unwrap();
    let algos = [
        Algorithm::PerElement,
        Algorithm::PerPoint { elements: 1 },
        Algorithm::default_for::<E>(),
    ];
    for a in algos {
        let got = forming.form(&elements, a).unwrap().0.to_host().unwrap();
        for e in 0..m {
            let block = &reference[e * np..(e + 1) * np];
            let s = block.iter().fold(0.0f64, |x, v| x.max(v.abs()));
            for (i, (g, h)) in got[e * np..(e + 1) * np].iter().zip(block).enumerate() {
                assert!(
                    (g - h).abs() <= 1e-12 * s,
                    "{} {}: element {e} entry {i}: {g} vs {h}",
                    E::NAME,
                    a.label()
                );
            }
        }
    }
}

#[test]
fn device_element_matrices_equal_the_host_for_simplices() {
    device_equals_host::<Tri3>(21, 0.0);
    device_equals_host::<Tri6>(22, 0.05);
    device_equals_host::<Tet4>(23, 0.0);
    device_equals_host::<Tet10>(24, 0.04);
}

#[test]
fn a_simplex_on_a_box_grid_or_inverted_is_refused() {
    let grid = StructuredMesh::new(2, 1, [2, 2, 1], [1.0; 3]).unwrap();
    let m = Solid {
        e: 1.0,
        nu: 0.3,
        rho: 1.0,
        h: 1.0,
    };
    match Model::of::<Tri3>(Mesh::Structured(grid), &m) {
        Err(Error::MeshMismatch { element, needs, .. }) => {
            assert_eq!(element, "tri3");
            assert!(needs.contains("unstructured"), "{needs}");
        }
        other => panic!("{other:?}"),
    }
    // Clockwise vertices: negative det J.
    let cw = [[0.0, 0.0], [0.0, 1.0], [1.0, 0.0]];
    assert!(matrices::stiffness::<Tri3, _>(&cw, &m).is_err());
}

/// A simplex's source holds only the unstructured schedules' kernels; the launchers of the
/// box-grid schedules are typed errors naming why, in either precision.
#[test]
fn a_simplex_has_no_box_grid_kernels() {
    for source in [Tri3::SOURCE, Tet4::SOURCE] {
        for absent in ["_coloured(", "_computed(", "_blocked(", "_gather(", "_stress("] {
            assert!(!source.contains(absent), "{absent} generated for a simplex");
        }
        for present in [
            "_unstructured(",
            "_unstructured_pe(",
            "_stress_unstructured_pe(",
            "_gather_unstructured(",
            "_kick(",
            "_integrate(",
        ] {
            assert!(source.contains(present), "{present} missing");
        }
    }
    let device = common::device();
    let program = device
        .program(Tet4::NAME, Tet4::SOURCE, "-D CLFORGE_REAL_DOUBLE")
        .unwrap();
    let buffer = |n: usize| Buffer::<f64>::new(&device, n).unwrap();
    let (k, u, mut f) = (buffer(1), buffer(1), buffer(1));
    let nodes = Buffer::<i32>::new(&device, 4).unwrap();
    let at = At {
        program: &program,
        global: &[1, 1, 1],
        local: None,
    };
    let kernels = Tet4::spec().kernels.unwrap() as &dyn ElementKernels<f64>;
    match kernels.coloured(at, &k, &nodes, &u, &mut f, 1, 1, 1, 0, 0, 0) {
        Err(Error::InvalidConfig(msg)) => assert!(msg.contains("tet4_coloured") && msg.contains("simplex"), "{msg}"),
        other => panic!("{other:?}"),
    }
}

/// One declaration at two quadrature orders (`WithQuadrature`): equal where both rules are
/// exact (an affine tri6), different where the integrand is rational (a curved one); the device
/// kernels follow the rule of the type they are built for.
#[test]
fn an_element_at_another_quadrature_shares_its_declaration() {
    use clforge::runtime::element::WithQuadrature;
    type Tri6Q5 = WithQuadrature<Tri6, 5>;
    type Tet4Q3 = WithQuadrature<Tet4, 3>;
    assert_eq!((Tri6Q5::QUADRATURE, Tri6Q5::NODES, Tri6Q5::CELL), (5, 6, Cell::Simplex));
    let mut rng = common::rng(41);
    let m = solid(&mut rng);
    let v = random_simplex(&mut rng, 2);
    for (curve, equal) in [(0.0, true), (0.08, false)] {
        let nodes = nodes_on::<Tri6>(&v, curve, &mut rng);
        let x: Vec<&[f64]> = nodes.iter().map(|p| &p[..2]).collect();
        let a = matrices::stiffness::<Tri6, _>(&x, &m).unwrap();
        let b = matrices::stiffness::<Tri6Q5, _>(&x, &m).unwrap();
        let diff = a
            .data()
            .iter()
            .zip(b.data())
            .fold(0.0f64, |d, (p, q)| d.max((p - q).abs()));
        assert_eq!(diff <= 1e-12 * a.max_abs(), equal, "curve {curve}: difference {diff:e}");
    }
    device_equals_host::<Tet4Q3>(42, 0.0);
    assert_eq!(
        matrices::quadrature_points::<Tet4Q3>().unwrap().len(),
        Cell::Simplex.points(3, 3)
    );
}
