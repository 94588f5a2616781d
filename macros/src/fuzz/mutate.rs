//! Token-level mutations of the seeds.

use super::*;

#[derive(Clone)]
pub(super) enum Tok {
    Leaf(TokenTree),
    Group(Delimiter, Vec<Tok>),
}

pub(super) fn toks(ts: TokenStream) -> Vec<Tok> {
    ts.into_iter()
        .map(|t| match t {
            TokenTree::Group(g) => Tok::Group(g.delimiter(), toks(g.stream())),
            other => Tok::Leaf(other),
        })
        .collect()
}

pub(super) fn stream(toks: &[Tok]) -> TokenStream {
    toks.iter()
        .map(|t| match t {
            Tok::Leaf(l) => l.clone(),
            Tok::Group(d, inner) => TokenTree::Group(Group::new(*d, stream(inner))),
        })
        .collect()
}

pub(super) fn lex(s: &str) -> Vec<Tok> {
    toks(TokenStream::from_str(s).unwrap_or_else(|e| panic!("pool entry `{s}` does not lex: {e}")))
}

/// Every token list of the tree (the root and each group's contents), by path.
pub(super) fn lists(toks: &[Tok], path: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
    out.push(path.clone());
    for (i, t) in toks.iter().enumerate() {
        if let Tok::Group(_, inner) = t {
            path.push(i);
            lists(inner, path, out);
            path.pop();
        }
    }
}

pub(super) fn list_mut<'a>(mut toks: &'a mut Vec<Tok>, path: &[usize]) -> &'a mut Vec<Tok> {
    for &i in path {
        match &mut toks[i] {
            Tok::Group(_, inner) => toks = inner,
            Tok::Leaf(_) => unreachable!("paths lead through groups"),
        }
    }
    toks
}

/// Positions (list path, index) of the leaves that `pick` accepts.
pub(super) fn leaves(toks: &[Tok], pick: &dyn Fn(&TokenTree) -> bool) -> Vec<(Vec<usize>, usize)> {
    let mut paths = Vec::new();
    lists(toks, &mut Vec::new(), &mut paths);
    let mut out = Vec::new();
    for p in paths {
        let mut list = toks;
        for &i in &p {
            if let Tok::Group(_, inner) = &list[i] {
                list = inner;
            }
        }
        for (i, t) in list.iter().enumerate() {
            if let Tok::Leaf(l) = t {
                if pick(l) {
                    out.push((p.clone(), i));
                }
            }
        }
    }
    out
}

/// Identifiers a mutation puts in place of one: keywords, raw identifiers, OpenCL keywords and
/// builtins, names the generated OpenCL and Rust use, non-ASCII and odd names.
#[rustfmt::skip]
pub(super) const IDENTS: &[&str] = &[
    "fn", "let", "match", "if", "else", "as", "mut", "ref", "self", "Self", "super", "crate", "async", "await",
    "dyn", "impl", "move", "return", "loop", "for", "while", "in", "where", "type", "struct", "enum", "static",
    "const", "pub", "unsafe", "extern", "true", "false", "_", "r#yield", "r#match", "r#fn", "r#type", "r#async",
    "r#try", "r#u", "r#f32", "r#at", "r#abs", "r#Grid", "local", "global", "kernel", "half", "constant", "floor",
    "private", "float", "double", "int", "uint", "uchar", "sqrt", "select", "read_only", "restrict", "__kernel",
    "get_global_id", "__local", "real", "real8", "HX", "HY", "UX", "INTERIOR", "AT", "WRAP", "LOAD", "TILE_X",
    "STEPS", "DIM", "NODES", "ND", "c", "x", "y", "z", "t", "nx", "ny", "out_arg", "t_u", "k_", "match0", "p",
    "out", "shape", "config", "plan", "device", "params", "coords", "bytes", "decl", "spec", "source", "launch",
    "dshape", "material", "density", "thickness", "at", "abs", "powi", "powf", "mul_add", "clamp", "recip", "f32",
    "f64", "u8", "i32", "u32", "bool", "usize", "f16", "Grid", "Grid1", "Grid2", "Grid3", "Grid4", "Coeffs", "ψ",
    "δx", "ñ", "Ω", "_u", "__", "_1", "a1", "A", "ZZ", "x_p1", "u_1", "compile", "core", "std", "clforge",
];

