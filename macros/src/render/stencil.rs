//! The stencil family's view: data only, computed from the IR program. Templates in
//! `templates/stencil/` read these fields; their names are the templates' contract.

use super::render_template;
use crate::emit::expr::Access;
use crate::emit::signature;
use crate::emit::stencil::{emit_body, emit_coords, emit_outputs};
use crate::ir::{Body, Define, Program, Tunable};
use crate::model::{Arg, Boundary};
use serde::Serialize;

/// A grid staged in local memory by the tiled variant.
#[derive(Serialize)]
pub struct StagedView {
    pub name: String,
    /// The local tile's name (`t_psi`).
    pub tile: String,
    pub ty: &'static str,
}

/// A `#define` (tunable with its default, or a contract).
#[derive(Serialize)]
pub struct DefineView {
    pub name: String,
    pub value: String,
    pub doc: String,
}

/// What the stencil templates see.
#[derive(Serialize)]
pub struct StencilView {
    /// The Rust function's name, its file and line, its doc comment lines.
    pub name: String,
    pub file: String,
    pub line: usize,
    pub doc: Vec<String>,
    pub rank: usize,
    /// `fixed`, `periodic` or `clamp`.
    pub boundary: &'static str,
    pub hx: usize,
    pub hy: usize,
    pub hz: usize,
    pub lanes: usize,
    /// OpenCL type of the output.
    pub out: &'static str,
    pub fp64: bool,
    /// Kernel names: plain, tiled, vector, steps.
    pub kernels: Vec<String>,
    /// The kernels' common parameter list, one declaration each.
    pub params: Vec<String>,
    /// Tunables (`#ifndef NAME / #define NAME default`) and contracts (`#define`).
    pub tunables: Vec<DefineView>,
    pub contracts: Vec<DefineView>,
    pub staged: Vec<StagedView>,
    /// Periodic boundary (wrap) rather than clamp, for loads of the tiled variant.
    pub periodic: bool,
    pub coords_xyz: Vec<String>,
    pub coords_yz: Vec<String>,
    pub coords_x: Vec<String>,
    pub plain_body: Vec<String>,
    pub tiled_body: Vec<String>,
    /// Wrapped/clamped boundaries: bodies for points whose neighbours are all inside (linear offsets).
    pub wrapped: bool,
    pub interior_body: Vec<String>,
    pub vec_interior_body: Vec<String>,
    /// Several steps per launch in local memory.
    pub has_steps: bool,
    pub state_name: String,
    pub state_ty: &'static str,
    pub steps_body: Vec<String>,
    pub vec_body: Vec<String>,
    /// Rust-semantics helpers the bodies call (`clforge_powi_f32`, ...).
    pub helpers: Vec<String>,
    /// The rounding helpers among them.
    pub rounding: Vec<super::RoundingView>,
}

/// `#define`s for the templates: contracts as they are, tunables with their defaults.
pub fn defines_view(ds: &[Define]) -> Vec<DefineView> {
    ds.iter()
        .map(|d| define_view(&d.name, d.value.clone(), &d.doc))
        .collect()
}

pub fn tunables_view(ts: &[Tunable]) -> Vec<DefineView> {
    ts.iter()
        .map(|t| define_view(&t.name, t.default.to_string(), &t.doc))
        .collect()
}

fn define_view(name: &str, value: String, doc: &str) -> DefineView {
    DefineView {
        name: name.into(),
        value,
        doc: doc.into(),
    }
}

pub fn view(p: &Program) -> Result<StencilView, String> {
    let Body::Stencil(k) = &p.body else {
        return Err(format!("`{}` is not a stencil program", p.origin.name));
    };
    let file = &p.origin.file;
    let scalar_store = |o: &str, v: &str| format!("{o}[c] = {v};");
    let vector_store = |o: &str, v: &str| format!("vstore{}({v}, 0, {o} + c);", k.lanes);
    let first = p.kernels.first().ok_or("a stencil program without kernels")?;
    let steps = p.kernels.iter().find(|k| k.variant == "steps");
    let mut v = StencilView {
        name: p.origin.name.clone(),
        file: crate::emit::file_literal(file),
        line: p.origin.line,
        doc: p.origin.doc.iter().map(|d| crate::emit::comment(d)).collect(),
        rank: k.rank,
        boundary: k.boundary.name(),
        hx: k.access.halo[0],
        hy: k.access.halo[1],
        hz: k.access.halo[2],
        lanes: k.lanes,
        out: k.out.cl(),
        fp64: p.fp64,
        kernels: p.kernels.iter().map(|k| k.name.clone()).collect(),
        params: signature::params(&first.params),
        tunables: tunables_view(&p.tunables),
        contracts: defines_view(&p.contracts),
        staged: k
            .args
            .iter()
            .zip(&k.access.staged)
            .zip(k.arg_names.iter().zip(&k.tile_names))
            .filter_map(|((a, &s), (name, tile))| match a {
                Arg::Field(f) if s => Some(StagedView {
                    name: name.clone(),
                    tile: tile.clone(),
                    ty: f.elem.cl(),
                }),
                _ => None,
            })
            .collect(),
        periodic: k.boundary == Boundary::Periodic,
        coords_xyz: emit_coords(k, 0..3),
        coords_yz: emit_coords(k, 1..3),
        coords_x: emit_coords(k, 0..1),
        plain_body: emit_outputs(k, file, Access::Global, &scalar_store),
        tiled_body: emit_outputs(k, file, Access::Tiled, &scalar_store),
        wrapped: k.boundary != Boundary::Fixed,
        interior_body: emit_outputs(k, file, Access::Interior, &scalar_store),
        vec_interior_body: emit_outputs(k, file, Access::VectorInterior, &vector_store),
        has_steps: steps.is_some_and(|s| s.unavailable.is_none()),
        state_name: k.access.iterated.map(|i| k.arg_names[i].clone()).unwrap_or_default(),
        state_ty: k.out.cl(),
        steps_body: emit_body(k, file, Access::Steps, &|v: &str| format!("s_next[t] = {v};")),
        vec_body: emit_outputs(k, file, Access::Vector, &vector_store),
        helpers: Vec::new(),
        rounding: Vec::new(),
    };
    v.helpers = super::helpers_used(
        [
            &v.plain_body,
            &v.tiled_body,
            &v.interior_body,
            &v.vec_interior_body,
            &v.steps_body,
            &v.vec_body,
        ]
        .into_iter()
        .flatten(),
    );
    v.rounding = super::rounding_helpers(&v.helpers);
    Ok(v)
}

/// Renders the stencil family. Marker lines stay for `expand`, which cuts the text into the
/// parts the runtime completes with Rust values.
pub fn render(p: &Program) -> Result<String, String> {
    let v = view(p)?;
    render_template(
        &format!("{}/{}.cl.tera", p.family, p.family),
        &format!("stencil `{}`", p.origin.name),
        &v,
    )
}
