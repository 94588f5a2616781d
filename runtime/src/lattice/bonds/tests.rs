//! Bond models: neighbourhoods, acceptance, checkpoints and the schedules against each other.

use super::state::*;
use super::*;
use crate::error::Error;
use crate::lattice::rng::threshold;
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
        let g = BondGeometry::new([r.random_range(3..12), r.random_range(3..12), r.random_range(3..12)], 3).unwrap();
        let e = Fracture {
            k1: r.random_range(0.0..3.0),
            k2: r.random_range(0.0..2.0),
        };
        let mut s = BondState::nucleus(g, &model, r.random()).unwrap();
        let schedule = BondSchedule {
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
        replay(&mut d, &model, &e, BondSchedule::default(), VERTICAL_FACES, u64::MAX).unwrap(),
        Stop::Reached
    );
    let mut d1 = BondState::nucleus(g, &model, 3).unwrap();
    replay(&mut d1, &model, &e, BondSchedule::default(), VERTICAL_FACES, d.step - 1).unwrap();
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
    replay(&mut s, &model, &e, BondSchedule::default(), VERTICAL_FACES, 6).unwrap();
    let mut bytes = Vec::new();
    s.save(&mut bytes).unwrap();
    let back = BondState::load(&bytes[..]).unwrap();
    assert_eq!(back, s);
    // Resuming equals running through.
    let (mut a, mut b) = (s.clone(), back);
    replay(&mut a, &model, &e, BondSchedule::default(), VERTICAL_FACES, 20).unwrap();
    replay(&mut b, &model, &e, BondSchedule::default(), VERTICAL_FACES, 20).unwrap();
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

/// A run's checkpoint bytes and its state, for the fault tests below.
fn checkpoint() -> (BondState, Vec<u8>) {
    let model = BondModel::fracture();
    let g = BondGeometry::new([9, 8, 7], 3).unwrap();
    let e = Fracture { k1: 0.8, k2: 1.0 };
    let mut s = BondState::nucleus(g, &model, 11).unwrap();
    replay(&mut s, &model, &e, BondSchedule::default(), VERTICAL_FACES, 6).unwrap();
    let mut bytes = Vec::new();
    s.save(&mut bytes).unwrap();
    (s, bytes)
}

/// Header word `i` (after the magic) set to `v`, the checksum recomputed: the file passes its
/// checksum and must be refused for what it says.
fn edited(bytes: &[u8], i: usize, v: u64) -> Vec<u8> {
    let mut b = bytes[..bytes.len() - 8].to_vec();
    b[8 + 8 * i..16 + 8 * i].copy_from_slice(&v.to_le_bytes());
    let sum = crate::files::fnv1a(&b);
    b.extend_from_slice(&sum.to_le_bytes());
    b
}

#[test]
fn consistently_edited_checkpoints_are_refused_not_loaded_or_panicking() {
    let (s, bytes) = checkpoint();
    assert_eq!(BondState::load(&edited(&bytes, 5, s.broken)[..]).unwrap(), s);
    let cases = [
        (10, u64::MAX, "queue length 2^64 - 1"),
        (10, s.queue.len() as u64 + 1, "queue one longer"),
        (5, s.broken + 1, "broken count"),
        (6, s.marked + 1, "marked count"),
        (7, 1 << 40, "faces beyond 32 bits"),
        (11, u64::MAX, "group count"),
        (0, u64::MAX, "extent"),
    ];
    for (i, v, what) in cases {
        let r = std::panic::catch_unwind(|| BondState::load(&edited(&bytes, i, v)[..]));
        let r = r.unwrap_or_else(|_| panic!("{what}: load panicked"));
        assert!(matches!(r, Err(Error::Checkpoint(_))), "{what}: {r:?}");
    }
}

/// A queue entry naming an intact bond is refused (a live bond is a broken one).
#[test]
fn a_queue_entry_of_an_intact_bond_is_refused() {
    let (s, bytes) = checkpoint();
    let intact = (0..s.geometry.bonds()).find(|&b| !s.bonds.get(b).unwrap()).unwrap() as u32;
    let mut b = bytes[..bytes.len() - 8].to_vec();
    let at = b.len() - 4;
    b[at..].copy_from_slice(&intact.to_le_bytes());
    let sum = crate::files::fnv1a(&b);
    b.extend_from_slice(&sum.to_le_bytes());
    assert!(matches!(BondState::load(&b[..]), Err(Error::Checkpoint(_))));
}

/// A writer that takes every byte and fails to flush (a full disk behind a buffer).
struct FailingFlush(Vec<u8>);

impl std::io::Write for FailingFlush {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Err(std::io::Error::other("no space left on device"))
    }
}

#[test]
fn saving_reports_a_failed_flush_and_save_file_keeps_the_previous_checkpoint() {
    let (s, bytes) = checkpoint();
    assert!(matches!(s.save(FailingFlush(Vec::new())), Err(Error::Io { .. })));
    let dir = std::env::temp_dir().join(format!("clforge-bonds-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("run.bin");
    s.save_file(&path).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    // Into a directory that does not exist: an error naming the path, nothing written.
    let missing = dir.join("gone").join("run.bin");
    let e = s.save_file(&missing).unwrap_err();
    assert!(e.to_string().contains("gone"), "{e}");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
    assert_eq!(BondState::load(&std::fs::read(&path).unwrap()[..]).unwrap(), s);
}
