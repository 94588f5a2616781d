//! The OpenCL layer: the only files that use the `ocl` crate. Everything above it sees
//! the wrappers here and reports failures as the crate's [`Error`].

mod event;
pub mod fault;
mod mem;
mod platform;
mod program;
mod queue;

use ocl::core;

pub use event::Event;
pub(crate) use mem::{Mem, Pinned, Sealed};
#[cfg(test)]
pub(crate) use platform::test_info;
pub(crate) use platform::{discover, Found};
pub use platform::{DeviceInfo, DeviceKind};
pub(crate) use program::{ArgValue, Kernel, Place, Program};
pub(crate) use queue::{Lane, Queue};

use crate::error::Error;

/// Short text for an `ocl` error: the status code if there is one, else its message.
fn describe(err: &core::Error) -> String {
    match err.api_status() {
        Some(status) => format!("{status:?} ({})", status as i32),
        None => err.to_string().trim().to_owned(),
    }
}

/// Maps an `ocl` error from the OpenCL call `op` into [`Error::Cl`].
fn failed(op: &'static str) -> impl FnOnce(core::Error) -> Error {
    move |err| Error::Cl {
        op,
        message: describe(&err),
    }
}

/// Whether an `ocl` error means the device ran out of memory.
fn is_oom(err: &core::Error) -> bool {
    use core::Status as S;
    matches!(
        err.api_status(),
        Some(
            S::CL_MEM_OBJECT_ALLOCATION_FAILURE
                | S::CL_OUT_OF_RESOURCES
                | S::CL_OUT_OF_HOST_MEMORY
                | S::CL_INVALID_BUFFER_SIZE
        )
    )
}
