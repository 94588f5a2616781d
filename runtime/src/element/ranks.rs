//! The explicit element step across MPI ranks.

use mpi::datatype::PartitionMut;
use mpi::topology::Communicator;
use mpi::traits::*;

use crate::buffer::{scalar_bytes, scalar_bytes_mut};
use crate::dist::Ranks;
use crate::error::Result;

/// The explicit step across MPI ranks: the model cut as [`SplitStepper`](crate::element::split::SplitStepper)
/// cuts it over local devices (every rank computes the same partition), this rank stepping its
/// part; after every step each rank sends each neighbour one packed message (the `u` and `v` of
/// the nodes that neighbour holds as ghosts) and receives its ghosts the same way. The same bits
/// as `SplitStepper` on the same shares.
pub struct RankStepper<R: crate::element::Real = f32> {
    ranks: Ranks,
    /// Rings of ghost elements: steps between exchanges; steps since the last.
    layers: usize,
    since: usize,
    stepper: crate::element::plan::Stepper<R>,
    /// This part's nodes from `ghost_from` on are ghosts; the first `send` are sent.
    send: usize,
    ghost_from: usize,
    /// For each other rank: this part's send-range indices it needs, in its ghost order.
    sends: Vec<(usize, Vec<usize>)>,
    /// For each owner rank: the positions in this part's ghost list it fills, in order.
    recvs: Vec<(usize, Vec<usize>)>,
    /// Every part's own nodes (global ids), in local order, for gathers.
    owned: Vec<Vec<usize>>,
    /// This part's nodes (global ids).
    nodes: Vec<usize>,
    /// Every part's elements whose stress it reports, as (global element, local element).
    homes: Vec<Vec<(usize, usize)>>,
    owner: Vec<(usize, usize)>,
    dofs: usize,
    strains: usize,
    bound: crate::element::stability::StabilityBound,
    /// Exchanges inside a `step(n)` overlap the next step's interior ([`Ranks::overlap`]).
    overlap: bool,
}

impl<R: crate::element::Real> std::fmt::Debug for RankStepper<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RankStepper")
            .field("rank", &self.ranks.rank())
            .finish_non_exhaustive()
    }
}

impl<R: crate::element::Real> RankStepper<R> {
    /// Cuts `model` over the ranks (their shares) and builds this rank's stepper; a collective.
    pub fn with_precision(
        ranks: &Ranks,
        model: &crate::element::problem::Model,
        config: &crate::element::problem::StepperConfig,
    ) -> Result<RankStepper<R>> {
        let r = ranks.rank();
        let made = (|| {
            let p = crate::element::split::partition(model, ranks.weights(), ranks.inner.depth, config)?;
            let stepper =
                crate::element::plan::Stepper::<R>::with_precision(ranks.device(), &p.parts[r].model, &p.config)?;
            Ok((p, stepper))
        })();
        let (p, stepper) = ranks.agree(made)?;
        let me = &p.parts[r];
        let mut sends = Vec::new();
        for (q, part) in p.parts.iter().enumerate() {
            let idx: Vec<usize> = part.ghosts.iter().filter(|g| g.0 == r).map(|g| g.1).collect();
            if q != r && !idx.is_empty() {
                sends.push((q, idx));
            }
        }
        let mut recvs: Vec<(usize, Vec<usize>)> = Vec::new();
        for (i, &(o, _)) in me.ghosts.iter().enumerate() {
            match recvs.iter_mut().find(|(x, _)| *x == o) {
                Some((_, v)) => v.push(i),
                None => recvs.push((o, vec![i])),
            }
        }
        let mut homes = vec![Vec::new(); p.parts.len()];
        for (e, &(q, i)) in p.elem_home.iter().enumerate() {
            homes[q].push((e, i));
        }
        // Every rank decides alike: the same options, the same kind of sub-models.
        let overlap = ranks.inner.overlap && ranks.size() > 1 && stepper.steps_in_ranges();
        Ok(RankStepper {
            overlap,
            ranks: ranks.clone(),
            layers: ranks.inner.depth.max(1),
            since: 0,
            stepper,
            send: me.send,
            ghost_from: me.ghost_from,
            sends,
            recvs,
            owned: p.parts.iter().map(|q| q.nodes[..q.ghost_from].to_vec()).collect(),
            nodes: me.nodes.clone(),
            homes,
            owner: p.owner,
            dofs: p.dofs,
            strains: p.strains,
            bound: p.bound,
        })
    }

