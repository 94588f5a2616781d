//! A sweep on one device: its schedule's launches, sized and built.

use std::sync::{Mutex, OnceLock};

use crate::buffer::{Buffer, Scalar};
use crate::device::{lock, Device, DeviceInfo, DeviceKind};
use crate::error::{Error, Result};
use crate::grid::{check_shape, Boundary, DeviceGrid, Shape};
use crate::launch::bind::{bind_vec, position, Sources};
use crate::launch::{check_arg_shapes, KernelArg, ParamsCache};
use crate::program::{check_work_group, Arg, Event, KernelRef, Program};
use clforge_abi::Bind;

use super::spec::*;
use super::{SweepLaunch, SweepTarget};

/// The device time of one sweep: from the start of its first launch to the end of its last.
#[derive(Clone, Debug)]
pub struct SweepEvents {
    pub(crate) first: Event,
    pub(crate) last: Event,
    /// Kernel launches the sweep took.
    pub launches: usize,
    /// A sweep over several devices: its wall-clock time (their profiling clocks differ).
    pub(crate) wall_ns: Option<u64>,
}

impl SweepEvents {
    /// Device nanoseconds from the first launch's start to the last one's end (waits); for a
    /// sweep split over several devices, the wall-clock time of the whole sweep.
    pub fn elapsed_ns(&self) -> Result<u64> {
        match self.wall_ns {
            Some(ns) => Ok(ns),
            None => self.last.since_start_of(&self.first),
        }
    }
    /// Waits for the sweep to finish.
    pub fn wait(&self) -> Result<()> {
        self.last.wait()
    }

    /// The same launches timed by the wall clock (a sweep that spans several devices).
    pub(crate) fn with_wall_ns(self, ns: u64) -> SweepEvents {
        SweepEvents {
            wall_ns: Some(ns),
            ..self
        }
    }
}

/// Whether `device` may run the one-launch schedules (persistent and strip), whose
/// work-groups hand values over through global memory: stores, barrier, a device-scope fence and
/// a flag on one side; the flag, a fence, a barrier and loads on the other. OpenCL C 1.2 scopes
/// `mem_fence` to a work-group, and NVIDIA's compiler emits exactly that (`membar.cta`): on the
/// H100 a strip at 16384² then read old values of the strip above although its flag said they
/// were written (`clforge-bench sweeps-check`; docs/SWEEPS.md). So the hand-over is allowed
/// where its fence is known to be device-wide: on CPUs (PoCL: threads of one process, tested
/// bit for bit) and on NVIDIA's platform with PTX `membar.gl` ([`ptx_fence`]); other GPUs are
/// refused and `tune` skips them there. `CLFORGE_UNFENCED_HANDOVER=1` allows them anyway, to
/// try a device with `clforge-bench sweeps-check` or to reproduce the fault.
pub fn handover_allowed(info: &DeviceInfo) -> bool {
    info.kind != DeviceKind::Gpu
        || ptx_fence(info)
        || std::env::var_os("CLFORGE_UNFENCED_HANDOVER").is_some_and(|v| v == "1")
}

/// Whether the hand-over between work-groups uses PTX's device-scope fence (`membar.gl`)
/// instead of OpenCL C 1.2's `mem_fence`, which NVIDIA compiles to the work-group-scope
/// `membar.cta`: on NVIDIA's platform, unless `CLFORGE_SWEEP_FENCE=cl` asks for the OpenCL
/// fence (to reproduce the fault with `CLFORGE_UNFENCED_HANDOVER=1`; docs/SWEEPS.md).
pub fn ptx_fence(info: &DeviceInfo) -> bool {
    info.platform.contains("NVIDIA") && std::env::var_os("CLFORGE_SWEEP_FENCE").is_none_or(|v| v != "cl")
}

/// Most spins a persistent work-group waits on one upstream flag before it gives up and
/// raises the stall flag instead of hanging (see [`SweepPlan::check`]).
pub const MAX_SPINS: u32 = 1 << 26;

