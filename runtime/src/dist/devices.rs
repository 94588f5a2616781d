//! Several devices in one host (issue 13, item 1): a grid split along its slowest axis (`y` in
//! 2-D, `z` in 3-D, `x` in 1-D) into slabs, one per device, each slab with `depth` halo planes
//! on the sides it shares with a neighbour (and on both ends when the split axis is periodic).
//!
//! Each device runs the ordinary generated kernel on its slab as if the slab were a whole grid.
//! Points of the slab's own planes read at most `reach = halo × steps per launch` planes
//! away, so they compute exactly what one device computes (the same arithmetic on the same
//! values: bitwise equal), as long as the halo planes they read hold the neighbours' values.
//! The halo planes themselves are computed too, from halo planes further out, so after a launch
//! the halo is still right up to `depth − reach` planes deep. A grid therefore tracks how deep
//! its halo is valid and is exchanged only when a launch needs more than it has: with the
//! default depth of 8 planes a Jacobi sweep (halo 1) exchanges every 8th launch, so the cost
//! of a transfer (latency dominated: a few planes) is spread over 8 launches (communication-
//! avoiding deep halos). Exchanges go through host memory: OpenCL buffers of different devices
//! (contexts) cannot be copied into each other.
//!
//! [`Devices`] replaces [`Device`] in the generated `plan` and its grids replace
//! [`DeviceGrid`](crate::DeviceGrid) in `launch_plan`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::buffer::{Buffer, Scalar};
use crate::cl::{Lane, Pinned};
use crate::device::{lock, Device};
use crate::error::{Error, Result};
use crate::grid::{DeviceGrid, Packable, PackedGrid, TargetGrid};
use crate::grid::{HostGrid, Shape};
use crate::launch::{KernelArg, KernelScalar, Reduce, Reduction};
use crate::params::Params;
use crate::program::Event;

use super::{Halo, Layout, Place};

/// Halo planes per side when none are asked for: a Jacobi sweep exchanges every 8th launch.
pub const DEFAULT_DEPTH: usize = 8;

/// Several devices sharing a grid, and how it is split among them: relative rates (the share of
/// planes each gets), halo depth, and whether the split axis wraps.
#[derive(Clone, Debug)]
pub struct Devices {
    pub(crate) devices: Vec<Device>,
    pub(crate) weights: Vec<f64>,
    pub(crate) depth: usize,
    pub(crate) periodic: bool,
    pub(crate) overlap: bool,
}

impl Devices {
    /// `devices` with equal shares, [`DEFAULT_DEPTH`] halo planes, a non-periodic split axis.
    /// The same device may appear several times (its slabs then share its queue).
    pub fn new(devices: Vec<Device>) -> Result<Devices> {
        if devices.is_empty() {
            return Err(Error::InvalidConfig(
                "`Devices::new` needs at least one device; `Device::list()` shows what exists".into(),
            ));
        }
        let weights = vec![1.0; devices.len()];
        Ok(Devices {
            devices,
            weights,
            depth: DEFAULT_DEPTH,
            periodic: false,
            overlap: true,
        })
    }

    /// `n` devices for a split of `device`'s work: the GPUs of `device`'s platform in turn when
    /// it has any, else `device` itself `n` times (PoCL: slabs that share one CPU).
    pub fn spread(device: &Device, n: usize) -> Result<Devices> {
        let mut gpus = Vec::new();
        for info in Device::list()? {
            if info.kind == crate::DeviceKind::Gpu && info.platform == device.info().platform {
                gpus.push(Device::select(&info.index.to_string())?);
            }
        }
        if gpus.is_empty() {
            gpus.push(device.clone());
        }
        Devices::new((0..n).map(|i| gpus[i % gpus.len()].clone()).collect())
    }

    /// Shares proportional to `weights` (one positive, finite number per device: e.g. each
    /// device's measured bandwidth for a memory-bound stencil).
    pub fn with_weights(mut self, weights: &[f64]) -> Result<Devices> {
        if weights.len() != self.devices.len() {
            return Err(Error::LengthMismatch {
                what: "weights of `Devices::with_weights` (one per device)".into(),
                expected: self.devices.len(),
                found: weights.len(),
            });
        }
        if let Some(w) = weights.iter().find(|w| !(w.is_finite() && **w > 0.0)) {
            return Err(Error::InvalidConfig(format!(
                "weight {w} of `Devices::with_weights` is not a positive finite number"
            )));
        }
        self.weights = weights.to_vec();
        Ok(self)
    }

