//! MPI across hosts (issue 13, item 2; feature `mpi`): one rank per device, the grid split
//! among the ranks exactly as [`Devices`](crate::Devices) splits it among local devices (the
//! same [`Layout`], the same deep halos, the same bits), halos exchanged with one packed
//! message per neighbour and direction (slabs are contiguous planes: no strided datatypes).
//!
//! Every rank runs the same program. [`Ranks`] replaces the device in the generated `plan`
//! and its grids ([`RankGrid`]) replace `DeviceGrid` in `launch_plan`; every rank uploads the
//! whole host grid and keeps its slab. Reductions (`max`, `sum`) go through MPI collectives.
//!
//! Failure: every collective step (a plan, an exchange, a gather, a reduction, and the end of
//! the run when the last `Ranks` handle is dropped) first agrees on a status with one
//! `MPI_Allreduce`. A rank that fails returns its error; when its `Ranks` is dropped it joins
//! the others' next agreement as "stopped", so every other rank returns
//! [`Error::Ranks`] naming it instead of waiting for it. A mismatched rank count is an error on
//! every rank ([`Ranks::expect`]).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use mpi::collective::SystemOperation;
use mpi::datatype::PartitionMut;
use mpi::topology::Communicator;
use mpi::traits::*;

use crate::buffer::{scalar_bytes, scalar_bytes_mut, Scalar};
use crate::cl::Lane;
use crate::device::{lock, Device};
use crate::error::{Error, Result};
use crate::grid::{DeviceGrid, HostGrid, Shape, TargetGrid};
use crate::grid::{Packable, PackedGrid};
use crate::launch::{KernelArg, KernelScalar};
use crate::launch::{Reduce, Reduction};
use crate::params::Params;
use crate::program::Event;

use super::{Halo, Layout, Place, DEFAULT_DEPTH};

/// Status sent by a rank that is healthy, in [`Ranks::agree`]. A rank that failed sends its
/// rank `r`; a rank whose `Ranks` is dropped (its run ended, or stopped on an error of the
/// program's own) sends `size + r`. The minimum names the first failed rank, else the first
/// that left.
pub(crate) const HEALTHY: i32 = i32::MAX;

pub(crate) struct Inner {
    pub(crate) universe: mpi::environment::Universe,
    pub(crate) device: Device,
    pub(crate) weights: Vec<f64>,
    pub(crate) depth: usize,
    pub(crate) periodic: bool,
    pub(crate) overlap: bool,
    /// This rank failed and has not yet told the others.
    pub(crate) failed: AtomicBool,
    /// Another rank stopped: no more collectives (they would wait for it).
    pub(crate) broken: AtomicBool,
}

impl Drop for Inner {
    fn drop(&mut self) {
        if self.broken.load(Ordering::Relaxed) {
            return;
        }
        // The end of the run, or this rank stopping early: one last agreement. The others
        // meet it at the end of their run (all leaving) or in their next step (they then
        // return an error naming this rank).
        let world = self.universe.world();
        let me = if self.failed.load(Ordering::Relaxed) {
            world.rank()
        } else {
            world.size() + world.rank()
        };
        let mut status = 0;
        world.all_reduce_into(&me, &mut status, SystemOperation::min());
    }
}

/// This process's MPI rank with its device: the target of a stencil split across ranks.
#[derive(Clone)]
pub struct Ranks {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for Ranks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ranks")
            .field("rank", &self.rank())
            .field("size", &self.size())
            .field("device", &self.inner.device.info().name)
            .finish_non_exhaustive()
    }
}

impl Ranks {
    /// Initialises MPI (once per process) with `device` as this rank's device; equal shares,
    /// [`DEFAULT_DEPTH`] halo planes, a non-periodic split axis.
    pub fn init(device: Device) -> Result<Ranks> {
        let universe = mpi::initialize().ok_or_else(|| {
            Error::InvalidConfig("MPI is already initialised in this process: make one `Ranks` and clone it".into())
        })?;
        let size = universe.world().size() as usize;
        Ok(Ranks {
            inner: Arc::new(Inner {
                universe,
                device,
                weights: vec![1.0; size],
                depth: DEFAULT_DEPTH,
                periodic: false,
                overlap: true,
                failed: AtomicBool::new(false),
                broken: AtomicBool::new(false),
            }),
        })
    }

    fn with(self, f: impl FnOnce(&mut Inner)) -> Result<Ranks> {
        let mut inner = Arc::try_unwrap(self.inner).map_err(|_| {
            Error::InvalidConfig("configure `Ranks` before cloning it or making grids and plans".into())
        })?;
        f(&mut inner);
        Ok(Ranks { inner: Arc::new(inner) })
    }

