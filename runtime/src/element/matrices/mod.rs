//! Host element matrices of any [`Element`]: Gauss-Legendre quadrature, the Jacobian of the
//! map from local to global coordinates, `B` for each operator, and
//! `K_e = Σ Bᵀ D B w det J` (seed 004, eq. 3), the consistent and lumped mass and the
//! stress-recovery matrix `G_e = D B` at the element centre (seed 000, section 5.2).
//!
//! Node coordinates are given per node, `DIM` numbers each, in the order of the element's
//! `NODES`; degrees of freedom are interleaved per node (`u0, v0, u1, v1, ...`), as the seed's
//! `U.s01 = node_shifts[...]`. In 2-D every integral is multiplied by the element's thickness.
//!
//! ```
//! use clforge_runtime::fem::matrices::gauss_legendre;
//! // Two points integrate cubics exactly on [-1, 1].
//! let rule = gauss_legendre(2).unwrap();
//! let integral: f64 = rule.iter().map(|&(x, w)| w * (x * x * x + x * x)).sum();
//! assert!((integral - 2.0 / 3.0).abs() < 1e-15);
//! ```

pub mod geometry;
pub mod matrix;

pub use matrix::Matrix;

use crate::element::spec::{Element, Operator};
use crate::error::{Error, Result};

/// Highest number of Gauss points per direction the element attribute accepts.
pub const MAX_QUADRATURE: usize = clforge_abi::MAX_QUADRATURE;

/// Gauss-Legendre points and weights on [-1, 1], `n` points (1 ≤ `n` ≤ 6), ascending.
///
/// Computed by Newton's method on the Legendre polynomial `P_n` (converged to rounding), so
/// there is no table to mistype; exact for polynomials up to degree `2n - 1`.
pub fn gauss_legendre(n: usize) -> Result<Vec<(f64, f64)>> {
    if !(1..=MAX_QUADRATURE).contains(&n) {
        return Err(Error::InvalidConfig(format!(
            "Gauss-Legendre quadrature with {n} points; use 1 to {MAX_QUADRATURE} points per direction"
        )));
    }
    let nf = n as f64;
    let mut rule = Vec::with_capacity(n);
    for i in 0..n {
        let mut x = (std::f64::consts::PI * (i as f64 + 0.75) / (nf + 0.5)).cos();
        let mut dp = 1.0;
        for _ in 0..100 {
            // P_n(x) and P_{n-1}(x) by the three-term recurrence.
            let (mut p_prev, mut p) = (1.0, x);
            for k in 2..=n {
                let kf = k as f64;
                let next = ((2.0 * kf - 1.0) * x * p - (kf - 1.0) * p_prev) / kf;
                p_prev = p;
                p = next;
            }
            dp = nf * (x * p - p_prev) / (x * x - 1.0);
            let dx = p / dp;
            x -= dx;
            if dx.abs() < 1e-16 {
                break;
            }
        }
        if x.abs() < 1e-15 {
            x = 0.0;
        }
        rule.push((x, 2.0 / ((1.0 - x * x) * dp * dp)));
    }
    rule.sort_by(|a, b| a.0.total_cmp(&b.0));
    Ok(rule)
}

/// The quadrature points of an element: (local point padded to 3, weight). On a box the tensor
/// Gauss-Legendre points (first axis slowest); on a simplex the collapsed rule of
/// [`simplex_rule`].
pub fn quadrature_points<E: Element>() -> Result<Vec<([f64; 3], f64)>> {
    match E::CELL {
        crate::element::spec::Cell::Cube => cube_rule(E::DIM, E::QUADRATURE),
        crate::element::spec::Cell::Simplex => simplex_rule(E::DIM, E::QUADRATURE),
    }
}

fn cube_rule(dim: usize, n: usize) -> Result<Vec<([f64; 3], f64)>> {
    let rule = gauss_legendre(n)?;
    let mut points = vec![([0.0; 3], 1.0)];
    for axis in 0..dim {
        points = points
            .into_iter()
            .flat_map(|(p, w)| {
                rule.iter().map(move |&(x, wx)| {
                    let mut q = p;
                    q[axis] = x;
                    (q, w * wx)
                })
            })
            .collect();
    }
    Ok(points)
}

