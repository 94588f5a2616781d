//! Expressions lowered: each kind of the body language to an IR expression, with the types
//! Rust would give it.

use super::{binary, cl_member_name, internal, safe_divisor, select, Local, Lowerer};
use crate::ir::{self, ConstUse, MemberUse, Op as Kind};
use crate::lower::typing::{default_float, float_lit};
use crate::model::Arg;
use crate::model::{BinOp, Block, Expr, ExprKind, MathFn, Pat, Scalar, UnOp};
use syn::ext::IdentExt;

impl Lowerer<'_> {
    pub(super) fn lookup(&self, name: &str) -> Option<Local> {
        self.scope.iter().rev().find(|l| l.user == name).cloned()
    }

    pub(super) fn fresh(&mut self, base: &str) -> String {
        self.names.fresh(base)
    }

    /// Casts a value to the type its context needs (only literals/consts arrive untyped here).
    pub(super) fn coerce(&self, e: ir::Expr, ty: Scalar) -> ir::Expr {
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

    pub(super) fn block(&mut self, b: &Block, expected: Option<Scalar>) -> syn::Result<ir::Expr> {
        let depth = self.scope.len();
        self.lets_of(b)?;
        let tail = self.expr(&b.tail, expected);
        self.scope.truncate(depth);
        tail
    }

    /// Lowers a block's `let`s and brings them into scope (the caller truncates the scope).
    pub(super) fn lets_of(&mut self, b: &Block) -> syn::Result<()> {
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

    pub(super) fn expr(&mut self, e: &Expr, expected: Option<Scalar>) -> syn::Result<ir::Expr> {
        match &e.kind {
            ExprKind::Float(digits, suffix) => {
                // Rust's fallback for a float literal nothing constrains is `f64`.
                let ty = suffix.or(expected.filter(|t| t.is_float())).unwrap_or(Scalar::F64);
                leaf(Kind::Lit(float_lit(digits, ty)), ty, false)
            }
            ExprKind::Int(digits, suffix) => int_literal(digits, *suffix, expected),
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
            ExprKind::Member { arg, member } => self.member(*arg, member, expected),
            ExprKind::ScalarArg(i) => {
                let Arg::Scalar { ty, .. } = &self.args[*i] else {
                    return Err(internal(e));
                };
                leaf(Kind::ScalarArg(*i), *ty, false)
            }
            ExprKind::Local(id) => self.local(id, expected, e),
            ExprKind::Const(path) => self.constant(path, expected, e),
            ExprKind::Unary(op, x) => self.unary(*op, x, expected),
            ExprKind::Binary(op, l, r) => self.binary_expr(*op, l, r, expected, e),
            ExprKind::Cast(x, ty) => self.cast(x, *ty, e),
            ExprKind::Call(f, args) => self.call(*f, args, expected, e),
            ExprKind::If(cond, a, b) => self.if_expr(cond, a, b, expected),
            ExprKind::Match(scrut, arms) => self.match_expr(scrut, arms, expected),
            ExprKind::Block(b) => self.block(b, expected),
            ExprKind::Typed(x, t) => {
                let v = self.expr(x, Some(*t))?;
                Ok(self.coerce(v, *t))
            }
        }
    }

    /// A params member: its type assumed from the context (`fl` without one), checked back in Rust.
    pub(super) fn member(
        &mut self,
        arg: usize,
        member: &syn::Ident,
        expected: Option<Scalar>,
    ) -> syn::Result<ir::Expr> {
        let fl = default_float(self.args, self.out);
        let ty = expected.unwrap_or(fl);
        // Every type assumed for a member is checked back in Rust.
        if !self
            .members
            .iter()
            .any(|m| m.arg == arg && m.member == *member && m.ty == ty)
        {
            self.members.push(MemberUse {
                arg,
                member: member.clone(),
                ty,
                cast: false,
            });
        }
        leaf(
            Kind::Member {
                arg,
                member: cl_member_name(&member.unraw().to_string()),
            },
            ty,
            false,
        )
    }

    /// A `let` in scope; an expected type other than its own is recorded while its type is open.
    pub(super) fn local(&mut self, id: &syn::Ident, expected: Option<Scalar>, e: &Expr) -> syn::Result<ir::Expr> {
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

    /// `path as ty` for a named constant: its own OpenCL name, valued with the Rust cast.
    fn constant_as(&mut self, path: &syn::Path, ty: Scalar, e: &Expr) -> syn::Result<ir::Expr> {
        leaf(Kind::Const(self.const_name(path, ty, e, true)?), ty, false)
    }

    /// `k.m as ty` for a params member: read as its own type (the struct is declared from the
    /// Rust type at run time) and converted in C, which Rust checks means what `as` means.
    fn member_as(&mut self, arg: usize, member: &syn::Ident, ty: Scalar) -> ir::Expr {
        if !self
            .members
            .iter()
            .any(|m| m.arg == arg && m.member == *member && m.ty == ty && m.cast)
        {
            self.members.push(MemberUse {
                arg,
                member: member.clone(),
                ty,
                cast: true,
            });
        }
        // The read's own type is unseen: any type other than `ty` that the printer converts
        // with a plain C cast (never float, never the `uint` that `as_int` reinterprets).
        let unseen = if ty == Scalar::U8 { Scalar::I32 } else { Scalar::U8 };
        let read = ir::Expr {
            varying: false,
            op: Kind::Member {
                arg,
                member: cl_member_name(&member.unraw().to_string()),
            },
            ty: unseen,
        };
        ir::Expr {
            varying: false,
            op: Kind::Cast(Box::new(read), ty),
            ty,
        }
    }

    /// A named constant: one OpenCL name per path, and one type per constant.
    pub(super) fn constant(&mut self, path: &syn::Path, expected: Option<Scalar>, e: &Expr) -> syn::Result<ir::Expr> {
        let ty = expected.unwrap_or(default_float(self.args, self.out));
        leaf(Kind::Const(self.const_name(path, ty, e, false)?), ty, false)
    }

    /// The OpenCL name of constant `path` read as `ty` (or, `cast`, of `path as ty`): the one it
    /// already has, or a new one recorded for the run-time completion.
    fn const_name(&mut self, path: &syn::Path, ty: Scalar, e: &Expr, cast: bool) -> syn::Result<String> {
        let written = path
            .segments
            .iter()
            .map(|s| s.ident.unraw().to_string())
            .collect::<Vec<_>>();
        // Paths map to distinct OpenCL names: `gain::K` is `gain_K`, and a constant named
        // `gain_K` then gets `gain_K_1`; a cast has its own (`gain_K_as_f32`).
        let (rust, base) = if cast {
            (
                format!("{} as {}", written.join("::"), ty.rust()),
                format!("{}_as_{}", written.join("_"), ty.rust()),
            )
        } else {
            (written.join("::"), written.join("_"))
        };
        match self.consts.iter().find(|c| c.rust == rust) {
            Some(c) if c.ty != ty => Err(syn::Error::new(
                e.span,
                format!(
                    "constant `{rust}` is used as `{}` here and as `{}` elsewhere in the stencil",
                    ty.rust(),
                    c.ty.rust()
                ),
            )),
            Some(c) => Ok(c.cl_name.clone()),
            None => {
                let cl = self.fresh(&base);
                self.consts.push(ConstUse {
                    cl_name: cl.clone(),
                    rust,
                    path: path.clone(),
                    ty,
                    span: e.span,
                    cast,
                });
                Ok(cl)
            }
        }
    }

    /// `!x`, `-x`: a negated literal stays a literal.
    pub(super) fn unary(&mut self, op: UnOp, x: &Expr, expected: Option<Scalar>) -> syn::Result<ir::Expr> {
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
            op: Kind::Unary(op, Box::new(x)),
        })
    }

    /// `l op r`: the operands' types from each other and the context; integer division guarded.
    pub(super) fn binary_expr(
        &mut self,
        op: BinOp,
        l: &Expr,
        r: &Expr,
        expected: Option<Scalar>,
        e: &Expr,
    ) -> syn::Result<ir::Expr> {
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
            return Ok(self.guarded_division(op, l, r, e));
        }
        if op == BinOp::Rem && ty.is_float() && (l.varying || r.varying) {
            // `vec8` prints float `%` lane by lane (emit/expr.rs): name the operands once.
            let (l, r) = (self.named(l, "num", e), self.named(r, "den", e));
            return Ok(binary(op, l, r, ty));
        }
        Ok(binary(op, l, r, ty))
    }

    /// `x as T`, Rust's semantics.
    pub(super) fn cast(&mut self, x: &Expr, ty: Scalar, e: &Expr) -> syn::Result<ir::Expr> {
        // A value whose type the attribute cannot see is not assumed to be `T`: a constant
        // becomes the Rust cast's value, a params member is cast from its own type.
        match &x.kind {
            ExprKind::Const(path) => return self.constant_as(path, ty, e),
            ExprKind::Member { arg, member } => return Ok(self.member_as(*arg, member, ty)),
            _ => {}
        }
        let inner = self.expr(x, self.natural(x))?;
        // Float to integer tests the value for NaN, then converts it: name it once.
        let inner = if inner.ty.is_float() && !ty.is_float() {
            self.named(inner, "unrounded", e)
        } else {
            inner
        };
        Ok(ir::Expr {
            varying: inner.varying,
            op: Kind::Cast(Box::new(inner), ty),
            ty,
        })
    }

    /// `if c { a } else { b }`: a select.
    pub(super) fn if_expr(
        &mut self,
        cond: &Expr,
        a: &Block,
        b: &Block,
        expected: Option<Scalar>,
    ) -> syn::Result<ir::Expr> {
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

    pub(super) fn call(
        &mut self,
        f: MathFn,
        args: &[Expr],
        expected: Option<Scalar>,
        e: &Expr,
    ) -> syn::Result<ir::Expr> {
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

    pub(super) fn match_expr(
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

/// A leaf of the IR.
fn leaf(op: Kind, ty: Scalar, varying: bool) -> syn::Result<ir::Expr> {
    Ok(ir::Expr { op, ty, varying })
}

/// An integer literal: its type from the suffix or the context, `i32` without either.
fn int_literal(digits: &str, suffix: Option<Scalar>, expected: Option<Scalar>) -> syn::Result<ir::Expr> {
    let ty = suffix
        .or(expected.filter(|t| *t != Scalar::Bool))
        .unwrap_or(Scalar::I32);
    let text = match ty {
        Scalar::F32 | Scalar::F64 => float_lit(digits, ty),
        Scalar::U32 => format!("{digits}u"),
        // A negative pattern literal arrives whole; in C `2147483648` is a `long`.
        Scalar::I32 if digits == "-2147483648" => "(-2147483647 - 1)".to_string(),
        _ => digits.to_string(),
    };
    leaf(Kind::Lit(text), ty, false)
}
