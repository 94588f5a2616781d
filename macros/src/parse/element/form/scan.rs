//! The degree of a form's body in the trial and the test function, token by token.
//!
//! Every sub-expression has a degree `(in u, in v)`; literals, the material and the point have
//! `(0, 0)`, an accessor of `u` `(1, 0)`. A product adds degrees, a sum needs equal ones, any
//! other function needs `(0, 0)` arguments. A literal zero fits any degree (`[u.grad()[0], 0.0]`).
//! The first offence is reported at its token, and the walk stops there.

use crate::parse::Errors;
use proc_macro2::Span;
use std::collections::HashMap;
use syn::spanned::Spanned;
use syn::{BinOp, Expr, UnOp};

/// A degree in the trial and the test function; `Zero` is the literal zero, of any degree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Deg {
    Zero,
    D(u8, u8),
}

const CONST: Deg = Deg::D(0, 0);

/// How deep helpers may call helpers inside a form.
const MAX_HELPERS: usize = 8;

/// What a form reads of a field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Acc {
    Value,
    Comp,
    Vector,
    Grad,
    GradOf,
    GradTensor,
    SymGrad,
    Div,
}

const ACCESSORS: &str =
    "`value()`, `comp(c)`, `vector()`, `grad()`, `grad_of(c)`, `grad_tensor()`, `sym_grad()` or `div()`";

/// In words: what a degree is linear in.
pub fn describe(d: Deg, u: &str, v: &str) -> String {
    match d {
        Deg::Zero => "zero".into(),
        Deg::D(0, 0) => format!("constant (depends on neither `{u}` nor `{v}`)"),
        Deg::D(1, 0) => format!("linear in `{u}` only"),
        Deg::D(0, 1) => format!("linear in `{v}` only"),
        Deg::D(1, 1) => format!("linear in `{u}` and `{v}`"),
        Deg::D(a, b) => format!("of degree {a} in `{u}` and {b} in `{v}`"),
    }
}

pub struct Scan<'a> {
    /// Names of the trial function (the form's argument, a helper's parameter bound to it).
    trial: Vec<String>,
    test: Vec<String>,
    position: Vec<String>,
    /// The module's functions a form may call as helpers.
    fns: &'a HashMap<String, &'a syn::ItemFn>,
    /// Helpers entered to get here.
    depth: usize,
    /// The form's own names of its trial and test functions, for messages.
    shown: (String, String),
    dim: usize,
    dofs: usize,
    /// `let` bindings in scope, innermost last.
    env: Vec<(String, Deg)>,
    /// Accessors read, where.
    pub uses: Vec<(Acc, Span)>,
    /// Where the point is first read.
    pub position_use: Option<Span>,
    /// Whether `dot(u.vector(), v.vector())` appears (the mass form's shape).
    pub mass_dot: bool,
    pub errors: Errors,
}

