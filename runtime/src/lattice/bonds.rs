//! Bond growth on a work queue of live bonds: seed 003's brittle intercrystalline fracture, and
//! any model of its shape (bonds bit-packed per site, a neighbourhood of bonds given as data, an
//! energy of global counters, Metropolis acceptance).
//!
//! The state is a bit per bond ([`PackedBits`]), a bit per *group* (seed 003: a column of grains
//! along z, marked when it holds a broken bond of the group kind) and a queue of live bonds (a
//! broken bond that may still break a neighbour). Three schedules run one model:
//!
//! - [`serial_reference`]: the thesis' reference algorithm on the host: one proposal at a time,
//!   from a uniformly chosen entry of the live list, with the current counters;
//! - [`BondRun`]: the device schedule: one launch proposes once from every live bond at once,
//!   with the counters of the launch's start (late synchronisation), atomic bit sets, atomic
//!   appends to a bounded [`WorkQueue`] and stable compaction of dead entries;
//! - [`replay_launch`]: that device schedule on the host, proposal by proposal: the device's
//!   bonds, groups, counters and queue (as a set) equal it exactly, launch by launch.
//!
//! Why the device schedule is deterministic: a proposal's outcome depends only on the state at
//! the launch's start (the thresholds, the group bits, which bonds were broken) and on its draws,
//! keyed by its bond rather than its place in the queue. When two work-items break one bond, the
//! same bond breaks whichever wins the atomic, and only the winner counts and queues it. So the
//! order of the queue, which atomic appends make arbitrary, changes no result; nor does the
//! moment dead entries are compacted away (a dead entry's proposals find only broken bonds).

use std::io::{Read, Write};

use super::queue::WorkQueue;
use super::rng::{self, threshold};
use super::{PackedBits, BITS_CL, PHILOX_CL, QUEUE_CL};
use crate::error::{Error, Result};
use crate::{Arg, Buffer, Device, Event, Program};

/// OpenCL C of the schedule: `clforge_bonds_step` and `clforge_bonds_live`.
pub const BONDS_CL: &str = include_str!("../../../templates/lattice/bonds.cl");

/// One neighbour of a bond: the bond of kind `kind` at the site `(dx, dy, dz)` away.
pub type Neighbour = [i32; 4];

/// The neighbourhood of every bond kind, as data: row `kind` lists the bonds a broken bond of
/// that kind can break next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NeighbourTable {
    kinds: usize,
    per_kind: usize,
    rows: Vec<Neighbour>,
}

/// Seed 003's table (thesis 3.3), in the printed order: the 12 bonds that share an edge with a
/// face of the dual cell; kind 0 is the bond to `x + 1`, 1 to `y + 1`, 2 to `z + 1`.
pub const SEED_003: [[Neighbour; 12]; 3] = [
    [
        [0, 0, 0, 1],
        [0, 0, 0, 2],
        [0, -1, 0, 1],
        [0, 0, -1, 2],
        [0, 0, -1, 0],
        [0, 0, 1, 0],
        [0, -1, 0, 0],
        [0, 1, 0, 0],
        [1, 0, 0, 1],
        [1, 0, 0, 2],
        [1, -1, 0, 1],
        [1, 0, -1, 2],
    ],
    [
        [0, 0, 0, 0],
        [0, 0, 0, 2],
        [-1, 0, 0, 0],
        [0, 0, -1, 2],
        [-1, 0, 0, 1],
        [1, 0, 0, 1],
        [0, 0, -1, 1],
        [0, 0, 1, 1],
        [0, 1, 0, 0],
        [0, 1, 0, 2],
        [-1, 1, 0, 0],
        [0, 1, -1, 2],
    ],
    [
        [0, 0, 0, 0],
        [0, 0, 0, 1],
        [-1, 0, 0, 0],
        [0, -1, 0, 1],
        [-1, 0, 0, 2],
        [1, 0, 0, 2],
        [0, -1, 0, 2],
        [0, 1, 0, 2],
        [0, 0, 1, 0],
        [0, 0, 1, 1],
        [-1, 0, 1, 0],
        [0, -1, 1, 1],
    ],
];

impl NeighbourTable {
    /// A table of `kinds` rows of equally many neighbours each. Every neighbour's kind must be
    /// below `kinds` and its offsets within one site (the schedule queues only bonds one site
    /// inside the faces, so that every neighbour exists).
    pub fn new(kinds: usize, rows: Vec<Neighbour>) -> Result<NeighbourTable> {
        if kinds == 0 || rows.is_empty() || !rows.len().is_multiple_of(kinds) {
            return Err(Error::InvalidConfig(format!(
                "a neighbour table of {} rows for {kinds} bond kinds: every kind needs the same, non-zero number of neighbours",
                rows.len()
            )));
        }
        if kinds > 8 || rows.len() / kinds > 64 {
            return Err(Error::InvalidConfig(format!(
                "a neighbour table of {kinds} kinds and {} neighbours each: at most 8 kinds and 64 neighbours",
                rows.len() / kinds
            )));
        }
        for (i, r) in rows.iter().enumerate() {
            if r[..3].iter().any(|d| d.abs() > 1) || r[3] < 0 || r[3] as usize >= kinds {
                return Err(Error::InvalidConfig(format!(
                    "neighbour {} of bond kind {}: {r:?} must have offsets in -1..=1 and a kind below {kinds}",
                    i % (rows.len() / kinds),
                    i / (rows.len() / kinds)
                )));
            }
            if r == &[0, 0, 0, (i / (rows.len() / kinds)) as i32] {
                return Err(Error::InvalidConfig(format!(
                    "neighbour {} of bond kind {} is the bond itself",
                    i % (rows.len() / kinds),
                    i / (rows.len() / kinds)
                )));
            }
        }
        Ok(NeighbourTable {
            kinds,
            per_kind: rows.len() / kinds,
            rows,
        })
    }

