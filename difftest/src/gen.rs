//! Random stencils, well typed by construction: a type-directed generator picks a type, then a
//! production for it. Rust's inference is modelled by one flag: an expression generated
//! *forced* sits where its context fixes its type (an argument of a typed receiver, the other
//! side of a typed operand, an annotated `let`, the body's tail), so it may be an unsuffixed
//! literal or an untyped local; everywhere else (method receivers, cast operands, the side of a
//! binary operation that decides its type) the expression must type itself (`Expr::typed`).
//!
//! Host panics are avoided by construction: integer divisors are forced non-zero (and not -1
//! for `i32`), `clamp` bounds are ordered constants. The generated crate turns overflow checks
//! off, so `+ - * << >>` and `as` wrap and mask as in a release build.

use crate::ast::*;
use rand::rngs::SmallRng;
use rand::seq::{IndexedRandom, SliceRandom};
use rand::{Rng, SeedableRng};

/// The seed of stencil `id` in a run with `seed`: stencils do not depend on the batch size.
pub fn stencil_seed(seed: u64, id: u64) -> u64 {
    // splitmix64 of the pair
    let mut z = seed
        ^ id.wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .wrapping_add(0x632B_E59B_D9B4_E019);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Stencil `id` of the run with `seed`.
pub fn stencil(seed: u64, id: u64) -> Stencil {
    let mut g = Gen::new(SmallRng::seed_from_u64(stencil_seed(seed, id)));
    g.skeleton();
    let (body, tol) = g.body();
    let zero_sign_free = {
        let mut free = false;
        visit_block(&body, &mut |e| {
            if let Kind::Call(Func::Min | Func::Max, _, _) = e.kind {
                free |= e.ty.is_float();
            }
        });
        free
    };
    let packed = packed_grids(seed, id, &g);
    Stencil {
        id,
        input_id: id,
        rank: g.rank,
        boundary: g.boundary,
        explicit_boundary: g.explicit_boundary,
        out: g.out,
        args: g.args,
        params_ty: g.params_ty,
        grid2_alias: g.grid2_alias,
        consts: g.consts,
        body,
        tol,
        zero_sign_free,
        state: g.state,
        state_first: g.state_first,
        packed,
    }
}

/// Now and then (a quarter of the stencils that have one) a `u8` or `u32` grid not of the
/// output's type declared `packed(g = bits)`, bits 1, 2 or 4 (its inputs are then masked to
/// fit). Drawn from a stream of its own, so the rest of every stencil is as before.
fn packed_grids(seed: u64, id: u64, g: &Gen) -> Vec<(usize, u32)> {
    let mut rng = SmallRng::seed_from_u64(stencil_seed(seed ^ 0x7061_636b_6564, id));
    let eligible: Vec<usize> = (0..g.args.len())
        .filter(|&i| matches!(&g.args[i], Arg::Grid { elem: Ty::U8 | Ty::U32, .. } if Some(i) != g.state))
        .filter(|&i| matches!(&g.args[i], Arg::Grid { elem, .. } if *elem != g.out))
        .collect();
    if eligible.is_empty() || !rng.random_bool(0.25) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for i in eligible {
        if out.is_empty() || rng.random_bool(0.5) {
            out.push((i, *[1u32, 2, 4].choose(&mut rng).unwrap_or(&2)));
        }
    }
    out
}

const F32_LITS: &[&str] = &[
    "0.0",
    "-0.0",
    "1.0",
    "0.5",
    "0.1",
    "2.5",
    "-1.5",
    "3.0",
    "-7.25",
    "1e30",
    "-1e30",
    "3.4e38",
    "3.4028235e38",
    "-3.4028235e38",
    "1e-45",
    "1.4e-45",
    "1e-40",
    "1.17549435e-38",
    "1e-7",
    "1e-50",
    "16777217.0",
    "0.333333333333333333",
    "2147483647.0",
    "2147483648.0",
    "4294967296.0",
    "255.5",
    "-2147483904.0",
    "1_000.25",
    "123456.789",
    "1e10",
    "6.02e23",
    "1E3",
    "100.0",
    "0.7",
    "-0.5",
    "1.5",
    "1.",
];

const F64_ONLY_LITS: &[&str] = &[
    "1e300",
    "-1e300",
    "1e39",
    "1.7976931348623157e308",
    "5e-324",
    "4.9e-324",
    "1e-310",
    "2.2250738585072014e-308",
    "1000000000.25",
    "9007199254740993.0",
    "1e-300",
    "-9.5e307",
    "18446744073709551616.0",
];

/// Decimal integers written with a float suffix: `2f32`.
const FLOAT_INT_LITS: &[&str] = &["0", "1", "2", "10", "255", "16777217", "4294967295"];

const I32_LITS: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "3",
    "7",
    "-7",
    "8",
    "31",
    "32",
    "100",
    "-100",
    "255",
    "256",
    "65535",
    "-65536",
    "2147483647",
    "-2147483648",
    "0x7fff_ffff",
    "1_000_000",
    "0b101",
    "0o17",
];
const U32_LITS: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "7",
    "8",
    "31",
    "32",
    "255",
    "256",
    "65535",
    "2147483648",
    "4294967295",
    "0xffff_ffff",
    "0x8000_0000",
    "1_000_000_000",
    "0b1111",
];
const U8_LITS: &[&str] = &[
    "0", "1", "2", "3", "4", "7", "8", "15", "127", "128", "200", "255", "0xff", "0x80", "0b1010", "0o7",
];

/// Ordered values for `clamp` bounds (`lo <= hi` by taking two in order).
const F_BOUNDS: &[&str] = &[
    "-1e30", "-100.0", "-1.5", "-1.0", "-0.5", "-0.0", "0.0", "0.5", "1.0", "2.5", "100.0", "1e30", "3.4e38",
];
const I32_BOUNDS: &[&str] = &["-2147483648", "-100", "-1", "0", "1", "7", "255", "2147483647"];
const U32_BOUNDS: &[&str] = &["0", "1", "7", "255", "65535", "4294967295"];
const U8_BOUNDS: &[&str] = &["0", "1", "3", "127", "200", "255"];

