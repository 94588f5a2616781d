//! Launching generated stencils: device grids, ping-pong pairs, launch plans that size the
//! plain, tiled and vector variants, and the assembly of the generated source.

pub mod packed;
pub mod target;
pub mod tune;

pub use packed::{Packable, PackedGrid};

use std::sync::{Mutex, OnceLock};

use crate::buffer::{Buffer, ConstBuffer, Scalar};
use crate::device::{lock, Device, DeviceInfo};
use crate::error::{Error, Result};
use crate::host::{check_shape, Boundary, HostGrid, Params, Shape};
use crate::program::{check_work_group, Arg, Event, KernelRef, Program};

/// A grid in device memory.
#[derive(Debug)]
pub struct DeviceGrid<T: Scalar> {
    buffer: Buffer<T>,
    shape: Shape,
}

impl<T: Scalar> DeviceGrid<T> {
    /// A zero-filled grid on `device`.
    pub fn new(device: &Device, shape: Shape) -> Result<Self> {
        let len = shape.checked_len().ok_or_else(|| crate::grid::overflow(shape))?;
        Ok(DeviceGrid {
            buffer: Buffer::new(device, len)?,
            shape,
        })
    }
    /// A copy of a host grid on `device`.
    pub fn from_host(device: &Device, host: &HostGrid<T>) -> Result<Self> {
        Ok(DeviceGrid {
            buffer: Buffer::from_slice(device, host.data())?,
            shape: host.shape(),
        })
    }
    /// Overwrites the grid with a host grid of the same shape.
    pub fn upload(&mut self, host: &HostGrid<T>) -> Result<()> {
        check_shape("upload", self.shape, host.shape())?;
        self.buffer.write(host.data())
    }
    /// Reads the grid back into a new host grid.
    pub fn to_host(&self) -> Result<HostGrid<T>> {
        HostGrid::from_vec(self.shape, self.buffer.to_vec()?)
    }
    /// Reads the grid back into an existing host grid of the same shape.
    pub fn download(&self, host: &mut HostGrid<T>) -> Result<()> {
        check_shape("download", host.shape(), self.shape)?;
        self.buffer.read(host.data_mut())
    }
    /// Device-side copy from a grid of the same shape.
    pub fn copy_from(&mut self, other: &DeviceGrid<T>) -> Result<Event> {
        check_shape("copy source", self.shape, other.shape)?;
        self.buffer.copy_from(&other.buffer)
    }
    /// The shape.
    pub fn shape(&self) -> Shape {
        self.shape
    }
    /// The device the grid lives on.
    pub fn device(&self) -> &Device {
        self.buffer.device()
    }
    /// The underlying buffer, for hand-written kernels.
    pub fn buffer(&self) -> &Buffer<T> {
        &self.buffer
    }
}

/// Two grids for iterating `next = f(current)` without copies: launch into
/// [`PingPong::split`]'s first element, then [`PingPong::swap`]. The grids are the target's:
/// [`DeviceGrid`]s on one [`Device`], [`SplitGrid`](crate::split::SplitGrid)s on
/// [`Devices`](crate::split::Devices).
#[derive(Debug)]
pub struct PingPong<T: Scalar, G = DeviceGrid<T>> {
    grids: [G; 2],
    current: usize,
    _elem: std::marker::PhantomData<T>,
}

impl<T: Scalar, G: target::TargetGrid<T>> PingPong<T, G> {
    /// Both grids start as copies of `initial`, so boundary points a stencil never writes
    /// (a `fixed` boundary) keep their values in both.
    pub fn from_host<D>(device: &D, initial: &HostGrid<T>) -> Result<Self>
    where
        D: target::Target,
        D::Plan: target::Launch<Grid<T> = G>,
    {
        Ok(PingPong {
            grids: [device.upload(initial)?, device.upload(initial)?],
            current: 0,
            _elem: std::marker::PhantomData,
        })
    }
    /// The current state.
    pub fn current(&self) -> &G {
        &self.grids[self.current]
    }
    /// `(next, current)`: where to write the next state, and the current one to read.
    pub fn split(&mut self) -> (&mut G, &G) {
        let [a, b] = &mut self.grids;
        if self.current == 0 {
            (b, a)
        } else {
            (a, b)
        }
    }
    /// Makes the next state current.
    pub fn swap(&mut self) {
        self.current = 1 - self.current;
    }
}

/// Several time levels of one field, for schemes that read more than the current state
/// (leapfrog reads two: `u^{n+1} = 2u^n - u^{n-1} + ...`), without copies. It holds one grid
/// per level read plus one to write: [`Levels::split`] gives the grid the next level goes
/// into and the levels read, newest first; [`Levels::rotate`] makes the written level the
/// current one, and the oldest one's grid the next to write. With one level read it is a
/// [`PingPong`].
#[derive(Debug)]
pub struct Levels<T: Scalar, G = DeviceGrid<T>> {
    /// The levels read, newest first (never empty).
    levels: std::collections::VecDeque<G>,
    /// The grid the next level is written into.
    next: G,
    _elem: std::marker::PhantomData<T>,
}

/// The levels a step reads, newest first: `past[0]` is the current state, `past[1]` the one
/// before it, ...
#[derive(Debug)]
pub struct Past<'a, G> {
    levels: Vec<&'a G>,
}

impl<'a, G> Past<'a, G> {
    /// Level `k` back (0: the current state), or `None` beyond the levels kept.
    pub fn get(&self, k: usize) -> Option<&'a G> {
        self.levels.get(k).copied()
    }
    /// How many levels are read.
    pub fn len(&self) -> usize {
        self.levels.len()
    }
    /// Whether no level is kept (never: a [`Levels`] keeps at least one).
    pub fn is_empty(&self) -> bool {
        self.levels.is_empty()
    }
}

impl<G> std::ops::Index<usize> for Past<'_, G> {
    type Output = G;
    /// Level `k` back; panics beyond the levels kept, like a slice (use [`Past::get`] to ask).
    fn index(&self, k: usize) -> &G {
        self.levels[k]
    }
}

impl<T: Scalar, G: target::TargetGrid<T>> Levels<T, G> {
    /// Levels from their initial states, oldest first (leapfrog: `&[&u_previous, &u_current]`),
    /// plus one grid to write, a copy of the newest (so that points a `fixed` boundary never
    /// writes keep their values).
    pub fn from_hosts<D>(device: &D, states: &[&HostGrid<T>]) -> Result<Self>
    where
        D: target::Target,
        D::Plan: target::Launch<Grid<T> = G>,
    {
        let Some(newest) = states.last() else {
            return Err(Error::InvalidConfig(
                "time levels need at least one initial state (oldest first)".into(),
            ));
        };
        for (i, s) in states.iter().enumerate() {
            check_shape(&format!("time level {i}"), newest.shape(), s.shape())?;
        }
        let mut levels = std::collections::VecDeque::with_capacity(states.len());
        for s in states.iter().rev() {
            levels.push_back(device.upload(s)?);
        }
        Ok(Levels {
            levels,
            next: device.upload(newest)?,
            _elem: std::marker::PhantomData,
        })
    }
    /// How many levels a step reads.
    pub fn depth(&self) -> usize {
        self.levels.len()
    }
    /// The current state (the newest level).
    pub fn current(&self) -> &G {
        self.levels.front().unwrap_or(&self.next)
    }
    /// `(next, past)`: the grid to write the next level into, and the levels to read, newest
    /// first.
    pub fn split(&mut self) -> (&mut G, Past<'_, G>) {
        let levels = self.levels.iter().collect();
        (&mut self.next, Past { levels })
    }
    /// Makes the level just written the current one; the oldest level's grid is written next.
    pub fn rotate(&mut self) {
        if let Some(oldest) = self.levels.pop_back() {
            let written = std::mem::replace(&mut self.next, oldest);
            self.levels.push_front(written);
        }
    }
}

/// Which generated kernel to launch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Variant {
    /// One point per work-item, neighbours from global memory (through the caches).
    #[default]
    Plain,
    /// Tile plus halo staged in local memory (seed 002's shared-memory kernel).
    Tiled,
    /// Several consecutive points along x per work-item with vector loads.
    Vector,
    /// Several iterations per launch: the state grid stays in local memory on a tile whose
    /// halo shrinks each step (temporal blocking). Writes the state after
    /// [`LaunchConfig::steps`] applications of the stencil. Every rank and boundary (periodic:
    /// wrapped tile points; clamp: ghost tile points copy their edge point each step); in 3-D
    /// the tile is `y` points deep along z.
    Steps,
    /// 2.5-D blocking, 3-D stencils only: an `x` by `rows` work-group owns an `x` by `y` column
    /// of the grid and marches along z over [`LaunchConfig::march`] planes (default
    /// [`DEFAULT_MARCH_Z`]), keeping the `2 HZ + 2` planes it reads and loads next of every
    /// staged grid in a ring in local memory: each step loads one plane with its x/y halo, so
    /// a point is read from global memory about once instead of `2 HZ + 1` times.
    March,
}

