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
//! [`DeviceGrid`](crate::DeviceGrid) in `launch_plan` (see [`crate::stencil::target`]).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::buffer::{Buffer, Scalar};
use crate::cl::{Lane, Pinned};
use crate::device::{lock, Device};
use crate::error::{Error, Result};
use crate::host::{Boundary, HostGrid, Params, Shape};
use crate::program::Event;
use crate::stencil::{DeviceGrid, KernelScalar, LaunchConfig, StencilArg, StencilPlan, StencilSpec};

/// Halo planes per side when none are asked for: a Jacobi sweep exchanges every 8th launch.
pub const DEFAULT_DEPTH: usize = 8;

/// Several devices sharing a grid, and how it is split among them: relative rates (the share of
/// planes each gets), halo depth, and whether the split axis wraps.
#[derive(Clone, Debug)]
pub struct Devices {
    devices: Vec<Device>,
    weights: Vec<f64>,
    depth: usize,
    periodic: bool,
    overlap: bool,
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

/// The split of one grid shape: the axis, each slab's own planes and its halo planes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    shape: Shape,
    axis: usize,
    /// Elements per plane (the product of the other extents).
    pub(crate) plane: usize,
    /// Each slab's own planes `lo..hi` along the axis.
    pub(crate) owned: Vec<(usize, usize)>,
    pub(crate) depth: usize,
    pub(crate) periodic: bool,
}

impl Layout {
    pub(crate) fn new(shape: Shape, weights: &[f64], depth: usize, periodic: bool) -> Result<Layout> {
        let axis = shape.rank().max(1) - 1;
        let dims = shape.dims();
        let n = dims[axis];
        let plane: usize = dims
            .iter()
            .enumerate()
            .filter(|&(k, _)| k != axis)
            .map(|(_, &d)| d)
            .product();
        let parts = weights.len();
        let total: f64 = weights.iter().sum();
        let mut bounds = vec![0usize];
        let mut acc = 0.0;
        for w in weights {
            acc += w;
            bounds.push(((acc / total) * n as f64).round() as usize);
        }
        bounds[parts] = n;
        let owned: Vec<(usize, usize)> = bounds.windows(2).map(|w| (w[0], w[1])).collect();
        // A halo is a neighbour's own planes: each slab needs `depth` of them to share.
        let exchanges = parts > 1 || periodic;
        if let Some((i, &(lo, hi))) = owned
            .iter()
            .enumerate()
            .find(|(_, &(lo, hi))| hi - lo == 0 || (exchanges && hi - lo < depth))
        {
            return Err(Error::InvalidConfig(format!(
                "grid {shape} split along axis {axis} among {parts} devices gives device {i} planes {lo}..{hi}; \
                 each needs at least {} (its halo depth): use fewer devices, a shallower `Devices::depth`, or a \
                 larger grid",
                if exchanges { depth.max(1) } else { 1 }
            )));
        }
        Ok(Layout {
            shape,
            axis,
            plane,
            owned,
            depth,
            periodic,
        })
    }

