//! A context with one in-order profiling command queue on one device.

use ocl::core::{self, DeviceId, PlatformId};

use super::failed;
use crate::error::Result;

/// A device's context and its command queue. Cheap to clone; clones share both.
#[derive(Clone)]
pub(crate) struct Queue {
    pub(super) context: core::Context,
    pub(super) queue: core::CommandQueue,
    pub(super) device: DeviceId,
}

impl Queue {
    /// Creates a context for `device` of `platform` and a profiling queue in it.
    pub(super) fn open(platform: PlatformId, device: DeviceId) -> Result<Queue> {
        let props = core::ContextProperties::new().platform(platform);
        let context = core::create_context(Some(&props), &[device], None, None).map_err(failed("clCreateContext"))?;
        let queue = core::create_command_queue(&context, device, Some(core::CommandQueueProperties::PROFILING_ENABLE))
            .map_err(failed("clCreateCommandQueue"))?;
        Ok(Queue { context, queue, device })
    }

    /// Blocks until every command queued here has finished.
    pub(crate) fn finish(&self) -> Result<()> {
        core::finish(&self.queue).map_err(failed("clFinish"))
    }
}
