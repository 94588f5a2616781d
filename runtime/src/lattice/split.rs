//! A lattice rule over several devices (seed 003's "regions with an overlap"): the lattice is
//! split along its slowest axis into slabs with deep halos, as stencils are
//! ([`crate::split`]). Each colour of a step updates every slab's own sites and its halo sites
//! too: a site's update depends only on its neighbours, the step, the seed and its place in
//! the whole lattice (its colour and its random stream are the whole lattice's), so a halo site
//! updated by its neighbour's slab gets the owner's value as long as what it reads is current.
//! Each colour leaves one halo-width less current, and the halos are exchanged only when a
//! colour would read past the current part: with 8 planes and a halo of 1, a 2-colour step
//! exchanges every 4 steps. The result is the single device's, bit for bit.

use std::sync::Arc;

use crate::buffer::Scalar;
use crate::device::Device;
use crate::dist::{check_layout, refresh_inputs, slab_args, Devices, Halo, Layout, SplitArg, SplitGrid};
use crate::error::{Error, Result};
use crate::grid::{Boundary, Shape};
use crate::launch::KernelArg;
use crate::program::Event;

use super::plan::{LatticePlan, StepEvents};
use super::spec::LatticeSpec;
use super::{LatticeLaunch, LatticeTarget};

impl LatticeTarget for Devices {
    type Plan = SplitLatticePlan;
    fn lattice_plan(&self, spec: LatticeSpec, shape: Shape) -> Result<SplitLatticePlan> {
        SplitLatticePlan::new(self, spec, shape)
    }
}

/// A lattice rule on every slab of a split lattice: one [`LatticePlan`] per device.
#[derive(Debug)]
pub struct SplitLatticePlan {
    parts: Vec<LatticePlan>,
    layout: Arc<Layout>,
    /// Planes along the split axis one colour reads beyond a site (the rule's halo there).
    reach: usize,
    spec: LatticeSpec,
    /// A colour that needs an exchange overlaps it with interior rows ([`Devices::overlap`]).
    overlap: bool,
}

impl SplitLatticePlan {
    /// Builds the rule for each slab of `shape` over `devices`. Refuses what a split cannot
    /// run: bit-packed states and 1-D lattices (their sites are dealt to work-items along the
    /// one axis the split would cut), a boundary the split's periodicity disagrees with, and
    /// halos shallower than the rule's reach.
    pub fn new(devices: &Devices, spec: LatticeSpec, shape: Shape) -> Result<SplitLatticePlan> {
        crate::launch::check_kernel_shape(&format!("lattice rule `{}`", spec.name), spec.rank, shape)?;
        let layout = devices.layout(shape)?;
        let reach = split_reach(&spec, shape, &layout)?;
        let parts = (0..devices.devices().len())
            .map(|i| slab_plan(&devices.devices()[i], spec, &layout, i))
            .collect::<Result<Vec<_>>>()?;
        Ok(SplitLatticePlan {
            overlap: devices.overlapping() && parts.len() > 1,
            parts,
            layout: Arc::new(layout),
            reach,
            spec,
        })
    }
}

/// The rule on slab `i` of `layout`, placed in the whole lattice.
pub(crate) fn slab_plan(device: &Device, spec: LatticeSpec, layout: &Layout, i: usize) -> Result<LatticePlan> {
    let mut plan = LatticePlan::sized(device, spec, layout.part_shape(i))?;
    let (origin, dims) = (layout.origin(i), layout.shape().dims());
    plan.place(origin[1], origin[2], dims[1], dims[2]);
    Ok(plan)
}

