//! A bit-packed lattice's booleans on whole words: a `bool` expression over the site's bits
//! computed once for a word's 32 sites (multi-spin coding), counters bit-sliced.

use super::{Access, Emitter};
use crate::ir::{Expr, Op as Kind};
use crate::model::{BinOp, Scalar, UnOp};

/// The packed lattice kernel's word of the state's bits at `offset` from its 32 sites.
pub fn bits_window(offset: [i64; 3]) -> String {
    if offset == [0; 3] {
        return "clforge_me".into();
    }
    let part = |d: i64| match d {
        0 => "0".to_string(),
        d if d > 0 => format!("p{d}"),
        d => format!("m{}", d.unsigned_abs()),
    };
    format!("clforge_nb_{}_{}_{}", part(offset[0]), part(offset[1]), part(offset[2]))
}

/// The packed lattice kernel's site `clforge_b` of a 32-bit word of sites, as a 0/1 `int`.
pub(super) fn site_bit(word: &str) -> String {
    format!("(int)(({word} >> clforge_b) & 1u)")
}

impl Emitter<'_> {
    /// In the packed lattice kernel, a `bool` function of the state built from its reads with
    /// `!`, `==`, `!=`, `&`, `|`, `^`, `&&`, `||` (through `let`s too) as one expression on
    /// 32-bit words: bit `b` is the function at site `b`. Loop-invariant, so the compiler
    /// computes it once for the word's 32 sites (multi-spin coding's bit logic). Inlined lets
    /// and operators count towards a depth of 16, beyond which the site is computed bit by bit:
    /// this also bounds the text of a `let` chain that reuses each `let` twice (2^8 copies).
    pub(super) fn word_expr(&self, e: &Expr, depth: usize) -> Option<String> {
        if self.access != Access::Bits || e.ty != Scalar::Bool || depth > 16 {
            return None;
        }
        match &e.op {
            Kind::Read { arg, offset } if self.k.access.iterated == Some(*arg) => Some(bits_window(*offset)),
            Kind::Local(n) => {
                let l = self.k.lets.iter().find(|l| l.name == *n)?;
                self.word_expr(&l.value, depth + 1)
            }
            Kind::Lit(v) => match v.as_str() {
                "true" | "1" => Some("0xFFFFFFFFu".into()),
                "false" | "0" => Some("0u".into()),
                _ => None,
            },
            Kind::Unary(UnOp::Not, x) => Some(format!("~{}", self.word_expr(x, depth + 1)?)),
            Kind::Binary(op, l, r) if l.ty != Scalar::Bool && op.is_comparison() => {
                self.count_compare(*op, l, r, depth)
            }
            Kind::Binary(op, l, r) if l.ty == Scalar::Bool && r.ty == Scalar::Bool => {
                let (a, b) = (self.word_expr(l, depth + 1)?, self.word_expr(r, depth + 1)?);
                let w = match op {
                    BinOp::Eq => format!("~({a} ^ {b})"),
                    BinOp::Ne | BinOp::BitXor => format!("({a} ^ {b})"),
                    BinOp::And | BinOp::BitAnd => format!("({a} & {b})"),
                    BinOp::Or | BinOp::BitOr => format!("({a} | {b})"),
                    _ => return None,
                };
                Some(w)
            }
            _ => None,
        }
    }

    /// In the packed lattice kernel, an integer sum of 1 to 15 `bool` functions of the state
    /// (`(s.at(1, 0) == me) as u32 + ..`, through `let`s) as a bit-sliced counter: a
    /// `clforge_count_t` whose words hold the count's bits for the 32 sites (multi-spin coding's
    /// neighbour sums), and the number of terms. Loop-invariant like [`Self::word_expr`].
    pub(super) fn count_expr(&self, e: &Expr, depth: usize) -> Option<(String, usize)> {
        if self.access != Access::Bits || !matches!(e.ty, Scalar::I32 | Scalar::U32 | Scalar::U8) || depth > 16 {
            return None;
        }
        let counted = match &e.op {
            Kind::Local(n) => {
                let l = self.k.lets.iter().find(|l| l.name == *n)?;
                self.count_expr(&l.value, depth + 1)?
            }
            Kind::Cast(x, _) if x.ty == Scalar::Bool => {
                (format!("clforge_count_one({})", self.word_expr(x, depth + 1)?), 1)
            }
            Kind::Binary(BinOp::Add, l, r) => {
                let (a, na) = self.count_expr(l, depth + 1)?;
                let (b, nb) = self.count_expr(r, depth + 1)?;
                (format!("clforge_count_sum({a}, {b})"), na + nb)
            }
            _ => return None,
        };
        (counted.1 <= 15).then_some(counted)
    }

    /// A comparison of a bit-sliced count with an integer literal, as a word (see
    /// [`Self::count_expr`]); `None` for anything else.
    pub(super) fn count_compare(&self, op: BinOp, l: &Expr, r: &Expr, depth: usize) -> Option<String> {
        let literal = |e: &Expr| match &e.op {
            Kind::Lit(t) => t.trim_end_matches(['u', 'U']).parse::<i64>().ok(),
            _ => None,
        };
        // `count op k`, with the literal moved to the right.
        let (count, k, op) = match (self.count_expr(l, depth + 1), literal(r)) {
            (Some((c, _)), Some(k)) => (c, k, op),
            _ => {
                let (c, _) = self.count_expr(r, depth + 1)?;
                let k = literal(l)?;
                let flipped = match op {
                    BinOp::Lt => BinOp::Gt,
                    BinOp::Le => BinOp::Ge,
                    BinOp::Gt => BinOp::Lt,
                    BinOp::Ge => BinOp::Le,
                    other => other,
                };
                (c, k, flipped)
            }
        };
        // Every count is in 0..=15: `count < k` for k outside 1..=15 is all or nothing.
        let lt = |k: i64| match k {
            k if k <= 0 => "0u".to_string(),
            k if k >= 16 => "0xFFFFFFFFu".to_string(),
            k => format!("clforge_count_lt({count}, {k}u)"),
        };
        let eq = |k: i64| {
            if (0..16).contains(&k) {
                format!("clforge_count_eq({count}, {k}u)")
            } else {
                "0u".to_string()
            }
        };
        Some(match op {
            BinOp::Lt => lt(k),
            BinOp::Le => lt(k.saturating_add(1)),
            BinOp::Gt => format!("~{}", lt(k.saturating_add(1))),
            BinOp::Ge => format!("~{}", lt(k)),
            BinOp::Eq => eq(k),
            BinOp::Ne => format!("~{}", eq(k)),
            _ => return None,
        })
    }
}
