//! Generators: stencils from their grammar, and the names and literals every generator draws.

use super::*;

#[rustfmt::skip]
pub(super) const NAMES: &[&str] = &[
    "u", "v", "w", "psi", "mask", "cell", "k", "alpha", "beta", "h", "dt", "phi", "rho", "temp", "flux",
];

/// A name for an argument or a binding: ordinary mostly, else one that collides with the
/// generated code, a keyword of OpenCL or a raw identifier.
pub(super) fn name(rng: &mut SmallRng) -> String {
    if rng.random_bool(0.85) {
        NAMES.choose(rng).expect("names").to_string()
    } else {
        let odd = [
            "x", "c", "t", "out", "nx", "HX", "AT", "float", "local", "global", "kernel", "half", "constant", "floor",
            "p", "shape", "config", "plan", "r#yield", "r#match", "r#u", "ψ", "_u", "u_1", "x_p1", "t_u", "match0",
            "select", "WRAP", "i", "row", "lane", "sqrt", "s_cur", "k_", "TILE_X", "int", "uchar", "_",
        ];
        odd.choose(rng).expect("odd").to_string()
    }
}

pub(super) fn fn_name(rng: &mut SmallRng) -> String {
    let names = [
        "jacobi", "heat", "smooth", "f", "step_2d", "a_b_", "__", "_1", "_x", "r#yield", "r#match", "ψ_step", "Jacobi",
        "x", "kernel", "local", "out", "plan", "source", "heat_", "_", "AT", "z9",
    ];
    if rng.random_bool(0.9) {
        names[..6].choose(rng).expect("names").to_string()
    } else {
        names.choose(rng).expect("names").to_string()
    }
}

pub(super) const SCALARS: &[&str] = &["f32", "f64", "u8", "i32", "u32"];

pub(super) fn int_lit(rng: &mut SmallRng) -> String {
    let lits = [
        "0",
        "1",
        "2",
        "3",
        "42",
        "255u8",
        "7u32",
        "1i32",
        "3f32",
        "2f64",
        "0x7fffffff",
        "0b1010",
        "0o17",
        "1_000",
        "2147483648",
        "4294967296u32",
        "18446744073709551616",
        "256u8",
        "-1",
    ];
    if rng.random_bool(0.7) {
        lits[..4].choose(rng)
    } else {
        lits.choose(rng)
    }
    .expect("lits")
    .to_string()
}

pub(super) fn float_lit(rng: &mut SmallRng) -> String {
    let lits = [
        "0.5",
        "1.0",
        "2.0",
        "0.25",
        "1.",
        "1e10",
        "1.5e-3",
        "2.0f64",
        "0.5f32",
        "1e39",
        "1e-46",
        "0.0",
        "1_000_000_000.25",
        "1e308f32",
        "1E5",
        "6.02214076e23",
        "3.4028235e38",
    ];
    if rng.random_bool(0.7) {
        lits[..4].choose(rng)
    } else {
        lits.choose(rng)
    }
    .expect("lits")
    .to_string()
}

pub(super) struct StencilGen<'a> {
    rng: &'a mut SmallRng,
    rank: usize,
    grids: Vec<String>,
    scalars: Vec<String>,
    params: Vec<String>,
    locals: Vec<String>,
}

pub(super) const METHODS: &[(&str, usize)] = &[
    ("abs", 0),
    ("sqrt", 0),
    ("cbrt", 0),
    ("exp", 0),
    ("ln", 0),
    ("log10", 0),
    ("log2", 0),
    ("sin", 0),
    ("cos", 0),
    ("tan", 0),
    ("tanh", 0),
    ("atan", 0),
    ("atan2", 1),
    ("hypot", 1),
    ("powf", 1),
    ("powi", 1),
    ("min", 1),
    ("max", 1),
    ("floor", 0),
    ("ceil", 0),
    ("round", 0),
    ("mul_add", 2),
    ("clamp", 2),
    ("recip", 0),
    ("signum", 0),
    ("to_bits", 0),
    ("at", 2),
];

