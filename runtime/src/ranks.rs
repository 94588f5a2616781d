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

use crate::buffer::Scalar;
use crate::cl::Lane;
use crate::device::{lock, Device};
use crate::error::{Error, Result};
use crate::host::{HostGrid, Params, Shape};
use crate::program::Event;
use crate::split::{check_layout, launch_overlapped, refresh_inputs, Halo, Layout, SlabLaunch, DEFAULT_DEPTH};
use crate::stencil::target::{GridOn, Launch, Target, TargetGrid};
use crate::stencil::{DeviceGrid, KernelScalar, LaunchConfig, StencilArg, StencilPlan, StencilSpec};

/// Status sent by a rank that is healthy, in [`Ranks::agree`]. A rank that failed sends its
/// rank `r`; a rank whose `Ranks` is dropped (its run ended, or stopped on an error of the
/// program's own) sends `size + r`. The minimum names the first failed rank, else the first
/// that left.
const HEALTHY: i32 = i32::MAX;

struct Inner {
    universe: mpi::environment::Universe,
    device: Device,
    weights: Vec<f64>,
    depth: usize,
    periodic: bool,
    overlap: bool,
    /// This rank failed and has not yet told the others.
    failed: AtomicBool,
    /// Another rank stopped: no more collectives (they would wait for it).
    broken: AtomicBool,
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
    inner: Arc<Inner>,
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
        let rate = crate::split::copy_rate(&self.inner.device, bytes);
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

