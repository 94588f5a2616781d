//! The sweep family's view: data only, computed from the IR program. Templates in
//! `templates/sweep/` read these fields; their names are the templates' contract.

use super::render_template;
use super::stencil::{defines_view, tunables_view, DefineView, StagedView};
use crate::emit::expr::Access;
use crate::emit::signature;
use crate::emit::stencil::{emit_body, emit_coords, staged_load};
use crate::emit::sweep;
use crate::ir::{Body, Program};
use crate::model::Arg;
use serde::Serialize;

/// What the sweep template sees.
#[derive(Serialize)]
pub struct SweepView {
    pub name: String,
    pub file: String,
    pub line: usize,
    pub doc: Vec<String>,
    pub rank: usize,
    /// The swept field's OpenCL name and its local tile's.
    pub state_name: String,
    pub state_tile: String,
    /// `x forward, y backward`.
    pub order: String,
    pub boundary: &'static str,
    pub hx: usize,
    pub hy: usize,
    pub hz: usize,
    pub fp64: bool,
    /// Kernel names: serial, wave, wave_local, blocks, persistent, persistent_local,
    /// persistent_blocks, blocks_local, strip.
    pub kernels: Vec<String>,
    /// Each kernel's parameter declarations.
    pub params: Vec<Vec<String>>,
    pub tunables: Vec<DefineView>,
    pub contracts: Vec<DefineView>,
    /// Fields the local-memory schedule stages (the swept field first among them).
    pub staged: Vec<StagedView>,
    /// The point update reading global memory (clamped coordinates first, where needed).
    pub global_body: Vec<String>,
    /// The point update reading and writing the local tile.
    pub tiled_body: Vec<String>,
    /// The point update of the strip schedule: `global_body` with the swept field's reads from
    /// the strips above through the volatile alias.
    pub strip_body: Vec<String>,
    /// The strip schedule keeps recent new values in a local ring (fixed boundary).
    pub strip_ring: bool,
    /// Columns each row's ring holds: a power of two above the longest a new value waits.
    pub strip_ring_len: usize,
    /// The swept field's OpenCL element type.
    pub state_ty: String,
    pub has_wave: bool,
    pub has_wave_local: bool,
    pub has_blocks: bool,
    pub has_persistent: bool,
    pub has_persistent_local: bool,
    pub has_persistent_blocks: bool,
    pub has_blocks_local: bool,
    pub has_strip: bool,
    /// Rust-semantics helpers the bodies call (`clforge_powi_f32`, ...).
    pub helpers: Vec<String>,
    /// The rounding helpers among them.
    pub rounding: Vec<super::RoundingView>,
}

pub fn view(p: &Program) -> Result<SweepView, String> {
    let Body::Sweep(sw) = &p.body else {
        return Err(format!("`{}` is not a sweep program", p.origin.name));
    };
    let k = &sw.body;
    let file = &p.origin.file;
    let state_name = k.arg_names[sw.state].clone();
    let state_tile = k.tile_names[sw.state].clone();
    let global_store = |v: &str| sweep::store_global(&state_name, v);
    let tiled_store = |v: &str| sweep::store_tiled(&state_tile, v);
    // Every sweep kernel is scalar (`Kernel::lanes` 1).
    let mut global_body = emit_coords(k, 0..k.rank);
    global_body.extend(emit_body(k, file, Access::Global, 1, &global_store));
    // A schedule's kernel is generated where the lowering made it available (by its name).
    let available = |v: &str| p.kernels.iter().any(|k| k.variant == v && k.unavailable.is_none());
    let tiled_body = emit_body(k, file, Access::Tiled, 1, &tiled_store);
    // The strip schedule keeps each row's recent new values in a local ring (fixed boundary:
    // no clamped read can land on a point the ring does not hold).
    let ring = k.boundary == crate::model::Boundary::Fixed;
    let ty = k.out.cl();
    let strip_store = |v: &str| sweep::store_strip(&state_name, ty, v, ring);
    let mut strip_body = emit_coords(k, 0..k.rank);
    strip_body.extend(emit_body(k, file, Access::Strip, 1, &strip_store));
    let helpers = super::helpers_used(global_body.iter().chain(&tiled_body).chain(&strip_body));
    Ok(SweepView {
        name: p.origin.name.clone(),
        file: crate::emit::file_literal(file),
        line: p.origin.line,
        doc: p.origin.doc.iter().map(|d| crate::emit::comment(d)).collect(),
        rank: k.rank,
        state_name: state_name.clone(),
        state_tile: state_tile.clone(),
        order: (0..k.rank)
            .map(|a| {
                format!(
                    "{} {}",
                    ["x", "y", "z"][a],
                    if sw.forward[a] { "forward" } else { "backward" }
                )
            })
            .collect::<Vec<_>>()
            .join(", "),
        boundary: k.boundary.name(),
        hx: k.access.halo[0],
        hy: k.access.halo[1],
        hz: k.access.halo[2],
        fp64: p.fp64,
        kernels: p.kernels.iter().map(|k| k.name.clone()).collect(),
        params: p.kernels.iter().map(|k| signature::params(&k.params)).collect(),
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
                    // Sweeps have no packed grids; the sweep templates index the grid themselves.
                    load: staged_load(name, None, f.elem),
                }),
                _ => None,
            })
            .collect(),
        global_body,
        tiled_body,
        strip_body,
        strip_ring: ring,
        // Saturating: an absurd offset (`f.at(i64::MAX, ..)`, found by the fuzzer) makes a ring no
        // device holds, which the build or the local-memory check refuses at run time.
        strip_ring_len: k.access.halo[0]
            .saturating_add(k.access.halo[1])
            .saturating_add(1)
            .min(1 << 30)
            .next_power_of_two(),
        state_ty: k.out.cl().to_string(),
        rounding: super::rounding_helpers(&helpers),
        helpers,
        has_wave: available("wave"),
        has_wave_local: available("wave_local"),
        has_blocks: available("blocks"),
        has_persistent: available("persistent"),
        has_persistent_local: available("persistent_local"),
        has_persistent_blocks: available("persistent_blocks"),
        has_blocks_local: available("blocks_local"),
        has_strip: available("strip"),
    })
}

pub fn render(p: &Program) -> Result<String, String> {
    let v = view(p)?;
    render_template("sweep/sweep.cl.tera", &format!("sweep `{}`", p.origin.name), &v)
}
