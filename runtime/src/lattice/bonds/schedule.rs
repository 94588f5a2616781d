//! How a run stops, and the schedules on the host: the device's replayed, and the serial reference.

use super::*;
use crate::error::{Error, Result};
use crate::lattice::rng::{self};

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// The crack reached every required face.
    Reached,
    /// The live list emptied: no broken bond can break another.
    Exhausted,
    /// The step limit came first.
    Limit,
}

/// The schedule's knobs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BondSchedule {
    /// Thinning: each live bond proposes in a launch with probability `1 / thinning` (by its
    /// draw 3), independently from launch to launch. 1: every live bond in every launch (the
    /// thesis' schedule, a synchronous update whose crack differs in law from the serial
    /// reference's); larger values approach the serial reference's continuous-time law (each
    /// bond's waiting time geometric, tending to exponential) and refresh the counters more
    /// often, at the cost of `thinning` launches per unit of time (docs/LATTICE.md).
    pub thinning: u32,
    /// Compact the live list after every `purge_every`-th launch (launch numbers divisible by
    /// it), when it holds at least `purge_above` entries. Compaction changes no result, only
    /// how many dead entries the launches visit.
    pub purge_every: u32,
    /// See `purge_every`.
    pub purge_above: usize,
}

impl Default for BondSchedule {
    fn default() -> BondSchedule {
        BondSchedule {
            thinning: 8,
            purge_every: 8,
            purge_above: 1 << 12,
        }
    }
}

/// One launch of the device schedule on the host, entry by entry: what [`BondRun::launch`]
/// computes, bit for bit (the queue as a set). Returns the entries visited.
pub fn replay_launch(
    state: &mut BondState,
    model: &BondModel,
    energy: &impl BondEnergy,
    schedule: BondSchedule,
) -> Result<usize> {
    let thinning = schedule.thinning.max(1);
    let step = stream_step(state.step)?;
    let acc = Acceptance::of(energy, model.dynamics, state.broken, state.marked)?;
    let groups_old = state.groups.clone();
    let g = state.geometry;
    let n = state.queue.len();
    let per = model.table.per_kind() as u32;
    for i in 0..n {
        let e = state.queue[i];
        let draw = |k: u32| rng::draw(state.seed, step, u64::from(e), k);
        if thinning > 1 && mul_hi(draw(3), thinning) != 0 {
            continue;
        }
        let k = mul_hi(draw(0), per) as usize;
        let Some((c, s)) = model.proposal(&g, &state.bonds, &groups_old, e, k) else {
            continue;
        };
        if acc.accepts(s, draw(1)) {
            state.break_bond(model, c)?;
        }
    }
    state.step += 1;
    state.proposals += n as u64;
    if schedule.purges_after(state.step, state.queue.len()) {
        state.purge(model);
    }
    Ok(n)
}

impl BondSchedule {
    /// Whether the live list is compacted after the launch that brought the count to `step`.
    pub(crate) fn purges_after(&self, step: u64, live: usize) -> bool {
        step.is_multiple_of(u64::from(self.purge_every.max(1))) && live >= self.purge_above.max(1)
    }
}

/// Launch `step` as the random stream counts it (32 bits).
pub(super) fn stream_step(step: u64) -> Result<u32> {
    u32::try_from(step).map_err(|_| Error::TooLarge {
        what: format!("launch {step}"),
        detail: "the random stream numbers launches in 32 bits".into(),
    })
}

/// Why a run stops now, if it does: the faces first, then an empty list, then the limit.
pub(super) fn stopped(reached: bool, live: usize, at_limit: bool) -> Option<Stop> {
    if reached {
        Some(Stop::Reached)
    } else if live == 0 {
        Some(Stop::Exhausted)
    } else if at_limit {
        Some(Stop::Limit)
    } else {
        None
    }
}

/// `(a · b) >> 32`: a draw mapped onto `0..b` (`mul_hi` on the device; the bias is below
/// `b / 2^32`).
pub(super) fn mul_hi(a: u32, b: u32) -> u32 {
    ((u64::from(a) * u64::from(b)) >> 32) as u32
}

/// Runs [`replay_launch`] until the crack reaches `required`, the list empties, or `max_steps`
/// launches.
pub fn replay(
    state: &mut BondState,
    model: &BondModel,
    energy: &impl BondEnergy,
    schedule: BondSchedule,
    required: u32,
    max_steps: u64,
) -> Result<Stop> {
    loop {
        if let Some(stop) = stopped(state.reached(required), state.queue.len(), state.step >= max_steps) {
            return Ok(stop);
        }
        replay_launch(state, model, energy, schedule)?;
    }
}

/// The thesis' reference algorithm (3-D steps 3–8): one proposal at a time from a uniformly
/// chosen entry of the live list to a uniformly chosen neighbour, accepted by Metropolis with
/// the current counters. Stops when the crack reaches `required`, the list empties, or after
/// `max_proposals`. `state.step` counts the proposals (the stream's position), so a stopped run
/// continues exactly. Dead entries are compacted away when the list doubles (they would propose
/// only broken bonds: the chain of accepted moves has the same law either way).
pub fn serial_reference(
    state: &mut BondState,
    model: &BondModel,
    energy: &impl BondEnergy,
    required: u32,
    max_proposals: u64,
) -> Result<Stop> {
    let g = state.geometry;
    let per = model.table.per_kind() as u32;
    let mut purged = state.queue.len();
    let mut acc = Acceptance::of(energy, model.dynamics, state.broken, state.marked)?;
    loop {
        if let Some(stop) = stopped(
            state.reached(required),
            state.queue.len(),
            state.proposals >= max_proposals,
        ) {
            return Ok(stop);
        }
        // Counter (proposal, stream 2^32 - 2): distinct from the device schedule's launches.
        let t = state.step;
        state.step += 1;
        state.proposals += 1;
        let seed = state.seed;
        let draw = |k: u32| rng::draw(seed, u32::MAX - 1, t, k);
        let e = state.queue[((u64::from(draw(0)) * state.queue.len() as u64) >> 32) as usize];
        let k = mul_hi(draw(1), per) as usize;
        let Some((c, s)) = model.proposal(&g, &state.bonds, &state.groups, e, k) else {
            continue;
        };
        if acc.accepts(s, draw(2)) {
            state.break_bond(model, c)?;
            acc = Acceptance::of(energy, model.dynamics, state.broken, state.marked)?;
            if state.queue.len() >= 1 << 12 && state.queue.len() >= 2 * purged {
                state.purge(model);
                purged = state.queue.len();
            }
        }
    }
}
