//! A sweep: an in-place point update that reads values already updated behind the point
//! (`c.new(-1, 0)`) and values not yet updated ahead of it (`c.old(1, 0)`), in a declared or
//! derived direction per axis (seed 001).

use super::Stencil;
use proc_macro2::Span;

/// A sweep: the point update as a stencil body (reads of the swept field included), which
/// argument is swept, the declared order and every read of the swept field.
#[derive(Clone, Debug)]
pub struct Sweep {
    /// The body, arguments and boundary; `stencil.out` is the swept field's type.
    pub stencil: Stencil,
    /// The argument index of the swept field (`c: &Sweep<f32>`).
    pub state: usize,
    /// `order = ...` as declared, if it is.
    pub order: Option<Order>,
    pub reads: Vec<SweepRead>,
}

/// A declared direction per axis: `true` when the sweep runs towards increasing indices.
#[derive(Clone, Debug)]
pub struct Order {
    /// One entry per axis given (`forward` alone means every axis).
    pub forward: Vec<bool>,
    pub span: Span,
}

/// One read of the swept field.
#[derive(Clone, Debug)]
pub struct SweepRead {
    /// `c.new(..)` (an updated value) rather than `c.old(..)`.
    pub new: bool,
    pub offset: [i64; 3],
    /// The whole read (`u.new(1, 0)`), where its errors point.
    pub tokens: proc_macro2::TokenStream,
    /// The read as written, for messages.
    pub text: String,
}
