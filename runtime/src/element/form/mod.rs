//! Element physics as forms, on the host: a bilinear form `a(u, v)` or a linear form `ℓ(v)` is an
//! ordinary Rust function of the trial and test basis at a quadrature point (values, gradients,
//! symmetric gradients, divergence, components), of the point's physical coordinates and of the
//! material, and [`bilinear`] and [`linear`] integrate it over one element of any type (nodal,
//! simplex or modal) into its element matrix or vector:
//!
//! ```text
//! K_(a·DOFS + i),(b·DOFS + j) = Σ_q w_q |J_q| · form(u = N_b e_j, v = N_a e_i, x_q, material)
//! ```
//!
//! Physicists read `k * dot(u.grad(), v.grad()) + c * u.value() * v.value()`. The form is
//! checked to be linear in the trial and in the test function (on combinations of basis
//! functions at the first quadrature point) before it is integrated: a form that is not is a
//! typed error, never a matrix of something else. [`library`] writes the built-in operators in
//! this language; they give the built-in matrices.
//!
//! This is the host half of user forms: the reference every device lowering of a form is to be
//! checked against. Forms are not yet lowered to device kernels (docs/FORMS.md).

pub mod bound;
mod coefficients;
pub mod library;
pub mod newmark;
pub mod time;

pub use coefficients::{coefficients, density};

use crate::element::matrices::{jacobian, quadrature_points, Matrix};
use crate::element::spec::{Basis as ShapeBasis, Element};
use crate::error::{Error, Result};

/// One basis function of a field of `dofs` components at a quadrature point, in physical
/// coordinates: `N e_c`, its value a vector with one non-zero component and its gradient
/// `∂u_c/∂x_k`. Linear combinations of basis functions are fields too ([`Field::combine`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Field {
    dim: usize,
    dofs: usize,
    value: [f64; 3],
    /// `grad[c][k] = ∂u_c/∂x_k`.
    grad: [[f64; 3]; 3],
}

impl Field {
    /// Component `c` of the basis function of shape value `n` and physical gradient `dn`.
    fn basis(dim: usize, dofs: usize, c: usize, n: f64, dn: [f64; 3]) -> Field {
        let mut f = Field::zero(dim, dofs);
        f.value[c] = n;
        f.grad[c] = dn;
        f
    }

    /// The zero field.
    fn zero(dim: usize, dofs: usize) -> Field {
        Field {
            dim,
            dofs,
            value: [0.0; 3],
            grad: [[0.0; 3]; 3],
        }
    }

    /// `a·x + b·y`.
    pub fn combine(a: f64, x: &Field, b: f64, y: &Field) -> Field {
        let mut f = *x;
        for c in 0..3 {
            f.value[c] = a * x.value[c] + b * y.value[c];
            for k in 0..3 {
                f.grad[c][k] = a * x.grad[c][k] + b * y.grad[c][k];
            }
        }
        f
    }

    /// The value of a scalar field (component 0).
    pub fn value(&self) -> f64 {
        self.value[0]
    }

    /// Component `c` of the value (0 beyond the field's components).
    pub fn comp(&self, c: usize) -> f64 {
        self.value.get(c).copied().unwrap_or(0.0)
    }

    /// The value as a vector (components beyond `dofs` are 0).
    pub fn vector(&self) -> [f64; 3] {
        self.value
    }

    /// The gradient of a scalar field, `∇u` (components beyond the dimension are 0).
    pub fn grad(&self) -> [f64; 3] {
        self.grad[0]
    }

    /// The gradient of component `c`, `∇u_c`.
    pub fn grad_of(&self, c: usize) -> [f64; 3] {
        self.grad.get(c).copied().unwrap_or([0.0; 3])
    }

    /// The full gradient, `∂u_c/∂x_k` at `[c][k]`.
    pub fn grad_tensor(&self) -> [[f64; 3]; 3] {
        self.grad
    }

    /// The symmetric gradient (small strain), `(∇u + ∇uᵀ) / 2`.
    pub fn sym_grad(&self) -> [[f64; 3]; 3] {
        let g = self.grad;
        std::array::from_fn(|i| std::array::from_fn(|j| 0.5 * (g[i][j] + g[j][i])))
    }

    /// The divergence, `Σ_c ∂u_c/∂x_c`.
    pub fn div(&self) -> f64 {
        (0..self.dim.min(self.dofs)).map(|c| self.grad[c][c]).sum()
    }

