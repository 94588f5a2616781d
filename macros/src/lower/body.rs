//! The body language, model -> IR expressions: hoisting of `let`s out of branches,
//! `if`/`match` to selects, fresh names, and the reads found on the way. Types follow
//! `typing.rs` (Rust's literal inference, checked back in Rust for params members and constants).

use super::typing::{default_float, float_lit};
use crate::ir::{self, ConstUse, MemberUse, Op as Kind};
use crate::model::{Arg, BinOp, Block, Expr, ExprKind, MathFn, OutType, Pat, ReduceOp, Scalar, UnOp};
use std::collections::{BTreeSet, HashMap, HashSet};
use syn::ext::IdentExt;

/// The OpenCL spelling of a user name (`clforge_abi::names`): as written when safe, else
/// behind the `rs_` prefix. Injective, and never a keyword, builtin or generated name.
pub fn cl_name(name: &str) -> String {
    let mut s = String::new();
    // Writing to a `String` cannot fail.
    let _ = clforge_abi::names::cl_name(name, &mut s);
    s
}

/// The OpenCL spelling of a params struct member, as `#[derive(Params)]` declares it.
pub fn cl_member_name(name: &str) -> String {
    let mut s = String::new();
    // Writing to a `String` cannot fail.
    let _ = clforge_abi::names::cl_member_name(name, &mut s);
    s
}

/// Every OpenCL name of one kernel program: the user's arguments first (by [`cl_name`]), then
/// names made fresh on demand (`let`s, constants, params structs, tiles), each unique.
#[derive(Clone, Debug, Default)]
pub struct Names {
    used: HashSet<String>,
}

impl Names {
    pub fn new(args: &[Arg]) -> (Names, Vec<String>) {
        let mut n = Names::default();
        let names = args.iter().map(|a| n.fresh(&a.name().unraw().to_string())).collect();
        (n, names)
    }

    /// A name for `base` (a user name or a stem) used nowhere else in the program: `base`'s
    /// [`cl_name`], or that with `_1`, `_2`, ... appended.
    pub fn fresh(&mut self, base: &str) -> String {
        let base = cl_name(base);
        let mut name = base.clone();
        let mut n = 0;
        while self.used.contains(&name) || clforge_abi::names::is_reserved(&name) {
            n += 1;
            name = format!("{base}_{n}");
        }
        self.used.insert(name.clone());
        name
    }
}

/// A `let` in scope.
#[derive(Clone, Debug)]
struct Local {
    user: String,
    cl: String,
    ty: Scalar,
    varying: bool,
    /// The model `let`'s address: its identity across the passes of [`Lowerer::body`].
    key: usize,
}

/// Lowers one body over the kind's arguments.
pub struct Lowerer<'a> {
    args: &'a [Arg],
    out: Scalar,
    pub lets: Vec<ir::Let>,
    pub names: Names,
    scope: Vec<Local>,
    pub consts: Vec<ConstUse>,
    pub members: Vec<MemberUse>,
    /// Every (argument, offset) read, for the access analysis.
    pub reads: BTreeSet<(usize, [i64; 3])>,
    /// The body reads its point's index or the grid's extents.
    pub uses_point: bool,
    matches: usize,
    /// Types of `let`s whose value alone does not decide it (`let t = 0.5;`), from their uses,
    /// keyed by the model `let`'s address: Rust infers them from later uses too.
    decided: HashMap<usize, Scalar>,
    /// What the uses of such `let`s asked for in this pass.
    wanted: HashMap<usize, Scalar>,
    /// `let`s whose type is open (decided by use, else Rust's fallback).
    open: HashSet<usize>,
}