/// Names that collide with the kernels' own variables, OpenCL C keywords, types, builtins and
/// macros: the macro must rename them (name hygiene).
const TRICKY_NAMES: &[&str] = &[
    "x",
    "y",
    "z",
    "c",
    "t",
    "i",
    "nx",
    "ny",
    "nz",
    "out",
    "row",
    "lane",
    "step",
    "gx",
    "tx",
    "s_cur",
    "s_next",
    "k_",
    "float",
    "int",
    "uchar",
    "uint",
    "half",
    "min",
    "max",
    "abs",
    "select",
    "sqrt",
    "exp",
    "pow",
    "sin",
    "fabs",
    "clamp",
    "global",
    "local",
    "kernel",
    "constant",
    "private",
    "restrict",
    "signed",
    "unsigned",
    "long",
    "short",
    "char",
    "double",
    "register",
    "volatile",
    "switch",
    "case",
    "default",
    "goto",
    "sizeof",
    "typedef",
    "inline",
    "int8",
    "float8",
    "get_global_id",
    "vload8",
    "barrier",
    "c_1",
    "x_p1",
    "t_g0",
    "UX",
    "HX",
    "TW",
    "SW",
    "STEPS",
    "AT",
    "WRAP",
    "LOAD",
    "NAN",
    "INFINITY",
];

const TRICKY_CONSTS: &[&str] = &[
    "NAN", "INFINITY", "M_PI", "TW", "HX", "STEPS", "MAXFLOAT", "FLT_MAX", "INT_MAX", "CHAR_BIT", "UX", "LOAD", "AT",
    "TILE_X", "true_",
];

struct Local {
    name: String,
    ty: Ty,
    typed: bool,
    /// Its value went through a float `min`/`max` (see `Gen::no_minmax`).
    tainted: bool,
}

struct Gen {
    rng: SmallRng,
    rank: usize,
    boundary: Boundary,
    explicit_boundary: bool,
    out: Ty,
    args: Vec<Arg>,
    params_ty: String,
    grid2_alias: bool,
    consts: Vec<ConstDef>,
    scope: Vec<Local>,
    fresh: usize,
    budget: i32,
    state: Option<usize>,
    state_first: bool,
    /// Inside an operand where the sign of a zero changes the result beyond the sign of a zero
    /// (a divisor, `recip`, `atan2`, the base of `powf`/`powi`): no float `min`/`max` there,
    /// directly or through a local. Rust lets `(-0.0f32).min(0.0)` return either zero, so
    /// `1.0 / x.min(y)` may be +inf or -inf on the host alone.
    no_minmax: u32,
    /// The expression being generated used a float `min`/`max` or a tainted local.
    taint: bool,
}

fn weighted<T: Copy>(rng: &mut SmallRng, items: &[(T, u32)]) -> T {
    let total: u32 = items.iter().map(|(_, w)| w).sum();
    let mut r = rng.random_range(0..total);
    for (t, w) in items {
        if r < *w {
            return *t;
        }
        r -= w;
    }
    items[items.len() - 1].0
}

fn value_ty(rng: &mut SmallRng) -> Ty {
    weighted(
        rng,
        &[(Ty::F32, 30), (Ty::F64, 20), (Ty::I32, 18), (Ty::U32, 12), (Ty::U8, 20)],
    )
}

impl Gen {
    fn new(rng: SmallRng) -> Gen {
        Gen {
            rng,
            rank: 2,
            boundary: Boundary::Fixed,
            explicit_boundary: false,
            out: Ty::F32,
            args: Vec::new(),
            params_ty: String::new(),
            grid2_alias: false,
            consts: Vec::new(),
            scope: Vec::new(),
            fresh: 0,
            budget: 0,
            state: None,
            state_first: false,
            no_minmax: 0,
            taint: false,
        }
    }

    fn p(&mut self, p: f64) -> bool {
        self.rng.random_bool(p)
    }

    // ---------------------------------------------------------------- signature

    fn skeleton(&mut self) {
        self.rank = weighted(&mut self.rng, &[(1, 25), (2, 55), (3, 20)]);
        self.boundary = weighted(
            &mut self.rng,
            &[(Boundary::Fixed, 50), (Boundary::Periodic, 25), (Boundary::Clamp, 25)],
        );
        self.explicit_boundary = self.p(0.3);
        self.grid2_alias = self.p(0.2);
        self.out = weighted(
            &mut self.rng,
            &[(Ty::F32, 35), (Ty::F64, 20), (Ty::I32, 15), (Ty::U32, 12), (Ty::U8, 18)],
        );
        let mut used: Vec<String> = Vec::new();
        let mut name = |g: &mut Gen, base: String| {
            let n = if g.p(0.08) {
                let t = TRICKY_NAMES.choose(&mut g.rng).copied().unwrap_or("x").to_string();
                if used.contains(&t) {
                    base
                } else {
                    t
                }
            } else {
                base
            };
            used.push(n.clone());
            n
        };
        let mut args = Vec::new();
        let grids = self.rng.random_range(1..=3);
        for i in 0..grids {
            let elem = if i == 0 && self.p(0.6) {
                self.out
            } else {
                value_ty(&mut self.rng)
            };
            let n = name(self, format!("g{i}"));
            args.push(Arg::Grid { name: n, elem });
        }
        for i in 0..weighted(&mut self.rng, &[(0, 45), (1, 35), (2, 20)]) {
            let ty = *[Ty::F32, Ty::F64, Ty::I32, Ty::U32]
                .choose(&mut self.rng)
                .unwrap_or(&Ty::F32);
            let n = name(self, format!("s{i}"));
            args.push(Arg::Scalar { name: n, ty });
        }
        if self.p(0.35) {
            let fields = (0..self.rng.random_range(1..=4))
                .map(|i| (["a", "b", "x", "c"][i].to_string(), value_ty(&mut self.rng)))
                .collect();
            let n = name(self, "p".to_string());
            args.push(Arg::Params { name: n, fields });
        }
        args.shuffle(&mut self.rng);
        // Name the steps state now and then; with several grids of the output's type and no
        // name the stencil has no steps variant.
        let candidates: Vec<usize> = (0..args.len())
            .filter(|&i| matches!(&args[i], Arg::Grid { elem, .. } if *elem == self.out))
            .collect();
        let p_name = if candidates.len() > 1 { 0.7 } else { 0.3 };
        if !candidates.is_empty() && self.p(p_name) {
            self.state = candidates.choose(&mut self.rng).copied();
            self.state_first = self.p(0.5);
        }
        self.args = args;
        self.params_ty = if self.p(0.04) {
            ["float4", "int2", "Coeffs", "uchar8"]
                .choose(&mut self.rng)
                .unwrap_or(&"Coeffs")
                .to_string()
        } else {
            "Params".to_string()
        };
        for i in 0..weighted(&mut self.rng, &[(0, 40), (1, 30), (2, 20), (3, 10)]) {
            let ty = value_ty(&mut self.rng);
            let name = if self.p(0.15) {
                TRICKY_CONSTS.choose(&mut self.rng).unwrap_or(&"K").to_string()
            } else {
                format!("K{i}")
            };
            if self.consts.iter().any(|c| c.name == name) || used.contains(&name) {
                continue;
            }
            let in_module = self.p(0.3);
            let value = if ty.is_float() && self.p(0.1) {
                format!(
                    "{}::{}",
                    ty.rust(),
                    ["NAN", "INFINITY", "NEG_INFINITY"][self.rng.random_range(0..3)]
                )
            } else {
                self.literal_value(ty)
            };
            self.consts.push(ConstDef {
                name,
                in_module,
                ty,
                value,
            });
        }
    }

