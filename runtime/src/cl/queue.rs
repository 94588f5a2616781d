//! A context on one device with two in-order profiling command queues: one for kernels and
//! ordinary transfers, and one for halo transfers that run beside the kernels (split grids
//! overlap their exchanges with interior work).

use ocl::core::{self, DeviceId, PlatformId};

use super::{failed, Event};
use crate::error::Result;

/// A device's context and its command queues. Cheap to clone; clones share them.
#[derive(Clone)]
pub(crate) struct Queue {
    pub(super) context: core::Context,
    pub(super) queue: core::CommandQueue,
    /// Transfers that overlap the kernels of `queue` (ordered against them by events only).
    pub(super) transfer: core::CommandQueue,
    pub(super) device: DeviceId,
}

/// Which of a device's queues a command goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lane {
    /// The queue of the kernels: in order with every launch.
    Compute,
    /// The transfer queue: runs beside the kernels, ordered by the events it is given.
    Transfer,
}

impl Queue {
    /// Creates a context for `device` of `platform` and a profiling queue in it.
    pub(super) fn open(platform: PlatformId, device: DeviceId) -> Result<Queue> {
        let props = core::ContextProperties::new().platform(platform);
        let context = core::create_context(Some(&props), &[device], None, None).map_err(failed("clCreateContext"))?;
        let open = || {
            core::create_command_queue(&context, device, Some(core::CommandQueueProperties::PROFILING_ENABLE))
                .map_err(failed("clCreateCommandQueue"))
        };
        let (queue, transfer) = (open()?, open()?);
        Ok(Queue {
            context,
            queue,
            transfer,
            device,
        })
    }

    /// The command queue of `lane`.
    pub(super) fn lane(&self, lane: Lane) -> &core::CommandQueue {
        match lane {
            Lane::Compute => &self.queue,
            Lane::Transfer => &self.transfer,
        }
    }

    /// Blocks until every command queued here (both lanes) has finished.
    pub(crate) fn finish(&self) -> Result<()> {
        core::finish(&self.transfer).map_err(failed("clFinish"))?;
        core::finish(&self.queue).map_err(failed("clFinish"))
    }

    /// An event that completes when everything queued on the compute lane so far has
    /// (a marker): what the transfer lane waits for before reading a kernel's output.
    pub(crate) fn marker(&self) -> Result<Event> {
        let mut ev = Event::null();
        core::enqueue_marker_with_wait_list(&self.queue, None::<()>, Some(&mut ev.inner), None)
            .map_err(failed("clEnqueueMarkerWithWaitList"))?;
        Ok(ev)
    }
}