impl<'a> Lowerer<'a> {
    /// A lowerer over `args`, whose OpenCL names `names` has allocated.
    pub fn new(args: &'a [Arg], out: Scalar, names: Names) -> Lowerer<'a> {
        Lowerer {
            args,
            out,
            lets: Vec::new(),
            names,
            scope: Vec::new(),
            consts: Vec::new(),
            members: Vec::new(),
            reads: BTreeSet::new(),
            uses_point: false,
            matches: 0,
            decided: HashMap::new(),
            wanted: HashMap::new(),
            open: HashSet::new(),
        }
    }

    /// Lowers the body's block to its results, one per output (`outs`), each cast to its type.
    ///
    /// A `let` whose value has no type of its own (`let t = 0.5;`) takes the type its uses ask
    /// for, as in Rust: the body is lowered again with the types the uses asked for until no
    /// use asks for another (each pass decides at least one more `let`). Undecided ones take
    /// Rust's fallback (`f64` for float literals, `i32` for integer ones).
    ///
    /// A system of fields ends in a tuple, or in `if`/`match` branches that each end in one. The top block's `let`s are lowered once
    /// and shared by every output; each output is the tail projected on its element.
    pub fn outputs(&mut self, body: &Block, outs: &[OutType]) -> syn::Result<Vec<ir::Expr>> {
        let start = (self.names.clone(), self.matches);
        // Projected once: the passes below key `let` types by the model `let`s' addresses.
        let plain = outs.len() == 1 && outs[0].reduce.is_none();
        let tails = if plain {
            Vec::new()
        } else {
            let n = outs.len();
            outs.iter()
                .enumerate()
                .map(|(i, o)| {
                    let e = if n == 1 {
                        (*body.tail).clone()
                    } else {
                        project(&body.tail, i, n)?
                    };
                    match o.reduce {
                        Some(op) => unwrap_reduction(&e, op, o.ty),
                        None => Ok(e),
                    }
                })
                .collect::<syn::Result<Vec<_>>>()?
        };
        loop {
            self.wanted.clear();
            let results = if plain {
                vec![self.block(body, Some(outs[0].ty))?]
            } else {
                let depth = self.scope.len();
                self.lets_of(body)?;
                let mut results = Vec::with_capacity(outs.len());
                for (tail, o) in tails.iter().zip(outs) {
                    let r = self.expr(tail, Some(o.ty))?;
                    results.push(self.coerce(r, o.ty));
                }
                self.scope.truncate(depth);
                results
            };
            let mut changed = false;
            for (k, t) in std::mem::take(&mut self.wanted) {
                if let std::collections::hash_map::Entry::Vacant(v) = self.decided.entry(k) {
                    v.insert(t);
                    changed = true;
                }
            }
            if !changed {
                return Ok(results
                    .into_iter()
                    .zip(outs)
                    .map(|(r, o)| self.coerce(r, o.ty))
                    .collect());
            }
            (self.names, self.matches) = start.clone();
            self.lets.clear();
            self.consts.clear();
            self.members.clear();
            self.reads.clear();
        }
    }
}

impl Lowerer<'_> {
    /// The type an expression has by itself, without context (Rust's literal inference
    /// needs the context for unsuffixed literals, params members and constants).
    fn natural(&self, e: &Expr) -> Option<Scalar> {
        self.natural_in(e, &[])
    }

    /// The natural type of a block's value, its own `let`s in scope.
    fn natural_block(&self, b: &Block) -> Option<Scalar> {
        self.natural_block_in(b, &[])
    }

    fn natural_block_in(&self, b: &Block, shadow: &[(String, Option<Scalar>)]) -> Option<Scalar> {
        let mut inner = shadow.to_vec();
        for l in &b.lets {
            let ty = l.ty.or_else(|| self.natural_in(&l.value, &inner));
            inner.push((l.name.unraw().to_string(), ty));
        }
        self.natural_in(&b.tail, &inner)
    }

