//! A sweep's point update: a stencil body whose swept field is read and written in place.

use super::stencil::StencilBody;

#[derive(Clone, Debug)]
pub struct SweepBody {
    /// The point update; reads of the swept field are reads of argument `state`.
    pub body: StencilBody,
    /// The argument index of the swept field.
    pub state: usize,
    /// Direction per axis (`true`: increasing index).
    pub forward: [bool; 3],
}

/// A lattice rule's site update: a stencil body whose state is read and written in place, one
/// colour of a sublattice colouring at a time.
#[derive(Clone, Debug)]
pub struct LatticeBody {
    /// The site update; reads of the state are reads of argument `state`.
    pub body: StencilBody,
    /// The argument index of the state.
    pub state: usize,
    /// 2 (the checkerboard) or `2^rank` (the parity classes), derived from the reads.
    pub colours: usize,
    /// Whether the state is `bool`, bit-packed 32 sites of one colour per word (multi-spin
    /// coding): the kernel updates a word per work-item.
    pub packed: bool,
    /// The distinct non-zero offsets at which the body reads the state (the packed kernel
    /// loads one 32-bit window of neighbours per offset), in the order first read.
    pub windows: Vec<[i64; 3]>,
}