/// What a split of `shape` as `layout` must allow for rule `spec`; the planes one colour reads
/// along the split axis.
pub(crate) fn split_reach(spec: &LatticeSpec, shape: Shape, layout: &Layout) -> Result<usize> {
    {
        if spec.packed {
            return Err(Error::InvalidConfig(format!(
                "lattice rule `{}` has a bit-packed state, which runs on one device; split an unpacked state \
                 (`Lattice<i32>`, `Lattice<u8>`, ...) over `Devices`",
                spec.name
            )));
        }
        if spec.rank == 1 {
            return Err(Error::InvalidConfig(format!(
                "lattice rule `{}` is 1-D: its sites are dealt to work-items along the axis a split would cut; \
                 run it on one device",
                spec.name
            )));
        }
        spec.check_extents(shape)?;
        let axis = layout.axis();
        let periodic = spec.boundary == Boundary::Periodic;
        if periodic != layout.periodic() {
            return Err(Error::InvalidConfig(format!(
                "lattice rule `{}` has a {:?} boundary but the split axis is {}: use `periodic({periodic})` on the \
                 `Devices` (or `Ranks`)",
                spec.name,
                spec.boundary,
                if layout.periodic() { "periodic" } else { "not periodic" },
            )));
        }
        let reach = spec.halo[axis];
        if reach > layout.depth() {
            return Err(Error::InvalidConfig(format!(
                "lattice rule `{}` reads {reach} planes along axis {axis} but the split keeps {} halo planes; use \
                 `depth({reach})` or more on the `Devices` (or `Ranks`)",
                spec.name,
                layout.depth()
            )));
        }
        Ok(reach)
    }
}

/// The grids among `grids` whose halos a colour reading `reach` planes would read stale
/// (each checked against `layout`).
pub(crate) fn stale_grids<'g>(
    name: &str,
    layout: &Layout,
    reach: usize,
    grids: &[(&str, &'g dyn Halo)],
) -> Result<Vec<&'g dyn Halo>> {
    let mut stale = Vec::new();
    for (g_name, g) in grids {
        check_layout(&format!("grid `{g_name}` of lattice rule `{name}`"), g.layout(), layout)?;
        if g.valid_depth() < reach {
            stale.push(*g);
        }
    }
    Ok(stale)
}

/// One slab's part of an overlapped colour: its index in the layout, its plan, its device and
/// its arguments.
pub(crate) struct ColourSlab<'p, 'a> {
    pub slab: usize,
    pub plan: &'p LatticePlan,
    pub device: &'p Device,
    pub args: &'p [KernelArg<'a>],
}

/// One colour on `slabs` with the exchange of the `stale` grids overlapped (devices and ranks
/// alike; the update is in place, so unlike a stencil's overlap the interior must not touch
/// what the exchange reads or writes):
/// 1. every stale grid starts its exchange (edge reads on the transfer queues);
/// 2. each slab updates the rows that are neither halo rows nor within `depth` of a halo (the
///    rows a neighbour receives are there), in whole work-groups, by a global offset along the
///    split axis: they read no halo row either, as `depth ≥ reach`;
/// 3. the halo writes are enqueued;
/// 4. each slab updates the rest after its writes, one work-group row at a time where a range
///    does not fill whole groups, so that no row is updated twice.
///
/// Every site is updated once from the values a colour after a full exchange reads: the bits
/// of one device. Returns the first and last events of slab `timed.0` when `timed.1`.
pub(crate) fn colour_overlapped(
    layout: &Layout,
    stale: &[&dyn Halo],
    slabs: &[ColourSlab<'_, '_>],
    colour: (u64, u32, usize),
    (timed, event): (usize, bool),
) -> Result<(Option<Event>, Option<Event>)> {
    for g in stale {
        g.exchange_start(g.valid_depth())?;
    }
    let axis = layout.axis();
    let depth = layout.depth();
    let (mut first, mut last) = (None, None);
    let mut phases = Vec::with_capacity(slabs.len());
    for s in slabs {
        let planes = layout.planes(s.slab);
        let (below, above) = (layout.below(s.slab), layout.above(s.slab));
        let lo = if below > 0 { below + depth } else { 0 };
        let hi = if above > 0 {
            planes.saturating_sub(above + depth)
        } else {
            planes
        };
        let (items, total) = s.plan.items_of_rows(axis, colour.2, lo..hi.max(lo));
        let g = s.plan.group_along(axis);
        let inner = items.start..items.start + items.len() / g * g;
        let ev = s.plan.launch_colour_items(
            s.plan.kernel_ref()?,
            s.device,
            s.args,
            colour,
            (axis, inner.clone()),
            &[],
            event && s.slab == timed,
        )?;
        if s.slab == timed {
            first = ev;
        }
        phases.push((inner, total));
    }
    let mut writes: Vec<Vec<Event>> = vec![Vec::new(); layout.owned().len()];
    for g in stale {
        for (i, e) in g.exchange_finish()? {
            writes[i].push(e);
        }
    }
    for (s, (inner, total)) in slabs.iter().zip(phases) {
        for part in [0..inner.start, inner.end..total] {
            let ev = s.plan.launch_colour_items(
                s.plan.kernel_ref()?,
                s.device,
                s.args,
                colour,
                (axis, part),
                &writes[s.slab],
                event && s.slab == timed,
            )?;
            if ev.is_some() {
                if first.is_none() {
                    first = ev.clone();
                }
                last = ev;
            }
        }
    }
    Ok((first.clone(), last.or(first)))
}

