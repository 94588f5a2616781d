//! The stencil's lines: the point update per addressing, wrapped coordinates.

use super::expr::{coord_name, linear, Access, Emitter};
use super::LineMarks;
use crate::ir::stencil::StencilBody;
use crate::lower::variants::LANES;
use crate::model::Boundary;

/// Printed statements longer than this break at the branches of a select chain.
const WIDTH: usize = 100;

/// Lines of a point update: `#line` where the Rust line changes, one `const` per `let`, and
/// the store of the result.
pub fn emit_body(k: &StencilBody, file: &str, access: Access, store: &dyn Fn(&str) -> String) -> Vec<String> {
    let em = Emitter { k, access };
    let mut marks = LineMarks::default();
    let mut lines = Vec::new();
    for l in &k.lets {
        let head = format!("const {} {} = ", em.ty(l.value.ty, l.value.varying), l.name);
        let mut value = em.broken(&l.value, WIDTH);
        if let Some(last) = value.last_mut() {
            last.push_str(&format!("; /* {} */", l.text));
        }
        lines.extend(marks.mark(l.line, file, value.len()));
        lines.push(format!("{head}{}", value[0]));
        lines.extend(value.drain(1..));
    }
    let vector = matches!(access, Access::Vector | Access::VectorInterior);
    let mut result = if vector && !k.result.varying {
        vec![format!("({}{LANES})({})", k.out.cl(), em.expr(&k.result))]
    } else {
        em.broken(&k.result, WIDTH)
    };
    lines.extend(marks.mark(k.result_line, file, result.len()));
    // The store wraps the whole value: `out[c] = v;` or `vstore8(v, 0, out + c);`.
    let first = result.remove(0);
    if result.is_empty() {
        lines.push(store(&first));
    } else {
        let joined = std::iter::once(first).chain(result).collect::<Vec<_>>().join("\n");
        lines.extend(store(&joined).split('\n').map(str::to_string));
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
        let (v, n) = (["x", "y", "z"][a], ["nx", "ny", "nz"][a]);
        for &d in &k.access.axis_offsets[a] {
            let name = coord_name(a, d);
            let shifted = linear(v, [d, 0, 0], "", "");
            let value = match k.boundary {
                Boundary::Periodic => format!("WRAP({shifted}, {n})"),
                _ if d > 0 => format!("min({shifted}, {n} - 1)"),
                _ => format!("max({shifted}, 0)"),
            };
            lines.push(format!("const int {name} = {value};"));
        }
    }
    lines
}
