//! Regressions: what the fuzzer found, one test each (docs/SEMANTICS.md, "Fuzzing the macros").

use super::*;

/// Checks one input as the fuzzer does, on a fuzz thread; the verdict and the expansion's text.
pub(super) fn expands(target: Target, attr: &str, item: &str) -> (Verdict, String) {
    let input = Input::new(target, attr, item);
    on_fuzz_thread(move |progress| {
        progress.start("the regression".into());
        outcome(&input).map(|(v, out)| (v, out.to_string()))
    })
    .unwrap_or_else(|hung| panic!("{hung} hangs"))
    .unwrap_or_else(|broken| panic!("{broken}"))
}

/// `type_name` of a raw identifier gave `R#match`, of `__` nothing, of `_1` `1`: each panicked
/// in `syn::Ident::new` (expand/stencil.rs, expand/element.rs).
#[test]
pub(super) fn item_names_give_a_type_name_or_an_error() {
    let stencil = |name: &str| {
        expands(
            Target::Stencil,
            "",
            &format!("fn {name}(u: &Grid1<f32>) -> f32 {{ u.at(0) }}"),
        )
    };
    let (v, out) = stencil("r#match");
    assert_eq!(v, Verdict::Code, "{out}");
    assert!(out.contains("struct Match"), "{out}");
    for (name, gives) in [("__", "gives nothing"), ("_1", "gives `1`"), ("self_", "gives `Self`")] {
        let (v, out) = stencil(name);
        assert_eq!(v, Verdict::Error, "{out}");
        assert!(out.contains(gives), "{out}");
    }
    let module = |name: &str| {
        format!(
            "mod {name} {{ pub const NODES: [[f64; 1]; 2] = [[-1.0], [1.0]];
               pub fn shape(r: f64) -> [f64; 2] {{ [0.5 * (1.0 - r), 0.5 * (1.0 + r)] }}
               pub fn material(k: &f64) -> [[f64; 1]; 1] {{ [[*k]] }}
               pub fn density(k: &f64) -> f64 {{ *k }} }}"
        )
    };
    let attr = "dim = 1, nodes = 2, operator = diffusion, quadrature = 2";
    let (v, out) = expands(Target::Element, attr, &module("r#yield"));
    assert_eq!(v, Verdict::Code, "{out}");
    assert!(out.contains("struct Yield"), "{out}");
    assert_eq!(expands(Target::Element, attr, &module("__")).0, Verdict::Error);
}

/// 10000 parentheses, a 5000-term sum, 10000 `-`: syn and every stage recurse per level and
/// overflowed the stack (a crash of rustc); now an error at the token past the bound.
#[test]
pub(super) fn deep_nesting_is_an_error() {
    for (kind, n) in [(0, 10000), (1, 5000), (2, 10000), (6, 10000), (12, 5000), (13, 10000)] {
        let input = deep_input(kind, n);
        let (v, out) = expands(input.target, &input.attr, &input.item);
        assert_eq!(v, Verdict::Error, "kind {kind}");
        assert!(out.contains("nests too deeply"), "kind {kind}");
    }
}

/// Printing each level twice made the emitter exponential in the nesting: 100 casts, a
/// right-nested sum and a chain of `&&` over vector masks hung (emit/expr.rs).
#[test]
pub(super) fn nesting_is_emitted_in_linear_time() {
    let casts = deep_input(5, 100);
    assert_eq!(expands(casts.target, &casts.attr, &casts.item).0, Verdict::Code);
    let sum = format!("{}u.at(0, 0){}", "u.at(1, 0) + (".repeat(35), ")".repeat(35));
    let all = vec!["u.at(1, 0) > 0.5"; 35].join(" && ");
    for body in [sum, format!("if {all} {{ 1.0 }} else {{ 0.0 }}")] {
        let (v, out) = expands(Target::Stencil, "", &format!("fn f(u: &Grid<f32>) -> f32 {{ {body} }}"));
        assert_eq!(v, Verdict::Code, "{}", &out[out.len().saturating_sub(300)..]);
    }
}

/// A sweep reading a grid at `i64::MAX` overflowed the strip schedule's ring length (halo x +
/// halo y + 1, render/sweep.rs; fuzz seed 0xc1f05eed case 1321): now saturating, and the
/// expansion is code whose absurd halo the runtime refuses.
#[test]
pub(super) fn sweep_ring_of_an_extreme_halo() {
    let item = "fn f(u: &Sweep3<f64>, f: &Grid3<f64>) -> f64 { u.new(1, 0, 0) * 0.5 + f.at(9223372036854775807, 1_000_000, -1) }";
    let (v, out) = expands(Target::Sweep, "order = backward", item);
    assert!(matches!(v, Verdict::Code | Verdict::Error), "{out}");
}

/// `r.powi(16)` eight times overflowed the `u32` exponents (a panic in `Poly::mul`); with a
/// binomial base it ran for ever. Shape functions now have a bounded degree (parse/element.rs).
#[test]
pub(super) fn shape_degree_is_bounded() {
    let attr = "dim = 1, nodes = 2, operator = diffusion, quadrature = 2";
    for base in ["r", "(1.0 + r)"] {
        let item = format!(
            "mod bar {{ pub const NODES: [[f64; 1]; 2] = [[-1.0], [1.0]];
               pub fn shape(r: f64) -> [f64; 2] {{ [0.5 * (1.0 - r), 0.5 * (1.0 + r) + 0.0 * {base}{}] }}
               pub fn material(k: &f64) -> [[f64; 1]; 1] {{ [[*k]] }}
               pub fn density(k: &f64) -> f64 {{ *k }} }}",
            ".powi(16)".repeat(8)
        );
        let (v, out) = expands(Target::Element, attr, &item);
        assert_eq!(v, Verdict::Error, "{out}");
        assert!(out.contains("degree 24 at most"), "{out}");
    }
}

