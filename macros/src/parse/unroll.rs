//! Loops over constant ranges, constant tables and helper functions in a body, unrolled and
//! inlined before the body is parsed.
//!
//! A body may declare, inside the function (a proc macro sees only its own item), constant
//! tables and helpers:
//!
//! ```text
//! const C: [[i32; 2]; 9] = [[0, 0], [1, 0], ...];
//! const W: [f32; 9] = [4.0 / 9.0, 1.0 / 9.0, ...];
//! fn feq(w: f32, rho: f32, cu: f32, uu: f32) -> f32 { w * rho * (1.0 + 3.0 * cu + 4.5 * cu * cu - 1.5 * uu) }
//! let mut rho = 0.0;
//! for q in 0..9 { rho += f.at(C[q][0], C[q][1]); }
//! ```
//!
//! and this pass rewrites it into the straight-line form every kind already lowers: each loop
//! becomes one copy of its body per index (the index a literal), every mutable binding a chain
//! of immutable ones (`let rho__1 = rho__0 + f.at(1, 0);`), every table element at a constant
//! index its value (with the table's element type on its literals, so it is computed as Rust's
//! constant evaluation computes it), every helper call a block binding the parameters. The host
//! reference is the function as written: the kernels are checked against Rust's own loops.
//!
//! A body with none of these is returned unchanged.

use crate::parse::strip_parens as strip;
use proc_macro2::Span;
use std::collections::HashMap;
use syn::spanned::Spanned;
use syn::visit_mut::{self, VisitMut};
use syn::{Expr, Stmt};

/// How deep helpers may call helpers.
const MAX_DEPTH: usize = 16;
/// The most iterations one loop may unroll to.
const MAX_TRIPS: i64 = 4096;

/// A constant: a value (an expression with typed literals) or a table of them.
#[derive(Clone)]
enum Table {
    Leaf(Box<Expr>),
    List(Vec<Table>),
}

struct Cx {
    consts: HashMap<String, Table>,
    fns: HashMap<String, syn::ItemFn>,
    fresh: usize,
    depth: usize,
    /// Blocks entered inside expressions (branches, block expressions, helper bodies): a name
    /// may be assigned only at the level that declared it, where the assignment is a plain
    /// rebinding in sequence.
    level: usize,
}

/// What a name means here: a renamed binding, or a loop index's value.
#[derive(Clone)]
enum Bound {
    /// The current name of a binding, the level of the block that declared it, and whether it
    /// was declared `mut`.
    Name(syn::Ident, usize, bool),
    Int(i64),
}

type Env = HashMap<String, Bound>;

/// `f` with its loops unrolled, tables folded and helpers inlined (unchanged when it has none).
pub fn item_fn(f: &syn::ItemFn) -> syn::Result<syn::ItemFn> {
    if !needs_pass(&f.block) {
        return Ok(f.clone());
    }
    let mut cx = Cx {
        consts: HashMap::new(),
        fns: HashMap::new(),
        fresh: 0,
        depth: 0,
        level: 0,
    };
    let mut out = f.clone();
    let mut env = Env::new();
    out.block = Box::new(cx.block(&f.block, &mut env)?.0);
    Ok(out)
}

/// Whether the body has a loop, a `mut` binding, an assignment or an item.
fn needs_pass(b: &syn::Block) -> bool {
    struct Find(bool);
    impl<'ast> syn::visit::Visit<'ast> for Find {
        fn visit_expr(&mut self, e: &'ast Expr) {
            if matches!(e, Expr::ForLoop(_) | Expr::Assign(_))
                || matches!(e, Expr::Binary(b) if is_compound(&b.op).is_some())
            {
                self.0 = true;
            }
            syn::visit::visit_expr(self, e);
        }
        fn visit_local(&mut self, l: &'ast syn::Local) {
            if matches!(&l.pat, syn::Pat::Ident(p) if p.mutability.is_some()) {
                self.0 = true;
            }
            syn::visit::visit_local(self, l);
        }
        fn visit_stmt(&mut self, s: &'ast Stmt) {
            if matches!(s, Stmt::Item(syn::Item::Const(_) | syn::Item::Fn(_))) {
                self.0 = true;
            }
            syn::visit::visit_stmt(self, s);
        }
    }
    let mut f = Find(false);
    syn::visit::Visit::visit_block(&mut f, b);
    f.0
}