    /// [`Self::natural`] inside blocks whose `let`s (`shadow`, innermost last) hide outer names:
    /// `{ let t0 = 8i32; t0 }` is an `i32` whatever an outer `t0` is.
    fn natural_in(&self, e: &Expr, shadow: &[(String, Option<Scalar>)]) -> Option<Scalar> {
        let natural = |x: &Expr| self.natural_in(x, shadow);
        let block = |b: &Block| self.natural_block_in(b, shadow);
        match &e.kind {
            ExprKind::Float(_, s) | ExprKind::Int(_, s) => *s,
            ExprKind::Bool(_) => Some(Scalar::Bool),
            ExprKind::Read { arg, .. } => match &self.args[*arg] {
                Arg::Field(f) => Some(f.elem),
                _ => None,
            },
            ExprKind::ScalarArg(i) => match &self.args[*i] {
                Arg::Scalar { ty, .. } => Some(*ty),
                _ => None,
            },
            ExprKind::Local(id) => {
                let name = id.unraw().to_string();
                match shadow.iter().rev().find(|(n, _)| *n == name) {
                    Some((_, ty)) => *ty,
                    None => self
                        .lookup(&name)
                        .filter(|l| !self.open.contains(&l.key) || self.decided.contains_key(&l.key))
                        .map(|l| l.ty),
                }
            }
            ExprKind::Member { .. } | ExprKind::Const(_) => None,
            ExprKind::Unary(_, x) => natural(x),
            ExprKind::Binary(op, l, r) => {
                if op.is_comparison() || op.is_logical() {
                    Some(Scalar::Bool)
                } else if matches!(op, BinOp::Shl | BinOp::Shr) {
                    natural(l)
                } else {
                    natural(l).or_else(|| natural(r))
                }
            }
            ExprKind::Cast(_, t) => Some(*t),
            ExprKind::Call(f, args) => match f {
                MathFn::Powi => natural(&args[0]),
                _ => args.iter().find_map(natural),
            },
            ExprKind::If(_, a, b) => block(a).or_else(|| block(b)),
            ExprKind::Match(_, arms) => arms.iter().find_map(|a| block(&a.body)),
            ExprKind::Block(b) => block(b),
            ExprKind::Typed(_, t) => Some(*t),
            ExprKind::Draw { uniform, .. } => Some(if *uniform { Scalar::F32 } else { Scalar::U32 }),
            ExprKind::Tuple(_) | ExprKind::Reduce(..) => None,
            ExprKind::Point { .. } => Some(Scalar::I32),
        }
    }

    /// Like [`Self::natural`], with the type the lowering assumes for params members and
    /// constants (the body's float type; checked back in Rust): the type an expression takes
    /// when its context gives none.
    fn assumed(&self, e: &Expr) -> Option<Scalar> {
        fn has_assumed(e: &Expr) -> bool {
            match &e.kind {
                ExprKind::Member { .. } | ExprKind::Const(_) => true,
                ExprKind::Unary(_, x) => has_assumed(x),
                ExprKind::Binary(op, l, r) if !op.is_comparison() && !op.is_logical() => {
                    has_assumed(l) || (!matches!(op, BinOp::Shl | BinOp::Shr) && has_assumed(r))
                }
                ExprKind::Call(_, args) => args.first().is_some_and(has_assumed),
                _ => false,
            }
        }
        self.natural(e)
            .or_else(|| has_assumed(e).then(|| default_float(self.args, self.out)))
    }

    fn lookup(&self, name: &str) -> Option<Local> {
        self.scope.iter().rev().find(|l| l.user == name).cloned()
    }

    fn fresh(&mut self, base: &str) -> String {
        self.names.fresh(base)
    }

    /// Casts a value to the type its context needs (only literals/consts arrive untyped here).
    fn coerce(&self, e: ir::Expr, ty: Scalar) -> ir::Expr {
        if e.ty == ty {
            e
        } else {
            ir::Expr {
                varying: e.varying,
                op: Kind::Cast(Box::new(e), ty),
                ty,
            }
        }
    }

    fn block(&mut self, b: &Block, expected: Option<Scalar>) -> syn::Result<ir::Expr> {
        let depth = self.scope.len();
        self.lets_of(b)?;
        let tail = self.expr(&b.tail, expected);
        self.scope.truncate(depth);
        tail
    }

    /// Lowers a block's `let`s and brings them into scope (the caller truncates the scope).
    fn lets_of(&mut self, b: &Block) -> syn::Result<()> {
        for l in &b.lets {
            let key = l as *const crate::model::Let as usize;
            let natural = l.ty.or_else(|| self.natural(&l.value));
            if natural.is_none() {
                self.open.insert(key);
            }
            let ty = natural.or_else(|| self.decided.get(&key).copied());
            let value = self.expr(&l.value, ty)?;
            let value = match ty {
                Some(t) => self.coerce(value, t),
                None => value,
            };
            let cl = self.fresh(&l.name.unraw().to_string());
            self.scope.push(Local {
                user: l.name.unraw().to_string(),
                cl: cl.clone(),
                ty: value.ty,
                varying: value.varying,
                key,
            });
            self.lets.push(ir::Let {
                name: cl,
                value,
                line: l.value.line,
                text: l.value.text.clone(),
            });
        }
        Ok(())
    }

