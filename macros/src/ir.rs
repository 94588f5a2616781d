//! Kernel IR: typed, flattened expressions ready to print as OpenCL C.
//! Branches are `Select`s and every `let` is hoisted to the top of the body, so the same IR
//! prints as scalar code (ternaries) and as `float8` lanes (`select`).

use crate::model::{Arg, BinOp, Boundary, MathFn, Scalar, UnOp};

#[derive(Clone, Debug)]
pub enum Kind {
    /// Final OpenCL text of a literal.
    Lit(String),
    Read {
        arg: usize,
        offset: [i64; 3],
    },
    Member {
        arg: usize,
        member: String,
    },
    ScalarArg(usize),
    Local(String),
    Const(String),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    Cast(Box<Expr>, Scalar),
    Call(MathFn, Vec<Expr>),
    Select(Box<Expr>, Box<Expr>, Box<Expr>),
}

#[derive(Clone, Debug)]
pub struct Expr {
    pub kind: Kind,
    pub ty: Scalar,
    /// Depends on a grid read, so it differs between neighbouring points (a vector lane value).
    pub varying: bool,
}

#[derive(Clone, Debug)]
pub struct Let {
    pub name: String,
    pub value: Expr,
    pub line: usize,
    pub text: String,
}

/// A named constant the body uses: emitted as `#define` with the Rust value at run time.
#[derive(Clone, Debug)]
pub struct ConstUse {
    pub cl_name: String,
    pub path: syn::Path,
    pub ty: Scalar,
    pub span: proc_macro2::Span,
}

/// A params member the body uses, with the type the generated code assumes (checked in Rust).
#[derive(Clone, Debug)]
pub struct MemberUse {
    pub arg: usize,
    pub member: syn::Ident,
    pub ty: Scalar,
}

#[derive(Clone, Debug)]
pub struct Kernel {
    pub name: String,
    pub doc: Vec<String>,
    pub args: Vec<Arg>,
    /// OpenCL names of the arguments: the Rust names, renamed where they would collide
    /// with the kernels' own variables (`x`, `c`, `nx`, ...).
    pub arg_names: Vec<String>,
    pub out: Scalar,
    pub rank: usize,
    pub boundary: Boundary,
    pub lets: Vec<Let>,
    pub result: Expr,
    pub result_line: usize,
    /// Largest |offset| per axis.
    pub halo: [usize; 3],
    /// Per argument: read at a non-zero offset, so staged in local memory by the tiled variant.
    pub staged: Vec<bool>,
    /// The grid the output replaces when iterating (first grid of the output's type): the
    /// temporally blocked variant keeps it in local memory across several steps.
    pub state: Option<usize>,
    /// Distinct non-zero offsets per axis (for wrapped/clamped coordinates).
    pub axis_offsets: [Vec<i64>; 3],
    pub consts: Vec<ConstUse>,
    pub members: Vec<MemberUse>,
    pub file: String,
    pub line: usize,
}