    // ---------------------------------------------------------------- body

    fn body(&mut self) -> (Block, Tol) {
        self.budget = self.rng.random_range(6..40);
        let lets = weighted(&mut self.rng, &[(0, 25), (1, 30), (2, 25), (3, 12), (4, 8)]);
        let depth = 5;
        let mut block_lets = Vec::new();
        for _ in 0..lets {
            block_lets.push(self.let_stmt(depth - 1));
        }
        // The tail gets its own budget: the `let`s must not leave it a bare literal.
        self.budget = self.rng.random_range(4..24);
        let (tail, tol) = if self.out.is_float() && self.p(0.2) {
            let (e, ulps) = self.transcendental(self.out, depth - 1);
            (e, Tol::Ulps(ulps))
        } else {
            (self.gen(self.out, true, depth), Tol::Exact)
        };
        (
            Block {
                lets: block_lets,
                tail: Box::new(tail),
            },
            tol,
        )
    }

    fn fresh_name(&mut self) -> String {
        if self.p(0.12) {
            let t = TRICKY_NAMES.choose(&mut self.rng).copied().unwrap_or("t");
            let clash =
                self.args.iter().any(|a| a.name() == t) || self.consts.iter().any(|c| !c.in_module && c.name == t);
            if !clash {
                return t.to_string();
            }
        }
        // Shadowing an earlier local of the block is valid Rust and must stay so in C.
        if self.p(0.08) {
            if let Some(l) = self.scope.choose(&mut self.rng) {
                return l.name.clone();
            }
        }
        self.fresh += 1;
        format!("t{}", self.fresh - 1)
    }

    fn let_stmt(&mut self, depth: usize) -> Let {
        let ty = weighted(
            &mut self.rng,
            &[
                (Ty::F32, 25),
                (Ty::F64, 15),
                (Ty::I32, 15),
                (Ty::U32, 10),
                (Ty::U8, 12),
                (Ty::Bool, 12),
                (self.out, 20),
            ],
        );
        let name = self.fresh_name();
        let style = self.rng.random_range(0..10);
        let outer_taint = std::mem::replace(&mut self.taint, false);
        let (ann, value, typed) = if style < 4 {
            (Some(ty), self.gen(ty, true, depth), true)
        } else if style < 9 || ty == Ty::Bool {
            (None, self.gen(ty, false, depth), true)
        } else {
            // `let t0 = 0.25;`: Rust types it from a later use; the value fits the fallback
            // type (`i32`, `f64`) too, should that use never come.
            (None, self.untyped_literal(ty), false)
        };
        let tainted = self.taint;
        self.taint |= outer_taint;
        self.scope.push(Local {
            name: name.clone(),
            ty,
            typed,
            tainted,
        });
        Let { name, ann, value }
    }

    fn untyped_literal(&mut self, ty: Ty) -> Expr {
        let text = if ty.is_float() {
            F32_LITS.choose(&mut self.rng).unwrap_or(&"0.5").to_string()
        } else {
            self.rng.random_range(0..=127).to_string()
        };
        Expr {
            ty,
            typed: false,
            kind: Kind::Lit(text),
        }
    }

    fn block(&mut self, ty: Ty, forced: bool, depth: usize) -> Block {
        let mark = self.scope.len();
        let n = if depth >= 2 {
            weighted(&mut self.rng, &[(0, 55), (1, 30), (2, 15)])
        } else {
            0
        };
        let lets = (0..n).map(|_| self.let_stmt(depth.saturating_sub(1))).collect();
        let tail = self.gen(ty, forced, depth);
        self.scope.truncate(mark);
        Block {
            lets,
            tail: Box::new(tail),
        }
    }

    /// An expression of type `ty`; when not `forced` it types itself.
    fn gen(&mut self, ty: Ty, forced: bool, depth: usize) -> Expr {
        let leaf_p = match depth {
            0 => 1.0,
            1 => 0.6,
            2 => 0.4,
            _ => 0.25,
        };
        if self.budget <= 0 || self.rng.random_bool(leaf_p) {
            return self.leaf(ty, forced);
        }
        self.budget -= 1;
        let e = match ty {
            Ty::Bool => self.gen_bool(depth),
            t if t.is_float() => self.gen_float(t, forced, depth),
            t => self.gen_int(t, forced, depth),
        };
        if self.p(0.03) {
            return Expr {
                ty: e.ty,
                typed: e.typed,
                kind: Kind::Paren(Box::new(e)),
            };
        }
        e
    }

