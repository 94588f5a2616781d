//! A lattice rule on one device: its colours' launches, sized and built.

use std::sync::OnceLock;

use crate::buffer::Scalar;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::grid::{check_shape, DeviceGrid, Shape};
use crate::launch::bind::{bind_vec, Sources};
use crate::launch::{check_arg_shapes, KernelArg, ParamsCache, MAX_INDEX};
use crate::program::{check_work_group, Arg, Event, KernelRef, Program};

use super::spec::*;
use super::{LatticeLaunch, LatticeTarget};

/// A lattice rule built for one device and sized for one shape.
#[derive(Debug)]
pub struct LatticePlan {
    program: Program,
    spec: LatticeSpec,
    shape: Shape,
    /// An unpacked rule's place in a split lattice: the first row and plane of this grid in the
    /// whole lattice, and the whole lattice's rows and planes (`0, 0, ny, nz` on one device).
    place: [i32; 4],
    global: [usize; 3],
    local: [usize; 3],
    kernel_ref: OnceLock<KernelRef>,
    params: ParamsCache,
}

/// Work-group of the checkerboard kernel: 64 in 1-D, 32 x 4 in 2-D and 3-D.
fn work_group(rank: usize) -> [usize; 3] {
    if rank == 1 {
        [64, 1, 1]
    } else {
        [32, 4, 1]
    }
}

impl LatticePlan {
    /// Checks `shape` against the rule (a periodic lattice needs even extents: an odd ring
    /// puts two sites of one colour side by side), builds the program (cached) and sizes the
    /// launch.
    pub fn new(device: &Device, spec: LatticeSpec, shape: Shape) -> Result<LatticePlan> {
        Self::check_size(&spec, shape)?;
        spec.check_extents(shape)?;
        Self::sized(device, spec, shape)
    }

    /// Refuses a shape the kernels cannot index (before any other check: a lattice too large is
    /// too large whatever its extents' parity).
    pub(crate) fn check_size(spec: &LatticeSpec, shape: Shape) -> Result<()> {
        let dims = shape.dims();
        // Bit-packed sites are indexed by word (checked below): such a lattice may have more
        // than 2^31 - 1 sites, as long as no grid beside it does (checked in `run`).
        let indexed_by_word =
            spec.packed && shape.rank() == spec.rank && !shape.is_empty() && dims.iter().all(|&d| d <= MAX_INDEX);
        if !indexed_by_word {
            crate::launch::check_kernel_shape(&format!("lattice rule `{}`", spec.name), spec.rank, shape)?;
        }
        // The kernel indexes words with `int`.
        if spec.packed && crate::grid::bits::packed_len(shape).is_none_or(|n| n > MAX_INDEX) {
            return Err(Error::TooLarge {
                what: format!("bit-packed lattice of shape {shape} for rule `{}`", spec.name),
                detail: "more than 2^31 - 1 words; the kernel indexes words with 32-bit integers".into(),
            });
        }
        Ok(())
    }

    /// Builds and sizes the rule for `shape` without the periodic extents' check (a slab of a
    /// split lattice, whose whole shape was checked).
    pub(crate) fn sized(device: &Device, spec: LatticeSpec, shape: Shape) -> Result<LatticePlan> {
        let rank = spec.rank;
        let dims = shape.dims();
        Self::check_size(&spec, shape)?;
        let local = work_group(rank);
        check_work_group(device.info(), &local, || {
            format!("work-group {:?} of lattice rule `{}`", &local[..rank], spec.name)
        })?;
        if spec.colours != 2 && spec.colours != 1 << rank {
            return Err(Error::InvalidConfig(format!(
                "lattice rule `{}` declares {} colours; a {rank}-D rule has 2 or {}",
                spec.name,
                spec.colours,
                1 << rank
            )));
        }
        // One work-item per four sites of one colour along x (W = ceil(ceil(nx / 2) / 4), see
        // `rng::site_key`), or per word of 32 (bit-packed), every row; for the parity classes
        // half of the rows along y and z.
        let w = if spec.packed {
            crate::grid::bits::packed_words_per_row(dims[0])
        } else {
            dims[0].div_ceil(2).div_ceil(4)
        };
        let items = if spec.colours == 2 {
            [w, dims[1], dims[2]]
        } else {
            [0, 1, 2].map(|a| match a {
                0 => w,
                _ if a < rank => dims[a].div_ceil(2),
                _ => dims[a],
            })
        };
        let global = [0, 1, 2].map(|a| items[a].div_ceil(local[a]) * local[a]);
        let program = device.program(spec.origin, spec.source, "")?;
        Ok(LatticePlan {
            program,
            spec,
            shape,
            place: [0, 0, dims[1] as i32, dims[2] as i32],
            global,
            local,
            kernel_ref: OnceLock::new(),
            params: ParamsCache::default(),
        })
    }