    /// Shares from each device's measured rate: a device-side copy of `bytes` bytes, the
    /// median of 5 profiled copies (stencils are bandwidth bound, so the copy rate predicts
    /// their speed). The rates are in [`Devices::weights`] (GB/s).
    pub fn measured(self, bytes: usize) -> Result<Devices> {
        let mut rates = Vec::with_capacity(self.devices.len());
        for d in &self.devices {
            rates.push(copy_rate(d, bytes)?);
        }
        self.with_weights(&rates)
    }

    /// `planes` halo planes per shared side (at least 1): a grid is exchanged once its valid
    /// halo is shallower than a launch's reach (the stencil's halo along the split axis ×
    /// steps per launch), so deeper halos mean rarer exchanges and more redundant planes.
    pub fn depth(mut self, planes: usize) -> Result<Devices> {
        if planes == 0 {
            return Err(Error::InvalidConfig("`Devices::depth` must be at least 1 plane".into()));
        }
        self.depth = planes;
        Ok(self)
    }

    /// Declares the split axis periodic: the first and last slabs exchange with each other.
    /// Stencils with `boundary = periodic` need it; others refuse it.
    pub fn periodic(mut self, periodic: bool) -> Devices {
        self.periodic = periodic;
        self
    }

    /// Whether exchanges overlap interior work ([`Devices::overlap`]).
    pub(crate) fn overlapping(&self) -> bool {
        self.overlap
    }

    /// Whether a launch that needs an exchange overlaps it with interior work (the default):
    /// each device first computes the planes that do not read the stale halo, while the
    /// edges travel on its transfer queue, then the planes next to the halos. Same bits
    /// either way; `false` exchanges first and then launches (for measuring what overlap
    /// hides). Kernels that cannot be launched over a range of planes (2-D tiled, steps,
    /// reductions) always exchange first.
    pub fn overlap(mut self, overlap: bool) -> Devices {
        self.overlap = overlap;
        self
    }

    /// Halo planes per shared side (for the FEM split: rings of ghost elements).
    pub fn depth_planes(&self) -> usize {
        self.depth
    }

    /// The devices, in slab order (the first gets the lowest planes).
    pub fn devices(&self) -> &[Device] {
        &self.devices
    }

    /// The relative shares.
    pub fn weights(&self) -> &[f64] {
        &self.weights
    }

    /// How a grid of `shape` is split among the devices.
    pub fn layout(&self, shape: Shape) -> Result<Layout> {
        Layout::new(shape, &self.weights, self.depth, self.periodic)
    }
}

/// Median copy rate of `device` in GB/s over 5 profiled device-side copies of `bytes` bytes.
pub(crate) fn copy_rate(device: &Device, bytes: usize) -> Result<f64> {
    let n = (bytes / 4).max(1);
    let src = Buffer::<f32>::new(device, n)?;
    let mut dst = Buffer::<f32>::new(device, n)?;
    let mut times = Vec::with_capacity(5);
    dst.copy_from(&src)?.wait()?;
    for _ in 0..5 {
        let ns = dst.copy_from(&src)?.duration_ns()?;
        times.push(ns.max(1) as f64);
    }
    times.sort_by(f64::total_cmp);
    Ok(2.0 * (n * 4) as f64 / times[2])
}

/// A grid split over [`Devices`]: one [`DeviceGrid`] slab per device.
pub struct SplitGrid<T: Scalar> {
    parts: Vec<DeviceGrid<T>>,
    layout: Arc<Layout>,
    /// Halo planes (per shared side) that hold the neighbours' current values.
    valid: AtomicUsize,
    /// Pinned host memory of the exchanges (one per halo filled, made on first use) and the
    /// writes of the last exchange still reading it.
    staging: Mutex<Staging<T>>,
}

struct Staging<T: Scalar> {
    buffers: Vec<Pinned<T>>,
    /// The halo writes of the last exchange (they read `buffers`).
    pending: Vec<Event>,
    /// A started exchange ([`SplitGrid::exchange_start`]): its reads into `buffers` and the
    /// halo planes next to the own planes it leaves as they are.
    started: Option<(Vec<Event>, usize)>,
}

/// One halo fill of an exchange: slab `to` receives at element `at` the planes that slab
/// `from` sends from element `src`.
#[derive(Clone, Copy, Debug)]
struct Move {
    to: usize,
    at: usize,
    from: usize,
    src: usize,
}

impl<T: Scalar> std::fmt::Debug for SplitGrid<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SplitGrid")
            .field("parts", &self.parts)
            .field("layout", &self.layout)
            .field("valid", &self.valid)
            .finish_non_exhaustive()
    }
}

