//! VALUE what the user declared, typed and validated, with spans kept for errors and Rust
//! source lines kept for `#line` directives. This file holds the shared vocabulary (scalars,
//! arguments, boundaries) and the body language; one file per kind beside it.

pub mod element;
pub mod family;
pub mod lattice;
pub mod params;
pub mod stencil;
pub mod sweep;

pub use stencil::Stencil;

use proc_macro2::Span;
use syn::Ident;

/// Element types the DSL knows on both sides (Rust host and OpenCL C).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scalar {
    F32,
    F64,
    U8,
    I32,
    U32,
    Bool,
}

impl Scalar {
    pub fn from_ident(name: &str) -> Option<Scalar> {
        Some(match name {
            "f32" => Scalar::F32,
            "f64" => Scalar::F64,
            "u8" => Scalar::U8,
            "i32" => Scalar::I32,
            "u32" => Scalar::U32,
            "bool" => Scalar::Bool,
            _ => return None,
        })
    }

    pub fn rust(self) -> &'static str {
        match self {
            Scalar::F32 => "f32",
            Scalar::F64 => "f64",
            Scalar::U8 => "u8",
            Scalar::I32 => "i32",
            Scalar::U32 => "u32",
            Scalar::Bool => "bool",
        }
    }

    /// The OpenCL C name of the scalar type.
    pub fn cl(self) -> &'static str {
        match self {
            Scalar::F32 => "float",
            Scalar::F64 => "double",
            Scalar::U8 => "uchar",
            Scalar::I32 => "int",
            Scalar::U32 => "uint",
            Scalar::Bool => "int",
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, Scalar::F32 | Scalar::F64)
    }

    /// Bytes of one value in OpenCL (`bool` is stored as `int`).
    pub fn bytes(self) -> usize {
        match self {
            Scalar::F64 => 8,
            Scalar::U8 => 1,
            _ => 4,
        }
    }

    /// Size in bits of one lane; vector masks must match it in `select`.
    pub fn bits(self) -> u32 {
        match self {
            Scalar::F64 => 64,
            Scalar::U8 => 8,
            _ => 32,
        }
    }
}

/// A reduction output's operation (`Max<f32>`, `Min<f64>`, `Sum<i32>`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceOp {
    Max,
    Min,
    Sum,
}

impl ReduceOp {
    pub fn from_ident(name: &str) -> Option<ReduceOp> {
        Some(match name {
            "Max" => ReduceOp::Max,
            "Min" => ReduceOp::Min,
            "Sum" => ReduceOp::Sum,
            _ => return None,
        })
    }
    /// The Rust type's name (`Max`).
    pub fn rust(self) -> &'static str {
        match self {
            ReduceOp::Max => "Max",
            ReduceOp::Min => "Min",
            ReduceOp::Sum => "Sum",
        }
    }
    /// The generated helpers' stem (`max`).
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Max => "max",
            ReduceOp::Min => "min",
            ReduceOp::Sum => "sum",
        }
    }
}

/// One output of a stencil: a grid of `ty`, or (`reduce`) one value over every point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutType {
    pub ty: Scalar,
    pub reduce: Option<ReduceOp>,
}

/// How points near the edge of the grid are treated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Boundary {
    /// Points closer to the edge than the halo are left untouched (seed 002).
    Fixed,
    /// Reads wrap around: every point is updated.
    Periodic,
    /// Reads are clamped to the nearest point inside the grid: every point is updated.
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

/// A grid argument, read at fixed neighbour offsets.
#[derive(Clone, Debug)]
pub struct Field {
    pub name: Ident,
    pub elem: Scalar,
    /// `#[stencil(packed(name = bits))]`: stored `bits` bits per point in 32-bit words on the
    /// device (1, 2 or 4; `u8` and `u32` grids only, never the state).
    pub packed: Option<u32>,
}

/// One argument of the stencil function.
#[derive(Clone, Debug)]
pub enum Arg {
    Field(Field),
    /// `k: &Coeffs` where `Coeffs: clforge::Params` (a `#[derive(Params)]` struct).
    Params {
        name: Ident,
        ty: syn::Path,
    },
    /// `alpha: f32` — passed by value to the kernel.
    Scalar {
        name: Ident,
        ty: Scalar,
    },
    /// `at: Point`: the updated point's index (`at.x`, `at.y`, `at.z`) and the grid's extents
    /// (`at.nx`, ...), supplied by the kernel, not by the caller.
    Point {
        name: Ident,
    },
}