    fn structured(&mut self, ty: Ty, forced: bool, depth: usize, which: u8) -> Expr {
        match which {
            0 => {
                let c = self.gen(Ty::Bool, false, depth - 1);
                let a = self.block(ty, forced, depth - 1);
                let b = self.block(ty, true, depth - 1);
                let typed = a.tail.typed || b.tail.typed;
                Expr {
                    ty,
                    typed,
                    kind: Kind::If(Box::new(c), a, b),
                }
            }
            1 => self.match_expr(ty, forced, depth),
            _ => {
                let b = self.block(ty, forced, depth - 1);
                Expr {
                    ty,
                    typed: b.tail.typed,
                    kind: Kind::Block(b),
                }
            }
        }
    }

    fn match_expr(&mut self, ty: Ty, forced: bool, depth: usize) -> Expr {
        let st = weighted(&mut self.rng, &[(Ty::U8, 60), (Ty::I32, 25), (Ty::U32, 15)]);
        let scrut = match self.read_of(st) {
            Some(r) if self.p(0.7) => r,
            _ => self.gen(st, false, depth - 1),
        };
        let n = self.rng.random_range(1..=3);
        let mut arms = Vec::new();
        let mut any_typed = false;
        for i in 0..=n {
            let pats = if i == n {
                Vec::new()
            } else {
                (0..weighted(&mut self.rng, &[(1, 75), (2, 20), (3, 5)]))
                    .map(|_| self.pattern(st))
                    .collect()
            };
            let body = self.block(ty, forced || i > 0, depth - 1);
            any_typed |= body.tail.typed;
            arms.push((pats, body));
        }
        Expr {
            ty,
            typed: any_typed,
            kind: Kind::Match(Box::new(scrut), arms),
        }
    }

    fn pattern(&mut self, st: Ty) -> String {
        let consts: Vec<String> = self.consts.iter().filter(|c| c.ty == st).map(|c| c.path()).collect();
        if !consts.is_empty() && self.p(0.25) {
            return consts.choose(&mut self.rng).cloned().unwrap_or_default();
        }
        if self.p(0.05) {
            return format!("{}::MAX", st.rust());
        }
        let v: i64 = if self.p(0.8) {
            self.rng.random_range(0..5)
        } else {
            match st {
                Ty::U8 => *[127, 128, 255].choose(&mut self.rng).unwrap_or(&255),
                Ty::I32 => *[-1, -2147483648, 2147483647, 100].choose(&mut self.rng).unwrap_or(&-1),
                _ => *[4294967295, 2147483648, 100].choose(&mut self.rng).unwrap_or(&100),
            }
        };
        if self.p(0.2) {
            format!("{v}{}", st.rust())
        } else {
            v.to_string()
        }
    }

    fn gen_float(&mut self, ty: Ty, forced: bool, depth: usize) -> Expr {
        let structured = if depth >= 2 { 2 } else { 0 };
        let choice = weighted(
            &mut self.rng,
            &[
                (0u8, 14),                                   // + - * / %
                (1, 2),                                      // -x
                (2, 5),                                      // cast
                (3, 6),                                      // exact unary method
                (4, if self.no_minmax > 0 { 0 } else { 4 }), // min / max
                (5, 2),                                      // clamp
                (6, 2),                                      // mul_add
                (7, 3 * structured),
                (8, 2 * structured),
                (9, structured),
            ],
        );
        match choice {
            0 => {
                let op = weighted(
                    &mut self.rng,
                    &[(Op::Add, 5), (Op::Sub, 4), (Op::Mul, 5), (Op::Div, 3), (Op::Rem, 1)],
                );
                self.binary(op, ty, forced, depth)
            }
            1 => self.neg(ty, forced, depth),
            2 => self.cast_to(ty, depth),
            3 => {
                let f = *[Func::Abs, Func::Sqrt, Func::Floor, Func::Ceil, Func::Round, Func::Recip]
                    .choose(&mut self.rng)
                    .unwrap_or(&Func::Abs);
                let sign_sensitive = f == Func::Recip;
                self.no_minmax += u32::from(sign_sensitive);
                let e = self.call(f, ty, vec![], depth);
                self.no_minmax -= u32::from(sign_sensitive);
                e
            }
            4 => {
                let f = if self.p(0.5) { Func::Min } else { Func::Max };
                let other = self.gen(ty, true, depth - 1);
                self.taint = true;
                self.call(f, ty, vec![other], depth)
            }
            5 => self.clamp(ty, depth),
            6 => {
                let a = self.gen(ty, true, depth - 1);
                let b = self.gen(ty, true, depth - 1);
                self.call(Func::MulAdd, ty, vec![a, b], depth)
            }
            7 => self.structured(ty, forced, depth, 0),
            8 => self.structured(ty, forced, depth, 1),
            _ => self.structured(ty, forced, depth, 2),
        }
    }