/// Literals a mutation puts in place of one: extremes of every numeric form.
#[rustfmt::skip]
pub(super) const LITERALS: &[&str] = &[
    "1e39", "1e-46", "0.0", "-0.0", "18446744073709551616", "255u8", "256u8", "4294967296u32", "1_000_000_000.25",
    "0x7fffffff", "0xffffffffu32", "0b1010", "0o777", "2147483647", "2147483648", "-2147483648",
    "9223372036854775807", "340282366920938463463374607431768211456", "1e308", "1e309f64", "3.4e38f32", "1f32",
    "2f64", "1.", "1E5", "0.1e-1_0", "7i64", "3usize", "1.5f16", "0", "1", "-1", "2", "16", "17", "'c'", "\"s\"",
    "b'x'", "b\"x\"", "r\"*/\"", "\"*/ ψ\"", "true", "false", "1u128", "1e", "0.", "1_f32",
];

/// Punctuation and short sequences a mutation puts in place of one.
#[rustfmt::skip]
pub(super) const PUNCTS: &[&str] = &[
    "+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", "==", "!=", "<", ">", "<=", ">=", "&&", "||", "!", "?", ":",
    ";", ",", ".", "..", "..=", "=", "+=", "@", "#", "$", "~", "::", "->", "=>", "'a", "&mut", "as f32", "as u8",
];

/// Fragments a mutation inserts: pieces of the grammar, doc comments, items.
pub(super) const SNIPPETS: &[&str] = &[
    ".at(0, 0)",
    ".at(2147483647, 0)",
    ".at(-2147483648, 1)",
    ".at(9223372036854775807)",
    ".at(1, 2, 3, 4)",
    "as f32",
    "let x = 1.0;",
    "let c: u8 = 3;",
    "match u.at(0, 0) { 1 => 1.0, _ => 0.0 }",
    "if true { 1.0 } else { 0.0 }",
    "#[doc = \"*/ /* ψ \\u{7f}\"]",
    "/// */ ψ */",
    "/** */ */",
    "#[cfg(any())]",
    "#[inline]",
    "..",
    "::",
    "<f32>",
    "&mut",
    "extern \"OpenCL\" { fn k(u: &[f32], out: &mut [f32], n: i32); }",
    "extern \"OpenCL\" { fn r#yield(r#loop: &[f32]); }",
    "extern \"C\" { fn k(); }",
    "self",
    "?",
    ".await",
    "async {}",
    "unsafe { 1.0 }",
    "|x| x",
    "[1; 3]",
    "(1, 2)",
    "x[0]",
    "loop {}",
    "return 1.0",
    "const _: () = ();",
    "fn dshape() {}",
    "pub fn thickness(m: &f64) -> f64 { 1.0 }",
    "pub const NODES: [[f64; 2]; 1] = [[2.0, 0.0]];",
    "pub fn shape(r: f64) -> [f64; 1] { [1.0] }",
    "u.at(0, 0).powi(16).powi(16)",
    "r.powi(16).powi(16).powi(16)",
    "(1.0 + r).powi(16).powi(16).powi(16).powi(16).powi(16).powi(16).powi(16).powi(16)",
    "(r + s + t + 1.0).powi(16).powi(16)",
    "(1e309 * r - 1e309 * r)",
    "1e308 * 1e308 * (r * r - 1.0)",
    "1e307 * r.powi(16)",
    "f32::sqrt(1.0)",
    "f64::mul_add(1.0, 2.0, 3.0)",
    "k.0",
    "k.a.b",
    "std::f32::consts::PI",
    "<Self as T>::X",
    "1 ..= 2",
    "Some(x)",
    "x @ 1",
    "ref x",
    "mut x",
    "'a: loop {}",
    "'static",
    "dyn T",
    "impl T",
    "fn(f32) -> f32",
    "[f64; 18446744073709551616]",
    "[[f64; 0]; 0]",
    "&&Grid<f32>",
    "Grid<f32, f32>",
    "Grid<'a, f32>",
    "Grid<N = f32>",
    "Grid<{ 1 + 1 }>",
    "Grid::<f32>",
    "<Grid<f32> as T>::U",
];

/// Whole attributes, right and wrong.
pub(super) const STENCIL_ATTRS: &[&str] = &[
    "",
    "boundary = fixed",
    "boundary = periodic",
    "boundary = clamp",
    "boundary = banana",
    "boundary = periodic, boundary = clamp",
    "boundary",
    "boundary =",
    "= periodic",
    "boundary = \"periodic\"",
    "boundary = r#periodic",
    "r#boundary = clamp",
    "boundary = periodic,",
    ",",
    "foo = bar",
    "boundary = periodic extra",
    "boundary: periodic",
    "(boundary = periodic)",
    "boundary = 1",
    "boundary = self",
    "boundary = ψ",
    "state = u",
    "state = psi",
    "state = k",
    "state = banana",
    "state = r#u",
    "state = 1",
    "boundary = periodic, state = u",
    "state = u, state = v",
    "state = u, boundary = clamp",
];

