//! The lattice family's view: data only, computed from the IR program. The template
//! `templates/lattice/lattice.cl.tera` reads these fields; their names are its contract.

use super::render_template;
use super::stencil::{defines_view, DefineView};
use crate::emit::expr::Access;
use crate::emit::signature;
use crate::emit::stencil::{emit_body, emit_coords, neighbour_coord};
use crate::ir::{Body, Program};
use serde::Serialize;

/// What the lattice template sees.
#[derive(Serialize)]
pub struct LatticeView {
    pub name: String,
    pub file: String,
    pub line: usize,
    pub doc: Vec<String>,
    pub rank: usize,
    /// The state's OpenCL name.
    pub state_name: String,
    pub boundary: &'static str,
    pub hx: usize,
    pub hy: usize,
    pub hz: usize,
    pub fp64: bool,
    pub kernel: String,
    /// 2 (checkerboard) or `2^rank` (parity classes).
    pub colours: usize,
    pub params: Vec<String>,
    pub contracts: Vec<DefineView>,
    /// The site update reading global memory (wrapped or clamped coordinates first).
    pub body: Vec<String>,
    /// Rust-semantics helpers the body calls (`clforge_powi_f32`, ...).
    pub helpers: Vec<String>,
    /// The draw indices `k` the body uses (`clforge_block_<k>`), in increasing order.
    pub draws: Vec<u32>,
    pub rounding: Vec<super::RoundingView>,
    /// Bit-packed state (`Lattice<bool>`): the kernel updates a word of 32 sites.
    pub packed: bool,
    /// The packed kernel's neighbour windows, one per offset the body reads the state at.
    pub windows: Vec<WindowView>,
    /// Whether the body names the site's linear index `c` (reads of grids beside the state):
    /// the packed kernel computes it only then, since a packed lattice may have more sites than
    /// an `int` counts.
    pub uses_index: bool,
}

/// One 32-bit window of neighbours of the packed kernel's 32 sites.
#[derive(Serialize)]
pub struct WindowView {
    /// Its name in the body (`clforge_nb_p1_0_0`).
    pub name: String,
    /// The offset along x (the window's shift within the other or the same half-row).
    pub dx: i64,
    /// The neighbour row's y and z, boundary applied.
    pub y: String,
    pub z: String,
}

pub fn view(p: &Program) -> Result<LatticeView, String> {
    let Body::Lattice(l) = &p.body else {
        return Err(format!("`{}` is not a lattice program", p.origin.name));
    };
    let k = &l.body;
    let file = &p.origin.file;
    let state_name = k.arg_names[l.state].clone();
    let store = |v: &str| crate::emit::lattice::store_site(&state_name, v, l.packed);
    let mut body = emit_coords(k, 0..k.rank);
    let access = if l.packed { Access::Bits } else { Access::Global };
    // The site update is scalar (`Kernel::lanes` 1).
    body.extend(emit_body(k, file, access, 1, &store));
    let windows = l
        .windows
        .iter()
        .map(|o| WindowView {
            name: crate::emit::expr::bits_window(*o),
            dx: o[0],
            y: crate::emit::c::expr(&neighbour_coord(1, o[1], k.boundary)),
            z: crate::emit::c::expr(&neighbour_coord(2, o[2], k.boundary)),
        })
        .collect();
    let kernel = p
        .kernels
        .first()
        .ok_or_else(|| format!("lattice `{}` has no kernel", p.origin.name))?;
    let helpers = super::helpers_used(body.iter());
    let uses_index = names_identifier(&body, "c");
    let draws = draws_used(&body);
    Ok(LatticeView {
        name: p.origin.name.clone(),
        file: crate::emit::file_literal(file),
        line: p.origin.line,
        doc: p.origin.doc.iter().map(|d| crate::emit::comment(d)).collect(),
        rank: k.rank,
        state_name,
        boundary: k.boundary.name(),
        hx: k.access.halo[0],
        hy: k.access.halo[1],
        hz: k.access.halo[2],
        fp64: p.fp64,
        kernel: kernel.name.clone(),
        colours: l.colours,
        params: signature::params(&kernel.params),
        contracts: defines_view(&p.contracts),
        body,
        rounding: super::rounding_helpers(&helpers),
        helpers,
        draws,
        packed: l.packed,
        uses_index,
        windows,
    })
}

/// Whether any line names the C identifier `id` (outside comments too: a conservative yes).
fn names_identifier(lines: &[String], id: &str) -> bool {
    lines.iter().any(|line| {
        line.split(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
            .any(|word| word == id)
    })
}

/// The `k`s of the `clforge_block_<k>` the body lines name (the lowering's draw leaves).
fn draws_used(body: &[String]) -> Vec<u32> {
    const LEAF: &str = "clforge_block_";
    let mut ks: Vec<u32> = body
        .iter()
        .flat_map(|line| line.match_indices(LEAF).map(move |(at, _)| &line[at + LEAF.len()..]))
        .filter_map(|rest| {
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().ok()
        })
        .collect();
    ks.sort_unstable();
    ks.dedup();
    ks
}

pub fn render(p: &Program) -> Result<String, String> {
    let v = view(p)?;
    let template = if v.packed {
        "lattice/packed.cl.tera"
    } else {
        "lattice/lattice.cl.tera"
    };
    render_template(template, &format!("lattice rule `{}`", p.origin.name), &v)
}