    /// The field's spatial dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The field's components per node.
    pub fn dofs(&self) -> usize {
        self.dofs
    }
}

/// `a · b`.
pub fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a.iter().zip(&b).map(|(x, y)| x * y).sum()
}

/// `A : B = Σ_ij A_ij B_ij`.
pub fn inner(a: [[f64; 3]; 3], b: [[f64; 3]; 3]) -> f64 {
    (0..3).map(|i| dot(a[i], b[i])).sum()
}

/// Where a form is evaluated: the quadrature point's physical and reference coordinates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Position {
    /// Physical coordinates (padded with zeros below 3-D).
    pub x: [f64; 3],
    /// Reference coordinates.
    pub local: [f64; 3],
}

/// One quadrature point of an element: weight times `|J|`, the point, and per shape function
/// its value and physical gradient.
pub(crate) struct At {
    pub(crate) wdet: f64,
    pub(crate) point: Position,
    pub(crate) n: Vec<f64>,
    dn: Vec<[f64; 3]>,
}

/// The quadrature points of `E` on the element with geometry-node coordinates `coords`.
pub(crate) fn points<E: Element, P: AsRef<[f64]>>(coords: &[P]) -> Result<Vec<At>> {
    let mut out = Vec::new();
    for (local, w) in quadrature_points::<E>()? {
        let jac = jacobian::<E, P>(coords, local)?;
        let dn = jac
            .inverse
            .mul(&E::dshape(local))
            .ok_or_else(|| Error::InvalidConfig(format!("`{}::dshape` has the wrong size", E::NAME)))?;
        let n = E::shape(local);
        if n.len() != E::NODES || dn.cols() != E::NODES {
            return Err(Error::LengthMismatch {
                what: format!("values of `{}::shape`", E::NAME),
                expected: E::NODES,
                found: n.len(),
            });
        }
        let geometry = geometry_values::<E>(local, &n);
        let mut x = [0.0; 3];
        for (g, c) in geometry.iter().zip(coords) {
            for (k, xk) in x.iter_mut().enumerate().take(E::DIM) {
                *xk += g * c.as_ref()[k];
            }
        }
        out.push(At {
            wdet: w * jac.det,
            point: Position { x, local },
            dn: (0..E::NODES)
                .map(|a| std::array::from_fn(|k| if k < E::DIM { dn[(k, a)] } else { 0.0 }))
                .collect(),
            n,
        });
    }
    Ok(out)
}

/// The geometry functions' values at `local`: the shape functions of a nodal element, the
/// multilinear vertex functions of a modal one.
fn geometry_values<E: Element>(local: [f64; 3], shape: &[f64]) -> Vec<f64> {
    match E::basis() {
        ShapeBasis::Nodal => shape.to_vec(),
        ShapeBasis::Modal { .. } => E::local_nodes()
            .iter()
            .map(|v| (0..E::DIM).map(|k| 0.5 * (1.0 + v[k] * local[k])).product())
            .collect(),
    }
}

/// The element matrix of the bilinear form `form(u, v, x, material)`: `NODES·DOFS` square, rows
/// the test functions, columns the trial functions, DOFs node by node (as every clforge matrix).
///
/// [`Error::InvalidConfig`] when the form is not linear in `u` or in `v`, or its value is not
/// finite; [`Error::DegenerateElement`] where the element is.
pub fn bilinear<E, P, F>(coords: &[P], material: &E::Material, form: F) -> Result<Matrix>
where
    E: Element,
    P: AsRef<[f64]>,
    F: Fn(&Field, &Field, &Position, &E::Material) -> f64,
{
    let ats = points::<E, P>(coords)?;
    let (dim, dofs) = (E::DIM, E::DOFS);
    let basis = |at: &At, a: usize, c: usize| Field::basis(dim, dofs, c, at.n[a], at.dn[a]);
    if let Some(at) = ats.first() {
        check_bilinear::<E, _>(at, material, &form, &basis)?;
    }
    let n = E::NODES * dofs;
    let mut k = Matrix::zeros(n, n);
    for at in &ats {
        for a in 0..E::NODES {
            for i in 0..dofs {
                let v = basis(at, a, i);
                for b in 0..E::NODES {
                    for j in 0..dofs {
                        let u = basis(at, b, j);
                        k[(a * dofs + i, b * dofs + j)] += at.wdet * form(&u, &v, &at.point, material);
                    }
                }
            }
        }
    }
    finite(k.data(), "bilinear")?;
    Ok(k)
}