/// The collapsed (Duffy) rule on the unit simplex `{x ≥ 0, Σx ≤ 1}` exact to total degree
/// `2n - 1`: Gauss-Legendre on `[0, 1]^dim` mapped by `x = ξ`, `y = (1 - ξ) η`,
/// `z = (1 - ξ)(1 - η) ζ`, the Jacobian `(1 - ξ)^(dim-1) (1 - η)^(dim-2)` in the weights; `ξ`
/// (and `η` in 3-D) get `n + 1` points to integrate the Jacobian's extra degree exactly
/// (`clforge_abi::simplex_points`). Weights sum to the simplex's volume `1/dim!`.
pub fn simplex_rule(dim: usize, n: usize) -> Result<Vec<([f64; 3], f64)>> {
    let unit = |m: usize| -> Result<Vec<(f64, f64)>> {
        Ok(gauss_legendre(m)?
            .into_iter()
            .map(|(x, w)| ((x + 1.0) / 2.0, w / 2.0))
            .collect())
    };
    if !(1..=3).contains(&dim) || n == 0 || n + 1 > MAX_QUADRATURE {
        return Err(Error::InvalidConfig(format!(
            "a simplex rule in {dim} dimensions with n = {n}; use 1 to 3 dimensions and n = 1 to {}",
            MAX_QUADRATURE - 1
        )));
    }
    let (a, c) = (unit(n + 1)?, unit(n)?);
    let mut out = Vec::new();
    match dim {
        1 => out.extend(c.iter().map(|&(x, w)| ([x, 0.0, 0.0], w))),
        2 => {
            for &(xi, wa) in &a {
                for &(eta, wc) in &c {
                    out.push(([xi, (1.0 - xi) * eta, 0.0], wa * wc * (1.0 - xi)));
                }
            }
        }
        _ => {
            for &(xi, wa) in &a {
                for &(eta, wb) in &a {
                    for &(zeta, wc) in &c {
                        out.push((
                            [xi, (1.0 - xi) * eta, (1.0 - xi) * (1.0 - eta) * zeta],
                            wa * wb * wc * (1.0 - xi).powi(2) * (1.0 - eta),
                        ));
                    }
                }
            }
        }
    }
    Ok(out)
}

/// The Jacobian `J = ∂x/∂r` at a local point (`J[a][b] = Σ_i ∂N_i/∂r_a · x_i,b`).
#[derive(Clone, Debug)]
pub struct Jacobian {
    /// `DIM × DIM`.
    pub matrix: Matrix,
    /// `det J`: the ratio of global to local volume; positive for a valid element.
    pub det: f64,
    /// `J⁻¹`, which turns local derivatives into global ones.
    pub inverse: Matrix,
}

fn check_coords<E: Element, P: AsRef<[f64]>>(coords: &[P]) -> Result<()> {
    if coords.len() != E::GEOMETRY_NODES {
        return Err(Error::LengthMismatch {
            what: format!("node coordinates of element `{}`", E::NAME),
            expected: E::GEOMETRY_NODES,
            found: coords.len(),
        });
    }
    for (i, p) in coords.iter().enumerate() {
        if p.as_ref().len() != E::DIM {
            return Err(Error::LengthMismatch {
                what: format!("coordinates of node {i} of element `{}`", E::NAME),
                expected: E::DIM,
                found: p.as_ref().len(),
            });
        }
    }
    Ok(())
}

