//! `#[derive(Serialize)]` views -> Tera -> OpenCL source. Built-in templates are embedded;
//! a failure here is a bug in clforge and is reported with its whole cause chain.

use crate::emit::{emit_body, emit_coords, emit_params, Access, LANES};
use crate::ir::Kernel;
use crate::model::{Arg, Boundary, Scalar};
use serde::Serialize;
use std::sync::OnceLock;

/// The built-in template families, embedded at build time.
const BUILTIN: [(&str, &str); 2] = [
    ("stencil.cl.tera", include_str!("../../templates/stencil.cl.tera")),
    ("element.cl.tera", include_str!("../../templates/element.cl.tera")),
];

/// Environment variable naming a directory of `*.cl.tera` files that add template families or
/// override built-in ones (same file name), read when the macros expand.
pub const TEMPLATE_DIR_ENV: &str = "CLFORGE_TEMPLATES";

/// Where the generated source is completed at run time with Rust values.
pub const PARAMS_MARKER: &str = "//@clforge:params";
pub const CONSTANTS_MARKER: &str = "//@clforge:constants";

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
                if name.ends_with(".cl.tera") {
                    let text = std::fs::read_to_string(entry.path()).map_err(|e| format!("{name}: {e}"))?;
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

#[derive(Serialize)]
struct StagedView {
    name: String,
    ty: &'static str,
}

#[derive(Serialize)]
struct StencilView {
    name: String,
    file: String,
    line: usize,
    doc: Vec<String>,
    rank: usize,
    boundary: &'static str,
    hx: usize,
    hy: usize,
    hz: usize,
    tile_x: usize,
    tile_y: usize,
    wg_y: usize,
    lanes: usize,
    out: &'static str,
    fp64: bool,
    params: Vec<String>,
    staged: Vec<StagedView>,
    updated: String,
    load: String,
    x_first: &'static str,
    coords_xyz: Vec<String>,
    coords_yz: Vec<String>,
    coords_x: Vec<String>,
    plain_body: Vec<String>,
    tiled_body: Vec<String>,
    /// Wrapped/clamped boundaries: bodies for points whose neighbours are all inside (linear offsets).
    wrapped: bool,
    interior_body: Vec<String>,
    vec_interior_body: Vec<String>,
    /// Several steps per launch in local memory (2-D, fixed boundary, with a state grid).
    has_steps: bool,
    state_name: String,
    state_ty: &'static str,
    steps_body: Vec<String>,
    vec_body: Vec<String>,
}

/// Default tile (x, y) and work-group rows per rank; seed 002 used 32x32 tiles walked by 32x4.
pub fn default_tile(rank: usize) -> (usize, usize, usize) {
    match rank {
        1 => (256, 1, 1),
        2 => (32, 32, 4),
        _ => (32, 8, 4),
    }
}

fn view(k: &Kernel) -> StencilView {
    let axes = ["x", "y", "z"];
    let sizes = ["nx", "ny", "nz"];
    let halos = ["HX", "HY", "HZ"];
    let updated: Vec<String> = (0..3)
        .map(|a| match k.boundary {
            Boundary::Fixed if a < k.rank => format!("{0} >= {1} && {0} < {2} - {1}", axes[a], halos[a], sizes[a]),
            _ => format!("{} < {}", axes[a], sizes[a]),
        })
        .collect();
    let fp64 = k.out == Scalar::F64
        || k.args.iter().any(|a| {
            matches!(a, Arg::Field(f) if f.elem == Scalar::F64) || matches!(a, Arg::Scalar { ty: Scalar::F64, .. })
        })
        || k.members.iter().any(|m| m.ty == Scalar::F64)
        || k.consts.iter().any(|c| c.ty == Scalar::F64);
    let (tile_x, tile_y, wg_y) = default_tile(k.rank);
    let scalar_store = |v: &str| format!("out[c] = {v};");
    let vector_store = |v: &str| format!("vstore{LANES}({v}, 0, out + c);");
    StencilView {
        name: k.name.clone(),
        file: k.file.clone(),
        line: k.line,
        doc: k.doc.clone(),
        rank: k.rank,
        boundary: k.boundary.name(),
        hx: k.halo[0],
        hy: k.halo[1],
        hz: k.halo[2],
        tile_x,
        tile_y,
        wg_y,
        lanes: LANES,
        out: k.out.cl(),
        fp64,
        params: emit_params(k),
        staged: k
            .args
            .iter()
            .zip(&k.staged)
            .zip(&k.arg_names)
            .filter_map(|((a, &s), name)| match a {
                Arg::Field(f) if s => Some(StagedView {
                    name: name.clone(),
                    ty: f.elem.cl(),
                }),
                _ => None,
            })
            .collect(),
        updated: updated.join(" && "),
        load: match k.boundary {
            Boundary::Periodic => "WRAP(v, n)".to_string(),
            _ => "clamp(v, 0, (n) - 1)".to_string(),
        },
        x_first: if k.boundary == Boundary::Fixed { "HX" } else { "0" },
        coords_xyz: emit_coords(k, 0..3),
        coords_yz: emit_coords(k, 1..3),
        coords_x: emit_coords(k, 0..1),
        plain_body: emit_body(k, Access::Global, &scalar_store),
        tiled_body: emit_body(k, Access::Tiled, &scalar_store),
        wrapped: k.boundary != Boundary::Fixed,
        interior_body: emit_body(k, Access::Interior, &scalar_store),
        vec_interior_body: emit_body(k, Access::VectorInterior, &vector_store),
        has_steps: steps_supported(k),
        state_name: k.state.map(|i| k.arg_names[i].clone()).unwrap_or_default(),
        state_ty: k.out.cl(),
        steps_body: emit_body(k, Access::Steps, &|v: &str| format!("s_next[t] = {v};")),
        vec_body: emit_body(k, Access::Vector, &vector_store),
    }
}

/// Temporal blocking keeps the state grid in local memory for several steps; it needs a
/// state grid and, so far, a 2-D grid with a fixed boundary (no wrapped halos).
pub fn steps_supported(k: &Kernel) -> bool {
    k.rank == 2 && k.boundary == Boundary::Fixed && k.state.is_some()
}

/// Renders the stencil family. `#line RESET` lines stay for the runtime's `assemble`, which
/// knows the final line numbers once params declarations and constants are in.
pub fn render_stencil(k: &Kernel) -> Result<String, String> {
    render_template("stencil.cl.tera", &format!("stencil `{}`", k.name), &view(k))
}
