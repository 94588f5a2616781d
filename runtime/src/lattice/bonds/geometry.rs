//! The bonds' neighbourhoods and the lattice of sites they live on.

use crate::error::{Error, Result};

/// One neighbour of a bond: the bond of kind `kind` at the site `(dx, dy, dz)` away.
pub type Neighbour = [i32; 4];

/// The neighbourhood of every bond kind, as data: row `kind` lists the bonds a broken bond of
/// that kind can break next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NeighbourTable {
    pub(crate) kinds: usize,
    pub(crate) per_kind: usize,
    pub(crate) rows: Vec<Neighbour>,
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
    pub(crate) sample: [usize; 3],
    pub(crate) kinds: usize,
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
    pub(crate) fn step(&self, p: [usize; 3], n: &Neighbour) -> Option<[usize; 3]> {
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
