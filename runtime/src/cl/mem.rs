//! Raw buffer objects: allocation, fill, blocking reads and writes, device-side copies.

use ocl::core;

use super::{failed, is_oom, Event, Lane, Queue};
use crate::error::{Error, Result};

/// Element types a buffer object can hold. Keeps the `ocl` bound out of the public API and
/// [`Scalar`](crate::Scalar) closed.
pub trait Sealed: ocl::OclPrm {}

/// A buffer object in a device's context. Cheap to clone; clones share it.
#[derive(Clone, Debug)]
pub(crate) struct Mem(core::Mem);

/// Maps an allocation failure to [`Error::OutOfMemory`], anything else to [`Error::Cl`].
fn alloc_err(op: &'static str, what: impl Fn() -> String, bytes: usize) -> impl FnOnce(core::Error) -> Error {
    move |e| {
        if is_oom(&e) {
            Error::OutOfMemory { what: what(), bytes }
        } else {
            failed(op)(e)
        }
    }
}

impl Mem {
    /// `len` elements of `T`, read-write, holding a copy of `data` if given. `what` names the
    /// allocation in [`Error::OutOfMemory`].
    pub(crate) fn new<T: Sealed>(
        queue: &Queue,
        len: usize,
        data: Option<&[T]>,
        what: impl Fn() -> String,
    ) -> Result<Mem> {
        let flags = match data {
            Some(_) => core::MEM_READ_WRITE | core::MEM_COPY_HOST_PTR,
            None => core::MEM_READ_WRITE,
        };
        // SAFETY: the flags match `data`: the host pointer is only read during the call.
        let mem = unsafe { core::create_buffer(&queue.context, flags, len, data) };
        mem.map(Mem)
            .map_err(alloc_err("clCreateBuffer", what, len.saturating_mul(size_of::<T>())))
    }

    /// A read-only copy of `data`; `what` names the allocation in [`Error::OutOfMemory`].
    pub(crate) fn read_only<T: Sealed>(queue: &Queue, data: &[T], what: impl Fn() -> String) -> Result<Mem> {
        let flags = core::MEM_READ_ONLY | core::MEM_COPY_HOST_PTR;
        // SAFETY: COPY_HOST_PTR: `data` is only read during the call.
        let mem = unsafe { core::create_buffer(&queue.context, flags, data.len(), Some(data)) };
        mem.map(Mem)
            .map_err(alloc_err("clCreateBuffer", what, size_of_val(data)))
    }

    /// Enqueues setting the first `len` elements of `T` to `value`; a failure to back the
    /// buffer with memory is reported as [`Error::OutOfMemory`] of `what`.
    pub(crate) fn fill<T: Sealed>(
        &self,
        queue: &Queue,
        value: T,
        len: usize,
        what: impl Fn() -> String,
    ) -> Result<Event> {
        let mut ev = Event::null();
        core::enqueue_fill_buffer(
            &queue.queue,
            &self.0,
            value,
            0,
            len,
            None::<()>,
            Some(&mut ev.inner),
            None,
        )
        .map_err(alloc_err("clEnqueueFillBuffer", what, len * size_of::<T>()))?;
        Ok(ev)
    }

    /// Copies `data` into the start of the buffer, blocking until done.
    pub(crate) fn write<T: Sealed>(&self, queue: &Queue, data: &[T]) -> Result<()> {
        // SAFETY: blocking write: `data` is not used after the call returns.
        unsafe { core::enqueue_write_buffer(&queue.queue, &self.0, true, 0, data, None::<()>, None::<()>) }
            .map_err(failed("clEnqueueWriteBuffer"))
    }

    /// Copies the start of the buffer into `out`, blocking until done (and so until every
    /// command queued before it has finished).
    pub(crate) fn read<T: Sealed>(&self, queue: &Queue, out: &mut [T]) -> Result<()> {
        super::fault::check(super::fault::Site::Read)?;
        // SAFETY: blocking read: `out` is fully written before the call returns.
        unsafe { core::enqueue_read_buffer(&queue.queue, &self.0, true, 0, out, None::<()>, None::<()>) }
            .map_err(failed("clEnqueueReadBuffer"))
    }

    /// Copies `data` into the buffer from element `offset` on, blocking until done.
    pub(crate) fn write_at<T: Sealed>(&self, queue: &Queue, offset: usize, data: &[T]) -> Result<()> {
        // SAFETY: blocking write: `data` is not used after the call returns.
        unsafe { core::enqueue_write_buffer(&queue.queue, &self.0, true, offset, data, None::<()>, None::<()>) }
            .map_err(failed("clEnqueueWriteBuffer"))
    }

    /// Copies `out.len()` elements from element `offset` on into `out`, blocking until done.
    pub(crate) fn read_at<T: Sealed>(&self, queue: &Queue, offset: usize, out: &mut [T]) -> Result<()> {
        super::fault::check(super::fault::Site::Read)?;
        // SAFETY: blocking read: `out` is fully written before the call returns.
        unsafe { core::enqueue_read_buffer(&queue.queue, &self.0, true, offset, out, None::<()>, None::<()>) }
            .map_err(failed("clEnqueueReadBuffer"))
    }