    fn gen_int(&mut self, ty: Ty, forced: bool, depth: usize) -> Expr {
        let structured = if depth >= 2 { 2 } else { 0 };
        let choice = weighted(
            &mut self.rng,
            &[
                (0u8, 10), // + - *
                (1, 4),    // / %
                (2, 6),    // & | ^
                (3, 4),    // << >>
                (4, 2),    // !x
                (5, if ty == Ty::I32 { 2 } else { 0 }),
                (6, 6), // cast
                (7, 3), // min max clamp abs
                (8, 3 * structured),
                (9, 3 * structured),
                (10, structured),
            ],
        );
        match choice {
            0 => {
                let op = *[Op::Add, Op::Sub, Op::Mul].choose(&mut self.rng).unwrap_or(&Op::Add);
                self.binary(op, ty, forced, depth)
            }
            1 => {
                let op = if self.p(0.6) { Op::Div } else { Op::Rem };
                let n = self.gen(ty, forced, depth - 1);
                let d = self.divisor(ty, depth);
                Expr {
                    ty,
                    typed: n.typed || d.typed,
                    kind: Kind::Bin(op, Box::new(n), Box::new(d)),
                }
            }
            2 => {
                let op = *[Op::BitAnd, Op::BitOr, Op::BitXor]
                    .choose(&mut self.rng)
                    .unwrap_or(&Op::BitAnd);
                self.binary(op, ty, forced, depth)
            }
            3 => {
                let op = if self.p(0.5) { Op::Shl } else { Op::Shr };
                let l = self.gen(ty, forced, depth - 1);
                let r = self.shift_amount(ty, depth);
                Expr {
                    ty,
                    typed: l.typed,
                    kind: Kind::Bin(op, Box::new(l), Box::new(r)),
                }
            }
            4 => {
                let x = self.gen(ty, forced, depth - 1);
                Expr {
                    ty,
                    typed: x.typed,
                    kind: Kind::Not(Box::new(x)),
                }
            }
            5 => self.neg(ty, forced, depth),
            6 => self.cast_to(ty, depth),
            7 => match self.rng.random_range(0..4) {
                0 if ty == Ty::I32 => self.call(Func::Abs, ty, vec![], depth),
                0 | 1 => {
                    let other = self.gen(ty, true, depth - 1);
                    self.call(Func::Min, ty, vec![other], depth)
                }
                2 => {
                    let other = self.gen(ty, true, depth - 1);
                    self.call(Func::Max, ty, vec![other], depth)
                }
                _ => self.clamp(ty, depth),
            },
            8 => self.structured(ty, forced, depth, 0),
            9 => self.structured(ty, forced, depth, 1),
            _ => self.structured(ty, forced, depth, 2),
        }
    }

    fn gen_bool(&mut self, depth: usize) -> Expr {
        let structured = if depth >= 2 { 1 } else { 0 };
        let choice = weighted(
            &mut self.rng,
            &[
                (0u8, 10), // comparison
                (1, 4),    // && ||
                (2, 2),    // & | ^ on bools
                (3, 2),    // !b
                (4, 2),    // b == true
                (5, 1),    // b < b
                (6, 2 * structured),
                (7, structured),
                (8, structured),
            ],
        );
        let b = |k: Kind| Expr {
            ty: Ty::Bool,
            typed: true,
            kind: k,
        };
        match choice {
            0 => self.comparison(depth),
            1 | 2 | 5 => {
                let op = match choice {
                    1 => *[Op::And, Op::Or].choose(&mut self.rng).unwrap_or(&Op::And),
                    2 => *[Op::BitAnd, Op::BitOr, Op::BitXor]
                        .choose(&mut self.rng)
                        .unwrap_or(&Op::BitAnd),
                    _ => *[Op::Lt, Op::Gt, Op::Le].choose(&mut self.rng).unwrap_or(&Op::Lt),
                };
                let l = self.gen(Ty::Bool, false, depth - 1);
                let r = self.gen(Ty::Bool, false, depth - 1);
                b(Kind::Bin(op, Box::new(l), Box::new(r)))
            }
            3 => {
                let x = self.gen(Ty::Bool, false, depth - 1);
                b(Kind::Not(Box::new(x)))
            }
            4 => {
                let x = self.gen(Ty::Bool, false, depth - 1);
                let lit = Expr {
                    ty: Ty::Bool,
                    typed: true,
                    kind: Kind::Lit(if self.p(0.5) { "true" } else { "false" }.to_string()),
                };
                let op = if self.p(0.7) { Op::Eq } else { Op::Ne };
                b(Kind::Bin(op, Box::new(x), Box::new(lit)))
            }
            6 => self.structured(Ty::Bool, true, depth, 0),
            7 => self.structured(Ty::Bool, true, depth, 1),
            _ => self.structured(Ty::Bool, true, depth, 2),
        }
    }

    fn comparison(&mut self, depth: usize) -> Expr {
        let t = value_ty(&mut self.rng);
        let op = *[Op::Eq, Op::Ne, Op::Lt, Op::Le, Op::Gt, Op::Ge]
            .choose(&mut self.rng)
            .unwrap_or(&Op::Lt);
        // A uniform operand (a scalar argument or params member) now and then: a bool that
        // is the same in every lane, mixed with per-point comparisons.
        let typed = match self.uniform_of(t, false) {
            Some(u) if self.p(0.3) => u,
            _ => self.gen(t, false, depth.saturating_sub(1)),
        };
        let other = self.gen(t, true, depth.saturating_sub(1));
        let (l, r) = if self.p(0.5) { (typed, other) } else { (other, typed) };
        Expr {
            ty: Ty::Bool,
            typed: true,
            kind: Kind::Bin(op, Box::new(l), Box::new(r)),
        }
    }

    /// `-x`; a negative literal stays as it is (`-(-2147483648i32)` is out of range in Rust).
    fn neg(&mut self, ty: Ty, forced: bool, depth: usize) -> Expr {
        let x = self.gen(ty, forced, depth - 1);
        if matches!(&x.kind, Kind::Lit(t) if t.starts_with('-')) {
            return x;
        }
        Expr {
            ty,
            typed: x.typed,
            kind: Kind::Neg(Box::new(x)),
        }
    }

    /// `l op r` of type `ty`; when not forced, one side types itself and decides the other.
    fn binary(&mut self, op: Op, ty: Ty, forced: bool, depth: usize) -> Expr {
        // A float divisor is sign-sensitive: ±0 gives ±inf.
        let divisor = op == Op::Div && ty.is_float();
        let right = |g: &mut Gen, forced: bool| {
            g.no_minmax += u32::from(divisor);
            let r = g.gen(ty, forced, depth - 1);
            g.no_minmax -= u32::from(divisor);
            r
        };
        let (l, r) = if forced {
            (self.gen(ty, true, depth - 1), right(self, true))
        } else if self.p(0.5) {
            let l = self.gen(ty, false, depth - 1);
            (l, right(self, true))
        } else {
            let l = self.gen(ty, true, depth - 1);
            (l, right(self, false))
        };
        Expr {
            ty,
            typed: l.typed || r.typed,
            kind: Kind::Bin(op, Box::new(l), Box::new(r)),
        }
    }