/// `a op= b` as the plain operator, or `None`.
fn is_compound(op: &syn::BinOp) -> Option<syn::BinOp> {
    use syn::BinOp as B;
    Some(match op {
        B::AddAssign(t) => B::Add(syn::Token![+](t.spans[0])),
        B::SubAssign(t) => B::Sub(syn::Token![-](t.spans[0])),
        B::MulAssign(t) => B::Mul(syn::Token![*](t.spans[0])),
        B::DivAssign(t) => B::Div(syn::Token![/](t.spans[0])),
        _ => return None,
    })
}

impl Cx {
    fn fresh(&mut self, base: &syn::Ident) -> syn::Ident {
        self.fresh += 1;
        syn::Ident::new(&format!("{}__{}", base, self.fresh), base.span())
    }

    /// A block's statements, straight-line, and the names its own `let`s declare.
    fn block(&mut self, b: &syn::Block, env: &mut Env) -> syn::Result<(syn::Block, Vec<String>)> {
        let mut stmts = Vec::new();
        let mut declared = Vec::new();
        for (i, s) in b.stmts.iter().enumerate() {
            let last = i + 1 == b.stmts.len();
            match s {
                Stmt::Item(syn::Item::Const(c)) => {
                    let t = table(&c.expr, &leaf_type(&c.ty), &self.consts)?;
                    self.consts.insert(c.ident.to_string(), t);
                }
                Stmt::Item(syn::Item::Fn(f)) => {
                    self.fns.insert(f.sig.ident.to_string(), f.clone());
                }
                Stmt::Local(l) => {
                    let (stmt, name) = self.local(l, env)?;
                    declared.extend(name);
                    stmts.push(stmt);
                }
                Stmt::Expr(e, semi) => match e {
                    Expr::ForLoop(l) => stmts.extend(self.for_loop(l, env)?),
                    Expr::Assign(a) => stmts.push(self.assign(&a.left, &a.right, None, env)?),
                    Expr::Binary(bin) if is_compound(&bin.op).is_some() => {
                        stmts.push(self.assign(&bin.left, &bin.right, is_compound(&bin.op), env)?)
                    }
                    _ if semi.is_none() && last => stmts.push(Stmt::Expr(self.expr(e, env)?, None)),
                    _ => stmts.push(Stmt::Expr(self.expr(e, env)?, *semi)),
                },
                other => stmts.push(other.clone()),
            }
        }
        Ok((
            syn::Block {
                brace_token: b.brace_token,
                stmts,
            },
            declared,
        ))
    }

    /// A block inside an expression (a branch, a block expression): its own names, one level in.
    fn nested(&mut self, b: &syn::Block, env: &Env) -> syn::Result<syn::Block> {
        let mut env = env.clone();
        self.level += 1;
        let out = self.block(b, &mut env);
        self.level -= 1;
        Ok(out?.0)
    }

    /// `let [mut] x [: T] = e;` as `let x__n [: T] = e';`.
    fn local(&mut self, l: &syn::Local, env: &mut Env) -> syn::Result<(Stmt, Option<String>)> {
        let mut l = l.clone();
        if let Some(init) = &mut l.init {
            *init.expr = self.expr(&init.expr, env)?;
        }
        let ident = match &mut l.pat {
            syn::Pat::Ident(p) => Some(p),
            syn::Pat::Type(t) => match &mut *t.pat {
                syn::Pat::Ident(p) => Some(p),
                _ => None,
            },
            _ => None,
        };
        let mut declared = None;
        if let Some(p) = ident {
            let name = self.fresh(&p.ident);
            let mutable = p.mutability.is_some();
            env.insert(p.ident.to_string(), Bound::Name(name.clone(), self.level, mutable));
            declared = Some(p.ident.to_string());
            p.ident = name;
            p.mutability = None;
        }
        Ok((Stmt::Local(l), declared))
    }

