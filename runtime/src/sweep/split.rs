//! Sweeps on several devices of one host (issue 13): the swept field split into slabs along
//! its slowest axis (`y` in 2-D, `z` in 3-D) over [`Devices`], the generated `plan` and
//! `sweep_plan` taking a [`Device`] or a [`Devices`] as stencils do.
//!
//! A sweep's points form one dependence chain along every axis it sweeps, so slabs cannot run
//! at the same time: each slab's first plane reads the new values of the slab behind it along
//! the split axis. The slabs are therefore swept **one after the other in the sweep's
//! direction**, each on its own device by the same schedule as on one device, over a window of
//! its buffer (its own planes and the `halo` planes it reads on either side, `SW_BASE`). Before a
//! slab runs, the slab behind it hands over its new edge planes; the slab ahead of it still
//! holds old values there, as the sequential sweep reads them. This visits every point after
//! every point behind it and before every point ahead of it, so the bits are those of one
//! device (docs/SWEEPS.md's legality argument). It gives no speed-up for one sweep: what a
//! split buys is a field larger than one device and sweeps inside solvers whose stencils run
//! split (docs/SCALE-OUT.md says why pipelining along the other axes was not built).

use std::sync::Arc;
use std::time::Instant;

use super::{SweepConfig, SweepEvents, SweepLaunch, SweepPlan, SweepSpec, SweepTarget};
use crate::buffer::Scalar;
use crate::device::Device;
use crate::dist::{check_layout, refresh_inputs, slab_args, Devices, Halo, Layout, SplitArg, SplitGrid};
use crate::error::{Error, Result};
use crate::grid::{Boundary, Shape};

impl SweepTarget for Devices {
    type SweepPlan = SplitSweepPlan;
    fn sweep_plan(&self, spec: SweepSpec, config: &SweepConfig, shape: Shape) -> Result<SplitSweepPlan> {
        SplitSweepPlan::new(self, spec, config, shape)
    }
}

impl SweepLaunch for SplitSweepPlan {
    type On = Devices;
    fn run_sweep<T: Scalar>(&self, state: &SplitGrid<T>, args: &[SplitArg<'_>]) -> Result<SweepEvents> {
        self.run(state, args)
    }
    fn check(&self) -> Result<()> {
        SplitSweepPlan::check(self)
    }
}

/// A sweep over the slabs of a split grid, one [`SweepPlan`] per device over its window.
#[derive(Debug)]
pub struct SplitSweepPlan {
    parts: Vec<SweepPlan>,
    layout: Arc<Layout>,
    /// Planes the sweep reads along the split axis on either side of a point.
    halo: usize,
    /// Whether the sweep runs up the split axis (slab 0 first).
    forward: bool,
    name: &'static str,
}

impl SplitSweepPlan {
    /// Sizes and builds `spec` for each slab of `shape` over `devices`. Refuses 1-D sweeps (one
    /// chain along the split axis), boundaries other than `fixed` (a clamped read at a slab's
    /// edge would land on the slab's edge, not the grid's), a periodic split and halos
    /// shallower than the sweep's reach.
    pub fn new(devices: &Devices, spec: SweepSpec, config: &SweepConfig, shape: Shape) -> Result<SplitSweepPlan> {
        let layout = devices.layout(shape)?;
        let halo = split_halo(&spec, shape, &layout)?;
        let parts = (0..devices.devices().len())
            .map(|i| slab_plan(&devices.devices()[i], spec, config, &layout, i, halo))
            .collect::<Result<Vec<_>>>()?;
        Ok(SplitSweepPlan {
            parts,
            layout: Arc::new(layout),
            halo,
            forward: spec.forward[spec.rank - 1],
            name: spec.name,
        })
    }

    /// Each device's plan.
    pub fn parts(&self) -> &[SweepPlan] {
        &self.parts
    }

    /// `Err` if a persistent schedule gave up waiting on any device ([`SweepPlan::check`]).
    pub fn check(&self) -> Result<()> {
        self.parts.iter().try_for_each(SweepPlan::check)
    }