/// A sized, built sweep for one grid shape; reuse it on the hot path.
#[derive(Debug)]
pub struct SweepPlan {
    program: Program,
    spec: SweepSpec,
    kernel: &'static str,
    /// Where each kernel parameter comes from (the macro's list for this schedule).
    binds: &'static [Bind],
    schedule: Schedule,
    block: usize,
    phase: Option<usize>,
    prefetch: Option<usize>,
    rows: Option<usize>,
    shape: Shape,
    /// The shape of the grids it runs on: `shape` itself, or a slab of which the plan sweeps
    /// a window of whole planes ([`SweepPlan::window`]).
    buffer: Shape,
    /// Points of the updated region per axis.
    region: [usize; 3],
    /// Blocks per axis of the region.
    blocks: [usize; 3],
    kernel_ref: OnceLock<KernelRef>,
    params: ParamsCache,
    /// Persistent schedule: the flags, the ticket counter and the epoch.
    persistent: Option<Mutex<Persistent>>,
}

#[derive(Debug)]
struct Persistent {
    /// One per block: the epoch of the last sweep that finished it.
    flags: Buffer<i32>,
    /// `[next ticket, stall flag]`.
    ticket: Buffer<i32>,
    /// Cubes in plane order (`bx, by, bz` per ticket) for [`Schedule::PersistentBlocks`].
    order: Option<Buffer<i32>>,
    epoch: i32,
}

/// Every cube `(i, j, m)` of `blocks`, plane `i + j + m = 0, 1, ...` after plane, flattened: the
/// persistent cube schedule's ticket order (a cube's three upstream cubes come earlier).
fn plane_order(blocks: [usize; 3]) -> Vec<i32> {
    let [bx, by, bz] = blocks;
    let mut cubes: Vec<[usize; 3]> = (0..bz)
        .flat_map(|m| (0..by).flat_map(move |j| (0..bx).map(move |i| [i, j, m])))
        .collect();
    cubes.sort_by_key(|&[i, j, m]| (i + j + m, m, j, i));
    cubes.iter().flat_map(|c| c.map(|v| v as i32)).collect()
}

impl SweepPlan {
    /// Builds the program (cached per source and options) and sizes the schedule for `shape`.
    pub fn new(device: &Device, spec: SweepSpec, config: &SweepConfig, shape: Shape) -> Result<SweepPlan> {
        SweepPlan::window(device, spec, config, shape, (shape, 0))
    }

