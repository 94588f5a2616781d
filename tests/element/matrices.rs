//! Host element matrices of the declared elements: the closed form of the bilinear quad,
//! symmetry, definiteness and rigid-body null spaces, the patch test on a distorted mesh,
//! mass totals, and the macro's symbolic derivatives against finite differences.

use crate::elements;

use clforge::runtime::element::matrices::{self, gauss_legendre};
use clforge::runtime::element::{Element, Matrix};
use clforge::runtime::Error;
use elements::hex8::{Hex8, Solid};
use elements::quad4::{Plate, Quad4};
use elements::quad4_heat::{Conductor, Quad4Heat};
use elements::quad9::{Body, Quad9};

const STEEL: Plate = Plate {
    e: 210e9,
    nu: 0.3,
    rho: 7800.0,
    thickness: 0.01,
};
const BODY: Body = Body {
    e: 70e9,
    nu: 0.33,
    rho: 2700.0,
};
const SOLID: Solid = Solid {
    lambda: 1.2e11,
    mu: 8.1e10,
    rho: 7800.0,
};
const HEAT: Conductor = Conductor {
    kx: 50.0,
    ky: 20.0,
    rho_c: 3.6e6,
};

/// A distorted convex quad, counter-clockwise.
const QUAD: [[f64; 2]; 4] = [[0.0, 0.0], [2.2, 0.3], [2.0, 1.9], [-0.1, 1.5]];

fn quad9_coords() -> Vec<[f64; 2]> {
    // Corners of QUAD, mid-sides near the edges' middles, the centre off-centre: curved edges.
    let c = QUAD;
    let mid = |a: [f64; 2], b: [f64; 2], d: [f64; 2]| [(a[0] + b[0]) / 2.0 + d[0], (a[1] + b[1]) / 2.0 + d[1]];
    vec![
        c[0],
        c[1],
        c[2],
        c[3],
        mid(c[0], c[1], [0.05, -0.04]),
        mid(c[1], c[2], [0.06, 0.02]),
        mid(c[2], c[3], [-0.03, 0.05]),
        mid(c[3], c[0], [-0.04, 0.0]),
        [1.05, 0.95],
    ]
}

fn hex8_coords() -> Vec<[f64; 3]> {
    let bump = [0.0, 0.1, -0.05, 0.08, 0.03, -0.07, 0.12, -0.02];
    Hex8::local_nodes()
        .iter()
        .zip(bump)
        .map(|(p, b)| [1.5 * (p[0] + 1.0) + b, (p[1] + 1.0) + 0.5 * b, 0.8 * (p[2] + 1.0) - b])
        .collect()
}

// ---- small dense linear algebra for the checks -------------------------------------------

/// Eigenvalues of a symmetric matrix by cyclic Jacobi rotations.
fn symmetric_eigenvalues(m: &Matrix) -> Vec<f64> {
    let n = m.rows();
    let mut a = m.clone();
    for _sweep in 0..100 {
        let off: f64 = (0..n)
            .flat_map(|i| (0..n).filter(move |&j| j != i).map(move |j| (i, j)))
            .map(|(i, j)| a[(i, j)].powi(2))
            .sum();
        if off <= 1e-30 * a.max_abs().powi(2) {
            break;
        }
        for p in 0..n {
            for q in p + 1..n {
                if a[(p, q)] == 0.0 {
                    continue;
                }
                let theta = (a[(q, q)] - a[(p, p)]) / (2.0 * a[(p, q)]);
                let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
                let t = if theta == 0.0 { 1.0 } else { t };
                let c = 1.0 / (t * t + 1.0).sqrt();
                let s = t * c;
                for k in 0..n {
                    let (akp, akq) = (a[(k, p)], a[(k, q)]);
                    a[(k, p)] = c * akp - s * akq;
                    a[(k, q)] = s * akp + c * akq;
                }
                for k in 0..n {
                    let (apk, aqk) = (a[(p, k)], a[(q, k)]);
                    a[(p, k)] = c * apk - s * aqk;
                    a[(q, k)] = s * apk + c * aqk;
                }
            }
        }
    }
    let mut ev: Vec<f64> = (0..n).map(|i| a[(i, i)]).collect();
    ev.sort_by(f64::total_cmp);
    ev
}