impl Variant {
    /// Every variant, in the order of [`StencilSpec::variants`].
    pub const ALL: [Variant; 5] = [
        Variant::Plain,
        Variant::Tiled,
        Variant::Vector,
        Variant::Steps,
        Variant::March,
    ];

    /// The variant's name in messages and the tuner's cache (`plain`, `tiled`, `vector`,
    /// `steps`, `march`).
    pub fn name(self) -> &'static str {
        match self {
            Variant::Plain => "plain",
            Variant::Tiled => "tiled",
            Variant::Vector => "vector",
            Variant::Steps => "steps",
            Variant::March => "march",
        }
    }

    /// The variant [`Variant::name`] names.
    pub fn from_name(name: &str) -> Option<Variant> {
        Variant::ALL.into_iter().find(|v| v.name() == name)
    }
}

/// Tile of the tiled, steps and march variants: `x` by `y` points, walked by an `x` by `rows`
/// work-group. In 3-D the steps variant's tile is also `y` points deep along z (the tiled
/// variant takes one plane per work-group, the march variant [`LaunchConfig::march`] planes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Tile {
    /// Points along x (= work-group width).
    pub x: usize,
    /// Points along y.
    pub y: usize,
    /// Work-items along y; each walks `y / rows` rows.
    pub rows: usize,
}

/// One generated variant of a stencil, as the macro decided it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VariantSpec {
    /// The kernel's OpenCL name.
    pub kernel: &'static str,
    /// Why the variant is not generated for this stencil, if it is not.
    pub unavailable: Option<&'static str>,
    /// Bytes of `__local` memory per point of the work-group's tile (0: none).
    pub local_bytes_per_point: usize,
}

/// What the runtime knows about one generated stencil (from the macro).
#[derive(Clone, Copy, Debug)]
pub struct StencilSpec {
    /// The Rust function's name.
    pub name: &'static str,
    /// Number of dimensions.
    pub rank: usize,
    /// Largest offset read along each axis.
    pub halo: [usize; 3],
    /// Boundary policy.
    pub boundary: Boundary,
    /// Points per work-item of the vector variant.
    pub lanes: usize,
    /// The vector variant's narrow kernel and its lanes (`<name>_vec4`, 4), compiled where the
    /// source is built with `-D CLFORGE_VEC4=1`: on GPUs by default (eight points per
    /// work-item are too many there), or where a launch names its lanes
    /// ([`LaunchConfig::lanes`]). `None`: the source has only the `lanes` kernel.
    pub narrow: Option<(&'static str, usize)>,
    /// The body reads its point (`at: Point`): the kernels take the grid's origin in the whole
    /// grid and the whole grid's extents after `nx, ny, nz`.
    pub point: bool,
    /// The kernels that fold each reduction output's work-group partials into its value, in
    /// the order of the reduction outputs (empty for a stencil without reductions).
    pub folds: &'static [&'static str],
    /// The variants in [`Variant`] order: plain, tiled, vector, steps, march.
    pub variants: [VariantSpec; 5],
    /// The grid arguments the stencil reads packed (`#[stencil(packed(cell = 2))]`); a launch
    /// must bind exactly these as [`PackedGrid`]s of these bits ([`Error::PackedBinding`]).
    pub packed: &'static [PackedArg],
    /// Tile used when the launch config names none.
    pub default_tile: Tile,
    /// `file.rs:line` of the Rust function.
    pub origin: &'static str,
    /// The generated OpenCL C.
    pub source: &'static str,
}

impl StencilSpec {
    /// The macro's facts about one variant.
    pub fn variant(&self, v: Variant) -> &VariantSpec {
        &self.variants[v as usize]
    }

    /// The tile a tiled, steps or march launch that names none uses on the device `info`: the
    /// stencil's [`StencilSpec::default_tile`], halved in y (then in x) until its `__local`
    /// arrays fit `CL_DEVICE_LOCAL_MEM_SIZE` (a 3-D stencil with a deep z halo and wide
    /// types overflows a GPU's 48 KiB at 32 x 8). A tile the caller names is never changed:
    /// one that does not fit is an error. When not even 1 x 1 fits, the default is returned
    /// and the launch reports the shortfall.
    pub fn tile_on(&self, info: &DeviceInfo, variant: Variant, steps: usize) -> Tile {
        let per_point = self.variant(variant).local_bytes_per_point as u64;
        let fits = |t: Tile| {
            local_points(variant, t, steps, self.halo, self.rank)
                .is_some_and(|p| (p as u64).saturating_mul(per_point) <= info.local_mem_bytes)
        };
        let mut t = self.default_tile;
        while !fits(t) {
            if t.y > 1 {
                t.y /= 2;
            } else if t.x > 1 {
                t.x /= 2;
            } else {
                return self.default_tile;
            }
            t.rows = t.rows.min(t.y);
        }
        t
    }
}

/// A grid argument a stencil reads packed (`packed(name = bits)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PackedArg {
    /// Its position among the launch's arguments (the function's arguments less `at: Point`).
    pub arg: usize,
    /// Its name in the stencil function.
    pub name: &'static str,
    /// Bits per point: 1, 2 or 4.
    pub bits: u32,
}

/// How to launch: the variant and its tunables.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct LaunchConfig {
    /// Which kernel.
    pub variant: Variant,
    /// Tile of the tiled variant (default: the stencil's).
    pub tile: Option<Tile>,
    /// Work-group of the plain and vector variants (default: 32 x 4, 64 in 1-D).
    pub work_group: Option<[usize; 3]>,
    /// Iterations per launch of the [`Variant::Steps`] kernel (default 4).
    pub steps: Option<usize>,
    /// Points per work-item of the [`Variant::Plain`] kernel along the slowest axis (y in
    /// 2-D, z in 3-D; default 1), so that a neighbour one point further along it is read once
    /// for two points; for the [`Variant::Vector`] kernel, vectors of points. 2-D and 3-D
    /// stencils.
    pub points: Option<usize>,
    /// Planes along z per work-group of the [`Variant::March`] kernel (`MARCH_Z`, default
    /// [`DEFAULT_MARCH_Z`]; the last work-group of a column stops at the grid's end).
    pub march: Option<usize>,
    /// Points per work-item of the [`Variant::Vector`] kernel: the spec's `lanes` (8) or its
    /// `narrow` ones (4); default: the narrow ones on a GPU, else `lanes`.
    pub lanes: Option<usize>,
}

impl LaunchConfig {
    /// The given variant with default tunables.
    pub fn variant(variant: Variant) -> LaunchConfig {
        LaunchConfig {
            variant,
            ..LaunchConfig::default()
        }
    }
    /// The tiled variant with this tile.
    pub fn tiled(tile: Tile) -> LaunchConfig {
        LaunchConfig {
            variant: Variant::Tiled,
            tile: Some(tile),
            ..LaunchConfig::default()
        }
    }
    /// `steps` iterations per launch on tiles of `tile` (temporal blocking; in 3-D the tile is
    /// `tile.y` deep along z).
    pub fn steps(steps: usize, tile: Tile) -> LaunchConfig {
        LaunchConfig {
            variant: Variant::Steps,
            tile: Some(tile),
            steps: Some(steps),
            work_group: None,
            points: None,
            march: None,
            lanes: None,
        }
    }
    /// The march variant (2.5-D blocking, 3-D stencils): `tile.x` by `tile.y` columns walked
    /// along z over `planes` planes by `tile.x` by `tile.rows` work-groups.
    pub fn march(tile: Tile, planes: usize) -> LaunchConfig {
        LaunchConfig {
            variant: Variant::March,
            tile: Some(tile),
            march: Some(planes),
            ..LaunchConfig::default()
        }
    }
    /// Planes per work-group of a [`Variant::March`] launch (the default when it names none).
    pub fn march_planes(&self) -> usize {
        self.march.unwrap_or(DEFAULT_MARCH_Z)
    }
    /// Iterations one launch performs (1 except for [`Variant::Steps`]).
    pub fn iterations(&self) -> usize {
        match self.variant {
            Variant::Steps => self.steps.unwrap_or(DEFAULT_STEPS),
            _ => 1,
        }
    }
    /// This configuration with the defaults it leaves open filled in for `spec`: the tile of
    /// the tiled variant, the work-group of the others. Launches the same kernel the same way.
    pub fn effective(&self, spec: &StencilSpec) -> LaunchConfig {
        match self.variant {
            Variant::Tiled => LaunchConfig::tiled(self.tile.unwrap_or(spec.default_tile)),
            Variant::Steps => LaunchConfig::steps(self.iterations(), self.tile.unwrap_or(spec.default_tile)),
            Variant::March => LaunchConfig::march(self.tile.unwrap_or(spec.default_tile), self.march_planes()),
            v => LaunchConfig {
                variant: v,
                work_group: Some(self.work_group.unwrap_or(default_work_group(spec.rank))),
                // one point (or vector) per work-item is the default
                points: self
                    .points
                    .filter(|&p| matches!(v, Variant::Plain | Variant::Vector) && p != 1),
                lanes: self.lanes.filter(|_| v == Variant::Vector),
                ..LaunchConfig::default()
            },
        }
    }
}

