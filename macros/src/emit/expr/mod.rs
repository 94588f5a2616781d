//! IR expressions -> OpenCL C text: a precedence printer (minimal parentheses) in two
//! modes, scalar (one point) and vector (`LANES` consecutive points along x as `float8`).
//! Grid reads are addressed per variant by [`Access`] (`read.rs`); a bit-packed lattice's
//! booleans are computed on whole words of sites (`bits.rs`).

mod bits;
mod read;

pub use bits::bits_window;
use bits::site_bit;
pub use read::{aligned_macros, packed_read, unpack_lanes_fn, unpack_lanes_helper};

use crate::ir::stencil::StencilBody;
use crate::ir::{Expr, Op as Kind};
use crate::model::{BinOp, MathFn, Scalar, UnOp};

/// How grid reads are addressed.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Global memory, one point: `psi[c + 1]`, or wrapped coordinates `psi[AT(x_p1, y, z)]`.
    Global,
    /// Global memory, `LANES` points: `vload8(0, psi + c + 1)`.
    Vector,
    /// Like `Global` at points whose neighbours all lie inside the grid: linear offsets from
    /// the centre even for wrapped or clamped boundaries (no coordinate arithmetic).
    Interior,
    /// Like `Vector` at interior rows.
    VectorInterior,
    /// Like `VectorInterior` where rows start at multiples of `LANES` points (`VEC_ALIGNED`):
    /// a grid that is not packed is read as the aligned vector of its row,
    /// `CLFORGE_AV(float8, psi, c + nx)`, and at an x offset from the lanes of that vector and
    /// the one beside it, `CLFORGE_AX_M1(float8, psi, c)` ([`aligned_macros`]), so that a GPU
    /// loads whole vectors where `vload8` of a `float*` is eight scalar loads.
    VectorAligned,
    /// Staged fields from the local tile `t_psi[t + 1]`; the others from global memory.
    Tiled,
    /// Staged fields from the march variant's ring of planes in local memory: the plane
    /// pointer of the read's z offset at the x/y offset, `t_psi_p1[t + 1]`; the others from
    /// global memory.
    March,
    /// The state field from the local buffer of the current step `s_cur[t + 1]`; the others
    /// from global memory.
    Steps,
    /// Like `Global`, except that reads of the swept field go through the strip schedule's
    /// `SW_STATE(dx, dy, index)`: a new value from the ring of recent values, from a strip above
    /// (another work-group's, through a volatile alias) or from global memory.
    Strip,
    /// Like `Global`, except that reads of a bit-packed lattice state are bits of the words the
    /// packed kernel loaded: the site's own `clforge_me` and, per offset, the window
    /// [`bits_window`] names; bit `clforge_b` is the site's.
    Bits,
}

pub struct Emitter<'a> {
    pub k: &'a StencilBody,
    pub access: Access,
    /// The lanes of the kernel being printed (1 for scalar code): its `ir::Kernel::lanes`.
    pub lanes: usize,
}

// C precedence, higher binds tighter.
const P_TERNARY: u8 = 2;
const P_UNARY: u8 = 13;
const P_ATOM: u8 = 15;

fn prec(op: BinOp) -> u8 {
    use BinOp::*;
    match op {
        Or => 3,
        And => 4,
        BitOr => 5,
        BitXor => 6,
        BitAnd => 7,
        Eq | Ne => 8,
        Lt | Le | Gt | Ge => 9,
        Shl | Shr => 10,
        Add | Sub => 11,
        Mul | Div | Rem => 12,
    }
}

fn op_text(op: BinOp) -> &'static str {
    use BinOp::*;
    match op {
        Add => "+",
        Sub => "-",
        Mul => "*",
        Div => "/",
        Rem => "%",
        And => "&&",
        Or => "||",
        BitAnd => "&",
        BitOr => "|",
        BitXor => "^",
        Shl => "<<",
        Shr => ">>",
        Eq => "==",
        Ne => "!=",
        Lt => "<",
        Le => "<=",
        Gt => ">",
        Ge => ">=",
    }
}