    /// Fails on every rank unless the job has exactly `n` ranks (the run was planned for `n`).
    pub fn expect(self, n: usize) -> Result<Ranks> {
        if self.size() != n {
            return Err(self.error(format!(
                "this run is planned for {n} ranks but the job has {}; start it with `mpirun -np {n}`",
                self.size()
            )));
        }
        Ok(self)
    }

    /// `planes` halo planes per shared side (at least 1); see [`Devices::depth`](crate::Devices::depth).
    pub fn depth(self, planes: usize) -> Result<Ranks> {
        if planes == 0 {
            return Err(self.error("`Ranks::depth` must be at least 1 plane".into()));
        }
        self.with(|i| i.depth = planes)
    }

    /// Declares the split axis periodic (needed by `boundary = periodic` stencils).
    pub fn periodic(self, periodic: bool) -> Result<Ranks> {
        self.with(|i| i.periodic = periodic)
    }

    /// Whether a launch that needs an exchange overlaps it with interior work (the default;
    /// see [`Devices::overlap`](crate::Devices::overlap)): the edges are read, sent and written
    /// while the device computes the planes that do not read the halo.
    pub fn overlap(self, overlap: bool) -> Result<Ranks> {
        self.with(|i| i.overlap = overlap)
    }

    /// Shares from each rank's measured device copy rate (gathered from every rank).
    pub fn measured(self, bytes: usize) -> Result<Ranks> {
        let rate = crate::dist::copy_rate(&self.inner.device, bytes);
        let rate = self.agree(rate)?;
        let mut all = vec![0f64; self.size()];
        self.inner.universe.world().all_gather_into(&rate, &mut all[..]);
        self.with(|i| i.weights = all)
    }

    /// This process's rank.
    pub fn rank(&self) -> usize {
        self.inner.universe.world().rank() as usize
    }

    /// Ranks in the job.
    pub fn size(&self) -> usize {
        self.inner.universe.world().size() as usize
    }

    /// This rank's device.
    pub fn device(&self) -> &Device {
        &self.inner.device
    }

    /// The shares of the ranks (equal unless measured).
    pub fn weights(&self) -> &[f64] {
        &self.inner.weights
    }

    /// How a grid of `shape` is split among the ranks.
    pub fn layout(&self, shape: Shape) -> Result<Layout> {
        Layout::new(shape, &self.inner.weights, self.inner.depth, self.inner.periodic)
    }

    pub(crate) fn error(&self, detail: String) -> Error {
        Error::Ranks {
            rank: self.rank() as i32,
            size: self.size() as i32,
            detail,
        }
    }

    /// Every rank learns whether every rank got here healthy: `local` on this rank, else an
    /// error naming the first rank that failed or stopped. A collective: every rank calls it at
    /// the same step.
    pub fn agree<T>(&self, local: Result<T>) -> Result<T> {
        if self.inner.broken.load(Ordering::Relaxed) {
            return Err(self.error("an earlier step failed on another rank; no further collective steps".into()));
        }
        let world = self.inner.universe.world();
        let me = if local.is_ok() { HEALTHY } else { world.rank() };
        let mut first = 0;
        world.all_reduce_into(&me, &mut first, SystemOperation::min());
        match (local, first) {
            (Err(e), _) => {
                // The others know now: nothing left to tell them.
                self.inner.broken.store(true, Ordering::Relaxed);
                Err(e)
            }
            (Ok(v), HEALTHY) => Ok(v),
            (Ok(_), r) if r >= world.size() => {
                self.inner.broken.store(true, Ordering::Relaxed);
                Err(Error::Ranks {
                    rank: r - world.size(),
                    size: world.size(),
                    detail: "stopped before this step while the others went on (an error of its own, on its \
                             output, or a program whose ranks take different steps); every rank stops"
                        .into(),
                })
            }
            (Ok(_), r) => {
                self.inner.broken.store(true, Ordering::Relaxed);
                Err(Error::Ranks {
                    rank: r,
                    size: self.size() as i32,
                    detail: "failed (its own error is on its output); every rank stops".into(),
                })
            }
        }
    }

    /// Marks this rank failed: its last agreement (when `Ranks` is dropped) tells the others.
    pub(crate) fn failed<T>(&self, r: Result<T>) -> Result<T> {
        if r.is_err() {
            self.inner.failed.store(true, Ordering::Relaxed);
        }
        r
    }