impl<T: Scalar> Drop for SplitGrid<T> {
    fn drop(&mut self) {
        // The last exchange's reads and writes use the staging memory: let them finish first.
        let mut st = lock(&self.staging);
        let reads = st.started.take().map(|r| r.0).unwrap_or_default();
        for e in st.pending.drain(..).chain(reads) {
            let _ = e.wait();
        }
    }
}

impl<T: Scalar> SplitGrid<T> {
    /// A zero-filled grid of `shape` split over `devices`.
    pub fn new(devices: &Devices, shape: Shape) -> Result<SplitGrid<T>> {
        let layout = Arc::new(devices.layout(shape)?);
        let parts = (0..devices.devices.len())
            .map(|i| DeviceGrid::new(&devices.devices[i], layout.part_shape(i)))
            .collect::<Result<Vec<_>>>()?;
        Ok(SplitGrid {
            parts,
            valid: AtomicUsize::new(layout.depth),
            layout,
            staging: Mutex::new(Staging {
                buffers: Vec::new(),
                pending: Vec::new(),
                started: None,
            }),
        })
    }

    /// A copy of `host` split over `devices` (halos filled).
    pub fn from_host(devices: &Devices, host: &HostGrid<T>) -> Result<SplitGrid<T>> {
        let mut g = SplitGrid::new(devices, host.shape())?;
        g.upload(host)?;
        Ok(g)
    }

    /// The whole grid's shape.
    pub fn shape(&self) -> Shape {
        self.layout.shape
    }

    /// How the grid is split.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The slabs, one per device (halo planes included).
    pub fn parts(&self) -> &[DeviceGrid<T>] {
        &self.parts
    }

    /// Overwrites the grid (halos included) with a host grid of its shape.
    pub fn upload(&mut self, host: &HostGrid<T>) -> Result<()> {
        crate::grid::check_shape("upload", self.shape(), host.shape())?;
        let l = &self.layout;
        for (i, part) in self.parts.iter_mut().enumerate() {
            part.buffer().write_at(0, &l.slab(i, host.data()))?;
        }
        self.valid.store(l.depth, Ordering::Relaxed);
        Ok(())
    }

    /// Reads the grid's own planes back into a host grid of its shape (waits for the
    /// launches that write it).
    pub fn download(&self, host: &mut HostGrid<T>) -> Result<()> {
        crate::grid::check_shape("download", host.shape(), self.shape())?;
        let l = &self.layout;
        for (i, part) in self.parts.iter().enumerate() {
            let (lo, hi) = l.owned[i];
            part.buffer()
                .read_at(l.below(i) * l.plane, &mut host.data_mut()[lo * l.plane..hi * l.plane])?;
        }
        Ok(())
    }

    /// The whole grid on the host.
    pub fn to_host(&self) -> Result<HostGrid<T>> {
        let mut h = HostGrid::new(self.shape())?;
        self.download(&mut h)?;
        Ok(h)
    }

    /// Halo planes that hold the neighbours' current values.
    pub fn valid_depth(&self) -> usize {
        self.valid.load(Ordering::Relaxed)
    }

    /// Fills every halo with the neighbours' current planes: all reads first (each waits for
    /// its own device's queue while the others keep running), then the writes, queued before
    /// the next launches on each device.
    pub fn exchange(&self) -> Result<()> {
        self.exchange_start(0)?;
        self.exchange_finish(Lane::Compute).map(drop)
    }

    /// The halo fills of an exchange that keeps `keep` current halo planes
    /// ([`Layout::edges`]): a lower halo from the lower neighbour's upper edge, an upper halo
    /// from the upper neighbour's lower edge.
    fn moves(&self, keep: usize) -> Vec<Move> {
        let l = &self.layout;
        let k = self.parts.len();
        let mut moves = Vec::new();
        for i in 0..k {
            let [low, high] = l.edges(i, keep);
            let (below, above) = ((i + k - 1) % k, (i + 1) % k);
            if let (Some((_, at)), [_, Some((src, _))]) = (low, l.edges(below, keep)) {
                moves.push(Move {
                    to: i,
                    at,
                    from: below,
                    src,
                });
            }
            if let (Some((_, at)), [Some((src, _)), _]) = (high, l.edges(above, keep)) {
                moves.push(Move {
                    to: i,
                    at,
                    from: above,
                    src,
                });
            }
        }
        moves
    }