pub(super) fn element_attr(rng: &mut SmallRng) -> String {
    let dim = [
        "1",
        "2",
        "3",
        "0",
        "4",
        "7",
        "-1",
        "2.0",
        "\"2\"",
        "18446744073709551616",
        "1e3",
        "0x2",
        "2usize",
        "2_i8",
    ];
    let nodes = ["2", "3", "4", "8", "9", "27", "0", "1", "64", "65", "1000000", "-4"];
    let quadrature = ["1", "2", "3", "6", "0", "7", "100000", "4294967296"];
    let operator = [
        "plane_stress",
        "plane_strain",
        "elasticity",
        "diffusion",
        "banana",
        "r#diffusion",
        "\"diffusion\"",
        "1",
    ];
    let dofs = ["1", "2", "3", "0", "6", "65"];
    let template = [
        "\"nope.tera\"",
        "\"\"",
        "\".\"",
        "\"..\"",
        "\"/\"",
        "\"../examples/templates/strain_energy.cl.tera\"",
        "\"../Cargo.toml\"",
        "\"/dev/zero\"",
        "\"/dev/stdin\"",
        "\"../tests/ui/template/templates/syntax_error.cl.tera\"",
        "\"../tests/ui/template/templates/unknown_field.cl.tera\"",
        "r\"../examples/templates/strain_energy.cl.tera\"",
        "b\"x\"",
        "strain_energy",
    ];
    let mut parts: Vec<String> = Vec::new();
    let mut kv = |key: &str, values: &[&str], rng: &mut SmallRng| {
        let v = if rng.random_bool(0.8) {
            values[..values.len().min(4)].choose(rng)
        } else {
            values.choose(rng)
        };
        parts.push(format!("{key} = {}", v.expect("values")));
    };
    for (key, values, p) in [
        ("dim", &dim[..], 0.95),
        ("nodes", &nodes[..], 0.95),
        ("operator", &operator[..], 0.95),
        ("quadrature", &quadrature[..], 0.95),
        ("dofs", &dofs[..], 0.2),
        ("template", &template[..], 0.1),
        ("banana", &dim[..], 0.02),
        ("dim", &dim[..], 0.02),
    ] {
        if rng.random_bool(p) {
            kv(key, values, rng);
        }
    }
    parts.shuffle(rng);
    parts.join(", ")
}

/// Applies `times` random mutations, to the item mostly and the attribute sometimes, and keeps
/// the result only if it still lexes (rustc would not call the macro otherwise).
pub(super) fn mutate(input: &mut Input, seeds: &[Input], times: usize, rng: &mut SmallRng) {
    for _ in 0..times {
        if input.target != Target::Params && rng.random_bool(0.12) {
            input.attr = match input.target {
                Target::Stencil if rng.random_bool(0.6) => STENCIL_ATTRS.choose(rng).expect("attrs").to_string(),
                Target::Element if rng.random_bool(0.6) => element_attr(rng),
                _ => mutate_text(&input.attr, seeds, rng),
            };
        } else {
            input.item = mutate_text(&input.item, seeds, rng);
        }
    }
}

pub(super) fn mutate_text(text: &str, seeds: &[Input], rng: &mut SmallRng) -> String {
    let Ok(ts) = TokenStream::from_str(text) else {
        return text.to_string();
    };
    let mut root = toks(ts);
    mutate_tokens(&mut root, seeds, rng);
    let out = stream(&root).to_string();
    if TokenStream::from_str(&out).is_ok() {
        out
    } else {
        text.to_string()
    }
}

