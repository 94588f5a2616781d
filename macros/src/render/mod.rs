//! STAGE views -> Tera -> OpenCL source. One view module per kind (`stencil.rs`,
//! `element.rs`) holding data only; the views are the templates' contract. Built-in templates
//! are embedded; a failure in one is a bug in clforge, reported with its whole cause chain.

pub mod element;
pub mod stencil;

use serde::Serialize;
use std::sync::OnceLock;

/// The built-in templates, embedded at build time: `common/` components shared by every family,
/// then one directory per kind.
const BUILTIN: [(&str, &str); 3] = [
    (
        "common/components.cl.tera",
        include_str!("../../../templates/common/components.cl.tera"),
    ),
    (
        "stencil/stencil.cl.tera",
        include_str!("../../../templates/stencil/stencil.cl.tera"),
    ),
    (
        "element/element.cl.tera",
        include_str!("../../../templates/element/element.cl.tera"),
    ),
];

/// Environment variable naming a directory of `*.cl.tera` files that add template families or
/// override built-in ones (same file name), read when the macros expand.
pub const TEMPLATE_DIR_ENV: &str = "CLFORGE_TEMPLATES";

/// Where the generated source is completed at run time with Rust values (params struct
/// declarations, constants' `#define`s), and where `#line` returns to the generated file.
/// `expand` cuts the rendered text at these lines into typed parts; nothing reads them later.
pub const PARAMS_MARKER: &str = "//@clforge:params";
pub const CONSTANTS_MARKER: &str = "//@clforge:constants";
pub const LINE_MARKER: &str = "#line RESET";

fn tera() -> Result<&'static tera::Tera, String> {
    static TERA: OnceLock<Result<tera::Tera, String>> = OnceLock::new();
    TERA.get_or_init(|| {
        let mut t = tera::Tera::new();
        t.autoescape_on(Vec::<&str>::new());
        let mut templates: Vec<(String, String)> = BUILTIN
            .iter()
            .map(|(n, text)| (n.to_string(), text.to_string()))
            .collect();
        if let Some(dir) = std::env::var_os(TEMPLATE_DIR_ENV) {
            let entries = std::fs::read_dir(&dir).map_err(|e| format!("{TEMPLATE_DIR_ENV}={dir:?}: {e}"))?;
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if let Some(family) = name.strip_suffix(".cl.tera") {
                    let text = std::fs::read_to_string(entry.path()).map_err(|e| format!("{name}: {e}"))?;
                    // `<family>.cl.tera` in the directory is the family's template.
                    let name = format!("{family}/{name}");
                    templates.retain(|(n, _)| *n != name);
                    templates.push((name, text));
                }
            }
        }
        for (name, text) in &templates {
            t.add_raw_template(name, text)
                .map_err(|e| format!("template `{name}`: {}", error_chain(&e)))?;
        }
        Ok(t)
    })
    .as_ref()
    .map_err(Clone::clone)
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