/// Solves `A x = b` by Gaussian elimination with partial pivoting.
fn solve(a: &Matrix, b: &[f64]) -> Vec<f64> {
    let n = a.rows();
    let mut m = Matrix::from_fn(n, n + 1, |i, j| if j < n { a[(i, j)] } else { b[i] });
    for col in 0..n {
        let piv = (col..n)
            .max_by(|&i, &j| m[(i, col)].abs().total_cmp(&m[(j, col)].abs()))
            .unwrap();
        for j in 0..=n {
            let tmp = m[(col, j)];
            m[(col, j)] = m[(piv, j)];
            m[(piv, j)] = tmp;
        }
        for i in col + 1..n {
            let f = m[(i, col)] / m[(col, col)];
            for j in col..=n {
                m[(i, j)] -= f * m[(col, j)];
            }
        }
    }
    let mut x = vec![0.0; n];
    for i in (0..n).rev() {
        let s: f64 = (i + 1..n).map(|j| m[(i, j)] * x[j]).sum();
        x[i] = (m[(i, n)] - s) / m[(i, i)];
    }
    x
}

fn assert_close(what: &str, got: f64, want: f64, rel: f64, scale: f64) {
    assert!(
        (got - want).abs() <= rel * scale.max(want.abs()),
        "{what}: got {got}, want {want}"
    );
}

// ---- K_e of the bilinear rectangle -------------------------------------------------------

/// The closed-form stiffness of a 4-node rectangle `a × b` in plane stress (nodes (0,0), (a,0),
/// (a,b), (0,b); DOFs u1 v1 … u4 v4), exactly integrated: e.g. Cook, Malkus, Plesha & Witt,
/// *Concepts and Applications of Finite Element Analysis*, 4th ed., the bilinear rectangle;
/// `K = E t / (24 (1 - ν²)) · k` with, in terms of the aspect ratios `p = a/b` and `q = b/a`:
fn rectangle_closed_form(e: f64, nu: f64, a: f64, b: f64, t: f64) -> Matrix {
    let (p, q) = (a / b, b / a);
    let k1 = 8.0 * q + 4.0 * (1.0 - nu) * p; // u-u, same node
    let k2 = 8.0 * p + 4.0 * (1.0 - nu) * q; // v-v, same node
    let k3 = 3.0 * (1.0 + nu); // u-v, same node and diagonal opposite
    let k4 = 3.0 * (3.0 * nu - 1.0); // u-v, nodes along an edge
    let ux_edge = -8.0 * q + 2.0 * (1.0 - nu) * p; // u-u, neighbours along x
    let ux_side = 4.0 * q - 4.0 * (1.0 - nu) * p; // u-u, neighbours along y
    let ux_diag = -4.0 * q - 2.0 * (1.0 - nu) * p; // u-u, diagonal
    let vy_edge = -8.0 * p + 2.0 * (1.0 - nu) * q; // v-v, neighbours along y
    let vy_side = 4.0 * p - 4.0 * (1.0 - nu) * q; // v-v, neighbours along x
    let vy_diag = -4.0 * p - 2.0 * (1.0 - nu) * q; // v-v, diagonal
    #[rustfmt::skip]
    let k = [
        [k1,       k3,       ux_edge,  k4,       ux_diag,  -k3,      ux_side,  -k4],
        [k3,       k2,       -k4,      vy_side,  -k3,      vy_diag,  k4,       vy_edge],
        [ux_edge,  -k4,      k1,       -k3,      ux_side,  k4,       ux_diag,  k3],
        [k4,       vy_side,  -k3,      k2,       -k4,      vy_edge,  k3,       vy_diag],
        [ux_diag,  -k3,      ux_side,  -k4,      k1,       k3,       ux_edge,  k4],
        [-k3,      vy_diag,  k4,       vy_edge,  k3,       k2,       -k4,      vy_side],
        [ux_side,  k4,       ux_diag,  k3,       ux_edge,  -k4,      k1,       -k3],
        [-k4,      vy_edge,  k3,       vy_diag,  k4,       vy_side,  -k3,      k2],
    ];
    let f = e * t / (24.0 * (1.0 - nu * nu));
    Matrix::from_fn(8, 8, |i, j| f * k[i][j])
}