    /// The largest of every rank's `x` (NaN if any is NaN).
    pub fn max(&self, x: f64) -> Result<f64> {
        self.agree(Ok(()))?;
        let nan = if x.is_nan() { 1 } else { 0 };
        let (mut any_nan, mut m) = (0, 0f64);
        let world = self.inner.universe.world();
        world.all_reduce_into(&nan, &mut any_nan, SystemOperation::max());
        world.all_reduce_into(&x, &mut m, SystemOperation::max());
        Ok(if any_nan != 0 { f64::NAN } else { m })
    }

    /// The sum of every rank's `x`.
    pub fn sum(&self, x: f64) -> Result<f64> {
        self.agree(Ok(()))?;
        let mut s = 0f64;
        self.inner
            .universe
            .world()
            .all_reduce_into(&x, &mut s, SystemOperation::sum());
        Ok(s)
    }
}

/// This rank's slab of a grid split across ranks.
pub struct RankGrid<T: Scalar> {
    pub(crate) part: DeviceGrid<T>,
    pub(crate) layout: Arc<Layout>,
    pub(crate) ranks: Ranks,
    pub(crate) valid: AtomicUsize,
    /// Send and receive buffers of the exchange, and its transfers in flight.
    pub(crate) staging: Mutex<RankStaging<T>>,
}

pub(crate) struct RankStaging<T: Scalar> {
    /// Sends to the lower and upper neighbour, then receives from them.
    buffers: Vec<Vec<T>>,
    /// The halo writes of the last exchange (they read `buffers`).
    pending: Vec<Event>,
    /// A started exchange: its edge reads and the current halo planes it leaves alone.
    started: Option<(Vec<Event>, usize)>,
}

impl<T: Scalar> Drop for RankGrid<T> {
    fn drop(&mut self) {
        // Transfers in flight use the staging memory: let them finish first.
        let mut st = lock(&self.staging);
        let reads = st.started.take().map(|r| r.0).unwrap_or_default();
        for e in st.pending.drain(..).chain(reads) {
            let _ = e.wait();
        }
    }
}

impl<T: Scalar> std::fmt::Debug for RankGrid<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RankGrid")
            .field("rank", &self.ranks.rank())
            .field("layout", &self.layout)
            .finish_non_exhaustive()
    }
}

impl<T: Scalar> RankGrid<T> {
    /// A zero-filled grid of `shape`; this rank holds its slab.
    pub fn new(ranks: &Ranks, shape: Shape) -> Result<RankGrid<T>> {
        let r = ranks.rank();
        let made = ranks
            .layout(shape)
            .and_then(|l| Ok((DeviceGrid::new(ranks.device(), l.part_shape(r))?, l)));
        let (part, layout) = ranks.failed(made)?;
        Ok(RankGrid {
            part,
            valid: AtomicUsize::new(layout.depth),
            layout: Arc::new(layout),
            ranks: ranks.clone(),
            staging: Mutex::new(RankStaging {
                buffers: Vec::new(),
                pending: Vec::new(),
                started: None,
            }),
        })
    }

    /// The whole grid's shape.
    pub fn shape(&self) -> Shape {
        self.layout.shape()
    }

    /// This rank's slab (halo planes included).
    pub fn part(&self) -> &DeviceGrid<T> {
        &self.part
    }

    /// Writes this rank's slab (and halos) from the whole grid `host` (every rank passes it).
    pub fn upload(&mut self, host: &HostGrid<T>) -> Result<()> {
        crate::grid::check_shape("upload", self.shape(), host.shape())?;
        let (l, r) = (&self.layout, self.ranks.rank());
        self.ranks
            .failed(self.part.buffer().write_at(0, &l.slab(r, host.data())))?;
        self.valid.store(l.depth, Ordering::Relaxed);
        Ok(())
    }

    /// The whole grid on every rank (a collective: every rank's own planes gathered).
    pub fn to_host(&self) -> Result<HostGrid<T>> {
        let l = &self.layout;
        let r = self.ranks.rank();
        let (lo, hi) = l.owned[r];
        let mut mine = vec![T::default(); (hi - lo) * l.plane];
        let read = self.part.buffer().read_at(l.below(r) * l.plane, &mut mine);
        self.ranks.agree(read)?;
        let size = size_of::<T>() as i32;
        let counts: Vec<i32> = l
            .owned
            .iter()
            .map(|&(a, b)| ((b - a) * l.plane) as i32 * size)
            .collect();
        let displs: Vec<i32> = l.owned.iter().map(|&(a, _)| (a * l.plane) as i32 * size).collect();
        let mut all = HostGrid::new(self.shape())?;
        {
            let mut part = PartitionMut::new(scalar_bytes_mut(all.data_mut()), counts, displs);
            self.ranks
                .inner
                .universe
                .world()
                .all_gather_varcount_into(scalar_bytes(&mine), &mut part);
        }
        Ok(all)
    }