/// Iterations per launch of the steps variant when the launch config names none.
pub const DEFAULT_STEPS: usize = 4;

/// Planes per work-group of the march variant when the launch config names none.
pub const DEFAULT_MARCH_Z: usize = clforge_abi::DEFAULT_MARCH_Z;

/// Work-group of the plain and vector variants when the launch config names none.
fn default_work_group(rank: usize) -> [usize; 3] {
    match rank {
        1 => [64, 1, 1],
        _ => [32, 4, 1],
    }
}

/// A sized, built launch of one variant for one grid shape; reuse it on the hot path.
#[derive(Clone, Debug)]
pub struct StencilPlan {
    program: Program,
    device: Device,
    kernel: String,
    global: Vec<usize>,
    local: Vec<usize>,
    local_bytes: u64,
    shape: Shape,
    variant: Variant,
    /// Points per work-item (or work-group) along the slowest axis: the plain variant's `PTS`,
    /// the march variant's `MARCH_Z`; 1 otherwise.
    points: usize,
    /// For a body that reads its point: where this grid starts in the whole grid and the whole
    /// grid's extents (a slab of a split grid); `None` for one that does not.
    place: Option<[i32; 6]>,
    /// Reductions: the box of points that count, low corner then high (a split grid's own
    /// planes; the whole grid on one device).
    reduce_box: Option<[i32; 6]>,
    /// Reductions: the fold kernels (in output order), the launch's work-groups (partials per
    /// reduction) and the fold's work-group size.
    folds: &'static [&'static str],
    fold_refs: Vec<OnceLock<KernelRef>>,
    groups: usize,
    fold_items: usize,
    /// The kernel object, looked up by name on the first launch only.
    kernel_ref: OnceLock<KernelRef>,
    /// The stencil's name and the arguments it reads packed, checked against each launch's.
    name: &'static str,
    packed: &'static [PackedArg],
    /// The last parameter block of each params argument and its device buffer, so that
    /// repeated launches with the same parameters neither hash them nor touch the
    /// device-wide constant cache.
    params: ParamsCache,
}

/// One `(bytes, buffer)` per params argument, in argument order.
#[derive(Debug, Default)]
pub(crate) struct ParamsCache(Mutex<Vec<(Vec<u8>, ConstBuffer)>>);

type ParamsBlocks = Vec<(Vec<u8>, ConstBuffer)>;

impl ParamsCache {
    /// Uploads a params block only when it differs from this plan's last one; the guard
    /// holds the device buffers, in the order of the params arguments.
    pub(crate) fn refresh(
        &self,
        device: &Device,
        args: &[StencilArg<'_>],
    ) -> Result<std::sync::MutexGuard<'_, ParamsBlocks>> {
        let mut params = lock(&self.0);
        let mut slot = 0;
        for a in args {
            if let ArgKind::Params(bytes) = &a.0 {
                let same = params
                    .get(slot)
                    .is_some_and(|(b, c)| b == bytes && c.device_index() == device.info().index);
                if !same {
                    let entry = (bytes.clone(), device.constant_bytes(bytes)?);
                    match params.get_mut(slot) {
                        Some(old) => *old = entry,
                        None => params.push(entry),
                    }
                }
                slot += 1;
            }
        }
        Ok(params)
    }
}

