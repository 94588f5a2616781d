//! A stencil on several devices of one host: each device runs the generated kernel on its
//! slab (`dist::devices`), exchanging halos only when a launch needs more than they hold.

use std::sync::Arc;

use crate::buffer::Scalar;
use crate::dist::{check_layout, refresh_inputs, slab_args, Devices, Halo, Layout, SplitArg, SplitGrid};
use crate::error::{Error, Result};
use crate::grid::{Boundary, Shape};
use crate::launch::KernelArg;
use crate::program::Event;

use super::{Launch, LaunchConfig, StencilPlan, StencilSpec, StencilTarget};

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
        crate::launch::check_kernel_shape(&format!("stencil `{}`", spec.name), spec.rank, shape)?;
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
            let valid = refresh_inputs(
                &format!("stencil `{}`", self.name),
                &self.layout,
                self.reach,
                grids.into_iter(),
            )?;
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
    pub(crate) outs: Vec<KernelArg<'a>>,
    pub(crate) args: Vec<KernelArg<'a>>,
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

impl StencilTarget for Devices {
    type Plan = SplitPlan;
    fn stencil_plan(&self, spec: StencilSpec, config: &LaunchConfig, shape: Shape) -> Result<SplitPlan> {
        SplitPlan::new(self, spec, config, shape)
    }
}

impl Launch for SplitPlan {
    type On = Devices;
    fn launch_args<T: Scalar>(&self, out: &mut SplitGrid<T>, args: &[SplitArg<'_>]) -> Result<Event> {
        self.launch(out, args)
    }
    fn enqueue_args<T: Scalar>(&self, out: &mut SplitGrid<T>, args: &[SplitArg<'_>]) -> Result<()> {
        self.launch(out, args).map(drop)
    }
    fn launch_outputs(&self, outs: &[SplitArg<'_>], args: &[SplitArg<'_>]) -> Result<Event> {
        SplitPlan::launch_outputs(self, outs, args)
    }
    fn enqueue_outputs(&self, outs: &[SplitArg<'_>], args: &[SplitArg<'_>]) -> Result<()> {
        SplitPlan::launch_outputs(self, outs, args).map(drop)
    }
}