    fn expr(&mut self, e: &Expr, expected: Option<Scalar>) -> syn::Result<ir::Expr> {
        let fl = default_float(self.args, self.out);
        let leaf = |op: Kind, ty: Scalar, varying: bool| Ok(ir::Expr { op, ty, varying });
        match &e.kind {
            ExprKind::Float(digits, suffix) => {
                // Rust's fallback for a float literal nothing constrains is `f64`.
                let ty = suffix.or(expected.filter(|t| t.is_float())).unwrap_or(Scalar::F64);
                leaf(Kind::Lit(float_lit(digits, ty)), ty, false)
            }
            ExprKind::Int(digits, suffix) => {
                let ty = suffix
                    .or(expected.filter(|t| *t != Scalar::Bool))
                    .unwrap_or(Scalar::I32);
                let text = match ty {
                    Scalar::F32 | Scalar::F64 => float_lit(digits, ty),
                    Scalar::U32 => format!("{digits}u"),
                    // A negative pattern literal arrives whole; in C `2147483648` is a `long`.
                    Scalar::I32 if digits == "-2147483648" => "(-2147483647 - 1)".to_string(),
                    _ => digits.clone(),
                };
                leaf(Kind::Lit(text), ty, false)
            }
            ExprKind::Bool(b) => leaf(Kind::Lit(b.to_string()), Scalar::Bool, false),
            // The site's draw: word `j` of the block `clforge_block_<k>` the lattice kernel
            // computes once for its four sites (templates/lattice/lattice.cl.tera; the renderer
            // collects the `k`s from these leaves).
            ExprKind::Draw { index, uniform } => {
                let draw = format!("clforge_word(clforge_block_{index}, clforge_j)");
                if *uniform {
                    leaf(Kind::Const(format!("clforge_uniform_f32({draw})")), Scalar::F32, true)
                } else {
                    leaf(Kind::Const(draw), Scalar::U32, true)
                }
            }
            ExprKind::Point { axis, extent } => {
                self.uses_point = true;
                leaf(
                    Kind::Point {
                        axis: *axis,
                        extent: *extent,
                    },
                    Scalar::I32,
                    !extent,
                )
            }
            ExprKind::Reduce(op, _) => Err(syn::Error::new(
                e.span,
                format!(
                    "`{}(..)` is the value of a reduction output (`-> {}<f32>`, or that in the tuple), and only \
                     there",
                    op.rust(),
                    op.rust()
                ),
            )),
            ExprKind::Tuple(_) => Err(syn::Error::new(
                e.span,
                "a tuple is the value of a stencil with several outputs (`-> (f32, f32)`), and only its last \
                 expression (or the branches that end it)",
            )),
            ExprKind::Read { arg, offset } => {
                self.reads.insert((*arg, *offset));
                let Arg::Field(f) = &self.args[*arg] else {
                    return Err(internal(e));
                };
                leaf(
                    Kind::Read {
                        arg: *arg,
                        offset: *offset,
                    },
                    f.elem,
                    true,
                )
            }
            ExprKind::Member { arg, member } => {
                let ty = expected.unwrap_or(fl);
                // Every type assumed for a member is checked back in Rust.
                if !self
                    .members
                    .iter()
                    .any(|m| m.arg == *arg && m.member == *member && m.ty == ty)
                {
                    self.members.push(MemberUse {
                        arg: *arg,
                        member: member.clone(),
                        ty,
                    });
                }
                leaf(
                    Kind::Member {
                        arg: *arg,
                        member: cl_member_name(&member.unraw().to_string()),
                    },
                    ty,
                    false,
                )
            }
            ExprKind::ScalarArg(i) => {
                let Arg::Scalar { ty, .. } = &self.args[*i] else {
                    return Err(internal(e));
                };
                leaf(Kind::ScalarArg(*i), *ty, false)
            }
            ExprKind::Local(id) => {
                let l = self
                    .lookup(&id.unraw().to_string())
                    .ok_or_else(|| syn::Error::new(e.span, format!("`{id}` is not in scope")))?;
                if let Some(t) = expected {
                    if self.open.contains(&l.key) && t != l.ty && !self.decided.contains_key(&l.key) {
                        self.wanted.entry(l.key).or_insert(t);
                    }
                }
                leaf(Kind::Local(l.cl), l.ty, l.varying)
            }
            ExprKind::Const(path) => {
                let ty = expected.unwrap_or(fl);
                let written = path
                    .segments
                    .iter()
                    .map(|s| s.ident.unraw().to_string())
                    .collect::<Vec<_>>();
                let rust = written.join("::");
                let cl = match self.consts.iter().find(|c| c.rust == rust) {
                    Some(c) if c.ty != ty => {
                        return Err(syn::Error::new(
                            e.span,
                            format!(
                                "constant `{rust}` is used as `{}` here and as `{}` elsewhere in the stencil",
                                ty.rust(),
                                c.ty.rust()
                            ),
                        ))
                    }
                    Some(c) => c.cl_name.clone(),
                    None => {
                        // Paths map to distinct OpenCL names: `gain::K` is `gain_K`, and a
                        // constant named `gain_K` then gets `gain_K_1`.
                        let cl = self.fresh(&written.join("_"));
                        self.consts.push(ConstUse {
                            cl_name: cl.clone(),
                            rust,
                            path: path.clone(),
                            ty,
                            span: e.span,
                        });
                        cl
                    }
                };
                leaf(Kind::Const(cl), ty, false)
            }
            ExprKind::Unary(op, x) => {
                let want = match op {
                    UnOp::Not => self.natural(x).or(expected).or(Some(Scalar::Bool)),
                    UnOp::Neg => self.natural(x).or(expected),
                };
                let x = self.expr(x, want)?;
                // `-2147483648i32` is one literal in Rust; in C `2147483648` is a `long`.
                if let (UnOp::Neg, Kind::Lit(text)) = (op, &x.op) {
                    let text = match (x.ty, text.as_str()) {
                        (Scalar::I32, "2147483648") => "(-2147483647 - 1)".to_string(),
                        // `-(-1e30)`: C would read `--` as a decrement.
                        (_, t) if t.starts_with('-') => t[1..].to_string(),
                        _ => format!("-{text}"),
                    };
                    return Ok(ir::Expr {
                        op: Kind::Lit(text),
                        ..x
                    });
                }
                Ok(ir::Expr {
                    ty: x.ty,
                    varying: x.varying,
                    op: Kind::Unary(*op, Box::new(x)),
                })
            }
            ExprKind::Binary(op, l, r) => {
                let (lt, rt) = if op.is_logical() {
                    (Some(Scalar::Bool), Some(Scalar::Bool))
                } else if matches!(op, BinOp::Shl | BinOp::Shr) {
                    (
                        self.natural(l).or(expected).or_else(|| self.assumed(l)),
                        self.natural(r),
                    )
                } else {
                    let t = self.natural(l).or_else(|| self.natural(r));
                    let t = if op.is_comparison() { t } else { t.or(expected) };
                    let t = t.or_else(|| self.assumed(l)).or_else(|| self.assumed(r));
                    (t, t)
                };
                let l = self.expr(l, lt)?;
                let r = self.expr(r, rt.or(Some(l.ty)))?;
                let ty = if op.is_comparison() || op.is_logical() {
                    Scalar::Bool
                } else {
                    l.ty
                };
                if matches!(op, BinOp::Div | BinOp::Rem) && !ty.is_float() && !safe_divisor(&r) {
                    return Ok(self.guarded_division(*op, l, r, e));
                }
                if *op == BinOp::Rem && ty.is_float() && (l.varying || r.varying) {
                    // `vec8` prints float `%` lane by lane (emit/expr.rs): name the operands once.
                    let (l, r) = (self.named(l, "num", e), self.named(r, "den", e));
                    return Ok(binary(*op, l, r, ty));
                }
                Ok(binary(*op, l, r, ty))
            }
            ExprKind::Cast(x, ty) => {
                let inner = self.expr(x, self.natural(x))?;
                // Float to integer tests the value for NaN, then converts it: name it once.
                let inner = if inner.ty.is_float() && !ty.is_float() {
                    self.named(inner, "unrounded", e)
                } else {
                    inner
                };
                Ok(ir::Expr {
                    varying: inner.varying,
                    op: Kind::Cast(Box::new(inner), *ty),
                    ty: *ty,
                })
            }
            ExprKind::Call(f, args) => self.call(*f, args, expected, e),
            ExprKind::If(cond, a, b) => {
                let t = self
                    .natural_block(a)
                    .or_else(|| self.natural_block(b))
                    .or(expected)
                    .or_else(|| self.assumed(&a.tail))
                    .or_else(|| self.assumed(&b.tail));
                let cond = self.expr(cond, Some(Scalar::Bool))?;
                let a = self.block(a, t)?;
                let b = self.block(b, t.or(Some(a.ty)))?;
                Ok(select(cond, a, b))
            }
            ExprKind::Match(scrut, arms) => self.match_expr(scrut, arms, expected),
            ExprKind::Block(b) => self.block(b, expected),
            ExprKind::Typed(x, t) => {
                let v = self.expr(x, Some(*t))?;
                Ok(self.coerce(v, *t))
            }
        }
    }

