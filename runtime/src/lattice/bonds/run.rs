//! The device schedule of a bond model: launches over the live bonds' work queue.

use super::queue::WorkQueue;
use super::*;
use crate::error::{Error, Result};
use crate::lattice::{BITS_CL, PHILOX_CL};
use crate::launch::owned::Signatures;
use crate::{Arg, Buffer, Device, Event, Program};

/// The bond kernels' parameter lists, which the launches bind their named arguments to.
static SIGNATURES: std::sync::LazyLock<Signatures> =
    std::sync::LazyLock::new(|| Signatures::parse("the bond lattice's kernels", BONDS_CL));

/// What one device launch did.
#[derive(Debug)]
pub struct LaunchReport {
    /// Entries visited (proposals made).
    pub entries: usize,
    /// Bonds broken by the launch.
    pub broke: u64,
    /// The step kernel's event (profiling: its device time).
    pub event: Event,
}

/// The device schedule: the state in device memory, one launch per [`BondRun::launch`].
#[derive(Debug)]
pub struct BondRun {
    pub(crate) geometry: BondGeometry,
    pub(crate) model: BondModel,
    pub(crate) schedule: BondSchedule,
    pub(crate) seed: u64,
    pub(crate) program: Program,
    pub(crate) bits: Buffer<u32>,
    pub(crate) groups_old: Buffer<u32>,
    pub(crate) groups_new: Buffer<u32>,
    pub(crate) counters: Buffer<u32>,
    pub(crate) table: Buffer<i32>,
    pub(crate) queue: WorkQueue,
    pub(crate) keep: Option<Buffer<u32>>,
    pub(crate) broken: u64,
    pub(crate) marked: u64,
    pub(crate) faces: u32,
    pub(crate) step: u64,
    pub(crate) proposals: u64,
    pub(crate) live: usize,
    /// The step whose launch failed after the device had started changing the state: the
    /// device holds no step's state, so the run refuses to go on or to be saved.
    pub(crate) torn: Option<u64>,
}

impl BondRun {
    /// Uploads `state` to `device` with a live list of `capacity` entries. `None` takes the
    /// number of interior bonds, which the list can never exceed, or as many as fit in 90 % of
    /// the device's memory beside the bits (12 bytes per entry), whichever is smaller; an explicit
    /// capacity that does not fit is [`Error::TooLarge`].
    pub fn new(
        device: &Device,
        model: &BondModel,
        schedule: BondSchedule,
        state: &BondState,
        capacity: Option<usize>,
    ) -> Result<BondRun> {
        let g = state.geometry;
        model.check(g.kinds())?;
        if state.groups.len() != model.group_count(&g) {
            return Err(Error::InvalidConfig(format!(
                "the state has {} group bits but the model's groups on this lattice number {}: a state of another model",
                state.groups.len(),
                model.group_count(&g)
            )));
        }
        if state.broken > g.bonds() || state.marked > state.groups.len() || state.bonds.len() != g.bonds() {
            return Err(Error::InvalidConfig(format!(
                "a state of {} broken bonds and {} marked groups on a lattice of {} bonds and {} groups: \
                 not a state of this lattice",
                state.broken,
                state.marked,
                g.bonds(),
                state.groups.len()
            )));
        }
        if schedule.thinning == 0 {
            return Err(Error::InvalidConfig(
                "a schedule thinned by 0: each live bond proposes with probability 1 / thinning, thinning >= 1".into(),
            ));
        }
        // Bits, two copies of the column bits, the list and its compaction spare, the keep flags
        // (at most one per entry): 12 bytes per entry of capacity.
        let fixed = g.bonds().div_ceil(8) + 2 * model.group_count(&g).div_ceil(8);
        let memory = device.info().global_mem_bytes;
        // ... and the list in one allocation.
        let fits = ((memory / 10 * 9).saturating_sub(fixed) / 12).min(device.info().max_alloc_bytes / 4);
        if state.queue.len() as u64 > fits {
            return Err(Error::TooLarge {
                what: format!("a live list of {} entries", state.queue.len()),
                detail: format!("the device's {memory} bytes hold at most {fits} beside the lattice"),
            });
        }
        let capacity = match capacity {
            Some(c) if c as u64 > fits => {
                return Err(Error::TooLarge {
                    what: format!("a live list of {c} entries"),
                    detail: format!(
                        "with the lattice's {fixed} bytes of bits it needs {} bytes, but the device has {memory}",
                        fixed.saturating_add(12u64.saturating_mul(c as u64))
                    ),
                })
            }
            Some(c) => c,
            None => g.interior_bonds().min(fits) as usize,
        }
        .max(state.queue.len())
        .max(1);
        let [px, py, pz] = g.sites();
        let options = format!(
            "-D PX={px} -D PY={py} -D PZ={pz} -D KINDS={} -D NEIGHBOURS={} -D GROUP_KIND={} -D GROUP_AXIS={}",
            g.kinds(),
            model.table.per_kind(),
            model.groups.map_or(-1, |gr| gr.kind as i64),
            model.groups.map_or(2, |gr| gr.axis)
        );
        let source = format!("{PHILOX_CL}\n{BITS_CL}\n{QUEUE_CL}\n{BONDS_CL}");
        let program = device.program("clforge bond growth", &source, &options)?;
        let upload = |words: &[u32]| Buffer::from_slice(device, words);
        Ok(BondRun {
            geometry: g,
            model: model.clone(),
            schedule,
            seed: state.seed,
            program,
            bits: upload(state.bonds.words())?,
            groups_old: upload(state.groups.words())?,
            groups_new: upload(state.groups.words())?,
            // Cumulative on the device: the kernel adds to the state's counts.
            counters: Buffer::from_slice(device, &[state.broken as u32, state.marked as u32, state.faces, 0])?,
            table: Buffer::from_slice(device, &model.table.rows.concat())?,
            queue: WorkQueue::from_entries(device, "live bonds", capacity, &state.queue)?,
            keep: None,
            broken: state.broken,
            marked: state.marked,
            faces: state.faces,
            step: state.step,
            proposals: state.proposals,
            live: state.queue.len(),
            torn: None,
        })
    }