/// Every argument is packed where the stencil declares it (in its bits) and nowhere else:
/// the kernel reads words of packed points where it declares them, bytes or words of one
/// point elsewhere, so any other binding would compute from the wrong values.
fn check_packing(
    stencil: &str,
    declared: &[PackedArg],
    outs: &[StencilArg<'_>],
    args: &[StencilArg<'_>],
) -> Result<()> {
    let bound = |a: &StencilArg<'_>| match a.0 {
        ArgKind::Grid { packed, .. } => packed,
        _ => None,
    };
    if let Some((name, bits)) = outs.iter().find_map(|o| match o.0 {
        ArgKind::Grid {
            name, packed: Some(b), ..
        } => Some((name, b)),
        _ => None,
    }) {
        return Err(Error::PackedBinding {
            stencil: stencil.into(),
            grid: name.into(),
            declared: None,
            bound: Some(bits),
        });
    }
    for (i, a) in args.iter().enumerate() {
        let d = declared.iter().find(|p| p.arg == i);
        let b = bound(a);
        if d.map(|p| p.bits) != b {
            let grid = match (d, &a.0) {
                (Some(p), _) => p.name,
                (None, ArgKind::Grid { name, .. }) => name,
                (None, _) => "?",
            };
            return Err(Error::PackedBinding {
                stencil: stencil.into(),
                grid: grid.into(),
                declared: d.map(|p| p.bits),
                bound: b,
            });
        }
    }
    Ok(())
}

/// Every grid argument has the plan's shape.
pub(crate) fn check_arg_shapes(shape: Shape, args: &[StencilArg<'_>]) -> Result<()> {
    for a in args {
        if let ArgKind::Grid { name, shape: s, .. } = &a.0 {
            check_shape(name, shape, *s)?;
        }
    }
    Ok(())
}

/// The kernel arguments of `args` in order, params blocks from `params` (see
/// [`ParamsCache::refresh`]).
pub(crate) fn kernel_args<'a>(args: &[StencilArg<'a>], params: &'a [(Vec<u8>, ConstBuffer)]) -> Vec<Arg<'a>> {
    let mut slot = 0;
    args.iter()
        .map(|a| match &a.0 {
            ArgKind::Grid { arg, .. } | ArgKind::Scalar(arg) => *arg,
            ArgKind::Params(_) => {
                slot += 1;
                params.get(slot - 1).map_or(Arg::i32(0), |p| Arg::constant(&p.1))
            }
            // Not an argument of the kernels that take these lists.
            ArgKind::Reduction { .. } => Arg::i32(0),
        })
        .collect()
}

impl Clone for ParamsCache {
    fn clone(&self) -> Self {
        ParamsCache(Mutex::new(lock(&self.0).clone()))
    }
}

/// Arguments of a launch live on the stack up to this many (the output, the stencil's
/// arguments, `nx, ny, nz`).
const STACK_ARGS: usize = 16;

impl StencilPlan {
    /// Builds the program (cached per source and options) and sizes the launch.
    pub fn new(device: &Device, spec: StencilSpec, config: &LaunchConfig, shape: Shape) -> Result<StencilPlan> {
        // Every size is checked against the device before anything is built or launched:
        // some OpenCL implementations abort the process on an oversized launch.
        let sized = size_launch(&spec, device.info(), config, shape)?;
        let program = device.program(spec.origin, spec.source, &sized.options)?;
        // The built kernel's own limit can be below the device's (registers on GPUs).
        let limits = program.kernel_limits(sized.kernel)?;
        let items: usize = sized.local.iter().product();
        if items > limits.work_group_size {
            return Err(Error::DeviceLimit {
                what: format!(
                    "work-group {:?} of the {} variant of stencil `{}`",
                    &sized.local[..spec.rank],
                    config.variant.name(),
                    spec.name
                ),
                needed: items as u64,
                limit: limits.work_group_size as u64,
                limit_name: "CL_KERNEL_WORK_GROUP_SIZE",
                hint: "this kernel runs in smaller work-groups than the device's largest; choose fewer work-items"
                    .into(),
            });
        }
        // The driver may need a few bytes more than the kernel declares (NVIDIA: 4).
        let have = device.info().local_mem_bytes;
        if limits.local_mem_bytes > have {
            return Err(Error::DeviceLimit {
                what: format!(
                    "local memory of the {} variant of stencil `{}` as built",
                    config.variant.name(),
                    spec.name
                ),
                needed: limits.local_mem_bytes,
                limit: have,
                limit_name: "CL_DEVICE_LOCAL_MEM_SIZE",
                hint: "choose a smaller tile or fewer steps".into(),
            });
        }
        let rank = spec.rank;
        Ok(StencilPlan {
            program,
            device: device.clone(),
            kernel: sized.kernel.to_string(),
            global: sized.global[..rank].to_vec(),
            local: sized.local[..rank].to_vec(),
            local_bytes: sized.local_bytes,
            shape,
            variant: config.variant,
            points: match config.variant {
                Variant::March => config.march_planes(),
                _ => config.points.unwrap_or(1),
            },
            folds: spec.folds,
            fold_refs: spec.folds.iter().map(|_| OnceLock::new()).collect(),
            groups: (0..rank).map(|d| sized.global[d] / sized.local[d].max(1)).product(),
            fold_items: sized.fold_items,
            reduce_box: (!spec.folds.is_empty()).then(|| {
                let [nx, ny, nz] = shape.dims().map(|d| d as i32);
                [0, 0, 0, nx, ny, nz]
            }),
            place: spec.point.then(|| {
                let [nx, ny, nz] = shape.dims().map(|d| d as i32);
                [0, 0, 0, nx, ny, nz]
            }),
            kernel_ref: OnceLock::new(),
            name: spec.name,
            packed: spec.packed,
            params: ParamsCache::default(),
        })
    }

    /// Places this plan's grid in a larger one (a slab of a split grid): the stencil's point
    /// (`at: Point`) is `origin` plus the kernel's, wrapped by `whole` where periodic. No effect
    /// for a stencil that does not read its point.
    pub(crate) fn place(&mut self, origin: [usize; 3], whole: Shape) {
        if let Some(p) = &mut self.place {
            let [wx, wy, wz] = whole.dims().map(|d| d as i32);
            *p = [origin[0] as i32, origin[1] as i32, origin[2] as i32, wx, wy, wz];
        }
    }

    /// Reductions count only the points in `lo..hi` along `axis` (a split slab's own planes).
    pub(crate) fn reduce_planes(&mut self, axis: usize, lo: usize, hi: usize) {
        if let Some(b) = &mut self.reduce_box {
            b[axis] = lo as i32;
            b[axis + 3] = hi as i32;
        }
    }

    /// The `__local` bytes one work-group of this launch allocates, as clforge computes them
    /// from the spec (checked against the device before the program was built): 0 for the
    /// plain and vector variants.
    pub fn local_bytes(&self) -> u64 {
        self.local_bytes
    }

    /// The `__local` bytes the driver reports for the built kernel (`CL_KERNEL_LOCAL_MEM_SIZE`),
    /// to compare with [`StencilPlan::local_bytes`].
    pub fn kernel_local_bytes(&self) -> Result<u64> {
        Ok(self.program.kernel_limits(&self.kernel)?.local_mem_bytes)
    }

    /// Global work size.
    pub fn global(&self) -> &[usize] {
        &self.global
    }
    /// Work-group size.
    pub fn local(&self) -> &[usize] {
        &self.local
    }
    /// The variant.
    pub fn variant(&self) -> Variant {
        self.variant
    }
    /// The kernel name.
    pub fn kernel(&self) -> &str {
        &self.kernel
    }

    /// Enqueues the kernel writing `out` from `args` (in the stencil function's order).
    pub fn launch<T: Scalar>(&self, out: &mut DeviceGrid<T>, args: &[StencilArg<'_>]) -> Result<Event> {
        self.submit(out, args, true)?.ok_or_else(|| Error::Cl {
            op: "clEnqueueNDRangeKernel",
            message: format!("kernel `{}` returned no event", self.kernel),
        })
    }

    /// Like [`StencilPlan::launch`], but asks the driver for no event: for long runs of
    /// launches that are waited for together ([`Device::finish`], or a read of the result).
    /// Events are not free: NVIDIA's OpenCL (driver 580, H100, profiling queue) took
    /// 14.8 µs of host time per launch with an event and 6.6 µs without, which bounds
    /// iterations on small grids.
    pub fn enqueue<T: Scalar>(&self, out: &mut DeviceGrid<T>, args: &[StencilArg<'_>]) -> Result<()> {
        self.submit(out, args, false).map(drop)
    }

    /// Enqueues a stencil with several outputs (a system of fields): `outs` are its output
    /// grids in order ([`StencilArg::grid`]), `args` its arguments in the function's order.
    pub fn launch_outputs(&self, outs: &[StencilArg<'_>], args: &[StencilArg<'_>]) -> Result<Event> {
        self.submit_all(outs, args, true)?.ok_or_else(|| Error::Cl {
            op: "clEnqueueNDRangeKernel",
            message: format!("kernel `{}` returned no event", self.kernel),
        })
    }

    /// Like [`StencilPlan::launch_outputs`] without an event (see [`StencilPlan::enqueue`]).
    pub fn enqueue_outputs(&self, outs: &[StencilArg<'_>], args: &[StencilArg<'_>]) -> Result<()> {
        self.submit_all(outs, args, false).map(drop)
    }

    fn submit<T: Scalar>(
        &self,
        out: &mut DeviceGrid<T>,
        args: &[StencilArg<'_>],
        event: bool,
    ) -> Result<Option<Event>> {
        self.submit_all(&[StencilArg::grid("out", out)], args, event)
    }

    /// Points per work-item along the slowest axis if this plan's kernel can be launched over
    /// a range of that axis's planes (through OpenCL's global work offset): the plain, vector,
    /// 3-D tiled and march kernels, which index that axis by global id (the march kernel's
    /// work-groups start `MARCH_Z` planes apart). `None` for the 2-D tiled and
    /// steps kernels (they index by work-group), 1-D grids and kernels with reductions (their
    /// partials belong to one whole launch).
    pub(crate) fn plane_step(&self) -> Option<usize> {
        let rank = self.shape.rank();
        if rank < 2 || !self.folds.is_empty() {
            return None;
        }
        match self.variant {
            Variant::Plain => Some(self.points.max(1)),
            Variant::Vector => Some(self.points.max(1)),
            Variant::Tiled if rank == 3 => Some(1),
            Variant::March => Some(self.points.max(1)),
            Variant::Tiled | Variant::Steps => None,
        }
    }

    /// Enqueues the launch over the planes `planes` of the slowest axis (`y` in 2-D, `z` in
    /// 3-D) after the events `after`, with an event if `event` (none for an empty range):
    /// every point of those planes is written as a whole launch writes it, and points of a
    /// few planes past either end may be too (the rest of a work-item's or work-group's
    /// planes). Only for a kernel with a [`StencilPlan::plane_step`].
    pub(crate) fn enqueue_planes(
        &self,
        outs: &[StencilArg<'_>],
        args: &[StencilArg<'_>],
        planes: std::ops::Range<usize>,
        after: &[Event],
        event: bool,
    ) -> Result<Option<Event>> {
        let Some(step) = self.plane_step() else {
            return Err(Error::InvalidConfig(format!(
                "kernel `{}` ({} variant) cannot be launched over a range of planes",
                self.kernel,
                self.variant.name()
            )));
        };
        let axis = self.shape.rank() - 1;
        let first = planes.start / step;
        let items = planes.end.div_ceil(step).saturating_sub(first);
        if items == 0 {
            return Ok(None);
        }
        let mut global = self.global.clone();
        global[axis] = items.next_multiple_of(self.local[axis].max(1));
        let mut offset = [0; 3];
        offset[axis] = first;
        self.submit_range(outs, args, event, Some((&global, offset)), after)
    }

    fn submit_all(&self, outs: &[StencilArg<'_>], args: &[StencilArg<'_>], event: bool) -> Result<Option<Event>> {
        self.submit_range(outs, args, event, None, &[])
    }

    /// The launch of [`StencilPlan::submit_all`], over `range` (global size and offset)
    /// instead of the whole grid if given, after the events `after`.
    fn submit_range(
        &self,
        outs: &[StencilArg<'_>],
        args: &[StencilArg<'_>],
        event: bool,
        range: Option<(&[usize], [usize; 3])>,
        after: &[Event],
    ) -> Result<Option<Event>> {
        if let Some(bad) = outs
            .iter()
            .find(|o| !matches!(o.0, ArgKind::Grid { .. } | ArgKind::Reduction { .. }))
        {
            return Err(Error::InvalidConfig(format!(
                "an output of kernel `{}` is neither a grid nor a reduction: {bad:?}",
                self.kernel
            )));
        }
        let reductions = outs.iter().filter(|o| o.reducer().is_some()).count();
        if reductions != self.folds.len() {
            return Err(Error::InvalidConfig(format!(
                "kernel `{}` has {} reduction outputs but the launch passes {reductions}",
                self.kernel,
                self.folds.len()
            )));
        }
        // Each reduction's buffers on this device, sized for this launch's work-groups.
        let mut folds = Vec::with_capacity(reductions);
        for o in outs {
            if let ArgKind::Reduction { red, part, parts, .. } = o.0 {
                folds.push(red.part(part, parts, &self.device, self.groups)?);
            }
        }
        check_arg_shapes(self.shape, outs)?;
        check_arg_shapes(self.shape, args)?;
        check_packing(self.name, self.packed, outs, args)?;
        let params = self.params.refresh(&self.device, args)?;
        let [nx, ny, nz] = self.shape.dims().map(|d| d as i32);
        let extra = self.place.map_or(0, |_| 6) + self.reduce_box.map_or(0, |_| 6);
        let count = outs.len() + args.len() + 3 + extra;
        let mut stack = [Arg::i32(0); STACK_ARGS];
        let mut heap = Vec::new();
        let cl_args: &mut [Arg<'_>] = if count <= STACK_ARGS {
            &mut stack[..count]
        } else {
            heap.resize(count, Arg::i32(0));
            &mut heap
        };
        let mut slot = 0;
        let mut fold = 0;
        for (a, cl) in outs.iter().chain(args).zip(cl_args.iter_mut()) {
            *cl = match &a.0 {
                ArgKind::Grid { arg, .. } | ArgKind::Scalar(arg) => *arg,
                ArgKind::Params(_) => {
                    slot += 1;
                    Arg::constant(&params[slot - 1].1)
                }
                ArgKind::Reduction { .. } => {
                    fold += 1;
                    folds[fold - 1].partials()
                }
            };
        }
        let at = count - 3 - extra;
        cl_args[at..at + 3].copy_from_slice(&[Arg::i32(nx), Arg::i32(ny), Arg::i32(nz)]);
        let tail = self.place.iter().chain(&self.reduce_box).flatten();
        for (cl, &v) in cl_args[at + 3..].iter_mut().zip(tail) {
            *cl = Arg::i32(v);
        }
        let kernel = self.program.cached_kernel(&self.kernel_ref, &self.kernel)?;
        let (global, offset) = range.map_or((&self.global[..], None), |(g, o)| (g, Some(o)));
        let sizes = (global, Some(&self.local[..]));
        let ev = self
            .program
            .launch_kernel_at(kernel, &self.kernel, sizes, offset, cl_args, event, after)?;
        // The folds queue behind the launch on the same in-order queue.
        for ((name, cell), b) in self.folds.iter().zip(&self.fold_refs).zip(&folds) {
            let groups = i32::try_from(self.groups).map_err(|_| Error::TooLarge {
                what: format!("reduction of kernel `{}`", self.kernel),
                detail: format!("{} work-groups exceed the fold's 32-bit count", self.groups),
            })?;
            // Two passes when there are many partials: many work-groups fold chunks in
            // parallel, then one folds their values (one group alone would take ~100 us on
            // an H100 for the 0.5 M partials of an 8192² launch).
            let k = self.program.cached_kernel(cell, name)?;
            let items = self.fold_items;
            let first = self.groups.div_ceil(items * 4).clamp(1, crate::reduce::FOLD_GROUPS);
            if first > 1 {
                let l2 = [b.partials(), Arg::i32(groups), b.level2()];
                self.program
                    .launch_kernel(k, name, &[first * items], Some(&[items]), &l2, false)?;
                let last = [b.level2(), Arg::i32(first as i32), b.result()];
                self.program
                    .launch_kernel(k, name, &[items], Some(&[items]), &last, false)?;
            } else {
                let only = [b.partials(), Arg::i32(groups), b.result()];
                self.program
                    .launch_kernel(k, name, &[items], Some(&[items]), &only, false)?;
            }
        }
        Ok(ev)
    }
}

/// One variant's launch for one grid shape, sized and checked against a device's limits by
/// [`size_launch`]; [`StencilPlan::new`] builds it and [`tune::candidates`] keeps the
/// configurations that size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SizedLaunch {
    /// The kernel's OpenCL name.
    pub(crate) kernel: &'static str,
    /// Global work size, padded to three dimensions with 1.
    pub(crate) global: [usize; 3],
    /// Work-group size, padded to three dimensions with 1.
    pub(crate) local: [usize; 3],
    /// Build options that set the variant's tunables.
    pub(crate) options: String,
    /// `__local` bytes one work-group allocates (what the kernel declares).
    pub(crate) local_bytes: u64,
    /// Work-items of the fold kernels' one work-group (reductions only; else 0).
    pub(crate) fold_items: usize,
}

/// A grid shape a generated kernel (`what`, e.g. "stencil `heat`") of `rank` can run on: its
/// rank, at least one point, and indices that fit the kernels' 32-bit `int`s.
pub(crate) fn check_kernel_shape(what: &str, rank: usize, shape: Shape) -> Result<()> {
    if !(1..=3).contains(&rank) || shape.rank() != rank {
        return Err(Error::InvalidConfig(format!(
            "{what} is {rank}-D but the grid has shape {shape}; pass a {rank}-D shape"
        )));
    }
    if shape.is_empty() {
        return Err(Error::InvalidConfig(format!(
            "grid of shape {shape} has no points; every extent must be at least 1"
        )));
    }
    let points = shape.checked_len();
    if points.is_none_or(|n| n > MAX_INDEX) {
        return Err(Error::TooLarge {
            what: format!("grid of shape {shape}"),
            detail: format!(
                "it has {} points; clforge kernels index grids with 32-bit `int`s, so a grid has 1 to \
                 {MAX_INDEX} points",
                points.map_or_else(|| "more than usize::MAX".to_string(), |n| n.to_string())
            ),
        });
    }
    Ok(())
}

/// Sizes the launch of `config` for grids of `shape` and checks it against `info` before
/// anything is built: the grid fits the kernels' 32-bit `int` indices, every work-group
/// extent is at least 1 (and 1 beyond the stencil's rank), the work-group fits
/// `CL_DEVICE_MAX_WORK_GROUP_SIZE` and `CL_DEVICE_MAX_WORK_ITEM_SIZES`, the `__local` arrays
/// the tiled and steps kernels declare fit `CL_DEVICE_LOCAL_MEM_SIZE`, and no size overflows.
pub(crate) fn size_launch(
    spec: &StencilSpec,
    info: &DeviceInfo,
    config: &LaunchConfig,
    shape: Shape,
) -> Result<SizedLaunch> {
    let rank = spec.rank;
    check_kernel_shape(&format!("stencil `{}`", spec.name), rank, shape)?;
    let variant = config.variant;
    let v = spec.variant(variant);
    if let Some(why) = v.unavailable {
        return Err(Error::InvalidConfig(format!(
            "stencil `{}` has no {} variant: {why}",
            spec.name,
            variant.name()
        )));
    }
    let dims = shape.dims();
    let what = |detail: String| format!("{detail} of the {} variant of stencil `{}`", variant.name(), spec.name);
    if config.points.is_some() && !matches!(variant, Variant::Plain | Variant::Vector) {
        return Err(Error::InvalidConfig(format!(
            "{}: points per work-item are a tunable of the plain and vector variants only",
            what("launch".into())
        )));
    }
    if config.lanes.is_some() && variant != Variant::Vector {
        return Err(Error::InvalidConfig(format!(
            "{}: lanes are a tunable of the vector variant only",
            what("launch".into())
        )));
    }
    if config.march.is_some() && variant != Variant::March {
        return Err(Error::InvalidConfig(format!(
            "{}: planes per work-group (`march`) are a tunable of the march variant only",
            what("launch".into())
        )));
    }
    let mut kernel = v.kernel;
    let (global, local, options, local_points) = match variant {
        Variant::Plain | Variant::Vector => {
            let wg = config.work_group.unwrap_or(default_work_group(rank));
            check_extents(&wg, rank, || what(format!("work-group {wg:?}")), "work_group")?;
            // The vector kernel: the spec's lanes, or its narrow kernel (by default on a GPU).
            let narrow = spec.narrow.filter(|&(_, n)| match config.lanes {
                Some(l) => l == n,
                None => info.kind == crate::DeviceKind::Gpu,
            });
            let lanes = narrow.map_or(spec.lanes, |(_, n)| n);
            if let Some(l) = config.lanes.filter(|&l| l != lanes) {
                return Err(Error::InvalidConfig(format!(
                    "{}: {l} lanes; the vector kernels of stencil `{}` have {}",
                    what("launch".into()),
                    spec.name,
                    std::iter::once(spec.lanes)
                        .chain(spec.narrow.map(|(_, n)| n))
                        .map(|n| n.to_string())
                        .collect::<Vec<_>>()
                        .join(" or ")
                )));
            }
            let nx = if variant == Variant::Plain {
                dims[0]
            } else if lanes == 0 {
                return Err(Error::InvalidConfig(format!(
                    "stencil `{}` declares 0 lanes for its vector variant; its spec must name at least 1",
                    spec.name
                )));
            } else {
                dims[0].div_ceil(lanes)
            };
            let points = config.points.unwrap_or(1);
            if points == 0 || (rank == 1 && points > 1) {
                return Err(Error::InvalidConfig(format!(
                    "{}: {points} points per work-item; give 1 or more, and 1 for a 1-D stencil",
                    what("launch".into())
                )));
            }
            // The slowest axis is walked `points` at a time.
            let slow = if rank == 3 { 2 } else { 1 };
            let mut items = [nx, dims[1], dims[2]];
            items[slow] = items[slow].div_ceil(points);
            let global =
                round_up(items, wg).ok_or_else(|| too_many_items(&what(format!("work-group {wg:?}")), shape))?;
            // The vector variant loads whole aligned vectors where every row starts at a
            // multiple of its lanes (OpenCL buffers start aligned to the largest type).
            let mut options = format!("-D PTS={points}");
            if variant == Variant::Vector {
                if let Some((name, _)) = narrow {
                    kernel = name;
                    options += " -D CLFORGE_VEC4=1";
                }
                if dims[0].is_multiple_of(lanes) {
                    options += " -D VEC_ALIGNED=1";
                }
            }
            (global, wg, options, 0)
        }
        Variant::Tiled | Variant::Steps | Variant::March => {
            let steps = config.iterations();
            let t = config.tile.unwrap_or_else(|| spec.tile_on(info, variant, steps));
            let tile = || what(format!("tile {t:?}"));
            check_extents(&[t.x, t.y, t.rows], 3, tile, "tile")?;
            if rank == 1 && (t.y != 1 || t.rows != 1) {
                return Err(Error::InvalidConfig(format!(
                    "{}: a 1-D stencil's tile has y = rows = 1",
                    tile()
                )));
            }
            if variant == Variant::Steps && steps == 0 {
                return Err(Error::InvalidConfig(format!(
                    "{} runs 0 steps per launch; give steps >= 1",
                    what("launch".into())
                )));
            }
            let planes = config.march_planes();
            if variant == Variant::March {
                // The macro marks the variant unavailable below 3-D; a hand-written spec may not.
                if rank != 3 {
                    return Err(Error::InvalidConfig(format!(
                        "{}: the march variant walks along z; it is for 3-D stencils only, and this one is \
                         {rank}-D",
                        what("launch".into())
                    )));
                }
                if planes == 0 {
                    return Err(Error::InvalidConfig(format!(
                        "{} marches over 0 planes per work-group; give march >= 1",
                        what("launch".into())
                    )));
                }
            }
            // The steps kernel's tiles are `y` deep along z in 3-D (one group per z tile),
            // one plane otherwise; the tiled kernel takes a group per plane, the march kernel
            // one per `planes` planes.
            let z = match (variant, rank) {
                (Variant::Steps, 3) => dims[2].div_ceil(t.y),
                (Variant::Steps, _) => 1,
                (Variant::March, _) => dims[2].div_ceil(planes),
                _ => dims[2],
            };
            // x: one work-item per point; y: `rows` work-items per `y` points.
            let global = round_up([dims[0], dims[1].div_ceil(t.y), z], [t.x, 1, 1])
                .and_then(|[gx, gy, gz]| Some([gx, gy.checked_mul(t.rows)?, gz]))
                .ok_or_else(|| too_many_items(&tile(), shape))?;
            let points = local_points(variant, t, steps, spec.halo, rank);
            let mut options = format!("-D TILE_X={} -D TILE_Y={} -D WG_Y={}", t.x, t.y, t.rows);
            if variant == Variant::Steps {
                options.push_str(&format!(" -D STEPS={steps}"));
                if rank == 3 {
                    options.push_str(&format!(" -D TILE_Z={}", t.y));
                }
            }
            if variant == Variant::March {
                options.push_str(&format!(" -D MARCH_Z={planes}"));
            }
            (global, [t.x, t.rows, 1], options, points.unwrap_or(usize::MAX))
        }
    };
    let work_group = || what(format!("work-group {:?}", &local[..rank]));
    check_work_group(info, &local, work_group)?;
    if let Some(d) = (0..3).find(|&d| global[d] > MAX_INDEX) {
        return Err(Error::TooLarge {
            what: work_group(),
            detail: format!(
                "the grid {shape} rounded up to whole work-groups is {} work-items along axis {d}, more \
                 than the kernels' 32-bit `int` indices reach ({MAX_INDEX})",
                global[d]
            ),
        });
    }
    let local_bytes = (local_points as u64).saturating_mul(v.local_bytes_per_point as u64);
    if local_bytes > info.local_mem_bytes {
        return Err(Error::DeviceLimit {
            what: what(format!(
                "`__local` memory of {}",
                match (
                    variant,
                    config
                        .tile
                        .unwrap_or_else(|| spec.tile_on(info, variant, config.iterations()))
                ) {
                    (Variant::Steps, t) => format!("tile {t:?} over {} steps", config.iterations()),
                    (Variant::March, t) => format!("tile {t:?} with its ring of {} planes", 2 * spec.halo[2] + 2),
                    (_, t) => format!("tile {t:?}"),
                }
            )),
            needed: local_bytes,
            limit: info.local_mem_bytes,
            limit_name: "CL_DEVICE_LOCAL_MEM_SIZE",
            hint: if variant == Variant::Steps {
                "choose a smaller tile or fewer steps".into()
            } else {
                "choose a smaller tile".into()
            },
        });
    }
    // Reductions: the launch's work-group size for the in-group tree, and the fold's.
    let mut options = options;
    let mut fold_items = 0;
    if !spec.folds.is_empty() {
        let items: usize = local.iter().product();
        fold_items = 1 << (info.max_work_group_size.clamp(1, 1024).ilog2());
        options.push_str(&format!(
            " -D RED_ITEMS={items} -D RED_P2={} -D FOLD_ITEMS={fold_items}",
            items.next_power_of_two()
        ));
    }
    Ok(SizedLaunch {
        kernel,
        global,
        local,
        options: options.trim_start().to_string(),
        local_bytes,
        fold_items,
    })
}

/// Largest grid (points) and global work size (per axis) the kernels' `int` indices reach.
pub(crate) const MAX_INDEX: usize = i32::MAX as usize;

/// Points of the `__local` arrays the tiled, steps or march kernel declares for tile `t`: the
/// tiled kernel one `TW * TH * (2 HZ + 1)` array per staged grid (`local_bytes_per_point` sums
/// their element sizes), the march kernel one `TW * TH * (2 HZ + 2)` ring per staged grid, the
/// steps kernel two `SW * SH * SD` arrays of the iterated grid, its tile `y` deep along z in
/// 3-D (`local_bytes_per_point` counts both); `None` on overflow.
fn local_points(variant: Variant, t: Tile, steps: usize, [hx, hy, hz]: [usize; 3], rank: usize) -> Option<usize> {
    let steps = if variant == Variant::Steps { steps } else { 1 };
    let depth = match variant {
        Variant::Steps if rank == 3 => extent(t.y, steps, hz),
        Variant::March => extent(2, 1, hz),
        _ => extent(1, steps, hz),
    };
    extent(t.x, steps, hx)
        .zip(extent(t.y, steps, hy))
        .zip(depth)
        .and_then(|((w, h), d)| w.checked_mul(h)?.checked_mul(d))
}

/// `tile + 2 · steps · halo`: a tile's extent with the halo its kernel stages.
fn extent(tile: usize, steps: usize, halo: usize) -> Option<usize> {
    tile.checked_add(steps.checked_mul(halo)?.checked_mul(2)?)
}

/// `n` rounded up to a multiple of `m`, per axis; `None` on overflow (`m` is non-zero).
fn round_up(n: [usize; 3], m: [usize; 3]) -> Option<[usize; 3]> {
    let r = [0, 1, 2].map(|d| n[d].div_ceil(m[d]).checked_mul(m[d]));
    Some([r[0]?, r[1]?, r[2]?])
}

fn too_many_items(what: &str, shape: Shape) -> Error {
    Error::TooLarge {
        what: what.to_string(),
        detail: format!("covering the grid {shape} with it takes more than usize::MAX work-items"),
    }
}

/// Work-group extents (or a tile's sizes) are at least 1, and 1 beyond the stencil's rank.
fn check_extents(extents: &[usize], rank: usize, what: impl Fn() -> String, field: &str) -> Result<()> {
    if let Some(d) = extents.iter().position(|&n| n == 0) {
        return Err(Error::InvalidConfig(format!(
            "{}: component {d} is 0; every `{field}` component must be at least 1",
            what()
        )));
    }
    if field == "work_group" {
        if let Some(d) = (rank..extents.len()).find(|&d| extents[d] != 1) {
            return Err(Error::InvalidConfig(format!(
                "{}: component {d} is {} but the stencil is {rank}-D; components beyond the rank must be 1",
                what(),
                extents[d]
            )));
        }
    }
    Ok(())
}

/// One argument of a generated stencil launch (built by the generated code).
#[derive(Clone, Debug)]
pub struct StencilArg<'a>(ArgKind<'a>);

#[derive(Clone)]
enum ArgKind<'a> {
    Grid {
        name: &'a str,
        shape: Shape,
        arg: Arg<'a>,
        /// A [`PackedGrid`]: its bits per point.
        packed: Option<u32>,
    },
    Params(Vec<u8>),
    Scalar(Arg<'a>),
    /// A reduction output: part `part` of `parts` (one per device of a split launch).
    Reduction {
        name: &'a str,
        red: &'a dyn crate::reduce::Reducer,
        part: usize,
        parts: usize,
    },
}

impl std::fmt::Debug for ArgKind<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ArgKind::Grid {
                name,
                shape,
                packed: None,
                ..
            } => write!(f, "grid `{name}` of shape {shape}"),
            ArgKind::Grid {
                name,
                shape,
                packed: Some(b),
                ..
            } => write!(f, "grid `{name}` of shape {shape}, packed in {b} bits per point"),
            ArgKind::Params(b) => write!(f, "params ({} bytes)", b.len()),
            ArgKind::Scalar(a) => write!(f, "scalar {a:?}"),
            ArgKind::Reduction { name, part, parts, .. } => write!(f, "reduction `{name}` (part {part} of {parts})"),
        }
    }
}

/// Scalars a stencil may take by value.
pub trait KernelScalar: Copy {
    /// As a kernel argument.
    fn kernel_arg(self) -> Arg<'static>;
}

macro_rules! kernel_scalars {
    ($($t:ty => $f:ident),*) => {$(
        impl KernelScalar for $t {
            fn kernel_arg(self) -> Arg<'static> {
                Arg::$f(self)
            }
        }
    )*};
}
kernel_scalars!(f32 => f32, f64 => f64, i32 => i32, u32 => u32);

impl<'a> StencilArg<'a> {
    /// A grid argument named as in the stencil function.
    pub fn grid<T: Scalar>(name: &'a str, grid: &'a DeviceGrid<T>) -> StencilArg<'a> {
        StencilArg(ArgKind::Grid {
            name,
            shape: grid.shape,
            arg: Arg::buffer(&grid.buffer),
            packed: None,
        })
    }
    /// A grid the stencil reads packed (`#[stencil(packed(name = BITS))]`), named as in the
    /// stencil function. A launch refuses it where the stencil reads the grid unpacked or in
    /// other bits, and refuses a [`StencilArg::grid`] where it reads it packed
    /// ([`Error::PackedBinding`]).
    pub fn packed<T: Packable, const BITS: u32>(name: &'a str, grid: &'a PackedGrid<T, BITS>) -> StencilArg<'a> {
        StencilArg(ArgKind::Grid {
            name,
            shape: grid.shape(),
            arg: Arg::buffer(grid.words()),
            packed: Some(BITS),
        })
    }
    /// Whether this is a grid (or bit-packed lattice) argument.
    pub(crate) fn is_grid(&self) -> bool {
        matches!(self.0, ArgKind::Grid { .. })
    }
    /// A reduction output named as in the stencil's outputs (on one device).
    pub fn reduction<R: crate::reduce::Reduce>(name: &'a str, r: &'a crate::reduce::Reduction<R>) -> StencilArg<'a> {
        Self::reduction_part(name, r, 0, 1)
    }
    /// Part `part` of `parts` of a reduction output (one device of a split launch).
    pub(crate) fn reduction_part(
        name: &'a str,
        r: &'a dyn crate::reduce::Reducer,
        part: usize,
        parts: usize,
    ) -> StencilArg<'a> {
        StencilArg(ArgKind::Reduction {
            name,
            red: r,
            part,
            parts,
        })
    }
    /// The reduction behind a reduction output.
    pub(crate) fn reducer(&self) -> Option<&'a dyn crate::reduce::Reducer> {
        match self.0 {
            ArgKind::Reduction { red, .. } => Some(red),
            _ => None,
        }
    }
    /// A bit-packed lattice state (`Lattice<bool>`) named as in the rule.
    pub fn bits(name: &'a str, bits: &'a crate::lattice::DeviceBits) -> StencilArg<'a> {
        StencilArg(ArgKind::Grid {
            name,
            shape: bits.shape(),
            arg: Arg::buffer(bits.words()),
            packed: None,
        })
    }
    /// A params struct, passed in constant memory.
    pub fn params<P: Params>(p: &P) -> StencilArg<'a> {
        StencilArg(ArgKind::Params(p.to_bytes()))
    }
    /// A scalar passed by value.
    pub fn scalar<T: KernelScalar>(v: T) -> StencilArg<'a> {
        StencilArg(ArgKind::Scalar(v.kernel_arg()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::{StructBytes, StructDecl};

    struct Scale {
        a: f32,
        b: i32,
    }

    impl Params for Scale {
        const CL_NAME: &'static str = "Scale";
        fn cl_declaration(cl_name: &str) -> String {
            let mut d = StructDecl::new(cl_name);
            d.field::<f32>("a");
            d.field::<i32>("b");
            d.finish()
        }
        fn to_bytes(&self) -> Vec<u8> {
            let mut b = StructBytes::default();
            b.put(self.a);
            b.put(self.b);
            b.finish()
        }
    }

    const SOURCE: &str = "typedef struct { float a; int b; } Scale;
__kernel void scale_plain(__global float* out, __global const float* u, __constant Scale* s, __constant Scale* t,
                          const float c, const int nx, const int ny, const int nz) {
    const int x = get_global_id(0);
    if (x < nx) out[x] = s->a * u[x] + s->b + t->a * c + t->b;
}";

    fn spec() -> StencilSpec {
        StencilSpec {
            name: "scale",
            rank: 1,
            halo: [0; 3],
            boundary: Boundary::Clamp,
            lanes: 8,
            narrow: None,
            point: false,
            folds: &[],
            packed: &[],
            variants: [
                VariantSpec {
                    kernel: "scale_plain",
                    unavailable: None,
                    local_bytes_per_point: 0,
                },
                VariantSpec {
                    kernel: "scale_tiled",
                    unavailable: None,
                    local_bytes_per_point: 4,
                },
                VariantSpec {
                    kernel: "scale_vec8",
                    unavailable: None,
                    local_bytes_per_point: 0,
                },
                VariantSpec {
                    kernel: "scale_steps",
                    unavailable: Some("the test stencil is 1-D"),
                    local_bytes_per_point: 8,
                },
                VariantSpec {
                    kernel: "scale_march",
                    unavailable: None,
                    local_bytes_per_point: 4,
                },
            ],
            default_tile: Tile { x: 64, y: 1, rows: 1 },
            origin: "stencil.rs",
            source: SOURCE,
        }
    }

    #[test]
    fn plans_follow_changing_params_and_clone() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<StencilPlan>();
        let dev = Device::default().unwrap();
        let shape = Shape::d1(100);
        let u = DeviceGrid::from_host(&dev, &HostGrid::from_fn(shape, |[x, _, _]| x as f32).unwrap()).unwrap();
        let mut out = DeviceGrid::<f32>::new(&dev, shape).unwrap();
        let plan = StencilPlan::new(&dev, spec(), &LaunchConfig::default(), shape).unwrap();
        let run = |plan: &StencilPlan, out: &mut DeviceGrid<f32>, s: Scale, t: Scale, c: f32| {
            let args = [
                StencilArg::grid("u", &u),
                StencilArg::params(&s),
                StencilArg::params(&t),
                StencilArg::scalar(c),
            ];
            plan.launch(out, &args).unwrap().wait().unwrap();
            let want: Vec<f32> = (0..100)
                .map(|x| s.a * x as f32 + s.b as f32 + t.a * c + t.b as f32)
                .collect();
            assert_eq!(out.to_host().unwrap().data(), &want[..]);
        };
        run(&plan, &mut out, Scale { a: 2.0, b: 1 }, Scale { a: 0.5, b: -3 }, 4.0);
        run(&plan, &mut out, Scale { a: 2.0, b: 1 }, Scale { a: 0.5, b: -3 }, 8.0);
        run(&plan, &mut out, Scale { a: -1.0, b: 7 }, Scale { a: 0.5, b: -3 }, 8.0);
        run(&plan, &mut out, Scale { a: -1.0, b: 7 }, Scale { a: 3.0, b: 0 }, 1.0);
        let args = [
            StencilArg::grid("u", &u),
            StencilArg::params(&Scale { a: 1.5, b: 0 }),
            StencilArg::params(&Scale { a: 0.0, b: 2 }),
            StencilArg::scalar(0.0f32),
        ];
        plan.enqueue(&mut out, &args).unwrap();
        dev.finish().unwrap();
        let want: Vec<f32> = (0..100).map(|x| 1.5 * x as f32 + 2.0).collect();
        assert_eq!(out.to_host().unwrap().data(), &want[..]);
        let copy = plan.clone();
        run(&copy, &mut out, Scale { a: 5.0, b: 2 }, Scale { a: 3.0, b: 0 }, 1.0);
        run(&plan, &mut out, Scale { a: -1.0, b: 7 }, Scale { a: 3.0, b: 0 }, 1.0);

        let small = DeviceGrid::<f32>::new(&dev, Shape::d1(50)).unwrap();
        let args = [
            StencilArg::grid("u", &small),
            StencilArg::params(&Scale { a: 1.0, b: 0 }),
        ];
        assert!(matches!(plan.launch(&mut out, &args), Err(Error::ShapeMismatch { .. })));
        let args = [StencilArg::grid("u", &u)];
        assert!(matches!(
            plan.launch(&mut out, &args),
            Err(Error::LengthMismatch {
                expected: 8,
                found: 5,
                ..
            })
        ));
    }

    #[test]
    fn missing_kernel_fails_at_plan_with_the_names_available() {
        let dev = Device::default().unwrap();
        let shape = Shape::d1(64);
        // The plan reads the built kernel's limits, so a missing kernel fails before any launch.
        let err = StencilPlan::new(&dev, spec(), &LaunchConfig::variant(Variant::Vector), shape).unwrap_err();
        assert!(
            matches!(&err, Error::InvalidConfig(m) if m.contains("scale_vec8") && m.contains("scale_plain")),
            "{err}"
        );
    }

    /// A launch that names no tile gets one that fits the device's `__local` memory; a tile
    /// the caller names is kept, and one that does not fit is an error (long difftest run on
    /// the H100: 3-D stencils with a z halo of 3 and `f64` grids overflowed 48 KiB at 32 x 8).
    #[test]
    fn default_tile_shrinks_to_the_devices_local_memory() {
        let mut s = spec();
        s.rank = 3;
        s.halo = [1, 1, 3];
        s.default_tile = Tile { x: 32, y: 8, rows: 4 };
        s.variants[1].local_bytes_per_point = 24;
        let mut info = Device::default().unwrap().info().clone();
        info.local_mem_bytes = 49152;
        info.max_work_group_size = info.max_work_group_size.max(128);
        info.max_work_item_sizes = [1024, 1024, 64];
        let shape = Shape::d3(50, 40, 30);
        let tiled = LaunchConfig::variant(Variant::Tiled);
        // 34 * 10 * 7 points * 24 B = 57120 B > 49152 B; 32 x 4 needs 34 * 6 * 7 * 24 = 34272 B.
        assert_eq!(s.tile_on(&info, Variant::Tiled, 1), Tile { x: 32, y: 4, rows: 4 });
        let sized = size_launch(&s, &info, &tiled, shape).unwrap();
        assert_eq!(sized.local, [32, 4, 1]);
        assert_eq!(sized.local_bytes, 34272);
        let named = LaunchConfig::tiled(s.default_tile);
        let err = size_launch(&s, &info, &named, shape).unwrap_err().to_string();
        assert!(err.contains("57120") && err.contains("choose a smaller tile"), "{err}");
        // Nothing fits: the default stays and the launch says how much it lacks.
        info.local_mem_bytes = 64;
        assert_eq!(s.tile_on(&info, Variant::Tiled, 1), s.default_tile);
        let err = size_launch(&s, &info, &tiled, shape).unwrap_err().to_string();
        assert!(err.contains("CL_DEVICE_LOCAL_MEM_SIZE"), "{err}");
    }

    /// The march variant's launch: a work-group per `x` by `y` column and per `march` planes
    /// (the last clipped), its ring of `2 HZ + 2` planes per staged grid in local memory, the
    /// depth a build option; a default tile shrinks to fit, a named one that does not fit, a
    /// grid below 3-D and a march of 0 planes are errors.
    #[test]
    fn march_launch_geometry_and_local_memory() {
        let mut s = spec();
        s.rank = 3;
        s.halo = [1, 1, 2];
        s.default_tile = Tile { x: 32, y: 8, rows: 4 };
        let mut info = Device::default().unwrap().info().clone();
        info.local_mem_bytes = 49152;
        info.max_work_group_size = info.max_work_group_size.max(128);
        info.max_work_item_sizes = [1024, 1024, 64];
        let shape = Shape::d3(50, 40, 30);
        let sized = size_launch(&s, &info, &LaunchConfig::march(Tile { x: 16, y: 8, rows: 2 }, 8), shape).unwrap();
        assert_eq!((sized.global, sized.local), ([64, 10, 4], [16, 2, 1]));
        assert_eq!(sized.options, "-D TILE_X=16 -D TILE_Y=8 -D WG_Y=2 -D MARCH_Z=8");
        // (16 + 2) x (8 + 2) points x 6 planes x 4 B
        assert_eq!(sized.local_bytes, 18 * 10 * 6 * 4);
        let march = LaunchConfig::variant(Variant::March);
        assert_eq!(
            march.effective(&s),
            LaunchConfig::march(s.default_tile, DEFAULT_MARCH_Z)
        );
        let sized = size_launch(&s, &info, &march, shape).unwrap();
        assert_eq!(sized.global[2], 30usize.div_ceil(DEFAULT_MARCH_Z));
        assert!(sized.options.ends_with(&format!("-D MARCH_Z={DEFAULT_MARCH_Z}")));
        // 34 x 10 x 6 points x 32 B = 65280 B > 49152 B; 32 x 4 needs 34 * 6 * 6 * 32 = 39168 B.
        s.variants[4].local_bytes_per_point = 32;
        assert_eq!(s.tile_on(&info, Variant::March, 1), Tile { x: 32, y: 4, rows: 4 });
        assert_eq!(size_launch(&s, &info, &march, shape).unwrap().local_bytes, 39168);
        let named = LaunchConfig::march(s.default_tile, 4);
        let err = size_launch(&s, &info, &named, shape).unwrap_err();
        assert!(
            matches!(&err, Error::DeviceLimit { needed: 65280, .. }) && err.to_string().contains("ring of 6 planes"),
            "{err}"
        );
        let err = size_launch(&s, &info, &LaunchConfig::march(s.default_tile, 0), shape).unwrap_err();
        assert!(err.to_string().contains("0 planes"), "{err}");
        let err = size_launch(&spec(), &info, &march, Shape::d1(100)).unwrap_err();
        assert!(
            matches!(&err, Error::InvalidConfig(m) if m.contains("3-D stencils only")),
            "{err}"
        );
        assert_eq!(
            Variant::ALL.map(|v| Variant::from_name(v.name())),
            Variant::ALL.map(Some)
        );
    }

    #[test]
    fn effective_config_fills_defaults() {
        let s = spec();
        assert_eq!(LaunchConfig::default().effective(&s).work_group, Some([64, 1, 1]));
        let tiled = LaunchConfig::variant(Variant::Tiled).effective(&s);
        assert_eq!(tiled, LaunchConfig::tiled(s.default_tile));
        let wg = LaunchConfig {
            work_group: Some([128, 1, 1]),
            ..LaunchConfig::default()
        };
        assert_eq!(wg.effective(&s), wg);
    }
}
