//! Rust expressions of a stencil body -> `model::Expr`. Accepted: `let`, `if`/`else`,
//! `match` on integer constants, arithmetic, comparisons, casts, the math methods of
//! `f32`/`f64`, named constants, `grid.at(dx, dy, dz)` with integer-literal offsets.

use super::{int_literal, line_of, rust_text, Errors};
use crate::model::sweep::SweepRead;
use crate::model::{Arg, Arm, BinOp, Block, Expr, ExprKind, Let, MathFn, Pat, Scalar, UnOp};
use std::collections::HashMap;
use syn::ext::IdentExt;
use syn::spanned::Spanned;

/// Names visible in the body: arguments (by index) and `let` bindings.
#[derive(Clone)]
pub struct Scope {
    args: HashMap<String, usize>,
    locals: Vec<String>,
}

impl Scope {
    pub fn new(args: &[Arg]) -> Scope {
        Scope {
            args: args
                .iter()
                .enumerate()
                .map(|(i, a)| (a.name().unraw().to_string(), i))
                .collect(),
            locals: Vec::new(),
        }
    }
}

pub struct BodyParser<'a> {
    args: &'a [Arg],
    rank: usize,
    errors: &'a mut Errors,
    /// The swept field of a `#[sweep]` (read with `.new(..)` and `.old(..)`), if any.
    sweep: Option<usize>,
    /// Every read of the swept field: new or old, offset, span (for the legality check).
    pub sweep_reads: Vec<SweepRead>,
    /// A lattice rule: the name of its `rng: &Draws` argument, if it has one.
    draws: Option<String>,
    /// A lattice rule: the state argument, whose `.at(..)` reads are recorded in `sweep_reads`.
    lattice_state: Option<usize>,
}

/// The fields of a `Point` argument at `rank`: the indices, then the extents.
fn point_fields(rank: usize) -> &'static [&'static str] {
    match rank {
        1 => &["x", "nx"],
        2 => &["x", "y", "nx", "ny"],
        _ => &["x", "y", "z", "nx", "ny", "nz"],
    }
}

fn unsupported(e: &syn::Expr) -> syn::Error {
    const LOOP: &str = "it computes one point from fixed neighbour offsets; unroll the loop by hand";
    match e {
        // Loops and assignments span many lines; point at the keyword or the `=`.
        syn::Expr::ForLoop(l) => {
            syn::Error::new_spanned(l.for_token, format!("`for` loops are not allowed in a stencil: {LOOP}"))
        }
        syn::Expr::While(l) => syn::Error::new_spanned(
            l.while_token,
            format!("`while` loops are not allowed in a stencil: {LOOP}"),
        ),
        syn::Expr::Loop(l) => {
            syn::Error::new_spanned(l.loop_token, format!("`loop` is not allowed in a stencil: {LOOP}"))
        }
        syn::Expr::Assign(a) => syn::Error::new_spanned(
            a.eq_token,
            "assignment (`=`) is not allowed in a stencil: it returns the new value of its point and the runtime \
             writes it to the output grid; name intermediate values with `let`",
        ),
        syn::Expr::Return(r) => syn::Error::new_spanned(
            r.return_token,
            "`return` is not allowed in a stencil; make the last expression the value",
        ),
        syn::Expr::Closure(_) => syn::Error::new_spanned(e, "closures are not allowed in a stencil"),
        syn::Expr::Macro(_) => syn::Error::new_spanned(e, "macros are not allowed in a stencil body"),
        syn::Expr::Index(_) => syn::Error::new_spanned(
            e,
            "indexing is not allowed in a stencil; read grids with `grid.at(dx, dy)`",
        ),
        _ => syn::Error::new_spanned(e, "this expression is not supported in a stencil"),
    }
}

impl<'a> BodyParser<'a> {
    pub fn new(args: &'a [Arg], rank: usize, errors: &'a mut Errors) -> Self {
        BodyParser {
            args,
            rank,
            errors,
            sweep: None,
            sweep_reads: Vec::new(),
            draws: None,
            lattice_state: None,
        }
    }