/// `1e309 * r - 1e309 * r` is `NaN * r`: it passed the interpolation check (NaN compares false)
/// and panicked in `Literal::f64_unsuffixed` (expand/element.rs); now an error at the function.
#[test]
pub(super) fn shape_coefficients_are_finite() {
    let attr = "dim = 1, nodes = 2, operator = diffusion, quadrature = 2";
    for extra in ["1e309 * r - 1e309 * r", "1e309 * (r * r - 1.0)", "1e307 * 100.0 * r"] {
        let item = format!(
            "mod bar {{ pub const NODES: [[f64; 1]; 2] = [[-1.0], [1.0]];
               pub fn shape(r: f64) -> [f64; 2] {{ [0.5 * (1.0 - r) + {extra}, 0.5 * (1.0 + r)] }}
               pub fn material(k: &f64) -> [[f64; 1]; 1] {{ [[*k]] }}
               pub fn density(k: &f64) -> f64 {{ *k }} }}"
        );
        let (v, out) = expands(Target::Element, attr, &item);
        assert_eq!(v, Verdict::Error, "{extra}: {out}");
    }
}

/// Errors spanned on tokens that do not exist fell back to the call site: the fields of a unit
/// struct (parse/params.rs) and the arguments of `.powi()` (parse/element.rs).
#[test]
pub(super) fn errors_have_spans() {
    assert_eq!(expands(Target::Params, "", "pub struct K;").0, Verdict::Error);
    let item = "mod bar { pub const NODES: [[f64; 1]; 2] = [[-1.0], [1.0]];
        pub fn shape(r: f64) -> [f64; 2] { [0.5 * (1.0 - r), 0.5 * (1.0 + r.powi())] }
        pub fn material(k: &f64) -> [[f64; 1]; 1] { [[*k]] }
        pub fn density(k: &f64) -> f64 { *k } }";
    let attr = "dim = 1, nodes = 2, operator = diffusion, quadrature = 2";
    assert_eq!(expands(Target::Element, attr, item).0, Verdict::Error);
}

/// Expansions that did not parse: a kernel parameter named by a keyword (`r#async`, `SELF`)
/// became a launcher parameter `async`, `self` (expand/launch.rs); a `Params` field `_` became
/// `self._`.
#[test]
pub(super) fn generated_names_are_identifiers() {
    let module = |params: &str| {
        format!(
            "mod quad4 {{
                pub const NODES: [[f64; 2]; 4] = [[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]];
                pub fn shape(r: f64, s: f64) -> [f64; 4] {{
                    [0.25 * (1.0 - r) * (1.0 - s), 0.25 * (1.0 + r) * (1.0 - s),
                     0.25 * (1.0 + r) * (1.0 + s), 0.25 * (1.0 - r) * (1.0 + s)]
                }}
                pub fn material(k: &f64) -> [[f64; 2]; 2] {{ [[*k, 0.0], [0.0, *k]] }}
                pub fn density(_k: &f64) -> f64 {{ 1.0 }}
                extern \"OpenCL\" {{ fn strain_energy({params}); }}
            }}"
        )
    };
    let attr = "dim = 2, nodes = 4, operator = diffusion, quadrature = 2, \
                template = \"../examples/templates/strain_energy.cl.tera\"";
    let params = "k: &[f32], elem_nodes: &[i32], u: &[f32], energy: &mut [f32], volume: f32, count: i32";
    for p in ["r#async: i32", "SELF: i32", "Loop: i32"] {
        let (v, out) = expands(Target::Element, attr, &module(&params.replace("count: i32", p)));
        assert_eq!(v, Verdict::Code, "{p}: {out}");
    }
    let (v, out) = expands(Target::Params, "", "pub struct K { pub _: f32 }");
    assert_eq!(v, Verdict::Error, "{out}");
}

/// `template = "/dev/zero"` was read for ever (parse/family.rs); devices and pipes are refused.
#[test]
pub(super) fn templates_are_regular_files() {
    for path in ["/dev/zero", "/dev/stdin", ".."] {
        let attr = format!("dim = 1, nodes = 2, operator = diffusion, quadrature = 2, template = {path:?}");
        let item = "mod bar { pub const NODES: [[f64; 1]; 2] = [[-1.0], [1.0]];
            pub fn shape(r: f64) -> [f64; 2] { [0.5 * (1.0 - r), 0.5 * (1.0 + r)] }
            pub fn material(k: &f64) -> [[f64; 1]; 1] { [[*k]] }
            pub fn density(k: &f64) -> f64 { *k }
            extern \"OpenCL\" { fn k(u: &[f32]); } }";
        let (v, out) = expands(Target::Element, &attr, item);
        assert_eq!(v, Verdict::Error, "{out}");
        assert!(out.contains("not a regular file"), "{out}");
    }
}