    /// Seed 003's table ([`SEED_003`]).
    pub fn seed_003() -> NeighbourTable {
        NeighbourTable {
            kinds: 3,
            per_kind: 12,
            rows: SEED_003.iter().flatten().copied().collect(),
        }
    }

    /// The table built from geometry: bond `l` of site `p` is the face of the dual cell between
    /// grain `p` and grain `p + e_l`, i.e. the unit square at `p + e_l / 2` normal to axis `l`;
    /// its neighbours are the other faces that share one of its four edges (three per edge).
    /// Rows are sorted; [`SEED_003`] is the same sets in the thesis' order.
    pub fn cube_faces() -> NeighbourTable {
        // A face in doubled coordinates: its centre 2p + e_l; an edge in doubled coordinates:
        // its midpoint. Two faces share an edge when both have it among their four edges.
        let edges = |p: [i32; 3], l: usize| -> Vec<[i32; 3]> {
            let mut c = [2 * p[0], 2 * p[1], 2 * p[2]];
            c[l] += 1;
            let mut out = Vec::new();
            for a in (0..3).filter(|a| *a != l) {
                for s in [-1, 1] {
                    let mut m = c;
                    m[a] += s;
                    out.push(m);
                }
            }
            out
        };
        let mut rows = Vec::new();
        for l in 0..3 {
            let mine = edges([0, 0, 0], l);
            let mut row = Vec::new();
            for dz in -1..=1 {
                for dy in -1..=1 {
                    for dx in -1..=1 {
                        for k in 0..3 {
                            if [dx, dy, dz] == [0, 0, 0] && k == l {
                                continue;
                            }
                            if edges([dx, dy, dz], k).iter().any(|e| mine.contains(e)) {
                                row.push([dx, dy, dz, k as i32]);
                            }
                        }
                    }
                }
            }
            row.sort();
            rows.extend(row);
        }
        NeighbourTable {
            kinds: 3,
            per_kind: rows.len() / 3,
            rows,
        }
    }

    /// Number of bond kinds.
    pub fn kinds(&self) -> usize {
        self.kinds
    }

    /// Neighbours of each kind.
    pub fn per_kind(&self) -> usize {
        self.per_kind
    }

    /// The neighbours of bond kind `kind`.
    pub fn row(&self, kind: usize) -> &[Neighbour] {
        &self.rows[kind * self.per_kind..(kind + 1) * self.per_kind]
    }
}

/// Where the bonds are: sites `(x, y, z)` in `[0, n]` per axis for a sample of `n` grains, each
/// with [`NeighbourTable::kinds`] bonds; bond number `(x + px (y + py z)) kinds + kind` with
/// `px = nx + 1`, `py = ny + 1` (seed 003's eq. (8)). Only bonds at least one site inside every
/// face are queued (their neighbours all exist); a broken bond on a face marks that face.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BondGeometry {
    sample: [usize; 3],
    kinds: usize,
}

impl BondGeometry {
    /// The bonds of a sample of `nx × ny × nz` grains (each at least 2) with `kinds` bonds per
    /// site; their numbers must fit 32 bits.
    pub fn new(sample: [usize; 3], kinds: usize) -> Result<BondGeometry> {
        if sample.iter().any(|n| *n < 2) || kinds == 0 {
            return Err(Error::InvalidConfig(format!(
                "a bond lattice of {sample:?} grains and {kinds} bonds per site: every extent must be at least 2, and a site holds a bond"
            )));
        }
        let bonds = sample
            .iter()
            .try_fold(kinds as u128, |a, n| a.checked_mul(*n as u128 + 1))
            .unwrap_or(u128::MAX);
        if bonds > u128::from(u32::MAX) {
            return Err(Error::TooLarge {
                what: format!("a bond lattice of {} x {} x {} grains", sample[0], sample[1], sample[2]),
                detail: format!(
                    "{bonds} bonds, but bonds are numbered in 32 bits (at most {}: 1000 x 1000 x 500 grains hold 1.5e9)",
                    u32::MAX
                ),
            });
        }
        Ok(BondGeometry { sample, kinds })
    }

    /// Grains per axis.
    pub fn sample(&self) -> [usize; 3] {
        self.sample
    }

    /// Bond sites per axis (grains + 1).
    pub fn sites(&self) -> [usize; 3] {
        self.sample.map(|n| n + 1)
    }

    /// Bonds per site.
    pub fn kinds(&self) -> usize {
        self.kinds
    }

    /// Number of bonds.
    pub fn bonds(&self) -> u64 {
        self.sites().iter().map(|s| *s as u64).product::<u64>() * self.kinds as u64
    }

    /// Number of queueable (interior) bonds: the most the live list can ever hold, since a bond
    /// is queued once, when it breaks.
    pub fn interior_bonds(&self) -> u64 {
        self.sample.iter().map(|n| (*n as u64) - 1).product::<u64>() * self.kinds as u64
    }