    /// The whole grid's shape.
    pub fn shape(&self) -> Shape {
        self.shape
    }
    /// The split axis (0 = x).
    pub fn axis(&self) -> usize {
        self.axis
    }
    /// Each device's own planes `lo..hi` along the split axis.
    pub fn owned(&self) -> &[(usize, usize)] {
        &self.owned
    }
    /// Halo planes per shared side.
    pub fn depth(&self) -> usize {
        self.depth
    }
    /// Whether the split axis wraps (the first and last slabs exchange).
    pub fn periodic(&self) -> bool {
        self.periodic
    }
    /// Halo planes below slab `i`.
    pub(crate) fn below(&self, i: usize) -> usize {
        if i > 0 || self.periodic {
            self.depth
        } else {
            0
        }
    }
    /// Halo planes above slab `i`.
    pub(crate) fn above(&self, i: usize) -> usize {
        if i + 1 < self.owned.len() || self.periodic {
            self.depth
        } else {
            0
        }
    }
    /// Planes slab `i` holds (halo included).
    pub(crate) fn planes(&self, i: usize) -> usize {
        let (lo, hi) = self.owned[i];
        self.below(i) + (hi - lo) + self.above(i)
    }
    /// The shape of slab `i` as its device sees it.
    pub(crate) fn part_shape(&self, i: usize) -> Shape {
        let mut d = self.shape.dims();
        d[self.axis] = self.planes(i);
        match self.shape.rank() {
            1 => Shape::d1(d[0]),
            2 => Shape::d2(d[0], d[1]),
            _ => Shape::d3(d[0], d[1], d[2]),
        }
    }
    /// Slab `i`'s planes (halos included) taken from the whole grid's `data`.
    pub(crate) fn slab<T: Copy>(&self, i: usize, data: &[T]) -> Vec<T> {
        let p = self.plane;
        (0..self.planes(i))
            .flat_map(|k| {
                let g = self.global_plane(i, k);
                data[g * p..(g + 1) * p].iter().copied()
            })
            .collect()
    }

    /// Where slab `i` exchanges its halos, in elements of its buffer (`(depth − keep) · plane`
    /// each): `(send from, receive at)` for its lower and its upper side, `None` where it has no
    /// halo. The `keep` halo planes next to the own planes hold current values and are left
    /// out: a lower halo keeps its last `keep` planes, an upper one its first, so the lower
    /// side sends from `keep` planes further in and the upper side receives `keep` further out.
    pub(crate) fn edges(&self, i: usize, keep: usize) -> [Option<(usize, usize)>; 2] {
        let (p, d) = (self.plane, self.depth);
        let keep = keep.min(d);
        let own = self.owned[i].1 - self.owned[i].0;
        let low = (self.below(i) > 0).then(|| ((self.below(i) + keep) * p, 0));
        let high = (self.above(i) > 0).then(|| ((self.below(i) + own - d) * p, (self.below(i) + own + keep) * p));
        [low, high]
    }

    /// Where slab `i`'s first point (its halo's, where it has one below) lies in the whole grid,
    /// wrapped where periodic.
    pub(crate) fn origin(&self, i: usize) -> [usize; 3] {
        let mut o = [0; 3];
        o[self.axis] = self.global_plane(i, 0);
        o
    }

    /// The whole grid's plane that slab `i`'s plane `k` holds (wrapping where periodic).
    pub(crate) fn global_plane(&self, i: usize, k: usize) -> usize {
        let n = self.shape.dims()[self.axis] as isize;
        let p = self.owned[i].0 as isize - self.below(i) as isize + k as isize;
        p.rem_euclid(n) as usize
    }
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
        crate::host::check_shape("upload", self.shape(), host.shape())?;
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
        crate::host::check_shape("download", host.shape(), self.shape())?;
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
pub(crate) fn check_layout(what: &str, grid: &Layout, plan: &Layout) -> Result<()> {
    if grid == plan {
        Ok(())
    } else {
        Err(Error::InvalidConfig(format!(
            "{what} is split as {:?}, the plan as {:?}: make grids and plan from the same `Devices` (or `Ranks`) \
             and shape",
            grid.owned(),
            plan.owned()
        )))
    }
}

/// Checks that every grid argument is split as the plan (`layout`), exchanges each input
/// whose valid halo is shallower than the launch's `reach`, and returns the depth the
/// outputs' halos are valid to before the launch's reach is taken off.
pub(crate) fn refresh_inputs<'a>(
    stencil: &str,
    layout: &Layout,
    reach: usize,
    grids: impl Iterator<Item = (&'a str, &'a dyn Halo)>,
) -> Result<usize> {
    let mut valid = layout.depth;
    for (name, g) in grids {
        check_layout(&format!("grid `{name}` of stencil `{stencil}`"), g.layout(), layout)?;
        if g.valid_depth() < reach {
            g.exchange()?;
        }
        valid = valid.min(g.valid_depth());
    }
    Ok(valid)
}