    /// The model it runs.
    pub fn model(&self) -> &BondModel {
        &self.model
    }

    /// Broken bonds so far.
    pub fn broken(&self) -> u64 {
        self.broken
    }

    /// Marked groups so far.
    pub fn marked(&self) -> u64 {
        self.marked
    }

    /// Faces reached so far.
    pub fn faces(&self) -> u32 {
        self.faces
    }

    /// Launches so far.
    pub fn step(&self) -> u64 {
        self.step
    }

    /// Proposals so far.
    pub fn proposals(&self) -> u64 {
        self.proposals
    }

    /// Entries in the live list (as of the last launch or compaction).
    pub fn live(&self) -> usize {
        self.live
    }

    /// One launch: every entry of the live list proposes once (or, thinned, each with probability 1 / thinning). A
    /// launch that could overflow the list (each entry may queue one bond) first compacts it,
    /// and if the list is still too full returns [`Error::QueueOverflow`] without launching:
    /// nothing is lost, the run can continue on a larger list from [`BondRun::state`].
    pub fn launch(&mut self, energy: &impl BondEnergy) -> Result<LaunchReport> {
        self.whole()?;
        let mut n = self.live;
        let cap = self.queue.capacity();
        // A bond is queued once, when it breaks: a list as long as the interior bonds never
        // overflows. A shorter one might, if every entry appended a bond.
        if (cap as u64) < self.geometry.interior_bonds() && n > cap - n {
            n = self.purge()?;
            if n > cap - n {
                return Err(Error::QueueOverflow {
                    name: "live bonds".into(),
                    capacity: cap,
                    attempted: 2 * n as u64,
                    lost: 0,
                });
            }
        }
        let step = stream_step(self.step)?;
        let acc = Acceptance::of(energy, self.model.dynamics, self.broken, self.marked)?;
        let [count, entries, capacity] = self.queue.named();
        let args = SIGNATURES.bind(
            "clforge_bonds_step",
            &[
                ("bits", Arg::buffer(&self.bits)),
                ("groups_old", Arg::buffer(&self.groups_old)),
                ("groups_new", Arg::buffer(&self.groups_new)),
                ("counters", Arg::buffer(&self.counters)),
                count,
                entries,
                capacity,
                ("table", Arg::buffer(&self.table)),
                ("n", Arg::u32(n as u32)),
                ("seed_lo", Arg::u32(self.seed as u32)),
                ("seed_hi", Arg::u32((self.seed >> 32) as u32)),
                ("step", Arg::u32(step)),
                ("thinning", Arg::u32(self.schedule.thinning)),
                ("threshold0", Arg::u32(acc.threshold[0])),
                ("threshold1", Arg::u32(acc.threshold[1])),
                ("certain", Arg::u32(acc.certain)),
            ],
        )?;
        const WG: usize = 256;
        let event = self
            .program
            .launch("clforge_bonds_step", &[n.max(1).div_ceil(WG) * WG], Some(&[WG]), &args)?;
        // The kernel runs: from here a failure leaves the device between two steps.
        let step = self.step;
        self.after_step(n, event).inspect_err(|_| self.torn = Some(step))
    }