/// Whether evaluating `e` can neither trap nor cost more than a few instructions: no division,
/// remainder or math call anywhere in it.
fn cheap_and_total(e: &Expr) -> bool {
    match &e.op {
        Kind::Lit(_)
        | Kind::Read { .. }
        | Kind::Member { .. }
        | Kind::ScalarArg(_)
        | Kind::Local(_)
        | Kind::Const(_)
        | Kind::Point { .. } => true,
        Kind::Unary(_, x) | Kind::Cast(x, _) => cheap_and_total(x),
        Kind::Binary(op, l, r) => !matches!(op, BinOp::Div | BinOp::Rem) && cheap_and_total(l) && cheap_and_total(r),
        Kind::Select(c, a, b) => cheap_and_total(c) && cheap_and_total(a) && cheap_and_total(b),
        Kind::Call(..) => false,
    }
}

fn paren(text: String, p: u8, min: u8) -> String {
    if p < min {
        format!("({text})")
    } else {
        text
    }
}

/// `float8`: the vector type of a scalar, `vlanes` wide.
fn ty_vec(t: Scalar, vlanes: usize) -> String {
    format!("{}{vlanes}", t.cl())
}

/// Name of a wrapped/clamped coordinate: `x_p1`, `y_m2`.
pub fn coord_name(axis: usize, d: i64) -> String {
    let a = ["x", "y", "z"][axis];
    match d {
        0 => a.to_string(),
        d if d > 0 => format!("{a}_p{d}"),
        d => format!("{a}_m{}", -d),
    }
}

/// `c + 1 - nx`: the offset of a neighbour from the centre index with row stride `stride_y`.
pub fn linear(base: &str, offset: [i64; 3], stride_y: &str, stride_z: &str) -> String {
    let mut s = base.to_string();
    for (d, stride) in offset.iter().zip(["", stride_y, stride_z]) {
        if *d == 0 {
            continue;
        }
        let sign = if *d > 0 { " + " } else { " - " };
        let m = d.unsigned_abs();
        let term = match (stride, m) {
            ("", m) => m.to_string(),
            (st, 1) => st.to_string(),
            (st, m) => format!("{m} * {st}"),
        };
        s.push_str(sign);
        s.push_str(&term);
    }
    s
}

