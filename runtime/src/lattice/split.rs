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
use crate::error::{Error, Result};
use crate::host::{Boundary, Shape};
use crate::split::{check_layout, refresh_inputs, slab_args, Devices, Halo, Layout, SplitArg, SplitGrid, SplitPlan};
use crate::stencil::target::Launch;
use crate::stencil::{DeviceGrid, StencilArg, StencilPlan};

use super::plan::{check_periodic_extents, LatticePlan, LatticeSpec, StepEvents};

/// One device or several, as a lattice rule runs on it (the generated `plan` takes either).
pub trait LatticeTarget {
    /// The rule built for this target.
    type Plan: LatticeLaunch;
    /// Builds and sizes the rule `spec` for lattices of `shape`.
    fn lattice_plan(&self, spec: LatticeSpec, shape: Shape) -> Result<Self::Plan>;
}

/// A built lattice rule: the generated `step_plan` calls [`LatticeLaunch::run_step`] with the
/// rule's arguments in order (the state among them), made as for a stencil launch on the same
/// target ([`LatticeLaunch::Like`]: its grids and arguments).
pub trait LatticeLaunch {
    /// The stencil launch on the same target, whose grid and argument types a step takes.
    type Like: Launch;
    /// Step `step` of the run `seed` on `state`, in place.
    fn run_step<T: Scalar>(
        &self,
        state: &<Self::Like as Launch>::Grid<T>,
        args: &[<Self::Like as Launch>::Arg<'_>],
        seed: u64,
        step: u32,
    ) -> Result<StepEvents>;
}

impl LatticeTarget for Device {
    type Plan = LatticePlan;
    fn lattice_plan(&self, spec: LatticeSpec, shape: Shape) -> Result<LatticePlan> {
        LatticePlan::new(self, spec, shape)
    }
}

impl LatticeLaunch for LatticePlan {
    type Like = StencilPlan;
    fn run_step<T: Scalar>(
        &self,
        state: &DeviceGrid<T>,
        args: &[StencilArg<'_>],
        seed: u64,
        step: u32,
    ) -> Result<StepEvents> {
        self.run(state, args, seed, step)
    }
}

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
}

impl SplitLatticePlan {
    /// Builds the rule for each slab of `shape` over `devices`. Refuses what a split cannot
    /// run: bit-packed states and 1-D lattices (their sites are dealt to work-items along the
    /// one axis the split would cut), a boundary the split's periodicity disagrees with, and
    /// halos shallower than the rule's reach.
    pub fn new(devices: &Devices, spec: LatticeSpec, shape: Shape) -> Result<SplitLatticePlan> {
        crate::stencil::check_kernel_shape(&format!("lattice rule `{}`", spec.name), spec.rank, shape)?;
        let layout = devices.layout(shape)?;
        let reach = split_reach(&spec, shape, &layout)?;
        let parts = (0..devices.devices().len())
            .map(|i| slab_plan(&devices.devices()[i], spec, &layout, i))
            .collect::<Result<Vec<_>>>()?;
        Ok(SplitLatticePlan {
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
        check_periodic_extents(spec, shape)?;
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

impl SplitLatticePlan {
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
        let slabs: Vec<Vec<StencilArg<'_>>> = (0..n).map(|i| slab_args(args, i, n)).collect();
        for (plan, a) in self.parts.iter().zip(&slabs) {
            crate::stencil::check_arg_shapes(plan.shape(), a)?;
        }
        let mut first = None;
        let mut last = None;
        for colour in 0..self.spec.colours {
            refresh_inputs(
                self.spec.name,
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
    type Like = SplitPlan;
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