    /// The number of the bond of `kind` at site `p` (which must be in range).
    pub fn bond(&self, p: [usize; 3], kind: usize) -> u32 {
        let [px, py, _] = self.sites();
        ((p[0] + px * (p[1] + py * p[2])) * self.kinds + kind) as u32
    }

    /// The site and kind of bond `b`.
    pub fn site(&self, b: u32) -> ([usize; 3], usize) {
        let [px, py, _] = self.sites();
        let (site, kind) = (b as usize / self.kinds, b as usize % self.kinds);
        ([site % px, (site / px) % py, site / (px * py)], kind)
    }

    /// The faces a bond at `p` lies on: bit 0 `x = 0`, 1 `y = 0`, 2 `x = max`, 3 `y = max`,
    /// 4 `z = 0`, 5 `z = max`.
    pub fn faces(&self, p: [usize; 3]) -> u32 {
        let [px, py, pz] = self.sites();
        u32::from(p[0] == 0)
            | u32::from(p[1] == 0) << 1
            | u32::from(p[0] == px - 1) << 2
            | u32::from(p[1] == py - 1) << 3
            | u32::from(p[2] == 0) << 4
            | u32::from(p[2] == pz - 1) << 5
    }

    /// Whether a bond at `p` is queued when it breaks (one site inside every face).
    pub fn interior(&self, p: [usize; 3]) -> bool {
        let s = self.sites();
        (0..3).all(|a| p[a] >= 1 && p[a] < s[a] - 1)
    }

    /// Neighbour `n` of the site `p`, if inside the lattice.
    fn step(&self, p: [usize; 3], n: &Neighbour) -> Option<[usize; 3]> {
        let s = self.sites();
        let mut q = [0usize; 3];
        for a in 0..3 {
            let v = p[a] as i64 + i64::from(n[a]);
            if v < 0 || v >= s[a] as i64 {
                return None;
            }
            q[a] = v as usize;
        }
        Some(q)
    }
}

/// The faces a crack must reach to stop: the four vertical faces (seed 003's criterion).
pub const VERTICAL_FACES: u32 = 0b1111;

/// The energy of a configuration as a function of the global counters: `broken` bonds and
/// `groups` marked groups. Ordinary Rust on the host; the schedules turn energy differences into
/// integer acceptance thresholds, so the host and the device accept the same draws.
pub trait BondEnergy {
    /// The energy (in units of k_B T) of a state with these counters.
    fn energy(&self, broken: u64, groups: u64) -> f64;
    /// The probability of accepting a move that changes the energy by `du`, where the rule
    /// gives its own acceptance (a `#[clforge::lattice]` bond model's `accept`); `None`, the
    /// default, leaves it to the model's [`Dynamics`]. A probability of 1 or more always
    /// accepts; one that is NaN or negative is an error.
    fn acceptance(&self, du: f64) -> Option<f64> {
        let _ = du;
        None
    }
}

impl<F: Fn(u64, u64) -> f64> BondEnergy for F {
    fn energy(&self, broken: u64, groups: u64) -> f64 {
        self(broken, groups)
    }
}

/// Seed 003's energy: `K1 nb − K2 nhb^{3/2}` (eq. (6), (7); the thesis' `powf(nb + s, 1.5)` is
/// a typo for `nhb + s`), in `f64` (the thesis' `f32` loses single bonds above 2^24 bonds).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fracture {
    /// Surface energy per broken bond.
    pub k1: f64,
    /// Elastic energy scale of the columns.
    pub k2: f64,
}

impl BondEnergy for Fracture {
    fn energy(&self, broken: u64, groups: u64) -> f64 {
        self.k1 * broken as f64 - self.k2 * (groups as f64).powf(1.5)
    }
}

/// How a proposal from a state with given counters is accepted: Metropolis, `min(1, e^{−Δu})`,
/// for the two classes of move (0: the bond marks no new group; 1: it marks one), as integer
/// thresholds on draw 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Acceptance {
    /// `draw < threshold[s]` accepts (unless certain).
    pub threshold: [u32; 2],
    /// Bit `s`: class `s` is always accepted (`Δu ≤ 0`).
    pub certain: u32,
}

impl Acceptance {
    /// The acceptance of moves from a state with `broken` bonds and `groups` marked groups.
    /// A NaN energy difference is an error naming the counters.
    pub fn of(energy: &impl BondEnergy, dynamics: Dynamics, broken: u64, groups: u64) -> Result<Acceptance> {
        let now = energy.energy(broken, groups);
        let mut a = Acceptance {
            threshold: [0; 2],
            certain: 0,
        };
        for s in 0..2u64 {
            let du = energy.energy(broken + 1, groups + s) - now;
            if du.is_nan() {
                return Err(Error::InvalidConfig(format!(
                    "the energy difference of breaking a bond (marking {s} group) from {broken} broken bonds and \
                     {groups} groups is NaN: the energy must be finite"
                )));
            }
            if let Some(p) = energy.acceptance(du) {
                if p.is_nan() || p < 0.0 {
                    return Err(Error::InvalidConfig(format!(
                        "the rule's acceptance of an energy difference {du} (breaking a bond that marks {s} group, \
                         from {broken} broken bonds and {groups} groups) is {p}: it must be a probability, 0 or more"
                    )));
                }
                if p >= 1.0 {
                    a.certain |= 1 << s;
                } else {
                    a.threshold[s as usize] = threshold(p);
                }
                continue;
            }
            match dynamics {
                Dynamics::Metropolis if du <= 0.0 => a.certain |= 1 << s,
                Dynamics::Metropolis => a.threshold[s as usize] = threshold((-du).exp()),
                Dynamics::Glauber if du == f64::NEG_INFINITY => a.certain |= 1 << s,
                // 1 / (1 + e^du), written to stay finite for large |du|.
                Dynamics::Glauber if du > 0.0 => a.threshold[s as usize] = threshold((-du).exp() / (1.0 + (-du).exp())),
                Dynamics::Glauber => a.threshold[s as usize] = threshold(1.0 / (1.0 + du.exp())),
            }
        }
        Ok(a)
    }

