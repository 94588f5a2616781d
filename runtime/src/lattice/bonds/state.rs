//! The state of a bond lattice: its bits, groups, counters and queue, and its checkpoints.

use std::io::{Read, Write};

use super::*;
use crate::error::{Error, Result};

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
    pub(crate) fn break_bond(&mut self, model: &BondModel, b: u32) -> Result<bool> {
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
        // Flushed here: a buffered writer dropped unflushed would report `Ok` with nothing
        // written on a full disk.
        w.write_all(&out).and_then(|()| w.flush()).map_err(|source| Error::Io {
            what: "writing a bond-lattice checkpoint".into(),
            source,
        })
    }

    /// Saves to `path`, replacing a previous checkpoint only once the new one is complete
    /// and synced ([`crate::files::replace_file`]): on any failure the previous file stays as
    /// it was.
    pub fn save_file(&self, path: &std::path::Path) -> Result<()> {
        crate::files::replace_file(path, |w| {
            self.save(w).map_err(|e| match e {
                Error::Io { source, .. } => source,
                other => std::io::Error::other(other.to_string()),
            })
        })
        .map_err(|source| Error::Io {
            what: format!("writing the bond-lattice checkpoint `{}`", path.display()),
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
        let geometry = BondGeometry::new([size(h[0])?, size(h[1])?, size(h[2])?], size(h[3])?)
            .map_err(|e| Error::Checkpoint(format!("the lattice in the header is not one this run can hold: {e}")))?;
        let bond_words = geometry.bonds().div_ceil(32) as usize;
        let group_bits = h[11];
        if group_bits == 0 || group_bits > geometry.bonds() {
            return Err(bad("the group count does not fit the lattice"));
        }
        let group_words = group_bits.div_ceil(32) as usize;
        let queue_len = size(h[10])?;
        let words = (body.len() - at) / 4;
        let expected = bond_words
            .checked_add(group_words)
            .and_then(|n| n.checked_add(queue_len));
        if !(body.len() - at).is_multiple_of(4) || expected != Some(words) {
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
        // The counters are stated beside the bits they count: a file whose checksum was
        // recomputed after an edit must still agree with itself.
        if h[5] != bonds.count_ones() {
            return Err(bad("the broken-bond count does not match the bonds' bits"));
        }
        if h[6] != groups.count_ones() {
            return Err(bad("the marked-group count does not match the groups' bits"));
        }
        if h[7] > u64::from(u32::MAX) {
            return Err(bad("the reached faces do not fit their 32 bits"));
        }
        if queue.iter().any(|&b| !bonds.get(u64::from(b)).unwrap_or(false)) {
            return Err(bad("a queue entry names a bond that is not broken"));
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

pub(super) const MAGIC: &[u8; 8] = b"CLFBOND2";

pub(super) use crate::files::fnv1a;