/// The element vector of the linear form `form(v, x, material)` (a load): `NODES·DOFS` entries.
///
/// [`Error::InvalidConfig`] when the form is not linear in `v` or its value is not finite.
pub fn linear<E, P, F>(coords: &[P], material: &E::Material, form: F) -> Result<Vec<f64>>
where
    E: Element,
    P: AsRef<[f64]>,
    F: Fn(&Field, &Position, &E::Material) -> f64,
{
    let ats = points::<E, P>(coords)?;
    let (dim, dofs) = (E::DIM, E::DOFS);
    let basis = |at: &At, a: usize, c: usize| Field::basis(dim, dofs, c, at.n[a], at.dn[a]);
    if let Some(at) = ats.first() {
        let (v1, v2) = (basis(at, 0, 0), basis(at, E::NODES - 1, dofs - 1));
        let f = |v: &Field| form(v, &at.point, material);
        linear_in(
            "test",
            f(&Field::combine(0.75, &v1, -1.25, &v2)),
            0.75 * f(&v1) - 1.25 * f(&v2),
            f(&v1).abs().max(f(&v2).abs()),
        )?;
    }
    let mut out = vec![0.0; E::NODES * dofs];
    for at in &ats {
        for a in 0..E::NODES {
            for i in 0..dofs {
                out[a * dofs + i] += at.wdet * form(&basis(at, a, i), &at.point, material);
            }
        }
    }
    finite(&out, "linear")?;
    Ok(out)
}

/// Linearity in the trial and in the test function, on combinations of two basis functions
/// (the first and the last, last component) at one point.
fn check_bilinear<E: Element, F>(
    at: &At,
    material: &E::Material,
    form: &F,
    basis: &dyn Fn(&At, usize, usize) -> Field,
) -> Result<()>
where
    F: Fn(&Field, &Field, &Position, &E::Material) -> f64,
{
    let last = (E::NODES - 1, E::DOFS - 1);
    let (x, y) = (basis(at, 0, 0), basis(at, last.0, last.1));
    let f = |u: &Field, v: &Field| form(u, v, &at.point, material);
    let (a, b) = (0.75, -1.25);
    let mixed = Field::combine(a, &x, b, &y);
    // Terms of a form may cancel (diffusion against advection): compare at the size of the
    // form's values on the basis functions, not of the (possibly cancelled) combination.
    let scale = [f(&x, &y), f(&y, &y), f(&y, &x), f(&x, &x)]
        .iter()
        .fold(0.0f64, |m, v| m.max(v.abs()));
    linear_in("trial", f(&mixed, &y), a * f(&x, &y) + b * f(&y, &y), scale)?;
    linear_in("test", f(&y, &mixed), a * f(&y, &x) + b * f(&y, &y), scale)
}

/// `combined` (the form of a combination) against `separate` (the combination of its values), to
/// 1e-8 of `scale` or of their own size: rounding passes, a non-linear form is off by its own
/// size.
fn linear_in(which: &str, combined: f64, separate: f64, scale: f64) -> Result<()> {
    if let Some(v) = [combined, separate].into_iter().find(|v| !v.is_finite()) {
        return Err(Error::InvalidConfig(format!(
            "the form gives {v} at a quadrature point; every value must be finite"
        )));
    }
    let scale = combined.abs().max(separate.abs()).max(scale);
    if (combined - separate).abs() <= 1e-8 * scale {
        return Ok(());
    }
    Err(Error::InvalidConfig(format!(
        "the form is not linear in its {which} function: on a combination of two basis functions it gives \
         {combined:e}, but the same combination of its values gives {separate:e}; a bilinear form is a sum of \
         terms each with exactly one factor of the trial and one of the test function (a linear form: one of the test)"
    )))
}

fn finite(values: &[f64], what: &str) -> Result<()> {
    match values.iter().position(|v| !v.is_finite()) {
        None => Ok(()),
        Some(i) => Err(Error::InvalidConfig(format!(
            "the {what} form gives {} at entry {i}; every value must be finite",
            values[i]
        ))),
    }
}