    /// A lattice rule's body: `state` is read with `.at(..)` (each read recorded for the
    /// checkerboard check), and `draws` names the random stream (`rng.draw(k)`).
    pub fn lattice(mut self, state: Option<usize>, draws: Option<String>) -> Self {
        self.lattice_state = state;
        self.draws = draws;
        self
    }

    /// `rng.draw(k)` / `rng.uniform(k)` on the rule's `&Draws` argument.
    fn draw(&mut self, m: &syn::ExprMethodCall) -> syn::Result<ExprKind> {
        let method = m.method.to_string();
        let uniform = match method.as_str() {
            "draw" => false,
            "uniform" => true,
            _ => {
                return Err(syn::Error::new_spanned(
                    &m.method,
                    format!(
                        "the random stream has `draw(k)` (the k-th `u32` of this site and step) and `uniform(k)` \
                         (the same as an `f32` in [0, 1)); found `{method}`"
                    ),
                ))
            }
        };
        let index = match m.args.first() {
            Some(a) if m.args.len() == 1 => int_literal(a).and_then(|k| u32::try_from(k).ok()),
            _ => None,
        };
        let Some(index) = index else {
            // At the arguments, or at the method when there are none (empty tokens have no span).
            let at = if m.args.is_empty() {
                quote::ToTokens::to_token_stream(&m.method)
            } else {
                quote::ToTokens::to_token_stream(&m.args)
            };
            return Err(syn::Error::new_spanned(
                at,
                format!(
                    "`{method}` takes one draw number, a `u32` literal (`rng.{method}(0)`, `rng.{method}(1)`, ...): \
                     the site's draws are numbered so that host and device draw the same ones"
                ),
            ));
        };
        Ok(ExprKind::Draw { index, uniform })
    }

    /// A sweep's body: argument `state` is read with `.new(..)` and `.old(..)`, not `.at(..)`.
    pub fn sweeping(mut self, state: usize) -> Self {
        self.sweep = Some(state);
        self
    }

    /// Parses a block; errors of each statement are collected, so `None` means some were reported.
    pub fn block(&mut self, block: &syn::Block, outer: &Scope) -> Option<Block> {
        let mut scope = outer.clone();
        let mut lets = Vec::new();
        let mut tail = None;
        let mut ok = true;
        let n = block.stmts.len();
        for (i, stmt) in block.stmts.iter().enumerate() {
            match stmt {
                syn::Stmt::Local(local) => match self.local(local, &scope) {
                    Ok(l) => {
                        scope.locals.push(l.name.unraw().to_string());
                        lets.push(l);
                    }
                    Err(e) => {
                        ok = false;
                        self.errors.push(e)
                    }
                },
                syn::Stmt::Expr(e, None) if i + 1 == n => match self.expr(e, &scope) {
                    Ok(e) => tail = Some(e),
                    Err(err) => {
                        ok = false;
                        self.errors.push(err)
                    }
                },
                syn::Stmt::Expr(e, _) => {
                    ok = false;
                    let err = match e {
                        syn::Expr::Assign(_)
                        | syn::Expr::ForLoop(_)
                        | syn::Expr::While(_)
                        | syn::Expr::Loop(_)
                        | syn::Expr::Return(_) => unsupported(e),
                        _ => syn::Error::new_spanned(
                            stmt,
                            "only `let` statements may come before the final value expression",
                        ),
                    };
                    self.errors.push(err);
                }
                syn::Stmt::Item(item) => {
                    ok = false;
                    self.errors.spanned(
                        item,
                        "items are not allowed inside a stencil; declare them outside the function",
                    );
                }
                syn::Stmt::Macro(m) => {
                    ok = false;
                    self.errors.spanned(m, "macros are not allowed in a stencil body");
                }
            }
        }
        if tail.is_none() && ok {
            self.errors.push(syn::Error::new(
                block.brace_token.span.close(),
                "a stencil block must end with the value it computes",
            ));
            return None;
        }
        Some(Block {
            lets,
            tail: Box::new(tail?),
        })
        .filter(|_| ok)
    }

