//! A nodal element's `shape` and `NODES`, and the parser of shape functions (Rust
//! expressions -> exact polynomials), which a modal element's `modes` share.

use super::{array_of, is_f64, missing, require_pub, Geometry};
use crate::model::element::{Poly, ShapeFn};
use crate::parse::Errors;
use quote::ToTokens;
use std::collections::HashMap;
use syn::Ident;

/// The geometry of a nodal element: `shape(r, s, ..) -> [f64; nodes]` and
/// `NODES: [[f64; dim]; nodes]`, as the user wrote them.
pub(super) fn geometry(
    name: &Ident,
    shape: Option<&syn::ItemFn>,
    node_const: Option<&syn::ItemConst>,
    dim: usize,
    nodes: usize,
    errors: &mut Errors,
) -> Geometry {
    let mut g = Geometry {
        coords: Vec::new(),
        shape_fns: Vec::new(),
        shape_vis: syn::Visibility::Inherited,
        local_nodes: Vec::new(),
        nodes_tokens: name.to_token_stream(),
    };
    match shape {
        None => errors.push(missing(
            name,
            &format!(
                "`pub fn shape({}) -> [f64; {nodes}]`, the shape functions in local coordinates",
                ["r: f64", "s: f64", "t: f64"][..dim].join(", ")
            ),
        )),
        Some(f) => shape_fn(f, dim, nodes, &mut g, errors),
    }
    match node_const {
        None => errors.push(missing(
            name,
            &format!("`pub const NODES: [[f64; {dim}]; {nodes}]`, the local coordinates of its nodes in [-1, 1]"),
        )),
        Some(c) => nodes_const(c, dim, nodes, &mut g, errors),
    }
    g
}

/// `shape(r, s) -> [f64; nodes]`: its coordinates, visibility and functions.
fn shape_fn(f: &syn::ItemFn, dim: usize, nodes: usize, g: &mut Geometry, errors: &mut Errors) {
    let coords = &mut g.coords;
    require_pub(&f.vis, &f.sig.ident, errors);
    g.shape_vis = f.vis.clone();
    if let Some(g) = f.sig.generics.params.first() {
        errors.spanned(g, "`shape` cannot be generic");
    }
    if f.sig.inputs.len() != dim {
        let msg = format!(
            "`shape` of a {dim}-D element takes {dim} local coordinate{}, found {}: `fn shape({})`",
            if dim == 1 { "" } else { "s" },
            f.sig.inputs.len(),
            ["r: f64", "s: f64", "t: f64"][..dim].join(", ")
        );
        if f.sig.inputs.is_empty() {
            errors.push(syn::Error::new(f.sig.paren_token.span.join(), msg));
        } else {
            errors.spanned(&f.sig.inputs, msg);
        }
    }
    for input in &f.sig.inputs {
        match input {
            syn::FnArg::Typed(pt) => match (&*pt.pat, is_f64(&pt.ty)) {
                (syn::Pat::Ident(p), true) if p.by_ref.is_none() && p.subpat.is_none() => coords.push(p.ident.clone()),
                (syn::Pat::Ident(_), false) => errors.spanned(&pt.ty, "local coordinates are `f64`"),
                (other, _) => errors.spanned(other, "local coordinates must be plain names, e.g. `r: f64`"),
            },
            other => errors.spanned(other, "`shape` is a free function; `self` is not allowed"),
        }
    }
    match &f.sig.output {
        syn::ReturnType::Type(_, ty) => match array_of(ty) {
            Some((elem, n, span)) if is_f64(elem) => {
                if n != nodes {
                    errors.push(syn::Error::new(
                        span,
                        format!(
                            "`shape` returns one value per node: `[f64; {nodes}]` for `nodes = {nodes}`, found {n}"
                        ),
                    ));
                }
            }
            _ => errors.spanned(ty, format!("`shape` returns one value per node: `[f64; {nodes}]`")),
        },
        syn::ReturnType::Default => errors.spanned(&f.sig.ident, format!("`shape` returns `[f64; {nodes}]`")),
    }
    if coords.len() == dim {
        let mut sp = ShapeParser {
            coords,
            lets: HashMap::new(),
            errors,
        };
        g.shape_fns = sp.body(&f.block, nodes);
    }
}

/// `NODES: [[f64; dim]; nodes]`: the nodes' local coordinates and the constant's tokens.
fn nodes_const(c: &syn::ItemConst, dim: usize, nodes: usize, g: &mut Geometry, errors: &mut Errors) {
    require_pub(&c.vis, &c.ident, errors);
    g.nodes_tokens = c.expr.to_token_stream();
    if let Some((_, n, span)) = array_of(&c.ty) {
        if n != nodes {
            errors.push(syn::Error::new(
                span,
                format!("`NODES` has one entry per node: {nodes} for `nodes = {nodes}`, found {n}"),
            ));
        }
    }
    match &*c.expr {
        syn::Expr::Array(rows) if rows.elems.len() == nodes => {
            for row in &rows.elems {
                if let Some(p) = node_row(row, dim, errors) {
                    g.local_nodes.push(p);
                }
            }
        }
        syn::Expr::Array(rows) => errors.spanned(
            rows,
            format!(
                "`NODES` has one entry per node: {nodes} for `nodes = {nodes}`, found {}",
                rows.elems.len()
            ),
        ),
        other => errors.spanned(other, "`NODES` must be an array literal of local coordinates"),
    }
}