    /// `x = e`, `x op= e` as a new binding of `x`.
    fn assign(&mut self, left: &Expr, right: &Expr, op: Option<syn::BinOp>, env: &mut Env) -> syn::Result<Stmt> {
        let Expr::Path(p) = strip(left) else {
            return Err(syn::Error::new_spanned(left, "assign to a local `let mut` binding"));
        };
        let Some(id) = p.path.get_ident().cloned() else {
            return Err(syn::Error::new_spanned(left, "assign to a local `let mut` binding"));
        };
        let Some(Bound::Name(current, level, mutable)) = env.get(&id.to_string()).cloned() else {
            return Err(syn::Error::new_spanned(
                left,
                format!("`{id}` is not a local `let mut` binding of this body"),
            ));
        };
        if !mutable {
            return Err(syn::Error::new_spanned(
                left,
                format!("`{id}` is not `let mut`: declare it `let mut {id}` to update it"),
            ));
        }
        if level != self.level {
            return Err(syn::Error::new_spanned(
                left,
                format!(
                    "`{id}` is assigned inside a branch or block: assign it where it is declared, or in a loop there \
                     (`{id} = if c {{ .. }} else {{ .. }}` for a conditional value)"
                ),
            ));
        }
        let value = self.expr(right, env)?;
        let value = match op {
            None => value,
            // The current value read where the assignment is written (its line in `#line`).
            Some(op) => Expr::Binary(syn::ExprBinary {
                attrs: Vec::new(),
                left: Box::new(path_expr(syn::Ident::new(&current.to_string(), id.span()))),
                op,
                right: Box::new(paren(value)),
            }),
        };
        let name = self.fresh(&id);
        env.insert(id.to_string(), Bound::Name(name.clone(), level, true));
        Ok(syn::parse_quote_spanned!(left.span()=> let #name = #value;))
    }

    /// `for q in a..b { .. }` as one copy of the body per `q`.
    fn for_loop(&mut self, l: &syn::ExprForLoop, env: &mut Env) -> syn::Result<Vec<Stmt>> {
        let syn::Pat::Ident(var) = &*l.pat else {
            return Err(syn::Error::new_spanned(&l.pat, "loop over one index: `for q in 0..N`"));
        };
        let Expr::Range(r) = strip(&l.expr) else {
            return Err(syn::Error::new_spanned(
                &l.expr,
                "a loop runs over a constant range: `for q in 0..N`",
            ));
        };
        let bound = |e: &Option<Box<Expr>>| -> syn::Result<i64> {
            let e = e
                .as_deref()
                .ok_or_else(|| syn::Error::new_spanned(r, "give both ends of the range"))?;
            int_value(e, &self.consts, env).ok_or_else(|| {
                syn::Error::new_spanned(
                    e,
                    "a loop's range is constant (literals, constants of the body, loop indices), so that it unrolls",
                )
            })
        };
        let lo = bound(&r.start)?;
        let mut hi = bound(&r.end)?;
        if matches!(r.limits, syn::RangeLimits::Closed(_)) {
            hi = hi.saturating_add(1);
        }
        let trips = hi.saturating_sub(lo);
        if trips > MAX_TRIPS {
            return Err(syn::Error::new_spanned(
                r,
                format!("the loop runs {trips} times; unrolled loops run at most {MAX_TRIPS}"),
            ));
        }
        let mut out = Vec::new();
        for i in lo..hi {
            let mut inner = env.clone();
            inner.insert(var.ident.to_string(), Bound::Int(i));
            let (b, declared) = self.block(&l.body, &mut inner)?;
            out.extend(b.stmts);
            // Rebindings of the enclosing names survive the iteration; its own names do not.
            for (k, v) in inner {
                if env.contains_key(&k) && var.ident != k && !declared.contains(&k) {
                    env.insert(k, v);
                }
            }
        }
        Ok(out)
    }

    /// An expression with names renamed, tables folded and helpers inlined.
    fn expr(&mut self, e: &Expr, env: &Env) -> syn::Result<Expr> {
        let mut e = e.clone();
        let mut r = Rewrite {
            cx: self,
            env: env.clone(),
            err: None,
        };
        r.visit_expr_mut(&mut e);
        match r.err {
            Some(err) => Err(err),
            None => Ok(e),
        }
    }

    /// `f(a, b)` for a helper `fn f(x: T, y: U) -> V { .. }`: `{ let x__n: T = a; ..; body }`.
    fn inline(&mut self, f: &syn::ItemFn, call: &syn::ExprCall, env: &Env) -> syn::Result<Expr> {
        if self.depth >= MAX_DEPTH {
            return Err(syn::Error::new_spanned(
                call,
                format!("helpers call helpers more than {MAX_DEPTH} deep"),
            ));
        }
        if f.sig.inputs.len() != call.args.len() {
            return Err(syn::Error::new_spanned(
                call,
                format!("`{}` takes {} argument(s)", f.sig.ident, f.sig.inputs.len()),
            ));
        }
        let mut lets: Vec<Stmt> = Vec::new();
        let mut inner = Env::new();
        for (param, arg) in f.sig.inputs.iter().zip(&call.args) {
            let syn::FnArg::Typed(pt) = param else {
                return Err(syn::Error::new_spanned(param, "a helper is a free function"));
            };
            let syn::Pat::Ident(p) = &*pt.pat else {
                return Err(syn::Error::new_spanned(&pt.pat, "name each parameter of a helper"));
            };
            let value = self.expr(arg, env)?;
            let name = self.fresh(&p.ident);
            inner.insert(
                p.ident.to_string(),
                Bound::Name(name.clone(), self.level + 1, p.mutability.is_some()),
            );
            let ty = &pt.ty;
            lets.push(syn::parse_quote_spanned!(arg.span()=> let #name: #ty = #value;));
        }
        self.depth += 1;
        self.level += 1;
        let body = self.block(&f.block, &mut inner);
        self.depth -= 1;
        self.level -= 1;
        let mut body = body?.0;
        lets.append(&mut body.stmts);
        body.stmts = lets;
        Ok(Expr::Block(syn::ExprBlock {
            attrs: Vec::new(),
            label: None,
            block: body,
        }))
    }
}

struct Rewrite<'a> {
    cx: &'a mut Cx,
    env: Env,
    err: Option<syn::Error>,
}

impl VisitMut for Rewrite<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        if self.err.is_some() {
            return;
        }
        let replaced = match &*e {
            Expr::Path(p) => p.path.get_ident().and_then(|id| match self.env.get(&id.to_string()) {
                // The new name at the reference's own place (its line in `#line`).
                Some(Bound::Name(n, ..)) => Some(Ok(path_expr(syn::Ident::new(&n.to_string(), id.span())))),
                Some(Bound::Int(i)) => Some(Ok(int_expr(*i, id.span()))),
                None => match self.cx.consts.get(&id.to_string()) {
                    Some(Table::Leaf(v)) => Some(Ok(paren((**v).clone()))),
                    _ => None,
                },
            }),
            Expr::Index(ix) => Some(self.index(ix)),
            Expr::Call(c) => match &*c.func {
                Expr::Path(p) => p
                    .path
                    .get_ident()
                    .and_then(|id| self.cx.fns.get(&id.to_string()).cloned())
                    .map(|f| self.cx.inline(&f, c, &self.env)),
                _ => None,
            },
            _ => None,
        };
        match replaced {
            Some(Ok(new)) => *e = new,
            Some(Err(err)) => self.err = Some(err),
            None => visit_mut::visit_expr_mut(self, e),
        }
        // Offsets are literals: `u.at(C[q][0] + 1, q as isize - 1)` folds to `u.at(2, 0)`.
        if let Expr::MethodCall(m) = e {
            for a in m.args.iter_mut() {
                if !matches!(strip(a), Expr::Lit(_)) {
                    if let Some(v) = int_value(a, &self.cx.consts, &Env::new()) {
                        *a = int_expr(v, a.span());
                    }
                }
            }
        }
    }

    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        if self.err.is_none() {
            self.block(b);
        }
    }