impl StencilGen<'_> {
    fn offsets(&mut self) -> String {
        let n = if self.rng.random_bool(0.95) {
            self.rank
        } else {
            self.rng.random_range(0..5)
        };
        (0..n)
            .map(|_| {
                if self.rng.random_bool(0.9) {
                    self.rng.random_range(-3i32..=3).to_string()
                } else {
                    [
                        "2147483647",
                        "-2147483648",
                        "i",
                        "1.5",
                        "(1)",
                        "-(2)",
                        "9223372036854775807",
                        "1u8",
                    ]
                    .choose(self.rng)
                    .expect("offsets")
                    .to_string()
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn leaf(&mut self) -> String {
        match self.rng.random_range(0..10) {
            0 | 1 if !self.grids.is_empty() => {
                let g = self.grids.choose(self.rng).expect("grids").clone();
                format!("{g}.at({})", self.offsets())
            }
            2 if !self.scalars.is_empty() => self.scalars.choose(self.rng).expect("scalars").clone(),
            3 if !self.params.is_empty() => {
                let p = self.params.choose(self.rng).expect("params").clone();
                let m = ["a", "b", "c", "0", "r#type"].choose(self.rng).expect("members");
                format!("{p}.{m}")
            }
            4 if !self.locals.is_empty() => self.locals.choose(self.rng).expect("locals").clone(),
            5 => [
                "FLUID",
                "crate::C",
                "f32::MAX",
                "std::f32::consts::PI",
                "Self::X",
                "B",
                "u8::MAX",
            ]
            .choose(self.rng)
            .expect("consts")
            .to_string(),
            6 => ["true", "false"].choose(self.rng).expect("bools").to_string(),
            7 => int_lit(self.rng),
            _ => float_lit(self.rng),
        }
    }

    fn expr(&mut self, depth: usize) -> String {
        if depth == 0 {
            return self.leaf();
        }
        let d = depth - 1;
        // 20: an expression the DSL rejects, rarely, so that most bodies reach the back end.
        let pick = match self.rng.random_range(0..100) {
            0 => 20,
            n => n % 20,
        };
        match pick {
            0..4 => self.leaf(),
            4 => format!("-{}", self.expr(d)),
            5 => format!("!{}", self.expr(d)),
            6..10 => {
                let ops = [
                    "+", "-", "*", "/", "%", "&&", "||", "&", "|", "^", "<<", ">>", "==", "!=", "<", "<=", ">", ">=",
                ];
                let op = if self.rng.random_bool(0.7) {
                    ops[..4].choose(self.rng)
                } else {
                    ops.choose(self.rng)
                };
                format!("{} {} {}", self.expr(d), op.expect("ops"), self.expr(d))
            }
            10 => format!("({})", self.expr(d)),
            11 => {
                let t = ["f32", "f64", "i32", "u32", "u8", "bool", "f16", "usize"];
                let t = if self.rng.random_bool(0.8) {
                    t[..5].choose(self.rng)
                } else {
                    t.choose(self.rng)
                };
                format!("({}) as {}", self.expr(d), t.expect("types"))
            }
            12 | 13 => {
                let (m, n) = *METHODS.choose(self.rng).expect("methods");
                let n = if self.rng.random_bool(0.9) {
                    n
                } else {
                    self.rng.random_range(0..4)
                };
                let args: Vec<String> = (0..n).map(|_| self.expr(d)).collect();
                format!("({}).{m}({})", self.expr(d), args.join(", "))
            }
            14 => {
                let (m, n) = *METHODS.choose(self.rng).expect("methods");
                let ty = ["f32", "f64", "i32", "Self", "foo", "std::f32"]
                    .choose(self.rng)
                    .expect("types");
                let args: Vec<String> = (0..=n).map(|_| self.expr(d)).collect();
                format!("{ty}::{m}({})", args.join(", "))
            }
            15 | 16 => {
                let els = if self.rng.random_bool(0.95) {
                    if self.rng.random_bool(0.3) {
                        format!(
                            " else if {} {{ {} }} else {{ {} }}",
                            self.expr(d),
                            self.expr(d),
                            self.expr(d)
                        )
                    } else {
                        format!(" else {{ {} }}", self.expr(d))
                    }
                } else {
                    String::new()
                };
                format!("if {} {{ {} }}{els}", self.expr(d), self.block(d))
            }
            17 | 18 => {
                let grid = self
                    .grids
                    .choose(self.rng)
                    .cloned()
                    .filter(|_| self.rng.random_bool(0.7));
                let scrut = match grid {
                    Some(g) => format!("{g}.at({})", self.offsets()),
                    None => self.expr(d),
                };
                let mut arms = Vec::new();
                for _ in 0..self.rng.random_range(0..4) {
                    let pats = [
                        "0",
                        "1",
                        "2 | 3",
                        "FLUID",
                        "OUTFLOW | BODY",
                        "crate::X",
                        "255u8",
                        "-1",
                        "1..=3",
                        "x",
                        "Some(x)",
                        "(1)",
                        "ref y",
                        "1.5",
                    ];
                    let pat = if self.rng.random_bool(0.8) {
                        pats[..7].choose(self.rng)
                    } else {
                        pats.choose(self.rng)
                    };
                    let guard = if self.rng.random_bool(0.03) { " if true" } else { "" };
                    arms.push(format!("{}{guard} => {},", pat.expect("pats"), self.expr(d)));
                }
                if self.rng.random_bool(0.9) {
                    arms.push(format!("_ => {},", self.expr(d)));
                }
                format!("match {scrut} {{ {} }}", arms.join(" "))
            }
            19 => format!("{{ {} }}", self.block(d)),
            20 => {
                let bad = [
                    "u[0]",
                    "loop { break 1.0 }",
                    "for i in 0..3 {}",
                    "x = 1.0",
                    "return 1.0",
                    "|a| a",
                    "vec![1.0]",
                    "\"s\"",
                    "'c'",
                    "*k",
                    "&u",
                    "(1.0, 2.0)",
                    "[1.0; 2]",
                    "async { 1.0 }",
                    "u.at::<f32>(0, 0)",
                    "k.a.b",
                    "k.0",
                    "u.at(0, 0)?",
                    "u.at(0, 0).abs::<f32>()",
                    "(u).at(0, 0)",
                    "foo.at(0, 0)",
                    "Grid::at(u, 0, 0)",
                ];
                bad.choose(self.rng).expect("bad").to_string()
            }
            _ => self.expr(d),
        }
    }

    /// `let`s and a tail.
    fn block(&mut self, depth: usize) -> String {
        let saved = self.locals.len();
        let mut out = String::new();
        for _ in 0..self.rng.random_range(0..3) {
            let n = name(self.rng);
            let ty = if self.rng.random_bool(0.3) {
                format!(
                    ": {}",
                    ["f32", "f64", "i32", "u32", "u8", "bool", "Foo"]
                        .choose(self.rng)
                        .expect("types")
                )
            } else {
                String::new()
            };
            let pat = if self.rng.random_bool(0.98) {
                n.clone()
            } else {
                format!("(mut {n})")
            };
            let value = self.expr(depth);
            out += &format!("let {pat}{ty} = {value}; ");
            self.locals.push(n);
        }
        out += &self.expr(depth);
        self.locals.truncate(saved);
        out
    }
}

pub(super) fn gen_stencil(rng: &mut SmallRng) -> Input {
    let rank = if rng.random_bool(0.9) {
        rng.random_range(1..=3)
    } else {
        rng.random_range(0..5)
    };
    let grid_ty = |rng: &mut SmallRng, r: usize| {
        let name = match r {
            2 if rng.random_bool(0.5) => "Grid".to_string(),
            r => format!("Grid{r}"),
        };
        let elem = if rng.random_bool(0.95) {
            SCALARS.choose(rng).expect("scalars").to_string()
        } else {
            ["bool", "f16", "Vec<f32>", "", "f32, f32", "'a, f32"]
                .choose(rng)
                .expect("elems")
                .to_string()
        };
        let path = ["", "", "", "clforge::", "crate::"].choose(rng).expect("paths");
        format!("&{path}{name}<{elem}>")
    };
    let mut g = StencilGen {
        rng,
        rank,
        grids: Vec::new(),
        scalars: Vec::new(),
        params: Vec::new(),
        locals: Vec::new(),
    };
    let mut args = Vec::new();
    let n_args = g.rng.random_range(1..=5);
    for i in 0..n_args {
        let n = name(g.rng);
        let kind = if i == 0 { 0 } else { g.rng.random_range(0..100) };
        let ty = match kind {
            0..65 => {
                let r = if g.rng.random_bool(0.99) {
                    rank
                } else {
                    g.rng.random_range(1..4)
                };
                g.grids.push(n.clone());
                grid_ty(g.rng, r)
            }
            65..85 => {
                g.scalars.push(n.clone());
                let tys = ["f32", "f64", "i32", "u32", "u8", "bool"];
                let tys = if g.rng.random_bool(0.9) { &tys[..4] } else { &tys[..] };
                tys.choose(g.rng).expect("scalars").to_string()
            }
            85..97 => {
                g.params.push(n.clone());
                let tys = [
                    "&Coeffs",
                    "&crate::K",
                    "&super::P<f32>",
                    "&Self",
                    "&mut Coeffs",
                    "Coeffs",
                ];
                let tys = if g.rng.random_bool(0.9) { &tys[..3] } else { &tys[..] };
                tys.choose(g.rng).expect("params").to_string()
            }
            _ => [
                "&[f32]",
                "&Grid<f32>",
                "impl Fn()",
                "(f32, f32)",
                "&&Grid<f32>",
                "*const f32",
            ]
            .choose(g.rng)
            .expect("odd")
            .to_string(),
        };
        let pat = if g.rng.random_bool(0.99) {
            n
        } else {
            ["mut u", "_", "(a, b)", "ref u", "self"]
                .choose(g.rng)
                .expect("pats")
                .to_string()
        };
        args.push(format!("{pat}: {ty}"));
    }
    let out = if g.rng.random_bool(0.9) {
        format!(
            " -> {}",
            ["f32", "f64", "i32", "u32", "u8"].choose(g.rng).expect("outs")
        )
    } else {
        [" -> bool", "", " -> ()", " -> Grid<f32>", " -> impl Sized", " -> f16"]
            .choose(g.rng)
            .expect("outs")
            .to_string()
    };
    let depth = g.rng.random_range(1..5);
    let body = g.block(depth);
    let vis = ["", "pub ", "pub(crate) ", "pub(super) "].choose(g.rng).expect("vis");
    let extra = if g.rng.random_bool(0.05) {
        ["async ", "const ", "unsafe ", "extern \"C\" "]
            .choose(g.rng)
            .expect("qualifiers")
            .to_string()
    } else {
        String::new()
    };
    let generics = if g.rng.random_bool(0.03) { "<T>" } else { "" };
    let doc = if g.rng.random_bool(0.2) {
        [
            "/// A doc with */ in it.\n",
            "/** ψ */\n",
            "#[doc = \"\\u{0}\"]\n",
            "#[inline]\n",
            "/// \n",
        ]
        .choose(g.rng)
        .expect("docs")
        .to_string()
    } else {
        String::new()
    };
    let fname = fn_name(g.rng);
    let mut attr = STENCIL_ATTRS[..4].choose(g.rng).expect("attrs").to_string();
    if g.rng.random_bool(0.2) {
        let grid = g.grids.choose(g.rng).cloned().unwrap_or_else(|| "u".into());
        let sep = if attr.is_empty() { "" } else { ", " };
        attr = format!("{attr}{sep}state = {grid}");
    }
    Input::new(
        Target::Stencil,
        attr,
        format!(
            "{doc}{vis}{extra}fn {fname}{generics}({}){out} {{ {body} }}",
            args.join(", ")
        ),
    )
}