    /// Like [`SweepPlan::new`], for grids of shape `buffer` of which it sweeps the `shape`
    /// that starts `base` points in (whole planes of the slowest axis: a slab's own planes
    /// and the halo planes they read). Every grid index of the kernels goes through `AT`,
    /// which adds `SW_BASE`.
    pub(crate) fn window(
        device: &Device,
        spec: SweepSpec,
        config: &SweepConfig,
        shape: Shape,
        (buffer, base): (Shape, usize),
    ) -> Result<SweepPlan> {
        let rank = spec.rank;
        let what = || format!("the {} schedule of sweep `{}`", config.schedule, spec.name);
        crate::launch::check_kernel_shape(&format!("sweep `{}`", spec.name), rank, shape)?;
        let s = *spec.schedule(config.schedule);
        if let Some(why) = s.unavailable {
            return Err(Error::InvalidConfig(format!(
                "sweep `{}` has no {} schedule: {why}",
                spec.name, config.schedule
            )));
        }
        if config.schedule.is_persistent() && !handover_allowed(device.info()) {
            return Err(Error::InvalidConfig(format!(
                "{}: one-launch schedules are refused on `{}` ({}): their work-groups hand values \
                 over through a fence OpenCL 1.2 scopes to a work-group, and a device-wide one is \
                 known here only for CPUs and NVIDIA (docs/SWEEPS.md); use `wave-local` or \
                 `wave`, or check the device with `clforge-bench sweeps-check` and set \
                 CLFORGE_UNFENCED_HANDOVER=1",
                what(),
                device.info().name,
                device.info().platform
            )));
        }
        let block = config.block.unwrap_or(spec.default_block());
        if block == 0 || block > 1024 {
            return Err(Error::InvalidConfig(format!(
                "{}: block edge {block}; give 1 to 1024 points",
                what()
            )));
        }
        let region = region(shape, spec.halo, spec.boundary);
        let blocks = region.map(|m| m.div_ceil(block).max(1));
        let rows = config.rows.unwrap_or(DEFAULT_ROWS);
        if config.schedule == Schedule::Strip && (rows == 0 || !block.is_multiple_of(rows)) {
            return Err(Error::InvalidConfig(format!(
                "{}: {rows} rows per work-item; give a divisor of the block edge {block}",
                what()
            )));
        }
        let local = match config.schedule {
            Schedule::Serial => [1, 1, 1],
            Schedule::Strip => [block / rows, 1, 1],
            Schedule::Blocks | Schedule::PersistentBlocks | Schedule::BlocksLocal => [block, block, 1],
            _ => [block, 1, 1],
        };
        check_work_group(device.info(), &local, || format!("work-group {local:?} of {}", what()))?;
        let local_bytes = local_bytes(&spec, config, block);
        if local_bytes > device.info().local_mem_bytes {
            return Err(Error::DeviceLimit {
                what: format!("`__local` memory of {} with blocks of {block}", what()),
                needed: local_bytes,
                limit: device.info().local_mem_bytes,
                limit_name: "CL_DEVICE_LOCAL_MEM_SIZE",
                hint: "choose a smaller block (or, for the strip schedule, a shorter phase)".into(),
            });
        }
        let options = build_options(device.info(), config, block, base, rows, &what)?;
        let program = device.program(spec.origin, spec.source, &options)?;
        let limits = program.kernel_limits(s.kernel)?;
        let items: usize = local.iter().product();
        if items > limits.work_group_size {
            return Err(Error::DeviceLimit {
                what: format!("work-group {local:?} of {} as built", what()),
                needed: items as u64,
                limit: limits.work_group_size as u64,
                limit_name: "CL_KERNEL_WORK_GROUP_SIZE",
                hint: "choose a smaller block".into(),
            });
        }
        let persistent = persistent(device, config.schedule, blocks)?;
        Ok(SweepPlan {
            program,
            spec,
            kernel: s.kernel,
            binds: s.params,
            schedule: config.schedule,
            block,
            phase: (config.schedule == Schedule::Strip).then(|| config.phase.unwrap_or(DEFAULT_PHASE)),
            prefetch: (config.schedule == Schedule::Strip).then(|| config.prefetch.unwrap_or(DEFAULT_PREFETCH)),
            rows: (config.schedule == Schedule::Strip).then_some(rows),
            shape,
            buffer,
            region,
            blocks,
            kernel_ref: OnceLock::new(),
            params: ParamsCache::default(),
            persistent,
        })
    }

    /// The schedule.
    pub fn schedule(&self) -> Schedule {
        self.schedule
    }
    /// The block edge L.
    pub fn block(&self) -> usize {
        self.block
    }
    /// The strip schedule's steps between progress publications (`None` for the others).
    pub fn phase(&self) -> Option<usize> {
        self.phase
    }
    /// The strip schedule's prefetch stride in columns (`None` for the others).
    pub fn prefetch(&self) -> Option<usize> {
        self.prefetch
    }
    /// The strip schedule's rows per work-item (`None` for the others).
    pub fn rows(&self) -> Option<usize> {
        self.rows
    }
    /// Points of the updated region per axis.
    pub fn region(&self) -> [usize; 3] {
        self.region
    }
    /// Blocks per axis of the region.
    pub fn blocks(&self) -> [usize; 3] {
        self.blocks
    }
    /// Kernel launches one sweep takes.
    pub fn launches(&self) -> usize {
        launches(self.schedule, self.blocks)
    }

