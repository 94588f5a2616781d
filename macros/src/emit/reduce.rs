//! Reductions printed from the IR: the fold functions of each (operation, type), each
//! work-item's accumulators, the work-group fold after its points, and the fold kernels
//! (`ir::Role::Fold`) over the work-groups' partials.

use super::signature;
use crate::ir::stencil::{Reduction, StencilBody};
use crate::ir::Kernel;
use crate::model::{ReduceOp, Scalar};

/// One reduction output as the generated code names it.
pub struct Red<'a> {
    /// The kernel parameter it is written to (`out`, `out_1`, ...).
    pub param: &'a str,
    pub ty: Scalar,
    pub r: &'a Reduction,
}

/// The body's reduction outputs, in the outputs' order.
pub fn reductions(k: &StencilBody) -> Vec<Red<'_>> {
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

/// The generated function that folds a value (`lanes` > 1: the lanes of a `float8`, in order)
/// into a reduction's accumulator: `clforge_max_f32`, `clforge_fold8_sum_f64`, ...
pub fn reduce_fn(op: ReduceOp, ty: Scalar, lanes: usize) -> String {
    let fold = if lanes > 1 {
        format!("fold{lanes}_")
    } else {
        String::new()
    };
    format!("clforge_{fold}{}_{}", op.name(), ty.rust())
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
/// propagating, zeros ordered, integers wrapping like the host's) and, per width of the
/// program's vector kernels (`widths`), the lane-by-lane fold of a vector into an accumulator.
pub fn helpers(reds: &[Red<'_>], widths: &[usize]) -> Vec<String> {
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
        out.extend(scalar_fold(r.r.op, r.ty));
        for &width in widths {
            out.extend(vector_fold(r.r.op, r.ty, width));
        }
    }
    out
}

/// `T clforge_<op>_<ty>(a, b)`: NaN propagating, zeros ordered, integers wrapping.
fn scalar_fold(op: ReduceOp, ty: Scalar) -> Vec<String> {
    let t = ty.cl();
    let f = reduce_fn(op, ty, 1);
    let (bits, as_bits, as_t) = match ty {
        Scalar::F64 => ("ulong", "as_ulong", "as_double"),
        _ => ("uint", "as_uint", "as_float"),
    };
    let body = match (op, ty.is_float()) {
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
    vec![
        format!("{t} {f}(const {t} a, const {t} b)"),
        "{".into(),
        format!("    {body}"),
        "}".into(),
    ]
}

/// `T clforge_fold<width>_<op>_<ty>(acc, v, x, lo, hi)`: the lanes of `v` whose x lies in
/// `[lo, hi)` folded into `acc` in order.
fn vector_fold(op: ReduceOp, ty: Scalar, width: usize) -> Vec<String> {
    let t = ty.cl();
    let f = reduce_fn(op, ty, 1);
    let fold = reduce_fn(op, ty, width);
    let mut out = vec![
        format!("{t} {fold}({t} acc, const {t}{width} v, const int x, const int lo, const int hi)"),
        "{".into(),
    ];
    for i in 0..width {
        out.push(format!(
            "    if (x + {i} >= lo && x + {i} < hi) acc = {f}(acc, v.s{i:x});"
        ));
    }
    out.push("    return acc;".into());
    out.push("}".into());
    out
}

/// Each work-item's accumulators and each reduction's work-group array.
pub fn prologue(reds: &[Red<'_>]) -> Vec<String> {
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
pub fn epilogue(reds: &[Red<'_>]) -> Vec<String> {
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
        let f = reduce_fn(r.r.op, r.ty, 1);
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

/// A fold kernel (`ir::Role::Fold`) of reduction `r`: each work-group folds its chunk of the
/// partials into `result[group]` in a fixed order; the signature is the kernel's IR.
pub fn fold_kernel(kernel: &Kernel, r: &Red<'_>) -> Vec<String> {
    let t = r.ty.cl();
    let f = reduce_fn(r.r.op, r.ty, 1);
    let name = &kernel.name;
    vec![
        String::new(),
        format!(
            "/* {name}: the work-groups' partials of `{}` folded into one value, in a fixed order */",
            r.param
        ),
        "__kernel __attribute__((reqd_work_group_size(FOLD_ITEMS, 1, 1)))".to_string(),
        format!("void {name}({})", signature::params(&kernel.params).join(", ")),
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
    ]
}