    /// `x as ty` from another numeric type or, for integers, a bool.
    fn cast_to(&mut self, ty: Ty, depth: usize) -> Expr {
        let from = if ty.is_int() && self.p(0.15) {
            Ty::Bool
        } else if self.p(0.1) {
            ty
        } else {
            value_ty(&mut self.rng)
        };
        let x = self.gen(from, false, depth - 1);
        Expr {
            ty,
            typed: true,
            kind: Kind::Cast(Box::new(x), ty),
        }
    }

    /// `recv.f(rest..)` or `ty::f(recv, rest..)`; the receiver of a method call types itself.
    fn call(&mut self, f: Func, ty: Ty, rest: Vec<Expr>, depth: usize) -> Expr {
        let path = self.p(0.2);
        let recv = self.gen(ty, path, depth - 1);
        let form = if path || !recv.typed {
            CallForm::Path(ty)
        } else {
            CallForm::Method
        };
        let mut args = vec![recv];
        args.extend(rest);
        Expr {
            ty,
            typed: true,
            kind: Kind::Call(f, args, form),
        }
    }

    fn clamp(&mut self, ty: Ty, depth: usize) -> Expr {
        let list = match ty {
            Ty::I32 => I32_BOUNDS,
            Ty::U32 => U32_BOUNDS,
            Ty::U8 => U8_BOUNDS,
            _ => F_BOUNDS,
        };
        let mut i = self.rng.random_range(0..list.len());
        let mut j = self.rng.random_range(0..list.len());
        if i > j {
            std::mem::swap(&mut i, &mut j);
        }
        let (lo, hi) = (self.bound(list[i], ty), self.bound(list[j], ty));
        self.call(Func::Clamp, ty, vec![lo, hi], depth)
    }

    fn bound(&mut self, v: &str, ty: Ty) -> Expr {
        let text = if ty == Ty::F32 && v == "3.4e38" || self.p(0.3) {
            format!("{v}{}", ty.rust())
        } else {
            v.to_string()
        };
        Expr {
            ty,
            typed: false,
            kind: Kind::Lit(text),
        }
    }

    /// A non-zero divisor (and not -1 for `i32`, whose `MIN / -1` overflows).
    fn divisor(&mut self, ty: Ty, depth: usize) -> Expr {
        let d = self.gen(ty, false, depth - 1);
        let lit = |t: &str| Expr {
            ty,
            typed: false,
            kind: Kind::Lit(t.to_string()),
        };
        let bin = |op, l: Expr, r: Expr| Expr {
            ty,
            typed: true,
            kind: Kind::Bin(op, Box::new(l), Box::new(r)),
        };
        let method = |f, recv: Expr, arg: Expr| Expr {
            ty,
            typed: true,
            kind: Kind::Call(f, vec![recv, arg], CallForm::Method),
        };
        let paren = |e: Expr| Expr {
            ty,
            typed: e.typed,
            kind: Kind::Paren(Box::new(e)),
        };
        if ty == Ty::I32 {
            match self.rng.random_range(0..4) {
                0 | 1 => {
                    let cmp = |r: &str| Expr {
                        ty: Ty::Bool,
                        typed: true,
                        kind: Kind::Bin(Op::Eq, Box::new(d.clone()), Box::new(lit(r))),
                    };
                    let (zero, minus) = (cmp("0"), cmp("-1"));
                    let cond = Expr {
                        ty: Ty::Bool,
                        typed: true,
                        kind: Kind::Bin(Op::Or, Box::new(zero), Box::new(minus)),
                    };
                    let block = |e: Expr| Block {
                        lets: Vec::new(),
                        tail: Box::new(e),
                    };
                    let k = ["3", "7", "-2", "2147483647"][self.rng.random_range(0..4)];
                    Expr {
                        ty,
                        typed: true,
                        kind: Kind::If(Box::new(cond), block(lit(k)), block(d)),
                    }
                }
                2 => paren(bin(Op::Add, paren(bin(Op::BitAnd, d, lit("255"))), lit("1"))),
                _ => method(Func::Max, d, lit("1")),
            }
        } else if self.p(0.6) {
            paren(bin(Op::BitOr, d, lit("1")))
        } else {
            method(Func::Max, d, lit("1"))
        }
    }

    /// A shift amount: usually below the width, now and then any value (Rust masks it to the
    /// width of the shifted type, OpenCL to the width after integer promotion).
    fn shift_amount(&mut self, ty: Ty, depth: usize) -> Expr {
        let w = ty.bits();
        match self.rng.random_range(0..10) {
            0..=3 => {
                let v = self.rng.random_range(0..w);
                let (text, typed) = if self.p(0.3) {
                    let s = *[Ty::I32, Ty::U32, Ty::U8].choose(&mut self.rng).unwrap_or(&Ty::U32);
                    (format!("{v}{}", s.rust()), true)
                } else {
                    (v.to_string(), false)
                };
                Expr {
                    ty: Ty::I32,
                    typed,
                    kind: Kind::Lit(text),
                }
            }
            4..=8 => {
                let s = *[Ty::I32, Ty::U32, Ty::U8].choose(&mut self.rng).unwrap_or(&Ty::U32);
                let x = self.gen(s, false, depth.saturating_sub(1).max(1) - 1);
                let mask = Expr {
                    ty: s,
                    typed: false,
                    kind: Kind::Lit((w - 1).to_string()),
                };
                Expr {
                    ty: s,
                    typed: true,
                    kind: Kind::Paren(Box::new(Expr {
                        ty: s,
                        typed: true,
                        kind: Kind::Bin(Op::BitAnd, Box::new(x), Box::new(mask)),
                    })),
                }
            }
            _ => {
                let s = *[Ty::I32, Ty::U32, Ty::U8].choose(&mut self.rng).unwrap_or(&Ty::U32);
                self.gen(s, false, depth.saturating_sub(1).max(1) - 1)
            }
        }
    }