/// `J`, `det J` and `J⁻¹` at `local`; [`Error::DegenerateElement`] where `det J ≤ 0`.
pub fn jacobian<E: Element, P: AsRef<[f64]>>(coords: &[P], local: [f64; 3]) -> Result<Jacobian> {
    check_coords::<E, P>(coords)?;
    let dn = E::geometry_dshape(local);
    if dn.rows() != E::DIM || dn.cols() != E::GEOMETRY_NODES {
        return Err(Error::InvalidConfig(format!(
            "`{}::geometry_dshape` returned {}×{}, expected {}×{}",
            E::NAME,
            dn.rows(),
            dn.cols(),
            E::DIM,
            E::GEOMETRY_NODES
        )));
    }
    let j = Matrix::from_fn(E::DIM, E::DIM, |a, b| {
        (0..E::GEOMETRY_NODES).map(|i| dn[(a, i)] * coords[i].as_ref()[b]).sum()
    });
    let (det, adj) = match E::DIM {
        1 => (j[(0, 0)], Matrix::identity(1)),
        2 => (
            j[(0, 0)] * j[(1, 1)] - j[(0, 1)] * j[(1, 0)],
            Matrix::from_rows(&[[j[(1, 1)], -j[(0, 1)]], [-j[(1, 0)], j[(0, 0)]]]),
        ),
        3 => {
            // Cofactors, transposed: inverse = adj / det.
            let c = |r0: usize, r1: usize, c0: usize, c1: usize| j[(r0, c0)] * j[(r1, c1)] - j[(r0, c1)] * j[(r1, c0)];
            let adj = Matrix::from_rows(&[
                [c(1, 2, 1, 2), -c(0, 2, 1, 2), c(0, 1, 1, 2)],
                [-c(1, 2, 0, 2), c(0, 2, 0, 2), -c(0, 1, 0, 2)],
                [c(1, 2, 0, 1), -c(0, 2, 0, 1), c(0, 1, 0, 1)],
            ]);
            let det = j[(0, 0)] * adj[(0, 0)] + j[(0, 1)] * adj[(1, 0)] + j[(0, 2)] * adj[(2, 0)];
            (det, adj)
        }
        d => {
            return Err(Error::InvalidConfig(format!(
                "element `{}` has dimension {d}; use 1, 2 or 3",
                E::NAME
            )))
        }
    };
    // Relative to the size of J, so that millimetre and kilometre meshes are judged alike.
    let scale = j.max_abs().powi(E::DIM as i32);
    if det.is_nan() || det <= 1e-12 * scale {
        return Err(Error::DegenerateElement {
            element: E::NAME,
            det,
            local,
        });
    }
    let inverse = Matrix::from_fn(
        E::DIM,
        E::DIM,
        |a, b| if E::DIM == 1 { 1.0 / det } else { adj[(a, b)] / det },
    );
    Ok(Jacobian {
        matrix: j,
        det,
        inverse,
    })
}

fn check_operator<E: Element>() -> Result<()> {
    let ok = match E::OPERATOR {
        Operator::PlaneStress | Operator::PlaneStrain => E::DIM == 2 && E::DOFS == 2,
        Operator::Elasticity => E::DIM == 3 && E::DOFS == 3,
        Operator::Diffusion => E::DOFS == 1,
        Operator::Gradient { dofs } | Operator::Full { dofs } => E::DOFS == dofs,
    };
    if ok {
        Ok(())
    } else {
        Err(Error::InvalidConfig(format!(
            "element `{}`: operator `{}` does not fit dim = {}, dofs = {}",
            E::NAME,
            E::OPERATOR.name(),
            E::DIM,
            E::DOFS
        )))
    }
}

/// The strain-displacement matrix `B` (strains × `NODES·DOFS`) at `local`, and `det J` there.
///
/// Rows: plane elasticity (ε_xx, ε_yy, γ_xy); 3-D (ε_xx, ε_yy, ε_zz, γ_yz, γ_xz, γ_xy), engineering
/// shears (γ = 2ε); diffusion: the gradient (∂/∂x, ∂/∂y, ∂/∂z); the full gradient: `∂u_c/∂x_k`
/// at row `c · dim + k`.
pub fn b_matrix<E: Element, P: AsRef<[f64]>>(coords: &[P], local: [f64; 3]) -> Result<(Matrix, f64)> {
    check_operator::<E>()?;
    let jac = jacobian::<E, P>(coords, local)?;
    let dn = jac
        .inverse
        .mul(&E::dshape(local))
        .ok_or_else(|| Error::InvalidConfig("dshape size".into()))?;
    let d = |axis: usize, node: usize| dn[(axis, node)];
    let n = match E::OPERATOR {
        Operator::Full { .. } => E::shape(local),
        _ => Vec::new(),
    };
    let strains = E::OPERATOR.strains(E::DIM);
    let mut b = Matrix::zeros(strains, E::NODES * E::DOFS);
    for i in 0..E::NODES {
        match E::OPERATOR {
            Operator::PlaneStress | Operator::PlaneStrain => {
                let (u, v) = (2 * i, 2 * i + 1);
                b[(0, u)] = d(0, i);
                b[(1, v)] = d(1, i);
                b[(2, u)] = d(1, i);
                b[(2, v)] = d(0, i);
            }
            Operator::Elasticity => {
                let (u, v, w) = (3 * i, 3 * i + 1, 3 * i + 2);
                b[(0, u)] = d(0, i);
                b[(1, v)] = d(1, i);
                b[(2, w)] = d(2, i);
                b[(3, v)] = d(2, i);
                b[(3, w)] = d(1, i);
                b[(4, u)] = d(2, i);
                b[(4, w)] = d(0, i);
                b[(5, u)] = d(1, i);
                b[(5, v)] = d(0, i);
            }
            Operator::Diffusion => {
                for axis in 0..E::DIM {
                    b[(axis, i)] = d(axis, i);
                }
            }
            Operator::Gradient { dofs } => {
                for c in 0..dofs {
                    for axis in 0..E::DIM {
                        b[(c * E::DIM + axis, dofs * i + c)] = d(axis, i);
                    }
                }
            }
            Operator::Full { dofs } => {
                for c in 0..dofs {
                    b[(c, dofs * i + c)] = n[i];
                    for axis in 0..E::DIM {
                        b[(dofs + c * E::DIM + axis, dofs * i + c)] = d(axis, i);
                    }
                }
            }
        }
    }
    Ok((b, jac.det))
}