    /// Names a `match` arm's pattern binds hide the body's bindings of the same name.
    fn visit_arm_mut(&mut self, arm: &mut syn::Arm) {
        struct Names(Vec<String>);
        impl<'ast> syn::visit::Visit<'ast> for Names {
            fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
                self.0.push(p.ident.to_string());
            }
        }
        let mut names = Names(Vec::new());
        syn::visit::Visit::visit_pat(&mut names, &arm.pat);
        let saved = self.env.clone();
        for n in &names.0 {
            self.env.remove(n);
        }
        visit_mut::visit_arm_mut(self, arm);
        self.env = saved;
    }
}

impl Rewrite<'_> {
    /// A branch or a block expression: its statements through [`Cx::nested`].
    fn block(&mut self, b: &mut syn::Block) {
        match self.cx.nested(b, &self.env) {
            Ok(new) => *b = new,
            Err(err) => self.err = Some(err),
        }
    }

    /// `T[i][j]` of a table of the body at constant indices: the element.
    fn index(&mut self, ix: &syn::ExprIndex) -> syn::Result<Expr> {
        let mut indices = vec![&*ix.index];
        let mut base = &*ix.expr;
        while let Expr::Index(inner) = strip(base) {
            indices.push(&inner.index);
            base = &inner.expr;
        }
        indices.reverse();
        let name = match strip(base) {
            Expr::Path(p) => p.path.get_ident().map(|i| i.to_string()),
            _ => None,
        };
        let Some(mut t) = name.and_then(|n| self.cx.consts.get(&n)).cloned() else {
            return Err(syn::Error::new_spanned(
                ix,
                "index a constant table of the body (`const W: [f32; 9] = [..];`) at a constant index",
            ));
        };
        for i in indices {
            let at = int_value(i, &self.cx.consts, &self.env)
                .ok_or_else(|| syn::Error::new_spanned(i, "a table index is a literal, a constant or a loop index"))?;
            t = match t {
                Table::List(items) => usize::try_from(at)
                    .ok()
                    .and_then(|k| items.get(k).cloned())
                    .ok_or_else(|| {
                        syn::Error::new_spanned(i, format!("index {at} is out of the table ({} entries)", items.len()))
                    })?,
                Table::Leaf(_) => return Err(syn::Error::new_spanned(i, "this table has fewer dimensions")),
            };
        }
        match t {
            Table::Leaf(v) => Ok(paren(*v)),
            Table::List(_) => Err(syn::Error::new_spanned(ix, "index the table down to one value")),
        }
    }
}