/// A grid argument's view for a split launch: its layout, valid depth and exchange.
pub(crate) trait Halo {
    fn layout(&self) -> &Layout;
    fn valid_depth(&self) -> usize;
    fn exchange(&self) -> Result<()>;
    /// After a launch wrote the grid: its halo holds current values this deep.
    fn set_valid(&self, depth: usize);
    /// Starts an exchange that leaves the `keep` current halo planes alone (see
    /// [`SplitGrid::exchange_start`]); a grid that cannot overlap exchanges it here.
    fn exchange_start(&self, _keep: usize) -> Result<()> {
        self.exchange()
    }
    /// Completes [`Halo::exchange_start`]: the halo writes, `(slab, event)`, on the devices'
    /// transfer queues; none where the exchange was already complete.
    fn exchange_finish(&self) -> Result<Vec<(usize, Event)>> {
        Ok(Vec::new())
    }
}

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
    parts: Vec<StencilArg<'a>>,
    /// A reduction output: one part per slab, combined in slab order.
    reduction: Option<(&'a str, &'a dyn crate::reduce::Reducer)>,
    /// A grid argument's halo state.
    grid: Option<(&'a str, &'a dyn Halo)>,
    /// A params struct or scalar: the same for every slab.
    shared: Option<StencilArg<'a>>,
    /// A packed grid's name: refused (packed grids are not split).
    packed: Option<&'a str>,
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
            parts: grid.parts.iter().map(|p| StencilArg::grid(name, p)).collect(),
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
            shared: Some(StencilArg::params(p)),
            packed: None,
        }
    }
    /// A grid argument's name and halo state.
    pub(crate) fn halo(&self) -> Option<(&'a str, &'a dyn Halo)> {
        self.grid
    }
    /// A reduction output: one part per device, combined in device order.
    pub fn reduction<R: crate::reduce::Reduce>(name: &'a str, r: &'a crate::reduce::Reduction<R>) -> SplitArg<'a> {
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
            shared: Some(StencilArg::scalar(v)),
            packed: None,
        }
    }
}

/// The arguments of slab `i`'s launch (of `n`).
pub(crate) fn slab_args<'a>(list: &[SplitArg<'a>], i: usize, n: usize) -> Vec<StencilArg<'a>> {
    list.iter()
        .map(|a| match (&a.shared, a.reduction) {
            (Some(s), _) => s.clone(),
            (None, Some((name, r))) => StencilArg::reduction_part(name, r, i, n),
            (None, None) => a.parts[i].clone(),
        })
        .collect()
}

/// [`Error::PackedSplit`] for a stencil that reads a grid packed: a slab's halo planes would
/// be whole words of several points, which neither the exchange nor a slab's packing
/// (starting mid-word) handles; refused rather than exchanged wrongly.
pub(crate) fn refuse_packed(spec: &StencilSpec) -> Result<()> {
    match spec.packed.first() {
        Some(p) => Err(Error::PackedSplit {
            stencil: spec.name.into(),
            grid: p.name.into(),
        }),
        None => Ok(()),
    }
}

/// The planes a launch of `spec` with `config` reads along the split axis of `layout` (halo ×
/// steps per launch), checked against the layout's halo depth and periodicity.
pub(crate) fn check_split(spec: &StencilSpec, config: &LaunchConfig, layout: &Layout) -> Result<usize> {
    let axis = layout.axis;
    let reach = spec.halo[axis].saturating_mul(config.iterations());
    let periodic = spec.boundary == Boundary::Periodic;
    if periodic != layout.periodic {
        return Err(Error::InvalidConfig(format!(
            "stencil `{}` has a {:?} boundary but the split axis is {}: {}",
            spec.name,
            spec.boundary,
            if layout.periodic { "periodic" } else { "not periodic" },
            if periodic {
                "use `Devices::periodic(true)` (or `Ranks::periodic(true)`) so the first and last slabs exchange"
            } else {
                "use `periodic(false)` (the default) for stencils that do not wrap"
            }
        )));
    }
    if reach > layout.depth {
        return Err(Error::InvalidConfig(format!(
            "stencil `{}` reads {reach} planes along axis {axis} per launch (halo {} x {} steps) but the split \
             keeps {} halo planes; use `Devices::depth({reach})` (or `Ranks::depth`) or more",
            spec.name,
            spec.halo[axis],
            config.iterations(),
            layout.depth
        )));
    }
    Ok(reach)
}