pub(super) fn mutate_tokens(root: &mut Vec<Tok>, seeds: &[Input], rng: &mut SmallRng) {
    let mut paths = Vec::new();
    lists(root, &mut Vec::new(), &mut paths);
    let path = paths.choose(rng).expect("the root").clone();
    let pick_leaf = |root: &mut Vec<Tok>, rng: &mut SmallRng, pred: &dyn Fn(&TokenTree) -> bool| {
        let found = leaves(root, pred);
        found.choose(rng).cloned()
    };
    let op = rng.random_range(0..16);
    match op {
        // Replace an identifier.
        0..3 => {
            if let Some((p, i)) = pick_leaf(root, rng, &|t| matches!(t, TokenTree::Ident(_))) {
                let new = lex(IDENTS.choose(rng).expect("idents"));
                list_mut(root, &p).splice(i..=i, new);
            }
        }
        // Replace a literal.
        3 | 4 => {
            if let Some((p, i)) = pick_leaf(root, rng, &|t| matches!(t, TokenTree::Literal(_))) {
                let new = lex(LITERALS.choose(rng).expect("literals"));
                list_mut(root, &p).splice(i..=i, new);
            }
        }
        // Replace a punctuation.
        5 => {
            if let Some((p, i)) = pick_leaf(root, rng, &|t| matches!(t, TokenTree::Punct(_))) {
                let new = lex(PUNCTS.choose(rng).expect("puncts"));
                list_mut(root, &p).splice(i..=i, new);
            }
        }
        // New offsets for a read: `at(...)`.
        6 => new_offsets(root, rng),
        _ => {
            let list = list_mut(root, &path);
            if list.is_empty() {
                list.extend(lex(SNIPPETS.choose(rng).expect("snippets")));
                return;
            }
            let i = rng.random_range(0..list.len());
            match op {
                7 => {
                    list.remove(i);
                }
                8 => {
                    let t = list[i].clone();
                    list.insert(i, t);
                }
                9 => {
                    let j = if rng.random_bool(0.5) {
                        (i + 1).min(list.len() - 1)
                    } else {
                        rng.random_range(0..list.len())
                    };
                    list.swap(i, j);
                }
                // Wrap a run of tokens in groups.
                10 => {
                    let j = rng.random_range(i..list.len()) + 1;
                    let mut inner: Vec<Tok> = list.drain(i..j).collect();
                    let delim = *[
                        Delimiter::Parenthesis,
                        Delimiter::Bracket,
                        Delimiter::Brace,
                        Delimiter::None,
                    ]
                    .choose(rng)
                    .expect("delims");
                    for _ in 0..rng.random_range(1..8) {
                        inner = vec![Tok::Group(delim, inner)];
                    }
                    list.splice(i..i, inner);
                }
                // Unwrap a group, or change its delimiter.
                11 => {
                    if let Tok::Group(d, inner) = list[i].clone() {
                        if rng.random_bool(0.5) {
                            list.splice(i..=i, inner);
                        } else {
                            let new = *[
                                Delimiter::Parenthesis,
                                Delimiter::Bracket,
                                Delimiter::Brace,
                                Delimiter::None,
                            ]
                            .iter()
                            .find(|x| **x != d)
                            .expect("another delimiter");
                            list[i] = Tok::Group(new, inner);
                        }
                    }
                }
                // Insert a fragment.
                12 | 13 => {
                    let new = lex(SNIPPETS.choose(rng).expect("snippets"));
                    list.splice(i..i, new);
                }
                // Cross over: a piece of another seed.
                _ => {
                    let other = seeds.choose(rng).expect("seeds");
                    if let Ok(ts) = TokenStream::from_str(&other.item) {
                        let other = toks(ts);
                        let mut paths = Vec::new();
                        lists(&other, &mut Vec::new(), &mut paths);
                        let p = paths.choose(rng).expect("the root");
                        let mut src = &other;
                        for &k in p {
                            if let Tok::Group(_, inner) = &src[k] {
                                src = inner;
                            }
                        }
                        if !src.is_empty() {
                            let a = rng.random_range(0..src.len());
                            let b = rng.random_range(a..src.len().min(a + 6)) + 1;
                            let take = if rng.random_bool(0.5) { i..i + 1 } else { i..i };
                            list.splice(take, src[a..b].iter().cloned());
                        }
                    }
                }
            }
        }
    }
}

/// New offsets for a read `at(...)`: the same number mostly, extremes of every form.
fn new_offsets(root: &mut Vec<Tok>, rng: &mut SmallRng) {
    let at = leaves(root, &|t| matches!(t, TokenTree::Ident(id) if id == "at"));
    if let Some((p, i)) = at.choose(rng).cloned() {
        let list = list_mut(root, &p);
        if let Some(Tok::Group(Delimiter::Parenthesis, args)) = list.get_mut(i + 1) {
            let offsets = [
                "0",
                "1",
                "-1",
                "3",
                "-7",
                "2147483647",
                "-2147483648",
                "9223372036854775807",
                "-9223372036854775807",
                "18446744073709551615",
                "4294967296",
                "1_000_000",
                "(-(-2))",
                "0u8",
                "1.0",
                "i",
            ];
            let n = if rng.random_bool(0.8) {
                args.iter().filter(|t| is_comma(t)).count() + 1
            } else {
                rng.random_range(0..5)
            };
            let text: Vec<&str> = (0..n).map(|_| *offsets.choose(rng).expect("offsets")).collect();
            *args = lex(&text.join(", "));
        }
    }
}

pub(super) fn is_comma(t: &Tok) -> bool {
    matches!(t, Tok::Leaf(TokenTree::Punct(p)) if p.as_char() == ',')
}