    fn error(&self, detail: String) -> Error {
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
    fn failed<T>(&self, r: Result<T>) -> Result<T> {
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

impl Ranks {
    /// Every rank's partial reduction combined in rank order (the same bits on every rank and
    /// in every run): gathered from all ranks, then folded here.
    pub(crate) fn all_reduce<R: crate::reduce::Reduce>(&self, local: R) -> Result<R> {
        self.agree(Ok(()))?;
        let world = self.inner.universe.world();
        let mine = [local.get()];
        let mut all = vec![<R::Value as Default>::default(); self.size()];
        world.all_gather_into(bytes(&mine), bytes_mut(&mut all));
        Ok(all.into_iter().fold(R::identity(), |acc, v| acc.combine(R::of(v))))
    }
}

/// The bytes of a slice of plain scalars (MPI moves them as bytes: every `Scalar` is plain data).
fn bytes<T: Scalar>(v: &[T]) -> &[u8] {
    // SAFETY: `Scalar` types are plain numbers without padding or invalid bit patterns.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), size_of_val(v)) }
}

fn bytes_mut<T: Scalar>(v: &mut [T]) -> &mut [u8] {
    // SAFETY: as `bytes`; every byte pattern is a valid `Scalar`.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<u8>(), size_of_val(v)) }
}

/// This rank's slab of a grid split across ranks.
pub struct RankGrid<T: Scalar> {
    part: DeviceGrid<T>,
    layout: Arc<Layout>,
    ranks: Ranks,
    valid: AtomicUsize,
    /// Send and receive buffers of the exchange, and its transfers in flight.
    staging: Mutex<RankStaging<T>>,
}

struct RankStaging<T: Scalar> {
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
        crate::host::check_shape("upload", self.shape(), host.shape())?;
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
            let mut part = PartitionMut::new(bytes_mut(all.data_mut()), counts, displs);
            self.ranks
                .inner
                .universe
                .world()
                .all_gather_varcount_into(bytes(&mine), &mut part);
        }
        Ok(all)
    }

    /// Reads the whole grid into `host` on every rank (a collective).
    pub fn download(&self, host: &mut HostGrid<T>) -> Result<()> {
        crate::host::check_shape("download", host.shape(), self.shape())?;
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
                    reqs.push(from.immediate_receive_into_with_tag(scope, bytes_mut(&mut buf[..n]), 1 - side as i32));
                }
            }
            for (side, (edge, buf)) in edges.iter().zip(sends.iter()).enumerate() {
                if edge.is_some() {
                    let to = world.process_at_rank(peers[side]);
                    reqs.push(to.immediate_send_with_tag(scope, bytes(&buf[..n]), side as i32));
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
    arg: StencilArg<'a>,
    grid: Option<(&'a str, &'a dyn Halo)>,
}

/// A stencil launch on this rank's slab.
#[derive(Debug)]
pub struct RankPlan {
    plan: StencilPlan,
    layout: Arc<Layout>,
    reach: usize,
    /// Exchanges overlap interior work ([`Ranks::overlap`]) where the kernel allows it.
    overlap: bool,
    ranks: Ranks,
    name: &'static str,
}

impl RankPlan {
    /// Sizes and builds `spec` for this rank's slab of `shape`; a collective (every rank fails
    /// if one does).
    pub fn new(ranks: &Ranks, spec: StencilSpec, config: &LaunchConfig, shape: Shape) -> Result<RankPlan> {
        // Every rank refuses the same spec alike: no collective needed.
        crate::split::refuse_packed(&spec)?;
        let made = (|| -> Result<(StencilPlan, Layout, usize)> {
            crate::stencil::check_kernel_shape(&format!("stencil `{}`", spec.name), spec.rank, shape)?;
            let layout = ranks.layout(shape)?;
            let reach = crate::split::check_split(&spec, config, &layout)?;
            let mut plan = StencilPlan::new(ranks.device(), spec, config, layout.part_shape(ranks.rank()))?;
            plan.place(layout.origin(ranks.rank()), shape);
            let (lo, hi) = layout.owned()[ranks.rank()];
            plan.reduce_planes(
                layout.axis(),
                layout.below(ranks.rank()),
                layout.below(ranks.rank()) + hi - lo,
            );
            Ok((plan, layout, reach))
        })();
        let (plan, layout, reach) = ranks.agree(made)?;
        let overlap = ranks.inner.overlap && ranks.size() > 1 && plan.plane_step().is_some();
        Ok(RankPlan {
            plan,
            layout: Arc::new(layout),
            reach,
            overlap,
            ranks: ranks.clone(),
            name: spec.name,
        })
    }

    /// Launches on this rank's slab, exchanging an input's halos first where they are
    /// shallower than the launch's reach (a collective then).
    pub fn launch<T: Scalar>(&self, out: &mut RankGrid<T>, args: &[RankArg<'_>]) -> Result<Event> {
        self.launch_outputs(&[<RankPlan as Launch>::grid_arg("out", out)], args)
    }

    /// Launches a stencil with several outputs (a system of fields) on this rank's slab.
    pub fn launch_outputs(&self, outs: &[RankArg<'_>], args: &[RankArg<'_>]) -> Result<Event> {
        for o in outs {
            if let Some(r) = o.arg.reducer() {
                r.across(Some(self.ranks.clone()));
            }
        }
        let checked: Result<Vec<&dyn Halo>> = outs
            .iter()
            .filter(|o| o.arg.reducer().is_none())
            .map(|o| match o.grid {
                Some((name, g)) => {
                    let what = format!("output `{name}` of stencil `{}`", self.name);
                    check_layout(&what, g.layout(), &self.layout).map(|()| g)
                }
                None => Err(Error::InvalidConfig(format!(
                    "an output of stencil `{}` is not a grid",
                    self.name
                ))),
            })
            .collect();
        let out_grids = self.ranks.failed(checked)?;
        let grids: Vec<(&str, &dyn Halo)> = args.iter().filter_map(|a| a.grid).collect();
        let list: Vec<StencilArg<'_>> = args.iter().map(|a| a.arg.clone()).collect();
        let out_list: Vec<StencilArg<'_>> = outs.iter().map(|a| a.arg.clone()).collect();
        let (valid, ev) = if self.overlap && grids.iter().any(|(_, g)| g.valid_depth() < self.reach) {
            let slab = SlabLaunch {
                slab: self.ranks.rank(),
                plan: &self.plan,
                outs: out_list,
                args: list,
            };
            let launched = launch_overlapped(self.name, &self.layout, self.reach, &[slab], &grids, 0);
            self.ranks.failed(launched)?
        } else {
            let valid = self
                .ranks
                .failed(refresh_inputs(self.name, &self.layout, self.reach, grids.into_iter()))?;
            (valid, self.ranks.failed(self.plan.launch_outputs(&out_list, &list))?)
        };
        for g in out_grids {
            g.set_valid(valid.saturating_sub(self.reach));
        }
        Ok(ev)
    }
}

impl Target for Ranks {
    type Plan = RankPlan;
    fn stencil_plan(&self, spec: StencilSpec, config: &LaunchConfig, shape: Shape) -> Result<RankPlan> {
        RankPlan::new(self, spec, config, shape)
    }
    fn upload<T: Scalar>(&self, host: &HostGrid<T>) -> Result<GridOn<Self, T>> {
        let mut g = RankGrid::new(self, host.shape())?;
        g.upload(host)?;
        Ok(g)
    }
    fn zeros<T: Scalar>(&self, shape: Shape) -> Result<GridOn<Self, T>> {
        RankGrid::new(self, shape)
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

impl Launch for RankPlan {
    type Grid<T: Scalar> = RankGrid<T>;
    type Arg<'a> = RankArg<'a>;
    fn grid_arg<'a, T: Scalar>(name: &'a str, grid: &'a RankGrid<T>) -> RankArg<'a> {
        RankArg {
            arg: StencilArg::grid(name, &grid.part),
            grid: Some((name, grid)),
        }
    }
    fn packed_arg<'a, T: crate::stencil::Packable, const BITS: u32>(
        name: &'a str,
        grid: &'a crate::stencil::PackedGrid<T, BITS>,
    ) -> RankArg<'a> {
        // Never launched: a `RankPlan` of a stencil with a packed grid is refused.
        RankArg {
            arg: StencilArg::packed(name, grid),
            grid: None,
        }
    }
    fn params_arg<'a, P: Params>(p: &P) -> RankArg<'a> {
        RankArg {
            arg: StencilArg::params(p),
            grid: None,
        }
    }
    fn scalar_arg<'a, S: KernelScalar>(v: S) -> RankArg<'a> {
        RankArg {
            arg: StencilArg::scalar(v),
            grid: None,
        }
    }
    fn reduction_arg<'a, R: crate::reduce::Reduce>(name: &'a str, r: &'a crate::reduce::Reduction<R>) -> RankArg<'a> {
        RankArg {
            arg: StencilArg::reduction(name, r),
            grid: None,
        }
    }
    fn launch_args<T: Scalar>(&self, out: &mut RankGrid<T>, args: &[RankArg<'_>]) -> Result<Event> {
        self.launch(out, args)
    }
    fn enqueue_args<T: Scalar>(&self, out: &mut RankGrid<T>, args: &[RankArg<'_>]) -> Result<()> {
        self.launch(out, args).map(drop)
    }
    fn launch_outputs(&self, outs: &[RankArg<'_>], args: &[RankArg<'_>]) -> Result<Event> {
        RankPlan::launch_outputs(self, outs, args)
    }
    fn enqueue_outputs(&self, outs: &[RankArg<'_>], args: &[RankArg<'_>]) -> Result<()> {
        RankPlan::launch_outputs(self, outs, args).map(drop)
    }
}

/// The explicit step across MPI ranks: the model cut as [`SplitStepper`](crate::fem::split::SplitStepper)
/// cuts it over local devices (every rank computes the same partition), this rank stepping its
/// part; after every step each rank sends each neighbour one packed message (the `u` and `v` of
/// the nodes that neighbour holds as ghosts) and receives its ghosts the same way. The same bits
/// as `SplitStepper` on the same shares.
pub struct RankStepper<R: crate::fem::Real = f32> {
    ranks: Ranks,
    /// Rings of ghost elements: steps between exchanges; steps since the last.
    layers: usize,
    since: usize,
    stepper: crate::fem::stepper::Stepper<R>,
    /// This part's nodes from `ghost_from` on are ghosts; the first `send` are sent.
    send: usize,
    ghost_from: usize,
    /// For each other rank: this part's send-range indices it needs, in its ghost order.
    sends: Vec<(usize, Vec<usize>)>,
    /// For each owner rank: the positions in this part's ghost list it fills, in order.
    recvs: Vec<(usize, Vec<usize>)>,
    /// Every part's own nodes (global ids), in local order, for gathers.
    owned: Vec<Vec<usize>>,
    /// This part's nodes (global ids).
    nodes: Vec<usize>,
    /// Every part's elements whose stress it reports, as (global element, local element).
    homes: Vec<Vec<(usize, usize)>>,
    owner: Vec<(usize, usize)>,
    dofs: usize,
    strains: usize,
    bound: crate::fem::stability::StabilityBound,
    /// Exchanges inside a `step(n)` overlap the next step's interior ([`Ranks::overlap`]).
    overlap: bool,
}

impl<R: crate::fem::Real> std::fmt::Debug for RankStepper<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RankStepper")
            .field("rank", &self.ranks.rank())
            .finish_non_exhaustive()
    }
}

impl<R: crate::fem::Real> RankStepper<R> {
    /// Cuts `model` over the ranks (their shares) and builds this rank's stepper; a collective.
    pub fn with_precision(
        ranks: &Ranks,
        model: &crate::fem::problem::Model,
        config: &crate::fem::problem::StepperConfig,
    ) -> Result<RankStepper<R>> {
        let r = ranks.rank();
        let made = (|| {
            let p = crate::fem::split::partition(model, ranks.weights(), ranks.inner.depth, config)?;
            let stepper =
                crate::fem::stepper::Stepper::<R>::with_precision(ranks.device(), &p.parts[r].model, &p.config)?;
            Ok((p, stepper))
        })();
        let (p, stepper) = ranks.agree(made)?;
        let me = &p.parts[r];
        let mut sends = Vec::new();
        for (q, part) in p.parts.iter().enumerate() {
            let idx: Vec<usize> = part.ghosts.iter().filter(|g| g.0 == r).map(|g| g.1).collect();
            if q != r && !idx.is_empty() {
                sends.push((q, idx));
            }
        }
        let mut recvs: Vec<(usize, Vec<usize>)> = Vec::new();
        for (i, &(o, _)) in me.ghosts.iter().enumerate() {
            match recvs.iter_mut().find(|(x, _)| *x == o) {
                Some((_, v)) => v.push(i),
                None => recvs.push((o, vec![i])),
            }
        }
        let mut homes = vec![Vec::new(); p.parts.len()];
        for (e, &(q, i)) in p.elem_home.iter().enumerate() {
            homes[q].push((e, i));
        }
        // Every rank decides alike: the same options, the same kind of sub-models.
        let overlap = ranks.inner.overlap && ranks.size() > 1 && stepper.steps_in_ranges();
        Ok(RankStepper {
            overlap,
            ranks: ranks.clone(),
            layers: ranks.inner.depth.max(1),
            since: 0,
            stepper,
            send: me.send,
            ghost_from: me.ghost_from,
            sends,
            recvs,
            owned: p.parts.iter().map(|q| q.nodes[..q.ghost_from].to_vec()).collect(),
            nodes: me.nodes.clone(),
            homes,
            owner: p.owner,
            dofs: p.dofs,
            strains: p.strains,
            bound: p.bound,
        })
    }

    /// Runs `n` steps, exchanging ghosts after every `depth`-th (a collective). As
    /// [`SplitStepper::step`](crate::fem::split::SplitStepper::step), an exchange between two
    /// steps of one call overlaps the next step's interior (the status agreement, the messages
    /// and the ghost writes happen while the device steps the nodes that touch no ghost).
    pub fn step(&mut self, n: usize) -> Result<()> {
        for k in 0..n {
            if k > 0 && self.overlap && self.since >= self.layers {
                self.step_overlapped()?;
            } else {
                if self.since >= self.layers {
                    self.exchange()?;
                }
                let stepped = self.stepper.step(1);
                self.ranks.failed(stepped)?;
                self.since += 1;
            }
        }
        if self.since >= self.layers {
            self.exchange()?;
        }
        Ok(())
    }

    /// Whether exchanges inside a `step(n)` overlap interior work ([`Ranks::overlap`], two or
    /// more ranks, the node gather).
    pub fn overlaps(&self) -> bool {
        self.overlap
    }

    /// One step with the pending exchange overlapped: the sent nodes read, the interior
    /// launched, then the exchange finished and the nodes next to the ghosts launched.
    fn step_overlapped(&mut self) -> Result<()> {
        let d = self.dofs;
        let (send, ghost_from, all) = (self.send * d, self.ghost_from * d, self.nodes.len() * d);
        let (mut u, mut v) = (vec![R::default(); send], vec![R::default(); send]);
        let started = (|| {
            // SAFETY: `u` and `v` outlive the reads, which are waited for below.
            let reads = unsafe { self.stepper.read_state_async(0, &mut u, &mut v) }?;
            let launched = self.stepper.gather_range(send..ghost_from);
            // Waited for whatever the launch did: the reads write into `u` and `v`.
            let read = reads.iter().try_for_each(|e| e.wait());
            launched.and(read)
        })();
        self.exchange_from(started.map(|()| (u, v)))?;
        let rest = (|| {
            self.stepper.gather_range(0..send)?;
            self.stepper.gather_range(ghost_from..all)?;
            self.stepper.end_ranges()
        })();
        self.ranks.failed(rest)?;
        self.since = 1;
        Ok(())
    }

    /// Overwrites every ghost with its owner's `u` and `v`: one packed message per neighbour.
    fn exchange(&mut self) -> Result<()> {
        let local = self.stepper.state_range(0, self.send * self.dofs);
        self.exchange_from(local)
    }

    /// [`RankStepper::exchange`] from this rank's sent range `local` (or its failure to read it).
    fn exchange_from(&mut self, local: Result<(Vec<R>, Vec<R>)>) -> Result<()> {
        let d = self.dofs;
        {
            let (u, v) = self.ranks.agree(local)?;
            let pack = |idx: &[usize]| -> Vec<R> {
                let mut out = Vec::with_capacity(2 * idx.len() * d);
                for &i in idx {
                    out.extend_from_slice(&u[i * d..(i + 1) * d]);
                }
                for &i in idx {
                    out.extend_from_slice(&v[i * d..(i + 1) * d]);
                }
                out
            };
            let outgoing: Vec<(usize, Vec<R>)> = self.sends.iter().map(|(q, idx)| (*q, pack(idx))).collect();
            let mut incoming: Vec<(usize, Vec<R>)> = self
                .recvs
                .iter()
                .map(|(o, pos)| (*o, vec![R::default(); 2 * pos.len() * d]))
                .collect();
            let world = self.ranks.inner.universe.world();
            mpi::request::scope(|scope| {
                let mut reqs = Vec::new();
                for (o, buf) in incoming.iter_mut() {
                    reqs.push(world.process_at_rank(*o as i32).immediate_receive_into_with_tag(
                        scope,
                        bytes_mut(buf),
                        2,
                    ));
                }
                for (q, buf) in &outgoing {
                    reqs.push(
                        world
                            .process_at_rank(*q as i32)
                            .immediate_send_with_tag(scope, bytes(buf), 2),
                    );
                }
                for q in reqs {
                    q.wait();
                }
            });
            let ghosts = self.nodes.len() - self.ghost_from;
            let (mut gu, mut gv) = (vec![R::default(); ghosts * d], vec![R::default(); ghosts * d]);
            for ((_, pos), (_, buf)) in self.recvs.iter().zip(&incoming) {
                let half = pos.len() * d;
                for (j, &g) in pos.iter().enumerate() {
                    gu[g * d..(g + 1) * d].copy_from_slice(&buf[j * d..(j + 1) * d]);
                    gv[g * d..(g + 1) * d].copy_from_slice(&buf[half + j * d..half + (j + 1) * d]);
                }
            }
            self.ranks
                .failed(self.stepper.set_state_range(self.ghost_from * d, &gu, &gv))?;
        }
        self.since = 0;
        Ok(())
    }

    /// Sets the whole model's displacements and velocities (every rank passes them).
    pub fn set_state(&mut self, u: &[R], v: &[R]) -> Result<()> {
        let d = self.dofs;
        let n = self.owner.len() * d;
        for (what, x) in [("displacements", u), ("velocities", v)] {
            self.ranks.failed(crate::error::check_len(what, n, x.len()))?;
        }
        let pick = |x: &[R]| -> Vec<R> {
            self.nodes
                .iter()
                .flat_map(|&g| x[g * d..(g + 1) * d].to_vec())
                .collect()
        };
        let (pu, pv) = (pick(u), pick(v));
        self.since = 0;
        self.ranks.failed(self.stepper.set_state(&pu, &pv))
    }

    /// Adds an external force; this rank applies it to every loaded node it holds (own or
    /// ghost, so ghost copies step as their owners until the next exchange).
    pub fn add_load(&mut self, load: &crate::fem::load::Load) -> Result<()> {
        self.ranks
            .failed(crate::fem::load::check_load(load, self.owner.len() * self.dofs))?;
        match crate::fem::split::local_load(load, &self.nodes, self.dofs) {
            Some(l) => self.ranks.failed(self.stepper.add_load(&l)),
            None => Ok(()),
        }
    }

    /// Gathers per-item values of every rank's own items (`per` reals each; `ids[q]` the
    /// global items of rank `q` in its local order) into one array on every rank.
    fn gather(&self, mine: Result<Vec<R>>, ids: &[Vec<usize>], per: usize, len: usize) -> Result<Vec<R>> {
        let mine = self.ranks.agree(mine)?;
        let size = size_of::<R>() as i32;
        let counts: Vec<i32> = ids.iter().map(|q| (q.len() * per) as i32 * size).collect();
        let displs: Vec<i32> = counts
            .iter()
            .scan(0, |acc, &c| {
                let at = *acc;
                *acc += c;
                Some(at)
            })
            .collect();
        let total: usize = ids.iter().map(|q| q.len() * per).sum();
        let mut flat = vec![R::default(); total];
        {
            let mut part = PartitionMut::new(bytes_mut(&mut flat), counts, displs);
            self.ranks
                .inner
                .universe
                .world()
                .all_gather_varcount_into(bytes(&mine), &mut part);
        }
        let mut out = vec![R::default(); len * per];
        let mut at = 0;
        for q in ids {
            for &g in q {
                out[g * per..(g + 1) * per].copy_from_slice(&flat[at..at + per]);
                at += per;
            }
        }
        Ok(out)
    }

    fn own_values(&self, all: Result<Vec<R>>) -> Result<Vec<R>> {
        let d = self.dofs;
        let mine = all.map(|x| x[..self.ghost_from * d].to_vec());
        self.gather(mine, &self.owned, d, self.owner.len())
    }

    /// The whole model's displacements on every rank (a collective).
    pub fn displacement(&self) -> Result<Vec<R>> {
        self.own_values(self.stepper.displacement())
    }

    /// The whole model's velocities on every rank (a collective).
    pub fn velocity(&self) -> Result<Vec<R>> {
        self.own_values(self.stepper.velocity())
    }

    /// `σ = G_e·U_e` per element on every rank (a collective).
    pub fn stress(&self) -> Result<Vec<R>> {
        let s = self.strains;
        let me = self.ranks.rank();
        let mine = self.stepper.stress().map(|all| {
            self.homes[me]
                .iter()
                .flat_map(|&(_, i)| all[i * s..(i + 1) * s].to_vec())
                .collect::<Vec<R>>()
        });
        let ids: Vec<Vec<usize>> = self.homes.iter().map(|h| h.iter().map(|&(e, _)| e).collect()).collect();
        let ne = self.homes.iter().map(Vec::len).sum();
        self.gather(mine, &ids, s, ne)
    }

    /// The whole model's stability bound.
    pub fn stability_bound(&self) -> &crate::fem::stability::StabilityBound {
        &self.bound
    }
}

impl<R: crate::fem::Real> crate::fem::stepper::Explicit<R> for RankStepper<R> {
    fn step(&mut self, n: usize) -> Result<()> {
        RankStepper::step(self, n)
    }
    fn set_state(&mut self, u: &[R], v: &[R]) -> Result<()> {
        RankStepper::set_state(self, u, v)
    }
    fn add_load(&mut self, load: &crate::fem::load::Load) -> Result<()> {
        RankStepper::add_load(self, load)
    }
    fn displacement(&self) -> Result<Vec<R>> {
        RankStepper::displacement(self)
    }
    fn velocity(&self) -> Result<Vec<R>> {
        RankStepper::velocity(self)
    }
    fn stress(&self) -> Result<Vec<R>> {
        RankStepper::stress(self)
    }
    fn stability_bound(&self) -> &crate::fem::stability::StabilityBound {
        RankStepper::stability_bound(self)
    }
}

/// A lattice rule on this rank's slab of a lattice split across ranks: each colour updates the
/// slab and its halos, which are exchanged (a collective) only when a colour would read past
/// their current part — the same bits as one device (see [`crate::lattice::SplitLatticePlan`]).
#[derive(Debug)]
pub struct RankLatticePlan {
    plan: crate::lattice::LatticePlan,
    layout: Arc<Layout>,
    reach: usize,
    ranks: Ranks,
    spec: crate::lattice::LatticeSpec,
}

impl RankLatticePlan {
    /// Builds the rule for this rank's slab of `shape`; a collective (every rank fails if one
    /// does). Refuses what [`crate::lattice::SplitLatticePlan::new`] refuses.
    pub fn new(ranks: &Ranks, spec: crate::lattice::LatticeSpec, shape: Shape) -> Result<RankLatticePlan> {
        let made = (|| -> Result<(crate::lattice::LatticePlan, Layout, usize)> {
            let layout = ranks.layout(shape)?;
            let reach = crate::lattice::split_reach(&spec, shape, &layout)?;
            let plan = crate::lattice::slab_plan(ranks.device(), spec, &layout, ranks.rank())?;
            Ok((plan, layout, reach))
        })();
        let (plan, layout, reach) = ranks.agree(made)?;
        Ok(RankLatticePlan {
            plan,
            layout: Arc::new(layout),
            reach,
            ranks: ranks.clone(),
            spec,
        })
    }

    /// Step `step` of the run `seed` on this rank's slab, in place (a collective where halos are
    /// exchanged). Returns this rank's first and last launches' events.
    pub fn run<T: Scalar>(
        &self,
        state: &RankGrid<T>,
        args: &[RankArg<'_>],
        seed: u64,
        step: u32,
    ) -> Result<crate::lattice::StepEvents> {
        let list: Vec<StencilArg<'_>> = args.iter().map(|a| a.arg.clone()).collect();
        self.ranks
            .failed(crate::stencil::check_arg_shapes(self.plan.shape(), &list))?;
        let (mut first, mut last) = (None, None);
        let colours = self.spec.colours;
        let overlap = self.ranks.inner.overlap && self.ranks.size() > 1;
        for colour in 0..colours {
            if overlap {
                // As on local devices (`colour_overlapped`), with this rank's slab only; every
                // rank finds the same grids stale, so the exchanges' collectives match.
                let grids: Vec<(&str, &dyn Halo)> = args.iter().filter_map(|a| a.grid).collect();
                let stale = self.ranks.failed(crate::lattice::split::stale_grids(
                    self.spec.name,
                    &self.layout,
                    self.reach,
                    &grids,
                ))?;
                if !stale.is_empty() {
                    let slab = [crate::lattice::split::ColourSlab {
                        slab: self.ranks.rank(),
                        plan: &self.plan,
                        device: self.ranks.device(),
                        args: &list,
                    }];
                    let timed = (self.ranks.rank(), colour == 0 || colour + 1 == colours);
                    let (f, l) = self.ranks.failed(crate::lattice::split::colour_overlapped(
                        &self.layout,
                        &stale,
                        &slab,
                        (seed, step, colour),
                        timed,
                    ))?;
                    if colour == 0 {
                        first = f;
                    }
                    if colour + 1 == colours {
                        last = l;
                    }
                    state.set_valid(Halo::valid_depth(state).saturating_sub(self.reach));
                    continue;
                }
            }
            let grids = args.iter().filter_map(|a| a.grid);
            self.ranks
                .failed(refresh_inputs(self.spec.name, &self.layout, self.reach, grids))?;
            let kernel = self.ranks.failed(self.plan.kernel_ref())?;
            let event = colour == 0 || colour + 1 == colours;
            let ev = self.ranks.failed(self.plan.launch_colour(
                kernel,
                self.ranks.device(),
                &list,
                seed,
                step,
                colour,
                event,
            ))?;
            if colour == 0 {
                first = ev.clone();
            }
            if colour + 1 == colours {
                last = ev;
            }
            state.set_valid(Halo::valid_depth(state).saturating_sub(self.reach));
        }
        match (first, last) {
            (Some(first), Some(last)) => Ok(crate::lattice::StepEvents::new(first, last)),
            _ => Err(Error::InvalidConfig("a colour's launch gave no event".into())),
        }
    }
}

impl crate::lattice::LatticeTarget for Ranks {
    type Plan = RankLatticePlan;
    fn lattice_plan(&self, spec: crate::lattice::LatticeSpec, shape: Shape) -> Result<RankLatticePlan> {
        RankLatticePlan::new(self, spec, shape)
    }
}

impl crate::lattice::LatticeLaunch for RankLatticePlan {
    type Like = RankPlan;
    fn run_step<T: Scalar>(
        &self,
        state: &RankGrid<T>,
        args: &[RankArg<'_>],
        seed: u64,
        step: u32,
    ) -> Result<crate::lattice::StepEvents> {
        self.run(state, args, seed, step)
    }
}

/// A sweep on this rank's slab of a grid split across ranks: the ranks sweep their slabs one
/// after the other in the sweep's direction, as [`crate::sweep::split::SplitSweepPlan`] does
/// with devices, each receiving the new edge planes of the rank behind it in one message before
/// it sweeps and sending its own to the rank ahead after. Every message starts with a status,
/// so a rank that fails hands its failure down the chain instead of leaving the next rank
/// waiting; the ranks then agree on the outcome.
#[derive(Debug)]
pub struct RankSweepPlan {
    plan: crate::sweep::SweepPlan,
    layout: Arc<Layout>,
    halo: usize,
    forward: bool,
    ranks: Ranks,
    name: &'static str,
}

impl RankSweepPlan {
    /// Builds the sweep for this rank's window of `shape`; a collective (every rank fails if one
    /// does). Refuses what [`crate::sweep::split::SplitSweepPlan::new`] refuses.
    pub fn new(
        ranks: &Ranks,
        spec: crate::sweep::SweepSpec,
        config: &crate::sweep::SweepConfig,
        shape: Shape,
    ) -> Result<RankSweepPlan> {
        let made = (|| -> Result<(crate::sweep::SweepPlan, Layout, usize)> {
            let layout = ranks.layout(shape)?;
            let halo = crate::sweep::split::split_halo(&spec, shape, &layout)?;
            let plan = crate::sweep::split::slab_plan(ranks.device(), spec, config, &layout, ranks.rank(), halo)?;
            Ok((plan, layout, halo))
        })();
        let (plan, layout, halo) = ranks.agree(made)?;
        Ok(RankSweepPlan {
            plan,
            layout: Arc::new(layout),
            halo,
            forward: spec.forward[spec.rank - 1],
            ranks: ranks.clone(),
            name: spec.name,
        })
    }

    /// `Err` if a persistent schedule gave up waiting on this rank's device.
    pub fn check(&self) -> Result<()> {
        self.plan.check()
    }

    /// One sweep of `state`, in place (a collective): the other grids' halos refreshed where
    /// stale, the state's halos exchanged, then this rank's turn in the chain. Waits for the
    /// whole sweep; its [`crate::SweepEvents::elapsed_ns`] is the wall-clock time on this rank.
    pub fn run<T: Scalar>(&self, state: &RankGrid<T>, args: &[RankArg<'_>]) -> Result<crate::SweepEvents> {
        let start = std::time::Instant::now();
        let what = format!("the swept field of sweep `{}`", self.name);
        self.ranks.failed(check_layout(&what, state.layout(), &self.layout))?;
        let grids = crate::sweep::split::inputs_besides(args.iter().filter_map(|a| a.grid), state);
        self.ranks
            .failed(refresh_inputs(self.name, &self.layout, self.halo, grids))?;
        if state.valid_depth() < self.halo {
            state.exchange()?;
        } else {
            // The chain below waits on single ranks: first make sure none has left.
            self.ranks.agree(Ok(()))?;
        }
        let (r, k) = (self.ranks.rank(), self.ranks.size());
        let behind = if self.forward {
            r.checked_sub(1)
        } else {
            (r + 1 < k).then_some(r + 1)
        };
        let ahead = if self.forward {
            (r + 1 < k).then_some(r + 1)
        } else {
            r.checked_sub(1)
        };
        let world = self.ranks.inner.universe.world();
        let n = self.halo * self.layout.plane;
        let mut planes = vec![T::default(); n];
        // The rank behind: a status (HEALTHY, or the rank that failed first), then its planes.
        let mut outcome: Result<Option<crate::SweepEvents>> = Ok(None);
        if let Some(b) = behind {
            let mut status = 0i32;
            world.process_at_rank(b as i32).receive_into_with_tag(&mut status, 2);
            if status == HEALTHY {
                world
                    .process_at_rank(b as i32)
                    .receive_into_with_tag(bytes_mut(&mut planes), 3);
                let (_, to) = crate::sweep::split::hand_over(&self.layout, b, r, self.halo);
                outcome = state.part.buffer().write_at(to, &planes).map(|()| None);
            } else {
                outcome = Err(Error::Ranks {
                    rank: status,
                    size: k as i32,
                    detail: format!("failed in sweep `{}` before this rank's turn", self.name),
                });
            }
        }
        let list: Vec<StencilArg<'_>> = args.iter().map(|a| a.arg.clone()).collect();
        if outcome.is_ok() {
            outcome = (|| {
                let events = self.plan.run(&state.part, &list)?;
                events.wait()?;
                Ok(Some(events))
            })();
        }
        if let Some(a) = ahead {
            if outcome.is_ok() {
                let (from, _) = crate::sweep::split::hand_over(&self.layout, r, a, self.halo);
                if let Err(e) = state.part.buffer().read_at(from, &mut planes) {
                    outcome = Err(e);
                }
            }
            let status = match &outcome {
                Ok(_) => HEALTHY,
                Err(Error::Ranks { rank, .. }) => *rank,
                Err(_) => r as i32,
            };
            world.process_at_rank(a as i32).send_with_tag(&status, 2);
            if status == HEALTHY {
                world.process_at_rank(a as i32).send_with_tag(bytes(&planes), 3);
            }
        }
        // The halos ahead of the sweep hold old values now.
        state.set_valid(0);
        let events = self.ranks.agree(outcome)?;
        events
            .map(|e| e.with_wall_ns(crate::sweep::split::wall_ns(start)))
            .ok_or_else(|| self.ranks.error(format!("sweep `{}` ran no launch", self.name)))
    }
}

impl crate::sweep::split::SweepTarget for Ranks {
    type SweepPlan = RankSweepPlan;
    fn sweep_plan(
        &self,
        spec: crate::sweep::SweepSpec,
        config: &crate::sweep::SweepConfig,
        shape: Shape,
    ) -> Result<RankSweepPlan> {
        RankSweepPlan::new(self, spec, config, shape)
    }
}

impl crate::sweep::split::SweepLaunch for RankSweepPlan {
    type Like = RankPlan;
    fn run_sweep<T: Scalar>(&self, state: &RankGrid<T>, args: &[RankArg<'_>]) -> Result<crate::SweepEvents> {
        self.run(state, args)
    }
    /// This rank's own check; a stall elsewhere shows on that rank (and, through the next
    /// sweep's status agreement, on every rank).
    fn check(&self) -> Result<()> {
        self.plan.check()
    }
}