impl<'a> Scan<'a> {
    pub fn new(
        trial: Option<String>,
        test: String,
        position: Option<String>,
        (dim, dofs): (usize, usize),
        fns: &'a HashMap<String, &'a syn::ItemFn>,
    ) -> Scan<'a> {
        let trial_name = trial.clone().unwrap_or_else(|| "u".into());
        let test_name = test.clone();
        Scan {
            trial: trial.into_iter().collect(),
            test: vec![test],
            position: position.into_iter().collect(),
            fns,
            depth: 0,
            shown: (trial_name, test_name),
            dim,
            dofs,
            env: Vec::new(),
            uses: Vec::new(),
            position_use: None,
            mass_dot: false,
            errors: Errors::default(),
        }
    }

    fn fail(&mut self, span: Span, msg: impl std::fmt::Display) -> Option<Deg> {
        self.errors.push(syn::Error::new(span, msg));
        None
    }

    fn names(&self) -> (&str, &str) {
        (&self.shown.0, &self.shown.1)
    }

    /// The degree of a block's value.
    pub fn block(&mut self, b: &syn::Block) -> Option<Deg> {
        let depth = self.env.len();
        let mut last = None;
        for (i, stmt) in b.stmts.iter().enumerate() {
            let end = i + 1 == b.stmts.len();
            match stmt {
                syn::Stmt::Local(l) => {
                    let Some(init) = &l.init else {
                        return self.fail(l.span(), "give the `let` its value");
                    };
                    self.bind(&l.pat, &init.expr)?;
                }
                syn::Stmt::Expr(e, None) if end => last = Some(self.expr(e)?),
                syn::Stmt::Expr(e, _) => {
                    self.expr(e)?;
                }
                syn::Stmt::Item(_) => {}
                syn::Stmt::Macro(m) => {
                    return self.fail(
                        m.span(),
                        "a form is arithmetic, `let`, `if` and calls; macros are not part of it",
                    )
                }
            }
        }
        self.env.truncate(depth);
        match last {
            Some(d) => Some(d),
            None => self.fail(b.span(), "a form's body ends with its value (no `;` after it)"),
        }
    }

    pub fn expr(&mut self, e: &Expr) -> Option<Deg> {
        match e {
            Expr::Lit(l) => Some(if is_zero(&l.lit) { Deg::Zero } else { CONST }),
            Expr::Paren(p) => self.expr(&p.expr),
            Expr::Group(g) => self.expr(&g.expr),
            Expr::Cast(c) => self.expr(&c.expr),
            Expr::Reference(r) => self.expr(&r.expr),
            Expr::Path(p) => self.path(p),
            Expr::Field(f) => self.expr(&f.base),
            Expr::Index(i) => self.index(i),
            Expr::MethodCall(m) => self.method(m),
            Expr::Call(c) => self.call(c),
            Expr::Binary(b) => self.binary(b),
            Expr::Unary(u) => {
                let d = self.expr(&u.expr)?;
                match u.op {
                    UnOp::Neg(_) | UnOp::Deref(_) => Some(d),
                    _ => self.constant(d, u.span(), "`!`"),
                }
            }
            Expr::Array(a) => self.all_alike(a.elems.iter(), a.span()),
            Expr::Tuple(t) => self.all_alike(t.elems.iter(), t.span()),
            Expr::Block(b) => self.block(&b.block),
            Expr::If(i) => {
                let c = self.expr(&i.cond)?;
                self.constant(c, i.cond.span(), "an `if` condition")?;
                let then = self.block(&i.then_branch)?;
                let Some((_, other)) = &i.else_branch else {
                    return self.fail(i.span(), "an `if` in a form needs an `else` with a value");
                };
                let other = self.expr(other)?;
                self.sum(then, other, i.span())
            }
            other => self.fail(
                other.span(),
                "not part of the form language: a form is arithmetic, `let`, `if`/`else`, `dot`, `inner` and calls on constants",
            ),
        }
    }

    fn path(&mut self, p: &syn::ExprPath) -> Option<Deg> {
        let Some(id) = p.path.get_ident().map(|i| i.to_string()) else {
            return Some(CONST);
        };
        if self.trial.contains(&id) || self.test.contains(&id) {
            return self.fail(
                p.span(),
                format!("say what of `{id}` the form reads: `{id}.` then {ACCESSORS}"),
            );
        }
        if self.position.contains(&id) {
            self.position_use.get_or_insert(p.span());
            return Some(CONST);
        }
        Some(self.env.iter().rev().find(|(n, _)| *n == id).map_or(CONST, |(_, d)| *d))
    }

    fn index(&mut self, i: &syn::ExprIndex) -> Option<Deg> {
        let d = self.expr(&i.expr)?;
        let k = self.expr(&i.index)?;
        self.constant(k, i.index.span(), "an index")?;
        if let Some((n, what)) = self.index_bound(&i.expr) {
            if let Some(k) = int_literal(&i.index) {
                if k >= n {
                    return self.fail(i.index.span(), format!("index {k} is past {what}"));
                }
            }
        }
        Some(d)
    }

    /// How far `base[..]` reaches, where the macro knows: a gradient's axes, a vector's components.
    fn index_bound(&self, base: &Expr) -> Option<(usize, String)> {
        let (dim, dofs) = (self.dim, self.dofs);
        let axes = (dim, format!("the {dim} axes of this {dim}-D element"));
        let comps = (
            dofs,
            format!(
                "the {dofs} component{} of the field (dofs = {dofs})",
                if dofs == 1 { "" } else { "s" }
            ),
        );
        match strip(base) {
            Expr::MethodCall(m) if self.is_field(&m.receiver) => match m.method.to_string().as_str() {
                "grad" | "grad_of" => Some(axes),
                "vector" | "grad_tensor" => Some(comps),
                "sym_grad" => Some(axes),
                _ => None,
            },
            Expr::Index(inner) => match strip(&inner.expr) {
                Expr::MethodCall(m)
                    if self.is_field(&m.receiver)
                        && matches!(m.method.to_string().as_str(), "grad_tensor" | "sym_grad") =>
                {
                    Some(axes)
                }
                _ => None,
            },
            Expr::Field(f) if matches!(&f.member, syn::Member::Named(n) if n == "x") && self.is_position(&f.base) => {
                Some(axes)
            }
            _ => None,
        }
    }

    fn is_field(&self, e: &Expr) -> bool {
        matches!(strip(e), Expr::Path(p) if p.path.get_ident().is_some_and(|i| self.trial.contains(&i.to_string()) || self.test.contains(&i.to_string())))
    }

    fn is_position(&self, e: &Expr) -> bool {
        matches!(strip(e), Expr::Path(p) if p.path.get_ident().is_some_and(|i| self.position.contains(&i.to_string())))
    }

    fn method(&mut self, m: &syn::ExprMethodCall) -> Option<Deg> {
        if self.is_field(&m.receiver) {
            return self.accessor(m);
        }
        let d = self.expr(&m.receiver)?;
        for a in &m.args {
            let da = self.expr(a)?;
            if da != Deg::Zero && da != CONST {
                return self.fail(
                    a.span(),
                    format!(
                        "`{}` of a field is not linear; a form combines fields with `*`, `+`, `-`, `dot` and `inner`",
                        m.method
                    ),
                );
            }
        }
        if d != Deg::Zero && d != CONST {
            let (u, v) = self.names();
            return self.fail(
                m.method.span(),
                format!("`.{}()` of a quantity that is {} is not linear in it; a form combines fields with `*`, `+`, `-`, `dot` and `inner`", m.method, describe(d, u, v)),
            );
        }
        Some(CONST)
    }

    /// `u.grad()` and the other accessors: their degree, components and dimensions.
    fn accessor(&mut self, m: &syn::ExprMethodCall) -> Option<Deg> {
        let field = match strip(&m.receiver) {
            Expr::Path(p) => p.path.get_ident().map(|i| i.to_string()).unwrap_or_default(),
            _ => String::new(),
        };
        let deg = if self.trial.contains(&field) {
            Deg::D(1, 0)
        } else {
            Deg::D(0, 1)
        };
        let (dim, dofs) = (self.dim, self.dofs);
        let span = m.method.span();
        let acc = match m.method.to_string().as_str() {
            "value" => Acc::Value,
            "comp" => Acc::Comp,
            "vector" => Acc::Vector,
            "grad" => Acc::Grad,
            "grad_of" => Acc::GradOf,
            "grad_tensor" => Acc::GradTensor,
            "sym_grad" => Acc::SymGrad,
            "div" => Acc::Div,
            other => return self.fail(span, format!("a field has no `{other}`; a form reads {ACCESSORS}")),
        };
        match acc {
            Acc::Value | Acc::Grad if dofs > 1 => {
                let (one, all) = if acc == Acc::Value {
                    ("comp(c)", "vector()")
                } else {
                    ("grad_of(c)", "grad_tensor()")
                };
                return self.fail(
                    span,
                    format!("`{field}` has {dofs} components (dofs = {dofs}): read `{field}.{one}` or `{field}.{all}`"),
                );
            }
            Acc::SymGrad | Acc::Div if dofs != dim => {
                return self.fail(
                    span,
                    format!("`{}` belongs to a vector field with one component per axis (dofs = dim = {dim}); `{field}` has {dofs}", m.method),
                );
            }
            Acc::Comp | Acc::GradOf => {
                let Some(arg) = m.args.first() else {
                    return self.fail(
                        span,
                        format!("`{}` takes the component, e.g. `{field}.{}(0)`", m.method, m.method),
                    );
                };
                match int_literal(arg) {
                    Some(c) if c < dofs => {}
                    Some(c) => {
                        return self.fail(
                            arg.span(),
                            format!(
                                "component {c} of `{field}`, which has {dofs} (dofs = {dofs}): components are 0..{}",
                                dofs - 1
                            ),
                        );
                    }
                    None => {
                        return self.fail(
                            arg.span(),
                            "write the component as an integer literal, so it can be checked against `dofs`",
                        )
                    }
                }
            }
            _ => {}
        }
        self.uses.push((acc, span));
        Some(deg)
    }

    fn call(&mut self, c: &syn::ExprCall) -> Option<Deg> {
        let name = match &*c.func {
            Expr::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()).unwrap_or_default(),
            _ => String::new(),
        };
        if (name == "dot" || name == "inner") && c.args.len() == 2 {
            let (a, b) = (&c.args[0], &c.args[1]);
            if name == "dot" && self.is_accessor(a, "vector") && self.is_accessor(b, "vector") {
                self.mass_dot = true;
            }
            let (da, db) = (self.expr(a)?, self.expr(b)?);
            return self.product(da, db, c.span());
        }
        let local = match &*c.func {
            Expr::Path(p) => p.path.get_ident().and_then(|i| self.fns.get(&i.to_string()).copied()),
            _ => None,
        };
        if let Some(f) = local {
            return self.helper(f, c);
        }
        for a in &c.args {
            let d = self.expr(a)?;
            if d != Deg::Zero && d != CONST {
                let (u, v) = self.names();
                let what = if name.is_empty() {
                    "this call".to_string()
                } else {
                    format!("`{name}`")
                };
                return self.fail(
                    a.span(),
                    format!(
                        "{what} is not a form function, and its argument is {}: a form combines fields with `*`, `+`, `-`, `dot` and `inner`",
                        describe(d, u, v)
                    ),
                );
            }
        }
        Some(CONST)
    }

    fn is_accessor(&self, e: &Expr, name: &str) -> bool {
        matches!(strip(e), Expr::MethodCall(m) if m.method == name && self.is_field(&m.receiver))
    }

    /// `let name = e;`, `let name: T = e;`, `let (a, b) = (e, f);`.
    fn bind(&mut self, pat: &syn::Pat, init: &Expr) -> Option<()> {
        match (pat, strip(init)) {
            (syn::Pat::Ident(p), _) => {
                let d = self.expr(init)?;
                self.env.push((p.ident.to_string(), d));
            }
            (syn::Pat::Type(t), _) => return self.bind(&t.pat, init),
            (syn::Pat::Tuple(t), Expr::Tuple(e)) if t.elems.len() == e.elems.len() => {
                for (p, e) in t.elems.iter().zip(&e.elems) {
                    self.bind(p, e)?;
                }
            }
            (syn::Pat::Wild(_), _) => {
                self.expr(init)?;
            }
            (other, _) => {
                self.fail(
                    other.span(),
                    "a form binds a name, or a tuple of names to a tuple, per `let`",
                )?;
            }
        }
        Some(())
    }

    /// A call of a function of the module: its body read with its parameters bound to the
    /// arguments (a field passed on stays that field).
    fn helper(&mut self, f: &syn::ItemFn, c: &syn::ExprCall) -> Option<Deg> {
        if self.depth >= MAX_HELPERS {
            return self.fail(
                c.span(),
                format!("helpers call helpers more than {MAX_HELPERS} deep in this form"),
            );
        }
        if f.sig.inputs.len() != c.args.len() {
            return self.fail(
                c.span(),
                format!("`{}` takes {} arguments", f.sig.ident, f.sig.inputs.len()),
            );
        }
        let mut sub = Scan {
            trial: Vec::new(),
            test: Vec::new(),
            position: Vec::new(),
            fns: self.fns,
            depth: self.depth + 1,
            shown: self.shown.clone(),
            dim: self.dim,
            dofs: self.dofs,
            env: Vec::new(),
            uses: Vec::new(),
            position_use: None,
            mass_dot: false,
            errors: Errors::default(),
        };
        for (param, arg) in f.sig.inputs.iter().zip(&c.args) {
            let name = match param {
                syn::FnArg::Typed(pt) => match &*pt.pat {
                    syn::Pat::Ident(p) => p.ident.to_string(),
                    _ => "_".to_string(),
                },
                syn::FnArg::Receiver(r) => return self.fail(r.span(), "a form's helper is a free function"),
            };
            let given = match strip(arg) {
                Expr::Path(p) => p.path.get_ident().map(|i| i.to_string()),
                _ => None,
            };
            match given {
                Some(g) if self.trial.contains(&g) => sub.trial.push(name),
                Some(g) if self.test.contains(&g) => sub.test.push(name),
                Some(g) if self.position.contains(&g) => sub.position.push(name),
                _ => {
                    let d = self.expr(arg)?;
                    sub.env.push((name, d));
                }
            }
        }
        let d = sub.block(&f.block);
        self.uses.append(&mut sub.uses);
        self.position_use = self.position_use.or(sub.position_use);
        self.mass_dot |= sub.mass_dot;
        self.errors.extend(sub.errors);
        d
    }

    fn binary(&mut self, b: &syn::ExprBinary) -> Option<Deg> {
        let l = self.expr(&b.left)?;
        let r = self.expr(&b.right)?;
        match b.op {
            BinOp::Add(_) | BinOp::Sub(_) => self.sum(l, r, b.op.span()),
            BinOp::Mul(_) => self.product(l, r, b.op.span()),
            BinOp::Div(_) => {
                self.constant(r, b.right.span(), "a divisor")?;
                Some(l)
            }
            _ => {
                self.constant(l, b.left.span(), "an operand of this operator")?;
                self.constant(r, b.right.span(), "an operand of this operator")
            }
        }
    }

    fn sum(&mut self, l: Deg, r: Deg, span: Span) -> Option<Deg> {
        match (l, r) {
            (Deg::Zero, d) | (d, Deg::Zero) => Some(d),
            (a, b) if a == b => Some(a),
            (a, b) => {
                let (u, v) = self.names();
                let msg = format!(
                    "adds a term that is {} to one that is {}: every term of a form has the same degree, linear in `{u}` and `{v}` for a bilinear form",
                    describe(a, u, v),
                    describe(b, u, v)
                );
                self.fail(span, msg)
            }
        }
    }

    fn product(&mut self, l: Deg, r: Deg, span: Span) -> Option<Deg> {
        let (Deg::D(a, b), Deg::D(c, d)) = (l, r) else {
            return Some(Deg::Zero);
        };
        let (u, v) = self.names();
        if a + c > 1 {
            let msg = format!("multiplies two factors of the trial function `{u}`: the form is not linear in `{u}`");
            return self.fail(span, msg);
        }
        if b + d > 1 {
            let msg = format!("multiplies two factors of the test function `{v}`: the form is not linear in `{v}`");
            return self.fail(span, msg);
        }
        Some(Deg::D(a + c, b + d))
    }

    fn constant(&mut self, d: Deg, span: Span, what: &str) -> Option<Deg> {
        if d == Deg::Zero || d == CONST {
            return Some(CONST);
        }
        let (u, v) = self.names();
        let msg = format!("{what} must not depend on the fields; this is {}", describe(d, u, v));
        self.fail(span, msg)
    }

    fn all_alike<'e>(&mut self, items: impl Iterator<Item = &'e Expr>, span: Span) -> Option<Deg> {
        let mut acc = Deg::Zero;
        for e in items {
            let d = self.expr(e)?;
            acc = self.sum(acc, d, span)?;
        }
        Some(acc)
    }
}

/// `e` without parentheses, groups and borrows (`&u.grad()` reads what `u.grad()` reads).
fn strip(e: &Expr) -> &Expr {
    match crate::parse::strip_parens(e) {
        Expr::Reference(r) => strip(&r.expr),
        other => other,
    }
}

fn is_zero(l: &syn::Lit) -> bool {
    match l {
        syn::Lit::Float(f) => f.base10_parse::<f64>().is_ok_and(|x| x == 0.0),
        syn::Lit::Int(i) => i.base10_parse::<u64>().is_ok_and(|x| x == 0),
        _ => false,
    }
}

fn int_literal(e: &Expr) -> Option<usize> {
    crate::parse::int_literal(strip(e)).and_then(|v| usize::try_from(v).ok())
}