    /// The rule's spec.
    pub fn spec(&self) -> &LatticeSpec {
        &self.spec
    }

    /// The shape the rule was sized for.
    pub fn shape(&self) -> Shape {
        self.shape
    }

    /// One step of the rule on the device, in place: colour 0, 1, ... in order, with the random
    /// streams of `(seed, step)`. `args` are the rule's arguments in order, the state included
    /// (bound by the generated `step`). Returns the events of both launches.
    pub fn run<S: LatticeState + ?Sized>(
        &self,
        state: &S,
        args: &[KernelArg<'_>],
        seed: u64,
        step: u32,
    ) -> Result<StepEvents> {
        check_shape("lattice state", self.shape, state.shape())?;
        if state.packed() != self.spec.packed {
            return Err(Error::InvalidConfig(format!(
                "lattice rule `{}` takes {} state, not {}",
                self.spec.name,
                if self.spec.packed {
                    "bit-packed"
                } else {
                    "a grid of its element type as"
                },
                if state.packed() { "bit-packed sites" } else { "a grid" }
            )));
        }
        check_arg_shapes(self.shape, args)?;
        let sites = self.shape.checked_len().unwrap_or(usize::MAX);
        if sites > MAX_INDEX && args.iter().filter(|a| a.is_grid()).count() > 1 {
            return Err(Error::TooLarge {
                what: format!("lattice rule `{}` on shape {}", self.spec.name, self.shape),
                detail: format!(
                    "a bit-packed lattice may have more than {MAX_INDEX} sites, but the grids the rule reads beside \
                     it are indexed with 32-bit `int`s and may not"
                ),
            });
        }
        let kernel = self.kernel_ref()?;
        let mut events = Vec::with_capacity(2);
        let colours = self.spec.colours;
        for colour in 0..colours {
            // Only the first and last launches' events are kept (the step's device time).
            let event = colour == 0 || colour + 1 == colours;
            events.extend(self.launch_colour(kernel, state.device(), args, seed, step, colour, event)?);
        }
        match (events.first(), events.last()) {
            (Some(first), Some(last)) if events.len() == 2 => Ok(StepEvents {
                first: first.clone(),
                last: last.clone(),
            }),
            _ => Err(Error::InvalidConfig("a colour's launch gave no event".into())),
        }
    }

    /// The kernel object, looked up by name on the first launch only.
    pub(crate) fn kernel_ref(&self) -> Result<&KernelRef> {
        self.program.cached_kernel(&self.kernel_ref, self.spec.kernel)
    }

    /// Places an unpacked rule's grid in a split lattice: its first row and plane in the whole
    /// lattice of `rows` rows and `planes` planes (wrapped where periodic).
    pub(crate) fn place(&mut self, row: usize, plane: usize, rows: usize, planes: usize) {
        self.place = [row as i32, plane as i32, rows as i32, planes as i32];
    }

    /// The work-item indices along the split axis (the slowest, `axis`) whose sites of
    /// `colour` lie on rows `rows` of this grid, and how many indices the axis has in all:
    /// one per row for two colours, one per second row (from the class's parity) for parity
    /// classes.
    pub(crate) fn items_of_rows(
        &self,
        axis: usize,
        colour: usize,
        rows: std::ops::Range<usize>,
    ) -> (std::ops::Range<usize>, usize) {
        let n = self.shape.dims()[axis];
        if self.spec.colours == 2 {
            return (rows.start.min(n)..rows.end.min(n), n);
        }
        // Row `2 g + p` with the parity `p` of the class along this axis in the whole lattice.
        let origin = self.place[axis - 1] as isize;
        let p = (((colour >> axis) as isize + origin) & 1) as usize;
        let item = |r: usize| (r.min(n) + 1).saturating_sub(p) / 2;
        (item(rows.start)..item(rows.end), n.div_ceil(2))
    }

    /// The work-group size along `axis`: a range launched in whole groups starts and ends on
    /// a multiple of it.
    pub(crate) fn group_along(&self, axis: usize) -> usize {
        self.local[axis]
    }

    /// Launches one colour of step `step` over the work-item indices `items` along the split
    /// axis `axis` only (OpenCL's global offset), after the events `after`: in whole
    /// work-groups where `items` is a multiple of [`LatticePlan::group_along`] long, else one
    /// index per group along it, so that no work-item updates a row outside the range (the
    /// update is in place: another launch updates those).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn launch_colour_items(
        &self,
        kernel: &KernelRef,
        device: &Device,
        args: &[KernelArg<'_>],
        (seed, step, colour): (u64, u32, usize),
        (axis, items): (usize, std::ops::Range<usize>),
        after: &[Event],
        event: bool,
    ) -> Result<Option<Event>> {
        if items.is_empty() {
            return Ok(None);
        }
        let rank = self.spec.rank;
        let (mut global, mut local) = (self.global, self.local);
        global[axis] = items.len();
        if items.len() % local[axis] != 0 {
            local[axis] = 1;
        }
        let mut offset = [0; 3];
        offset[axis] = items.start;
        self.with_colour_args(device, args, (seed, step, colour), |cl| {
            self.program.launch_kernel_at(
                kernel,
                self.spec.kernel,
                (&global[..rank], Some(&local[..rank])),
                Some(offset),
                cl,
                event,
                after,
            )
        })
    }

    /// `launch` with the kernel arguments of one colour of step `step`.
    fn with_colour_args<T>(
        &self,
        device: &Device,
        args: &[KernelArg<'_>],
        (seed, step, colour): (u64, u32, usize),
        launch: impl FnOnce(&[Arg<'_>]) -> Result<T>,
    ) -> Result<T> {
        let params = self.params.refresh(device, args)?;
        // The place of a slab (its first row and plane, the whole lattice's rows and planes).
        let place = self.place;
        let named = [
            ("clforge_seed_lo", Arg::u32(seed as u32)),
            ("clforge_seed_hi", Arg::u32((seed >> 32) as u32)),
            ("clforge_step", Arg::u32(step)),
            ("clforge_colour", Arg::i32(colour as i32)),
            ("clforge_oy", Arg::i32(place[0])),
            ("clforge_oz", Arg::i32(place[1])),
            ("clforge_gny", Arg::i32(place[2])),
            ("clforge_gnz", Arg::i32(place[3])),
        ];
        let sources = Sources {
            kernel: self.spec.kernel,
            args,
            params: &params,
            extents: self.shape.dims().map(|d| d as i32),
            named: &named,
            ..Sources::default()
        };
        let cl = bind_vec(self.spec.params, &sources)?;
        launch(&cl)
    }

    /// Launches one colour of step `step` (the arguments checked by the caller).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn launch_colour(
        &self,
        kernel: &KernelRef,
        device: &Device,
        args: &[KernelArg<'_>],
        seed: u64,
        step: u32,
        colour: usize,
        event: bool,
    ) -> Result<Option<Event>> {
        let rank = self.spec.rank;
        self.with_colour_args(device, args, (seed, step, colour), |cl| {
            self.program.launch_kernel(
                kernel,
                self.spec.kernel,
                &self.global[..rank],
                Some(&self.local[..rank]),
                cl,
                event,
            )
        })
    }
}

/// The device time of one step: from the start of the first colour's launch to the end of the
/// last one's.
#[derive(Clone, Debug)]
pub struct StepEvents {
    first: Event,
    last: Event,
}

impl StepEvents {
    pub(crate) fn new(first: Event, last: Event) -> StepEvents {
        StepEvents { first, last }
    }
    /// Device nanoseconds from the first launch's start to the second one's end (waits).
    pub fn elapsed_ns(&self) -> Result<u64> {
        self.last.since_start_of(&self.first)
    }
    /// Waits for the step to finish.
    pub fn wait(&self) -> Result<()> {
        self.last.wait()
    }
}

impl LatticeTarget for Device {
    type Plan = LatticePlan;
    fn lattice_plan(&self, spec: LatticeSpec, shape: Shape) -> Result<LatticePlan> {
        LatticePlan::new(self, spec, shape)
    }
}

impl LatticeLaunch for LatticePlan {
    type On = Device;
    fn run_step<T: Scalar>(
        &self,
        state: &DeviceGrid<T>,
        args: &[KernelArg<'_>],
        seed: u64,
        step: u32,
    ) -> Result<StepEvents> {
        self.run(state, args, seed, step)
    }
}
