//! Deep nesting: the stack of the pipeline (and of syn) on pathological but lexable input.

use super::*;

/// Kinds of deep input; `DEEP_SIZES` of each are checked by `deep_nesting_is_an_error_not_a_crash`.
pub(super) const DEEP_KINDS: usize = 16;
pub(super) const DEEP_SIZES: &[usize] = &[100, 1000, 5000, 10000];

pub(super) fn deep(rng: &mut SmallRng) -> Input {
    let kind = rng.random_range(0..DEEP_KINDS);
    let n = *[10, 100, 300, 1000, 5000].choose(rng).expect("sizes");
    deep_input(kind, n)
}

pub(super) fn deep_input(kind: usize, n: usize) -> Input {
    let stencil = |body: String| {
        Input::new(
            Target::Stencil,
            "",
            format!("fn f(u: &Grid<f32>, k: &K) -> f32 {{ {body} }}"),
        )
    };
    let element = |shape: String, nodes: String| {
        Input::new(
            Target::Element,
            "dim = 1, nodes = 2, operator = diffusion, quadrature = 2",
            format!(
                "mod bar {{ pub const NODES: [[f64; 1]; 2] = {nodes};
                   pub fn shape(r: f64) -> [f64; 2] {{ {shape} }}
                   pub fn material(k: &f64) -> [[f64; 1]; 1] {{ [[*k]] }}
                   pub fn density(k: &f64) -> f64 {{ *k }} }}"
            ),
        )
    };
    let linear = "[0.5 * (1.0 - r), 0.5 * (1.0 + r)]".to_string();
    let nodes = "[[-1.0], [1.0]]".to_string();
    let rep = |s: &str, n: usize| s.repeat(n);
    match kind {
        0 => stencil(format!("{}u.at(0, 0){}", rep("(", n), rep(")", n))),
        1 => stencil(vec!["u.at(0, 0)"; n].join(" + ")),
        2 => stencil(format!("{}u.at(0, 0)", rep("- ", n))),
        3 => stencil(format!("{}(u.at(0, 0) > 1.0)", rep("!", n)) + " as i32 as f32"),
        4 => stencil(format!("u.at(0, 0){}", rep(".abs()", n))),
        5 => stencil(format!("u.at(0, 0){}", rep(" as f32", n))),
        6 => stencil(format!("{}u.at(0, 0){}", rep("{ ", n), rep(" }", n))),
        7 => stencil(format!(
            "{}u.at(0, 0){}",
            rep("if true { 1.0 } else if false { 2.0 } else { ", n),
            rep(" }", n)
        )),
        8 => stencil(format!("{}0.0{}", rep("match 1 { 0 => 1.0, _ => ", n), rep(" }", n))),
        9 => stencil(
            (0..n)
                .map(|i| format!("let a{i} = a{} + 1.0; ", i.saturating_sub(1)))
                .collect::<String>()
                .replacen("let a0 = a0 + 1.0;", "let a0 = u.at(0, 0);", 1)
                + &format!("a{}", n.saturating_sub(1)),
        ),
        10 => stencil(format!("k{}", rep(".a", n))),
        11 => Input::new(
            Target::Stencil,
            "",
            format!("fn f(u: {}Grid<f32>) -> f32 {{ u.at(0, 0) }}", rep("&", n)),
        ),
        12 => Input::new(
            Target::Stencil,
            "",
            format!(
                "fn f(u: &Grid<{}f32{}>) -> f32 {{ u.at(0, 0) }}",
                rep("Grid<", n),
                rep(">", n)
            ),
        ),
        13 => element(linear, format!("{}{nodes}{}", rep("[", n), rep("]", n))),
        14 => element(
            format!("[0.5 * (1.0 - r), 0.5 * (1.0 + r){}]", rep(" + 0.0 * r", n)),
            nodes,
        ),
        _ => element(
            format!("[0.5 * (1.0 - r), (0.5 * (1.0 + r)){}]", rep(".powi(1)", n)),
            nodes,
        ),
    }
}

#[test]
pub(super) fn deep_nesting_is_an_error_not_a_crash() {
    let broken = on_fuzz_thread(|progress| {
        let mut broken = Vec::new();
        for kind in 0..DEEP_KINDS {
            // The deepest input the bound lets through needs the most stack.
            let accepted = (1..300)
                .rev()
                .find(|&n| {
                    let item = TokenStream::from_str(&deep_input(kind, n).item).expect("lexes");
                    crate::diag::nesting(&item).is_ok()
                })
                .unwrap_or(1);
            for &n in DEEP_SIZES.iter().chain([&accepted]) {
                if std::env::var_os("CLFORGE_FUZZ_TRACE").is_some() {
                    let _ = writeln!(std::io::stderr(), "clforge fuzz: deep kind {kind}, size {n}");
                }
                progress.start(format!("kind {kind}, size {n}"));
                if let Err(what) = check(&deep_input(kind, n)) {
                    broken.push(format!("kind {kind}, size {n}: {what}"));
                }
            }
        }
        broken
    })
    .unwrap_or_else(|hung| panic!("deep input of {hung} hangs: ran for more than {HANG:?}"));
    assert!(broken.is_empty(), "{broken:#?}");
}