    /// Whether a move of class `s` with draw `u` is accepted.
    pub fn accepts(&self, s: usize, u: u32) -> bool {
        (self.certain >> s) & 1 == 1 || u < self.threshold[s]
    }
}

/// How an energy difference `Δu` (units of k_B T) becomes an acceptance probability.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Dynamics {
    /// `min(1, e^{−Δu})` (seed 003: a move that does not raise the energy is always accepted).
    #[default]
    Metropolis,
    /// Heat bath: `1 / (1 + e^{Δu})`.
    Glauber,
}

/// Groups of sites counted by the energy's second counter: the lines of sites along `axis`
/// (seed 003: the columns along z), a line marked when a bond of `kind` on it breaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Groups {
    /// The bond kind that marks its line.
    pub kind: usize,
    /// The lines' direction: 0 (x), 1 (y) or 2 (z).
    pub axis: usize,
}

/// The model: the neighbour table, the groups (if the energy counts any) and the dynamics.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BondModel {
    /// The neighbourhood of each bond kind.
    pub table: NeighbourTable,
    /// The groups the second counter counts (`None`: it stays 0).
    pub groups: Option<Groups>,
    /// Metropolis or heat bath.
    pub dynamics: Dynamics,
}

impl BondModel {
    /// Seed 003's fracture model: its 12-neighbour table, columns along z marked by the
    /// horizontal bond (kind 2), Metropolis.
    pub fn fracture() -> BondModel {
        BondModel {
            table: NeighbourTable::seed_003(),
            groups: Some(Groups { kind: 2, axis: 2 }),
            dynamics: Dynamics::Metropolis,
        }
    }

    /// Checks the model against a lattice of `kinds` bonds per site.
    fn check(&self, kinds: usize) -> Result<()> {
        if self.table.kinds() != kinds {
            return Err(Error::InvalidConfig(format!(
                "a neighbour table of {} bond kinds on a lattice of {kinds} kinds per site",
                self.table.kinds()
            )));
        }
        if let Some(g) = self.groups {
            if g.kind >= kinds || g.axis > 2 {
                return Err(Error::InvalidConfig(format!(
                    "groups marked by bond kind {} along axis {}: the kind must be below {kinds} and the axis 0, 1 or 2",
                    g.kind, g.axis
                )));
            }
        }
        Ok(())
    }

    /// The number of group bits on lattice `g` (1, never set, without groups).
    pub fn group_count(&self, g: &BondGeometry) -> u64 {
        let s = g.sites();
        self.groups
            .map_or(1, |gr| (0..3).filter(|a| *a != gr.axis).map(|a| s[a] as u64).product())
    }

    /// Neighbour `k` of bond `e` on `g` (a row of the table): its site, kind and number, if it
    /// lies inside the lattice.
    fn neighbour(&self, g: &BondGeometry, e: u32, k: usize) -> Option<([usize; 3], usize, u32)> {
        let (p, kind) = g.site(e);
        let n = &self.table.row(kind)[k];
        let q = g.step(p, n)?;
        Some((q, n[3] as usize, g.bond(q, n[3] as usize)))
    }

    /// Whether bond `e` is live in `bonds`: one of its neighbours is intact.
    fn is_live(&self, g: &BondGeometry, bonds: &PackedBits, e: u32) -> bool {
        (0..self.table.per_kind()).any(|k| {
            self.neighbour(g, e, k)
                .is_some_and(|(_, _, c)| bonds.get(u64::from(c)) == Some(false))
        })
    }

    /// The move from bond `e` to its neighbour `k`: the intact bond it would break and its class
    /// (1 when it marks a group that `groups` has not marked), or `None` when that neighbour is
    /// outside the lattice or already broken.
    fn proposal(
        &self,
        g: &BondGeometry,
        bonds: &PackedBits,
        groups: &PackedBits,
        e: u32,
        k: usize,
    ) -> Option<(u32, usize)> {
        let (q, kind, c) = self.neighbour(g, e, k)?;
        if bonds.get(u64::from(c)) != Some(false) {
            return None;
        }
        let s = self
            .group_of(g, q, kind)
            .is_some_and(|gi| groups.get(gi) == Some(false));
        Some((c, usize::from(s)))
    }

    /// The group a bond of `kind` at site `p` marks, if any.
    pub fn group_of(&self, g: &BondGeometry, p: [usize; 3], kind: usize) -> Option<u64> {
        let gr = self.groups.filter(|gr| gr.kind == kind)?;
        let s = g.sites();
        Some(match gr.axis {
            0 => p[1] + s[1] * p[2],
            1 => p[0] + s[0] * p[2],
            _ => p[0] + s[0] * p[1],
        } as u64)
    }
}

