//! Launching generated kernels on one device, whatever their kind: the arguments and their
//! checks, the shape checks every launch makes, and fused reductions.

pub(crate) mod arg;
pub(crate) mod bind;
pub(crate) mod owned;
pub(crate) mod reduce;
pub(crate) mod size;

pub(crate) use arg::{check_arg_shapes, check_packing, ParamsCache};
pub use arg::{KernelArg, KernelScalar, PackedArg};
pub use clforge_abi::Bind;
#[cfg(feature = "mpi")]
pub(crate) use reduce::Collective;
pub use reduce::{Max, Min, Reduce, Reduction, Sum};
pub(crate) use reduce::{Reducer, FOLD_GROUPS};
pub(crate) use size::{check_kernel_shape, MAX_INDEX};
