//! Element model -> what the host code and the templates need: symbolic derivatives of the
//! shape functions (exact, on polynomials), checks that the shape functions interpolate at
//! their nodes, and the nodes' places on a structured node grid.

use crate::model::element::{Element, Poly};
use crate::render_element::ElementView;

/// A lowered element: the derivative polynomials as Rust expression text, and the template view.
pub struct LoweredElement {
    /// `dshape[axis][node]` as Rust source (`-0.25 + 0.25 * s`).
    pub dshape: Vec<Vec<String>>,
    pub view: ElementView,
}

const TOL: f64 = 1e-9;

pub fn lower_element(e: &Element) -> syn::Result<LoweredElement> {
    check_interpolation(e)?;
    let (order, node_offsets) = grid_offsets(e)?;
    let dshape = (0..e.dim)
        .map(|axis| {
            e.shape
                .iter()
                .map(|n| rust_poly(&n.poly.derivative(axis), &e.coords))
                .collect()
        })
        .collect();
    let view = ElementView {
        name: e.name.to_string(),
        doc: e.doc.clone(),
        file: e.file.clone(),
        line: e.line,
        dim: e.dim,
        nodes: e.nodes,
        dofs: e.dofs,
        order,
        node_offsets,
        strains: e.operator.strains(e.dim),
    };
    Ok(LoweredElement { dshape, view })
}

/// `N_i(node_j) = δ_ij`: without it nodal values are not the field's values at the nodes, so a
/// wrong sign or a swapped node is caught here rather than as a wrong stiffness.
fn check_interpolation(e: &Element) -> syn::Result<()> {
    let mut errors = crate::parse::Errors::default();
    for (i, n) in e.shape.iter().enumerate() {
        for (j, node) in e.local_nodes.iter().enumerate() {
            let want = if i == j { 1.0 } else { 0.0 };
            let got = n.poly.eval(*node);
            if (got - want).abs() > TOL {
                let at: Vec<String> = node[..e.dim].iter().map(|v| format!("{v:?}")).collect();
                errors.push(syn::Error::new_spanned(
                    &n.tokens,
                    format!(
                        "shape function {i} is {got} at node {j} ({}) but must be {want}: each shape function is 1 at its own node of `NODES` and 0 at the others",
                        at.join(", ")
                    ),
                ));
                break;
            }
        }
    }
    errors.finish()
}

/// Node-grid steps per element edge and each node's offset: local -1 -> 0, +1 -> `order`.
fn grid_offsets(e: &Element) -> syn::Result<(usize, Vec<[usize; 3]>)> {
    let mut order = 1;
    for axis in 0..e.dim {
        let mut values: Vec<f64> = e.local_nodes.iter().map(|p| p[axis]).collect();
        values.sort_by(f64::total_cmp);
        values.dedup_by(|a, b| (*a - *b).abs() < TOL);
        order = order.max(values.len().saturating_sub(1));
    }
    let mut offsets = Vec::new();
    for p in &e.local_nodes {
        let mut o = [0usize; 3];
        for axis in 0..e.dim {
            let step = (p[axis] + 1.0) / 2.0 * order as f64;
            if (step - step.round()).abs() > TOL {
                return Err(syn::Error::new_spanned(
                    &e.nodes_tokens,
                    format!(
                        "the local nodes must lie on a regular grid of [-1, 1] with {} points per direction (corners at ±1{}), so that elements map onto a structured node grid",
                        order + 1,
                        if order == 2 { ", mid-sides at 0" } else { "" }
                    ),
                ));
            }
            o[axis] = step.round() as usize;
        }
        offsets.push(o);
    }
    Ok((order, offsets))
}

/// A float literal Rust reads back as the same `f64`.
fn literal(v: f64) -> String {
    let s = format!("{v:?}");
    if s.contains('.') || s.contains('e') || s.contains("inf") || s.contains("NaN") {
        s
    } else {
        format!("{s}.0")
    }
}

/// A polynomial as a Rust expression in the coordinates' names: terms by ascending degree.
pub fn rust_poly(p: &Poly, coords: &[syn::Ident]) -> String {
    let mut terms: Vec<(&[u32; 3], f64)> = p.0.iter().map(|(e, c)| (e, *c)).collect();
    terms.sort_by_key(|(e, _)| (e.iter().sum::<u32>(), std::cmp::Reverse(**e)));
    let mut out = String::new();
    for (e, c) in terms {
        let mut factors: Vec<String> = Vec::new();
        for (axis, &k) in e.iter().enumerate() {
            let Some(name) = coords.get(axis) else { continue };
            match k {
                0 => {}
                1 => factors.push(name.to_string()),
                2 => factors.extend([name.to_string(), name.to_string()]),
                k => factors.push(format!("{name}.powi({k})")),
            }
        }
        let mag = c.abs();
        let body = match (factors.is_empty(), mag == 1.0) {
            (true, _) => literal(mag),
            (false, true) => factors.join(" * "),
            (false, false) => format!("{} * {}", literal(mag), factors.join(" * ")),
        };
        match (out.is_empty(), c < 0.0) {
            (true, false) => out.push_str(&body),
            (true, true) => {
                out.push('-');
                out.push_str(&body)
            }
            (false, false) => {
                out.push_str(" + ");
                out.push_str(&body)
            }
            (false, true) => {
                out.push_str(" - ");
                out.push_str(&body)
            }
        }
    }
    if out.is_empty() {
        out.push_str("0.0");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Vec<syn::Ident> {
        vec![syn::parse_quote!(r), syn::parse_quote!(s)]
    }

    #[test]
    fn derivatives_print_as_rust() {
        // N = (1 - r)(1 - s) / 4
        let n = Poly::constant(1.0)
            .sub(&Poly::var(0))
            .mul(&Poly::constant(1.0).sub(&Poly::var(1)))
            .scale(0.25);
        assert_eq!(rust_poly(&n, &names()), "0.25 - 0.25 * r - 0.25 * s + 0.25 * r * s");
        assert_eq!(rust_poly(&n.derivative(0), &names()), "-0.25 + 0.25 * s");
        assert_eq!(rust_poly(&Poly::var(0).powi(3).derivative(0), &names()), "3.0 * r * r");
        assert_eq!(rust_poly(&Poly::var(1).powi(4), &names()), "s.powi(4)");
        assert_eq!(rust_poly(&Poly::constant(2.0).derivative(1), &names()), "0.0");
    }
}