    /// Runs one sweep, writing the swept field in place; `args` are the sweep function's
    /// arguments in order, the swept field `state` among them (the generated `sweep` method
    /// builds them and holds the field mutably borrowed).
    pub fn run<T: Scalar>(&self, state: &DeviceGrid<T>, args: &[KernelArg<'_>]) -> Result<SweepEvents> {
        check_shape("swept field", self.buffer, state.shape())?;
        check_arg_shapes(self.buffer, args)?;
        let device = state.device();
        let params = self.params.refresh(device, args)?;
        // Every launch binds the sweep's arguments from the schedule kernel's parameter list,
        // with the values this schedule supplies by name.
        let sources = |named| Sources {
            kernel: self.kernel,
            args,
            params: &params,
            extents: self.shape.dims().map(|d| d as i32),
            named,
            ..Sources::default()
        };
        let kernel = self.program.cached_kernel(&self.kernel_ref, self.kernel)?;
        let l = self.block;
        let [bx, by, _] = self.blocks;
        let n = self.launches();
        let launch = |cl: &[Arg<'_>], global: &[usize], local: &[usize], event: bool| {
            self.program
                .launch_kernel(kernel, self.kernel, global, Some(local), cl, event)
        };
        let mut events: (Option<Event>, Option<Event>) = (None, None);
        let mut record = |ev: Option<Event>| {
            if let Some(e) = ev {
                if events.0.is_none() {
                    events.0 = Some(e.clone());
                }
                events.1 = Some(e);
            }
        };
        match self.schedule {
            Schedule::Serial => {
                let src = sources(&[]);
                record(launch(&bind_vec(self.binds, &src)?, &[1], &[1], true)?)
            }
            Schedule::Wave | Schedule::WaveLocal | Schedule::Blocks | Schedule::BlocksLocal => {
                let diag = [("sw_diag", Arg::i32(0))];
                let src = sources(&diag);
                let mut cl = bind_vec(self.binds, &src)?;
                let at = position(self.binds, "sw_diag");
                for k in 0..n {
                    if let Some(at) = at {
                        cl[at] = Arg::i32(k as i32);
                    }
                    let last = k == 0 || k + 1 == n;
                    if matches!(self.schedule, Schedule::Wave | Schedule::WaveLocal) {
                        // Blocks (i, k - i) with 0 <= i < bx and 0 <= k - i < by.
                        let groups = k.min(bx - 1) + 1 - k.saturating_sub(by - 1);
                        record(launch(&cl, &[groups * l], &[l], last)?);
                    } else {
                        // Block planes i + j + m = k; groups whose m falls outside return at once.
                        let (gi, gj) = (k.min(bx - 1) + 1, k.min(by - 1) + 1);
                        record(launch(&cl, &[gi * l, gj * l], &[l, l], last)?);
                    }
                }
            }
            Schedule::Persistent | Schedule::PersistentLocal | Schedule::PersistentBlocks | Schedule::Strip => {
                let mut p = match &self.persistent {
                    Some(p) => lock(p),
                    None => return Err(Error::InvalidConfig("a persistent plan without its flags".into())),
                };
                p.epoch = if p.epoch == i32::MAX { 1 } else { p.epoch + 1 };
                if p.epoch == 1 {
                    // First sweep, or the epochs wrapped: no flag may hold epoch 1 already.
                    let zeros = vec![0; p.flags.len()];
                    p.flags.write(&zeros)?;
                }
                // A strip's flag holds base + columns finished, base = epoch (mx + 1) mod 2^32:
                // the previous sweep's values lie below every base of this one.
                let base = (p.epoch as u32).wrapping_mul(self.region[0] as u32 + 1) as i32;
                let mut named = vec![
                    ("sw_flags", Arg::buffer(&p.flags)),
                    ("sw_ticket", Arg::buffer(&p.ticket)),
                    ("sw_epoch", Arg::i32(p.epoch)),
                    ("sw_base", Arg::i32(base)),
                ];
                if let Some(order) = &p.order {
                    named.push(("sw_order", Arg::buffer(order)));
                }
                let src = sources(&named);
                let cl = bind_vec(self.binds, &src)?;
                if self.schedule == Schedule::Strip {
                    let wg = l / self.rows.unwrap_or(DEFAULT_ROWS);
                    record(launch(&cl, &[by * wg], &[wg], true)?);
                } else if p.order.is_some() {
                    let cubes = bx * by * self.blocks[2];
                    record(launch(&cl, &[cubes * l, l], &[l, l], true)?);
                } else {
                    record(launch(&cl, &[bx * by * l], &[l], true)?);
                }
            }
        }
        self.events(events, n)
    }

    fn events(&self, events: (Option<Event>, Option<Event>), n: usize) -> Result<SweepEvents> {
        match events {
            (Some(first), Some(last)) => Ok(SweepEvents {
                first,
                last,
                launches: n,
                wall_ns: None,
            }),
            _ => Err(Error::Cl {
                op: "clEnqueueNDRangeKernel",
                message: format!("sweep `{}` returned no event", self.spec.name),
            }),
        }
    }

    /// After a persistent sweep: `Err` if a work-group gave up waiting for an upstream block
    /// (the device did not run the upstream work-group while this one waited: OpenCL does not
    /// promise that work-groups run concurrently). Reads two integers from the device; other
    /// schedules have nothing to check.
    pub fn check(&self) -> Result<()> {
        let Some(p) = &self.persistent else {
            return Ok(());
        };
        let mut p = lock(p);
        let mut t = [0i32; 2];
        p.ticket.read(&mut t)?;
        if t[1] != 0 {
            // Ready for another try: tickets from 0, no stall, no block finished.
            p.ticket.write(&[0, 0])?;
            p.epoch = 0;
            return Err(Error::InvalidConfig(format!(
                "the {} schedule of sweep `{}` stalled: a work-group waited {MAX_SPINS} spins for an \
                 upstream block that never finished (this device does not run its work-groups concurrently); \
                 the field is incomplete; use the `wave` schedule on this device",
                self.schedule, self.spec.name
            )));
        }
        Ok(())
    }
}

/// Kernel launches of one sweep of `schedule` over `blocks` blocks per axis.
pub fn launches(schedule: Schedule, blocks: [usize; 3]) -> usize {
    let [bx, by, bz] = blocks;
    match schedule {
        Schedule::Serial
        | Schedule::Persistent
        | Schedule::PersistentLocal
        | Schedule::PersistentBlocks
        | Schedule::Strip => 1,
        Schedule::Wave | Schedule::WaveLocal => bx + by - 1,
        Schedule::Blocks | Schedule::BlocksLocal => bx + by + bz - 2,
    }
}

/// Points of the updated region per axis: the interior for a fixed boundary (which may be
/// empty), every point for clamp.
pub fn region(shape: Shape, halo: [usize; 3], boundary: Boundary) -> [usize; 3] {
    let d = shape.dims();
    std::array::from_fn(|a| match boundary {
        Boundary::Fixed => d[a].saturating_sub(2 * halo[a]),
        _ => d[a],
    })
}

/// The sequential sweep's order on the host: the points of the updated region, x fastest,
/// each axis in its direction. Every legal schedule computes what this order computes.
pub fn host_order(
    shape: Shape,
    halo: [usize; 3],
    boundary: Boundary,
    forward: [bool; 3],
) -> impl Iterator<Item = [usize; 3]> {
    let m = region(shape, halo, boundary);
    let lo: [usize; 3] = std::array::from_fn(|a| if boundary == Boundary::Fixed { halo[a] } else { 0 });
    let at = move |a: usize, s: usize| {
        if forward[a] {
            lo[a] + s
        } else {
            lo[a] + m[a] - 1 - s
        }
    };
    (0..m[2]).flat_map(move |z| (0..m[1]).flat_map(move |y| (0..m[0]).map(move |x| [at(0, x), at(1, y), at(2, z)])))
}

impl SweepTarget for Device {
    type SweepPlan = SweepPlan;
    fn sweep_plan(&self, spec: SweepSpec, config: &SweepConfig, shape: Shape) -> Result<SweepPlan> {
        SweepPlan::new(self, spec, config, shape)
    }
}

impl SweepLaunch for SweepPlan {
    type On = Device;
    fn run_sweep<T: Scalar>(&self, state: &DeviceGrid<T>, args: &[KernelArg<'_>]) -> Result<SweepEvents> {
        self.run(state, args)
    }
    fn check(&self) -> Result<()> {
        SweepPlan::check(self)
    }
}

/// The `__local` bytes a work-group of `config`'s schedule declares for blocks of `block`.
fn local_bytes(spec: &SweepSpec, config: &SweepConfig, block: usize) -> u64 {
    match config.schedule {
        Schedule::WaveLocal | Schedule::PersistentLocal => {
            let [hx, hy, _] = spec.halo;
            let points = (block + 2 * hx) * (block + 2 * hy);
            (points * spec.local_bytes_per_point) as u64
        }
        Schedule::BlocksLocal => {
            let [hx, hy, hz] = spec.halo;
            let points = (block + 2 * hx) * (block + 2 * hy) * (block + 2 * hz);
            (points * spec.local_bytes_per_point) as u64
        }
        Schedule::Strip if spec.boundary == Boundary::Fixed => {
            // Each row's ring of recent values and the phase's copy of the strip above.
            let [hx, hy, _] = spec.halo;
            let ring = (hx + hy + 1).next_power_of_two();
            let phase = config.phase.unwrap_or(DEFAULT_PHASE);
            ((block * ring + hy * (phase + hx + hy) + 1) * spec.value_bytes) as u64
        }
        _ => 0,
    }
}

/// The build options of `config`'s schedule: its block, the one kernel built, the window's
/// base, the persistent schedules' spin limit and fence, the strip's phase and prefetch.
fn build_options(
    info: &DeviceInfo,
    config: &SweepConfig,
    block: usize,
    base: usize,
    rows: usize,
    what: &dyn Fn() -> String,
) -> Result<String> {
    // Only this schedule's kernel is built: the others' local arrays, sized by the same
    // block edge, could exceed the device's local memory and fail the whole program.
    let only = Schedule::ALL
        .iter()
        .position(|&x| x == config.schedule)
        .unwrap_or_default();
    let mut options = format!("-D SW_L={block} -D SW_ONLY={only}");
    if base > 0 {
        options.push_str(&format!(" -D SW_BASE={base}"));
    }
    if config.schedule.is_persistent() {
        options.push_str(&format!(" -D SW_MAX_SPINS={MAX_SPINS}u"));
        if ptx_fence(info) {
            options.push_str(" -D SW_PTX_FENCE=1");
        }
    }
    if config.schedule == Schedule::Strip {
        let phase = config.phase.unwrap_or(DEFAULT_PHASE);
        if phase == 0 || phase > 1 << 20 {
            return Err(Error::InvalidConfig(format!(
                "{}: phase {phase}; give 1 to {} steps between progress publications",
                what(),
                1 << 20
            )));
        }
        let prefetch = config.prefetch.unwrap_or(DEFAULT_PREFETCH);
        if prefetch > 1 << 20 {
            return Err(Error::InvalidConfig(format!(
                "{}: prefetch stride {prefetch} columns; give 0 (none) to {}",
                what(),
                1 << 20
            )));
        }
        options.push_str(&format!(" -D SW_C={phase} -D SW_PF={prefetch} -D SW_R={rows}"));
    }
    Ok(options)
}

/// The flags, ticket and block order of a one-launch schedule (`None` for the others).
fn persistent(device: &Device, schedule: Schedule, blocks: [usize; 3]) -> Result<Option<Mutex<Persistent>>> {
    Ok(if schedule.is_persistent() {
        let cubes = schedule == Schedule::PersistentBlocks;
        let n = if cubes {
            blocks[0] * blocks[1] * blocks[2]
        } else if schedule == Schedule::Strip {
            blocks[1]
        } else {
            blocks[0] * blocks[1]
        };
        let mut flags = Buffer::new(device, n)?;
        flags.write(&vec![0; n])?;
        let mut ticket = Buffer::new(device, 2)?;
        ticket.write(&[0, 0])?;
        let order = if cubes {
            Some(Buffer::from_slice(device, &plane_order(blocks))?)
        } else {
            None
        };
        Some(Mutex::new(Persistent {
            flags,
            ticket,
            order,
            epoch: 0,
        }))
    } else {
        None
    })
}