    /// Starts an exchange: each edge is read into pinned host memory on its device's transfer
    /// queue once everything queued so far on that device has run; returns without waiting.
    /// The `keep` halo planes next to each slab's own planes already hold current values and
    /// are neither read nor rewritten, so a launch may read them meanwhile.
    pub(crate) fn exchange_start(&self, keep: usize) -> Result<()> {
        let (d, p) = (self.layout.depth, self.layout.plane);
        let keep = keep.min(d);
        let moves = self.moves(keep);
        let mut staging = lock(&self.staging);
        let st = &mut *staging;
        // The previous exchange's writes read the staging memory we are about to refill.
        for e in st
            .pending
            .drain(..)
            .chain(st.started.take().map(|r| r.0).unwrap_or_default())
        {
            e.wait()?;
        }
        if st.buffers.len() != moves.len() {
            st.buffers = moves
                .iter()
                .map(|m| self.parts[m.from].buffer().pinned(d * p))
                .collect::<Result<_>>()?;
        }
        // One marker per device: its transfers wait for the launches queued before them.
        let mut markers: Vec<Option<Event>> = vec![None; self.parts.len()];
        let mut reads = Vec::with_capacity(moves.len());
        let n = (d - keep) * p;
        for (m, buf) in moves.iter().zip(st.buffers.iter_mut()) {
            let part = &self.parts[m.from];
            let marker = match &mut markers[m.from] {
                Some(e) => e.clone(),
                slot => slot.insert(part.device().queue().marker()?).clone(),
            };
            // SAFETY: the staging buffer is owned by this grid; the read's event is kept in
            // `started` and waited for before the buffer is refilled or dropped.
            reads.push(unsafe {
                part.buffer()
                    .read_at_async(Lane::Transfer, m.src, &mut buf.as_mut_slice()[..n], &[marker])
            }?);
        }
        st.started = Some((reads, keep));
        Ok(())
    }

    /// Completes a started exchange: waits for its reads and enqueues the halo writes on each
    /// device's `lane` (the compute lane orders them before the next launches; the transfer
    /// lane leaves that to the events returned, `(slab, write)`).
    pub(crate) fn exchange_finish(&self, lane: Lane) -> Result<Vec<(usize, Event)>> {
        let (d, p) = (self.layout.depth, self.layout.plane);
        let mut staging = lock(&self.staging);
        let st = &mut *staging;
        let Some((reads, keep)) = st.started.take() else {
            return Err(Error::InvalidConfig(
                "a split grid's exchange was finished without being started".into(),
            ));
        };
        for r in &reads {
            r.wait()?;
        }
        let n = (d - keep) * p;
        let mut writes = Vec::with_capacity(reads.len());
        for (m, buf) in self.moves(keep).iter().zip(st.buffers.iter()) {
            // SAFETY: the write's event is kept in `pending` and waited for before the buffer
            // is refilled or dropped.
            let ev = unsafe {
                self.parts[m.to]
                    .buffer()
                    .write_at_async(lane, m.at, &buf.as_slice()[..n], &[])
            }?;
            st.pending.push(ev.clone());
            writes.push((m.to, ev));
        }
        self.valid.store(d, Ordering::Relaxed);
        Ok(writes)
    }
}

/// A grid (`what` `name` of `owner`, e.g. "output `u` of stencil `gs`") split as `grid`, for
/// a plan split as `plan`: an error unless they are the same split.
impl<T: Scalar> Halo for SplitGrid<T> {
    fn layout(&self) -> &Layout {
        &self.layout
    }
    fn valid_depth(&self) -> usize {
        SplitGrid::valid_depth(self)
    }
    fn exchange(&self) -> Result<()> {
        SplitGrid::exchange(self)
    }
    fn set_valid(&self, depth: usize) {
        self.valid.store(depth, Ordering::Relaxed);
    }
    fn exchange_start(&self, keep: usize) -> Result<()> {
        SplitGrid::exchange_start(self, keep)
    }
    fn exchange_finish(&self) -> Result<Vec<(usize, Event)>> {
        SplitGrid::exchange_finish(self, Lane::Transfer)
    }
}

/// One argument of a split launch (built by the generated code).
pub struct SplitArg<'a> {
    /// The argument for each slab's launch.
    pub(crate) parts: Vec<KernelArg<'a>>,
    /// A reduction output: one part per slab, combined in slab order.
    pub(crate) reduction: Option<(&'a str, &'a dyn crate::launch::Reducer)>,
    /// A grid argument's halo state.
    pub(crate) grid: Option<(&'a str, &'a dyn Halo)>,
    /// A params struct or scalar: the same for every slab.
    pub(crate) shared: Option<KernelArg<'a>>,
    /// A packed grid's name: refused (packed grids are not split).
    pub(crate) packed: Option<&'a str>,
}