    /// Enqueues copying the first `len` elements of `T` of `src` into this buffer.
    pub(crate) fn copy_from<T: Sealed>(&self, queue: &Queue, src: &Mem, len: usize) -> Result<Event> {
        let mut ev = Event::null();
        core::enqueue_copy_buffer::<T, _, _, _>(
            &queue.queue,
            &src.0,
            &self.0,
            0,
            0,
            len,
            None::<()>,
            Some(&mut ev.inner),
        )
        .map_err(failed("clEnqueueCopyBuffer"))?;
        Ok(ev)
    }

    /// Whether both are the same buffer object.
    #[cfg(test)]
    pub(crate) fn same_as(&self, other: &Mem) -> bool {
        self.0.as_ptr() == other.0.as_ptr()
    }

    pub(super) fn raw(&self) -> &core::Mem {
        &self.0
    }
}

/// Page-locked host memory for transfers between devices: a `CL_MEM_ALLOC_HOST_PTR` buffer
/// of one device's context, mapped once for its lifetime (drivers back it with pinned pages,
/// so reads and writes run at the bus's rate instead of through a driver's bounce buffer).
pub(crate) struct Pinned<T: Sealed> {
    mem: core::Mem,
    map: core::MemMap<T>,
    len: usize,
    queue: Queue,
}

// SAFETY: the mapping is plain host memory owned by this value; OpenCL handles are thread-safe.
unsafe impl<T: Sealed> Send for Pinned<T> {}
// SAFETY: as above; shared access only reads through `as_slice`.
unsafe impl<T: Sealed> Sync for Pinned<T> {}

impl<T: Sealed> Pinned<T> {
    /// `len` elements of pinned host memory from `queue`'s context, mapped for reading and
    /// writing.
    pub(crate) fn new(queue: &Queue, len: usize) -> Result<Pinned<T>> {
        let len = len.max(1);
        let what = || format!("pinned host staging of {len} elements");
        // SAFETY: no host pointer is passed.
        let mem = unsafe {
            core::create_buffer::<_, T>(
                &queue.context,
                core::MEM_READ_WRITE | core::MEM_ALLOC_HOST_PTR,
                len,
                None,
            )
        }
        .map_err(alloc_err("clCreateBuffer", what, len.saturating_mul(size_of::<T>())))?;
        // SAFETY: a blocking map: the pointer is valid on return until the unmap in `drop`.
        let map = unsafe {
            core::enqueue_map_buffer::<T, _, _, _>(
                &queue.queue,
                &mem,
                true,
                core::MAP_READ | core::MAP_WRITE,
                0,
                len,
                None::<()>,
                None::<&mut core::Event>,
            )
        }
        .map_err(failed("clEnqueueMapBuffer"))?;
        Ok(Pinned {
            mem,
            map,
            len,
            queue: queue.clone(),
        })
    }

    /// The mapped memory.
    pub(crate) fn as_mut_slice(&mut self) -> &mut [T] {
        // SAFETY: the mapping holds `len` elements until `drop` unmaps it.
        unsafe { self.map.as_slice_mut(self.len) }
    }

    /// The mapped memory.
    pub(crate) fn as_slice(&self) -> &[T] {
        // SAFETY: as `as_mut_slice`.
        unsafe { self.map.as_slice(self.len) }
    }
}

impl<T: Sealed> Drop for Pinned<T> {
    fn drop(&mut self) {
        // The mapping is not used after this; the unmap completes before the queue finishes
        // (errors cannot be reported from drop: the memory is then leaked, not freed twice).
        let _ = core::enqueue_unmap_mem_object::<T, _, _, _>(
            &self.queue.queue,
            &self.mem,
            &self.map,
            None::<()>,
            None::<&mut core::Event>,
        );
        let _ = core::finish(&self.queue.queue);
    }
}

impl Mem {
    /// Enqueues reading `out.len()` elements from element `offset` on into pinned memory, on
    /// `lane` of `queue` after the events `after`; returns without waiting.
    ///
    /// # Safety
    /// `out` must stay valid and untouched until the returned event completes.
    pub(crate) unsafe fn read_at_async<T: Sealed>(
        &self,
        (queue, lane): (&Queue, Lane),
        offset: usize,
        out: &mut [T],
        after: &[Event],
    ) -> Result<Event> {
        super::fault::check(super::fault::Site::Read)?;
        let mut ev = Event::null();
        let wait = Event::wait_list(after);
        // SAFETY: the caller keeps `out` alive until the event completes.
        core::enqueue_read_buffer(
            queue.lane(lane),
            &self.0,
            false,
            offset,
            out,
            Some(&wait[..]),
            Some(&mut ev.inner),
        )
        .map_err(failed("clEnqueueReadBuffer"))?;
        Ok(ev)
    }

    /// Enqueues writing `data` from element `offset` on, on `lane` of `queue` after the
    /// events `after`; returns without waiting.
    ///
    /// # Safety
    /// `data` must stay valid and unchanged until the returned event completes.
    pub(crate) unsafe fn write_at_async<T: Sealed>(
        &self,
        (queue, lane): (&Queue, Lane),
        offset: usize,
        data: &[T],
        after: &[Event],
    ) -> Result<Event> {
        let mut ev = Event::null();
        let wait = Event::wait_list(after);
        // SAFETY: the caller keeps `data` alive until the event completes.
        core::enqueue_write_buffer(
            queue.lane(lane),
            &self.0,
            false,
            offset,
            data,
            Some(&wait[..]),
            Some(&mut ev.inner),
        )
        .map_err(failed("clEnqueueWriteBuffer"))?;
        Ok(ev)
    }
}