    /// Runs `n` steps, exchanging ghosts after every `depth`-th (a collective). As
    /// [`SplitStepper::step`](crate::element::split::SplitStepper::step), an exchange between two
    /// steps of one call overlaps the next step's interior (the status agreement, the messages
    /// and the ghost writes happen while the device steps the nodes that touch no ghost).
    pub fn step(&mut self, n: usize) -> Result<()> {
        for k in 0..n {
            if k > 0 && self.overlap && self.since >= self.layers {
                self.step_overlapped()?;
            } else {
                if self.since >= self.layers {
                    self.exchange()?;
                }
                let stepped = self.stepper.step(1);
                self.ranks.failed(stepped)?;
                self.since += 1;
            }
        }
        if self.since >= self.layers {
            self.exchange()?;
        }
        Ok(())
    }

    /// Whether exchanges inside a `step(n)` overlap interior work ([`Ranks::overlap`], two or
    /// more ranks, the node gather).
    pub fn overlaps(&self) -> bool {
        self.overlap
    }

    /// One step with the pending exchange overlapped: the sent nodes read, the interior
    /// launched, then the exchange finished and the nodes next to the ghosts launched.
    fn step_overlapped(&mut self) -> Result<()> {
        let d = self.dofs;
        let (send, ghost_from, all) = (self.send * d, self.ghost_from * d, self.nodes.len() * d);
        let (mut u, mut v) = (vec![R::default(); send], vec![R::default(); send]);
        let started = (|| {
            // SAFETY: `u` and `v` outlive the reads, which are waited for below.
            let reads = unsafe { self.stepper.read_state_async(0, &mut u, &mut v) }?;
            let launched = self.stepper.gather_range(send..ghost_from);
            // Waited for whatever the launch did: the reads write into `u` and `v`.
            let read = reads.iter().try_for_each(|e| e.wait());
            launched.and(read)
        })();
        self.exchange_from(started.map(|()| (u, v)))?;
        let rest = (|| {
            self.stepper.gather_range(0..send)?;
            self.stepper.gather_range(ghost_from..all)?;
            self.stepper.end_ranges()
        })();
        self.ranks.failed(rest)?;
        self.since = 1;
        Ok(())
    }

    /// Overwrites every ghost with its owner's `u` and `v`: one packed message per neighbour.
    fn exchange(&mut self) -> Result<()> {
        let local = self.stepper.state_range(0, self.send * self.dofs);
        self.exchange_from(local)
    }

    /// [`RankStepper::exchange`] from this rank's sent range `local` (or its failure to read it).
    fn exchange_from(&mut self, local: Result<(Vec<R>, Vec<R>)>) -> Result<()> {
        let d = self.dofs;
        {
            let (u, v) = self.ranks.agree(local)?;
            let pack = |idx: &[usize]| -> Vec<R> {
                let mut out = Vec::with_capacity(2 * idx.len() * d);
                for &i in idx {
                    out.extend_from_slice(&u[i * d..(i + 1) * d]);
                }
                for &i in idx {
                    out.extend_from_slice(&v[i * d..(i + 1) * d]);
                }
                out
            };
            let outgoing: Vec<(usize, Vec<R>)> = self.sends.iter().map(|(q, idx)| (*q, pack(idx))).collect();
            let mut incoming: Vec<(usize, Vec<R>)> = self
                .recvs
                .iter()
                .map(|(o, pos)| (*o, vec![R::default(); 2 * pos.len() * d]))
                .collect();
            let world = self.ranks.inner.universe.world();
            mpi::request::scope(|scope| {
                let mut reqs = Vec::new();
                for (o, buf) in incoming.iter_mut() {
                    reqs.push(world.process_at_rank(*o as i32).immediate_receive_into_with_tag(
                        scope,
                        scalar_bytes_mut(buf),
                        2,
                    ));
                }
                for (q, buf) in &outgoing {
                    reqs.push(
                        world
                            .process_at_rank(*q as i32)
                            .immediate_send_with_tag(scope, scalar_bytes(buf), 2),
                    );
                }
                for q in reqs {
                    q.wait();
                }
            });
            let ghosts = self.nodes.len() - self.ghost_from;
            let (mut gu, mut gv) = (vec![R::default(); ghosts * d], vec![R::default(); ghosts * d]);
            for ((_, pos), (_, buf)) in self.recvs.iter().zip(&incoming) {
                let half = pos.len() * d;
                for (j, &g) in pos.iter().enumerate() {
                    gu[g * d..(g + 1) * d].copy_from_slice(&buf[j * d..(j + 1) * d]);
                    gv[g * d..(g + 1) * d].copy_from_slice(&buf[half + j * d..half + (j + 1) * d]);
                }
            }
            self.ranks
                .failed(self.stepper.set_state_range(self.ghost_from * d, &gu, &gv))?;
        }
        self.since = 0;
        Ok(())
    }