fn material_matrix<E: Element>(m: &E::Material) -> Result<Matrix> {
    let d = E::material(m);
    check_material::<E>(&d, None)?;
    Ok(d)
}

/// Refuses a material matrix `D` (of element `e`, where given) that is not `strains` square or
/// not symmetric. Every element matrix is `∫ Bᵀ D B`: the device kernels store one triangle of
/// it and the solvers assume it symmetric, so a non-symmetric `D` is refused on the host and on
/// the device alike rather than formed as one triangle of something else.
pub(crate) fn check_material<E: Element>(d: &Matrix, e: Option<usize>) -> Result<()> {
    let n = E::OPERATOR.strains(E::DIM);
    let whose = e.map_or(String::new(), |e| format!(" (element {e})"));
    if d.rows() != n || d.cols() != n {
        return Err(Error::InvalidConfig(format!(
            "`{}::material` returned {}×{}{whose}; operator `{}` needs {n}×{n}",
            E::NAME,
            d.rows(),
            d.cols(),
            E::OPERATOR.name()
        )));
    }
    let scale = d.max_abs();
    for i in 0..n {
        for j in 0..i {
            let (a, b) = (d[(i, j)], d[(j, i)]);
            // Equal, or apart by rounding only (NaN entries are the forming checks' concern).
            if a != b && (a - b).abs() > 1e-12 * scale {
                return Err(Error::InvalidConfig(format!(
                    "`{}::material` is not symmetric{whose}: D[{i}][{j}] = {a:e} but D[{j}][{i}] = {b:e}; \
                     element matrices need a symmetric material law (a strain-energy density), \
                     write both entries alike",
                    E::NAME
                )));
            }
        }
    }
    Ok(())
}

/// Thickness in 2-D, 1 otherwise; rejects non-positive values.
pub(crate) fn thickness<E: Element>(m: &E::Material) -> Result<f64> {
    let t = if E::DIM == 2 { E::thickness(m) } else { 1.0 };
    if t > 0.0 {
        Ok(t)
    } else {
        Err(Error::InvalidConfig(format!(
            "element `{}` has thickness {t}; it must be positive",
            E::NAME
        )))
    }
}

