//! The body language, model -> IR expressions: hoisting of `let`s out of branches,
//! `if`/`match` to selects, fresh names, and the reads found on the way. Types follow
//! `typing.rs` (Rust's literal inference, checked back in Rust for params members and constants).

use super::typing::{default_float, float_lit};
use crate::ir::{self, ConstUse, MemberUse, Op as Kind};
use crate::model::{Arg, BinOp, Block, Expr, ExprKind, MathFn, Pat, Scalar, UnOp};
use std::collections::{BTreeSet, HashSet};

/// Names the kernel templates use; a user binding with one of these names is renamed.
const RESERVED: &[&str] = &[
    "x", "y", "z", "c", "t", "row", "i", "nx", "ny", "nz", "nxy", "out", "x0", "y0", "z0", "lx", "ly", "lane", "gx",
    "gy", "gz", "xend", "step", "tx", "ty", "s_cur", "s_next", "s_a", "s_b", "s_tmp", "k_", "AT", "WRAP", "UPDATED",
    "LOAD", "TW", "TH", "TWH", "HX", "HY", "HZ", "TILE_X", "TILE_Y", "WG_Y", "float", "double", "int", "uint", "uchar",
    "char", "long", "short", "half", "sqrt", "exp", "log", "pow", "fmin", "fmax", "select", "min", "max", "abs",
    "fabs", "clamp", "sin", "cos",
];

/// Lowers one body over the kind's arguments.
pub struct Lowerer<'a> {
    args: &'a [Arg],
    out: Scalar,
    pub lets: Vec<ir::Let>,
    used: HashSet<String>,
    /// (user name, OpenCL name, type, varying)
    scope: Vec<(String, String, Scalar, bool)>,
    pub consts: Vec<ConstUse>,
    pub members: Vec<MemberUse>,
    /// Every (argument, offset) read, for the access analysis.
    pub reads: BTreeSet<(usize, [i64; 3])>,
    matches: usize,
}

/// OpenCL names for the arguments: the Rust names, renamed where they would collide with
/// the kernels' own variables.
pub fn arg_names(args: &[Arg]) -> Vec<String> {
    let used: HashSet<String> = RESERVED.iter().map(|s| s.to_string()).collect();
    args.iter()
        .map(|a| {
            let n = a.name().to_string();
            if used.contains(&n) {
                format!("{n}_arg")
            } else {
                n
            }
        })
        .collect()
}

