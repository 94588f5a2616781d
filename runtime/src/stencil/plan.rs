//! A stencil on one device: the launch of one variant, sized against the device's limits and
//! built, with its fused reductions folded behind it.

use std::sync::OnceLock;

use crate::buffer::Scalar;
use crate::device::{Device, DeviceInfo};
use crate::error::{Error, Result};
use crate::grid::{DeviceGrid, Shape};
use crate::launch::arg::ArgKind;
use crate::launch::bind::{bind, bind_vec, Sources};
use crate::launch::{
    check_arg_shapes, check_kernel_shape, check_packing, KernelArg, PackedArg, ParamsCache, MAX_INDEX,
};
use crate::program::{check_work_group, Arg, Event, KernelRef, Program};
use clforge_abi::Bind;

use super::spec::*;
use super::{Launch, StencilTarget};

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
    /// Where each kernel parameter comes from (the macro's list for this variant).
    binds: &'static [Bind],
    /// Reductions: the fold kernels (in output order), the launch's work-groups (partials per
    /// reduction) and the fold's work-group size.
    folds: &'static [FoldSpec],
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
            binds: spec.variant(config.variant).params,
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
    pub fn launch<T: Scalar>(&self, out: &mut DeviceGrid<T>, args: &[KernelArg<'_>]) -> Result<Event> {
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
    pub fn enqueue<T: Scalar>(&self, out: &mut DeviceGrid<T>, args: &[KernelArg<'_>]) -> Result<()> {
        self.submit(out, args, false).map(drop)
    }

    /// Enqueues a stencil with several outputs (a system of fields): `outs` are its output
    /// grids in order ([`KernelArg::grid`]), `args` its arguments in the function's order.
    pub fn launch_outputs(&self, outs: &[KernelArg<'_>], args: &[KernelArg<'_>]) -> Result<Event> {
        self.submit_all(outs, args, true)?.ok_or_else(|| Error::Cl {
            op: "clEnqueueNDRangeKernel",
            message: format!("kernel `{}` returned no event", self.kernel),
        })
    }

    /// Like [`StencilPlan::launch_outputs`] without an event (see [`StencilPlan::enqueue`]).
    pub fn enqueue_outputs(&self, outs: &[KernelArg<'_>], args: &[KernelArg<'_>]) -> Result<()> {
        self.submit_all(outs, args, false).map(drop)
    }

    fn submit<T: Scalar>(&self, out: &mut DeviceGrid<T>, args: &[KernelArg<'_>], event: bool) -> Result<Option<Event>> {
        self.submit_all(&[KernelArg::grid("out", out)], args, event)
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
        outs: &[KernelArg<'_>],
        args: &[KernelArg<'_>],
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

    fn submit_all(&self, outs: &[KernelArg<'_>], args: &[KernelArg<'_>], event: bool) -> Result<Option<Event>> {
        self.submit_range(outs, args, event, None, &[])
    }

    /// The launch of [`StencilPlan::submit_all`], over `range` (global size and offset)
    /// instead of the whole grid if given, after the events `after`.
    fn submit_range(
        &self,
        outs: &[KernelArg<'_>],
        args: &[KernelArg<'_>],
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
        let sources = Sources {
            kernel: &self.kernel,
            outs,
            args,
            params: &params,
            folds: &folds,
            extents: self.shape.dims().map(|d| d as i32),
            place: self.place,
            reduce_box: self.reduce_box,
            named: &[],
        };
        let mut stack = [Arg::i32(0); STACK_ARGS];
        let mut heap = Vec::new();
        let count = self.binds.len();
        let cl_args: &mut [Arg<'_>] = if count <= STACK_ARGS {
            &mut stack[..count]
        } else {
            heap.resize(count, Arg::i32(0));
            &mut heap
        };
        bind(self.binds, &sources, cl_args)?;
        let kernel = self.program.cached_kernel(&self.kernel_ref, &self.kernel)?;
        let (global, offset) = range.map_or((&self.global[..], None), |(g, o)| (g, Some(o)));
        let sizes = (global, Some(&self.local[..]));
        let ev = self
            .program
            .launch_kernel_at(kernel, &self.kernel, sizes, offset, cl_args, event, after)?;
        // The folds queue behind the launch on the same in-order queue.
        for ((f, cell), b) in self.folds.iter().zip(&self.fold_refs).zip(&folds) {
            let groups = i32::try_from(self.groups).map_err(|_| Error::TooLarge {
                what: format!("reduction of kernel `{}`", self.kernel),
                detail: format!("{} work-groups exceed the fold's 32-bit count", self.groups),
            })?;
            // Two passes when there are many partials: many work-groups fold chunks in
            // parallel, then one folds their values (one group alone would take ~100 us on
            // an H100 for the 0.5 M partials of an 8192² launch).
            let k = self.program.cached_kernel(cell, f.kernel)?;
            let items = self.fold_items;
            let first = self.groups.div_ceil(items * 4).clamp(1, crate::launch::FOLD_GROUPS);
            let fold = |from: Arg<'_>, n: i32, to: Arg<'_>, global: usize| -> Result<()> {
                let named = [("partials", from), ("n", Arg::i32(n)), ("result", to)];
                let sources = Sources {
                    kernel: f.kernel,
                    named: &named,
                    ..Sources::default()
                };
                let cl = bind_vec(f.params, &sources)?;
                self.program
                    .launch_kernel(k, f.kernel, &[global], Some(&[items]), &cl, false)
                    .map(drop)
            };
            if first > 1 {
                fold(b.partials(), groups, b.level2(), first * items)?;
                fold(b.level2(), first as i32, b.result(), items)?;
            } else {
                fold(b.partials(), groups, b.result(), items)?;
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
    let sized = match variant {
        Variant::Plain | Variant::Vector => size_flat(spec, info, config, shape, &what)?,
        Variant::Tiled | Variant::Steps | Variant::March => size_tiled(spec, info, config, shape, &what)?,
    };
    let Sizes {
        kernel,
        global,
        local,
        options,
        local_points,
    } = sized;
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

/// Points of the `__local` arrays the tiled, steps or march kernel declares for tile `t`: the
/// tiled kernel one `TW * TH * (2 HZ + 1)` array per staged grid (`local_bytes_per_point` sums
/// their element sizes), the march kernel one `TW * TH * (2 HZ + 2)` ring per staged grid, the
/// steps kernel two `SW * SH * SD` arrays of the iterated grid, its tile `y` deep along z in
/// 3-D (`local_bytes_per_point` counts both); `None` on overflow.
pub(crate) fn local_points(
    variant: Variant,
    t: Tile,
    steps: usize,
    [hx, hy, hz]: [usize; 3],
    rank: usize,
) -> Option<usize> {
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

impl StencilTarget for Device {
    type Plan = StencilPlan;
    fn stencil_plan(&self, spec: StencilSpec, config: &LaunchConfig, shape: Shape) -> Result<StencilPlan> {
        StencilPlan::new(self, spec, config, shape)
    }
}

impl Launch for StencilPlan {
    type On = Device;
    fn launch_args<T: Scalar>(&self, out: &mut DeviceGrid<T>, args: &[KernelArg<'_>]) -> Result<Event> {
        self.launch(out, args)
    }
    fn enqueue_args<T: Scalar>(&self, out: &mut DeviceGrid<T>, args: &[KernelArg<'_>]) -> Result<()> {
        self.enqueue(out, args)
    }
    fn launch_outputs(&self, outs: &[KernelArg<'_>], args: &[KernelArg<'_>]) -> Result<Event> {
        StencilPlan::launch_outputs(self, outs, args)
    }
    fn enqueue_outputs(&self, outs: &[KernelArg<'_>], args: &[KernelArg<'_>]) -> Result<()> {
        StencilPlan::enqueue_outputs(self, outs, args)
    }
}

/// A launch's sizes before the device's limits are checked.
struct Sizes {
    kernel: &'static str,
    global: [usize; 3],
    local: [usize; 3],
    options: String,
    /// Points of the `__local` arrays the kernel declares.
    local_points: usize,
}

/// The plain and vector variants' sizes: a work-item per point (per `lanes` points along x for
/// the vector kernel), `points` points along the slowest axis.
fn size_flat(
    spec: &StencilSpec,
    info: &DeviceInfo,
    config: &LaunchConfig,
    shape: Shape,
    what: &dyn Fn(String) -> String,
) -> Result<Sizes> {
    let (rank, variant, dims) = (spec.rank, config.variant, shape.dims());
    let mut kernel = spec.variant(variant).kernel;
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
    let global = round_up(items, wg).ok_or_else(|| too_many_items(&what(format!("work-group {wg:?}")), shape))?;
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
    Ok(Sizes {
        kernel,
        global,
        local: wg,
        options,
        local_points: 0,
    })
}

/// The tiled, steps and march variants' sizes: an `x` by `rows` work-group per tile.
fn size_tiled(
    spec: &StencilSpec,
    info: &DeviceInfo,
    config: &LaunchConfig,
    shape: Shape,
    what: &dyn Fn(String) -> String,
) -> Result<Sizes> {
    let (rank, variant, dims) = (spec.rank, config.variant, shape.dims());
    let v = spec.variant(variant);
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
    Ok(Sizes {
        kernel: v.kernel,
        global,
        local: [t.x, t.rows, 1],
        options,
        local_points: points.unwrap_or(usize::MAX),
    })
}