#[test]
fn quad4_rectangle_matches_closed_form() {
    for (a, b) in [(1.0, 1.0), (2.0, 0.5), (0.3, 1.7)] {
        let coords = [[0.0, 0.0], [a, 0.0], [a, b], [0.0, b]];
        let k = Quad4::stiffness(&coords, &STEEL).unwrap();
        let want = rectangle_closed_form(STEEL.e, STEEL.nu, a, b, STEEL.thickness);
        let scale = want.max_abs();
        for i in 0..8 {
            for j in 0..8 {
                assert_close(
                    &format!("K[{i}][{j}] of {a}×{b}"),
                    k[(i, j)],
                    want[(i, j)],
                    1e-12,
                    scale,
                );
            }
        }
    }
}

#[test]
fn closed_form_is_not_trivially_satisfied() {
    // A wrong ν or thickness must show: the comparison above can fail.
    let coords = [[0.0, 0.0], [2.0, 0.0], [2.0, 0.5], [0.0, 0.5]];
    let k = Quad4::stiffness(&coords, &STEEL).unwrap();
    let wrong = rectangle_closed_form(STEEL.e, 0.25, 2.0, 0.5, STEEL.thickness);
    assert!((0..64).any(|n| (k[(n / 8, n % 8)] - wrong[(n / 8, n % 8)]).abs() > 1e-6 * wrong.max_abs()));
}

// ---- symmetry, definiteness, null space --------------------------------------------------

/// Symmetric, positive semi-definite, with exactly `null` zero eigenvalues.
fn check_stiffness(name: &str, k: &Matrix, null: usize) {
    let n = k.rows();
    let scale = k.max_abs();
    for i in 0..n {
        for j in 0..n {
            assert!(
                (k[(i, j)] - k[(j, i)]).abs() <= 1e-13 * scale,
                "{name}: K not symmetric at ({i}, {j})"
            );
        }
    }
    let ev = symmetric_eigenvalues(k);
    let max = ev[n - 1];
    assert!(
        ev[0] > -1e-10 * max,
        "{name}: negative eigenvalue {} (max {max})",
        ev[0]
    );
    let zeros = ev.iter().filter(|&&l| l.abs() < 1e-10 * max).count();
    assert_eq!(zeros, null, "{name}: {zeros} zero eigenvalues, expected {null}: {ev:?}");
}

/// Rigid-body motions in 2-D elasticity: two translations and a rotation.
fn rigid_2d(coords: &[[f64; 2]]) -> Vec<Vec<f64>> {
    let tx = coords.iter().flat_map(|_| [1.0, 0.0]).collect();
    let ty = coords.iter().flat_map(|_| [0.0, 1.0]).collect();
    let rot = coords.iter().flat_map(|p| [-p[1], p[0]]).collect();
    vec![tx, ty, rot]
}

fn rigid_3d(coords: &[[f64; 3]]) -> Vec<Vec<f64>> {
    let mut modes = Vec::new();
    for axis in 0..3 {
        modes.push(
            coords
                .iter()
                .flat_map(|_| (0..3).map(move |a| if a == axis { 1.0 } else { 0.0 }))
                .collect(),
        );
    }
    // Rotations about x, y, z: u = ω × x.
    modes.push(coords.iter().flat_map(|p| [0.0, -p[2], p[1]]).collect());
    modes.push(coords.iter().flat_map(|p| [p[2], 0.0, -p[0]]).collect());
    modes.push(coords.iter().flat_map(|p| [-p[1], p[0], 0.0]).collect());
    modes
}

fn check_modes(name: &str, k: &Matrix, modes: &[Vec<f64>]) {
    for (m, u) in modes.iter().enumerate() {
        let f = k.mul_vec(u).unwrap();
        let size = u.iter().fold(0.0f64, |a, v| a.max(v.abs()));
        let worst = f.iter().fold(0.0f64, |a, v| a.max(v.abs()));
        assert!(
            worst <= 1e-11 * k.max_abs() * size,
            "{name}: rigid mode {m} produces force {worst}"
        );
    }
}

#[test]
fn quad4_stiffness_is_symmetric_psd_with_rigid_body_null_space() {
    let k = Quad4::stiffness(&QUAD, &STEEL).unwrap();
    check_stiffness("quad4", &k, 3);
    check_modes("quad4", &k, &rigid_2d(&QUAD));
}

