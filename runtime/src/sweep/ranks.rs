//! A sweep across MPI ranks: the slabs swept in turn, rank after rank.

use std::sync::Arc;

use mpi::topology::Communicator;
use mpi::traits::*;

use crate::buffer::{scalar_bytes, scalar_bytes_mut, Scalar};
use crate::dist::ranks::HEALTHY;
use crate::dist::{check_layout, refresh_inputs, Halo, Layout, RankArg, RankGrid, Ranks};
use crate::error::{Error, Result};
use crate::grid::Shape;
use crate::launch::KernelArg;

/// A sweep on this rank's slab of a grid split across ranks: the ranks sweep their slabs one
/// after the other in the sweep's direction, as [`crate::sweep::split::SplitSweepPlan`] does
/// with devices, each receiving the new edge planes of the rank behind it in one message before
/// it sweeps and sending its own to the rank ahead after. Every message starts with a status,
/// so a rank that fails hands its failure down the chain instead of leaving the next rank
/// waiting; the ranks then agree on the outcome.
#[derive(Debug)]
pub struct RankSweepPlan {
    plan: crate::sweep::SweepPlan,
    layout: Arc<Layout>,
    halo: usize,
    forward: bool,
    ranks: Ranks,
    name: &'static str,
}

impl RankSweepPlan {
    /// Builds the sweep for this rank's window of `shape`; a collective (every rank fails if one
    /// does). Refuses what [`crate::sweep::split::SplitSweepPlan::new`] refuses.
    pub fn new(
        ranks: &Ranks,
        spec: crate::sweep::SweepSpec,
        config: &crate::sweep::SweepConfig,
        shape: Shape,
    ) -> Result<RankSweepPlan> {
        let made = (|| -> Result<(crate::sweep::SweepPlan, Layout, usize)> {
            let layout = ranks.layout(shape)?;
            let halo = crate::sweep::split::split_halo(&spec, shape, &layout)?;
            let plan = crate::sweep::split::slab_plan(ranks.device(), spec, config, &layout, ranks.rank(), halo)?;
            Ok((plan, layout, halo))
        })();
        let (plan, layout, halo) = ranks.agree(made)?;
        Ok(RankSweepPlan {
            plan,
            layout: Arc::new(layout),
            halo,
            forward: spec.forward[spec.rank - 1],
            ranks: ranks.clone(),
            name: spec.name,
        })
    }

    /// `Err` if a persistent schedule gave up waiting on this rank's device.
    pub fn check(&self) -> Result<()> {
        self.plan.check()
    }

    /// One sweep of `state`, in place (a collective): the other grids' halos refreshed where
    /// stale, the state's halos exchanged, then this rank's turn in the chain. Waits for the
    /// whole sweep; its [`crate::SweepEvents::elapsed_ns`] is the wall-clock time on this rank.
    pub fn run<T: Scalar>(&self, state: &RankGrid<T>, args: &[RankArg<'_>]) -> Result<crate::SweepEvents> {
        let start = std::time::Instant::now();
        let what = format!("the swept field of sweep `{}`", self.name);
        self.ranks.failed(check_layout(&what, state.layout(), &self.layout))?;
        let grids = crate::sweep::split::inputs_besides(args.iter().filter_map(|a| a.grid), state);
        self.ranks.failed(refresh_inputs(
            &format!("sweep `{}`", self.name),
            &self.layout,
            self.halo,
            grids,
        ))?;
        if state.valid_depth() < self.halo {
            state.exchange()?;
        } else {
            // The chain below waits on single ranks: first make sure none has left.
            self.ranks.agree(Ok(()))?;
        }
        let (r, k) = (self.ranks.rank(), self.ranks.size());
        let behind = if self.forward {
            r.checked_sub(1)
        } else {
            (r + 1 < k).then_some(r + 1)
        };
        let ahead = if self.forward {
            (r + 1 < k).then_some(r + 1)
        } else {
            r.checked_sub(1)
        };
        let world = self.ranks.inner.universe.world();
        let n = self.halo * self.layout.plane;
        let mut planes = vec![T::default(); n];
        // The rank behind: a status (HEALTHY, or the rank that failed first), then its planes.
        let mut outcome: Result<Option<crate::SweepEvents>> = Ok(None);
        if let Some(b) = behind {
            let mut status = 0i32;
            world.process_at_rank(b as i32).receive_into_with_tag(&mut status, 2);
            if status == HEALTHY {
                world
                    .process_at_rank(b as i32)
                    .receive_into_with_tag(scalar_bytes_mut(&mut planes), 3);
                let (_, to) = crate::sweep::split::hand_over(&self.layout, b, r, self.halo);
                outcome = state.part.buffer().write_at(to, &planes).map(|()| None);
            } else {
                outcome = Err(Error::Ranks {
                    rank: status,
                    size: k as i32,
                    detail: format!("failed in sweep `{}` before this rank's turn", self.name),
                });
            }
        }
        let list: Vec<KernelArg<'_>> = args.iter().map(|a| a.arg.clone()).collect();
        if outcome.is_ok() {
            outcome = (|| {
                let events = self.plan.run(&state.part, &list)?;
                events.wait()?;
                Ok(Some(events))
            })();
        }
        if let Some(a) = ahead {
            if outcome.is_ok() {
                let (from, _) = crate::sweep::split::hand_over(&self.layout, r, a, self.halo);
                if let Err(e) = state.part.buffer().read_at(from, &mut planes) {
                    outcome = Err(e);
                }
            }
            let status = match &outcome {
                Ok(_) => HEALTHY,
                Err(Error::Ranks { rank, .. }) => *rank,
                Err(_) => r as i32,
            };
            world.process_at_rank(a as i32).send_with_tag(&status, 2);
            if status == HEALTHY {
                world.process_at_rank(a as i32).send_with_tag(scalar_bytes(&planes), 3);
            }
        }
        // The halos ahead of the sweep hold old values now.
        state.set_valid(0);
        let events = self.ranks.agree(outcome)?;
        events
            .map(|e| e.with_wall_ns(crate::sweep::split::wall_ns(start)))
            .ok_or_else(|| self.ranks.error(format!("sweep `{}` ran no launch", self.name)))
    }
}

impl super::SweepTarget for Ranks {
    type SweepPlan = RankSweepPlan;
    fn sweep_plan(
        &self,
        spec: crate::sweep::SweepSpec,
        config: &crate::sweep::SweepConfig,
        shape: Shape,
    ) -> Result<RankSweepPlan> {
        RankSweepPlan::new(self, spec, config, shape)
    }
}

impl super::SweepLaunch for RankSweepPlan {
    type On = Ranks;
    fn run_sweep<T: Scalar>(&self, state: &RankGrid<T>, args: &[RankArg<'_>]) -> Result<crate::SweepEvents> {
        self.run(state, args)
    }
    /// This rank's own check; a stall elsewhere shows on that rank (and, through the next
    /// sweep's status agreement, on every rank).
    fn check(&self) -> Result<()> {
        self.plan.check()
    }
}
