//! Shrinking a failing stencil: every candidate is the stencil one step smaller — a node
//! replaced by one of its children of the same type or by a constant, a branch taken, an
//! unused `let` removed — and still well typed (a node that had to type itself is replaced
//! by one that does). The driver keeps the smallest candidate that fails the same way and
//! repeats; the signature stays, so the inputs stay the same.

use crate::ast::{visit, visit_block, Block, Expr, Kind, Stencil, Ty};

/// Candidates one step smaller than `st`, largest reductions first, at most `limit`.
pub fn candidates(st: &Stencil, limit: usize) -> Vec<Stencil> {
    let mut out: Vec<Stencil> = Vec::new();
    let n = count_exprs(&st.body);
    for target in 0..n {
        let node = nth(&st.body, target).clone();
        for r in replacements(&node, st) {
            let mut c = st.clone();
            let mut k = 0;
            replace_nth(&mut c.body, target, &mut k, &r);
            if c.size() < st.size() {
                out.push(c);
            }
        }
    }
    // Unused `let`s, in every block.
    let blocks = count_blocks(&st.body);
    for b in 0..blocks {
        let mut idx = 0;
        let lets = block_at(&st.body, b, &mut idx).map_or(0, |bl| bl.lets.len());
        for l in 0..lets {
            let mut c = st.clone();
            let mut idx = 0;
            if let Some(bl) = block_at_mut(&mut c.body, b, &mut idx) {
                if !uses_local(bl, l) {
                    bl.lets.remove(l);
                    out.push(c);
                }
            }
        }
    }
    out.sort_by_key(|c| c.size());
    out.dedup_by(|a, b| a.body == b.body);
    out.truncate(limit);
    out
}

/// Whether anything after let `i` of `b` reads its name.
fn uses_local(b: &Block, i: usize) -> bool {
    let name = &b.lets[i].name;
    let mut used = false;
    let mut f = |e: &Expr| {
        if let Kind::Local(n) = &e.kind {
            used |= n == name;
        }
    };
    for l in &b.lets[i + 1..] {
        visit(&l.value, &mut f);
    }
    visit(&b.tail, &mut f);
    used
}

/// What a node may become: a child of its type, a branch of an `if`/`match`, or a constant.
fn replacements(e: &Expr, st: &Stencil) -> Vec<Expr> {
    let ok = |r: &Expr| r.ty == e.ty && (r.typed || !e.typed);
    let as_expr = |b: &Block| -> Expr {
        if b.lets.is_empty() {
            (*b.tail).clone()
        } else {
            Expr {
                ty: b.tail.ty,
                typed: b.tail.typed,
                kind: Kind::Block(b.clone()),
            }
        }
    };
    let mut out = Vec::new();
    match &e.kind {
        Kind::Neg(x) | Kind::Not(x) | Kind::Cast(x, _) | Kind::Paren(x) => out.push((**x).clone()),
        Kind::Bin(_, l, r) => {
            out.push((**l).clone());
            out.push((**r).clone());
        }
        Kind::Call(_, args, _) => out.extend(args.iter().cloned()),
        Kind::If(c, a, b) => {
            out.push((**c).clone());
            out.push(as_expr(a));
            out.push(as_expr(b));
        }
        Kind::Match(s, arms) => {
            out.push((**s).clone());
            out.extend(arms.iter().map(|(_, b)| as_expr(b)));
            // Fewer arms: drop one that is not the last (`_`).
            for i in 0..arms.len().saturating_sub(1) {
                let mut fewer = arms.clone();
                fewer.remove(i);
                if fewer.len() >= 2 {
                    out.push(Expr {
                        ty: e.ty,
                        typed: e.typed,
                        kind: Kind::Match(s.clone(), fewer),
                    });
                }
            }
        }
        Kind::Block(b) if b.lets.is_empty() => out.push((*b.tail).clone()),
        _ => {}
    }
    let mut out: Vec<Expr> = out.into_iter().filter(|r| ok(r)).collect();
    let leaf = !matches!(
        e.kind,
        Kind::Lit(_) | Kind::Read(..) | Kind::Local(_) | Kind::Arg(_) | Kind::Const(_) | Kind::Member(..)
    );
    if leaf {
        if let Some(r) = first_read(st, e.ty) {
            out.push(r);
        }
        let zero = match e.ty {
            Ty::Bool => "false".to_string(),
            t if t.is_float() => format!("0.0{}", t.rust()),
            t => format!("0{}", t.rust()),
        };
        out.push(Expr {
            ty: e.ty,
            typed: true,
            kind: Kind::Lit(zero),
        });
    }
    out
}

fn first_read(st: &Stencil, ty: Ty) -> Option<Expr> {
    let mut found = None;
    visit_block(&st.body, &mut |e| {
        if found.is_none() && e.ty == ty && matches!(e.kind, Kind::Read(..)) {
            found = Some(e.clone());
        }
    });
    found
}

fn count_exprs(b: &Block) -> usize {
    let mut n = 0;
    visit_block(b, &mut |_| n += 1);
    n
}

