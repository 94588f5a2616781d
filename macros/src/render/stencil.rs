//! The stencil family's view: data only, computed from the IR program. Templates in
//! `templates/stencil/` read these fields; their names are the templates' contract.

use super::render_template;
use crate::emit::expr::Access;
use crate::emit::stencil::{self as emit, emit_body, emit_coords, emit_march_planes, emit_outputs};
use crate::emit::{reduce, signature};
use crate::ir::stencil::StencilBody;
use crate::ir::{Body, Define, Kernel, Program, Role, Tunable};
use crate::model::{Arg, Boundary};
use serde::Serialize;

/// A grid staged in local memory by the tiled variant.
#[derive(Serialize)]
pub struct StagedView {
    pub name: String,
    /// The local tile's name (`t_psi`).
    pub tile: String,
    pub ty: &'static str,
    /// The value staged for grid point `(gx, gy, gz)`: `psi[AT(gx, gy, gz)]`, or a packed
    /// grid's point unpacked (the tile holds one value per point).
    pub load: String,
}

/// The grids `pick` selects (by argument index) as staged in local memory, each with how a
/// tile point is loaded from grid point `(gx, gy, gz)`.
fn staged_views(k: &StencilBody, pick: &dyn Fn(usize) -> bool) -> Vec<StagedView> {
    k.args
        .iter()
        .enumerate()
        .zip(k.arg_names.iter().zip(&k.tile_names))
        .filter_map(|((i, a), (name, tile))| match a {
            Arg::Field(f) if pick(i) => Some(StagedView {
                name: name.clone(),
                tile: tile.clone(),
                ty: f.elem.cl(),
                load: emit::staged_load(name, f.packed, f.elem),
            }),
            _ => None,
        })
        .collect()
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
    /// Kernel names: plain, tiled, vector, steps, march.
    pub kernels: Vec<String>,
    /// The kernels' common parameter list, one declaration each.
    pub params: Vec<String>,
    /// Tunables (`#ifndef NAME / #define NAME default`) and contracts (`#define`).
    pub tunables: Vec<DefineView>,
    pub contracts: Vec<DefineView>,
    pub staged: Vec<StagedView>,
    /// The grids the steps variant stages beside the iterated one (every other grid it reads).
    pub steps_staged: Vec<StagedView>,
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
    /// The vector kernels: `float8` (`<name>_vec8`, CPUs) and `float4` (`<name>_vec4`, GPUs),
    /// each compiled only where asked for (`CLFORGE_VEC4`).
    pub vectors: Vec<VectorView>,
    /// Several steps per launch in local memory.
    pub has_steps: bool,
    pub state_name: String,
    pub state_ty: &'static str,
    pub steps_body: Vec<String>,
    /// The march variant (3-D: a column of tiles walked along z, a ring of planes in local
    /// memory): its plane pointers at plane `z`, and the body reading through them.
    pub has_march: bool,
    pub march_planes: Vec<String>,
    pub march_body: Vec<String>,
    /// Rust-semantics helpers the bodies call (`clforge_powi_f32`, ...).
    pub helpers: Vec<String>,
    /// The rounding helpers among them.
    pub rounding: Vec<super::RoundingView>,
    /// Packed grids read by the vector variant: the helpers that read a vector's points.
    pub packed_helpers: Vec<String>,
    /// Reduction outputs: the fold functions, each work-item's accumulators and work-group
    /// arrays, the work-group fold after the points, and one fold kernel per reduction.
    pub reduction_helpers: Vec<String>,
    pub reduction_prologue: Vec<String>,
    pub reduction_epilogue: Vec<String>,
    pub fold_kernels: Vec<String>,
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

/// One vector kernel: its lanes and name, and its bodies.
#[derive(Serialize)]
pub struct VectorView {
    pub lanes: usize,
    pub name: String,
    /// The kernel is compiled where this holds (`!CLFORGE_VEC4`, `CLFORGE_VEC4`).
    pub guard: &'static str,
    /// Where the runtime builds it.
    pub devices: &'static str,
    pub body: Vec<String>,
    pub interior_body: Vec<String>,
    /// The rows where they start at multiples of the lanes (`VEC_ALIGNED`): whole aligned
    /// vectors loaded and stored (`Access::VectorAligned`), and the macros they read through.
    /// Empty where an x offset reaches past the vector beside (halo above the lanes).
    pub aligned_body: Vec<String>,
    pub aligned_macros: Vec<String>,
}

/// The view of one vector kernel (`Kernel::lanes` > 1) of stencil `k`.
fn vector_view(k: &StencilBody, file: &str, kernel: &Kernel) -> VectorView {
    let lanes = kernel.lanes;
    let narrow = kernel.role == Role::Narrow;
    // The output's element type by name (`out` and the system's other outputs).
    let out_ty = |o: &str| k.more.iter().find(|m| m.name == o).map_or(k.out, |m| m.ty);
    let vector_store = |o: &str, v: &str| emit::store_vector(o, v, lanes);
    let aligned_store = |o: &str, v: &str| emit::store_aligned(o, v, out_ty(o), lanes);
    let aligned = k.access.halo[0] <= lanes;
    VectorView {
        lanes,
        name: kernel.name.clone(),
        guard: if narrow { "CLFORGE_VEC4" } else { "!CLFORGE_VEC4" },
        devices: if narrow {
            "GPUs: the runtime builds with -D CLFORGE_VEC4=1"
        } else {
            "CPUs"
        },
        body: emit_outputs(k, file, Access::Vector, lanes, &vector_store),
        interior_body: emit_outputs(k, file, Access::VectorInterior, lanes, &vector_store),
        aligned_body: if aligned {
            emit_outputs(k, file, Access::VectorAligned, lanes, &aligned_store)
        } else {
            Vec::new()
        },
        aligned_macros: if aligned {
            crate::emit::expr::aligned_macros(k.access.halo[0], lanes)
        } else {
            Vec::new()
        },
    }
}

pub fn view(p: &Program) -> Result<StencilView, String> {
    let Body::Stencil(k) = &p.body else {
        return Err(format!("`{}` is not a stencil program", p.origin.name));
    };
    let file = &p.origin.file;
    let variant = |name: &str| p.variants().find(|k| k.variant == name);
    let plain = variant("plain").ok_or("a stencil program without its plain kernel")?;
    // Every scalar body is printed at the plain kernel's lanes (1).
    let scalar = plain.lanes;
    let scalar_store = |o: &str, v: &str| emit::store_scalar(o, v);
    // The vector kernels, the default (CPUs) first, then the narrow build (GPUs).
    let vector_kernels: Vec<&Kernel> = p.kernels.iter().filter(|kn| kn.lanes > 1).collect();
    let vectors: Vec<VectorView> = vector_kernels.iter().map(|kn| vector_view(k, file, kn)).collect();
    let steps = variant("steps");
    let march = variant("march");
    let has_march = march.is_some_and(|m| m.unavailable.is_none());
    let reds = reduce::reductions(k);
    let widths: Vec<usize> = vector_kernels.iter().map(|kn| kn.lanes).collect();
    let fold_kernels = p
        .folds()
        .map(|(kn, output)| {
            let r = reds
                .iter()
                .find(|r| r.param == output)
                .ok_or_else(|| format!("a fold kernel of `{output}`, which is no reduction"))?;
            Ok(reduce::fold_kernel(kn, r))
        })
        .collect::<Result<Vec<_>, String>>()?
        .concat();
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
        kernels: p.variants().map(|k| k.name.clone()).collect(),
        params: signature::params(&plain.params),
        tunables: tunables_view(&p.tunables),
        contracts: defines_view(&p.contracts),
        staged: staged_views(k, &|i| k.access.staged[i]),
        steps_staged: staged_views(k, &|i| crate::lower::variants::steps_staged(k, i)),
        periodic: k.boundary == Boundary::Periodic,
        coords_xyz: emit_coords(k, 0..3),
        coords_yz: emit_coords(k, 1..3),
        coords_x: emit_coords(k, 0..1),
        plain_body: emit_outputs(k, file, Access::Global, scalar, &scalar_store),
        tiled_body: emit_outputs(k, file, Access::Tiled, scalar, &scalar_store),
        wrapped: k.boundary != Boundary::Fixed,
        interior_body: emit_outputs(k, file, Access::Interior, scalar, &scalar_store),
        vectors,
        has_steps: steps.is_some_and(|s| s.unavailable.is_none()),
        state_name: k.access.iterated.map(|i| k.arg_names[i].clone()).unwrap_or_default(),
        state_ty: k.out.cl(),
        steps_body: emit_body(k, file, Access::Steps, scalar, &emit::store_steps),
        has_march,
        march_planes: if has_march { emit_march_planes(k) } else { Vec::new() },
        march_body: if has_march {
            emit_outputs(k, file, Access::March, scalar, &scalar_store)
        } else {
            Vec::new()
        },
        helpers: Vec::new(),
        rounding: Vec::new(),
        packed_helpers: Vec::new(),
        reduction_helpers: reduce::helpers(&reds, &widths),
        reduction_prologue: reduce::prologue(&reds),
        reduction_epilogue: reduce::epilogue(&reds),
        fold_kernels,
    };
    let vector_lines = v
        .vectors
        .iter()
        .flat_map(|w| [&w.body, &w.interior_body, &w.aligned_body]);
    v.helpers = super::helpers_used(
        [
            &v.plain_body,
            &v.tiled_body,
            &v.interior_body,
            &v.steps_body,
            &v.march_body,
        ]
        .into_iter()
        .chain(vector_lines)
        .flatten(),
    );
    v.rounding = super::rounding_helpers(&v.helpers);
    for lanes in widths {
        for bits in clforge_abi::PACKED_BITS {
            if v.helpers.contains(&crate::emit::expr::unpack_lanes_fn(bits, lanes)) {
                v.packed_helpers
                    .extend(crate::emit::expr::unpack_lanes_helper(bits, lanes));
            }
        }
    }
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
