//! A generated stencil as a tree — types, expressions, blocks, arguments — and its printing as
//! Rust. The printer follows Rust's precedence (parentheses only where Rust needs them), so the
//! macro's own C precedence printer meets `a & b == c`, `-x as u8` and `x as i32 < y` as a
//! user would write them.

use std::fmt::Write;

/// The scalar types of the stencil language.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ty {
    F32,
    F64,
    I32,
    U32,
    U8,
    Bool,
}

impl Ty {
    pub const NUMERIC: [Ty; 5] = [Ty::F32, Ty::F64, Ty::I32, Ty::U32, Ty::U8];

    pub fn rust(self) -> &'static str {
        match self {
            Ty::F32 => "f32",
            Ty::F64 => "f64",
            Ty::I32 => "i32",
            Ty::U32 => "u32",
            Ty::U8 => "u8",
            Ty::Bool => "bool",
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, Ty::F32 | Ty::F64)
    }

    pub fn is_int(self) -> bool {
        matches!(self, Ty::I32 | Ty::U32 | Ty::U8)
    }

    pub fn bits(self) -> u32 {
        match self {
            Ty::F64 => 64,
            Ty::U8 => 8,
            _ => 32,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    And,
    Or,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

// Rust's precedence, higher binds tighter.
const P_OR: u8 = 1;
const P_AND: u8 = 2;
const P_CMP: u8 = 3;
const P_CAST: u8 = 10;
const P_UNARY: u8 = 11;
const P_ATOM: u8 = 12;
/// `if`, `match` and blocks: parenthesised wherever an operand is printed.
const P_BLOCK: u8 = 0;

impl Op {
    pub fn text(self) -> &'static str {
        match self {
            Op::Add => "+",
            Op::Sub => "-",
            Op::Mul => "*",
            Op::Div => "/",
            Op::Rem => "%",
            Op::And => "&&",
            Op::Or => "||",
            Op::BitAnd => "&",
            Op::BitOr => "|",
            Op::BitXor => "^",
            Op::Shl => "<<",
            Op::Shr => ">>",
            Op::Eq => "==",
            Op::Ne => "!=",
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
        }
    }

    fn prec(self) -> u8 {
        match self {
            Op::Or => P_OR,
            Op::And => P_AND,
            Op::Eq | Op::Ne | Op::Lt | Op::Le | Op::Gt | Op::Ge => P_CMP,
            Op::BitOr => 4,
            Op::BitXor => 5,
            Op::BitAnd => 6,
            Op::Shl | Op::Shr => 7,
            Op::Add | Op::Sub => 8,
            Op::Mul | Op::Div | Op::Rem => 9,
        }
    }

    pub fn is_cmp(self) -> bool {
        self.prec() == P_CMP
    }
}

/// The math methods of the stencil language (the macro's `MathFn`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Func {
    Abs,
    Sqrt,
    Cbrt,
    Exp,
    Ln,
    Log10,
    Log2,
    Sin,
    Cos,
    Tan,
    Tanh,
    Atan,
    Atan2,
    Hypot,
    Powf,
    Powi,
    Min,
    Max,
    Floor,
    Ceil,
    Round,
    MulAdd,
    Clamp,
    Recip,
}