/// The whole state of a run: what a checkpoint holds. Equal states continue identically.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BondState {
    /// The lattice.
    pub geometry: BondGeometry,
    /// The random stream.
    pub seed: u64,
    /// One bit per bond: broken.
    pub bonds: PackedBits,
    /// One bit per group: marked.
    pub groups: PackedBits,
    /// The live list (its order is immaterial).
    pub queue: Vec<u32>,
    /// Broken bonds.
    pub broken: u64,
    /// Marked groups.
    pub marked: u64,
    /// Faces reached ([`BondGeometry::faces`] bits).
    pub faces: u32,
    /// Launches (device schedule) or proposals (serial reference) so far: the stream's position.
    pub step: u64,
    /// Queue entries visited so far: proposals made by the serial reference; by the device
    /// schedule, visits (each proposes with probability 1 / thinning).
    pub proposals: u64,
}

impl BondState {
    /// All bonds intact but one, the nucleus: the bond of the group kind (else kind 0) at the
    /// centre of the sample (seed 003: one broken horizontal bond in the centre), queued.
    pub fn nucleus(geometry: BondGeometry, model: &BondModel, seed: u64) -> Result<BondState> {
        let centre = geometry.sample().map(|n| n / 2);
        let kind = model.groups.map_or(0, |g| g.kind);
        BondState::with_broken(geometry, model, seed, &[geometry.bond(centre, kind)])
    }

    /// All bonds intact but `broken` (bond numbers), which are counted, marked and queued as
    /// if broken in that order.
    pub fn with_broken(geometry: BondGeometry, model: &BondModel, seed: u64, broken: &[u32]) -> Result<BondState> {
        model.check(geometry.kinds())?;
        if let Some(b) = broken.iter().find(|b| u64::from(**b) >= geometry.bonds()) {
            return Err(Error::InvalidConfig(format!(
                "bond {b} is outside the lattice of {} bonds",
                geometry.bonds()
            )));
        }
        let mut s = BondState {
            geometry,
            seed,
            bonds: PackedBits::new(geometry.bonds())?,
            groups: PackedBits::new(model.group_count(&geometry))?,
            queue: Vec::new(),
            broken: 0,
            marked: 0,
            faces: 0,
            step: 0,
            proposals: 0,
        };
        for b in broken {
            s.break_bond(model, *b)?;
        }
        Ok(s)
    }

    /// Breaks bond `b` if intact: counts it, marks its group, its faces, and queues it when
    /// interior. Returns whether it was intact.
    fn break_bond(&mut self, model: &BondModel, b: u32) -> Result<bool> {
        if self.bonds.set(u64::from(b), true)? {
            return Ok(false);
        }
        let (p, kind) = self.geometry.site(b);
        self.broken += 1;
        if let Some(g) = model.group_of(&self.geometry, p, kind) {
            if !self.groups.set(g, true)? {
                self.marked += 1;
            }
        }
        self.faces |= self.geometry.faces(p);
        if self.geometry.interior(p) {
            self.queue.push(b);
        }
        Ok(true)
    }

    /// Whether every face of `required` has been reached.
    pub fn reached(&self, required: u32) -> bool {
        self.faces & required == required
    }

    /// Removes the dead entries of the live list (every neighbour broken), keeping the order.
    pub fn purge(&mut self, model: &BondModel) {
        let (g, bonds) = (self.geometry, &self.bonds);
        self.queue.retain(|&e| model.is_live(&g, bonds, e));
    }

    /// The live list as a sorted vector, for comparing states whose queues differ in order.
    pub fn sorted_queue(&self) -> Vec<u32> {
        let mut q = self.queue.clone();
        q.sort_unstable();
        q
    }

    /// Writes the state (binary, little-endian, with a checksum) to `w`.
    pub fn save(&self, mut w: impl Write) -> Result<()> {
        let mut out = Vec::with_capacity(8 * 16 + 4 * (self.bonds.words().len() + self.queue.len()));
        out.extend_from_slice(MAGIC);
        let g = self.geometry;
        for v in [
            g.sample[0] as u64,
            g.sample[1] as u64,
            g.sample[2] as u64,
            g.kinds as u64,
            self.seed,
            self.broken,
            self.marked,
            u64::from(self.faces),
            self.step,
            self.proposals,
            self.queue.len() as u64,
            self.groups.len(),
        ] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        for w in self.bonds.words().iter().chain(self.groups.words()).chain(&self.queue) {
            out.extend_from_slice(&w.to_le_bytes());
        }
        let sum = fnv1a(&out);
        out.extend_from_slice(&sum.to_le_bytes());
        w.write_all(&out).map_err(|source| Error::Io {
            what: "writing a bond-lattice checkpoint".into(),
            source,
        })
    }