    fn call(&mut self, f: MathFn, args: &[Expr], expected: Option<Scalar>, e: &Expr) -> syn::Result<ir::Expr> {
        let t = match f {
            MathFn::Powi => self.natural(&args[0]),
            _ => args.iter().find_map(|a| self.natural(a)),
        }
        .or(expected)
        .or_else(|| args.first().and_then(|a| self.assumed(a)))
        .unwrap_or(Scalar::F64);
        let float_only = !matches!(f, MathFn::Abs | MathFn::Min | MathFn::Max | MathFn::Clamp);
        if float_only && !t.is_float() {
            return Err(syn::Error::new(
                e.span,
                format!("`{}` needs a float argument (`f32` or `f64`)", e.text),
            ));
        }
        let mut out = Vec::new();
        for (i, a) in args.iter().enumerate() {
            let want = if f == MathFn::Powi && i == 1 { Scalar::I32 } else { t };
            let v = self.expr(a, Some(want))?;
            out.push(v);
        }
        if let (MathFn::Clamp, true, [x, lo, hi]) = (f, t.is_float(), &out[..]) {
            // Rust's `clamp`: `if x < lo { lo } else if x > hi { hi } else { x }`. OpenCL's
            // `clamp` is `fmin(fmax(x, lo), hi)`, which turns NaN into `lo`.
            let x = self.named(x.clone(), "clamped", e);
            let lo = self.named(lo.clone(), "lo", e);
            let hi = self.named(hi.clone(), "hi", e);
            let above = select(binary(BinOp::Gt, x.clone(), hi.clone(), Scalar::Bool), hi, x.clone());
            return Ok(select(binary(BinOp::Lt, x, lo.clone(), Scalar::Bool), lo, above));
        }
        if let (MathFn::Min | MathFn::Max, true, [a, b]) = (f, t.is_float(), &out[..]) {
            // Rust's `min`/`max` return the other operand when one is NaN, like OpenCL's
            // `fmin`/`fmax`; but NVIDIA's compiler folds a constant `fmin`/`fmax` (and `clamp`)
            // with the wrong rounding of what follows (`1.1920929e-7f + -fmin(3.0f, MAX)` is
            // -2.9999998 there, -3.0 in Rust; long difftest run on the H100, stencil 107754).
            // Comparisons and selects it folds exactly.
            let (cmp, which) = if f == MathFn::Min {
                (BinOp::Lt, "min")
            } else {
                (BinOp::Gt, "max")
            };
            let a = self.named(a.clone(), &format!("{which}_a"), e);
            let b = self.named(b.clone(), &format!("{which}_b"), e);
            let pick = select(binary(cmp, b.clone(), a.clone(), Scalar::Bool), b.clone(), a.clone());
            return Ok(select(binary(BinOp::Ne, a.clone(), a, Scalar::Bool), b, pick));
        }
        if f.lane_by_lane() && out.iter().any(|a| a.varying) {
            // `vec8` prints these lane by lane (emit/expr.rs): name the operands once.
            out = out.into_iter().map(|a| self.named(a, "base", e)).collect();
        }
        let varying = out.iter().any(|a| a.varying);
        if f == MathFn::Recip {
            let one = ir::Expr {
                op: Kind::Lit(float_lit("1", t)),
                ty: t,
                varying: false,
            };
            let x = out
                .pop()
                .ok_or_else(|| syn::Error::new(e.span, "`recip` takes no arguments"))?;
            return Ok(ir::Expr {
                op: Kind::Binary(BinOp::Div, Box::new(one), Box::new(x)),
                ty: t,
                varying,
            });
        }
        Ok(ir::Expr {
            op: Kind::Call(f, out),
            ty: t,
            varying,
        })
    }

