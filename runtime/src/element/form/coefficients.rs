//! A form as the built-in pipeline consumes it: `D` over an operator's strains and a scalar
//! density. `#[clforge::element]` generates an element's `material` and `density` from its
//! `#[form(stiffness)]` and `#[form(mass)]` with these, so a form reaches every lowering a
//! built-in operator has (host matrices, device forming in f64, the `float8`/`double8` element
//! products, CSR assembly, per-element matrices) as its coefficients.
//!
//! The macro has checked that the stiffness form reads its fields only through the operator's
//! strains (the scalar gradient, `sym_grad`/`div` for the Voigt strains, the full gradient),
//! that it is bilinear and does not read the point: then
//! `a(u, v) = ε(v)ᵀ D ε(u)` exactly, with `D[s][t] = a(u = unit strain t, v = unit strain s)`.

use super::{Field, Position};
use crate::element::spec::Operator;

/// The point the forms are evaluated at: the macro has checked that they do not read it.
const NOWHERE: Position = Position {
    x: [0.0; 3],
    local: [0.0; 3],
};

/// The field whose strains (in `op`'s order, `clforge_abi::modal::b_entries`) are the unit
/// vector `t`: each gradient entry feeding strain `t` gets an equal share (`γ_xy = 1` is
/// `∂u/∂y = ∂v/∂x = ½`).
fn unit_strain(op: Operator, dim: usize, dofs: usize, t: usize) -> Field {
    let entries: Vec<_> = clforge_abi::modal::b_entries(dim, dofs, op.strains(dim))
        .filter(|e| e.0 == t)
        .collect();
    let mut f = Field::zero(dim, dofs);
    for &(_, c, k) in &entries {
        if c >= 3 {
            continue;
        }
        // The axis `dim` marks a value (`Operator::Full`).
        if k == dim {
            f.value[c] = 1.0 / entries.len() as f64;
        } else if k < 3 {
            f.grad[c][k] = 1.0 / entries.len() as f64;
        }
    }
    f
}

/// `D` of a stiffness form over `op`'s `S` strains: `D[s][t] = form(u = ε⁻¹(e_t), v = ε⁻¹(e_s))`.
/// Called by the `material` that `#[clforge::element]` generates from a `#[form(stiffness)]`.
pub fn coefficients<const S: usize, M>(
    op: Operator,
    dim: usize,
    dofs: usize,
    material: &M,
    form: impl Fn(&Field, &Field, &Position, &M) -> f64,
) -> [[f64; S]; S] {
    let units: Vec<Field> = (0..S).map(|t| unit_strain(op, dim, dofs, t)).collect();
    std::array::from_fn(|s| std::array::from_fn(|t| form(&units[t], &units[s], &NOWHERE, material)))
}

/// The density of a mass form `ρ u·v`: the form on a unit value. Called by the `density` that
/// `#[clforge::element]` generates from a `#[form(mass)]` (which it has checked to be a
/// density times `u·v`).
pub fn density<M>(dim: usize, dofs: usize, material: &M, form: impl Fn(&Field, &Field, &Position, &M) -> f64) -> f64 {
    let unit = Field::basis(dim, dofs, 0, 1.0, [0.0; 3]);
    form(&unit, &unit, &NOWHERE, material)
}