/// The element stiffness matrix `K_e = Σ_q Bᵀ D B w_q det J_q` (times the thickness in 2-D),
/// `NODES·DOFS` square.
///
/// ```
/// use clforge_runtime::fem::{matrices, Element};
/// # use clforge_runtime::fem::{ElementSpec, Matrix, Operator};
/// # struct Bar;
/// # impl Element for Bar {
/// #     type Material = f64;
/// #     const NAME: &'static str = "bar";
/// #     const DIM: usize = 1; const NODES: usize = 2; const DOFS: usize = 1;
/// #     const OPERATOR: Operator = Operator::Diffusion; const QUADRATURE: usize = 1;
/// #     fn local_nodes() -> &'static [[f64; 3]] { &[[-1.0, 0.0, 0.0], [1.0, 0.0, 0.0]] }
/// #     fn shape(x: [f64; 3]) -> Vec<f64> { vec![(1.0 - x[0]) / 2.0, (1.0 + x[0]) / 2.0] }
/// #     fn dshape(_: [f64; 3]) -> Matrix { Matrix::from_rows(&[[-0.5, 0.5]]) }
/// #     fn material(k: &f64) -> Matrix { Matrix::from_rows(&[[*k]]) }
/// #     fn density(_: &f64) -> f64 { 1.0 }
/// #     fn thickness(_: &f64) -> f64 { 1.0 }
/// #     fn spec() -> ElementSpec {
/// #         ElementSpec { name: "bar", dim: 1, cell: clforge_runtime::fem::Cell::Cube, nodes: 2, dofs: 1, order: 1, node_offsets: &[[0, 0, 0], [1, 0, 0]], strains: 1, source: "", kernels: None }
/// #     }
/// # }
/// // A two-node conduction bar of length 2 and conductivity 3: K = 3/2 [[1, -1], [-1, 1]].
/// let k = matrices::stiffness::<Bar, _>(&[[0.0], [2.0]], &3.0).unwrap();
/// assert_eq!(k, Matrix::from_rows(&[[1.5, -1.5], [-1.5, 1.5]]));
/// ```
pub fn stiffness<E: Element, P: AsRef<[f64]>>(coords: &[P], material: &E::Material) -> Result<Matrix> {
    let d = material_matrix::<E>(material)?;
    let t = thickness::<E>(material)?;
    let n = E::NODES * E::DOFS;
    let mut k = Matrix::zeros(n, n);
    for (local, w) in quadrature_points::<E>()? {
        let (b, det) = b_matrix::<E, P>(coords, local)?;
        let db = d.mul(&b).ok_or_else(|| Error::InvalidConfig("D·B size".into()))?;
        let btdb = b
            .transpose()
            .mul(&db)
            .ok_or_else(|| Error::InvalidConfig("Bᵀ·D·B size".into()))?;
        k.add_scaled(&btdb, w * det * t);
    }
    Ok(k)
}

/// `∫ ρ N_i N_j dV` (times the thickness in 2-D): `NODES` square, one entry per node pair.
fn scalar_mass<E: Element, P: AsRef<[f64]>>(coords: &[P], material: &E::Material) -> Result<Matrix> {
    let rho = E::density(material);
    let t = thickness::<E>(material)?;
    let mut m = Matrix::zeros(E::NODES, E::NODES);
    for (local, w) in quadrature_points::<E>()? {
        let det = jacobian::<E, P>(coords, local)?.det;
        let n = E::shape(local);
        if n.len() != E::NODES {
            return Err(Error::LengthMismatch {
                what: format!("values of `{}::shape`", E::NAME),
                expected: E::NODES,
                found: n.len(),
            });
        }
        for i in 0..E::NODES {
            for j in 0..E::NODES {
                m[(i, j)] += rho * t * w * det * n[i] * n[j];
            }
        }
    }
    Ok(m)
}

/// The consistent mass matrix `M_e = ∫ ρ Nᵀ N dV` (seed 000, eq. 3.1.5), `NODES·DOFS` square:
/// each DOF couples only with the same DOF of other nodes.
pub fn mass_consistent<E: Element, P: AsRef<[f64]>>(coords: &[P], material: &E::Material) -> Result<Matrix> {
    let m = scalar_mass::<E, P>(coords, material)?;
    let n = E::NODES * E::DOFS;
    Ok(Matrix::from_fn(n, n, |a, b| {
        if a % E::DOFS == b % E::DOFS {
            m[(a / E::DOFS, b / E::DOFS)]
        } else {
            0.0
        }
    }))
}

/// How a consistent mass matrix was made diagonal (see `docs/LUMPED-MASS.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lumping {
    /// Row sums of the consistent mass, `m_i = ∫ ρ N_i dV`: used where every row sum is
    /// positive (linear elements, Lagrange quadrilaterals and hexahedra).
    RowSum,
    /// Hinton, Rock & Zienkiewicz (1976): the diagonal of the consistent mass scaled so that
    /// the masses sum to the element's mass, `m_i = M_ii · ρV / Σ_j M_jj`. Used where a row
    /// sum is zero or negative (the corners of 8-node serendipity quads, 20-node serendipity
    /// hexahedra, 6-node triangles and 10-node tetrahedra).
    Hrz,
}