impl Arg {
    pub fn name(&self) -> &Ident {
        match self {
            Arg::Field(f) => &f.name,
            Arg::Params { name, .. } | Arg::Scalar { name, .. } | Arg::Point { name } => name,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
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

impl BinOp {
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
        )
    }
    pub fn is_logical(self) -> bool {
        matches!(self, BinOp::And | BinOp::Or)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Not,
}

/// The math functions the DSL accepts, by their Rust names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MathFn {
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

impl MathFn {
    /// Accepted names, for the error message.
    pub const NAMES: &'static str = "abs, sqrt, cbrt, exp, ln, log10, log2, sin, cos, tan, tanh, atan, atan2, hypot, powf, powi, min, max, floor, ceil, round, mul_add, clamp, recip";

    /// Printed lane by lane in `vec8` code: PoCL's vectorised versions give wrong lanes
    /// (`pown` on `double8` with negative `n`; `sin` of `-FLT_MIN` on `float8` gave -0.0078).
    /// One-argument float functions, which return NaN for NaN in Rust: generated through
    /// `clforge_<name>_<ty>` helpers that test for NaN first (templates/common: `rust_math`).
    pub fn nan_passing(self) -> bool {
        use MathFn::*;
        matches!(
            self,
            Floor | Ceil | Round | Sqrt | Cbrt | Exp | Ln | Log10 | Log2 | Sin | Cos | Tan | Tanh | Atan
        )
    }

    pub fn lane_by_lane(self) -> bool {
        use MathFn::*;
        matches!(
            self,
            Powi | Powf | Sin | Cos | Tan | Tanh | Atan | Atan2 | Exp | Ln | Log2 | Log10 | Cbrt | Hypot
        )
    }

    pub fn from_name(name: &str) -> Option<MathFn> {
        use MathFn::*;
        Some(match name {
            "abs" => Abs,
            "sqrt" => Sqrt,
            "cbrt" => Cbrt,
            "exp" => Exp,
            "ln" => Ln,
            "log10" => Log10,
            "log2" => Log2,
            "sin" => Sin,
            "cos" => Cos,
            "tan" => Tan,
            "tanh" => Tanh,
            "atan" => Atan,
            "atan2" => Atan2,
            "hypot" => Hypot,
            "powf" => Powf,
            "powi" => Powi,
            "min" => Min,
            "max" => Max,
            "floor" => Floor,
            "ceil" => Ceil,
            "round" => Round,
            "mul_add" => MulAdd,
            "clamp" => Clamp,
            "recip" => Recip,
            _ => return None,
        })
    }

    /// Number of arguments including the receiver.
    pub fn arity(self) -> usize {
        use MathFn::*;
        match self {
            Atan2 | Hypot | Powf | Powi | Min | Max => 2,
            MulAdd | Clamp => 3,
            _ => 1,
        }
    }
}

/// One pattern of a `match` arm.
#[derive(Clone, Debug)]
pub enum Pat {
    /// An integer literal or a named constant, compared for equality.
    Value(Expr),
    Wild,
}

#[derive(Clone, Debug)]
pub struct Arm {
    pub pats: Vec<Pat>,
    pub body: Block,
}

#[derive(Clone, Debug)]
pub enum ExprKind {
    /// A float literal (digits as written) with its suffix, if any.
    Float(String, Option<Scalar>),
    Int(String, Option<Scalar>),
    Bool(bool),
    /// `field.at(dx, dy, dz)`: the index of the field argument and the offset.
    Read {
        arg: usize,
        offset: [i64; 3],
    },
    /// `k.a` on a params struct argument.
    Member {
        arg: usize,
        member: Ident,
    },
    /// A scalar argument, by index.
    ScalarArg(usize),
    /// A `let` binding in scope, by name.
    Local(Ident),
    /// A named constant (a path to a Rust `const`).
    Const(syn::Path),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    Cast(Box<Expr>, Scalar),
    Call(MathFn, Vec<Expr>),
    If(Box<Expr>, Block, Block),
    Match(Box<Expr>, Vec<Arm>),
    Block(Block),
    /// An expression Rust gives this type whatever its parts are: `f32::sqrt(2.0)`.
    Typed(Box<Expr>, Scalar),
    /// `rng.draw(k)` (a `u32`) or `rng.uniform(k)` (an `f32` in `[0, 1)`) of a lattice rule.
    Draw {
        index: u32,
        uniform: bool,
    },
    /// `at.x` (`extent: false`) or `at.nx` (`extent: true`) of a `Point` argument: the
    /// updated point's index along `axis`, or the whole grid's extent.
    Point {
        axis: usize,
        extent: bool,
    },
    /// `Max(v)`: the value of a reduction output.
    Reduce(ReduceOp, Box<Expr>),
    /// `(a, b)`: the value of a stencil with several outputs (a system of fields), one
    /// element per output; nowhere else.
    Tuple(Vec<Expr>),
}

#[derive(Clone, Debug)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
    /// 1-based line in the user's file.
    pub line: usize,
    /// The Rust text as written, for comments in the generated code.
    pub text: String,
}

#[derive(Clone, Debug)]
pub struct Let {
    pub name: Ident,
    pub ty: Option<Scalar>,
    pub value: Expr,
}

#[derive(Clone, Debug)]
pub struct Block {
    pub lets: Vec<Let>,
    pub tail: Box<Expr>,
}