    fn local(&mut self, local: &syn::Local, scope: &Scope) -> syn::Result<Let> {
        let (ident, ty) = match &local.pat {
            syn::Pat::Ident(p) if p.mutability.is_none() && p.by_ref.is_none() && p.subpat.is_none() => {
                (p.ident.clone(), None)
            }
            syn::Pat::Type(pt) => match &*pt.pat {
                syn::Pat::Ident(p) if p.mutability.is_none() => {
                    let ty = match &*pt.ty {
                        syn::Type::Path(tp) => tp.path.get_ident().and_then(|i| Scalar::from_ident(&i.to_string())),
                        _ => None,
                    };
                    let ty = ty.ok_or_else(|| {
                        syn::Error::new_spanned(
                            &pt.ty,
                            "`let` types must be scalars: `f32`, `f64`, `i32`, `u32`, `u8`, `bool`",
                        )
                    })?;
                    (p.ident.clone(), Some(ty))
                }
                syn::Pat::Ident(p) => {
                    return Err(syn::Error::new_spanned(
                        p.mutability,
                        "stencil bindings are immutable; remove `mut`",
                    ))
                }
                other => return Err(syn::Error::new_spanned(other, "`let` binds one name in a stencil")),
            },
            syn::Pat::Ident(p) if p.mutability.is_some() => {
                return Err(syn::Error::new_spanned(
                    p.mutability,
                    "stencil bindings are immutable; remove `mut`",
                ))
            }
            other => return Err(syn::Error::new_spanned(other, "`let` binds one name in a stencil")),
        };
        let init = local
            .init
            .as_ref()
            .ok_or_else(|| syn::Error::new_spanned(&local.pat, "`let` in a stencil needs a value"))?;
        if let Some((_, d)) = &init.diverge {
            return Err(syn::Error::new_spanned(d, "`let ... else` is not allowed in a stencil"));
        }
        if scope.args.contains_key(&ident.unraw().to_string()) {
            return Err(syn::Error::new_spanned(
                &ident,
                format!("`{ident}` shadows an argument of the stencil; choose another name"),
            ));
        }
        Ok(Let {
            name: ident,
            ty,
            value: self.expr(&init.expr, scope)?,
        })
    }

    fn mk(&self, kind: ExprKind, e: &syn::Expr) -> Expr {
        let span = e.span();
        Expr {
            kind,
            span,
            line: line_of(span),
            text: rust_text(e),
        }
    }

    pub fn expr(&mut self, e: &syn::Expr, scope: &Scope) -> syn::Result<Expr> {
        use syn::Expr as E;
        let kind = match e {
            E::Paren(p) => return self.expr(&p.expr, scope),
            E::Group(g) => return self.expr(&g.expr, scope),
            E::Lit(l) => lit(&l.lit)?,
            E::Path(p) => self.path(p, scope)?,
            E::Unary(u) => {
                let op = match u.op {
                    syn::UnOp::Neg(_) => UnOp::Neg,
                    syn::UnOp::Not(_) => UnOp::Not,
                    _ => return Err(syn::Error::new_spanned(u.op, "dereference is not needed in a stencil")),
                };
                ExprKind::Unary(op, Box::new(self.expr(&u.expr, scope)?))
            }
            E::Binary(b) => {
                let op = binop(&b.op)?;
                let l = self.expr(&b.left, scope);
                let r = self.expr(&b.right, scope);
                ExprKind::Binary(op, Box::new(l?), Box::new(r?))
            }
            E::Cast(c) => {
                let ty = match &*c.ty {
                    syn::Type::Path(tp) => tp.path.get_ident().and_then(|i| Scalar::from_ident(&i.to_string())),
                    _ => None,
                };
                let ty =
                    ty.ok_or_else(|| syn::Error::new_spanned(&c.ty, "casts go to `f32`, `f64`, `i32`, `u32` or `u8`"))?;
                ExprKind::Cast(Box::new(self.expr(&c.expr, scope)?), ty)
            }
            E::MethodCall(m) => self.method(m, scope)?,
            E::Call(c) => self.call(c, scope)?,
            E::Field(f) => self.member(f, scope)?,
            E::If(i) => self.if_expr(i, scope)?,
            E::Match(m) => self.match_expr(m, scope)?,
            E::Tuple(t) if !t.elems.is_empty() => ExprKind::Tuple(
                t.elems
                    .iter()
                    .map(|x| self.expr(x, scope))
                    .collect::<syn::Result<Vec<_>>>()?,
            ),
            E::Block(b) if b.label.is_none() => ExprKind::Block(
                self.block(&b.block, scope)
                    .ok_or_else(|| syn::Error::new(b.block.brace_token.span.open(), "invalid block"))?,
            ),
            other => return Err(unsupported(other)),
        };
        Ok(self.mk(kind, e))
    }