#[test]
fn quad9_stiffness_is_symmetric_psd_with_rigid_body_null_space() {
    let coords = quad9_coords();
    let k = Quad9::stiffness(&coords, &BODY).unwrap();
    assert_eq!(k.rows(), 18);
    check_stiffness("quad9", &k, 3);
    check_modes("quad9", &k, &rigid_2d(&coords));
}

#[test]
fn hex8_stiffness_is_symmetric_psd_with_rigid_body_null_space() {
    let coords = hex8_coords();
    let k = Hex8::stiffness(&coords, &SOLID).unwrap();
    assert_eq!(k.rows(), 24);
    check_stiffness("hex8", &k, 6);
    check_modes("hex8", &k, &rigid_3d(&coords));
}

#[test]
fn diffusion_stiffness_is_symmetric_psd_with_constant_null_space() {
    let k = Quad4Heat::stiffness(&QUAD, &HEAT).unwrap();
    check_stiffness("quad4_heat", &k, 1);
    check_modes("quad4_heat", &k, &[vec![1.0; 4]]);
}

#[test]
fn reduced_quadrature_shows_in_the_null_space() {
    // One Gauss point leaves the bilinear quad's hourglass modes: 5 zero eigenvalues. This is
    // what the null-space check exists to catch, so it must be able to see it.
    struct Quad4Reduced;
    impl Element for Quad4Reduced {
        type Material = Plate;
        const NAME: &'static str = "quad4_reduced";
        const DIM: usize = 2;
        const NODES: usize = 4;
        const DOFS: usize = 2;
        const OPERATOR: clforge::runtime::element::Operator = clforge::runtime::element::Operator::PlaneStress;
        const QUADRATURE: usize = 1;
        fn local_nodes() -> &'static [[f64; 3]] {
            Quad4::local_nodes()
        }
        fn shape(x: [f64; 3]) -> Vec<f64> {
            Quad4::shape(x)
        }
        fn dshape(x: [f64; 3]) -> Matrix {
            Quad4::dshape(x)
        }
        fn material(m: &Plate) -> Matrix {
            Quad4::material(m)
        }
        fn density(m: &Plate) -> f64 {
            Quad4::density(m)
        }
        fn thickness(m: &Plate) -> f64 {
            Quad4::thickness(m)
        }
        fn spec() -> clforge::runtime::element::ElementSpec {
            Quad4::spec()
        }
    }
    let k = matrices::stiffness::<Quad4Reduced, _>(&QUAD, &STEEL).unwrap();
    let ev = symmetric_eigenvalues(&k);
    let zeros = ev.iter().filter(|&&l| l.abs() < 1e-10 * ev[7]).count();
    assert_eq!(zeros, 5);
}

// ---- patch test --------------------------------------------------------------------------

/// A distorted 2×2 patch of quads: 9 nodes, node 4 the only interior one.
/// ```text
/// 6---7---8
/// | 2 | 3 |
/// 3---4---5
/// | 0 | 1 |
/// 0---1---2
/// ```
const PATCH_NODES: [[f64; 2]; 9] = [
    [0.0, 0.0],
    [1.1, 0.1],
    [2.0, 0.0],
    [-0.1, 0.9],
    [0.8, 1.2],
    [2.1, 1.1],
    [0.0, 2.0],
    [1.0, 1.9],
    [2.0, 2.1],
];
const PATCH_ELEMENTS: [[usize; 4]; 4] = [[0, 1, 4, 3], [1, 2, 5, 4], [3, 4, 7, 6], [4, 5, 8, 7]];

/// Assembles the patch's global matrix for an element of `dofs` DOFs per node.
fn assemble<E: Element>(m: &E::Material) -> Matrix {
    let n = PATCH_NODES.len() * E::DOFS;
    let mut k = Matrix::zeros(n, n);
    for el in PATCH_ELEMENTS {
        let coords: Vec<[f64; 2]> = el.iter().map(|&i| PATCH_NODES[i]).collect();
        let ke = matrices::stiffness::<E, _>(&coords, m).unwrap();
        let dof = |a: usize| el[a / E::DOFS] * E::DOFS + a % E::DOFS;
        for a in 0..4 * E::DOFS {
            for b in 0..4 * E::DOFS {
                k[(dof(a), dof(b))] += ke[(a, b)];
            }
        }
    }
    k
}