    fn match_expr(
        &mut self,
        scrut: &Expr,
        arms: &[crate::model::Arm],
        expected: Option<Scalar>,
    ) -> syn::Result<ir::Expr> {
        let st = self.natural(scrut).unwrap_or(Scalar::I32);
        let mut key = self.expr(scrut, Some(st))?;
        if !matches!(key.op, Kind::Local(_)) {
            // Name the scrutinee once, so that every arm compares a variable.
            let base = match &key.op {
                Kind::Read { arg, .. } => self.args[*arg].name().to_string(),
                _ => format!("match{}", self.matches),
            };
            self.matches += 1;
            let name = self.fresh(&base);
            self.lets.push(ir::Let {
                name: name.clone(),
                value: key.clone(),
                line: scrut.line,
                text: scrut.text.clone(),
            });
            key = ir::Expr {
                op: Kind::Local(name),
                ty: key.ty,
                varying: key.varying,
            };
        }
        let t = arms
            .iter()
            .find_map(|a| self.natural_block(&a.body))
            .or(expected)
            .or_else(|| arms.iter().find_map(|a| self.assumed(&a.body.tail)));
        let mut branches: Vec<(Option<ir::Expr>, ir::Expr)> = Vec::new();
        for arm in arms {
            let value = self.block(&arm.body, t)?;
            let mut cond: Option<ir::Expr> = None;
            let mut wild = false;
            for p in &arm.pats {
                match p {
                    Pat::Wild => wild = true,
                    Pat::Value(v) => {
                        let v = self.expr(v, Some(st))?;
                        let eq = ir::Expr {
                            varying: key.varying,
                            op: Kind::Binary(BinOp::Eq, Box::new(key.clone()), Box::new(v)),
                            ty: Scalar::Bool,
                        };
                        cond = Some(match cond {
                            None => eq,
                            Some(c) => ir::Expr {
                                varying: c.varying || eq.varying,
                                op: Kind::Binary(BinOp::Or, Box::new(c), Box::new(eq)),
                                ty: Scalar::Bool,
                            },
                        });
                    }
                }
            }
            branches.push((if wild { None } else { cond }, value));
            if wild {
                break;
            }
        }
        let mut iter = branches.into_iter().rev();
        let (_, mut acc) = iter
            .next()
            .ok_or_else(|| syn::Error::new(scrut.span, "`match` needs arms"))?;
        for (cond, value) in iter {
            if let Some(cond) = cond {
                acc = select(cond, value, acc);
            }
        }
        Ok(acc)
    }
}

