//! The stencil's point update, shared by all its variants.

use super::expr::{Expr, Let};
use crate::model::{Arg, Boundary, ReduceOp, Scalar};

/// One point update: the hoisted `let`s and the result, with what the access analysis found.
#[derive(Clone, Debug)]
pub struct StencilBody {
    pub args: Vec<Arg>,
    /// OpenCL names of the arguments: the Rust names, renamed where they would collide
    /// with the kernels' own variables (`x`, `c`, `nx`, ...).
    pub arg_names: Vec<String>,
    /// OpenCL names of the arguments' local tiles (`t_psi`), made fresh after the arguments'.
    pub tile_names: Vec<String>,
    /// Per argument, the march variant's pointers into its ring, one per z offset `dz` the
    /// argument is read at, in order of `dz`: the plane `z + dz` (`t_psi_m1`, `t_psi_0`,
    /// `t_psi_p1`). 3-D staged grids only, else empty.
    pub plane_names: Vec<Vec<(i64, String)>>,
    /// Params struct types (as written) and their OpenCL names.
    pub struct_names: Vec<(String, String)>,
    pub out: Scalar,
    pub rank: usize,
    pub boundary: Boundary,
    pub lets: Vec<Let>,
    pub result: Expr,
    pub result_line: usize,
    /// The first output is a reduction: its accumulator's and local array's names.
    pub out_reduce: Option<Reduction>,
    /// A system of fields: the outputs after the first (`out`), in order.
    pub more: Vec<Output>,
    /// The body reads its point (`at.x`, `at.nx`): the kernels take the slab's origin and the
    /// whole grid's extents.
    pub uses_point: bool,
    pub access: Accesses,
    /// The default tile (x, y, work-group rows) of the tiled and steps variants.
    pub tile: (usize, usize, usize),
    /// Points per work-item of the vector variant.
    pub lanes: usize,
}

/// What the body reads: from `lower::access`.
#[derive(Clone, Debug, Default)]
pub struct Accesses {
    /// Largest |offset| per axis.
    pub halo: [usize; 3],
    /// Per argument: read at a non-zero offset, so staged in local memory by the tiled variant.
    pub staged: Vec<bool>,
    /// Per argument: read at any offset (the steps variant stages every grid it reads).
    pub read: Vec<bool>,
    /// Distinct non-zero offsets per axis (for wrapped/clamped coordinates).
    pub axis_offsets: [Vec<i64>; 3],
    /// The grid the temporally blocked variant keeps in local memory across several steps:
    /// the grid the output replaces when iterating (`#[stencil(state = u)]`, or the only grid
    /// of the output's type).
    pub iterated: Option<usize>,
    /// The grids of the output's type: the state when none is named and there is one.
    pub state_candidates: Vec<usize>,
}

/// An output after the first of a stencil with several (a system of fields).
#[derive(Clone, Debug)]
pub struct Output {
    /// The kernel parameter's OpenCL name (`out_1`, ...).
    pub name: String,
    pub ty: Scalar,
    pub result: Expr,
    /// A reduction output: its accumulator's and local array's names.
    pub reduce: Option<Reduction>,
}

/// A reduction output's operation and the OpenCL names of its work-item accumulator and
/// work-group array.
#[derive(Clone, Debug)]
pub struct Reduction {
    pub op: ReduceOp,
    pub acc: String,
    pub local: String,
}