    /// Reads the whole grid into `host` on every rank (a collective).
    pub fn download(&self, host: &mut HostGrid<T>) -> Result<()> {
        crate::grid::check_shape("download", host.shape(), self.shape())?;
        *host = self.to_host()?;
        Ok(())
    }

    /// Fills both halos with the neighbours' current planes: one message per neighbour and
    /// direction, sent and received without blocking, after all ranks agreed they are healthy.
    pub fn exchange(&self) -> Result<()> {
        self.exchange_start(0)?;
        self.exchange_finish(Lane::Compute).map(drop)
    }

    /// Starts an exchange: this rank's edges are read into the send buffers on the device's
    /// transfer queue once everything queued so far has run; returns without waiting. The
    /// `keep` halo planes next to the own planes are current and are neither sent nor
    /// rewritten (every rank keeps the same number: they launch alike).
    pub(crate) fn exchange_start(&self, keep: usize) -> Result<()> {
        let l = &self.layout;
        let (d, p) = (l.depth, l.plane);
        let keep = keep.min(d);
        let edges = l.edges(self.ranks.rank(), keep);
        let mut staging = lock(&self.staging);
        let st = &mut *staging;
        let reads = (|| -> Result<Vec<Event>> {
            for e in st
                .pending
                .drain(..)
                .chain(st.started.take().map(|r| r.0).unwrap_or_default())
            {
                e.wait()?;
            }
            if st.buffers.len() != 4 || st.buffers[0].len() != d * p {
                st.buffers = vec![vec![T::default(); d * p]; 4];
            }
            let marker = self.part.device().queue().marker()?;
            let mut reads = Vec::new();
            for (edge, buf) in edges.iter().zip(st.buffers.iter_mut()) {
                if let Some((from, _)) = edge {
                    // SAFETY: the buffer is owned by this grid; the read's event is kept in
                    // `started` and waited for before the buffer is refilled or dropped.
                    reads.push(unsafe {
                        self.part.buffer().read_at_async(
                            Lane::Transfer,
                            *from,
                            &mut buf[..(d - keep) * p],
                            std::slice::from_ref(&marker),
                        )
                    }?);
                }
            }
            Ok(reads)
        })();
        st.started = Some((self.ranks.failed(reads)?, keep));
        Ok(())
    }

    /// Completes a started exchange (a collective): waits for the edge reads, agrees with
    /// every rank that all are healthy, sends and receives one message per neighbour and
    /// direction, and enqueues the halo writes on the device's `lane`; returns them.
    pub(crate) fn exchange_finish(&self, lane: Lane) -> Result<Vec<(usize, Event)>> {
        let l = &self.layout;
        let (d, p) = (l.depth, l.plane);
        let (r, k) = (self.ranks.rank(), self.ranks.size());
        let peers = [((r + k - 1) % k) as i32, ((r + 1) % k) as i32];
        let mut staging = lock(&self.staging);
        let st = &mut *staging;
        let read = match st.started.take() {
            Some((reads, keep)) => reads.iter().try_for_each(Event::wait).map(|()| keep),
            None => Err(Error::InvalidConfig(
                "a rank grid's exchange was finished without being started".into(),
            )),
        };
        let keep = self.ranks.agree(read)?;
        let n = (d - keep) * p;
        // Side 0 (lower) talks to rank r - 1, side 1 (upper) to r + 1 (wrapping where periodic).
        let edges = l.edges(r, keep);
        let (sends, recvs) = st.buffers.split_at_mut(2);
        let world = self.ranks.inner.universe.world();
        // A message's tag is the side it leaves from: what leaves side 0 (down) arrives at the
        // lower neighbour's side 1 and carries tag 0.
        mpi::request::scope(|scope| {
            let mut reqs = Vec::new();
            for (side, (edge, buf)) in edges.iter().zip(recvs.iter_mut()).enumerate() {
                if edge.is_some() {
                    let from = world.process_at_rank(peers[side]);
                    reqs.push(from.immediate_receive_into_with_tag(
                        scope,
                        scalar_bytes_mut(&mut buf[..n]),
                        1 - side as i32,
                    ));
                }
            }
            for (side, (edge, buf)) in edges.iter().zip(sends.iter()).enumerate() {
                if edge.is_some() {
                    let to = world.process_at_rank(peers[side]);
                    reqs.push(to.immediate_send_with_tag(scope, scalar_bytes(&buf[..n]), side as i32));
                }
            }
            for q in reqs {
                q.wait();
            }
        });
        let write = (|| -> Result<Vec<(usize, Event)>> {
            let mut writes = Vec::new();
            for (edge, buf) in edges.iter().zip(recvs.iter()) {
                if let Some((_, at)) = *edge {
                    // SAFETY: the write's event is kept in `pending` and waited for before the
                    // buffer is refilled or dropped.
                    let ev = unsafe { self.part.buffer().write_at_async(lane, at, &buf[..n], &[]) }?;
                    st.pending.push(ev.clone());
                    writes.push((r, ev));
                }
            }
            Ok(writes)
        })();
        let writes = self.ranks.failed(write)?;
        self.valid.store(d, Ordering::Relaxed);
        Ok(writes)
    }
}

