//! The stencil family's view: data only, computed from the IR program. Templates in
//! `templates/stencil/` read these fields; their names are the templates' contract.

use super::render_template;
use crate::emit::expr::Access;
use crate::emit::signature;
use crate::emit::stencil::{emit_body, emit_coords, emit_march_planes, emit_outputs, reduce_fn};
use crate::ir::stencil::{Reduction, StencilBody};
use crate::ir::{Body, Define, Program, Tunable};
use crate::model::{Arg, Boundary};
use crate::model::{ReduceOp, Scalar};
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
                load: match f.packed {
                    Some(bits) => crate::emit::expr::packed_read(name, "AT(gx, gy, gz)", bits, f.elem),
                    None => format!("{name}[AT(gx, gy, gz)]"),
                },
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

/// One reduction output as the generated code names it.
struct Red<'a> {
    param: &'a str,
    ty: Scalar,
    r: &'a Reduction,
}

fn reductions(k: &StencilBody) -> Vec<Red<'_>> {
    let first = k.out_reduce.as_ref().map(|r| Red {
        param: "out",
        ty: k.out,
        r,
    });
    first
        .into_iter()
        .chain(k.more.iter().filter_map(|o| {
            o.reduce.as_ref().map(|r| Red {
                param: &o.name,
                ty: o.ty,
                r,
            })
        }))
        .collect()
}

/// The fold kernels' names, in the order of the reduction outputs.
pub fn fold_kernels(name: &str, k: &StencilBody) -> Vec<String> {
    reductions(k)
        .iter()
        .map(|r| format!("{name}_fold_{}", r.param))
        .collect()
}

/// The identity of a reduction as an OpenCL literal.
fn identity(op: ReduceOp, ty: Scalar) -> &'static str {
    match (op, ty) {
        (ReduceOp::Sum, Scalar::F32) => "0.0f",
        (ReduceOp::Sum, Scalar::F64) => "0.0",
        (ReduceOp::Sum, Scalar::U32) => "0u",
        (ReduceOp::Sum, _) => "0",
        (ReduceOp::Max, Scalar::F32 | Scalar::F64) => "-INFINITY",
        (ReduceOp::Min, Scalar::F32 | Scalar::F64) => "INFINITY",
        (ReduceOp::Max, Scalar::U32) => "0u",
        (ReduceOp::Min, Scalar::U32) => "0xffffffffu",
        (ReduceOp::Max, _) => "(-2147483647 - 1)",
        (ReduceOp::Min, _) => "2147483647",
    }
}

