//! A modal element's geometry (its vertices) and 1-D functions (`modes`, or the built-in
//! integrated Legendre family).

use super::shape::ShapeParser;
use super::{array_of, is_f64, require_pub, Geometry};
use crate::model::element::{integrated_legendre, Modal, ShapeFn};
use crate::parse::Errors;
use clforge_abi::modal::Space;
use quote::ToTokens;
use std::collections::HashMap;
use syn::Ident;

/// The generated `shape` and `NODES` (the vertices): public, like the user's would be.
pub(super) fn geometry(name: &Ident, dim: usize) -> Geometry {
    Geometry {
        coords: ["r", "s", "t"][..dim]
            .iter()
            .map(|c| Ident::new(c, name.span()))
            .collect(),
        shape_fns: Vec::new(),
        shape_vis: syn::parse_quote!(pub),
        local_nodes: (0..1usize << dim)
            .map(|v| clforge_abi::modal::vertex(dim, v).map(|k| if k == 0 { -1.0 } else { 1.0 }))
            .map(|mut p| {
                p[dim..].fill(0.0);
                p
            })
            .collect(),
        nodes_tokens: name.to_token_stream(),
    }
}

/// The 1-D functions of a modal element: the user's `modes(x: f64) -> [f64; order + 1]`,
/// checked to be hierarchical (vertex functions `(1 ∓ x)/2`, then bubbles of degree `k` that
/// vanish at both ends), or the built-in integrated Legendre family.
pub(super) fn modal_basis(space: Space, order: usize, modes: Option<&syn::ItemFn>, errors: &mut Errors) -> Modal {
    let Some(f) = modes else {
        return Modal {
            space,
            order,
            modes: integrated_legendre(order),
            user_modes: false,
        };
    };
    let n = order + 1;
    require_pub(&f.vis, &f.sig.ident, errors);
    let mut coord = Vec::new();
    match (f.sig.inputs.len(), f.sig.inputs.first()) {
        (1, Some(syn::FnArg::Typed(pt))) => match (&*pt.pat, is_f64(&pt.ty)) {
            (syn::Pat::Ident(p), true) if p.by_ref.is_none() && p.subpat.is_none() => coord.push(p.ident.clone()),
            _ => errors.spanned(pt, "`modes` takes one local coordinate: `fn modes(x: f64)`"),
        },
        _ => errors.spanned(&f.sig, "`modes` takes one local coordinate: `fn modes(x: f64)`"),
    }
    let mut len_ok = false;
    match &f.sig.output {
        syn::ReturnType::Type(_, ty) => match array_of(ty) {
            Some((elem, len, span)) if is_f64(elem) => {
                len_ok = len == n;
                if len != n {
                    errors.push(syn::Error::new(
                        span,
                        format!("`modes` returns two vertex functions and one bubble per degree 2..={order}: `[f64; {n}]`, found {len}"),
                    ));
                }
            }
            _ => errors.spanned(ty, format!("`modes` returns `[f64; {n}]`")),
        },
        syn::ReturnType::Default => errors.spanned(&f.sig.ident, format!("`modes` returns `[f64; {n}]`")),
    }
    let mut polys = Vec::new();
    if coord.len() == 1 && len_ok {
        let mut sp = ShapeParser {
            coords: &coord,
            lets: HashMap::new(),
            errors,
        };
        let fns = sp.body(&f.block, n);
        if fns.len() == n {
            for (k, m) in fns.iter().enumerate() {
                check_mode(k, m, errors);
            }
            polys = fns.into_iter().map(|m| m.poly).collect();
        }
    }
    Modal {
        space,
        order,
        modes: polys,
        user_modes: true,
    }
}

/// Function `k` of `modes` is the hierarchical 1-D function it stands for.
fn check_mode(k: usize, m: &ShapeFn, errors: &mut Errors) {
    const TOL: f64 = 1e-12;
    let (lo, hi) = (m.poly.eval([-1.0, 0.0, 0.0]), m.poly.eval([1.0, 0.0, 0.0]));
    let degree = m.poly.degree() as usize;
    let problem = match k {
        0 if (lo - 1.0).abs() > TOL || hi.abs() > TOL || degree != 1 => {
            Some(format!("is 1 at x = -1, 0 at x = 1 and linear: `(1.0 - x) / 2.0`; this one is {lo} and {hi} there, of degree {degree}"))
        }
        1 if lo.abs() > TOL || (hi - 1.0).abs() > TOL || degree != 1 => {
            Some(format!("is 0 at x = -1, 1 at x = 1 and linear: `(1.0 + x) / 2.0`; this one is {lo} and {hi} there, of degree {degree}"))
        }
        k if k >= 2 && (lo.abs() > TOL || hi.abs() > TOL || degree != k) => Some(format!(
            "is the bubble of degree {k}: zero at x = ±1 and of degree exactly {k} (e.g. an integrated Legendre polynomial); \
             this one is {lo} and {hi} there, of degree {degree}"
        )),
        _ => None,
    };
    if let Some(p) = problem {
        errors.spanned(&m.tokens, format!("function {k} of `modes` {p}"));
    }
}