impl Lumping {
    /// `row-sum` or `HRZ`, as the docs write them.
    pub fn name(self) -> &'static str {
        match self {
            Lumping::RowSum => "row-sum",
            Lumping::Hrz => "HRZ",
        }
    }
}

/// An element's lumped masses, one per node, and the scheme that made them.
#[derive(Clone, Debug, PartialEq)]
pub struct LumpedMass {
    /// One mass per node, carried by each of its DOFs; they sum to `ρ · volume` (times the
    /// thickness in 2-D).
    pub masses: Vec<f64>,
    /// Row-sum where every row sum is positive, HRZ otherwise.
    pub scheme: Lumping,
}

/// The lumped (diagonal) mass: one mass per node, carried by each of its DOFs. The masses of
/// [`lumped_mass`], without the scheme.
///
/// On a parallelogram of 4 nodes each node gets 1/4 of the element's mass, the seed's rule
/// (section 3.2).
pub fn mass_lumped<E: Element, P: AsRef<[f64]>>(coords: &[P], material: &E::Material) -> Result<Vec<f64>> {
    Ok(lumped_mass::<E, P>(coords, material)?.masses)
}

/// The lumped mass of one element and how it was lumped, chosen for this element from its
/// consistent scalar mass `M_ij = ∫ ρ N_i N_j dV`:
///
/// - [`Lumping::RowSum`] where every row sum `Σ_j M_ij = ∫ ρ N_i dV` is positive (above
///   10⁻¹⁰ of the element's mass, so that a row sum that is zero but for rounding counts as
///   zero);
/// - [`Lumping::Hrz`] otherwise: `m_i = M_ii · ρV / Σ_j M_jj`, positive for any element.
///
/// Either way the masses sum to the element's mass `ρV = ∫ ρ dV` (times the thickness in
/// 2-D). [`Error::LumpedMass`] names the element where that total is not positive and finite
/// (check `density`), where the row sums do not add up to it (shape functions that do not sum
/// to one) and for a modal element (its modes are not nodes).
///
/// ```
/// use clforge_runtime::fem::{matrices::{self, Lumping}, Element};
/// # use clforge_runtime::fem::{ElementSpec, Matrix, Operator};
/// # struct Bar3;
/// # impl Element for Bar3 {
/// #     type Material = f64;
/// #     const NAME: &'static str = "bar3";
/// #     const DIM: usize = 1; const NODES: usize = 3; const DOFS: usize = 1;
/// #     const OPERATOR: Operator = Operator::Diffusion; const QUADRATURE: usize = 3;
/// #     fn local_nodes() -> &'static [[f64; 3]] { &[[-1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]] }
/// #     fn shape(x: [f64; 3]) -> Vec<f64> {
/// #         let r = x[0];
/// #         vec![0.5 * r * (r - 1.0), 0.5 * r * (r + 1.0), 1.0 - r * r]
/// #     }
/// #     fn dshape(x: [f64; 3]) -> Matrix { let r = x[0]; Matrix::from_rows(&[[r - 0.5, r + 0.5, -2.0 * r]]) }
/// #     fn material(k: &f64) -> Matrix { Matrix::from_rows(&[[*k]]) }
/// #     fn density(rho: &f64) -> f64 { *rho }
/// #     fn thickness(_: &f64) -> f64 { 1.0 }
/// #     fn spec() -> ElementSpec {
/// #         ElementSpec { name: "bar3", dim: 1, cell: clforge_runtime::fem::Cell::Cube, nodes: 3, dofs: 1, order: 2, node_offsets: &[[0, 0, 0], [2, 0, 0], [1, 0, 0]], strains: 1, source: "", kernels: None }
/// #     }
/// # }
/// // A quadratic bar of length 6 and density 2: Simpson's weights 1/6, 1/6, 2/3 of 12.
/// let lumped = matrices::lumped_mass::<Bar3, _>(&[[0.0], [6.0], [3.0]], &2.0).unwrap();
/// assert_eq!(lumped.scheme, Lumping::RowSum);
/// for (m, expected) in lumped.masses.iter().zip([2.0, 2.0, 8.0]) {
///     assert!((m - expected).abs() < 1e-12);
/// }
/// ```
pub fn lumped_mass<E: Element, P: AsRef<[f64]>>(coords: &[P], material: &E::Material) -> Result<LumpedMass> {
    if let crate::element::spec::Basis::Modal { .. } = E::basis() {
        return Err(Error::LumpedMass {
            element: E::NAME,
            detail: "its shape functions are hierarchical modes, not nodes, so there is nothing to lump onto; \
                     use the consistent mass (`mass_consistent`)"
                .into(),
        });
    }
    let m = scalar_mass::<E, P>(coords, material)?;
    let total = element_mass::<E, P>(coords, material)?;
    let rows = (0..E::NODES).map(|i| m.row(i).iter().sum()).collect();
    let diagonal = (0..E::NODES).map(|i| m[(i, i)]).collect();
    lump(E::NAME, rows, diagonal, total)
}

