//! Raw buffer objects: allocation, fill, blocking reads and writes, device-side copies.

use ocl::core;

use super::{failed, is_oom, Event, Queue};
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
