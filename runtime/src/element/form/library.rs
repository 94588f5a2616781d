//! The built-in operators and masses written as forms ([`super::bilinear`]): what a user reads
//! and copies to write their own physics. Each gives the matrix the built-in host function gives
//! (`matrices::stiffness`, `matrices::mass_consistent`); the tests compare them.

use super::{dot, inner, Field, Position};
use crate::element::matrices::{check_material, thickness, Matrix};
use crate::element::spec::{Element, Operator};
use crate::error::Result;

/// The strains of `f` in `op`'s order: plane (ε_xx, ε_yy, γ_xy); 3-D (ε_xx, ε_yy, ε_zz, γ_yz,
/// γ_xz, γ_xy), engineering shears; diffusion: the gradient.
pub fn strains(op: Operator, f: &Field) -> Vec<f64> {
    let g = f.grad_tensor();
    match op {
        Operator::PlaneStress | Operator::PlaneStrain => vec![g[0][0], g[1][1], g[0][1] + g[1][0]],
        Operator::Elasticity => vec![
            g[0][0],
            g[1][1],
            g[2][2],
            g[1][2] + g[2][1],
            g[0][2] + g[2][0],
            g[0][1] + g[1][0],
        ],
        Operator::Diffusion => f.grad()[..f.dim()].to_vec(),
        Operator::Gradient { dofs } => (0..dofs)
            .flat_map(|c| (0..f.dim()).map(move |k| f.grad_of(c)[k]))
            .collect(),
        Operator::Full { dofs } => (0..dofs)
            .map(|c| f.comp(c))
            .chain((0..dofs).flat_map(|c| (0..f.dim()).map(move |k| f.grad_of(c)[k])))
            .collect(),
    }
}

/// `E`'s own operator as a form, `ε(v)ᵀ D ε(u)` times the thickness in 2-D, with `D` and the
/// thickness of `material` (checked as the built-ins check them).
pub fn operator<E: Element>(material: &E::Material) -> Result<impl Fn(&Field, &Field, &Position, &E::Material) -> f64> {
    let d = E::material(material);
    check_material::<E>(&d, None)?;
    let t = thickness::<E>(material)?;
    Ok(move |u: &Field, v: &Field, _: &Position, _: &E::Material| {
        let (eu, ev) = (strains(E::OPERATOR, u), strains(E::OPERATOR, v));
        t * quadratic(&d, &ev, &eu)
    })
}

/// `ρ u · v` times the thickness in 2-D: the consistent mass.
pub fn mass<E: Element>(material: &E::Material) -> Result<impl Fn(&Field, &Field, &Position, &E::Material) -> f64> {
    let rho = E::density(material);
    let t = thickness::<E>(material)?;
    Ok(move |u: &Field, v: &Field, _: &Position, _: &E::Material| rho * t * dot(u.vector(), v.vector()))
}

/// Isotropic elasticity in Lamé's form, `λ div u div v + 2μ ε(u) : ε(v)`: 3-D elasticity, or
/// plane strain in 2-D.
pub fn lame<M>(lambda: f64, mu: f64) -> impl Fn(&Field, &Field, &Position, &M) -> f64 {
    move |u: &Field, v: &Field, _: &Position, _: &M| {
        lambda * u.div() * v.div() + 2.0 * mu * inner(u.sym_grad(), v.sym_grad())
    }
}

/// Isotropic conduction, `k ∇u · ∇v`.
pub fn conduction<M>(k: f64) -> impl Fn(&Field, &Field, &Position, &M) -> f64 {
    move |u: &Field, v: &Field, _: &Position, _: &M| k * dot(u.grad(), v.grad())
}

/// `xᵀ D y`.
fn quadratic(d: &Matrix, x: &[f64], y: &[f64]) -> f64 {
    (0..x.len())
        .map(|i| x[i] * (0..y.len()).map(|j| d[(i, j)] * y[j]).sum::<f64>())
        .sum()
}