    fn path(&self, p: &syn::ExprPath, scope: &Scope) -> syn::Result<ExprKind> {
        if let Some(id) = p.path.get_ident() {
            let name = id.unraw().to_string();
            if scope.locals.contains(&name) {
                return Ok(ExprKind::Local(id.clone()));
            }
            if let Some(&i) = scope.args.get(&name) {
                return match &self.args[i] {
                    Arg::Scalar { .. } => Ok(ExprKind::ScalarArg(i)),
                    Arg::Field(_) => Err(syn::Error::new_spanned(
                        id,
                        format!(
                            "read the grid at an offset: `{name}.at({})`",
                            vec!["0"; self.rank].join(", ")
                        ),
                    )),
                    Arg::Params { .. } => Err(syn::Error::new_spanned(
                        id,
                        format!("use a member of the params struct, e.g. `{name}.a`"),
                    )),
                    Arg::Point { .. } => Err(syn::Error::new_spanned(
                        id,
                        format!(
                            "read the point's index or the grid's extent: {}",
                            point_fields(self.rank)
                                .iter()
                                .map(|f| format!("`{name}.{f}`"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    )),
                };
            }
        }
        Ok(ExprKind::Const(p.path.clone()))
    }

    fn member(&mut self, f: &syn::ExprField, scope: &Scope) -> syn::Result<ExprKind> {
        let syn::Member::Named(member) = &f.member else {
            return Err(syn::Error::new_spanned(&f.member, "params members are named fields"));
        };
        if let syn::Expr::Path(p) = &*f.base {
            if let Some(id) = p.path.get_ident() {
                if let Some(&i) = scope.args.get(&id.unraw().to_string()) {
                    if let Arg::Params { .. } = self.args[i] {
                        return Ok(ExprKind::Member {
                            arg: i,
                            member: member.clone(),
                        });
                    }
                    if let Arg::Point { .. } = self.args[i] {
                        let fields = point_fields(self.rank);
                        let m = member.unraw().to_string();
                        let Some(k) = fields.iter().position(|f| *f == m) else {
                            return Err(syn::Error::new_spanned(
                                member,
                                format!(
                                    "a {}-D point has {}",
                                    self.rank,
                                    fields.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(", ")
                                ),
                            ));
                        };
                        return Ok(ExprKind::Point {
                            axis: k % self.rank,
                            extent: k >= self.rank,
                        });
                    }
                }
            }
        }
        Err(syn::Error::new_spanned(
            f,
            "field access is allowed on a params struct argument only, e.g. `k.a`",
        ))
    }

    fn method(&mut self, m: &syn::ExprMethodCall, scope: &Scope) -> syn::Result<ExprKind> {
        let name = m.method.to_string();
        if let (Some(draws), syn::Expr::Path(p)) = (&self.draws, &*m.receiver) {
            if p.path.get_ident().is_some_and(|id| id.unraw() == draws.as_str()) && !scope.locals.contains(draws) {
                return self.draw(m);
            }
        }
        if name == "at" || name == "new" || name == "old" {
            return self.read(m, scope);
        }
        if m.turbofish.is_some() {
            return Err(syn::Error::new_spanned(
                &m.turbofish,
                "turbofish is not supported in a stencil",
            ));
        }
        let f = MathFn::from_name(&name).ok_or_else(|| {
            syn::Error::new_spanned(
                &m.method,
                format!("unknown method `{name}`; stencils may call: {}", MathFn::NAMES),
            )
        })?;
        let mut args = vec![self.expr(&m.receiver, scope)?];
        for a in &m.args {
            args.push(self.expr(a, scope)?);
        }
        if args.len() != f.arity() {
            return Err(syn::Error::new_spanned(
                &m.method,
                format!("`{name}` takes {} argument(s)", f.arity() - 1),
            ));
        }
        Ok(ExprKind::Call(f, args))
    }

    /// `grid.at(dx, dy)`: offsets must be integer literals (possibly negated).
    fn read(&mut self, m: &syn::ExprMethodCall, scope: &Scope) -> syn::Result<ExprKind> {
        let field = match &*m.receiver {
            syn::Expr::Path(p) => p
                .path
                .get_ident()
                .and_then(|id| scope.args.get(&id.unraw().to_string()).copied()),
            _ => None,
        };
        let method = m.method.to_string();
        let Some(arg) = field.filter(|&i| matches!(self.args[i], Arg::Field(_))) else {
            return Err(syn::Error::new_spanned(
                &m.receiver,
                match method.as_str() {
                    "at" => "`.at(..)` reads a grid argument of the stencil",
                    _ => "`.new(..)` and `.old(..)` read the swept field of a sweep (its `&Sweep<T>` argument)",
                },
            ));
        };
        match (self.sweep == Some(arg), method.as_str()) {
            (true, "at") => {
                return Err(syn::Error::new_spanned(
                    &m.method,
                    "the swept field is read with `.new(dx, ..)` (a value already updated by this sweep: behind \
                     the point) or `.old(dx, ..)` (a value not yet updated: ahead of the point, or the point itself)",
                ))
            }
            (false, "new" | "old") => return Err(syn::Error::new_spanned(
                &m.method,
                match self.sweep {
                    Some(s) => format!(
                        "`.{method}(..)` reads the swept field `{}`; read other grids with `.at(..)`",
                        self.args[s].name()
                    ),
                    None => {
                        "`.new(..)` and `.old(..)` belong to `#[clforge::sweep]`; a stencil reads grids with `.at(..)`"
                            .to_string()
                    }
                },
            )),
            _ => {}
        }
        if m.args.len() != self.rank {
            return Err(syn::Error::new_spanned(
                &m.method,
                format!(
                    "this stencil is {}-D: `.at` takes {} offset(s), found {}",
                    self.rank,
                    self.rank,
                    m.args.len()
                ),
            ));
        }
        let mut offset = [0i64; 3];
        for (k, a) in m.args.iter().enumerate() {
            offset[k] = int_literal(a).ok_or_else(|| {
                syn::Error::new_spanned(
                    a,
                    format!("stencil offsets must be integer literals, found `{}`", rust_text(a)),
                )
            })?;
        }
        if self.sweep == Some(arg) || self.lattice_state == Some(arg) {
            self.sweep_reads.push(SweepRead {
                new: method == "new",
                offset,
                tokens: quote::ToTokens::to_token_stream(m),
                text: rust_text(m),
            });
        }
        Ok(ExprKind::Read { arg, offset })
    }

    fn call(&mut self, c: &syn::ExprCall, scope: &Scope) -> syn::Result<ExprKind> {
        let syn::Expr::Path(p) = &*c.func else {
            return Err(syn::Error::new_spanned(
                &c.func,
                "only math functions may be called in a stencil",
            ));
        };
        let segs: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
        // `Max(v)`, `Min(v)`, `Sum(v)`: the value of a reduction output.
        if let ([name], [a]) = (segs.as_slice(), c.args.iter().collect::<Vec<_>>().as_slice()) {
            if let Some(op) = crate::model::ReduceOp::from_ident(name) {
                return Ok(ExprKind::Reduce(op, Box::new(self.expr(a, scope)?)));
            }
        }
        let (f, ty) = match segs.as_slice() {
            [ty, name] => (MathFn::from_name(name), Scalar::from_ident(ty)),
            _ => (None, None),
        };
        let f = f.filter(|_| ty.is_some());
        let Some(f) = f else {
            return Err(syn::Error::new_spanned(
                &c.func,
                format!(
                    "unknown function `{}`; stencils may call math functions as `f32::name(..)` or methods, with name one of: {}",
                    segs.join("::"),
                    MathFn::NAMES
                ),
            ));
        };
        let args = c
            .args
            .iter()
            .map(|a| self.expr(a, scope))
            .collect::<syn::Result<Vec<_>>>()?;
        if args.len() != f.arity() {
            return Err(syn::Error::new_spanned(
                &c.func,
                format!("`{}` takes {} argument(s)", segs.join("::"), f.arity()),
            ));
        }
        // `f32::sqrt(2.0)` is an `f32` whatever the literal would default to.
        let call = Expr {
            kind: ExprKind::Call(f, args),
            span: c.span(),
            line: line_of(c.span()),
            text: rust_text(&syn::Expr::Call(c.clone())),
        };
        Ok(match ty {
            Some(t) if f.arity() > 0 => ExprKind::Typed(Box::new(call), t),
            _ => call.kind,
        })
    }

    fn if_expr(&mut self, i: &syn::ExprIf, scope: &Scope) -> syn::Result<ExprKind> {
        let cond = self.expr(&i.cond, scope)?;
        let then = self
            .block(&i.then_branch, scope)
            .ok_or_else(|| syn::Error::new(i.if_token.span, "invalid `if` branch"))?;
        let Some((_, els)) = &i.else_branch else {
            return Err(syn::Error::new_spanned(
                i.if_token,
                "`if` needs an `else` in a stencil: every path must compute the new value",
            ));
        };
        let els = match &**els {
            syn::Expr::Block(b) => self
                .block(&b.block, scope)
                .ok_or_else(|| syn::Error::new(i.if_token.span, "invalid `else` branch"))?,
            other => {
                let e = self.expr(other, scope)?;
                Block {
                    lets: Vec::new(),
                    tail: Box::new(e),
                }
            }
        };
        Ok(ExprKind::If(Box::new(cond), then, els))
    }

    fn match_expr(&mut self, m: &syn::ExprMatch, scope: &Scope) -> syn::Result<ExprKind> {
        let scrut = self.expr(&m.expr, scope)?;
        let mut arms = Vec::new();
        for arm in &m.arms {
            if let Some((if_token, _)) = &arm.guard {
                return Err(syn::Error::new_spanned(
                    if_token,
                    "match guards are not supported in a stencil; use `if` in the arm",
                ));
            }
            let mut pats = Vec::new();
            self.pattern(&arm.pat, &mut pats)?;
            let body = match &*arm.body {
                syn::Expr::Block(b) => self
                    .block(&b.block, scope)
                    .ok_or_else(|| syn::Error::new_spanned(&arm.pat, "invalid arm"))?,
                other => Block {
                    lets: Vec::new(),
                    tail: Box::new(self.expr(other, scope)?),
                },
            };
            arms.push(Arm { pats, body });
        }
        let exhaustive = arms
            .last()
            .is_some_and(|a| a.pats.iter().any(|p| matches!(p, Pat::Wild)));
        if !exhaustive {
            return Err(syn::Error::new_spanned(
                m.match_token,
                "a stencil `match` on a mask value must end with a `_ => ...` arm",
            ));
        }
        Ok(ExprKind::Match(Box::new(scrut), arms))
    }

    fn pattern(&mut self, p: &syn::Pat, out: &mut Vec<Pat>) -> syn::Result<()> {
        let mk = |kind: ExprKind, tokens: &dyn quote::ToTokens| {
            let span = tokens
                .to_token_stream()
                .into_iter()
                .next()
                .map_or_else(proc_macro2::Span::call_site, |t| t.span());
            Expr {
                kind,
                span,
                line: line_of(span),
                text: rust_text(&tokens.to_token_stream()),
            }
        };
        match p {
            syn::Pat::Wild(_) => out.push(Pat::Wild),
            syn::Pat::Or(o) => {
                for c in &o.cases {
                    self.pattern(c, out)?;
                }
            }
            syn::Pat::Lit(l) => out.push(Pat::Value(mk(lit(&l.lit)?, l))),
            syn::Pat::Ident(id) if id.by_ref.is_none() && id.mutability.is_none() && id.subpat.is_none() => {
                let path = syn::Path::from(id.ident.clone());
                out.push(Pat::Value(mk(ExprKind::Const(path), id)));
            }
            syn::Pat::Path(pp) => out.push(Pat::Value(mk(ExprKind::Const(pp.path.clone()), pp))),
            other => {
                return Err(syn::Error::new_spanned(
                    other,
                    "stencil `match` patterns are integer literals, named constants, `A | B` or `_`",
                ))
            }
        }
        Ok(())
    }
}

fn lit(l: &syn::Lit) -> syn::Result<ExprKind> {
    match l {
        syn::Lit::Float(f) => {
            let suffix = match f.suffix() {
                "" => None,
                s => Some(
                    Scalar::from_ident(s)
                        .ok_or_else(|| syn::Error::new_spanned(f, "float suffixes are `f32` or `f64`"))?,
                ),
            };
            Ok(ExprKind::Float(f.base10_digits().to_string(), suffix))
        }
        syn::Lit::Int(i) => {
            let suffix = match i.suffix() {
                "" => None,
                s => match Scalar::from_ident(s) {
                    Some(sc) if sc != Scalar::Bool => Some(sc),
                    _ => {
                        return Err(syn::Error::new_spanned(
                            i,
                            "integer suffixes are `i32`, `u32`, `u8`, `f32` or `f64`",
                        ))
                    }
                },
            };
            Ok(ExprKind::Int(i.base10_digits().to_string(), suffix))
        }
        syn::Lit::Bool(b) => Ok(ExprKind::Bool(b.value)),
        other => Err(syn::Error::new_spanned(
            other,
            "only numeric and boolean literals are allowed in a stencil",
        )),
    }
}

fn binop(op: &syn::BinOp) -> syn::Result<BinOp> {
    use syn::BinOp as B;
    Ok(match op {
        B::Add(_) => BinOp::Add,
        B::Sub(_) => BinOp::Sub,
        B::Mul(_) => BinOp::Mul,
        B::Div(_) => BinOp::Div,
        B::Rem(_) => BinOp::Rem,
        B::And(_) => BinOp::And,
        B::Or(_) => BinOp::Or,
        B::BitAnd(_) => BinOp::BitAnd,
        B::BitOr(_) => BinOp::BitOr,
        B::BitXor(_) => BinOp::BitXor,
        B::Shl(_) => BinOp::Shl,
        B::Shr(_) => BinOp::Shr,
        B::Eq(_) => BinOp::Eq,
        B::Ne(_) => BinOp::Ne,
        B::Lt(_) => BinOp::Lt,
        B::Le(_) => BinOp::Le,
        B::Gt(_) => BinOp::Gt,
        B::Ge(_) => BinOp::Ge,
        other => {
            return Err(syn::Error::new_spanned(
                other,
                "compound assignment is not allowed: a stencil returns the new value instead of assigning",
            ))
        }
    })
}
