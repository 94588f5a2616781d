//! A lattice rule across MPI ranks.

use std::sync::Arc;

use crate::buffer::Scalar;
use crate::dist::{refresh_inputs, Halo, Layout, RankArg, RankGrid, Ranks};
use crate::error::{Error, Result};
use crate::grid::Shape;
use crate::launch::KernelArg;

/// A lattice rule on this rank's slab of a lattice split across ranks: each colour updates the
/// slab and its halos, which are exchanged (a collective) only when a colour would read past
/// their current part — the same bits as one device (see [`crate::lattice::SplitLatticePlan`]).
#[derive(Debug)]
pub struct RankLatticePlan {
    plan: crate::lattice::LatticePlan,
    layout: Arc<Layout>,
    reach: usize,
    ranks: Ranks,
    spec: crate::lattice::LatticeSpec,
}

impl RankLatticePlan {
    /// Builds the rule for this rank's slab of `shape`; a collective (every rank fails if one
    /// does). Refuses what [`crate::lattice::SplitLatticePlan::new`] refuses.
    pub fn new(ranks: &Ranks, spec: crate::lattice::LatticeSpec, shape: Shape) -> Result<RankLatticePlan> {
        let made = (|| -> Result<(crate::lattice::LatticePlan, Layout, usize)> {
            let layout = ranks.layout(shape)?;
            let reach = super::split::split_reach(&spec, shape, &layout)?;
            let plan = super::split::slab_plan(ranks.device(), spec, &layout, ranks.rank())?;
            Ok((plan, layout, reach))
        })();
        let (plan, layout, reach) = ranks.agree(made)?;
        Ok(RankLatticePlan {
            plan,
            layout: Arc::new(layout),
            reach,
            ranks: ranks.clone(),
            spec,
        })
    }

    /// Step `step` of the run `seed` on this rank's slab, in place (a collective where halos are
    /// exchanged). Returns this rank's first and last launches' events.
    pub fn run<T: Scalar>(
        &self,
        state: &RankGrid<T>,
        args: &[RankArg<'_>],
        seed: u64,
        step: u32,
    ) -> Result<crate::lattice::StepEvents> {
        let list: Vec<KernelArg<'_>> = args.iter().map(|a| a.arg.clone()).collect();
        self.ranks
            .failed(crate::launch::check_arg_shapes(self.plan.shape(), &list))?;
        let (mut first, mut last) = (None, None);
        let colours = self.spec.colours;
        let overlap = self.ranks.inner.overlap && self.ranks.size() > 1;
        for colour in 0..colours {
            if overlap {
                // As on local devices (`colour_overlapped`), with this rank's slab only; every
                // rank finds the same grids stale, so the exchanges' collectives match.
                let grids: Vec<(&str, &dyn Halo)> = args.iter().filter_map(|a| a.grid).collect();
                let stale = self.ranks.failed(crate::lattice::split::stale_grids(
                    self.spec.name,
                    &self.layout,
                    self.reach,
                    &grids,
                ))?;
                if !stale.is_empty() {
                    let slab = [crate::lattice::split::ColourSlab {
                        slab: self.ranks.rank(),
                        plan: &self.plan,
                        device: self.ranks.device(),
                        args: &list,
                    }];
                    let timed = (self.ranks.rank(), colour == 0 || colour + 1 == colours);
                    let (f, l) = self.ranks.failed(crate::lattice::split::colour_overlapped(
                        &self.layout,
                        &stale,
                        &slab,
                        (seed, step, colour),
                        timed,
                    ))?;
                    if colour == 0 {
                        first = f;
                    }
                    if colour + 1 == colours {
                        last = l;
                    }
                    state.set_valid(Halo::valid_depth(state).saturating_sub(self.reach));
                    continue;
                }
            }
            let grids = args.iter().filter_map(|a| a.grid);
            self.ranks.failed(refresh_inputs(
                &format!("lattice rule `{}`", self.spec.name),
                &self.layout,
                self.reach,
                grids,
            ))?;
            let kernel = self.ranks.failed(self.plan.kernel_ref())?;
            let event = colour == 0 || colour + 1 == colours;
            let ev = self.ranks.failed(self.plan.launch_colour(
                kernel,
                self.ranks.device(),
                &list,
                seed,
                step,
                colour,
                event,
            ))?;
            if colour == 0 {
                first = ev.clone();
            }
            if colour + 1 == colours {
                last = ev;
            }
            state.set_valid(Halo::valid_depth(state).saturating_sub(self.reach));
        }
        match (first, last) {
            (Some(first), Some(last)) => Ok(crate::lattice::StepEvents::new(first, last)),
            _ => Err(Error::InvalidConfig("a colour's launch gave no event".into())),
        }
    }
}

impl super::LatticeTarget for Ranks {
    type Plan = RankLatticePlan;
    fn lattice_plan(&self, spec: crate::lattice::LatticeSpec, shape: Shape) -> Result<RankLatticePlan> {
        RankLatticePlan::new(self, spec, shape)
    }
}

impl super::LatticeLaunch for RankLatticePlan {
    type On = Ranks;
    fn run_step<T: Scalar>(
        &self,
        state: &RankGrid<T>,
        args: &[RankArg<'_>],
        seed: u64,
        step: u32,
    ) -> Result<crate::lattice::StepEvents> {
        self.run(state, args, seed, step)
    }
}