    /// The rest of a launch once its kernel is enqueued: the groups' copy, the counters and the
    /// list's length read back, and a purge when the schedule asks for one.
    fn after_step(&mut self, n: usize, event: Event) -> Result<LaunchReport> {
        self.groups_old.copy_from(&self.groups_new)?;
        // Two reads per launch: the cumulative counters (every count is below 2^32: bonds are
        // numbered in 32 bits) and the list's length (an overflow is an error there).
        let c = self.counters.to_vec()?;
        let before = self.broken;
        self.broken = u64::from(c[0]);
        self.marked = u64::from(c[1]);
        self.faces = c[2];
        self.live = self.queue.len()?;
        self.step += 1;
        self.proposals += n as u64;
        if self.schedule.purges_after(self.step, self.live) {
            self.compact()?;
        }
        Ok(LaunchReport {
            entries: n,
            broke: self.broken - before,
            event,
        })
    }

    /// Compacts the live list to its live entries (in order); returns how many remain.
    pub fn purge(&mut self) -> Result<usize> {
        self.whole()?;
        let step = self.step;
        self.compact().inspect_err(|_| self.torn = Some(step))
    }

    /// Refuses a run whose device state a failed launch left between steps.
    fn whole(&self) -> Result<()> {
        match self.torn {
            None => Ok(()),
            Some(step) => Err(Error::InvalidConfig(format!(
                "the bond run failed part way through step {step}: the device holds no step's state, so it \
                 neither continues nor saves; load the last checkpoint (`BondState::load`) and run on from there"
            ))),
        }
    }

    fn compact(&mut self) -> Result<usize> {
        let n = self.queue.len()?;
        self.live = n;
        if n == 0 {
            return Ok(0);
        }
        if self.keep.as_ref().is_none_or(|k| k.len() < n) {
            let len = (2 * n).min(self.queue.capacity()).max(n);
            self.keep = Some(Buffer::new(self.bits.device(), len)?);
        }
        let Some(keep) = self.keep.as_ref() else {
            return Err(Error::InvalidConfig(
                "the keep flags of the live list are missing".into(),
            ));
        };
        const WG: usize = 256;
        let args = SIGNATURES.bind(
            "clforge_bonds_live",
            &[
                ("bits", Arg::buffer(&self.bits)),
                ("entries", Arg::buffer(self.queue.entries())),
                ("n", Arg::u32(n as u32)),
                ("table", Arg::buffer(&self.table)),
                ("keep", Arg::buffer(keep)),
            ],
        )?;
        self.program
            .launch("clforge_bonds_live", &[n.div_ceil(WG) * WG], Some(&[WG]), &args)?;
        self.live = self.queue.compact(keep)?;
        Ok(self.live)
    }

    /// Launches until the crack reaches `required`, the list empties, or `max_steps` launches
    /// in all; `progress` sees the run after every launch.
    pub fn run(
        &mut self,
        energy: &impl BondEnergy,
        required: u32,
        max_steps: u64,
        mut progress: impl FnMut(&BondRun, &LaunchReport),
    ) -> Result<Stop> {
        loop {
            if let Some(stop) = stopped(self.faces & required == required, self.live, self.step >= max_steps) {
                return Ok(stop);
            }
            let r = self.launch(energy)?;
            progress(self, &r);
        }
    }

    /// The state, read back (a checkpoint: [`BondRun::new`] on it continues exactly).
    pub fn state(&self) -> Result<BondState> {
        self.whole()?;
        let g = self.geometry;
        Ok(BondState {
            geometry: g,
            seed: self.seed,
            bonds: PackedBits::from_words(g.bonds(), self.bits.to_vec()?)?,
            groups: PackedBits::from_words(self.model.group_count(&g), self.groups_old.to_vec()?)?,
            queue: self.queue.to_vec()?,
            broken: self.broken,
            marked: self.marked,
            faces: self.faces,
            step: self.step,
            proposals: self.proposals,
        })
    }
}