impl Func {
    pub fn name(self) -> &'static str {
        match self {
            Func::Abs => "abs",
            Func::Sqrt => "sqrt",
            Func::Cbrt => "cbrt",
            Func::Exp => "exp",
            Func::Ln => "ln",
            Func::Log10 => "log10",
            Func::Log2 => "log2",
            Func::Sin => "sin",
            Func::Cos => "cos",
            Func::Tan => "tan",
            Func::Tanh => "tanh",
            Func::Atan => "atan",
            Func::Atan2 => "atan2",
            Func::Hypot => "hypot",
            Func::Powf => "powf",
            Func::Powi => "powi",
            Func::Min => "min",
            Func::Max => "max",
            Func::Floor => "floor",
            Func::Ceil => "ceil",
            Func::Round => "round",
            Func::MulAdd => "mul_add",
            Func::Clamp => "clamp",
            Func::Recip => "recip",
        }
    }

    /// Error bound in ulp for the functions that are not correctly rounded on either side: the
    /// OpenCL 1.2 full profile's bound (table 7.1, the larger of `float` and `double`) plus
    /// 2 ulp for Rust's libm. `None`: exactly rounded in both (IEEE 754 basic operations).
    pub fn ulp_bound(self) -> Option<u32> {
        let spec = match self {
            Func::Exp | Func::Ln | Func::Log10 | Func::Log2 => 3,
            Func::Sin | Func::Cos => 4,
            Func::Tan | Func::Tanh | Func::Atan => 5,
            Func::Atan2 => 6,
            Func::Cbrt => 2,
            Func::Hypot => 4,
            Func::Powf | Func::Powi => 16,
            _ => return None,
        };
        Some(spec + 2)
    }
}

/// How a call is written: `x.sqrt()` or `f32::sqrt(x)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallForm {
    Method,
    Path(Ty),
}

#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    /// A literal as written (`1.5f32`, `-0.0`, `0xff_u8`, `true`).
    Lit(String),
    /// `grid.at(dx, dy, dz)`: the argument's index, the offset and how each offset is spelled.
    Read(usize, [i64; 3], [OffsetForm; 3]),
    /// A scalar argument.
    Arg(usize),
    /// `p.field`: the params argument and the field.
    Member(usize, usize),
    /// A named constant (`K0`, `consts::K1`, `f32::MAX`).
    Const(String),
    Local(String),
    Neg(Box<Expr>),
    Not(Box<Expr>),
    Bin(Op, Box<Expr>, Box<Expr>),
    Cast(Box<Expr>, Ty),
    Call(Func, Vec<Expr>, CallForm),
    If(Box<Expr>, Block, Block),
    /// Arms: patterns (empty: `_`) and bodies; the last arm is `_`.
    Match(Box<Expr>, Vec<(Vec<String>, Block)>),
    Block(Block),
    /// Redundant parentheses the user wrote.
    Paren(Box<Expr>),
}

