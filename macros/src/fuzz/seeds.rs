//! Seeds: every stencil, element and `Params` struct of the repository, and the cases drawn from them.

use super::*;

pub(super) fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

pub(super) fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs" || e == "md") {
            out.push(p);
        }
    }
}

/// The Rust of a file: the file itself, or the fenced Rust blocks of a markdown file.
pub(super) fn sources(path: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    if path.extension().is_some_and(|e| e == "rs") {
        return vec![text];
    }
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        let fence = line.trim_start().starts_with("```");
        match (&mut current, fence) {
            (None, true) if matches!(line.trim_start()[3..].trim(), "" | "rust" | "rust,ignore" | "ignore") => {
                current = Some(String::new())
            }
            (Some(_), true) => blocks.extend(current.take()),
            (Some(b), false) => {
                b.push_str(line);
                b.push('\n');
            }
            _ => {}
        }
    }
    blocks
}

pub(super) fn seeds() -> Vec<Input> {
    let root = root();
    let mut files = Vec::new();
    for dir in ["tests", "examples", "bench/src", "src", "docs"] {
        rust_files(&root.join(dir), &mut files);
    }
    files.push(root.join("README.md"));
    let mut out = Vec::new();
    for f in &files {
        for text in sources(f) {
            if let Ok(file) = syn::parse_file(&text) {
                items(&file.items, &root, &mut out);
            }
        }
    }
    out.extend(CURATED.iter().map(|(t, a, i)| Input::new(*t, *a, *i)));
    out
}

