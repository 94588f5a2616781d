//! The stencil's lines: the point update per addressing, wrapped coordinates.

use super::c::{self, Op};
use super::expr::{coord_name, Access, Emitter};
use super::reduce::reduce_fn;
use super::LineMarks;
use crate::ir::stencil::StencilBody;
use crate::model::{Boundary, Scalar};

/// Printed statements longer than this break at the branches of a select chain.
const WIDTH: usize = 100;

/// Lines of a point update: `#line` where the Rust line changes, one `const` per `let`, and
/// the store of the result, for a kernel of `lanes` lanes (1: scalar code).
pub fn emit_body(
    k: &StencilBody,
    file: &str,
    access: Access,
    lanes: usize,
    store: &dyn Fn(&str) -> String,
) -> Vec<String> {
    emit_outputs(k, file, access, lanes, &|_, v| store(v))
}

/// [`emit_body`] for every output of a system of fields: `store(name, value)` writes output
/// `name` (`out`, then the outputs' own names in order).
pub fn emit_outputs(
    k: &StencilBody,
    file: &str,
    access: Access,
    lanes: usize,
    store: &dyn Fn(&str, &str) -> String,
) -> Vec<String> {
    let vlanes = lanes;
    let em = Emitter { k, access, lanes };
    let mut marks = LineMarks::default();
    let mut lines = Vec::new();
    // A statement may span several lines (a broken select chain): the template indents each.
    let mut statement = |line: usize, text: String| {
        lines.extend(marks.mark(line, file, text.lines().count()));
        lines.extend(text.lines().map(str::to_string));
    };
    for l in &k.lets {
        let ty = em.ty(l.value.ty, l.value.varying);
        // A zero a select may return (see `Emitter::opaque_zero`).
        let value = match em.opaque_zero(&l.value) {
            Some(zero) => zero,
            None => em.value(&l.value, WIDTH).join("\n"),
        };
        statement(
            l.line,
            format!("const {ty} {} = {value}; /* {} */", l.name, super::comment(&l.text)),
        );
    }
    let vector = matches!(access, Access::Vector | Access::VectorInterior | Access::VectorAligned);
    let outputs = std::iter::once(("out", k.out, &k.result, &k.out_reduce))
        .chain(k.more.iter().map(|o| (o.name.as_str(), o.ty, &o.result, &o.reduce)));
    for (name, ty, result, reduce) in outputs {
        let value = if vector && !result.varying {
            format!("({}{vlanes})({})", ty.cl(), em.expr(result))
        } else {
            em.broken(result, WIDTH).join("\n")
        };
        // The store wraps the whole value: `out[c] = v;` or `vstore8(v, 0, out + c);`; a
        // reduction folds it into the work-item's accumulator (a vector's lanes in order).
        let text = match reduce {
            // Only the points of the reduction's box count (a split grid's halo planes do not).
            Some(r) if vector => {
                let f = reduce_fn(r.op, ty, vlanes);
                format!(
                    "{} = IN_REDUCED_YZ(y, z) ? {f}({}, {value}, x, rx0, rx1) : {};",
                    r.acc, r.acc, r.acc
                )
            }
            Some(r) => {
                let f = reduce_fn(r.op, ty, 1);
                format!("{} = IN_REDUCED(x, y, z) ? {f}({}, {value}) : {};", r.acc, r.acc, r.acc)
            }
            None => store(name, &value),
        };
        statement(k.result_line, text);
    }
    lines
}

/// The store of a scalar kernel: `out[c] = v;`.
pub fn store_scalar(out: &str, value: &str) -> String {
    format!("{out}[c] = {value};")
}

/// The store of a vector kernel of `lanes` lanes: `vstore8(v, 0, out + c);`.
pub fn store_vector(out: &str, value: &str, lanes: usize) -> String {
    format!("vstore{lanes}({value}, 0, {out} + c);")
}

/// The store of a vector kernel at an aligned row position, a whole vector of `ty`:
/// `*(__global float8*)(out + c) = v;`.
pub fn store_aligned(out: &str, value: &str, ty: Scalar, lanes: usize) -> String {
    format!("*(__global {}{lanes}*)({out} + c) = {value};", ty.cl())
}

/// The steps variant's store into the next step's local buffer: `s_next[t] = v;`.
pub fn store_steps(value: &str) -> String {
    format!("s_next[t] = {value};")
}

/// The value a tiled kernel stages for grid point `(gx, gy, gz)` of grid `name`: the point
/// itself, or a packed grid's point unpacked (`bits` per point, the tile holds one value).
pub fn staged_load(name: &str, packed: Option<u32>, elem: Scalar) -> String {
    match packed {
        Some(bits) => super::expr::packed_read(name, "AT(gx, gy, gz)", bits, elem),
        None => format!("{name}[AT(gx, gy, gz)]"),
    }
}

/// The march variant's plane pointers at plane `z`: per staged grid and per z offset `dz` it
/// is read at, `__local const float* t_psi_m1 = t_psi + MARCH_SLOT(z - 1);`, the ring slot that
/// holds plane `z + dz` (reads then print a 2-D offset from it, `Access::March`).
pub fn emit_march_planes(k: &StencilBody) -> Vec<String> {
    let mut lines = Vec::new();
    for ((a, tile), planes) in k.args.iter().zip(&k.tile_names).zip(&k.plane_names) {
        let crate::model::Arg::Field(f) = a else { continue };
        for (dz, plane) in planes {
            let z = match *dz {
                0 => c::var("z"),
                d if d > 0 => c::bin(Op::Add, c::var("z"), c::int(d.unsigned_abs() as usize)),
                d => c::bin(Op::Sub, c::var("z"), c::int(d.unsigned_abs() as usize)),
            };
            lines.push(c::stmt(&c::S::Decl {
                konst: false,
                ty: format!("__local const {}*", f.elem.cl()),
                vars: vec![(
                    plane.clone(),
                    c::bin(Op::Add, c::var(tile), c::call("MARCH_SLOT", vec![z])),
                )],
                comment: None,
            }));
        }
    }
    lines
}

/// Wrapped or clamped neighbour coordinates for periodic/clamp boundaries (`x_p1`, ...).
pub fn emit_coords(k: &StencilBody, axes: std::ops::Range<usize>) -> Vec<String> {
    let mut lines = Vec::new();
    if k.boundary == Boundary::Fixed {
        return lines;
    }
    for a in axes {
        for &d in &k.access.axis_offsets[a] {
            lines.push(c::stmt(&c::decl(
                "int",
                coord_name(a, d),
                neighbour_coord(a, d, k.boundary),
            )));
        }
    }
    lines
}

/// Coordinate `v + d` along `axis` with the boundary applied: wrapped (periodic), clamped to the
/// edge (clamp), or as is (fixed: reads never leave the grid).
pub fn neighbour_coord(axis: usize, d: i64, boundary: Boundary) -> c::E {
    let (v, n) = (["x", "y", "z"][axis], ["nx", "ny", "nz"][axis]);
    let shifted = match d {
        0 => return c::var(v),
        d if d > 0 => c::bin(Op::Add, c::var(v), c::int(d.unsigned_abs() as usize)),
        d => c::bin(Op::Sub, c::var(v), c::int(d.unsigned_abs() as usize)),
    };
    match boundary {
        Boundary::Periodic => c::call("WRAP", vec![shifted, c::var(n)]),
        Boundary::Fixed => shifted,
        _ if d > 0 => c::call("min", vec![shifted, c::bin(Op::Sub, c::var(n), c::int(1))]),
        _ => c::call("max", vec![shifted, c::int(0)]),
    }
}