/// How a read's offset literal is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum OffsetForm {
    #[default]
    Plain,
    Paren,
    Suffixed,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub ty: Ty,
    /// Rust knows the type without context (a suffixed literal, a read, ...): it may be a
    /// method receiver, a cast operand or the left side that decides a binary operation.
    pub typed: bool,
    pub kind: Kind,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Let {
    pub name: String,
    pub ann: Option<Ty>,
    pub value: Expr,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub lets: Vec<Let>,
    pub tail: Box<Expr>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Boundary {
    Fixed,
    Periodic,
    Clamp,
}

impl Boundary {
    pub fn name(self) -> &'static str {
        match self {
            Boundary::Fixed => "fixed",
            Boundary::Periodic => "periodic",
            Boundary::Clamp => "clamp",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Arg {
    Grid { name: String, elem: Ty },
    Scalar { name: String, ty: Ty },
    Params { name: String, fields: Vec<(String, Ty)> },
}

impl Arg {
    pub fn name(&self) -> &str {
        match self {
            Arg::Grid { name, .. } | Arg::Scalar { name, .. } | Arg::Params { name, .. } => name,
        }
    }
}

/// A user constant: `pub const K0: f32 = 1.5;` or one in `pub mod consts`.
#[derive(Clone, Debug, PartialEq)]
pub struct ConstDef {
    pub name: String,
    pub in_module: bool,
    pub ty: Ty,
    pub value: String,
}

impl ConstDef {
    pub fn path(&self) -> String {
        if self.in_module {
            format!("consts::{}", self.name)
        } else {
            self.name.clone()
        }
    }
}

/// How host and device results are compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tol {
    /// Bit for bit (any NaN equals any NaN).
    Exact,
    /// Within this many ulp, with the same class (NaN, the same infinity).
    Ulps(u32),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Stencil {
    /// Index in the run (the generator's seed is derived from it).
    pub id: u64,
    /// The stencil whose inputs this one reuses (itself, or the stencil a shrunk one came from).
    pub input_id: u64,
    pub rank: usize,
    pub boundary: Boundary,
    /// How the attribute is written: `#[stencil]` for fixed when false.
    pub explicit_boundary: bool,
    pub out: Ty,
    pub args: Vec<Arg>,
    /// The params struct's name.
    pub params_ty: String,
    /// `Grid` or `Grid2` for 2-D grids.
    pub grid2_alias: bool,
    pub consts: Vec<ConstDef>,
    pub body: Block,
    pub tol: Tol,
    /// Float `min`/`max` occur: Rust returns either zero for `(-0.0).min(0.0)`, so zeros compare
    /// equal whatever their sign.
    pub zero_sign_free: bool,
    /// `#[stencil(state = g)]`: the grid the steps variant iterates, when named.
    pub state: Option<usize>,
    /// Write `state = ..` before `boundary = ..` in the attribute.
    pub state_first: bool,
    /// `#[stencil(packed(g = bits))]`: (argument, bits) of the grids stored packed on the
    /// device (unsigned integer grids not of the output's type, so never the state).
    pub packed: Vec<(usize, u32)>,
}

impl Stencil {
    pub fn module(&self) -> String {
        format!("s{:06}", self.id)
    }

    pub fn fn_name(&self) -> String {
        self.module()
    }

    /// The kernel type the macro generates (`S000123`).
    pub fn type_name(&self) -> String {
        format!("S{:06}", self.id)
    }

    /// The grid the steps variant iterates: the one named by `state = ..`, else the only grid
    /// of the output's type (several and none named: no steps variant).
    pub fn iterated(&self) -> Option<usize> {
        if self.state.is_some() {
            return self.state;
        }
        let candidates: Vec<usize> = (0..self.args.len())
            .filter(|&i| matches!(&self.args[i], Arg::Grid { elem, .. } if *elem == self.out))
            .collect();
        match candidates[..] {
            [one] => Some(one),
            _ => None,
        }
    }

    /// `#[stencil]`, `#[stencil(boundary = clamp, state = u)]`, ...
    pub fn attribute(&self) -> String {
        let mut parts = Vec::new();
        if self.explicit_boundary || self.boundary != Boundary::Fixed {
            parts.push(format!("boundary = {}", self.boundary.name()));
        }
        if let Some(s) = self.state {
            let st = format!("state = {}", self.args[s].name());
            if self.state_first {
                parts.insert(0, st);
            } else {
                parts.push(st);
            }
        }
        if !self.packed.is_empty() {
            let list: Vec<String> = self
                .packed
                .iter()
                .map(|&(a, bits)| format!("{} = {bits}", self.args[a].name()))
                .collect();
            parts.push(format!("packed({})", list.join(", ")));
        }
        if parts.is_empty() {
            "#[stencil]".to_string()
        } else {
            format!("#[stencil({})]", parts.join(", "))
        }
    }

    /// Every `(argument, offset)` the body reads, in order of first appearance.
    pub fn reads(&self) -> Vec<(usize, [i64; 3])> {
        let mut out = Vec::new();
        visit_block(&self.body, &mut |e| {
            if let Kind::Read(a, off, _) = &e.kind {
                if !out.contains(&(*a, *off)) {
                    out.push((*a, *off));
                }
            }
        });
        out
    }

    /// Nodes in the body: the size shrinking reduces.
    pub fn size(&self) -> usize {
        let mut n = 0;
        visit_block(&self.body, &mut |_| n += 1);
        n + self.body.lets.len()
    }

    pub fn grid_type(&self, elem: Ty) -> String {
        let name = match self.rank {
            1 => "Grid1",
            2 if self.grid2_alias => "Grid2",
            2 => "Grid",
            _ => "Grid3",
        };
        format!("{name}<{}>", elem.rust())
    }

    /// The stencil as a Rust module: params struct, constants and the function. `control`
    /// drops the attributes, for the copy that proves the Rust is valid without the macro.
    pub fn source(&self, control: bool) -> String {
        let mut s = String::new();
        s.push_str("use clforge::prelude::*;\n\n");
        for a in &self.args {
            if let Arg::Params { fields, .. } = a {
                if control {
                    s.push_str("#[derive(Clone, Copy, Debug)]\n");
                } else {
                    s.push_str("#[derive(Clone, Copy, Debug, Params)]\n");
                }
                let _ = writeln!(s, "pub struct {} {{", self.params_ty);
                for (f, t) in fields {
                    let _ = writeln!(s, "    pub {f}: {},", t.rust());
                }
                s.push_str("}\n\n");
            }
        }
        let top: Vec<&ConstDef> = self.consts.iter().filter(|c| !c.in_module).collect();
        let module: Vec<&ConstDef> = self.consts.iter().filter(|c| c.in_module).collect();
        for c in &top {
            let _ = writeln!(s, "pub const {}: {} = {};", c.name, c.ty.rust(), c.value);
        }
        if !module.is_empty() {
            s.push_str("pub mod consts {\n");
            for c in &module {
                let _ = writeln!(s, "    pub const {}: {} = {};", c.name, c.ty.rust(), c.value);
            }
            s.push_str("}\n");
        }
        if !self.consts.is_empty() {
            s.push('\n');
        }
        if !control {
            s.push_str(&self.attribute());
            s.push('\n');
        }
        let params: Vec<String> = self
            .args
            .iter()
            .map(|a| match a {
                Arg::Grid { name, elem } => format!("{name}: &{}", self.grid_type(*elem)),
                Arg::Scalar { name, ty } => format!("{name}: {}", ty.rust()),
                Arg::Params { name, .. } => format!("{name}: &{}", self.params_ty),
            })
            .collect();
        let _ = writeln!(
            s,
            "pub fn {}({}) -> {} {{",
            self.fn_name(),
            params.join(", "),
            self.out.rust()
        );
        let p = Printer { st: self };
        p.block_body(&self.body, 1, &mut s);
        s.push_str("}\n");
        s
    }
}

pub fn visit_block(b: &Block, f: &mut impl FnMut(&Expr)) {
    for l in &b.lets {
        visit(&l.value, f);
    }
    visit(&b.tail, f);
}

pub fn visit(e: &Expr, f: &mut impl FnMut(&Expr)) {
    f(e);
    match &e.kind {
        Kind::Neg(x) | Kind::Not(x) | Kind::Cast(x, _) | Kind::Paren(x) => visit(x, f),
        Kind::Bin(_, l, r) => {
            visit(l, f);
            visit(r, f);
        }
        Kind::Call(_, args, _) => args.iter().for_each(|a| visit(a, f)),
        Kind::If(c, a, b) => {
            visit(c, f);
            visit_block(a, f);
            visit_block(b, f);
        }
        Kind::Match(s, arms) => {
            visit(s, f);
            arms.iter().for_each(|(_, b)| visit_block(b, f));
        }
        Kind::Block(b) => visit_block(b, f),
        _ => {}
    }
}

struct Printer<'a> {
    st: &'a Stencil,
}

/// `... as u8`: a `<` after it would open generic arguments.
fn ends_with_cast(text: &str) -> bool {
    Ty::NUMERIC.iter().any(|t| text.ends_with(&format!(" as {}", t.rust())))
}

fn indent(n: usize) -> String {
    "    ".repeat(n)
}

impl Printer<'_> {
    /// The statements of a block, one per line at `depth`, ending with the tail.
    fn block_body(&self, b: &Block, depth: usize, s: &mut String) {
        for l in &b.lets {
            let ann = l.ann.map(|t| format!(": {}", t.rust())).unwrap_or_default();
            let _ = writeln!(
                s,
                "{}let {}{ann} = {};",
                indent(depth),
                l.name,
                self.expr(&l.value, depth).0
            );
        }
        let _ = writeln!(s, "{}{}", indent(depth), self.expr(&b.tail, depth).0);
    }

    /// `{ tail }` inline when the block has no `let`, else over several lines.
    fn block(&self, b: &Block, depth: usize) -> String {
        if b.lets.is_empty() {
            let t = self.expr(&b.tail, depth).0;
            if !t.contains('\n') {
                return format!("{{ {t} }}");
            }
        }
        let mut s = String::from("{\n");
        self.block_body(b, depth + 1, &mut s);
        s.push_str(&indent(depth));
        s.push('}');
        s
    }

    fn operand(&self, e: &Expr, min: u8, depth: usize) -> String {
        let (t, p) = self.expr(e, depth);
        if p < min {
            format!("({t})")
        } else {
            t
        }
    }

    fn expr(&self, e: &Expr, depth: usize) -> (String, u8) {
        match &e.kind {
            Kind::Lit(t) => (t.clone(), if t.starts_with('-') { P_UNARY } else { P_ATOM }),
            Kind::Read(a, off, forms) => {
                let offs: Vec<String> = (0..self.st.rank)
                    .map(|k| match forms[k] {
                        OffsetForm::Plain => off[k].to_string(),
                        OffsetForm::Paren => format!("({})", off[k]),
                        OffsetForm::Suffixed => format!("{}isize", off[k]),
                    })
                    .collect();
                (format!("{}.at({})", self.st.args[*a].name(), offs.join(", ")), P_ATOM)
            }
            Kind::Arg(i) => (self.st.args[*i].name().to_string(), P_ATOM),
            Kind::Member(a, f) => {
                let Arg::Params { name, fields } = &self.st.args[*a] else {
                    unreachable!("member of a non-params argument")
                };
                (format!("{name}.{}", fields[*f].0), P_ATOM)
            }
            Kind::Const(p) | Kind::Local(p) => (p.clone(), P_ATOM),
            Kind::Neg(x) | Kind::Not(x) => {
                let sym = if matches!(e.kind, Kind::Neg(_)) { "-" } else { "!" };
                let t = self.operand(x, P_UNARY, depth);
                // `--2147483648i32` would negate an out-of-range literal.
                let t = if t.starts_with('-') { format!("({t})") } else { t };
                (format!("{sym}{t}"), P_UNARY)
            }
            Kind::Bin(op, l, r) => {
                let p = op.prec();
                // Comparisons do not chain; `x as i32 < y` reads `<` as generic arguments.
                let lmin = if op.is_cmp() { p + 1 } else { p };
                let mut lt = self.operand(l, lmin, depth);
                if matches!(op, Op::Lt | Op::Le | Op::Shl) && ends_with_cast(&lt) {
                    lt = format!("({lt})");
                }
                let rt = self.operand(r, p + 1, depth);
                (format!("{lt} {} {rt}", op.text()), p)
            }
            Kind::Cast(x, t) => (format!("{} as {}", self.operand(x, P_CAST, depth), t.rust()), P_CAST),
            Kind::Call(f, args, form) => {
                let text = match form {
                    CallForm::Method => {
                        let recv = self.operand(&args[0], P_ATOM, depth);
                        let rest: Vec<String> = args[1..].iter().map(|a| self.expr(a, depth).0).collect();
                        format!("{recv}.{}({})", f.name(), rest.join(", "))
                    }
                    CallForm::Path(t) => {
                        let all: Vec<String> = args.iter().map(|a| self.expr(a, depth).0).collect();
                        format!("{}::{}({})", t.rust(), f.name(), all.join(", "))
                    }
                };
                (text, P_ATOM)
            }
            Kind::If(c, a, b) => {
                let ct = self.operand(c, P_OR, depth);
                let ct = if matches!(c.kind, Kind::If(..) | Kind::Match(..) | Kind::Block(_)) {
                    format!("({ct})")
                } else {
                    ct
                };
                (
                    format!("if {ct} {} else {}", self.block(a, depth), self.block(b, depth)),
                    P_BLOCK,
                )
            }
            Kind::Match(sc, arms) => {
                let st = self.operand(sc, P_OR, depth);
                let st = if matches!(sc.kind, Kind::If(..) | Kind::Match(..) | Kind::Block(_)) {
                    format!("({st})")
                } else {
                    st
                };
                let mut s = format!("match {st} {{\n");
                for (pats, body) in arms {
                    let pat = if pats.is_empty() {
                        "_".to_string()
                    } else {
                        pats.join(" | ")
                    };
                    let text = if body.lets.is_empty() {
                        format!("{},", self.expr(&body.tail, depth + 1).0)
                    } else {
                        self.block(body, depth + 1)
                    };
                    let _ = writeln!(s, "{}{pat} => {text}", indent(depth + 1));
                }
                s.push_str(&indent(depth));
                s.push('}');
                (s, P_BLOCK)
            }
            Kind::Block(b) => (self.block(b, depth), P_BLOCK),
            Kind::Paren(x) => (format!("({})", self.expr(x, depth).0), P_ATOM),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lit(t: &str, ty: Ty) -> Expr {
        Expr {
            ty,
            typed: true,
            kind: Kind::Lit(t.to_string()),
        }
    }

    fn stencil(tail: Expr) -> Stencil {
        Stencil {
            id: 7,
            input_id: 7,
            rank: 2,
            boundary: Boundary::Fixed,
            explicit_boundary: false,
            out: tail.ty,
            args: vec![Arg::Grid {
                name: "u".into(),
                elem: Ty::F32,
            }],
            params_ty: "Params".into(),
            grid2_alias: false,
            consts: Vec::new(),
            body: Block {
                lets: Vec::new(),
                tail: Box::new(tail),
            },
            tol: Tol::Exact,
            zero_sign_free: false,
            state: None,
            state_first: false,
            packed: Vec::new(),
        }
    }

    fn tail_text(e: Expr) -> String {
        let src = stencil(e).source(false);
        src.lines().rev().nth(1).unwrap_or_default().trim().to_string()
    }

    #[test]
    fn casts_before_less_than_are_parenthesised() {
        let read = Expr {
            ty: Ty::F32,
            typed: true,
            kind: Kind::Read(0, [1, 0, 0], Default::default()),
        };
        let cast = Expr {
            ty: Ty::I32,
            typed: true,
            kind: Kind::Cast(Box::new(read), Ty::I32),
        };
        let lt = Expr {
            ty: Ty::Bool,
            typed: true,
            kind: Kind::Bin(Op::Lt, Box::new(cast), Box::new(lit("3", Ty::I32))),
        };
        let e = Expr {
            ty: Ty::I32,
            typed: true,
            kind: Kind::Cast(Box::new(lt), Ty::I32),
        };
        assert_eq!(tail_text(e), "((u.at(1, 0) as i32) < 3) as i32");
    }

    #[test]
    fn precedence_follows_rust() {
        let a = || lit("1u32", Ty::U32);
        let and = Expr {
            ty: Ty::U32,
            typed: true,
            kind: Kind::Bin(Op::BitAnd, Box::new(a()), Box::new(a())),
        };
        let eq = Expr {
            ty: Ty::Bool,
            typed: true,
            kind: Kind::Bin(Op::Eq, Box::new(and), Box::new(a())),
        };
        let sum = Expr {
            ty: Ty::U32,
            typed: true,
            kind: Kind::Bin(Op::Add, Box::new(a()), Box::new(a())),
        };
        let diff = Expr {
            ty: Ty::U32,
            typed: true,
            kind: Kind::Bin(Op::Sub, Box::new(a()), Box::new(sum)),
        };
        let e = Expr {
            ty: Ty::U32,
            typed: true,
            kind: Kind::Bin(
                Op::Add,
                Box::new(Expr {
                    ty: Ty::U32,
                    typed: true,
                    kind: Kind::Cast(Box::new(eq), Ty::U32),
                }),
                Box::new(diff),
            ),
        };
        assert_eq!(tail_text(e), "(1u32 & 1u32 == 1u32) as u32 + (1u32 - (1u32 + 1u32))");
    }

    #[test]
    fn negated_negative_literals_get_parentheses() {
        let e = Expr {
            ty: Ty::I32,
            typed: true,
            kind: Kind::Neg(Box::new(lit("-7i32", Ty::I32))),
        };
        assert_eq!(tail_text(e), "-(-7i32)");
    }
}