/// `∫ ρ dV` (times the thickness in 2-D) by the element's quadrature: the total of its lumped
/// masses.
fn element_mass<E: Element, P: AsRef<[f64]>>(coords: &[P], material: &E::Material) -> Result<f64> {
    let rho = E::density(material);
    let t = thickness::<E>(material)?;
    let mut total = 0.0;
    for (local, w) in quadrature_points::<E>()? {
        total += rho * t * w * jacobian::<E, P>(coords, local)?.det;
    }
    Ok(total)
}

/// Lumped masses from the row sums and diagonal of a consistent scalar mass whose entries add
/// up to `total` (the element's mass): row-sum lumping where every row sum is positive, HRZ
/// otherwise. Shared by [`lumped_mass`] and `Model::new` (which passes the reference element's
/// Lagrange integrals, `total` 1).
pub(crate) fn lump(element: &'static str, rows: Vec<f64>, diagonal: Vec<f64>, total: f64) -> Result<LumpedMass> {
    let refuse = |detail: String| Err(Error::LumpedMass { element, detail });
    if !(total.is_finite() && total > 0.0) {
        return refuse(format!(
            "its mass ∫ ρ dV is {total:e}; it must be positive and finite (check `density` and `thickness`)"
        ));
    }
    let sum: f64 = rows.iter().sum();
    // The entries of M sum to ∫ ρ (Σ N_i)² dV, which is ρV exactly when the N_i sum to one.
    if sum.is_nan() || (sum - total).abs() > 1e-9 * total {
        return refuse(format!(
            "its consistent mass sums to {sum:e} but its mass ∫ ρ dV is {total:e}; the shape functions must \
             sum to one at every point (partition of unity)"
        ));
    }
    // A row sum at rounding level above zero (a tri6 corner) is a zero row sum.
    if rows.iter().all(|&r| r > 1e-10 * total) {
        return Ok(LumpedMass {
            masses: rows,
            scheme: Lumping::RowSum,
        });
    }
    let trace: f64 = diagonal.iter().sum();
    match diagonal.iter().position(|&d| !(d.is_finite() && d > 0.0)) {
        Some(i) => refuse(format!(
            "the diagonal of its consistent mass is {:e} at node {i}; ∫ ρ N_i² dV must be positive",
            diagonal[i]
        )),
        None => Ok(LumpedMass {
            masses: diagonal.iter().map(|&d| d * total / trace).collect(),
            scheme: Lumping::Hrz,
        }),
    }
}

/// The stress-recovery matrix `G_e = D B` at the element centre (the centroid of the local
/// nodes): `σ = G_e · U_e`, strains × `NODES·DOFS` (seed 000, section 5.2: 3×8 for quad4).
pub fn stress_matrix<E: Element, P: AsRef<[f64]>>(coords: &[P], material: &E::Material) -> Result<Matrix> {
    let d = material_matrix::<E>(material)?;
    let nodes = E::local_nodes();
    let mut centre = [0.0; 3];
    for p in nodes {
        for a in 0..3 {
            centre[a] += p[a] / nodes.len().max(1) as f64;
        }
    }
    let (b, _) = b_matrix::<E, P>(coords, centre)?;
    d.mul(&b).ok_or_else(|| Error::InvalidConfig("D·B size".into()))
}