impl<'a> Lowerer<'a> {
    pub fn new(args: &'a [Arg], out: Scalar, arg_names: &[String]) -> Lowerer<'a> {
        let mut used: HashSet<String> = RESERVED.iter().map(|s| s.to_string()).collect();
        used.extend(args.iter().map(|a| a.name().to_string()));
        used.extend(arg_names.iter().cloned());
        Lowerer {
            args,
            out,
            lets: Vec::new(),
            used,
            scope: Vec::new(),
            consts: Vec::new(),
            members: Vec::new(),
            reads: BTreeSet::new(),
            matches: 0,
        }
    }

    /// Lowers the body's block to its result, cast to the output type.
    pub fn body(&mut self, body: &Block) -> syn::Result<ir::Expr> {
        let result = self.block(body, Some(self.out))?;
        Ok(self.coerce(result, self.out))
    }
}

impl Lowerer<'_> {
    /// The type an expression has by itself, without context (Rust's literal inference
    /// needs the context for unsuffixed literals, params members and constants).
    fn natural(&self, e: &Expr) -> Option<Scalar> {
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
            ExprKind::Local(id) => self.lookup(&id.to_string()).map(|(_, t, _)| t),
            ExprKind::Member { .. } | ExprKind::Const(_) => None,
            ExprKind::Unary(UnOp::Not, _) => Some(Scalar::Bool),
            ExprKind::Unary(UnOp::Neg, x) => self.natural(x),
            ExprKind::Binary(op, l, r) => {
                if op.is_comparison() || op.is_logical() {
                    Some(Scalar::Bool)
                } else if matches!(op, BinOp::Shl | BinOp::Shr) {
                    self.natural(l)
                } else {
                    self.natural(l).or_else(|| self.natural(r))
                }
            }
            ExprKind::Cast(_, t) => Some(*t),
            ExprKind::Call(f, args) => match f {
                MathFn::Powi => self.natural(&args[0]),
                _ => args.iter().find_map(|a| self.natural(a)),
            },
            ExprKind::If(_, a, b) => self.natural(&a.tail).or_else(|| self.natural(&b.tail)),
            ExprKind::Match(_, arms) => arms.iter().find_map(|a| self.natural(&a.body.tail)),
            ExprKind::Block(b) => self.natural(&b.tail),
        }
    }

    fn lookup(&self, name: &str) -> Option<(String, Scalar, bool)> {
        self.scope
            .iter()
            .rev()
            .find(|(u, ..)| u == name)
            .map(|(_, cl, t, v)| (cl.clone(), *t, *v))
    }

    fn fresh(&mut self, base: &str) -> String {
        let mut name = base.to_string();
        let mut n = 0;
        while self.used.contains(&name) {
            n += 1;
            name = format!("{base}_{n}");
        }
        self.used.insert(name.clone());
        name
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
        for l in &b.lets {
            let ty = l.ty.or_else(|| self.natural(&l.value));
            let value = self.expr(&l.value, ty)?;
            let value = match l.ty {
                Some(t) => self.coerce(value, t),
                None => value,
            };
            let cl = self.fresh(&l.name.to_string());
            self.scope
                .push((l.name.to_string(), cl.clone(), value.ty, value.varying));
            self.lets.push(ir::Let {
                name: cl,
                value,
                line: l.value.line,
                text: l.value.text.clone(),
            });
        }
        let tail = self.expr(&b.tail, expected);
        self.scope.truncate(depth);
        tail
    }

    fn expr(&mut self, e: &Expr, expected: Option<Scalar>) -> syn::Result<ir::Expr> {
        let fl = default_float(self.args, self.out);
        let leaf = |op: Kind, ty: Scalar, varying: bool| Ok(ir::Expr { op, ty, varying });
        match &e.kind {
            ExprKind::Float(digits, suffix) => {
                let ty = suffix.or(expected.filter(|t| t.is_float())).unwrap_or(fl);
                leaf(Kind::Lit(float_lit(digits, ty)), ty, false)
            }
            ExprKind::Int(digits, suffix) => {
                let ty = suffix
                    .or(expected.filter(|t| *t != Scalar::Bool))
                    .unwrap_or(Scalar::I32);
                let text = match ty {
                    Scalar::F32 | Scalar::F64 => float_lit(digits, ty),
                    Scalar::U32 => format!("{digits}u"),
                    _ => digits.clone(),
                };
                leaf(Kind::Lit(text), ty, false)
            }
            ExprKind::Bool(b) => leaf(Kind::Lit(b.to_string()), Scalar::Bool, false),
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
                if !self.members.iter().any(|m| m.arg == *arg && m.member == *member) {
                    self.members.push(MemberUse {
                        arg: *arg,
                        member: member.clone(),
                        ty,
                    });
                }
                leaf(
                    Kind::Member {
                        arg: *arg,
                        member: member.to_string(),
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
                let (cl, ty, varying) = self
                    .lookup(&id.to_string())
                    .ok_or_else(|| syn::Error::new(e.span, format!("`{id}` is not in scope")))?;
                leaf(Kind::Local(cl), ty, varying)
            }
            ExprKind::Const(path) => {
                let ty = expected.unwrap_or(fl);
                let cl_name = path
                    .segments
                    .iter()
                    .map(|s| s.ident.to_string())
                    .collect::<Vec<_>>()
                    .join("_");
                match self.consts.iter().find(|c| c.cl_name == cl_name) {
                    Some(c) if c.ty != ty => {
                        return Err(syn::Error::new(
                            e.span,
                            format!(
                                "constant `{cl_name}` is used as `{}` here and as `{}` elsewhere in the stencil",
                                ty.rust(),
                                c.ty.rust()
                            ),
                        ))
                    }
                    Some(_) => {}
                    None => self.consts.push(ConstUse {
                        cl_name: cl_name.clone(),
                        path: path.clone(),
                        ty,
                        span: e.span,
                    }),
                }
                leaf(Kind::Const(cl_name), ty, false)
            }
            ExprKind::Unary(op, x) => {
                let want = if *op == UnOp::Not {
                    Some(Scalar::Bool).filter(|_| self.natural(x) != Some(Scalar::I32))
                } else {
                    expected
                };
                let x = self.expr(x, self.natural(x).or(want))?;
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
                    (self.natural(l).or(expected), self.natural(r))
                } else {
                    let t = self.natural(l).or_else(|| self.natural(r));
                    let t = if op.is_comparison() { t } else { t.or(expected) };
                    (t, t)
                };
                let l = self.expr(l, lt)?;
                let r = self.expr(r, rt.or(Some(l.ty)))?;
                let ty = if op.is_comparison() || op.is_logical() {
                    Scalar::Bool
                } else {
                    l.ty
                };
                let varying = l.varying || r.varying;
                Ok(ir::Expr {
                    op: Kind::Binary(*op, Box::new(l), Box::new(r)),
                    ty,
                    varying,
                })
            }
            ExprKind::Cast(x, ty) => {
                let inner = self.expr(x, self.natural(x))?;
                Ok(ir::Expr {
                    varying: inner.varying,
                    op: Kind::Cast(Box::new(inner), *ty),
                    ty: *ty,
                })
            }
            ExprKind::Call(f, args) => self.call(*f, args, expected, e),
            ExprKind::If(cond, a, b) => {
                let t = self.natural(&a.tail).or_else(|| self.natural(&b.tail)).or(expected);
                let cond = self.expr(cond, Some(Scalar::Bool))?;
                let a = self.block(a, t)?;
                let b = self.block(b, t.or(Some(a.ty)))?;
                Ok(select(cond, a, b))
            }
            ExprKind::Match(scrut, arms) => self.match_expr(scrut, arms, expected),
            ExprKind::Block(b) => self.block(b, expected),
        }
    }

    fn call(&mut self, f: MathFn, args: &[Expr], expected: Option<Scalar>, e: &Expr) -> syn::Result<ir::Expr> {
        let t = match f {
            MathFn::Powi => self.natural(&args[0]),
            _ => args.iter().find_map(|a| self.natural(a)),
        }
        .or(expected)
        .unwrap_or_else(|| default_float(self.args, self.out));
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
        let t = arms.iter().find_map(|a| self.natural(&a.body.tail)).or(expected);
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

fn select(cond: ir::Expr, a: ir::Expr, b: ir::Expr) -> ir::Expr {
    let varying = cond.varying || a.varying || b.varying;
    ir::Expr {
        ty: a.ty,
        varying,
        op: Kind::Select(Box::new(cond), Box::new(a), Box::new(b)),
    }
}

fn internal(e: &Expr) -> syn::Error {
    syn::Error::new(e.span, "clforge internal error: argument kind changed during lowering")
}