/// Prescribes `field` on the boundary nodes, solves for the interior node (4), returns all DOFs.
fn solve_patch<E: Element>(m: &E::Material, field: impl Fn([f64; 2]) -> Vec<f64>) -> (Vec<f64>, Vec<f64>) {
    let k = assemble::<E>(m);
    let d = E::DOFS;
    let exact: Vec<f64> = PATCH_NODES.iter().flat_map(|&p| field(p)).collect();
    let free: Vec<usize> = (4 * d..5 * d).collect();
    let fixed: Vec<usize> = (0..PATCH_NODES.len() * d).filter(|i| !free.contains(i)).collect();
    let kff = Matrix::from_fn(d, d, |i, j| k[(free[i], free[j])]);
    let rhs: Vec<f64> = free
        .iter()
        .map(|&i| -fixed.iter().map(|&j| k[(i, j)] * exact[j]).sum::<f64>())
        .collect();
    let ui = solve(&kff, &rhs);
    let mut u = exact.clone();
    for (i, &f) in free.iter().enumerate() {
        u[f] = ui[i];
    }
    (u, exact)
}

#[test]
fn quad4_passes_the_patch_test_on_a_distorted_mesh() {
    // u = 1e-3 (1 + 2x - y), v = 1e-3 (-0.5 + 0.7x + 1.3y): ε = 1e-3 (2, 1.3, -1 + 0.7).
    let field = |p: [f64; 2]| {
        vec![
            1e-3 * (1.0 + 2.0 * p[0] - p[1]),
            1e-3 * (-0.5 + 0.7 * p[0] + 1.3 * p[1]),
        ]
    };
    let (u, exact) = solve_patch::<Quad4>(&STEEL, field);
    for i in 0..u.len() {
        assert_close(&format!("patch DOF {i}"), u[i], exact[i], 1e-12, 1e-3);
    }
    // Constant stress everywhere: D ε at every element's Gauss points and centre.
    let strain = [2e-3, 1.3e-3, -0.3e-3];
    let d = Quad4::material(&STEEL);
    let want: Vec<f64> = (0..3).map(|i| (0..3).map(|j| d[(i, j)] * strain[j]).sum()).collect();
    for el in PATCH_ELEMENTS {
        let coords: Vec<[f64; 2]> = el.iter().map(|&i| PATCH_NODES[i]).collect();
        let ue: Vec<f64> = el.iter().flat_map(|&i| [u[2 * i], u[2 * i + 1]]).collect();
        let g = Quad4::stress_matrix(&coords, &STEEL).unwrap();
        let sigma = g.mul_vec(&ue).unwrap();
        for (local, _) in matrices::quadrature_points::<Quad4>().unwrap() {
            let (b, _) = matrices::b_matrix::<Quad4, _>(&coords, local).unwrap();
            let s = d.mul(&b).unwrap().mul_vec(&ue).unwrap();
            for c in 0..3 {
                assert_close("stress at a Gauss point", s[c], want[c], 1e-9, want[0].abs());
            }
        }
        for c in 0..3 {
            assert_close("stress at the centre (G_e U_e)", sigma[c], want[c], 1e-9, want[0].abs());
        }
    }
}

#[test]
fn patch_test_detects_a_wrong_interior_solution() {
    // The patch test must be able to fail: a quadratic field is not reproduced.
    let field = |p: [f64; 2]| vec![1e-3 * p[0] * p[0], 1e-3 * p[1] * p[0]];
    let (u, exact) = solve_patch::<Quad4>(&STEEL, field);
    assert!((8..10).any(|i| (u[i] - exact[i]).abs() > 1e-6));
}

#[test]
fn diffusion_passes_the_patch_test() {
    let (u, exact) = solve_patch::<Quad4Heat>(&HEAT, |p| vec![3.0 - 0.4 * p[0] + 1.7 * p[1]]);
    for i in 0..u.len() {
        assert_close(&format!("temperature at node {i}"), u[i], exact[i], 1e-12, 1.0);
    }
}

// ---- mass ---------------------------------------------------------------------------------

fn shoelace(p: &[[f64; 2]]) -> f64 {
    (0..p.len())
        .map(|i| p[i][0] * p[(i + 1) % p.len()][1] - p[(i + 1) % p.len()][0] * p[i][1])
        .sum::<f64>()
        / 2.0
}

