//! The stencil's lines: the point update per addressing, wrapped coordinates.

use super::c::{self, Op};
use super::expr::{coord_name, Access, Emitter};
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
    // A statement may span several lines (a broken select chain): the template indents each.
    let mut statement = |line: usize, text: String| {
        lines.extend(marks.mark(line, file, text.lines().count()));
        lines.extend(text.lines().map(str::to_string));
    };
    for l in &k.lets {
        let ty = em.ty(l.value.ty, l.value.varying);
        let value = em.value(&l.value, WIDTH).join("\n");
        statement(
            l.line,
            format!("const {ty} {} = {value}; /* {} */", l.name, super::comment(&l.text)),
        );
    }
    let vector = matches!(access, Access::Vector | Access::VectorInterior);
    let result = if vector && !k.result.varying {
        format!("({}{LANES})({})", k.out.cl(), em.expr(&k.result))
    } else {
        em.broken(&k.result, WIDTH).join("\n")
    };
    // The store wraps the whole value: `out[c] = v;` or `vstore8(v, 0, out + c);`.
    statement(k.result_line, store(&result));
    lines
}

/// A sweep's point update split for the walks: `update` reads the values of its off-chain lets
/// from `sw_pre_<name>` variables (`decls`), which `pre` computes for a point ahead of time. A
/// let is off the chain when it reads neither the swept field (`state`) nor a let that does:
/// its value does not wait for the `new` values, so the walk computes it for the next point
/// while the current one waits for its neighbours (the same operations, so the same bits).
pub struct SplitBody {
    pub decls: Vec<String>,
    pub pre: Vec<String>,
    pub update: Vec<String>,
}

fn reads_chain(e: &crate::ir::expr::Expr, state: usize, chained: &std::collections::HashSet<String>) -> bool {
    use crate::ir::expr::Op as K;
    match &e.op {
        K::Read { arg, .. } => *arg == state,
        K::Local(n) => chained.contains(n),
        K::Unary(_, a) | K::Cast(a, _) => reads_chain(a, state, chained),
        K::Binary(_, a, b) => reads_chain(a, state, chained) || reads_chain(b, state, chained),
        K::Call(_, args) => args.iter().any(|a| reads_chain(a, state, chained)),
        K::Select(a, b, d) => [a, b, d].iter().any(|x| reads_chain(x, state, chained)),
        K::Lit(_) | K::Member { .. } | K::ScalarArg(_) | K::Const(_) => false,
    }
}

/// [`emit_body`] split for a sweep's walks (see [`SplitBody`]); `coords` are the wrapped or
/// clamped coordinate lines the lets may use, repeated in `pre`.
pub fn emit_body_split(
    k: &StencilBody,
    file: &str,
    access: Access,
    store: &dyn Fn(&str) -> String,
    state: usize,
    coords: &[String],
) -> SplitBody {
    let em = Emitter { k, access };
    let mut chained = std::collections::HashSet::new();
    let mut off = Vec::new();
    for l in &k.lets {
        if reads_chain(&l.value, state, &chained) {
            chained.insert(l.name.clone());
        } else {
            off.push(l.name.clone());
        }
    }
    let mut split = SplitBody {
        decls: Vec::new(),
        pre: coords.to_vec(),
        update: Vec::new(),
    };
    if off.is_empty() {
        split.pre.clear();
        split.update = emit_body(k, file, access, store);
        return split;
    }
    let (mut pre_marks, mut marks) = (LineMarks::default(), LineMarks::default());
    let mut assigns = Vec::new();
    for l in &k.lets {
        let ty = em.ty(l.value.ty, l.value.varying);
        if off.contains(&l.name) {
            let value = em.value(&l.value, WIDTH).join("\n");
            let text = format!("const {ty} {} = {value}; /* {} */", l.name, super::comment(&l.text));
            split.pre.extend(pre_marks.mark(l.line, file, text.lines().count()));
            split.pre.extend(text.lines().map(str::to_string));
            assigns.push(format!("sw_pre_{} = {};", l.name, l.name));
            split.decls.push(format!("{ty} sw_pre_{};", l.name));
            split.update.push(format!("const {ty} {} = sw_pre_{};", l.name, l.name));
        } else {
            let value = em.value(&l.value, WIDTH).join("\n");
            let text = format!("const {ty} {} = {value}; /* {} */", l.name, super::comment(&l.text));
            split.update.extend(marks.mark(l.line, file, text.lines().count()));
            split.update.extend(text.lines().map(str::to_string));
        }
    }
    split.pre.extend(assigns);
    let result = em.broken(&k.result, WIDTH).join("\n");
    let text = store(&result);
    split
        .update
        .extend(marks.mark(k.result_line, file, text.lines().count()));
    split.update.extend(text.lines().map(str::to_string));
    split
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
            let shifted = match d {
                0 => c::var(v),
                d if d > 0 => c::bin(Op::Add, c::var(v), c::int(d.unsigned_abs() as usize)),
                d => c::bin(Op::Sub, c::var(v), c::int(d.unsigned_abs() as usize)),
            };
            let value = match k.boundary {
                Boundary::Periodic => c::call("WRAP", vec![shifted, c::var(n)]),
                _ if d > 0 => c::call("min", vec![shifted, c::bin(Op::Sub, c::var(n), c::int(1))]),
                _ => c::call("max", vec![shifted, c::int(0)]),
            };
            lines.push(c::stmt(&c::decl("int", coord_name(a, d), value)));
        }
    }
    lines
}