/// The scalar type at the bottom of `[[T; n]; m]`.
fn leaf_type(ty: &syn::Type) -> String {
    match ty {
        syn::Type::Array(a) => leaf_type(&a.elem),
        syn::Type::Path(p) => p.path.get_ident().map_or(String::new(), |i| i.to_string()),
        _ => String::new(),
    }
}

/// A constant's value: nested arrays of expressions whose literals get the element type.
fn table(e: &Expr, leaf: &str, consts: &HashMap<String, Table>) -> syn::Result<Table> {
    match strip(e) {
        Expr::Array(a) => Ok(Table::List(
            a.elems
                .iter()
                .map(|x| table(x, leaf, consts))
                .collect::<syn::Result<_>>()?,
        )),
        other => {
            let mut v = other.clone();
            Suffix(leaf).visit_expr_mut(&mut v);
            // Earlier constants of the body.
            let mut fold = ConstRefs(consts);
            fold.visit_expr_mut(&mut v);
            Ok(Table::Leaf(Box::new(v)))
        }
    }
}

/// Gives unsuffixed literals the table's element type.
struct Suffix<'a>(&'a str);

impl VisitMut for Suffix<'_> {
    fn visit_lit_mut(&mut self, l: &mut syn::Lit) {
        let ty = self.0;
        let float = matches!(ty, "f32" | "f64");
        match l {
            syn::Lit::Float(f) if f.suffix().is_empty() && float => {
                *l = syn::Lit::Float(syn::LitFloat::new(&format!("{}{ty}", f.base10_digits()), f.span()));
            }
            syn::Lit::Int(i) if i.suffix().is_empty() && !ty.is_empty() => {
                let text = if float {
                    format!("{}.0{ty}", i.base10_digits())
                } else {
                    format!("{}{ty}", i.base10_digits())
                };
                *l = if float {
                    syn::Lit::Float(syn::LitFloat::new(&text, i.span()))
                } else {
                    syn::Lit::Int(syn::LitInt::new(&text, i.span()))
                };
            }
            _ => {}
        }
    }
}