    /// Sets the whole model's displacements and velocities (every rank passes them).
    pub fn set_state(&mut self, u: &[R], v: &[R]) -> Result<()> {
        let d = self.dofs;
        let n = self.owner.len() * d;
        for (what, x) in [("displacements", u), ("velocities", v)] {
            self.ranks.failed(crate::error::check_len(what, n, x.len()))?;
        }
        let pick = |x: &[R]| -> Vec<R> {
            self.nodes
                .iter()
                .flat_map(|&g| x[g * d..(g + 1) * d].to_vec())
                .collect()
        };
        let (pu, pv) = (pick(u), pick(v));
        self.since = 0;
        self.ranks.failed(self.stepper.set_state(&pu, &pv))
    }

    /// Adds an external force; this rank applies it to every loaded node it holds (own or
    /// ghost, so ghost copies step as their owners until the next exchange).
    pub fn add_load(&mut self, load: &crate::element::load::Load) -> Result<()> {
        self.ranks
            .failed(crate::element::load::check_load(load, self.owner.len() * self.dofs))?;
        match crate::element::split::local_load(load, &self.nodes, self.dofs) {
            Some(l) => self.ranks.failed(self.stepper.add_load(&l)),
            None => Ok(()),
        }
    }

    /// Gathers per-item values of every rank's own items (`per` reals each; `ids[q]` the
    /// global items of rank `q` in its local order) into one array on every rank.
    fn gather(&self, mine: Result<Vec<R>>, ids: &[Vec<usize>], per: usize, len: usize) -> Result<Vec<R>> {
        let mine = self.ranks.agree(mine)?;
        let size = size_of::<R>() as i32;
        let counts: Vec<i32> = ids.iter().map(|q| (q.len() * per) as i32 * size).collect();
        let displs: Vec<i32> = counts
            .iter()
            .scan(0, |acc, &c| {
                let at = *acc;
                *acc += c;
                Some(at)
            })
            .collect();
        let total: usize = ids.iter().map(|q| q.len() * per).sum();
        let mut flat = vec![R::default(); total];
        {
            let mut part = PartitionMut::new(scalar_bytes_mut(&mut flat), counts, displs);
            self.ranks
                .inner
                .universe
                .world()
                .all_gather_varcount_into(scalar_bytes(&mine), &mut part);
        }
        let mut out = vec![R::default(); len * per];
        let mut at = 0;
        for q in ids {
            for &g in q {
                out[g * per..(g + 1) * per].copy_from_slice(&flat[at..at + per]);
                at += per;
            }
        }
        Ok(out)
    }

    fn own_values(&self, all: Result<Vec<R>>) -> Result<Vec<R>> {
        let d = self.dofs;
        let mine = all.map(|x| x[..self.ghost_from * d].to_vec());
        self.gather(mine, &self.owned, d, self.owner.len())
    }

    /// The whole model's displacements on every rank (a collective).
    pub fn displacement(&self) -> Result<Vec<R>> {
        self.own_values(self.stepper.displacement())
    }

    /// The whole model's velocities on every rank (a collective).
    pub fn velocity(&self) -> Result<Vec<R>> {
        self.own_values(self.stepper.velocity())
    }

    /// `σ = G_e·U_e` per element on every rank (a collective).
    pub fn stress(&self) -> Result<Vec<R>> {
        let s = self.strains;
        let me = self.ranks.rank();
        let mine = self.stepper.stress().map(|all| {
            self.homes[me]
                .iter()
                .flat_map(|&(_, i)| all[i * s..(i + 1) * s].to_vec())
                .collect::<Vec<R>>()
        });
        let ids: Vec<Vec<usize>> = self.homes.iter().map(|h| h.iter().map(|&(e, _)| e).collect()).collect();
        let ne = self.homes.iter().map(Vec::len).sum();
        self.gather(mine, &ids, s, ne)
    }

    /// The whole model's stability bound.
    pub fn stability_bound(&self) -> &crate::element::stability::StabilityBound {
        &self.bound
    }
}

impl<R: crate::element::Real> crate::element::plan::Explicit<R> for RankStepper<R> {
    fn step(&mut self, n: usize) -> Result<()> {
        RankStepper::step(self, n)
    }
    fn set_state(&mut self, u: &[R], v: &[R]) -> Result<()> {
        RankStepper::set_state(self, u, v)
    }
    fn add_load(&mut self, load: &crate::element::load::Load) -> Result<()> {
        RankStepper::add_load(self, load)
    }
    fn displacement(&self) -> Result<Vec<R>> {
        RankStepper::displacement(self)
    }
    fn velocity(&self) -> Result<Vec<R>> {
        RankStepper::velocity(self)
    }
    fn stress(&self) -> Result<Vec<R>> {
        RankStepper::stress(self)
    }
    fn stability_bound(&self) -> &crate::element::stability::StabilityBound {
        RankStepper::stability_bound(self)
    }
}