/// A numeric literal, possibly negated.
fn number(e: &syn::Expr) -> Option<f64> {
    match e {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Float(f),
            ..
        }) => f.base10_parse().ok(),
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i), ..
        }) => i.base10_parse::<f64>().ok(),
        syn::Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Neg(_),
            expr,
            ..
        }) => number(expr).map(|v| -v),
        syn::Expr::Paren(p) => number(&p.expr),
        _ => None,
    }
}

fn node_row(row: &syn::Expr, dim: usize, errors: &mut Errors) -> Option<[f64; 3]> {
    let syn::Expr::Array(a) = row else {
        errors.spanned(
            row,
            format!("each entry of `NODES` is `[{}]`", ["r", "s", "t"][..dim].join(", ")),
        );
        return None;
    };
    if a.elems.len() != dim {
        errors.spanned(
            a,
            format!(
                "a node of a {dim}-D element has {dim} local coordinates, found {}",
                a.elems.len()
            ),
        );
        return None;
    }
    let mut p = [0.0; 3];
    for (i, e) in a.elems.iter().enumerate() {
        match number(e) {
            Some(v) if (-1.0..=1.0).contains(&v) => p[i] = v,
            Some(_) => {
                errors.spanned(e, "local node coordinates lie in [-1, 1]");
                return None;
            }
            None => {
                errors.spanned(e, "local node coordinates must be numeric literals, e.g. `-1.0`");
                return None;
            }
        }
    }
    Some(p)
}

/// Highest total degree of a shape function (Lagrange elements of order 8 stay below): it bounds
/// the work of the exact arithmetic, the size of the generated `dshape` and the exponents, which
/// chained `powi`s would otherwise overflow.
pub(super) const MAX_DEGREE: u32 = 24;

/// Rust expressions of `shape` -> exact polynomials.
pub(super) struct ShapeParser<'a> {
    pub(super) coords: &'a [Ident],
    pub(super) lets: HashMap<String, Poly>,
    pub(super) errors: &'a mut Errors,
}

fn too_high(degree: u32) -> String {
    format!("this gives degree {degree} in the coordinates; shape functions have degree {MAX_DEGREE} at most")
}

const ALLOWED: &str = "shape functions are polynomials: use literals, the coordinates, `let` names, `+`, `-`, `*`, \
                       `/` by a constant and `.powi(n)` with a literal `n`";