impl Emitter<'_> {
    /// A float zero literal as a zero the compiler cannot fold (`clforge_zero_f32()`, negated
    /// for `-0.0`), for the values a select chooses between and the `let`s that name them.
    /// PoCL (LLVM 15, x86) lowers a select between a value and a constant zero it is compared
    /// with, `x > -0.0f ? -0.0f : x` (vector `select` in f32, scalar too in f64), to
    /// `minps`/`minsd` with the operands swapped: +0.0 came out as -0.0 (difftest seed 7,
    /// stencil 170; tests/stencil/semantics.rs `zeros`). A volatile load (templates/common) keeps
    /// Rust's sign of zero; comparisons keep their constant.
    pub fn opaque_zero(&self, x: &Expr) -> Option<String> {
        match &x.op {
            Kind::Lit(s) if x.ty.is_float() && is_zero_literal(s) => {
                let zero = format!("clforge_zero_{}()", x.ty.rust());
                Some(if s.starts_with('-') { format!("-{zero}") } else { zero })
            }
            _ => None,
        }
    }

    fn vector(&self) -> bool {
        matches!(
            self.access,
            Access::Vector | Access::VectorInterior | Access::VectorAligned
        )
    }

    /// OpenCL type of a value: scalar, or `float8` when it varies across lanes.
    pub fn ty(&self, ty: Scalar, varying: bool) -> String {
        let vlanes = self.lanes;
        if self.vector() && varying {
            match ty {
                Scalar::Bool => format!("int{vlanes}"),
                t => format!("{}{vlanes}", t.cl()),
            }
        } else {
            ty.cl().to_string()
        }
    }

    pub fn expr(&self, e: &Expr) -> String {
        self.print(e).0
    }

    /// A value as stored in a variable of type [`Self::ty`]: a varying bool is an `int8` mask
    /// whatever width its comparison gave.
    pub fn value(&self, e: &Expr, width: usize) -> Vec<String> {
        if self.vector() && e.varying && e.ty == Scalar::Bool {
            vec![self.mask_as(e, 32)]
        } else {
            self.broken(e, width)
        }
    }

    /// An expression as a statement's right-hand side, broken into lines when long: a scalar
    /// `if`/`match` chain reads as one branch per line (`c1 ? a` / `: c2 ? b` / `: d`).
    pub fn broken(&self, e: &Expr, width: usize) -> Vec<String> {
        let whole = self.expr(e);
        if whole.len() <= width || (self.vector() && e.varying) {
            return vec![whole];
        }
        let mut pieces = Vec::new();
        let mut cur = e;
        while let Kind::Select(c, a, b) = &cur.op {
            if self.vector() && cur.varying {
                break;
            }
            let (ct, cp) = self.print(c);
            let a = self.widen(a, cur.ty, false);
            pieces.push(format!(
                "{} ? {}",
                paren(ct, cp, P_TERNARY + 1),
                paren(a.0, a.1, P_TERNARY + 1)
            ));
            cur = b;
        }
        if pieces.is_empty() {
            return vec![whole];
        }
        let (last, p) = self.widen(cur, e.ty, false);
        pieces.push(paren(last, p, P_TERNARY));
        let mut lines = vec![pieces[0].clone()];
        lines.extend(pieces[1..].iter().map(|p| format!("    : {p}")));
        lines
    }

    /// Bits of a vector mask: comparisons of `float8` give `int8`, of `uchar8` give `char8`;
    /// operators on masks keep the bits their operands agree on (else 32, see [`Self::pair_bits`]).
    fn mask_bits(&self, e: &Expr) -> u32 {
        match &e.op {
            Kind::Binary(op, l, r) if op.is_comparison() && l.ty == Scalar::Bool => self.pair_bits(l, r),
            Kind::Binary(op, l, _) if op.is_comparison() => l.ty.bits(),
            Kind::Binary(op, l, r) if op.is_logical() || l.ty == Scalar::Bool => self.pair_bits(l, r),
            Kind::Unary(UnOp::Not, x) => self.mask_bits(x),
            _ => 32,
        }
    }

    /// The mask width two bool operands are combined in: the varying ones' if they agree, else 32.
    fn pair_bits(&self, l: &Expr, r: &Expr) -> u32 {
        match (l.varying, r.varying) {
            (true, true) => match (self.mask_bits(l), self.mask_bits(r)) {
                (a, b) if a == b => a,
                _ => 32,
            },
            (true, false) => self.mask_bits(l),
            (false, true) => self.mask_bits(r),
            _ => 32,
        }
    }

    fn mask_type(bits: u32) -> &'static str {
        match bits {
            8 => "char",
            16 => "short",
            64 => "long",
            _ => "int",
        }
    }

    /// A vector mask converted to `bits`-wide lanes.
    fn mask_as(&self, e: &Expr, bits: u32) -> String {
        self.mask_as_p(e, bits).0
    }

    /// [`Self::mask_as`] with the precedence of the text, for an operand of an operator.
    fn mask_as_p(&self, e: &Expr, bits: u32) -> (String, u8) {
        let vlanes = self.lanes;
        let (text, p) = self.print(e);
        if !e.varying {
            let t = Self::mask_type(bits);
            return (format!("(({t}{vlanes})(({text}) ? -1 : 0))"), P_ATOM);
        }
        if self.mask_bits(e) == bits {
            (text, p)
        } else {
            (format!("convert_{}{vlanes}({text})", Self::mask_type(bits)), P_ATOM)
        }
    }

    /// A uniform operand used in a vector expression: broadcast where OpenCL would not.
    fn widen(&self, e: &Expr, ty: Scalar, force: bool) -> (String, u8) {
        let vlanes = self.lanes;
        let (text, p) = self.print(e);
        if !self.vector() || e.varying {
            return (text, p);
        }
        if force {
            return (format!("({}{vlanes})({text})", ty.cl()), P_ATOM);
        }
        // Integer literals and constants are `int` in OpenCL, and C computes `uchar`
        // arithmetic in `int`: give uniform integer operands the lane type (a `uchar8`
        // operator refuses an `int` scalar).
        let untyped = !matches!(
            e.op,
            Kind::Read { .. } | Kind::Local(_) | Kind::ScalarArg(_) | Kind::Member { .. }
        ) && !ty.is_float()
            && ty != Scalar::I32
            && ty != Scalar::Bool;
        if untyped {
            (format!("({}){}", ty.cl(), paren(text, p, P_UNARY)), P_UNARY)
        } else {
            (text, p)
        }
    }

    fn print(&self, e: &Expr) -> (String, u8) {
        if matches!(e.op, Kind::Unary(..) | Kind::Binary(..)) {
            if let Some(w) = self.word_expr(e, 0) {
                return (site_bit(&w), P_UNARY);
            }
        }
        if matches!(e.op, Kind::Binary(BinOp::Add, ..)) {
            if let Some((count, _)) = self.count_expr(e, 0) {
                return (format!("({})clforge_count_at({count}, clforge_b)", e.ty.cl()), P_UNARY);
            }
        }
        let vec_expr = self.vector() && e.varying;
        match &e.op {
            Kind::Lit(s) => (s.clone(), if s.starts_with('-') { P_UNARY } else { P_ATOM }),
            Kind::Read { arg, offset } => self.read(*arg, *offset),
            Kind::Member { arg, member } => (format!("{}->{member}", self.k.arg_names[*arg]), P_ATOM),
            Kind::ScalarArg(i) => (self.k.arg_names[*i].clone(), P_ATOM),
            Kind::Local(n) | Kind::Const(n) => (n.clone(), P_ATOM),
            Kind::Point { axis, extent: true } => (["gnx", "gny", "gnz"][*axis].to_string(), P_ATOM),
            Kind::Point { axis, extent: false } => (self.point(*axis), P_ATOM),
            Kind::Unary(op, x) => {
                let (t, p) = self.print(x);
                // `- -x` must not print as `--x`.
                let t = if t.starts_with('-') {
                    format!("({t})")
                } else {
                    paren(t, p, P_UNARY)
                };
                match (op, x.ty) {
                    (UnOp::Not, Scalar::Bool) => (format!("!{t}"), P_UNARY),
                    // Rust wraps (`-i32::MIN == i32::MIN`); C's signed overflow is undefined.
                    (UnOp::Neg, Scalar::I32) => {
                        self.wrapping_i32(&format!("-{}", self.as_uint(&t, vec_expr)), vec_expr)
                    }
                    // `~` promotes `uchar` to `int`: back to 8 bits.
                    (UnOp::Not, Scalar::U8) if !vec_expr => (format!("(uchar)~{t}"), P_UNARY),
                    (UnOp::Not, _) => (format!("~{t}"), P_UNARY),
                    (UnOp::Neg, _) => (format!("-{t}"), P_UNARY),
                }
            }
            Kind::Binary(op, l, r) => self.binary(*op, l, r, e),
            Kind::Cast(x, ty) => self.cast(x, *ty, vec_expr),
            Kind::Call(f, args) => self.call(*f, args, e),
            Kind::Select(c, a, b) => {
                let operand = |x: &Expr| {
                    if vec_expr && e.ty == Scalar::Bool {
                        (self.mask_as(x, 32), P_ATOM)
                    } else if let Some(zero) = self.opaque_zero(x) {
                        if vec_expr {
                            (format!("({})({zero})", self.ty(e.ty, true)), P_ATOM)
                        } else {
                            (zero, P_UNARY)
                        }
                    } else {
                        self.widen(x, e.ty, vec_expr)
                    }
                };
                if vec_expr && c.varying {
                    let a = operand(a).0;
                    let b = operand(b).0;
                    let m = self.mask_as(c, e.ty.bits());
                    (format!("select({b}, {a}, {m})"), P_ATOM)
                } else {
                    let (ct, cp) = self.print(c);
                    let a = operand(a);
                    let b = operand(b);
                    // Right-associative: `c1 ? a : c2 ? b : d` reads as an else-if chain.
                    (
                        format!(
                            "{} ? {} : {}",
                            paren(ct, cp, P_TERNARY + 1),
                            paren(a.0, a.1, P_TERNARY + 1),
                            paren(b.0, b.1, P_TERNARY)
                        ),
                        P_TERNARY,
                    )
                }
            }
        }
    }

    fn binary(&self, op: BinOp, l: &Expr, r: &Expr, e: &Expr) -> (String, u8) {
        let vlanes = self.lanes;
        use BinOp::*;
        let vec_expr = self.vector() && e.varying;
        if op == Rem && l.ty.is_float() {
            if vec_expr {
                // Lane by lane: PoCL's `fmod` on `double8` gives wrong lanes (measured: -296.53 % 3.5
                // gave -1.5); GPUs compute lanes one by one anyway. The lowering names both operands.
                let lane = |x: &Expr, i: usize| {
                    let (t, p) = self.print(x);
                    if x.varying {
                        format!("{}.s{i}", paren(t, p, P_ATOM))
                    } else {
                        t
                    }
                };
                let lanes: Vec<String> = (0..vlanes)
                    .map(|i| format!("fmod({}, {})", lane(l, i), lane(r, i)))
                    .collect();
                return (format!("({})({})", ty_vec(l.ty, self.lanes), lanes.join(", ")), P_ATOM);
            }
            let args = [l, r].map(|x| self.widen(x, l.ty, vec_expr).0);
            return (format!("fmod({}, {})", args[0], args[1]), P_ATOM);
        }
        let p = prec(op);
        // Bools in vector code are masks (-1/0 lanes) beside uniform 0/1 values: combine them
        // as masks of one width. `false < true`, but mask `true` (-1) < mask `false` (0).
        if vec_expr && (op.is_logical() || l.ty == Scalar::Bool) {
            let bits = self.pair_bits(l, r);
            let (a, b) = (self.mask_as_p(l, bits), self.mask_as_p(r, bits));
            let (a, b) = if matches!(op, Lt | Le | Gt | Ge) {
                (b, a)
            } else {
                (a, b)
            };
            return (
                format!("{} {} {}", paren(a.0, a.1, p), op_text(op), paren(b.0, b.1, p + 1)),
                p,
            );
        }
        let shift = matches!(op, Shl | Shr);
        // OpenCL shifts a vector by a vector, never a scalar by a vector: broadcast the value.
        let (lt, lp) = self.widen(l, l.ty, shift && vec_expr && r.varying);
        let (rt, rp) = if shift && vec_expr && r.ty != l.ty {
            // OpenCL shifts a vector by a vector or scalar of its own element type.
            if r.varying {
                (format!("convert_{}{vlanes}({})", l.ty.cl(), self.expr(r)), P_ATOM)
            } else {
                let (t, p) = self.print(r);
                (format!("({}){}", l.ty.cl(), paren(t, p, P_UNARY)), P_UNARY)
            }
        } else if shift {
            self.print(r)
        } else {
            // Printed once: printing twice per level is exponential in the nesting.
            self.widen(r, l.ty, false)
        };
        // Shift amounts wrap at the bit width as in Rust's release builds; OpenCL masks by
        // the promoted width (32 for a scalar `uchar`), so `u8` masks by hand.
        let (rt, rp) = if shift && l.ty == Scalar::U8 {
            let amount = paren(rt, rp, prec(BitAnd) + 1);
            match (vec_expr, r.varying) {
                (true, true) => (format!("({amount} & (uchar)7)"), P_ATOM),
                (true, false) => (format!("(uchar)({amount} & 7)"), P_UNARY),
                _ => (format!("{amount} & 7"), prec(BitAnd)),
            }
        } else {
            (rt, rp)
        };
        match (op, l.ty) {
            // Rust wraps on overflow (release builds); C's signed overflow is undefined.
            (Add | Sub | Mul | Shl, Scalar::I32) => {
                let operand = |x: &Expr| self.as_uint(&self.widen(x, Scalar::I32, vec_expr).0, vec_expr);
                let b = match op {
                    Shl if vec_expr && r.varying => self.as_uint(&rt, true),
                    Shl => paren(rt, rp, p + 1),
                    _ => operand(r),
                };
                self.wrapping_i32(&format!("{} {} {b}", operand(l), op_text(op)), vec_expr)
            }
            // `uchar` arithmetic is done in `int`: back to 8 bits.
            (Add | Sub | Mul | Shl, Scalar::U8) if !vec_expr => (
                format!("(uchar)({} {} {})", paren(lt, lp, p), op_text(op), paren(rt, rp, p + 1)),
                P_UNARY,
            ),
            // The packed lattice kernel runs 32 sites per work-item: a short-circuit `||` / `&&`
            // is a divergent branch per site there. Both operands are 0/1 `int`s, so `|` / `&`
            // give the same value, evaluating the right side always: done where that side cannot
            // trap or cost (no division, remainder or call).
            (And | Or, _) if self.access == Access::Bits && cheap_and_total(r) => {
                let op = if op == And { BitAnd } else { BitOr };
                let p = prec(op);
                (
                    format!("{} {} {}", paren(lt, lp, p), op_text(op), paren(rt, rp, p + 1)),
                    p,
                )
            }
            _ => (
                format!("{} {} {}", paren(lt, lp, p), op_text(op), paren(rt, rp, p + 1)),
                p,
            ),
        }
    }

    /// `as_uint(x)` (or `as_uint8`) around an `int` operand printed as `text`.
    fn as_uint(&self, text: &str, vector: bool) -> String {
        let vlanes = self.lanes;
        if vector {
            format!("as_uint{vlanes}({text})")
        } else {
            format!("as_uint({text})")
        }
    }

    /// `as_int(<unsigned arithmetic>)`: Rust's wrapping `i32` arithmetic.
    fn wrapping_i32(&self, unsigned: &str, vector: bool) -> (String, u8) {
        let vlanes = self.lanes;
        if vector {
            (format!("as_int{vlanes}({unsigned})"), P_ATOM)
        } else {
            (format!("as_int({unsigned})"), P_ATOM)
        }
    }

    /// Rust's `as`: float to integer saturates (NaN gives 0), `u32` to `i32` reinterprets
    /// the bits, other integer casts keep the low bits, bools are 0 or 1.
    fn cast(&self, x: &Expr, ty: Scalar, vec_expr: bool) -> (String, u8) {
        let vlanes = self.lanes;
        let from = x.ty;
        if vec_expr {
            let t = format!("{}{vlanes}", ty.cl());
            if from == Scalar::Bool {
                let m = self.mask_as(x, ty.bits());
                return (format!("select(({t})(0), ({t})(1), {m})"), P_ATOM);
            }
            let (inner, p) = self.print(x);
            return match (from, ty) {
                (f, t) if f == t => (inner, p),
                // NaN is 0 in Rust and in OpenCL's saturated conversion, but NVIDIA's gives
                // 2^31 for `uint` (measured on the H100): test it first.
                (f, t) if f.is_float() && !t.is_float() => (
                    format!(
                        "select(convert_{tv}_sat({inner}), ({tv})(0), convert_{m}{vlanes}(isnan({inner})))",
                        tv = ty_vec(t, self.lanes),
                        m = Self::mask_type(t.bits())
                    ),
                    P_ATOM,
                ),
                (Scalar::U32, Scalar::I32) => (format!("as_int{vlanes}({inner})"), P_ATOM),
                _ => (format!("convert_{t}({inner})"), P_ATOM),
            };
        }
        let (t, p) = self.print(x);
        match (from, ty) {
            (f, t2) if f == t2 => (t, p),
            (f, t2) if f.is_float() && !t2.is_float() => {
                (format!("isnan({t}) ? 0 : convert_{}_sat({t})", t2.cl()), P_TERNARY)
            }
            (Scalar::U32, Scalar::I32) => (format!("as_int({t})"), P_ATOM),
            _ => (format!("({}){}", ty.cl(), paren(t, p, P_UNARY)), P_UNARY),
        }
    }

    fn call(&self, f: MathFn, args: &[Expr], e: &Expr) -> (String, u8) {
        let vlanes = self.lanes;
        use MathFn::*;
        let float = e.ty.is_float();
        let name = match f {
            Abs if float => "fabs",
            Abs => "abs",
            Min if float => "fmin",
            Max if float => "fmax",
            Min => "min",
            Max => "max",
            Sqrt => "sqrt",
            Cbrt => "cbrt",
            Exp => "exp",
            Ln => "log",
            Log10 => "log10",
            Log2 => "log2",
            Sin => "sin",
            Cos => "cos",
            Tan => "tan",
            Tanh => "tanh",
            Atan => "atan",
            Atan2 => "atan2",
            Hypot => "hypot",
            Powf => "pow",
            // Rust's algorithm, not OpenCL's `pown` (templates/common: `rust_math`).
            Powi if e.ty == Scalar::F64 => "clforge_powi_f64",
            Powi => "clforge_powi_f32",
            Floor => "floor",
            Ceil => "ceil",
            Round => "round",
            MulAdd => "fma",
            Clamp => "clamp",
            Recip => "native_recip",
        };
        let vec_expr = self.vector() && e.varying;
        let texts: Vec<String> = args
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let ty = if f == Powi && i == 1 { Scalar::I32 } else { e.ty };
                let (t, p) = self.widen(a, ty, vec_expr);
                // Integer builtins (`min`, `max`, `clamp`) are overloaded per type: an `int`
                // literal or a promoted `uchar` expression beside a `uchar` makes the call
                // ambiguous. Scalars get the call's type.
                let leaf = matches!(
                    a.op,
                    Kind::Read { .. } | Kind::Local(_) | Kind::ScalarArg(_) | Kind::Member { .. }
                );
                if !float && !vec_expr && !leaf && ty == e.ty && ty != Scalar::I32 {
                    format!("({}){}", ty.cl(), paren(t, p, P_UNARY))
                } else {
                    t
                }
            })
            .collect();
        if f.lane_by_lane() && vec_expr {
            // Lane by lane: PoCL's `pown` on `double8` gives wrong exponents for negative `n`
            // (measured: pown(15, -2) gave 256/225), like its `fmod`.
            let lane = |x: &Expr, i: usize| {
                let (t, p) = self.print(x);
                if x.varying {
                    format!("{}.s{i}", paren(t, p, P_ATOM))
                } else {
                    t
                }
            };
            let lane_fn = if f.nan_passing() {
                format!("clforge_{name}_{}", if e.ty == Scalar::F64 { "f64" } else { "f32" })
            } else {
                name.to_string()
            };
            let lanes: Vec<String> = (0..vlanes)
                .map(|i| {
                    let a: Vec<String> = args.iter().map(|x| lane(x, i)).collect();
                    format!("{lane_fn}({})", a.join(", "))
                })
                .collect();
            return (format!("({})({})", ty_vec(e.ty, self.lanes), lanes.join(", ")), P_ATOM);
        }
        let call = format!("{name}({})", texts.join(", "));
        // Through helpers that pass NaN through: PoCL's `round`, `floor`, `ceil` gave 0 (and 2),
        // its `exp` 0.27, for a NaN its compiler can see (a NaN constant; long difftest runs,
        // stencils 101760 and 103699). Every one-argument function returns NaN for NaN in Rust.
        if f.nan_passing() {
            let ty = if e.ty == Scalar::F64 { "f64" } else { "f32" };
            let lanes = if vec_expr { format!("x{vlanes}") } else { String::new() };
            return (format!("clforge_{name}_{ty}{lanes}({})", texts.join(", ")), P_ATOM);
        }
        // Rust's `i32::abs` wraps (`i32::MIN.abs() == i32::MIN` in release builds): a helper
        // in unsigned arithmetic (templates/common: `rust_math`), not OpenCL's `abs`, whose
        // INT_MIN PoCL treats as poison.
        if f == Abs && !float {
            let helper = if vec_expr {
                format!("clforge_abs_i32x{vlanes}")
            } else {
                "clforge_abs_i32".to_string()
            };
            return (format!("{helper}({})", texts.join(", ")), P_ATOM);
        }
        (call, P_ATOM)
    }
}

/// Whether a float literal's text is a zero of either sign (`0.0f`, `-0.0`, `0e3f`).
fn is_zero_literal(text: &str) -> bool {
    text.trim_end_matches(['f', 'F']).parse::<f64>().is_ok_and(|v| v == 0.0)
}