impl SplitLatticePlan {
    /// Whether a colour that needs an exchange overlaps it with interior rows
    /// ([`Devices::overlap`], on two or more devices).
    pub fn overlaps(&self) -> bool {
        self.overlap
    }

    /// Each device's plan.
    pub fn parts(&self) -> &[LatticePlan] {
        &self.parts
    }

    /// Step `step` of the run `seed` on every slab, in place: each colour on every slab, the
    /// halos exchanged first where the colour would read past their current part. Returns the
    /// events of the first slab's first and last launches.
    pub fn run<T: Scalar>(
        &self,
        state: &SplitGrid<T>,
        args: &[SplitArg<'_>],
        seed: u64,
        step: u32,
    ) -> Result<StepEvents> {
        check_layout(
            &format!("the state of lattice rule `{}`", self.spec.name),
            state.layout(),
            &self.layout,
        )?;
        let n = self.parts.len();
        let slabs: Vec<Vec<KernelArg<'_>>> = (0..n).map(|i| slab_args(args, i, n)).collect();
        for (plan, a) in self.parts.iter().zip(&slabs) {
            crate::launch::check_arg_shapes(plan.shape(), a)?;
        }
        let mut first = None;
        let mut last = None;
        for colour in 0..self.spec.colours {
            let timed = colour == 0 || colour + 1 == self.spec.colours;
            if self.overlap {
                let grids: Vec<(&str, &dyn Halo)> = args.iter().filter_map(|a| a.halo()).collect();
                let stale = stale_grids(self.spec.name, &self.layout, self.reach, &grids)?;
                if !stale.is_empty() {
                    let devices: Vec<Device> = state.parts().iter().map(|p| p.device().clone()).collect();
                    let parts: Vec<ColourSlab<'_, '_>> = (0..n)
                        .map(|i| ColourSlab {
                            slab: i,
                            plan: &self.parts[i],
                            device: &devices[i],
                            args: &slabs[i],
                        })
                        .collect();
                    let (f, l) = colour_overlapped(&self.layout, &stale, &parts, (seed, step, colour), (0, timed))?;
                    if colour == 0 {
                        first = f;
                    }
                    if colour + 1 == self.spec.colours {
                        last = l;
                    }
                    Halo::set_valid(state, Halo::valid_depth(state).saturating_sub(self.reach));
                    continue;
                }
            }
            refresh_inputs(
                &format!("lattice rule `{}`", self.spec.name),
                &self.layout,
                self.reach,
                args.iter().filter_map(|a| a.halo()),
            )?;
            for (i, (plan, a)) in self.parts.iter().zip(&slabs).enumerate() {
                let kernel = plan.kernel_ref()?;
                let device = &state.parts()[i].device().clone();
                let event = i == 0 && (colour == 0 || colour + 1 == self.spec.colours);
                let ev = plan.launch_colour(kernel, device, a, seed, step, colour, event)?;
                if i == 0 && colour == 0 {
                    first = ev.clone();
                }
                if i == 0 && colour + 1 == self.spec.colours {
                    last = ev;
                }
            }
            Halo::set_valid(state, Halo::valid_depth(state).saturating_sub(self.reach));
        }
        match (first, last) {
            (Some(first), Some(last)) => Ok(StepEvents::new(first, last)),
            _ => Err(Error::InvalidConfig("a colour's launch gave no event".into())),
        }
    }
}

impl LatticeLaunch for SplitLatticePlan {
    type On = Devices;
    fn run_step<T: Scalar>(
        &self,
        state: &SplitGrid<T>,
        args: &[SplitArg<'_>],
        seed: u64,
        step: u32,
    ) -> Result<StepEvents> {
        self.run(state, args, seed, step)
    }
}