impl Lowerer<'_> {
    /// `v` itself when it is a leaf (cheap and pure to repeat), else a fresh `let` holding it.
    fn named(&mut self, v: ir::Expr, base: &str, at: &Expr) -> ir::Expr {
        if matches!(
            v.op,
            Kind::Lit(_)
                | Kind::Local(_)
                | Kind::Const(_)
                | Kind::ScalarArg(_)
                | Kind::Member { .. }
                | Kind::Read { .. }
                | Kind::Point { .. }
        ) {
            return v;
        }
        let name = self.fresh(base);
        let (ty, varying) = (v.ty, v.varying);
        self.lets.push(ir::Let {
            name: name.clone(),
            value: v,
            line: at.line,
            text: at.text.clone(),
        });
        ir::Expr {
            op: Kind::Local(name),
            ty,
            varying,
        }
    }

    /// Integer `/` and `%` by a divisor that may be 0 (or -1 under `i32::MIN`): Rust panics
    /// there, C's behaviour is undefined (x86 traps), and a select evaluates both branches
    /// (`if d != 0 { n / d } else { 0 }`). The divisor is made safe (1 where it is 0 or -1) and
    /// division by -1 is negation (`%` by -1 is 0), which equals Rust wherever Rust does not panic.
    fn guarded_division(&mut self, op: BinOp, n: ir::Expr, d: ir::Expr, at: &Expr) -> ir::Expr {
        let ty = n.ty;
        let n = self.named(n, "num", at);
        let d = self.named(d, "den", at);
        let lit = |v: &str| ir::Expr {
            op: Kind::Lit(if ty == Scalar::U32 {
                format!("{v}u")
            } else {
                v.to_string()
            }),
            ty,
            varying: false,
        };
        let is = |v: &str| binary(BinOp::Eq, d.clone(), lit(v), Scalar::Bool);
        if ty != Scalar::I32 {
            let safe = select(is("0"), lit("1"), d.clone());
            return binary(op, n, safe, ty);
        }
        let bad = binary(BinOp::Or, is("0"), is("-1"), Scalar::Bool);
        let safe = select(bad, lit("1"), d.clone());
        let by_minus_one = match op {
            BinOp::Div => ir::Expr {
                varying: n.varying,
                op: Kind::Unary(UnOp::Neg, Box::new(n.clone())),
                ty,
            },
            _ => lit("0"),
        };
        select(is("-1"), by_minus_one, binary(op, n, safe, ty))
    }
}