    /// The tail of a body whose result is not exactly rounded: one transcendental call of
    /// exactly rounded arguments, compared within its ulp bound.
    fn transcendental(&mut self, ty: Ty, depth: usize) -> (Expr, u32) {
        let f = *[
            Func::Exp,
            Func::Ln,
            Func::Log10,
            Func::Log2,
            Func::Sin,
            Func::Cos,
            Func::Tan,
            Func::Tanh,
            Func::Atan,
            Func::Cbrt,
            Func::Atan2,
            Func::Hypot,
            Func::Powf,
            Func::Powi,
        ]
        .choose(&mut self.rng)
        .unwrap_or(&Func::Exp);
        let sign_sensitive = matches!(f, Func::Atan2 | Func::Powf | Func::Powi);
        self.no_minmax += u32::from(sign_sensitive);
        let rest = match f {
            Func::Atan2 | Func::Hypot | Func::Powf => vec![self.gen(ty, true, depth)],
            Func::Powi => {
                let n = if self.p(0.6) {
                    Expr {
                        ty: Ty::I32,
                        typed: false,
                        kind: Kind::Lit(self.rng.random_range(-8..=8).to_string()),
                    }
                } else {
                    let x = self.gen(Ty::I32, false, 1);
                    Expr {
                        ty: Ty::I32,
                        typed: true,
                        kind: Kind::Paren(Box::new(Expr {
                            ty: Ty::I32,
                            typed: true,
                            kind: Kind::Bin(
                                Op::BitAnd,
                                Box::new(x),
                                Box::new(Expr {
                                    ty: Ty::I32,
                                    typed: false,
                                    kind: Kind::Lit("7".into()),
                                }),
                            ),
                        })),
                    }
                };
                vec![n]
            }
            _ => vec![],
        };
        let ulps = f.ulp_bound().unwrap_or(0);
        let e = self.call(f, ty, rest, depth + 1);
        self.no_minmax -= u32::from(sign_sensitive);
        (e, ulps)
    }

    // ---------------------------------------------------------------- leaves

    fn read_of(&mut self, ty: Ty) -> Option<Expr> {
        let grids: Vec<usize> = self
            .args
            .iter()
            .enumerate()
            .filter(|(_, a)| matches!(a, Arg::Grid { elem, .. } if *elem == ty))
            .map(|(i, _)| i)
            .collect();
        let &g = grids.choose(&mut self.rng)?;
        let mut off = [0i64; 3];
        let mut forms = [OffsetForm::Plain; 3];
        for k in 0..self.rank {
            off[k] = if self.p(0.3) {
                0
            } else if self.p(0.1) {
                *[-3, 3].choose(&mut self.rng).unwrap_or(&3)
            } else {
                self.rng.random_range(-2..=2)
            };
            forms[k] = weighted(
                &mut self.rng,
                &[
                    (OffsetForm::Plain, 90),
                    (OffsetForm::Paren, 5),
                    (OffsetForm::Suffixed, 5),
                ],
            );
        }
        Some(Expr {
            ty,
            typed: true,
            kind: Kind::Read(g, off, forms),
        })
    }

    /// A scalar argument or (where the context fixes the type) params member of type `ty`.
    fn uniform_of(&mut self, ty: Ty, forced: bool) -> Option<Expr> {
        let mut found = Vec::new();
        for (i, a) in self.args.iter().enumerate() {
            match a {
                Arg::Scalar { ty: t, .. } if *t == ty => found.push(Kind::Arg(i)),
                Arg::Params { fields, .. } if forced => {
                    for (j, (_, t)) in fields.iter().enumerate() {
                        if *t == ty {
                            found.push(Kind::Member(i, j));
                        }
                    }
                }
                _ => {}
            }
        }
        let kind = found.choose(&mut self.rng)?.clone();
        Some(Expr { ty, typed: true, kind })
    }

    fn leaf(&mut self, ty: Ty, forced: bool) -> Expr {
        let locals: Vec<(String, bool, bool)> = {
            // Innermost binding of each name only.
            let mut seen: Vec<&str> = Vec::new();
            let mut out = Vec::new();
            for l in self.scope.iter().rev() {
                if seen.contains(&l.name.as_str()) {
                    continue;
                }
                seen.push(&l.name);
                if l.ty == ty && (l.typed || forced) && !(l.tainted && self.no_minmax > 0) {
                    out.push((l.name.clone(), l.typed, l.tainted));
                }
            }
            out
        };
        if ty == Ty::Bool {
            let choice = weighted(
                &mut self.rng,
                &[(0u8, 2), (1, if locals.is_empty() { 0 } else { 4 }), (2, 6)],
            );
            return match choice {
                0 => Expr {
                    ty,
                    typed: true,
                    kind: Kind::Lit(if self.p(0.5) { "true" } else { "false" }.to_string()),
                },
                1 => {
                    let (n, _, tainted) = locals.choose(&mut self.rng).cloned().unwrap_or_default();
                    self.taint |= tainted;
                    Expr {
                        ty,
                        typed: true,
                        kind: Kind::Local(n),
                    }
                }
                _ => self.comparison(0),
            };
        }
        // The macro types constants and params members from their context (its documented
        // rule): they stand only where the context fixes the type.
        let consts: Vec<String> = if forced {
            self.consts.iter().filter(|c| c.ty == ty).map(|c| c.path()).collect()
        } else {
            Vec::new()
        };
        let has_read = self
            .args
            .iter()
            .any(|a| matches!(a, Arg::Grid { elem, .. } if *elem == ty));
        let choice = weighted(
            &mut self.rng,
            &[
                (0u8, 3),
                (1, if has_read { 8 } else { 0 }),
                (2, 2),
                (3, if consts.is_empty() { 0 } else { 2 }),
                (4, if forced { 1 } else { 0 }),
                (5, if locals.is_empty() { 0 } else { 7 }),
                (6, if has_read { 0 } else { 3 }),
            ],
        );
        match choice {
            1 => self.read_of(ty).unwrap_or_else(|| self.literal(ty, forced)),
            2 => self.uniform_of(ty, forced).unwrap_or_else(|| self.literal(ty, forced)),
            3 => Expr {
                ty,
                typed: true,
                kind: Kind::Const(consts.choose(&mut self.rng).cloned().unwrap_or_default()),
            },
            4 => Expr {
                ty,
                typed: true,
                kind: Kind::Const(self.builtin_const(ty)),
            },
            5 => {
                let (n, typed, tainted) = locals.choose(&mut self.rng).cloned().unwrap_or_default();
                self.taint |= tainted;
                Expr {
                    ty,
                    typed,
                    kind: Kind::Local(n),
                }
            }
            // No grid of this type: a read of another type, cast.
            6 => {
                let from = *Ty::NUMERIC.choose(&mut self.rng).unwrap_or(&Ty::F32);
                match self.read_of(from) {
                    Some(r) => Expr {
                        ty,
                        typed: true,
                        kind: Kind::Cast(Box::new(r), ty),
                    },
                    None => self.literal(ty, forced),
                }
            }
            _ => self.literal(ty, forced),
        }
    }

