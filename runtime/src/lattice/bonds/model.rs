//! A bond model: energy, acceptance, dynamics and the groups the energy counts.

use super::*;
use crate::error::{Error, Result};
use crate::lattice::rng::threshold;

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
    pub(crate) fn check(&self, kinds: usize) -> Result<()> {
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
    pub(crate) fn neighbour(&self, g: &BondGeometry, e: u32, k: usize) -> Option<([usize; 3], usize, u32)> {
        let (p, kind) = g.site(e);
        let n = &self.table.row(kind)[k];
        let q = g.step(p, n)?;
        Some((q, n[3] as usize, g.bond(q, n[3] as usize)))
    }

    /// Whether bond `e` is live in `bonds`: one of its neighbours is intact.
    pub(crate) fn is_live(&self, g: &BondGeometry, bonds: &PackedBits, e: u32) -> bool {
        (0..self.table.per_kind()).any(|k| {
            self.neighbour(g, e, k)
                .is_some_and(|(_, _, c)| bonds.get(u64::from(c)) == Some(false))
        })
    }

    /// The move from bond `e` to its neighbour `k`: the intact bond it would break and its class
    /// (1 when it marks a group that `groups` has not marked), or `None` when that neighbour is
    /// outside the lattice or already broken.
    pub(crate) fn proposal(
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
