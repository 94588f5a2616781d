//! The type an expression has before it is lowered: by itself (Rust's literal inference needs
//! the context for unsuffixed literals, params members and constants), or assumed.

use super::Lowerer;
use crate::lower::typing::default_float;
use crate::model::{Arg, BinOp, Block, Expr, ExprKind, MathFn, Scalar};
use syn::ext::IdentExt;

impl Lowerer<'_> {
    /// The type an expression has by itself, without context (Rust's literal inference
    /// needs the context for unsuffixed literals, params members and constants).
    pub(super) fn natural(&self, e: &Expr) -> Option<Scalar> {
        self.natural_in(e, &[])
    }

    /// The natural type of a block's value, its own `let`s in scope.
    pub(super) fn natural_block(&self, b: &Block) -> Option<Scalar> {
        self.natural_block_in(b, &[])
    }

    pub(super) fn natural_block_in(&self, b: &Block, shadow: &[(String, Option<Scalar>)]) -> Option<Scalar> {
        let mut inner = shadow.to_vec();
        for l in &b.lets {
            let ty = l.ty.or_else(|| self.natural_in(&l.value, &inner));
            inner.push((l.name.unraw().to_string(), ty));
        }
        self.natural_in(&b.tail, &inner)
    }

    /// [`Self::natural`] inside blocks whose `let`s (`shadow`, innermost last) hide outer names:
    /// `{ let t0 = 8i32; t0 }` is an `i32` whatever an outer `t0` is.
    pub(super) fn natural_in(&self, e: &Expr, shadow: &[(String, Option<Scalar>)]) -> Option<Scalar> {
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
    pub(super) fn assumed(&self, e: &Expr) -> Option<Scalar> {
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
}