    fn builtin_const(&mut self, ty: Ty) -> String {
        let names: &[&str] = match ty {
            Ty::F32 | Ty::F64 => &[
                "MAX",
                "MIN",
                "MIN_POSITIVE",
                "EPSILON",
                "INFINITY",
                "NEG_INFINITY",
                "NAN",
                "consts::PI",
            ],
            Ty::I32 | Ty::U32 => &["MIN", "MAX"],
            _ => &["MAX", "MIN"],
        };
        let n = names.choose(&mut self.rng).unwrap_or(&"MAX");
        if n.starts_with("consts::") {
            format!("std::{}::{n}", ty.rust())
        } else {
            format!("{}::{n}", ty.rust())
        }
    }

    /// Digits of a literal of `ty` (no suffix).
    fn literal_value(&mut self, ty: Ty) -> String {
        let pick = |rng: &mut SmallRng, l: &[&str]| l.choose(rng).copied().unwrap_or("0").to_string();
        match ty {
            Ty::F32 => pick(&mut self.rng, F32_LITS),
            Ty::F64 => {
                if self.p(0.4) {
                    pick(&mut self.rng, F64_ONLY_LITS)
                } else {
                    pick(&mut self.rng, F32_LITS)
                }
            }
            Ty::I32 => pick(&mut self.rng, I32_LITS),
            Ty::U32 => pick(&mut self.rng, U32_LITS),
            Ty::U8 => pick(&mut self.rng, U8_LITS),
            Ty::Bool => if self.p(0.5) { "true" } else { "false" }.to_string(),
        }
    }

    /// A literal of `ty`: unsuffixed only where the context fixes the type.
    fn literal(&mut self, ty: Ty, forced: bool) -> Expr {
        if ty == Ty::Bool {
            let text = self.literal_value(ty);
            return Expr {
                ty,
                typed: true,
                kind: Kind::Lit(text),
            };
        }
        let suffixed = !forced || self.p(0.4);
        let text = if ty.is_float() && suffixed && self.p(0.15) {
            let v = FLOAT_INT_LITS.choose(&mut self.rng).unwrap_or(&"2");
            let sign = if self.p(0.2) { "-" } else { "" };
            format!("{sign}{v}{}", ty.rust())
        } else {
            let v = self.literal_value(ty);
            if suffixed {
                // `1.f32` is a field access, not a literal.
                let v = if v.ends_with('.') { format!("{v}0") } else { v };
                let sep = if self.p(0.1) { "_" } else { "" };
                format!("{v}{sep}{}", ty.rust())
            } else {
                v
            }
        };
        Expr {
            ty,
            typed: suffixed,
            kind: Kind::Lit(text),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stencil_depends_on_seed_and_id_only() {
        assert_eq!(stencil(3, 41), stencil(3, 41));
        assert_ne!(stencil(3, 41).source(false), stencil(3, 42).source(false));
        assert_ne!(stencil(3, 41).source(false), stencil(4, 41).source(false));
    }

    #[test]
    fn generated_stencils_cover_the_grammar() {
        let text: String = (0..300).map(|id| stencil(9, id).source(false)).collect();
        for needle in [
            "match ",
            "if ",
            "let ",
            " as u8",
            " as f64",
            ".mul_add(",
            "::",
            " << ",
            " >> ",
            " % ",
            "&&",
            "||",
            "!",
            "state = ",
            "packed(",
            "boundary = periodic",
            "boundary = clamp",
            "Grid1<",
            "Grid3<",
            "#[derive(Clone, Copy, Debug, Params)]",
            "pub mod consts",
            "-0.0",
            "f32::NAN",
            "u8::MAX",
            "isize",
            "(0)",
            " | ",
            "_ =>",
        ] {
            assert!(text.contains(needle), "no stencil contains `{needle}`");
        }
    }

    #[test]
    fn no_float_min_max_in_divisors() {
        let minmax = |e: &Expr| {
            let mut found = false;
            visit(e, &mut |x| {
                found |= matches!(x.kind, Kind::Call(Func::Min | Func::Max, ..)) && x.ty.is_float()
            });
            found
        };
        for id in 0..500 {
            visit_block(&stencil(6, id).body, &mut |e| match &e.kind {
                Kind::Bin(Op::Div, _, r) if e.ty.is_float() => assert!(!minmax(r), "stencil {id}"),
                Kind::Call(Func::Recip | Func::Atan2 | Func::Powf | Func::Powi, args, _) => {
                    assert!(!args.iter().any(minmax), "stencil {id}")
                }
                _ => {}
            });
        }
    }

    #[test]
    fn transcendental_tails_get_an_ulp_bound() {
        let st = (0..200)
            .map(|id| stencil(5, id))
            .find(|s| matches!(s.tol, Tol::Ulps(_)));
        let st = st.expect("some stencil ends in a transcendental function");
        assert!(st.out.is_float());
        assert!(matches!(st.body.tail.kind, Kind::Call(f, ..) if f.ulp_bound().is_some()));
    }
}