/// Replaces scalar constants of the body by their values.
struct ConstRefs<'a>(&'a HashMap<String, Table>);

impl VisitMut for ConstRefs<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        if let Expr::Path(p) = &*e {
            if let Some(Table::Leaf(v)) = p.path.get_ident().and_then(|i| self.0.get(&i.to_string())) {
                *e = paren((**v).clone());
                return;
            }
        }
        visit_mut::visit_expr_mut(self, e);
    }
}

/// An integer constant expression: literals, constants of the body, loop indices, `+ - * / %`
/// and negation.
fn int_value(e: &Expr, consts: &HashMap<String, Table>, env: &Env) -> Option<i64> {
    match strip(e) {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i), ..
        }) => i.base10_parse().ok(),
        Expr::Path(p) => {
            let id = p.path.get_ident()?.to_string();
            match env.get(&id) {
                Some(Bound::Int(i)) => Some(*i),
                Some(Bound::Name(..)) => None,
                None => match consts.get(&id) {
                    Some(Table::Leaf(v)) => int_value(v, consts, env),
                    _ => None,
                },
            }
        }
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => int_value(&u.expr, consts, env).map(|v| -v),
        Expr::Cast(c) if is_int_type(&c.ty) => int_value(&c.expr, consts, env),
        Expr::Binary(b) => {
            let (l, r) = (int_value(&b.left, consts, env)?, int_value(&b.right, consts, env)?);
            match b.op {
                syn::BinOp::Add(_) => l.checked_add(r),
                syn::BinOp::Sub(_) => l.checked_sub(r),
                syn::BinOp::Mul(_) => l.checked_mul(r),
                syn::BinOp::Div(_) => l.checked_div(r),
                syn::BinOp::Rem(_) => l.checked_rem(r),
                _ => None,
            }
        }
        _ => None,
    }
}

fn is_int_type(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Path(p) if p.path.get_ident().is_some_and(|i| {
        matches!(i.to_string().as_str(), "isize" | "usize" | "i8" | "i16" | "i32" | "i64" | "u8" | "u16" | "u32" | "u64")
    }))
}

fn path_expr(id: syn::Ident) -> Expr {
    syn::parse_quote!(#id)
}

/// An integer as a literal expression (negative: a negated literal).
fn int_expr(i: i64, span: Span) -> Expr {
    let lit = syn::LitInt::new(&i.unsigned_abs().to_string(), span);
    if i < 0 {
        syn::parse_quote_spanned!(span=> (-#lit))
    } else {
        syn::parse_quote_spanned!(span=> #lit)
    }
}

fn paren(e: Expr) -> Expr {
    match e {
        Expr::Lit(_) | Expr::Path(_) | Expr::Paren(_) => e,
        other => Expr::Paren(syn::ExprParen {
            attrs: Vec::new(),
            paren_token: Default::default(),
            expr: Box::new(other),
        }),
    }
}
