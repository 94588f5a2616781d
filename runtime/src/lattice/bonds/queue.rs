//! A bounded work queue on the device (seed 003's list of live bonds, made safe): work-items
//! append entries with `clforge_queue_push` (an atomic counter; an entry past the capacity is
//! counted, not stored), the host reads the count after a launch and turns an overflow into
//! [`Error::QueueOverflow`], and [`WorkQueue::compact`] keeps the entries a flag array marks, in
//! their order (a two-pass prefix-sum compaction: no entry is lost or duplicated, unlike the
//! seed's purge, which relied on its tail rule).

use crate::buffer::Buffer;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::launch::owned::Signatures;
use crate::program::{check_work_group, Arg, Program};

/// OpenCL C of the queue: `clforge_queue_push(count, entries, capacity, v)` for user kernels,
/// and the two compaction kernels [`WorkQueue::compact`] launches.
pub const QUEUE_CL: &str = include_str!("../../../../templates/lattice/queue.cl");

/// The queue kernels' parameter lists, which the launches bind their named arguments to.
static SIGNATURES: std::sync::LazyLock<Signatures> =
    std::sync::LazyLock::new(|| Signatures::parse("the work queue's kernels", QUEUE_CL));

/// Work-group of the compaction kernels.
const WG: usize = 256;

/// A bounded queue of `u32` entries in device memory.
#[derive(Debug)]
pub struct WorkQueue {
    name: String,
    capacity: usize,
    entries: Buffer<u32>,
    spare: Buffer<u32>,
    /// `[entries appended, entries lost]`.
    count: Buffer<u32>,
    program: Program,
}

impl WorkQueue {
    /// An empty queue of `capacity` entries (1 to `u32::MAX`).
    pub fn new(device: &Device, name: &str, capacity: usize) -> Result<WorkQueue> {
        if capacity == 0 || capacity > u32::MAX as usize {
            return Err(Error::InvalidConfig(format!(
                "work queue `{name}` of capacity {capacity}: a queue holds 1 to {} entries",
                u32::MAX
            )));
        }
        check_work_group(device.info(), &[WG, 1, 1], || {
            format!("the compaction of work queue `{name}`")
        })?;
        let program = device.program("clforge work queue", QUEUE_CL, &format!("-D CLFORGE_QUEUE_WG={WG}"))?;
        Ok(WorkQueue {
            name: name.to_string(),
            capacity,
            entries: Buffer::new(device, capacity)?,
            spare: Buffer::new(device, capacity)?,
            count: Buffer::from_slice(device, &[0u32, 0])?,
            program,
        })
    }

    /// A queue of `capacity` entries holding `entries`.
    pub fn from_entries(device: &Device, name: &str, capacity: usize, entries: &[u32]) -> Result<WorkQueue> {
        let mut q = WorkQueue::new(device, name, capacity)?;
        if entries.len() > capacity {
            return Err(Error::QueueOverflow {
                name: name.to_string(),
                capacity,
                attempted: entries.len() as u64,
                lost: (entries.len() - capacity) as u64,
            });
        }
        let mut all = entries.to_vec();
        all.resize(capacity, 0);
        q.entries.write(&all)?;
        q.count.write(&[entries.len() as u32, 0])?;
        Ok(q)
    }

    /// Its capacity in entries.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// The entries buffer, for a kernel's `__global uint* entries` (with [`WorkQueue::counter`]
    /// and the capacity: `clforge_queue_push(count, entries, capacity, v)`).
    pub fn entries(&self) -> &Buffer<u32> {
        &self.entries
    }

    /// The counter buffer `[appended, lost]`, for a kernel's `volatile __global uint* count`.
    pub fn counter(&self) -> &Buffer<u32> {
        &self.count
    }

    /// The kernel arguments `count, entries, capacity`, in the order `clforge_queue_push` takes.
    pub fn args(&self) -> [Arg<'_>; 3] {
        [
            Arg::buffer(&self.count),
            Arg::buffer(&self.entries),
            Arg::u32(self.capacity as u32),
        ]
    }

    /// [`WorkQueue::args`] with the parameter names `clforge_queue_push`'s callers declare them
    /// by, for a launch bound by name.
    pub(crate) fn named(&self) -> [(&'static str, Arg<'_>); 3] {
        let [count, entries, capacity] = self.args();
        [("count", count), ("entries", entries), ("capacity", capacity)]
    }

    /// The number of entries (waits for the device); [`Error::QueueOverflow`] if work-items
    /// appended more than the capacity since the queue was last compacted or cleared.
    pub fn len(&self) -> Result<usize> {
        let c = self.count.to_vec()?;
        let (appended, lost) = (u64::from(c[0]), u64::from(c[1]));
        if lost > 0 || appended > self.capacity as u64 {
            return Err(Error::QueueOverflow {
                name: self.name.clone(),
                capacity: self.capacity,
                attempted: appended.max(self.capacity as u64 + lost),
                lost: lost.max(appended.saturating_sub(self.capacity as u64)),
            });
        }
        Ok(appended as usize)
    }

    /// Whether the queue is empty (an overflow is an error, as for [`WorkQueue::len`]).
    pub fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }

    /// The entries, in queue order.
    pub fn to_vec(&self) -> Result<Vec<u32>> {
        let n = self.len()?;
        let mut all = self.entries.to_vec()?;
        all.truncate(n);
        Ok(all)
    }

    /// Empties the queue (and forgets an overflow).
    pub fn clear(&mut self) -> Result<()> {
        self.count.write(&[0, 0])
    }

    /// Keeps the entries `i` with `keep[i] != 0`, in their order, and returns how many. `keep`
    /// holds at least [`WorkQueue::len`] flags (one per entry; more are ignored).
    pub fn compact(&mut self, keep: &Buffer<u32>) -> Result<usize> {
        let n = self.len()?;
        if keep.len() < n {
            return Err(Error::LengthMismatch {
                what: format!("the keep flags of work queue `{}`", self.name),
                expected: n,
                found: keep.len(),
            });
        }
        if n == 0 {
            return Ok(0);
        }
        let device = self.entries.device().clone();
        let groups = n.div_ceil(WG);
        let sums = Buffer::<u32>::new(&device, groups)?;
        let n32 = ("n", Arg::u32(n as u32));
        let args = SIGNATURES.bind(
            "clforge_queue_count",
            &[("keep", Arg::buffer(keep)), n32, ("block_sums", Arg::buffer(&sums))],
        )?;
        self.program
            .launch("clforge_queue_count", &[groups * WG], Some(&[WG]), &args)?;
        let mut offsets = sums.to_vec()?;
        let mut total = 0u64;
        for o in &mut offsets {
            let s = u64::from(*o);
            *o = total as u32;
            total += s;
        }
        let offsets = Buffer::from_slice(&device, &offsets)?;
        let args = SIGNATURES.bind(
            "clforge_queue_scatter",
            &[
                ("entries", Arg::buffer(&self.entries)),
                ("keep", Arg::buffer(keep)),
                n32,
                ("offsets", Arg::buffer(&offsets)),
                ("out", Arg::buffer(&self.spare)),
            ],
        )?;
        self.program
            .launch("clforge_queue_scatter", &[groups * WG], Some(&[WG]), &args)?;
        std::mem::swap(&mut self.entries, &mut self.spare);
        self.count.write(&[total as u32, 0])?;
        Ok(total as usize)
    }
}