impl ShapeParser<'_> {
    pub(super) fn body(&mut self, block: &syn::Block, nodes: usize) -> Vec<ShapeFn> {
        let n = block.stmts.len();
        for (i, stmt) in block.stmts.iter().enumerate() {
            match stmt {
                syn::Stmt::Local(local) => {
                    // `let a: f64 = ...` is `let a = ...`: shape functions are `f64`.
                    let pat = match &local.pat {
                        syn::Pat::Type(t) => {
                            let is_f64 = matches!(&*t.ty, syn::Type::Path(p) if p.path.is_ident("f64"));
                            if !is_f64 {
                                self.errors.spanned(
                                    &t.ty,
                                    "values in `shape` are `f64`: write `let a: f64 = ...` or leave the type out",
                                );
                                continue;
                            }
                            &*t.pat
                        }
                        p => p,
                    };
                    let (syn::Pat::Ident(p), Some(init)) = (pat, &local.init) else {
                        self.errors.spanned(
                            &local.pat,
                            "`let` in `shape` binds one name to a value: `let a = 1.0 - r;`",
                        );
                        continue;
                    };
                    if let Ok(v) = self.poly(&init.expr) {
                        self.lets.insert(p.ident.to_string(), v);
                    }
                }
                syn::Stmt::Expr(syn::Expr::Array(arr), None) if i + 1 == n => {
                    if arr.elems.len() != nodes {
                        self.errors.spanned(
                            arr,
                            format!(
                                "`shape` returns one value per node: {nodes} for `nodes = {nodes}`, found {}",
                                arr.elems.len()
                            ),
                        );
                    }
                    return arr
                        .elems
                        .iter()
                        .filter_map(|e| {
                            let poly = self.poly(e).ok()?;
                            // Also the derivatives' (exponent times coefficient) must stay finite.
                            if !poly.0.values().all(|c| (c * f64::from(MAX_DEGREE)).is_finite()) {
                                self.errors
                                    .spanned(e, "this shape function's coefficients overflow `f64`");
                                return None;
                            }
                            Some(ShapeFn {
                                poly,
                                tokens: e.to_token_stream(),
                            })
                        })
                        .collect();
                }
                syn::Stmt::Expr(e, None) if i + 1 == n => self.errors.spanned(
                    e,
                    "`shape` ends with an array literal of the shape functions: `[n0, n1, ...]`",
                ),
                other => self.errors.spanned(
                    other,
                    "`shape` holds `let` statements and a final array of shape functions",
                ),
            }
        }
        if !matches!(block.stmts.last(), Some(syn::Stmt::Expr(_, None))) {
            self.errors.push(syn::Error::new(
                block.brace_token.span.close(),
                "`shape` ends with an array literal of the shape functions: `[n0, n1, ...]`",
            ));
        }
        Vec::new()
    }

    /// Errors are recorded here; `Err(())` only tells the caller that one was.
    fn poly(&mut self, e: &syn::Expr) -> Result<Poly, ()> {
        let err = |this: &mut Self, tokens: &dyn quote::ToTokens, msg: String| {
            this.errors.spanned(tokens, msg);
            Err(())
        };
        match e {
            syn::Expr::Lit(_) => match number(e) {
                Some(v) => Ok(Poly::constant(v)),
                None => err(
                    self,
                    e,
                    format!("only numeric literals may appear in `shape`; {ALLOWED}"),
                ),
            },
            syn::Expr::Paren(p) => self.poly(&p.expr),
            syn::Expr::Group(g) => self.poly(&g.expr),
            syn::Expr::Path(p) => {
                let Some(id) = p.path.get_ident() else {
                    return err(
                        self,
                        p,
                        format!("`shape` cannot read `{}`; {ALLOWED}", crate::parse::rust_text(p)),
                    );
                };
                if let Some(axis) = self.coords.iter().position(|c| c == id) {
                    return Ok(Poly::var(axis));
                }
                match self.lets.get(&id.to_string()) {
                    Some(v) => Ok(v.clone()),
                    None => err(self, id, format!("`shape` cannot read `{id}`; {ALLOWED}")),
                }
            }
            syn::Expr::Unary(u) => match u.op {
                syn::UnOp::Neg(_) => Ok(self.poly(&u.expr)?.scale(-1.0)),
                _ => err(self, u, format!("this operator is not allowed in `shape`; {ALLOWED}")),
            },
            syn::Expr::Binary(b) => {
                let (l, r) = (self.poly(&b.left), self.poly(&b.right));
                let (l, r) = (l?, r?);
                match b.op {
                    syn::BinOp::Add(_) => Ok(l.add(&r)),
                    syn::BinOp::Sub(_) => Ok(l.sub(&r)),
                    syn::BinOp::Mul(_) if l.degree() + r.degree() > MAX_DEGREE => {
                        err(self, &b.op, too_high(l.degree() + r.degree()))
                    }
                    syn::BinOp::Mul(_) => Ok(l.mul(&r)),
                    syn::BinOp::Div(_) => match r.as_constant() {
                        Some(c) if c != 0.0 => Ok(l.scale(1.0 / c)),
                        Some(_) => err(self, &b.right, "division by zero in `shape`".to_string()),
                        None => err(
                            self,
                            &b.right,
                            format!(
                                "`shape` divides by `{}`, which depends on the coordinates: not a polynomial; {ALLOWED}",
                                crate::parse::rust_text(&b.right)
                            ),
                        ),
                    },
                    _ => err(self, &b.op, format!("operator `{}` is not allowed in `shape`; {ALLOWED}", crate::parse::rust_text(&b.op))),
                }
            }
            syn::Expr::MethodCall(m) => {
                let base = self.poly(&m.receiver);
                if m.method != "powi" {
                    let what = if ["sin", "cos", "tan", "exp", "ln", "sqrt", "powf", "abs", "atan", "tanh"]
                        .contains(&m.method.to_string().as_str())
                    {
                        "is not a polynomial"
                    } else {
                        "is not allowed"
                    };
                    return err(self, &m.method, format!("`{}` {what} in `shape`; {ALLOWED}", m.method));
                }
                let exponent = match (m.args.len(), m.args.first()) {
                    (
                        1,
                        Some(syn::Expr::Lit(syn::ExprLit {
                            lit: syn::Lit::Int(n), ..
                        })),
                    ) => n.base10_parse::<u32>().ok(),
                    _ => None,
                };
                // `.powi()` has no argument tokens to point at.
                let at: &dyn ToTokens = if m.args.is_empty() { &m.method } else { &m.args };
                match exponent {
                    Some(n) if n <= 16 => {
                        let base = base?;
                        if base.degree() * n > MAX_DEGREE {
                            err(self, &m.method, too_high(base.degree() * n))
                        } else {
                            Ok(base.powi(n))
                        }
                    }
                    _ => err(
                        self,
                        at,
                        "`powi` in `shape` takes a literal exponent from 0 to 16, e.g. `.powi(2)`".to_string(),
                    ),
                }
            }
            syn::Expr::Call(c) => err(self, &c.func, format!("calls are not allowed in `shape`; {ALLOWED}")),
            other => err(
                self,
                other,
                format!("this expression is not allowed in `shape`; {ALLOWED}"),
            ),
        }
    }
}