#[test]
fn lumped_mass_sums_to_the_element_mass() {
    let mass = STEEL.rho * shoelace(&QUAD) * STEEL.thickness;
    let lumped = Quad4::mass_lumped(&QUAD, &STEEL).unwrap();
    assert_close("quad4 lumped total", lumped.iter().sum(), mass, 1e-13, mass);
    // The seed's rule on a rectangle: a quarter of the element's mass at each node.
    let rect = [[0.0, 0.0], [2.0, 0.0], [2.0, 0.5], [0.0, 0.5]];
    for m in Quad4::mass_lumped(&rect, &STEEL).unwrap() {
        assert_close(
            "quad4 rectangle node mass",
            m,
            STEEL.rho * 1.0 * STEEL.thickness / 4.0,
            1e-13,
            1.0,
        );
    }
    // Quad9 with straight edges and centred mid-nodes: the area is the corners' polygon.
    let c = QUAD;
    let mid = |a: [f64; 2], b: [f64; 2]| [(a[0] + b[0]) / 2.0, (a[1] + b[1]) / 2.0];
    let centre = [
        (c[0][0] + c[1][0] + c[2][0] + c[3][0]) / 4.0,
        (c[0][1] + c[1][1] + c[2][1] + c[3][1]) / 4.0,
    ];
    let q9 = [
        c[0],
        c[1],
        c[2],
        c[3],
        mid(c[0], c[1]),
        mid(c[1], c[2]),
        mid(c[2], c[3]),
        mid(c[3], c[0]),
        centre,
    ];
    let lumped = Quad9::mass_lumped(&q9, &BODY).unwrap();
    let mass = BODY.rho * shoelace(&QUAD);
    assert_close("quad9 lumped total", lumped.iter().sum(), mass, 1e-12, mass);
    assert!(lumped.iter().all(|&m| m > 0.0));
    // A box of 3 × 2 × 1.6 made of hex8.
    let boxed: Vec<[f64; 3]> = Hex8::local_nodes()
        .iter()
        .map(|p| [1.5 * (p[0] + 1.0), p[1] + 1.0, 0.8 * (p[2] + 1.0)])
        .collect();
    let lumped = Hex8::mass_lumped(&boxed, &SOLID).unwrap();
    assert_close(
        "hex8 lumped total",
        lumped.iter().sum(),
        SOLID.rho * 3.0 * 2.0 * 1.6,
        1e-13,
        1.0,
    );
}

#[test]
fn consistent_mass_carries_the_element_mass_per_direction() {
    let mass = STEEL.rho * shoelace(&QUAD) * STEEL.thickness;
    let m = Quad4::mass_consistent(&QUAD, &STEEL).unwrap();
    check_stiffness("quad4 consistent mass", &m, 0);
    for dir in 0..2 {
        let u: Vec<f64> = (0..8).map(|i| if i % 2 == dir { 1.0 } else { 0.0 }).collect();
        let total: f64 = m.mul_vec(&u).unwrap().iter().sum();
        assert_close("uᵀ M u for a unit translation", total, mass, 1e-13, mass);
    }
}

// ---- derivatives, quadrature, geometry errors -------------------------------------------

fn check_dshape<E: Element>() {
    let h = 1e-6;
    let points = [
        [0.0, 0.0, 0.0],
        [0.3, -0.7, 0.2],
        [-0.9, 0.55, -0.4],
        [0.61, 0.93, 0.77],
    ];
    for p in points {
        let d = E::dshape(p);
        for axis in 0..E::DIM {
            let (mut lo, mut hi) = (p, p);
            lo[axis] -= h;
            hi[axis] += h;
            let (nl, nh) = (E::shape(lo), E::shape(hi));
            for node in 0..E::NODES {
                let fd = (nh[node] - nl[node]) / (2.0 * h);
                assert_close(
                    &format!("{} dN{node}/d{axis} at {p:?}", E::NAME),
                    d[(axis, node)],
                    fd,
                    1e-8,
                    1.0,
                );
            }
        }
    }
}

#[test]
fn symbolic_derivatives_match_finite_differences() {
    check_dshape::<Quad4>();
    check_dshape::<Quad9>();
    check_dshape::<Hex8>();
    check_dshape::<Quad4Heat>();
}

