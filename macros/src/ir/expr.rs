//! Typed, flattened expressions ready to print as OpenCL C. Branches are `Select`s and every
//! `let` is hoisted to the top of the body, so the same IR prints as scalar code and as
//! `float8` lanes (`select`).

use crate::model::{BinOp, MathFn, Scalar, UnOp};

#[derive(Clone, Debug)]
pub enum Op {
    /// Final OpenCL text of a literal.
    Lit(String),
    /// A grid argument read at a neighbour offset.
    Read {
        arg: usize,
        offset: [i64; 3],
    },
    /// A member of a params struct argument.
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
    /// The updated point's index along `axis` in the whole grid, or (`extent`) the whole
    /// grid's extent.
    Point {
        axis: usize,
        extent: bool,
    },
}

#[derive(Clone, Debug)]
pub struct Expr {
    pub op: Op,
    pub ty: Scalar,
    /// Depends on a grid read, so it differs between neighbouring points (a vector lane value).
    pub varying: bool,
}

/// A hoisted `let`: its OpenCL name, value, and the Rust line and text it came from.
#[derive(Clone, Debug)]
pub struct Let {
    pub name: String,
    pub value: Expr,
    pub line: usize,
    pub text: String,
}
