//! The body language, model -> IR expressions: hoisting of `let`s out of branches,
//! `if`/`match` to selects, fresh names, and the reads found on the way. Types follow
//! `typing.rs` (Rust's literal inference, checked back in Rust for params members and constants).

mod expr;
mod infer;

use crate::ir::{self, ConstUse, MemberUse, Op as Kind};
use crate::model::{Arg, BinOp, Block, Expr, ExprKind, OutType, ReduceOp, Scalar, UnOp};
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