#[test]
fn generated_dshape_is_exact_where_known() {
    // d/dr of 0.25 (1 - r)(1 - s) is -0.25 (1 - s).
    let d = elements::quad4::quad4::dshape(0.3, -0.5);
    assert_eq!(d[0][0], -0.25 * 1.5);
    assert_eq!(d[1][2], 0.25 * 1.3);
}

#[test]
fn gauss_legendre_is_exact_to_degree_2n_minus_1() {
    for n in 1..=clforge::runtime::abi::MAX_QUADRATURE {
        let rule = gauss_legendre(n).unwrap();
        assert_eq!(rule.len(), n);
        for deg in 0..2 * n as i32 {
            let got: f64 = rule.iter().map(|&(x, w)| w * x.powi(deg)).sum();
            let want = if deg % 2 == 1 { 0.0 } else { 2.0 / (deg as f64 + 1.0) };
            assert_close(&format!("n = {n}, ∫x^{deg}"), got, want, 1e-14, 1.0);
        }
        // And not beyond: x^(2n) is integrated with an error.
        let deg = 2 * n as i32;
        let got: f64 = rule.iter().map(|&(x, w)| w * x.powi(deg)).sum();
        assert!(
            (got - 2.0 / (deg as f64 + 1.0)).abs() > 1e-10,
            "n = {n} integrates x^{deg} exactly?"
        );
    }
    assert!(matches!(gauss_legendre(0), Err(Error::InvalidConfig(_))));
    assert!(matches!(
        gauss_legendre(clforge::runtime::abi::MAX_QUADRATURE + 1),
        Err(Error::InvalidConfig(_))
    ));
}

#[test]
fn inverted_or_wrong_sized_elements_are_typed_errors() {
    let clockwise = [QUAD[0], QUAD[3], QUAD[2], QUAD[1]];
    match Quad4::stiffness(&clockwise, &STEEL) {
        Err(Error::DegenerateElement {
            element: "quad4", det, ..
        }) => assert!(det < 0.0),
        other => panic!("expected DegenerateElement, got {other:?}"),
    }
    let flat = [[0.0, 0.0], [1.0, 0.0], [2.0, 0.0], [3.0, 0.0]];
    assert!(matches!(
        Quad4::mass_lumped(&flat, &STEEL),
        Err(Error::DegenerateElement { .. })
    ));
    assert!(matches!(
        Quad4::stiffness(&QUAD[..3], &STEEL),
        Err(Error::LengthMismatch {
            expected: 4,
            found: 3,
            ..
        })
    ));
    let in_3d = [[0.0, 0.0, 0.0]; 4];
    assert!(matches!(
        Quad4::stiffness(&in_3d, &STEEL),
        Err(Error::LengthMismatch {
            expected: 2,
            found: 3,
            ..
        })
    ));
    let err = Quad4::stiffness(&clockwise, &STEEL).unwrap_err().to_string();
    assert!(err.contains("quad4") && err.contains("counter-clockwise"), "{err}");
}

#[test]
fn specs_place_nodes_on_the_structured_grid() {
    let q4 = Quad4::spec();
    assert_eq!((q4.dim, q4.nodes, q4.dofs, q4.order, q4.strains), (2, 4, 2, 1, 3));
    assert_eq!(q4.node_offsets, &[[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]]);
    let q9 = Quad9::spec();
    assert_eq!((q9.nodes, q9.dofs, q9.order, q9.strains), (9, 2, 2, 3));
    assert_eq!(
        q9.node_offsets[4..],
        [[1, 0, 0], [2, 1, 0], [1, 2, 0], [0, 1, 0], [1, 1, 0]]
    );
    let h8 = Hex8::spec();
    assert_eq!((h8.dim, h8.nodes, h8.dofs, h8.order, h8.strains), (3, 8, 3, 1, 6));
    assert_eq!(h8.node_offsets[6], [1, 1, 1]);
    let heat = Quad4Heat::spec();
    assert_eq!((heat.dofs, heat.strains), (1, 2));
    assert!(!q4.source.is_empty());
}

#[test]
fn stress_matrix_is_three_by_eight_for_quad4() {
    let g = Quad4::stress_matrix(&QUAD, &STEEL).unwrap();
    assert_eq!((g.rows(), g.cols()), (3, 8));
    let g = Hex8::stress_matrix(&hex8_coords(), &SOLID).unwrap();
    assert_eq!((g.rows(), g.cols()), (6, 24));
}