/// A stencil launch on every slab of a split grid: one [`StencilPlan`] per device.
#[derive(Clone, Debug)]
pub struct SplitPlan {
    parts: Vec<StencilPlan>,
    layout: Arc<Layout>,
    /// Exchanges overlap interior work ([`Devices::overlap`]) where the kernel allows it.
    overlap: bool,
    /// Planes along the split axis a launch reads beyond a point: halo × steps per launch.
    reach: usize,
    name: &'static str,
}

impl SplitPlan {
    /// Sizes and builds `spec` for each slab of `shape` over `devices`. Refuses a halo
    /// shallower than the launch's reach and a boundary that disagrees with the split axis
    /// (periodic stencils need [`Devices::periodic`], others refuse it).
    pub fn new(devices: &Devices, spec: StencilSpec, config: &LaunchConfig, shape: Shape) -> Result<SplitPlan> {
        crate::stencil::check_kernel_shape(&format!("stencil `{}`", spec.name), spec.rank, shape)?;
        refuse_packed(&spec)?;
        let layout = devices.layout(shape)?;
        let reach = check_split(&spec, config, &layout)?;
        let parts = (0..devices.devices.len())
            .map(|i| {
                let mut plan = StencilPlan::new(&devices.devices[i], spec, config, layout.part_shape(i))?;
                plan.place(layout.origin(i), shape);
                let own = layout.owned[i].1 - layout.owned[i].0;
                plan.reduce_planes(layout.axis, layout.below(i), layout.below(i) + own);
                Ok(plan)
            })
            .collect::<Result<Vec<_>>>()?;
        let overlap = devices.overlap && parts.len() > 1 && parts.iter().all(|p| p.plane_step().is_some());
        Ok(SplitPlan {
            parts,
            layout: Arc::new(layout),
            overlap,
            reach,
            name: spec.name,
        })
    }

    /// Whether launches that need an exchange overlap it with interior work: asked for by
    /// [`Devices::overlap`] (the default), on two or more devices, with a kernel that can be
    /// launched over a range of planes (plain, vector, 3-D tiled, march; no reductions).
    pub fn overlaps(&self) -> bool {
        self.overlap
    }

    /// Each device's plan.
    pub fn parts(&self) -> &[StencilPlan] {
        &self.parts
    }

