//! A stencil: a point update reading fixed neighbour offsets of grid fields.

use super::{Arg, Block, Boundary, OutType, ReduceOp, Scalar};
use syn::Ident;

/// A stencil: a point update reading fixed neighbour offsets of grid fields.
#[derive(Clone, Debug)]
pub struct Stencil {
    pub name: Ident,
    pub doc: Vec<String>,
    pub args: Vec<Arg>,
    pub out: Scalar,
    /// The first output is a reduction (`-> Max<f32>`, `-> (Sum<f64>, f32)`).
    pub out_reduce: Option<ReduceOp>,
    /// A system of fields (`-> (f32, f32)`): the outputs after the first, in order; empty for
    /// a stencil with one output.
    pub more_outs: Vec<OutType>,
    pub rank: usize,
    pub boundary: Boundary,
    /// `#[stencil(state = u)]`: the grid the steps variant iterates, when named.
    pub state: Option<syn::Ident>,
    pub body: Block,
    /// The user's file as rustc names it, for `#line`.
    pub file: String,
    pub line: usize,
}