    /// Reads a state written by [`BondState::save`]; a damaged or foreign file is an
    /// [`Error::Checkpoint`].
    pub fn load(mut r: impl Read) -> Result<BondState> {
        let mut data = Vec::new();
        r.read_to_end(&mut data).map_err(|source| Error::Io {
            what: "reading a bond-lattice checkpoint".into(),
            source,
        })?;
        let bad = |why: &str| Error::Checkpoint(why.to_string());
        if data.len() < MAGIC.len() + 12 * 8 + 8 || &data[..MAGIC.len()] != MAGIC {
            return Err(bad("not a clforge bond-lattice checkpoint (wrong header or too short)"));
        }
        let (body, sum) = data.split_at(data.len() - 8);
        if fnv1a(body).to_le_bytes() != sum {
            return Err(bad("the checksum does not match: the file is damaged or truncated"));
        }
        let mut at = MAGIC.len();
        let u64_at = |at: &mut usize| {
            let v = u64::from_le_bytes(body[*at..*at + 8].try_into().unwrap_or([0; 8]));
            *at += 8;
            v
        };
        let h: Vec<u64> = (0..12).map(|_| u64_at(&mut at)).collect();
        let size = |v: u64| usize::try_from(v).map_err(|_| bad("an extent does not fit this machine"));
        let geometry = BondGeometry::new([size(h[0])?, size(h[1])?, size(h[2])?], size(h[3])?)?;
        let bond_words = geometry.bonds().div_ceil(32) as usize;
        let group_bits = h[11];
        if group_bits == 0 || group_bits > geometry.bonds() {
            return Err(bad("the group count does not fit the lattice"));
        }
        let group_words = group_bits.div_ceil(32) as usize;
        let queue_len = size(h[10])?;
        let words = (body.len() - at) / 4;
        if !(body.len() - at).is_multiple_of(4) || words != bond_words + group_words + queue_len {
            return Err(bad("the arrays' lengths do not match the lattice in the header"));
        }
        let mut all = body[at..]
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]));
        let bonds = PackedBits::from_words(geometry.bonds(), all.by_ref().take(bond_words).collect())?;
        let groups = PackedBits::from_words(group_bits, all.by_ref().take(group_words).collect())?;
        let queue: Vec<u32> = all.collect();
        if queue.iter().any(|b| u64::from(*b) >= geometry.bonds()) {
            return Err(bad("a queue entry names a bond outside the lattice"));
        }
        Ok(BondState {
            geometry,
            seed: h[4],
            bonds,
            groups,
            queue,
            broken: h[5],
            marked: h[6],
            faces: h[7] as u32,
            step: h[8],
            proposals: h[9],
        })
    }
}

const MAGIC: &[u8; 8] = b"CLFBOND2";