/// A divisor that is a literal other than 0 and -1: plain division is safe.
fn safe_divisor(d: &ir::Expr) -> bool {
    match &d.op {
        Kind::Lit(t) => {
            let digits = t.trim_end_matches('u');
            digits.parse::<i64>().is_ok_and(|v| v != 0 && v != -1)
        }
        _ => false,
    }
}

fn binary(op: BinOp, l: ir::Expr, r: ir::Expr, ty: Scalar) -> ir::Expr {
    let varying = l.varying || r.varying;
    ir::Expr {
        op: Kind::Binary(op, Box::new(l), Box::new(r)),
        ty,
        varying,
    }
}

fn select(cond: ir::Expr, a: ir::Expr, b: ir::Expr) -> ir::Expr {
    let varying = cond.varying || a.varying || b.varying;
    ir::Expr {
        ty: a.ty,
        varying,
        op: Kind::Select(Box::new(cond), Box::new(a), Box::new(b)),
    }
}

/// `e` with `leaf` applied where its value is made: through the `if`, `match` and blocks
/// that end it, to each branch's last expression.
fn map_tails(e: &Expr, leaf: &dyn Fn(&Expr) -> syn::Result<Expr>) -> syn::Result<Expr> {
    let block = |b: &Block| -> syn::Result<Block> {
        Ok(Block {
            lets: b.lets.clone(),
            tail: Box::new(map_tails(&b.tail, leaf)?),
        })
    };
    let kind = match &e.kind {
        ExprKind::If(c, a, b) => ExprKind::If(c.clone(), block(a)?, block(b)?),
        ExprKind::Match(s, arms) => ExprKind::Match(
            s.clone(),
            arms.iter()
                .map(|a| {
                    Ok(crate::model::Arm {
                        pats: a.pats.clone(),
                        body: block(&a.body)?,
                    })
                })
                .collect::<syn::Result<_>>()?,
        ),
        ExprKind::Block(b) => ExprKind::Block(block(b)?),
        _ => return leaf(e),
    };
    Ok(Expr {
        kind,
        span: e.span,
        line: e.line,
        text: e.text.clone(),
    })
}

/// Output `i` of `n` of a body's tail: element `i` of a tuple, through the `if`, `match` and
/// blocks that end in tuples.
fn project(e: &Expr, i: usize, n: usize) -> syn::Result<Expr> {
    map_tails(e, &|t| match &t.kind {
        ExprKind::Tuple(xs) if xs.len() == n => Ok(xs[i].clone()),
        ExprKind::Tuple(xs) => Err(syn::Error::new(
            t.span,
            format!("this stencil has {n} outputs but this tuple has {} values", xs.len()),
        )),
        _ => Err(syn::Error::new(
            t.span,
            format!("this stencil has {n} outputs: its value is a tuple of {n} values, e.g. `(u_next, v_next)`"),
        )),
    })
}

/// The value inside `Max(v)` (for a `Max` output), through the `if`, `match` and blocks that
/// end in it.
fn unwrap_reduction(e: &Expr, op: ReduceOp, ty: Scalar) -> syn::Result<Expr> {
    map_tails(e, &|t| match &t.kind {
        ExprKind::Reduce(o, x) if *o == op => Ok((**x).clone()),
        _ => Err(syn::Error::new(
            t.span,
            format!(
                "this output is a reduction `{}<{}>`: its value is `{}(v)`",
                op.rust(),
                ty.rust(),
                op.rust()
            ),
        )),
    })
}

fn internal(e: &Expr) -> syn::Error {
    syn::Error::new(e.span, "clforge internal error: argument kind changed during lowering")
}