fn nth(b: &Block, target: usize) -> &Expr {
    fn in_block<'a>(b: &'a Block, target: usize, k: &mut usize) -> Option<&'a Expr> {
        for l in &b.lets {
            if let Some(e) = in_expr(&l.value, target, k) {
                return Some(e);
            }
        }
        in_expr(&b.tail, target, k)
    }
    fn in_expr<'a>(e: &'a Expr, target: usize, k: &mut usize) -> Option<&'a Expr> {
        if *k == target {
            return Some(e);
        }
        *k += 1;
        match &e.kind {
            Kind::Neg(x) | Kind::Not(x) | Kind::Cast(x, _) | Kind::Paren(x) => in_expr(x, target, k),
            Kind::Bin(_, l, r) => in_expr(l, target, k).or_else(|| in_expr(r, target, k)),
            Kind::Call(_, args, _) => args.iter().find_map(|a| in_expr(a, target, k)),
            Kind::If(c, a, b) => in_expr(c, target, k)
                .or_else(|| in_block(a, target, k))
                .or_else(|| in_block(b, target, k)),
            Kind::Match(s, arms) => {
                in_expr(s, target, k).or_else(|| arms.iter().find_map(|(_, b)| in_block(b, target, k)))
            }
            Kind::Block(b) => in_block(b, target, k),
            _ => None,
        }
    }
    let mut k = 0;
    in_block(b, target, &mut k).expect("node index within the body")
}

/// Replaces the `target`-th node (pre-order, as `visit_block` counts) with `r`.
fn replace_nth(b: &mut Block, target: usize, k: &mut usize, r: &Expr) -> bool {
    fn in_expr(e: &mut Expr, target: usize, k: &mut usize, r: &Expr) -> bool {
        if *k == target {
            *e = r.clone();
            return true;
        }
        *k += 1;
        match &mut e.kind {
            Kind::Neg(x) | Kind::Not(x) | Kind::Cast(x, _) | Kind::Paren(x) => in_expr(x, target, k, r),
            Kind::Bin(_, l, rr) => in_expr(l, target, k, r) || in_expr(rr, target, k, r),
            Kind::Call(_, args, _) => args.iter_mut().any(|a| in_expr(a, target, k, r)),
            Kind::If(c, a, b) => {
                in_expr(c, target, k, r) || replace_nth(a, target, k, r) || replace_nth(b, target, k, r)
            }
            Kind::Match(s, arms) => {
                in_expr(s, target, k, r) || arms.iter_mut().any(|(_, b)| replace_nth(b, target, k, r))
            }
            Kind::Block(b) => replace_nth(b, target, k, r),
            _ => false,
        }
    }
    for l in &mut b.lets {
        if in_expr(&mut l.value, target, k, r) {
            return true;
        }
    }
    in_expr(&mut b.tail, target, k, r)
}

fn count_blocks(b: &Block) -> usize {
    let mut n = 1;
    visit_block(b, &mut |e| match &e.kind {
        Kind::If(..) => n += 2,
        Kind::Match(_, arms) => n += arms.len(),
        Kind::Block(_) => n += 1,
        _ => {}
    });
    n
}

/// The `target`-th block in pre-order (the body is 0).
fn block_at<'a>(b: &'a Block, target: usize, k: &mut usize) -> Option<&'a Block> {
    if *k == target {
        return Some(b);
    }
    *k += 1;
    fn in_expr<'a>(e: &'a Expr, target: usize, k: &mut usize) -> Option<&'a Block> {
        match &e.kind {
            Kind::Neg(x) | Kind::Not(x) | Kind::Cast(x, _) | Kind::Paren(x) => in_expr(x, target, k),
            Kind::Bin(_, l, r) => in_expr(l, target, k).or_else(|| in_expr(r, target, k)),
            Kind::Call(_, args, _) => args.iter().find_map(|a| in_expr(a, target, k)),
            Kind::If(c, a, b) => in_expr(c, target, k)
                .or_else(|| block_at(a, target, k))
                .or_else(|| block_at(b, target, k)),
            Kind::Match(s, arms) => {
                in_expr(s, target, k).or_else(|| arms.iter().find_map(|(_, b)| block_at(b, target, k)))
            }
            Kind::Block(b) => block_at(b, target, k),
            _ => None,
        }
    }
    for l in &b.lets {
        if let Some(x) = in_expr(&l.value, target, k) {
            return Some(x);
        }
    }
    in_expr(&b.tail, target, k)
}

fn block_at_mut<'a>(b: &'a mut Block, target: usize, k: &mut usize) -> Option<&'a mut Block> {
    if *k == target {
        return Some(b);
    }
    *k += 1;
    fn in_expr<'a>(e: &'a mut Expr, target: usize, k: &mut usize) -> Option<&'a mut Block> {
        match &mut e.kind {
            Kind::Neg(x) | Kind::Not(x) | Kind::Cast(x, _) | Kind::Paren(x) => in_expr(x, target, k),
            Kind::Bin(_, l, r) => match in_expr(l, target, k) {
                Some(x) => Some(x),
                None => in_expr(r, target, k),
            },
            Kind::Call(_, args, _) => args.iter_mut().find_map(|a| in_expr(a, target, k)),
            Kind::If(c, a, b) => {
                if let Some(x) = in_expr(c, target, k) {
                    return Some(x);
                }
                if let Some(x) = block_at_mut(a, target, k) {
                    return Some(x);
                }
                block_at_mut(b, target, k)
            }
            Kind::Match(s, arms) => {
                if let Some(x) = in_expr(s, target, k) {
                    return Some(x);
                }
                arms.iter_mut().find_map(|(_, b)| block_at_mut(b, target, k))
            }
            Kind::Block(b) => block_at_mut(b, target, k),
            _ => None,
        }
    }
    for l in &mut b.lets {
        if let Some(x) = in_expr(&mut l.value, target, k) {
            return Some(x);
        }
    }
    in_expr(&mut b.tail, target, k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_are_smaller_and_keep_the_signature() {
        let st = (0..50)
            .map(|id| crate::gen::stencil(2, id))
            .max_by_key(|s| s.size())
            .expect("stencils");
        let cands = candidates(&st, 40);
        assert!(!cands.is_empty());
        for c in &cands {
            assert!(c.size() < st.size());
            assert_eq!(c.args, st.args);
            assert_eq!(c.out, st.out);
        }
    }
}