/// The OpenCL functions of each (operation, type) the reductions use: the scalar fold (NaN
/// propagating, zeros ordered, integers wrapping like the host's) and the lane-by-lane fold of
/// a vector into an accumulator.
fn reduction_helpers(reds: &[Red<'_>]) -> Vec<String> {
    let mut out = Vec::new();
    if reds.is_empty() {
        return out;
    }
    out.push("/* reductions: work-group sizes set by the launch (defaults for a build without them) */".into());
    for (name, value) in [("RED_ITEMS", "1"), ("RED_P2", "1"), ("FOLD_ITEMS", "1")] {
        out.push(format!("#ifndef {name}"));
        out.push(format!("#define {name} {value}"));
        out.push("#endif".into());
    }
    out.push("/* the points a reduction counts: the launch's box (a split grid's own planes, not its halos);".into());
    out.push("   vector code checks y and z here and each lane's x in its fold */".into());
    out.push("#define IN_REDUCED_YZ(y, z) ((y) >= ry0 && (y) < ry1 && (z) >= rz0 && (z) < rz1)".into());
    out.push("#define IN_REDUCED(x, y, z) ((x) >= rx0 && (x) < rx1 && IN_REDUCED_YZ(y, z))".into());
    let mut seen = Vec::new();
    for r in reds {
        if seen.contains(&(r.r.op, r.ty)) {
            continue;
        }
        seen.push((r.r.op, r.ty));
        let t = r.ty.cl();
        let f = reduce_fn(r.r.op, r.ty, false);
        let (bits, as_bits, as_t) = match r.ty {
            Scalar::F64 => ("ulong", "as_ulong", "as_double"),
            _ => ("uint", "as_uint", "as_float"),
        };
        let body = match (r.r.op, r.ty.is_float()) {
            (ReduceOp::Sum, true) => "return a + b;".to_string(),
            (ReduceOp::Sum, false) => format!("return ({t})(({bits})a + ({bits})b);"),
            (ReduceOp::Max, false) => "return a > b ? a : b;".into(),
            (ReduceOp::Min, false) => "return a < b ? a : b;".into(),
            (op, true) => {
                let (join, cmp) = if op == ReduceOp::Max { ("&", ">") } else { ("|", "<") };
                format!(
                    "return isnan(a) || isnan(b) ? a + b : a == b ? {as_t}({as_bits}(a) {join} {as_bits}(b)) : a {cmp} b ? a : b;"
                )
            }
        };
        out.push(format!("{t} {f}(const {t} a, const {t} b)"));
        out.push("{".into());
        out.push(format!("    {body}"));
        out.push("}".into());
        // The vector variants' folds, one per width (`clforge_fold8_*`, `clforge_fold4_*`).
        for width in crate::lower::variants::VECTOR_WIDTHS {
            let fold = crate::lower::variants::with_lanes(width, || reduce_fn(r.r.op, r.ty, true));
            out.push(format!(
                "{t} {fold}({t} acc, const {t}{width} v, const int x, const int lo, const int hi)"
            ));
            out.push("{".into());
            for i in 0..width {
                out.push(format!(
                    "    if (x + {i} >= lo && x + {i} < hi) acc = {f}(acc, v.s{i:x});"
                ));
            }
            out.push("    return acc;".into());
            out.push("}".into());
        }
    }
    out
}

/// Each work-item's accumulators and each reduction's work-group array.
fn reduction_prologue(reds: &[Red<'_>]) -> Vec<String> {
    reds.iter()
        .flat_map(|r| {
            let t = r.ty.cl();
            [
                format!("__local {t} {}[RED_ITEMS];", r.r.local),
                format!("{t} {} = {};", r.r.acc, identity(r.r.op, r.ty)),
            ]
        })
        .collect()
}

/// After a work-item's points: the work-group's accumulators folded in a fixed tree order,
/// one partial per work-group.
fn reduction_epilogue(reds: &[Red<'_>]) -> Vec<String> {
    if reds.is_empty() {
        return Vec::new();
    }
    let mut out = vec![
        "/* reductions: the work-group's values folded in a fixed tree order, one partial per group */".to_string(),
        "{".into(),
        "    const int clforge_lid = get_local_id(0) + get_local_size(0) * (get_local_id(1) + get_local_size(1) * get_local_id(2));".into(),
        "    const int clforge_group = get_group_id(0) + get_num_groups(0) * (get_group_id(1) + get_num_groups(1) * get_group_id(2));".into(),
    ];
    for r in reds {
        out.push(format!("    {}[clforge_lid] = {};", r.r.local, r.r.acc));
    }
    out.push("    barrier(CLK_LOCAL_MEM_FENCE);".into());
    out.push("    for (int clforge_s = RED_P2 / 2; clforge_s > 0; clforge_s >>= 1) {".into());
    out.push("        if (clforge_lid < clforge_s && clforge_lid + clforge_s < RED_ITEMS) {".into());
    for r in reds {
        let f = reduce_fn(r.r.op, r.ty, false);
        let l = &r.r.local;
        out.push(format!(
            "            {l}[clforge_lid] = {f}({l}[clforge_lid], {l}[clforge_lid + clforge_s]);"
        ));
    }
    out.push("        }".into());
    out.push("        barrier(CLK_LOCAL_MEM_FENCE);".into());
    out.push("    }".into());
    out.push("    if (clforge_lid == 0) {".into());
    for r in reds {
        out.push(format!("        {}[clforge_group] = {}[0];", r.param, r.r.local));
    }
    out.push("    }".into());
    out.push("}".into());
    out
}

/// One kernel per reduction: each work-group folds a chunk of the partials in a fixed order;
/// the runtime launches it over many groups, then over their results in one group.
fn fold_kernel_sources(name: &str, reds: &[Red<'_>]) -> Vec<String> {
    let mut out = Vec::new();
    for r in reds {
        let t = r.ty.cl();
        let f = reduce_fn(r.r.op, r.ty, false);
        out.extend([
            String::new(),
            format!("/* {name}_fold_{}: the work-groups' partials of `{}` folded into one value, in a fixed order */", r.param, r.param),
            "__kernel __attribute__((reqd_work_group_size(FOLD_ITEMS, 1, 1)))".to_string(),
            format!("void {name}_fold_{}(__global const {t}* restrict partials, const int n, __global {t}* restrict result)", r.param),
            "{".into(),
            format!("    __local {t} clforge_l[FOLD_ITEMS];"),
            "    const int clforge_lid = get_local_id(0);".into(),
            "    /* work-group g folds its chunk of the partials into result[g] */".into(),
            "    const int chunk = (n + get_num_groups(0) - 1) / get_num_groups(0);".into(),
            "    const int lo = get_group_id(0) * chunk;".into(),
            "    const int hi = min(n, lo + chunk);".into(),
            format!("    {t} clforge_acc = {};", identity(r.r.op, r.ty)),
            "    for (int i = lo + clforge_lid; i < hi; i += FOLD_ITEMS)".into(),
            format!("        clforge_acc = {f}(clforge_acc, partials[i]);"),
            "    clforge_l[clforge_lid] = clforge_acc;".into(),
            "    barrier(CLK_LOCAL_MEM_FENCE);".into(),
            "    for (int s = FOLD_ITEMS / 2; s > 0; s >>= 1) {".into(),
            "        if (clforge_lid < s)".into(),
            format!("            clforge_l[clforge_lid] = {f}(clforge_l[clforge_lid], clforge_l[clforge_lid + s]);"),
            "        barrier(CLK_LOCAL_MEM_FENCE);".into(),
            "    }".into(),
            "    if (clforge_lid == 0)".into(),
            "        result[get_group_id(0)] = clforge_l[0];".into(),
            "}".into(),
        ]);
    }
    out
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

pub fn view(p: &Program) -> Result<StencilView, String> {
    let Body::Stencil(k) = &p.body else {
        return Err(format!("`{}` is not a stencil program", p.origin.name));
    };
    let file = &p.origin.file;
    let scalar_store = |o: &str, v: &str| format!("{o}[c] = {v};");
    // The output's element type by name (`out` and the system's other outputs).
    let out_ty = |o: &str| k.more.iter().find(|m| m.name == o).map_or(k.out, |m| m.ty);
    let vectors = crate::lower::variants::VECTOR_WIDTHS
        .into_iter()
        .map(|lanes| {
            let narrow = lanes == crate::lower::variants::NARROW_LANES;
            crate::lower::variants::with_lanes(lanes, || {
                let vector_store = |o: &str, v: &str| format!("vstore{lanes}({v}, 0, {o} + c);");
                let aligned_store =
                    |o: &str, v: &str| format!("*(__global {}{lanes}*)({o} + c) = {v};", out_ty(o).cl());
                let aligned = k.access.halo[0] <= lanes;
                VectorView {
                    lanes,
                    name: crate::lower::variants::vector_kernel(&p.origin.name, lanes),
                    guard: if narrow { "CLFORGE_VEC4" } else { "!CLFORGE_VEC4" },
                    devices: if narrow {
                        "GPUs: the runtime builds with -D CLFORGE_VEC4=1"
                    } else {
                        "CPUs"
                    },
                    body: emit_outputs(k, file, Access::Vector, &vector_store),
                    interior_body: emit_outputs(k, file, Access::VectorInterior, &vector_store),
                    aligned_body: if aligned {
                        emit_outputs(k, file, Access::VectorAligned, &aligned_store)
                    } else {
                        Vec::new()
                    },
                    aligned_macros: if aligned {
                        crate::emit::expr::aligned_macros(k.access.halo[0])
                    } else {
                        Vec::new()
                    },
                }
            })
        })
        .collect::<Vec<_>>();
    let first = p.kernels.first().ok_or("a stencil program without kernels")?;
    let steps = p.kernels.iter().find(|k| k.variant == "steps");
    let march = p.kernels.iter().find(|k| k.variant == "march");
    let has_march = march.is_some_and(|m| m.unavailable.is_none());
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
        staged: staged_views(k, &|i| k.access.staged[i]),
        steps_staged: staged_views(k, &|i| crate::lower::variants::steps_staged(k, i)),
        periodic: k.boundary == Boundary::Periodic,
        coords_xyz: emit_coords(k, 0..3),
        coords_yz: emit_coords(k, 1..3),
        coords_x: emit_coords(k, 0..1),
        plain_body: emit_outputs(k, file, Access::Global, &scalar_store),
        tiled_body: emit_outputs(k, file, Access::Tiled, &scalar_store),
        wrapped: k.boundary != Boundary::Fixed,
        interior_body: emit_outputs(k, file, Access::Interior, &scalar_store),
        vectors,
        has_steps: steps.is_some_and(|s| s.unavailable.is_none()),
        state_name: k.access.iterated.map(|i| k.arg_names[i].clone()).unwrap_or_default(),
        state_ty: k.out.cl(),
        steps_body: emit_body(k, file, Access::Steps, &|v: &str| format!("s_next[t] = {v};")),
        has_march,
        march_planes: if has_march { emit_march_planes(k) } else { Vec::new() },
        march_body: if has_march {
            emit_outputs(k, file, Access::March, &scalar_store)
        } else {
            Vec::new()
        },
        helpers: Vec::new(),
        rounding: Vec::new(),
        packed_helpers: Vec::new(),
        reduction_helpers: reduction_helpers(&reductions(k)),
        reduction_prologue: reduction_prologue(&reductions(k)),
        reduction_epilogue: reduction_epilogue(&reductions(k)),
        fold_kernels: fold_kernel_sources(&p.origin.name, &reductions(k)),
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
    for lanes in crate::lower::variants::VECTOR_WIDTHS {
        crate::lower::variants::with_lanes(lanes, || {
            for bits in clforge_abi::PACKED_BITS {
                if v.helpers.contains(&crate::emit::expr::unpack_lanes_fn(bits)) {
                    v.packed_helpers.extend(crate::emit::expr::unpack_lanes_helper(bits));
                }
            }
        });
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