/// Walks items (modules and function bodies too) for the annotated ones.
pub(super) fn items(list: &[syn::Item], root: &Path, out: &mut Vec<Input>) {
    for item in list {
        let attrs = match item {
            syn::Item::Fn(f) => {
                let inner: Vec<syn::Item> = f
                    .block
                    .stmts
                    .iter()
                    .filter_map(|s| match s {
                        syn::Stmt::Item(i) => Some(i.clone()),
                        _ => None,
                    })
                    .collect();
                items(&inner, root, out);
                &f.attrs
            }
            syn::Item::Mod(m) => {
                if let Some((_, inner)) = &m.content {
                    items(inner, root, out);
                }
                &m.attrs
            }
            syn::Item::Struct(s) => &s.attrs,
            syn::Item::Enum(e) => &e.attrs,
            syn::Item::Union(u) => &u.attrs,
            _ => continue,
        };
        for (i, a) in attrs.iter().enumerate() {
            let last = a
                .path()
                .segments
                .last()
                .map(|s| s.ident.to_string())
                .unwrap_or_default();
            let target = match last.as_str() {
                "stencil" => Target::Stencil,
                "element" => Target::Element,
                "sweep" => Target::Sweep,
                "lattice" => Target::Lattice,
                "derive" if derives_params(a) => Target::Params,
                _ => continue,
            };
            let attr = match &a.meta {
                syn::Meta::List(l) if target != Target::Params => l.tokens.to_string(),
                _ => String::new(),
            };
            let mut item = item.clone();
            if target != Target::Params {
                item_attrs(&mut item).remove(i);
            }
            out.push(Input::new(
                target,
                relocate_templates(&attr, root),
                quote::quote!(#item).to_string(),
            ));
        }
    }
}

/// `#[derive(..., Params, ...)]`, with any path to `Params`.
pub(super) fn derives_params(a: &syn::Attribute) -> bool {
    a.parse_args_with(syn::punctuated::Punctuated::<syn::Path, syn::Token![,]>::parse_terminated)
        .is_ok_and(|paths| {
            paths
                .iter()
                .any(|p| p.segments.last().is_some_and(|s| s.ident == "Params"))
        })
}

pub(super) fn item_attrs(item: &mut syn::Item) -> &mut Vec<syn::Attribute> {
    match item {
        syn::Item::Fn(f) => &mut f.attrs,
        syn::Item::Mod(m) => &mut m.attrs,
        syn::Item::Struct(s) => &mut s.attrs,
        syn::Item::Enum(e) => &mut e.attrs,
        syn::Item::Union(u) => &mut u.attrs,
        _ => unreachable!("only the kinds `items` matched"),
    }
}

/// Template paths are relative to the annotated crate; the fuzzer runs in `macros/`, so a path
/// that names a file of the repository (after any leading `../`) is rewritten to reach it.
pub(super) fn relocate_templates(attr: &str, root: &Path) -> String {
    let Ok(tokens) = TokenStream::from_str(attr) else {
        return attr.to_string();
    };
    tokens
        .into_iter()
        .map(|t| match &t {
            TokenTree::Literal(l) => match syn::parse_str::<syn::LitStr>(&l.to_string()) {
                Ok(s) => {
                    let v = s.value();
                    let rest = v.trim_start_matches("../");
                    if root.join(rest).is_file() {
                        format!("{:?}", format!("../{rest}"))
                    } else {
                        t.to_string()
                    }
                }
                Err(_) => t.to_string(),
            },
            _ => t.to_string(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Inputs the files may not hold: the stage tests' items and the corners of the grammar.
pub(super) const CURATED: &[(Target, &str, &str)] = &[
    (
        Target::Lattice,
        "boundary = fixed",
        "fn walk(s: &Lattice1<f64>, rng: &Draws, k: &Coeffs) -> f64 {
            let u = rng.uniform(2) as f64;
            if rng.draw(0) % 2 == 1 { s.at(1) * k.a + u } else { s.at(-1) - s.at(0) * u }
        }",
    ),
    (
        Target::Lattice,
        "",
        "fn potts(q: &Lattice3<u32>, rng: &Draws, w: &Grid3<f32>, t: u32) -> u32 {
            let same = (q.at(1, 0, 0) == q.at(0, 0, 0)) as u32 + (q.at(0, 0, -1) == q.at(0, 0, 0)) as u32;
            if rng.draw(1) < t && w.at(0, 0, 0) > 0.5 { q.at(0, 1, 0) } else { q.at(0, 0, 0) + same }
        }",
    ),
    (
        Target::Stencil,
        "boundary = periodic",
        "fn f(u: &Grid1<f64>) -> f64 { let h = 0.5; h * (u.at(1) - 2.0 * u.at(0) + u.at(-1)) }",
    ),
    (
        Target::Stencil,
        "",
        "fn jacobi(psi: &Grid<f32>, w: &Grid<f32>, cell: &Grid<u8>, k: &Coeffs) -> f32 {
            match cell.at(0, 0) {
                FLUID => k.a * (psi.at(1, 0) + psi.at(-1, 0)) + k.b * (psi.at(0, 1) + psi.at(0, -1)) + k.c * w.at(0, 0),
                OUTFLOW | 3 => psi.at(-1, 0),
                _ => psi.at(0, 0),
            }
        }",
    ),
    (
        Target::Stencil,
        "boundary = clamp",
        "/// Doc with */ and ψ.
        pub(crate) fn mix(u: &Grid3<f32>, m: &Grid3<u8>, a: f32, n: i32, s: u32) -> f32 {
            let v: f32 = u.at(1, 0, 0).max(u.at(-1, 0, 0)).clamp(0.0, 1.0);
            let w = if m.at(0, 0, 1) == 1 && !(n > 2) { v.mul_add(a, 1e-3) } else { f32::sqrt(v.abs()) };
            let q = ((n << 2) ^ 3 | 1 & 7) as f32 + (s % 4u32) as f32 + (m.at(0, 0, 0) as i32 >> 1) as f32;
            { let z = w.powi(2).recip(); z * q - crate::C + u.at(0, 0, -2).hypot(w).atan2(2.0f32) }
        }",
    ),
    (
        Target::Stencil,
        "",
        "fn count(mask: &Grid<u8>) -> i32 { (mask.at(1, 0) as i32) + (mask.at(0, -1) as i32) % 3 - 7i32 }",
    ),
    (
        Target::Element,
        "dim = 2, nodes = 4, operator = diffusion, quadrature = 2, template = \"../examples/templates/strain_energy.cl.tera\"",
        "mod quad4 {
            pub const NODES: [[f64; 2]; 4] = [[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]];
            pub fn shape(r: f64, s: f64) -> [f64; 4] {
                [0.25 * (1.0 - r) * (1.0 - s), 0.25 * (1.0 + r) * (1.0 - s),
                 0.25 * (1.0 + r) * (1.0 + s), 0.25 * (1.0 - r) * (1.0 + s)]
            }
            pub fn material(k: &f64) -> [[f64; 2]; 2] { [[*k, 0.0], [0.0, *k]] }
            pub fn density(_k: &f64) -> f64 { 1.0 }
            extern \"OpenCL\" {
                fn strain_energy(k: &[f32], elem_nodes: &[i32], u: &[f32], energy: &mut [f32], volume: f32, count: i32);
            }
        }",
    ),
    (
        Target::Element,
        "dim = 1, nodes = 3, operator = diffusion, quadrature = 3",
        "pub mod bar3 {
            pub const NODES: [[f64; 1]; 3] = [[-1.0], [0.0], [1.0]];
            pub fn shape(r: f64) -> [f64; 3] { let a = 0.5 * r; [a * (r - 1.0), 1.0 - r.powi(2), a * (r + 1.0)] }
            pub fn material(k: &f64) -> [[f64; 1]; 1] { [[*k]] }
            pub fn density(k: &f64) -> f64 { *k }
        }",
    ),
    (
        Target::Params,
        "",
        "#[derive(Params)] #[repr(C)] pub struct K { pub a: f32, pub b: f64, pub c: i32, pub d: u32, pub e: u8 }",
    ),
    (Target::Params, "", "struct One { x: f32 }"),
];

// ---------------------------------------------------------------------------------------------
// Cases

/// Case `n` of `seed`: independent of every other case, so that one reruns alone.
pub(super) fn case(seeds: &[Input], seed: u64, n: u64) -> Input {
    let mut rng = SmallRng::seed_from_u64(seed ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    if (n as usize) < seeds.len() {
        return seeds[n as usize].clone();
    }
    let mut input = match rng.random_range(0..100) {
        0..2 => return deep(&mut rng),
        2..45 => {
            let mut s = seeds.choose(&mut rng).expect("seeds").clone();
            let times = 1 + rng.random_range(0..4) * rng.random_range(0..3);
            mutate(&mut s, seeds, times, &mut rng);
            return s;
        }
        45..75 => gen_stencil(&mut rng),
        75..90 => gen_element(&mut rng),
        _ => gen_params(&mut rng),
    };
    if rng.random_bool(0.3) {
        let times = rng.random_range(1..4);
        mutate(&mut input, seeds, times, &mut rng);
    }
    input
}
