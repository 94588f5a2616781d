//! STAGE views -> Tera -> OpenCL source. One view module per kind (`stencil.rs`,
//! `element.rs`) holding data only; the views are the templates' contract. Built-in templates
//! are embedded; a failure in one is a bug in clforge, reported with its whole cause chain.

pub mod element;
pub mod lattice;
pub mod stencil;
pub mod sweep;

use crate::ir::{Extension, Part, Sources};
use serde::Serialize;
use std::sync::OnceLock;

/// The built-in templates, embedded at build time: `common/` components shared by every family,
/// then one directory per kind.
const BUILTIN: [(&str, &str); 8] = [
    (
        "common/components.cl.tera",
        include_str!("../../../templates/common/components.cl.tera"),
    ),
    (
        "stencil/stencil.cl.tera",
        include_str!("../../../templates/stencil/stencil.cl.tera"),
    ),
    (
        "sweep/sweep.cl.tera",
        include_str!("../../../templates/sweep/sweep.cl.tera"),
    ),
    (
        "element/element.cl.tera",
        include_str!("../../../templates/element/element.cl.tera"),
    ),
    (
        "element/forming.cl.tera",
        include_str!("../../../templates/element/forming.cl.tera"),
    ),
    (
        "lattice/philox.cl",
        include_str!("../../../templates/lattice/philox.cl"),
    ),
    (
        "lattice/lattice.cl.tera",
        include_str!("../../../templates/lattice/lattice.cl.tera"),
    ),
    (
        "lattice/packed.cl.tera",
        include_str!("../../../templates/lattice/packed.cl.tera"),
    ),
];

/// Where the generated source is completed at run time with Rust values (params struct
/// declarations, constants' `#define`s), and where `#line` returns to the generated file.
/// [`sources`] cuts the rendered text at these lines into typed parts; nothing reads them later.
const PARAMS_MARKER: &str = "//@clforge:params";
const CONSTANTS_MARKER: &str = "//@clforge:constants";
const LINE_MARKER: &str = "#line RESET";

/// A program's rendered `text`, cut at its marker lines once, and its second program if any.
pub fn sources(text: String, forming: Option<String>) -> Sources {
    let mut parts = Vec::new();
    let mut chunk = String::new();
    for line in text.split_inclusive('\n') {
        let marker = match line.trim() {
            PARAMS_MARKER => Some(Part::Params),
            CONSTANTS_MARKER => Some(Part::Constants),
            LINE_MARKER => Some(Part::LineHere),
            _ => None,
        };
        match marker {
            Some(m) => {
                if !chunk.is_empty() {
                    parts.push(Part::Text(std::mem::take(&mut chunk)));
                }
                parts.push(m);
            }
            None => chunk.push_str(line),
        }
    }
    if !chunk.is_empty() {
        parts.push(Part::Text(chunk));
    }
    Sources { text, parts, forming }
}

fn tera() -> Result<&'static tera::Tera, String> {
    static TERA: OnceLock<Result<tera::Tera, String>> = OnceLock::new();
    TERA.get_or_init(|| {
        let mut t = tera::Tera::new();
        t.autoescape_on(Vec::<&str>::new());
        for (name, text) in BUILTIN {
            t.add_raw_template(name, text)
                .map_err(|e| format!("template `{name}`: {}", error_chain(&e)))?;
        }
        Ok(t)
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// Why rendering failed: a bug in clforge's own templates, or an error in the user's template
/// (reported at the attribute that named it, with the template's file and line).
#[derive(Debug)]
pub enum Failure {
    Internal(String),
    User(syn::Error),
}

impl From<String> for Failure {
    fn from(e: String) -> Failure {
        Failure::Internal(e)
    }
}

/// Renders the user's template of `ext` with the family's view: the built-in components are
/// available, errors name the user's file and line.
pub fn render_extension(ext: &Extension, view: &impl Serialize) -> Result<String, Failure> {
    let user = |e: &tera::Error| {
        Failure::User(syn::Error::new(
            ext.span,
            format!("user template {}", located(e, &ext.shown)),
        ))
    };
    let mut t = tera()?.clone();
    t.add_raw_template(&ext.shown, &ext.text).map_err(|e| user(&e))?;
    let ctx = tera::Context::from_serialize(view).map_err(|e| error_chain(&e))?;
    t.render(&ext.shown, &ctx).map_err(|e| user(&e))
}

/// `file:line:column: message` for Tera's syntax and rendering errors, the whole chain otherwise.
fn located(e: &tera::Error, shown: &str) -> String {
    match e.kind() {
        tera::ErrorKind::SyntaxError(r) | tera::ErrorKind::RenderingError(r) => {
            let s = r.span();
            let file = if r.filename().is_empty() {
                shown.to_string()
            } else {
                r.filename().to_string()
            };
            format!("{file}:{}:{}: {}", s.start_line, s.start_col + 1, r.message())
        }
        _ => error_chain(e),
    }
}

/// Renders template `name` with a serialisable view; errors carry Tera's whole cause chain.
pub fn render_template(name: &str, what: &str, view: &impl Serialize) -> Result<String, String> {
    let ctx = tera::Context::from_serialize(view).map_err(|e| error_chain(&e))?;
    tera()?
        .render(name, &ctx)
        .map_err(|e| format!("rendering {what}: {}", error_chain(&e)))
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut msg = e.to_string();
    let mut cur = e.source();
    while let Some(s) = cur {
        msg.push_str(": ");
        msg.push_str(&s.to_string());
        cur = s.source();
    }
    msg
}

/// The Rust-semantics helper functions (templates/common: `rust_math`) that these printed
/// lines call, so that a program declares only those it uses.
pub fn helpers_used<'a>(lines: impl IntoIterator<Item = &'a String>) -> Vec<String> {
    let mut used: Vec<String> = Vec::new();
    for l in lines {
        let mut rest = l.as_str();
        while let Some(i) = rest.find("clforge_") {
            let tail = &rest[i..];
            let end = tail
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(tail.len());
            let name = &tail[..end];
            // A call: the name is followed by `(`.
            if tail[end..].starts_with('(') && !used.iter().any(|u| u == name) {
                used.push(name.to_string());
            }
            rest = &tail[end..];
        }
    }
    used
}

/// A rounding helper that passes NaN through (`clforge_floor_f32`, `clforge_floor_f32x8`, ...).
#[derive(serde::Serialize)]
pub struct RoundingView {
    pub name: String,
    /// The OpenCL builtin it wraps.
    pub func: &'static str,
    /// The scalar OpenCL type.
    pub cl: &'static str,
    /// Lanes of a vector helper (0 for a scalar one).
    pub width: usize,
}

/// The NaN-passing helpers among `used` (`MathFn::nan_passing`, by their OpenCL names).
pub fn rounding_helpers(used: &[String]) -> Vec<RoundingView> {
    let mut out = Vec::new();
    for func in [
        "floor", "ceil", "round", "sqrt", "cbrt", "exp", "log", "log10", "log2", "sin", "cos", "tan", "tanh", "atan",
    ] {
        for (ty, cl) in [("f32", "float"), ("f64", "double")] {
            // Scalar, then the vector variant's widths.
            for width in std::iter::once(0).chain(crate::lower::variants::VECTOR_WIDTHS) {
                let name = format!(
                    "clforge_{func}_{ty}{}",
                    if width > 0 { format!("x{width}") } else { String::new() }
                );
                if used.contains(&name) {
                    out.push(RoundingView { name, func, cl, width });
                }
            }
        }
    }
    out
}