    /// One sweep of `state`, in place: the other grids' halos refreshed where shallower than
    /// the sweep's reach, the state's halos filled with the neighbours' current planes, then
    /// the slabs one after the other in the sweep's direction, each handing its new edge planes
    /// to the next. Waits for the sweep; its [`SweepEvents::elapsed_ns`] is wall-clock time.
    pub fn run<T: Scalar>(&self, state: &SplitGrid<T>, args: &[SplitArg<'_>]) -> Result<SweepEvents> {
        let start = Instant::now();
        let what = format!("the swept field of sweep `{}`", self.name);
        check_layout(&what, state.layout(), &self.layout)?;
        let state_buffers: Vec<_> = state.parts().iter().map(|p| p.buffer()).collect();
        let grids = inputs_besides(args.iter().filter_map(|a| a.halo()), state);
        refresh_inputs(&format!("sweep `{}`", self.name), &self.layout, self.halo, grids)?;
        if state.valid_depth() < self.halo {
            state.exchange()?;
        }
        let n = self.parts.len();
        let order: Vec<usize> = if self.forward {
            (0..n).collect()
        } else {
            (0..n).rev().collect()
        };
        let (l, h) = (&*self.layout, self.halo);
        let mut first = None;
        let mut last = None;
        let mut launches = 0;
        for (k, &i) in order.iter().enumerate() {
            let events = self.parts[i].run(&state.parts()[i], &slab_args(args, i, n))?;
            launches += events.launches;
            first.get_or_insert_with(|| events.first.clone());
            // The next slab in the sweep's direction reads this slab's new edge planes.
            if let Some(&j) = order.get(k + 1) {
                let (from, to) = hand_over(l, i, j, h);
                let mut planes = vec![T::default(); h * l.plane];
                state_buffers[i].read_at(from, &mut planes)?;
                state_buffers[j].write_at(to, &planes)?;
            }
            last = Some(events);
        }
        let last = last.ok_or_else(|| Error::InvalidConfig(format!("sweep `{}` on no devices", self.name)))?;
        last.wait()?;
        // The halos ahead of the sweep on each slab hold old values now: exchange before the
        // next launch reads them.
        state.set_valid(0);
        Ok(SweepEvents {
            first: first.unwrap_or_else(|| last.first.clone()),
            launches,
            ..last
        }
        .with_wall_ns(wall_ns(start)))
    }
}

/// Checks that the sweep `spec` can run split as `layout` (the `shape`'s split) and returns the
/// planes it reads along the split axis: refuses 1-D sweeps (one chain along the split axis),
/// boundaries other than `fixed` (a clamped read at a slab's edge would land on the slab's edge,
/// not the grid's), a periodic split and halos shallower than the sweep's reach.
pub(crate) fn split_halo(spec: &SweepSpec, shape: Shape, layout: &Layout) -> Result<usize> {
    crate::launch::check_kernel_shape(&format!("sweep `{}`", spec.name), spec.rank, shape)?;
    let refuse = |why: String| {
        Err(Error::InvalidConfig(format!(
            "sweep `{}` cannot be split: {why}",
            spec.name
        )))
    };
    if spec.rank < 2 {
        return refuse(
            "a 1-D sweep is one chain of dependent points along the axis a split would cut; run it on one device"
                .into(),
        );
    }
    if spec.boundary != Boundary::Fixed {
        return refuse(format!(
            "its boundary is {:?}; a split sweep needs `fixed` (a clamped read at a slab's edge would land on the \
             slab's edge, not the grid's)",
            spec.boundary
        ));
    }
    if layout.periodic() {
        return refuse("the split axis is periodic, and a sweep cannot wrap; use `periodic(false)`".into());
    }
    let axis = spec.rank - 1;
    let halo = spec.halo[axis];
    if halo > layout.depth() {
        return refuse(format!(
            "it reads {halo} planes along axis {axis} but the split keeps {} halo planes; use `depth({halo})` or more",
            layout.depth()
        ));
    }
    Ok(halo)
}

/// The sweep `spec` built for slab `i` of `layout`: its window (own planes and `halo` halo
/// planes on each shared side) swept in place in the slab's buffer.
pub(crate) fn slab_plan(
    device: &Device,
    spec: SweepSpec,
    config: &SweepConfig,
    layout: &Layout,
    i: usize,
    halo: usize,
) -> Result<SweepPlan> {
    let (first, planes) = window(layout, i, halo);
    let [nx, ny, _] = layout.shape().dims();
    let window = if spec.rank == 2 {
        Shape::d2(nx, planes)
    } else {
        Shape::d3(nx, ny, planes)
    };
    SweepPlan::window(
        device,
        spec,
        config,
        window,
        (layout.part_shape(i), first * layout.plane),
    )
}

/// Where slab `i` hands its new edge planes to slab `j` (the next in the sweep's direction,
/// `j = i ± 1`): `(from in i's buffer, to in j's buffer)`, in elements; `halo` planes each.
pub(crate) fn hand_over(layout: &Layout, i: usize, j: usize, halo: usize) -> (usize, usize) {
    let p = layout.plane;
    let own = |k: usize| layout.owned[k].1 - layout.owned[k].0;
    if j > i {
        ((layout.below(i) + own(i) - halo) * p, (layout.below(j) - halo) * p)
    } else {
        (layout.below(i) * p, (layout.below(j) + own(j)) * p)
    }
}

/// Slab `i`'s window for a sweep reading `halo` planes: its first plane in the slab's buffer
/// and its planes (the own planes and `halo` halo planes on each shared side).
fn window(layout: &Layout, i: usize, halo: usize) -> (usize, usize) {
    let (below, above) = (layout.below(i), layout.above(i));
    let own = layout.owned()[i].1 - layout.owned()[i].0;
    let lo = if below > 0 { halo } else { 0 };
    let hi = if above > 0 { halo } else { 0 };
    (below - lo, lo + own + hi)
}

/// The grid arguments of a sweep other than its `state`, which is an argument too but is
/// exchanged as the swept field, not refreshed as an input.
pub(crate) fn inputs_besides<'a>(
    grids: impl Iterator<Item = (&'a str, &'a dyn Halo)>,
    state: &'a dyn Halo,
) -> impl Iterator<Item = (&'a str, &'a dyn Halo)> {
    grids.filter(move |(_, g)| !std::ptr::addr_eq(*g as *const dyn Halo, state as *const dyn Halo))
}

/// Nanoseconds since `start`.
pub(crate) fn wall_ns(start: Instant) -> u64 {
    u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX)
}