    /// Launches on every slab, exchanging an input's halo first where it is shallower than the
    /// launch's reach. Returns the event of the slab with the most planes.
    pub fn launch<T: Scalar>(&self, out: &mut SplitGrid<T>, args: &[SplitArg<'_>]) -> Result<Event> {
        self.launch_outputs(&[SplitArg::grid("out", out)], args)
    }

    /// Launches a stencil with several outputs (a system of fields) on every slab: `outs` are
    /// its output grids in order ([`SplitArg::grid`]).
    pub fn launch_outputs(&self, outs: &[SplitArg<'_>], args: &[SplitArg<'_>]) -> Result<Event> {
        if let Some(grid) = args.iter().find_map(|a| a.packed) {
            return Err(Error::PackedSplit {
                stencil: self.name.into(),
                grid: grid.into(),
            });
        }
        let mut out_grids = Vec::with_capacity(outs.len());
        for o in outs {
            if o.reduction.is_some() {
                continue;
            }
            let Some((name, g)) = o.grid else {
                return Err(Error::InvalidConfig(format!(
                    "an output of stencil `{}` is not a grid",
                    self.name
                )));
            };
            check_layout(
                &format!("output `{name}` of stencil `{}`", self.name),
                g.layout(),
                &self.layout,
            )?;
            out_grids.push(g);
        }
        let grids: Vec<(&str, &dyn Halo)> = args.iter().filter_map(|a| a.grid).collect();
        let stale = grids.iter().any(|(_, g)| g.valid_depth() < self.reach);
        let (valid, event) = if self.overlap && stale {
            self.launch_overlapped(outs, args, &grids)?
        } else {
            let valid = refresh_inputs(self.name, &self.layout, self.reach, grids.into_iter())?;
            let mut largest: Option<(usize, Event)> = None;
            for (i, plan) in self.parts.iter().enumerate() {
                let n = self.parts.len();
                let ev = plan.launch_outputs(&slab_args(outs, i, n), &slab_args(args, i, n))?;
                let planes = self.layout.planes(i);
                if largest.as_ref().is_none_or(|(p, _)| planes > *p) {
                    largest = Some((planes, ev));
                }
            }
            let ev = largest
                .map(|(_, e)| e)
                .ok_or_else(|| Error::InvalidConfig("no devices".into()))?;
            (valid, ev)
        };
        for g in out_grids {
            g.set_valid(valid.saturating_sub(self.reach));
        }
        Ok(event)
    }

    fn launch_overlapped(
        &self,
        outs: &[SplitArg<'_>],
        args: &[SplitArg<'_>],
        grids: &[(&str, &dyn Halo)],
    ) -> Result<(usize, Event)> {
        let n = self.parts.len();
        let slabs: Vec<SlabLaunch<'_, '_>> = self
            .parts
            .iter()
            .enumerate()
            .map(|(i, plan)| SlabLaunch {
                slab: i,
                plan,
                outs: slab_args(outs, i, n),
                args: slab_args(args, i, n),
            })
            .collect();
        let largest = (0..n)
            .max_by_key(|&i| (self.layout.planes(i), std::cmp::Reverse(i)))
            .unwrap_or(0);
        launch_overlapped(self.name, &self.layout, self.reach, &slabs, grids, largest)
    }
}

/// One slab's part of an overlapped launch: the slab's index in the layout, its plan, its
/// outputs and arguments.
pub(crate) struct SlabLaunch<'p, 'a> {
    pub(crate) slab: usize,
    pub(crate) plan: &'p StencilPlan,
    pub(crate) outs: Vec<StencilArg<'a>>,
    pub(crate) args: Vec<StencilArg<'a>>,
}

/// The planes of slab `i` whose points read no halo plane deeper than `keep` (nor past the
/// whole grid's boundary, which the kernel handles itself) in a launch reading `reach` planes.
fn interior(layout: &Layout, reach: usize, i: usize, keep: usize) -> std::ops::Range<usize> {
    let (below, above, planes) = (layout.below(i), layout.above(i), layout.planes(i));
    let lo = if below > 0 { below - keep.min(below) + reach } else { 0 };
    let hi = if above > 0 {
        (planes - above + keep.min(above)).saturating_sub(reach)
    } else {
        planes
    };
    lo..hi.max(lo)
}

/// A launch of stencil `name` whose inputs' halos are stale, with the exchange overlapped
/// (devices of one host or MPI ranks alike): every input whose halo is shallower than the
/// reach starts its exchange (edges read on the devices' transfer queues), each slab computes
/// the planes that read only current values ([`interior`]) meanwhile, and the planes next to
/// the halos follow once the halo writes are done. Every point is computed from the values a
/// launch after a full exchange reads, so the bits are the same. Returns the inputs' valid
/// depth and an event spanning the launches of `slabs[timed]`.
pub(crate) fn launch_overlapped(
    name: &str,
    layout: &Layout,
    reach: usize,
    slabs: &[SlabLaunch<'_, '_>],
    grids: &[(&str, &dyn Halo)],
    timed: usize,
) -> Result<(usize, Event)> {
    for (g_name, g) in grids {
        check_layout(&format!("grid `{g_name}` of stencil `{name}`"), g.layout(), layout)?;
    }
    let valid = || grids.iter().map(|(_, g)| g.valid_depth()).min().unwrap_or(layout.depth);
    let keep = valid();
    let stale: Vec<&dyn Halo> = grids
        .iter()
        .filter(|(_, g)| g.valid_depth() < reach)
        .map(|(_, g)| *g)
        .collect();
    for g in &stale {
        g.exchange_start(g.valid_depth())?;
    }
    let mut first = None;
    for (k, s) in slabs.iter().enumerate() {
        let ev = s
            .plan
            .enqueue_planes(&s.outs, &s.args, interior(layout, reach, s.slab, keep), &[], k == timed)?;
        if k == timed {
            first = ev;
        }
    }
    let mut writes: Vec<Vec<Event>> = vec![Vec::new(); layout.owned.len()];
    for g in &stale {
        for (i, e) in g.exchange_finish()? {
            writes[i].push(e);
        }
    }
    let mut last = None;
    for (k, s) in slabs.iter().enumerate() {
        let inner = interior(layout, reach, s.slab, keep);
        for edge in [0..inner.start, inner.end..layout.planes(s.slab)] {
            if let Some(ev) = s
                .plan
                .enqueue_planes(&s.outs, &s.args, edge, &writes[s.slab], k == timed)?
            {
                last = Some(ev);
            }
        }
    }
    let event = match (first, last) {
        (Some(f), Some(l)) => Event::spanning(&f, l),
        (f, l) => l
            .or(f)
            .ok_or_else(|| Error::InvalidConfig(format!("stencil `{name}`: an overlapped launch on no slab")))?,
    };
    Ok((valid(), event))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_follow_weights_and_cover_the_axis() {
        let l = Layout::new(Shape::d2(10, 100), &[1.0, 3.0], 4, false).unwrap();
        assert_eq!(l.owned(), &[(0, 25), (25, 100)]);
        assert_eq!((l.below(0), l.above(0), l.below(1), l.above(1)), (0, 4, 4, 0));
        assert_eq!(l.part_shape(1), Shape::d2(10, 79));
        assert_eq!(l.global_plane(1, 0), 21);
        // Slab 0 sends its top 4 planes (21..25 at element 210) and receives above them (250);
        // slab 1 sends its first own planes (after its 4-plane halo) and receives at 0.
        assert_eq!(l.edges(0, 0), [None, Some((210, 250))]);
        assert_eq!(l.edges(1, 0), [Some((40, 0)), None]);
        // Keeping one current plane: slab 1 sends from one plane further in, slab 0 receives
        // one plane further out.
        assert_eq!(l.edges(0, 1), [None, Some((210, 260))]);
        assert_eq!(l.edges(1, 1), [Some((50, 0)), None]);
        let data: Vec<u32> = (0..1000).collect();
        assert_eq!(l.slab(1, &data)[..2], [210, 211]);
        let p = Layout::new(Shape::d1(12), &[1.0, 1.0, 1.0], 2, true).unwrap();
        assert_eq!(p.owned(), &[(0, 4), (4, 8), (8, 12)]);
        assert_eq!((p.global_plane(0, 0), p.global_plane(2, 7)), (10, 1));
        // Too thin a slab for its halo is an error naming the slab.
        let e = Layout::new(Shape::d3(4, 4, 10), &[1.0, 1.0, 1.0], 4, false).unwrap_err();
        assert!(e.to_string().contains("device 0 planes 0..3"), "{e}");
        // One device, not periodic: no halo, any extent.
        assert!(Layout::new(Shape::d2(3, 1), &[1.0], 8, false).is_ok());
    }
}