impl<T: Scalar> Halo for RankGrid<T> {
    fn layout(&self) -> &Layout {
        &self.layout
    }
    fn valid_depth(&self) -> usize {
        self.valid.load(Ordering::Relaxed)
    }
    fn exchange(&self) -> Result<()> {
        RankGrid::exchange(self)
    }
    fn set_valid(&self, depth: usize) {
        self.valid.store(depth, Ordering::Relaxed);
    }
    fn exchange_start(&self, keep: usize) -> Result<()> {
        RankGrid::exchange_start(self, keep)
    }
    fn exchange_finish(&self) -> Result<Vec<(usize, Event)>> {
        RankGrid::exchange_finish(self, Lane::Transfer)
    }
}

/// One argument of a launch across ranks (built by the generated code).
pub struct RankArg<'a> {
    pub(crate) arg: KernelArg<'a>,
    pub(crate) grid: Option<(&'a str, &'a dyn Halo)>,
}

impl Place for Ranks {
    type Grid<T: Scalar> = RankGrid<T>;
    type Arg<'a> = RankArg<'a>;
    fn upload<T: Scalar>(&self, host: &HostGrid<T>) -> Result<RankGrid<T>> {
        let mut g = RankGrid::new(self, host.shape())?;
        g.upload(host)?;
        Ok(g)
    }
    fn zeros<T: Scalar>(&self, shape: Shape) -> Result<RankGrid<T>> {
        RankGrid::new(self, shape)
    }
    fn grid_arg<'a, T: Scalar>(name: &'a str, grid: &'a RankGrid<T>) -> RankArg<'a> {
        RankArg {
            arg: KernelArg::grid(name, &grid.part),
            grid: Some((name, grid)),
        }
    }
    fn packed_arg<'a, T: Packable, const BITS: u32>(name: &'a str, grid: &'a PackedGrid<T, BITS>) -> RankArg<'a> {
        // Never launched: plans across ranks refuse kernels with packed grids.
        RankArg {
            arg: KernelArg::packed(name, grid),
            grid: None,
        }
    }
    fn params_arg<'a, P: Params>(p: &P) -> RankArg<'a> {
        RankArg {
            arg: KernelArg::params(p),
            grid: None,
        }
    }
    fn scalar_arg<'a, S: KernelScalar>(v: S) -> RankArg<'a> {
        RankArg {
            arg: KernelArg::scalar(v),
            grid: None,
        }
    }
    fn reduction_arg<'a, R: Reduce>(name: &'a str, r: &'a Reduction<R>) -> RankArg<'a> {
        RankArg {
            arg: KernelArg::reduction(name, r),
            grid: None,
        }
    }
}

impl crate::launch::Collective for Ranks {
    fn size(&self) -> usize {
        Ranks::size(self)
    }
    fn all_gather(&self, mine: &[u8], all: &mut [u8]) -> Result<()> {
        self.agree(Ok(()))?;
        self.inner.universe.world().all_gather_into(mine, all);
        Ok(())
    }
}

impl<T: Scalar> TargetGrid<T> for RankGrid<T> {
    fn shape(&self) -> Shape {
        RankGrid::shape(self)
    }
    fn to_host(&self) -> Result<HostGrid<T>> {
        RankGrid::to_host(self)
    }
    fn upload(&mut self, host: &HostGrid<T>) -> Result<()> {
        RankGrid::upload(self, host)
    }
    fn download(&self, host: &mut HostGrid<T>) -> Result<()> {
        RankGrid::download(self, host)
    }
}
