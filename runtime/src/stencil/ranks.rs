//! A stencil across MPI ranks: each rank launches the generated kernel on its slab
//! (`dist::ranks`), exchanging halos with its neighbours only when a launch needs more.

use std::sync::Arc;

use crate::buffer::Scalar;
use crate::dist::{check_layout, refresh_inputs, Halo, Layout, Place, RankArg, RankGrid, Ranks};
use crate::error::{Error, Result};
use crate::grid::Shape;
use crate::launch::KernelArg;
use crate::program::Event;

use super::split::{launch_overlapped, SlabLaunch};
use super::{Launch, LaunchConfig, StencilPlan, StencilSpec, StencilTarget};

/// A stencil launch on this rank's slab.
#[derive(Debug)]
pub struct RankPlan {
    plan: StencilPlan,
    layout: Arc<Layout>,
    reach: usize,
    /// Exchanges overlap interior work ([`Ranks::overlap`]) where the kernel allows it.
    overlap: bool,
    ranks: Ranks,
    name: &'static str,
}

impl RankPlan {
    /// Sizes and builds `spec` for this rank's slab of `shape`; a collective (every rank fails
    /// if one does).
    pub fn new(ranks: &Ranks, spec: StencilSpec, config: &LaunchConfig, shape: Shape) -> Result<RankPlan> {
        // Every rank refuses the same spec alike: no collective needed.
        super::split::refuse_packed(&spec)?;
        let made = (|| -> Result<(StencilPlan, Layout, usize)> {
            crate::launch::check_kernel_shape(&format!("stencil `{}`", spec.name), spec.rank, shape)?;
            let layout = ranks.layout(shape)?;
            let reach = super::split::check_split(&spec, config, &layout)?;
            let mut plan = StencilPlan::new(ranks.device(), spec, config, layout.part_shape(ranks.rank()))?;
            plan.place(layout.origin(ranks.rank()), shape);
            let (lo, hi) = layout.owned()[ranks.rank()];
            plan.reduce_planes(
                layout.axis(),
                layout.below(ranks.rank()),
                layout.below(ranks.rank()) + hi - lo,
            );
            Ok((plan, layout, reach))
        })();
        let (plan, layout, reach) = ranks.agree(made)?;
        let overlap = ranks.inner.overlap && ranks.size() > 1 && plan.plane_step().is_some();
        Ok(RankPlan {
            plan,
            layout: Arc::new(layout),
            reach,
            overlap,
            ranks: ranks.clone(),
            name: spec.name,
        })
    }

    /// Launches on this rank's slab, exchanging an input's halos first where they are
    /// shallower than the launch's reach (a collective then).
    pub fn launch<T: Scalar>(&self, out: &mut RankGrid<T>, args: &[RankArg<'_>]) -> Result<Event> {
        self.launch_outputs(&[<Ranks as Place>::grid_arg("out", out)], args)
    }

    /// Launches a stencil with several outputs (a system of fields) on this rank's slab.
    pub fn launch_outputs(&self, outs: &[RankArg<'_>], args: &[RankArg<'_>]) -> Result<Event> {
        for o in outs {
            if let Some(r) = o.arg.reducer() {
                r.across(Some(std::sync::Arc::new(self.ranks.clone())));
            }
        }
        let checked: Result<Vec<&dyn Halo>> = outs
            .iter()
            .filter(|o| o.arg.reducer().is_none())
            .map(|o| match o.grid {
                Some((name, g)) => {
                    let what = format!("output `{name}` of stencil `{}`", self.name);
                    check_layout(&what, g.layout(), &self.layout).map(|()| g)
                }
                None => Err(Error::InvalidConfig(format!(
                    "an output of stencil `{}` is not a grid",
                    self.name
                ))),
            })
            .collect();
        let out_grids = self.ranks.failed(checked)?;
        let grids: Vec<(&str, &dyn Halo)> = args.iter().filter_map(|a| a.grid).collect();
        let list: Vec<KernelArg<'_>> = args.iter().map(|a| a.arg.clone()).collect();
        let out_list: Vec<KernelArg<'_>> = outs.iter().map(|a| a.arg.clone()).collect();
        let (valid, ev) = if self.overlap && grids.iter().any(|(_, g)| g.valid_depth() < self.reach) {
            let slab = SlabLaunch {
                slab: self.ranks.rank(),
                plan: &self.plan,
                outs: out_list,
                args: list,
            };
            let launched = launch_overlapped(self.name, &self.layout, self.reach, &[slab], &grids, 0);
            self.ranks.failed(launched)?
        } else {
            let valid = self.ranks.failed(refresh_inputs(
                &format!("stencil `{}`", self.name),
                &self.layout,
                self.reach,
                grids.into_iter(),
            ))?;
            (valid, self.ranks.failed(self.plan.launch_outputs(&out_list, &list))?)
        };
        for g in out_grids {
            g.set_valid(valid.saturating_sub(self.reach));
        }
        Ok(ev)
    }
}

impl StencilTarget for Ranks {
    type Plan = RankPlan;
    fn stencil_plan(&self, spec: StencilSpec, config: &LaunchConfig, shape: Shape) -> Result<RankPlan> {
        RankPlan::new(self, spec, config, shape)
    }
}

impl Launch for RankPlan {
    type On = Ranks;
    fn launch_args<T: Scalar>(&self, out: &mut RankGrid<T>, args: &[RankArg<'_>]) -> Result<Event> {
        self.launch(out, args)
    }
    fn enqueue_args<T: Scalar>(&self, out: &mut RankGrid<T>, args: &[RankArg<'_>]) -> Result<()> {
        self.launch(out, args).map(drop)
    }
    fn launch_outputs(&self, outs: &[RankArg<'_>], args: &[RankArg<'_>]) -> Result<Event> {
        RankPlan::launch_outputs(self, outs, args)
    }
    fn enqueue_outputs(&self, outs: &[RankArg<'_>], args: &[RankArg<'_>]) -> Result<()> {
        RankPlan::launch_outputs(self, outs, args).map(drop)
    }
}