fn fnv1a(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

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
pub struct Schedule {
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

impl Default for Schedule {
    fn default() -> Schedule {
        Schedule {
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
    schedule: Schedule,
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

impl Schedule {
    /// Whether the live list is compacted after the launch that brought the count to `step`.
    fn purges_after(&self, step: u64, live: usize) -> bool {
        step.is_multiple_of(u64::from(self.purge_every.max(1))) && live >= self.purge_above.max(1)
    }
}

/// Launch `step` as the random stream counts it (32 bits).
fn stream_step(step: u64) -> Result<u32> {
    u32::try_from(step).map_err(|_| Error::TooLarge {
        what: format!("launch {step}"),
        detail: "the random stream numbers launches in 32 bits".into(),
    })
}

/// Why a run stops now, if it does: the faces first, then an empty list, then the limit.
fn stopped(reached: bool, live: usize, at_limit: bool) -> Option<Stop> {
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
fn mul_hi(a: u32, b: u32) -> u32 {
    ((u64::from(a) * u64::from(b)) >> 32) as u32
}

/// Runs [`replay_launch`] until the crack reaches `required`, the list empties, or `max_steps`
/// launches.
pub fn replay(
    state: &mut BondState,
    model: &BondModel,
    energy: &impl BondEnergy,
    schedule: Schedule,
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
    geometry: BondGeometry,
    model: BondModel,
    schedule: Schedule,
    seed: u64,
    program: Program,
    bits: Buffer<u32>,
    groups_old: Buffer<u32>,
    groups_new: Buffer<u32>,
    counters: Buffer<u32>,
    table: Buffer<i32>,
    queue: WorkQueue,
    keep: Option<Buffer<u32>>,
    broken: u64,
    marked: u64,
    faces: u32,
    step: u64,
    proposals: u64,
    live: usize,
}

impl BondRun {
    /// Uploads `state` to `device` with a live list of `capacity` entries. `None` takes the
    /// number of interior bonds, which the list can never exceed, or as many as fit in 90 % of
    /// the device's memory beside the bits (12 bytes per entry), whichever is smaller; an explicit
    /// capacity that does not fit is [`Error::TooLarge`].
    pub fn new(
        device: &Device,
        model: &BondModel,
        schedule: Schedule,
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
        let [count, entries, capacity] = self.queue.args();
        let args = [
            Arg::buffer(&self.bits),
            Arg::buffer(&self.groups_old),
            Arg::buffer(&self.groups_new),
            Arg::buffer(&self.counters),
            count,
            entries,
            capacity,
            Arg::buffer(&self.table),
            Arg::u32(n as u32),
            Arg::u32(self.seed as u32),
            Arg::u32((self.seed >> 32) as u32),
            Arg::u32(step),
            Arg::u32(self.schedule.thinning),
            Arg::u32(acc.threshold[0]),
            Arg::u32(acc.threshold[1]),
            Arg::u32(acc.certain),
        ];
        const WG: usize = 256;
        let event = self
            .program
            .launch("clforge_bonds_step", &[n.max(1).div_ceil(WG) * WG], Some(&[WG]), &args)?;
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
            self.purge()?;
        }
        Ok(LaunchReport {
            entries: n,
            broke: self.broken - before,
            event,
        })
    }

    /// Compacts the live list to its live entries (in order); returns how many remain.
    pub fn purge(&mut self) -> Result<usize> {
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
        self.program.launch(
            "clforge_bonds_live",
            &[n.div_ceil(WG) * WG],
            Some(&[WG]),
            &[
                Arg::buffer(&self.bits),
                Arg::buffer(self.queue.entries()),
                Arg::u32(n as u32),
                Arg::buffer(&self.table),
                Arg::buffer(keep),
            ],
        )?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{rngs::SmallRng, Rng, SeedableRng};

    fn sorted(rows: &[Neighbour]) -> Vec<Neighbour> {
        let mut r = rows.to_vec();
        r.sort();
        r
    }

    #[test]
    fn seed_table_is_the_geometric_construction() {
        let (printed, built) = (NeighbourTable::seed_003(), NeighbourTable::cube_faces());
        assert_eq!(built.per_kind(), 12);
        for kind in 0..3 {
            assert_eq!(sorted(printed.row(kind)), built.row(kind).to_vec(), "kind {kind}");
            // no repeats: 12 distinct bonds
            let mut r = sorted(printed.row(kind));
            r.dedup();
            assert_eq!(r.len(), 12);
        }
        // Symmetry: b is a neighbour of a exactly when a is one of b.
        for kind in 0..3 {
            for n in printed.row(kind) {
                let back = [-n[0], -n[1], -n[2], kind as i32];
                assert!(printed.row(n[3] as usize).contains(&back), "{kind} -> {n:?}");
            }
        }
    }

    #[test]
    fn tables_are_validated() {
        assert!(NeighbourTable::new(3, vec![[0, 0, 0, 1]; 4]).is_err());
        assert!(NeighbourTable::new(1, vec![[2, 0, 0, 0]]).is_err());
        assert!(NeighbourTable::new(1, vec![[0, 0, 0, 0]]).is_err());
        assert!(NeighbourTable::new(2, vec![[0, 0, 0, 2], [1, 0, 0, 0]]).is_err());
        assert!(NeighbourTable::new(2, vec![[0, 0, 0, 1], [1, 0, 0, 0]]).is_ok());
    }

    #[test]
    fn bond_numbers_round_trip_and_match_eq_8() {
        let g = BondGeometry::new([5, 7, 4], 3).unwrap();
        assert_eq!(g.bonds(), 6 * 8 * 5 * 3);
        for b in 0..g.bonds() as u32 {
            let (p, k) = g.site(b);
            assert_eq!(g.bond(p, k), b);
            assert_eq!(b as usize, 3 * (p[0] + p[1] * 6 + p[2] * 6 * 8) + k);
        }
        assert!(BondGeometry::new([1000, 1000, 500], 3).is_ok());
        assert!(matches!(
            BondGeometry::new([1200, 1200, 1200], 3),
            Err(Error::TooLarge { .. })
        ));
        assert!(BondGeometry::new([1, 4, 4], 3).is_err());
        assert_eq!(g.faces([0, 7, 2]), 0b1001);
        assert_eq!(g.faces([5, 3, 4]), 0b100100);
        assert!(g.interior([1, 1, 1]) && !g.interior([5, 1, 1]) && !g.interior([0, 3, 3]));
    }

    #[test]
    fn acceptance_is_metropolis_and_refuses_nan() {
        let a = Acceptance::of(&Fracture { k1: 1.0, k2: 1.0 }, Dynamics::Metropolis, 10, 3).unwrap();
        assert_eq!(a.certain, 0b10, "opening a column at nhb = 3 lowers the energy");
        assert_eq!(a.threshold[0], threshold((-1.0f64).exp()));
        let flat = |_: u64, _: u64| 0.0;
        assert_eq!(Acceptance::of(&flat, Dynamics::Metropolis, 0, 0).unwrap().certain, 0b11);
        let nan = |b: u64, _: u64| if b > 5 { f64::NAN } else { 0.0 };
        assert!(Acceptance::of(&nan, Dynamics::Glauber, 5, 0).is_err());
        let inf = |b: u64, _: u64| if b > 5 { f64::INFINITY } else { 0.0 };
        let a = Acceptance::of(&inf, Dynamics::Metropolis, 5, 0).unwrap();
        assert_eq!(
            (a.certain, a.threshold),
            (0, [0, 0]),
            "an infinite barrier is never crossed"
        );
    }

    /// Counters, faces and the live list recomputed from the bits.
    fn audit(s: &BondState, model: &BondModel) {
        let g = s.geometry;
        assert_eq!(s.bonds.count_ones(), s.broken);
        assert_eq!(s.groups.count_ones(), s.marked);
        let mut faces = 0;
        let mut groups = PackedBits::new(model.group_count(&g)).unwrap();
        let queued: std::collections::HashSet<u32> = s.queue.iter().copied().collect();
        assert_eq!(queued.len(), s.queue.len(), "no bond is queued twice");
        for b in s.bonds.ones() {
            let (p, kind) = g.site(b as u32);
            faces |= g.faces(p);
            if let Some(gi) = model.group_of(&g, p, kind) {
                groups.set(gi, true).unwrap();
            }
            // Recomputed here from the table, independently of `BondModel::is_live`.
            let live = model.table.row(kind).iter().any(|n| {
                g.step(p, n)
                    .is_some_and(|q| s.bonds.get(u64::from(g.bond(q, n[3] as usize))) == Some(false))
            });
            if live && g.interior(p) {
                assert!(
                    queued.contains(&(b as u32)),
                    "live bond {b} at {p:?} is not in the list"
                );
            }
        }
        for e in &s.queue {
            assert_eq!(s.bonds.get(u64::from(*e)), Some(true), "queued bond {e} is intact");
        }
        assert_eq!(faces, s.faces);
        assert_eq!(groups, s.groups);
    }

    #[test]
    fn the_list_never_loses_a_live_bond() {
        // Property: after any number of launches of either schedule, with compaction, every
        // live broken bond is queued, and the counters match the bits.
        let model = BondModel::fracture();
        let mut r = SmallRng::seed_from_u64(7);
        for case in 0..12 {
            let g =
                BondGeometry::new([r.random_range(3..12), r.random_range(3..12), r.random_range(3..12)], 3).unwrap();
            let e = Fracture {
                k1: r.random_range(0.0..3.0),
                k2: r.random_range(0.0..2.0),
            };
            let mut s = BondState::nucleus(g, &model, r.random()).unwrap();
            let schedule = Schedule {
                thinning: r.random_range(1..4),
                purge_every: r.random_range(1..5),
                purge_above: r.random_range(1..64),
            };
            if case % 2 == 0 {
                replay(&mut s, &model, &e, schedule, VERTICAL_FACES, r.random_range(1..60)).unwrap();
            } else {
                serial_reference(&mut s, &model, &e, VERTICAL_FACES, r.random_range(1..20_000)).unwrap();
            }
            audit(&s, &model);
            s.purge(&model);
            audit(&s, &model);
        }
    }

    #[test]
    fn runs_stop_when_the_crack_reaches_the_four_faces() {
        let model = BondModel::fracture();
        let g = BondGeometry::new([10, 10, 10], 3).unwrap();
        let e = Fracture { k1: 1.0, k2: 1.0 };
        let mut s = BondState::nucleus(g, &model, 3).unwrap();
        assert_eq!(
            serial_reference(&mut s, &model, &e, VERTICAL_FACES, u64::MAX).unwrap(),
            Stop::Reached
        );
        assert_eq!(s.faces & VERTICAL_FACES, VERTICAL_FACES);
        audit(&s, &model);
        // One proposal earlier the crack had not reached them all: the run stops at the first
        // moment it has.
        let mut t = BondState::nucleus(g, &model, 3).unwrap();
        assert_eq!(
            serial_reference(&mut t, &model, &e, VERTICAL_FACES, s.proposals - 1).unwrap(),
            Stop::Limit
        );
        assert_ne!(t.faces & VERTICAL_FACES, VERTICAL_FACES);
        // The device schedule's host replay stops at the end of the launch that reached them.
        let mut d = BondState::nucleus(g, &model, 3).unwrap();
        assert_eq!(
            replay(&mut d, &model, &e, Schedule::default(), VERTICAL_FACES, u64::MAX).unwrap(),
            Stop::Reached
        );
        let mut d1 = BondState::nucleus(g, &model, 3).unwrap();
        replay(&mut d1, &model, &e, Schedule::default(), VERTICAL_FACES, d.step - 1).unwrap();
        assert_ne!(d1.faces & VERTICAL_FACES, VERTICAL_FACES);
        // An impossible move empties nothing and never stops on its own: the limit ends it.
        let wall = |b: u64, _: u64| if b > 1 { f64::INFINITY } else { 0.0 };
        let glauber = Acceptance::of(&wall, Dynamics::Glauber, 1, 1).unwrap();
        assert_eq!((glauber.certain, glauber.threshold), (0, [0, 0]));
        let half = Acceptance::of(&|_: u64, _: u64| 0.0, Dynamics::Glauber, 3, 1).unwrap();
        assert_eq!(
            (half.certain, half.threshold),
            (0, [1 << 31; 2]),
            "heat bath at du = 0 is a coin"
        );
        let mut w = BondState::nucleus(g, &model, 3).unwrap();
        assert_eq!(
            serial_reference(&mut w, &model, &wall, VERTICAL_FACES, 1000).unwrap(),
            Stop::Limit
        );
        assert_eq!(w.broken, 1);
    }

    #[test]
    fn checkpoints_round_trip_and_refuse_damage() {
        let model = BondModel::fracture();
        let g = BondGeometry::new([9, 8, 7], 3).unwrap();
        let e = Fracture { k1: 0.8, k2: 1.0 };
        let mut s = BondState::nucleus(g, &model, 11).unwrap();
        replay(&mut s, &model, &e, Schedule::default(), VERTICAL_FACES, 6).unwrap();
        let mut bytes = Vec::new();
        s.save(&mut bytes).unwrap();
        let back = BondState::load(&bytes[..]).unwrap();
        assert_eq!(back, s);
        // Resuming equals running through.
        let (mut a, mut b) = (s.clone(), back);
        replay(&mut a, &model, &e, Schedule::default(), VERTICAL_FACES, 20).unwrap();
        replay(&mut b, &model, &e, Schedule::default(), VERTICAL_FACES, 20).unwrap();
        assert_eq!(a, b);
        for at in [0, 9, 40, bytes.len() / 2, bytes.len() - 1] {
            let mut bad = bytes.clone();
            bad[at] ^= 0x10;
            assert!(
                matches!(BondState::load(&bad[..]), Err(Error::Checkpoint(_))),
                "byte {at}"
            );
        }
        assert!(matches!(
            BondState::load(&bytes[..bytes.len() - 3]),
            Err(Error::Checkpoint(_))
        ));
    }
}