impl std::fmt::Debug for SplitArg<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SplitArg")
            .field("grid", &self.grid.map(|g| g.0))
            .finish_non_exhaustive()
    }
}

impl<'a> SplitArg<'a> {
    /// A grid argument named as in the stencil function.
    pub fn grid<T: Scalar>(name: &'a str, grid: &'a SplitGrid<T>) -> SplitArg<'a> {
        SplitArg {
            parts: grid.parts.iter().map(|p| KernelArg::grid(name, p)).collect(),
            reduction: None,
            grid: Some((name, grid)),
            shared: None,
            packed: None,
        }
    }
    /// A packed grid ([`PackedGrid`](crate::PackedGrid)): refused by every split launch
    /// ([`Error::PackedSplit`]), as the plan of a stencil with one is.
    pub fn packed(name: &'a str) -> SplitArg<'a> {
        SplitArg {
            parts: vec![],
            reduction: None,
            grid: None,
            shared: None,
            packed: Some(name),
        }
    }
    /// A params struct, the same on every device.
    pub fn params<P: Params>(p: &P) -> SplitArg<'a> {
        SplitArg {
            parts: vec![],
            reduction: None,
            grid: None,
            shared: Some(KernelArg::params(p)),
            packed: None,
        }
    }
    /// A grid argument's name and halo state.
    pub(crate) fn halo(&self) -> Option<(&'a str, &'a dyn Halo)> {
        self.grid
    }
    /// A reduction output: one part per device, combined in device order.
    pub fn reduction<R: crate::launch::Reduce>(name: &'a str, r: &'a crate::launch::Reduction<R>) -> SplitArg<'a> {
        SplitArg {
            parts: vec![],
            reduction: Some((name, r)),
            grid: None,
            shared: None,
            packed: None,
        }
    }
    /// A scalar passed by value to every device.
    pub fn scalar<S: KernelScalar>(v: S) -> SplitArg<'a> {
        SplitArg {
            parts: vec![],
            reduction: None,
            grid: None,
            shared: Some(KernelArg::scalar(v)),
            packed: None,
        }
    }
}

/// The arguments of slab `i`'s launch (of `n`).
pub(crate) fn slab_args<'a>(list: &[SplitArg<'a>], i: usize, n: usize) -> Vec<KernelArg<'a>> {
    list.iter()
        .map(|a| match (&a.shared, a.reduction) {
            (Some(s), _) => s.clone(),
            (None, Some((name, r))) => KernelArg::reduction_part(name, r, i, n),
            (None, None) => a.parts[i].clone(),
        })
        .collect()
}

impl Place for Devices {
    type Grid<T: Scalar> = SplitGrid<T>;
    type Arg<'a> = SplitArg<'a>;
    fn upload<T: Scalar>(&self, host: &HostGrid<T>) -> Result<SplitGrid<T>> {
        SplitGrid::from_host(self, host)
    }
    fn zeros<T: Scalar>(&self, shape: Shape) -> Result<SplitGrid<T>> {
        SplitGrid::new(self, shape)
    }
    fn grid_arg<'a, T: Scalar>(name: &'a str, grid: &'a SplitGrid<T>) -> SplitArg<'a> {
        SplitArg::grid(name, grid)
    }
    fn packed_arg<'a, T: Packable, const BITS: u32>(name: &'a str, _: &'a PackedGrid<T, BITS>) -> SplitArg<'a> {
        SplitArg::packed(name)
    }
    fn params_arg<'a, P: Params>(p: &P) -> SplitArg<'a> {
        SplitArg::params(p)
    }
    fn scalar_arg<'a, S: KernelScalar>(v: S) -> SplitArg<'a> {
        SplitArg::scalar(v)
    }
    fn reduction_arg<'a, R: Reduce>(name: &'a str, r: &'a Reduction<R>) -> SplitArg<'a> {
        SplitArg::reduction(name, r)
    }
}

impl<T: Scalar> TargetGrid<T> for SplitGrid<T> {
    fn shape(&self) -> Shape {
        SplitGrid::shape(self)
    }
    fn to_host(&self) -> Result<HostGrid<T>> {
        SplitGrid::to_host(self)
    }
    fn upload(&mut self, host: &HostGrid<T>) -> Result<()> {
        SplitGrid::upload(self, host)
    }
    fn download(&self, host: &mut HostGrid<T>) -> Result<()> {
        SplitGrid::download(self, host)
    }
}
