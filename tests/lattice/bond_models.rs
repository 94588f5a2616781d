//! Bond models declared with `#[clforge::lattice(bonds = ..)]` on a module: the model the macro
//! builds is the one written by hand through the runtime, a rule's own acceptance gives the
//! thresholds the built-in dynamics give, and a declared model runs on the device exactly as its
//! host replay does.

use clforge::prelude::*;
use clforge::runtime::lattice::bonds::{
    replay_launch, serial_reference, Acceptance, BondEnergy, BondGeometry, BondModel, BondRun, BondSchedule, BondState,
    Dynamics, Fracture, Groups, NeighbourTable, Stop, SEED_003, VERTICAL_FACES,
};
use clforge::runtime::Error;

/// Seed 003's energy constants.
#[derive(Clone, Copy, Debug)]
pub struct K {
    pub k1: f64,
    pub k2: f64,
}

/// Seed 003's fracture, written out: the table as a literal (checked by the macro), the energy
/// with parameters, Metropolis as the rule's own acceptance.
#[clforge::lattice(bonds = 3, group_kind = 2, group_axis = z)]
pub mod fracture {
    pub const NEIGHBOURS: [[[i32; 4]; 12]; 3] = [
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

    /// K1 nb − K2 nhb^{3/2}.
    pub fn energy(k: &super::K, broken: u64, columns: u64) -> f64 {
        k.k1 * broken as f64 - k.k2 * (columns as f64).powf(1.5)
    }

    pub fn accept(du: f64) -> f64 {
        if du <= 0.0 {
            1.0
        } else {
            (-du).exp()
        }
    }
}

/// A heat-bath model on the face-sharing table, without groups or parameters; the table by path.
#[clforge::lattice(bonds = 3)]
mod heat_bath {
    pub const NEIGHBOURS: [[[i32; 4]; 12]; 3] = clforge::runtime::lattice::bonds::SEED_003;

    pub fn energy(broken: u64, _groups: u64) -> f64 {
        0.75 * broken as f64
    }

    /// 1 / (1 + e^du), written as the runtime's Glauber dynamics writes it.
    pub fn accept(du: f64) -> f64 {
        if du > 0.0 {
            (-du).exp() / (1.0 + (-du).exp())
        } else {
            1.0 / (1.0 + du.exp())
        }
    }
}

/// Metropolis by default (no `accept`), groups along x; an inner attribute stays inside.
#[clforge::lattice(bonds = 2, group_kind = 1, group_axis = x)]
mod two_kinds {
    #![allow(clippy::excessive_precision)]
    pub const NEIGHBOURS: [[[i32; 4]; 3]; 2] = [
        [[1, 0, 0, 0], [0, 0, 0, 1], [0, 1, 0, 1]],
        [[0, 0, 1, 1], [0, 0, 0, 0], [-1, 0, 0, 0]],
    ];
    pub fn energy(broken: u64, groups: u64) -> f64 {
        0.5 * broken as f64 - 0.25 * groups as f64
    }
}

/// An acceptance that is not a probability.
#[clforge::lattice(bonds = 3)]
mod broken_rule {
    pub const NEIGHBOURS: [[[i32; 4]; 12]; 3] = clforge::runtime::lattice::bonds::SEED_003;
    pub fn energy(broken: u64, _groups: u64) -> f64 {
        broken as f64
    }
    pub fn accept(du: f64) -> f64 {
        -du
    }
}

fn device() -> Device {
    Device::default().expect("device")
}

#[test]
fn declared_models_are_the_hand_built_ones() {
    assert_eq!(fracture::BONDS, 3);
    assert_eq!(fracture::NEIGHBOURS, SEED_003);
    let m = fracture::model().unwrap();
    assert_eq!(m, BondModel::fracture());
    let h = heat_bath::model().unwrap();
    assert_eq!(h.table, NeighbourTable::seed_003());
    assert_eq!(h.groups, None);
    let t = two_kinds::model().unwrap();
    assert_eq!(t.table.kinds(), 2);
    assert_eq!(t.table.per_kind(), 3);
    assert_eq!(t.groups, Some(Groups { kind: 1, axis: 0 }));
}

#[test]
fn a_rules_own_acceptance_gives_the_dynamics_thresholds() {
    let k = K { k1: 1.3, k2: 2.1 };
    let hand = Fracture { k1: k.k1, k2: k.k2 };
    let rule = fracture::Rule(&k);
    let glauber = |broken: u64, _groups: u64| 0.75 * broken as f64;
    for broken in [0u64, 1, 5, 77, 1 << 20, 1 << 40] {
        for groups in [0u64, 1, 3, 1000, 1 << 30] {
            assert_eq!(
                rule.energy(broken, groups).to_bits(),
                hand.energy(broken, groups).to_bits()
            );
            assert_eq!(
                Acceptance::of(&rule, Dynamics::Glauber, broken, groups).unwrap(),
                Acceptance::of(&hand, Dynamics::Metropolis, broken, groups).unwrap(),
                "the rule's `accept` decides, not the model's dynamics ({broken}, {groups})"
            );
            assert_eq!(
                Acceptance::of(&heat_bath::Rule, Dynamics::Metropolis, broken, groups).unwrap(),
                Acceptance::of(&glauber, Dynamics::Glauber, broken, groups).unwrap(),
            );
        }
    }
    // Without `accept`, the model's dynamics decide.
    let none = two_kinds::Rule;
    assert_eq!(none.acceptance(0.3), None);
    // Not a probability: a typed error that names the counters.
    match Acceptance::of(&broken_rule::Rule, Dynamics::Metropolis, 4, 0) {
        Err(Error::InvalidConfig(m)) => assert!(m.contains("4 broken bonds") && m.contains("probability"), "{m}"),
        other => panic!("expected an error, got {other:?}"),
    }
}

/// Runs `model` with `rule` on the device and replays it on the host, launch by launch.
fn device_equals_replay(dev: &Device, model: &BondModel, rule: &impl BondEnergy) {
    let g = BondGeometry::new([10, 12, 9], 3).unwrap();
    let schedule = BondSchedule {
        thinning: 2,
        purge_every: 3,
        purge_above: 8,
    };
    let start = BondState::nucleus(g, model, 0x5eed).unwrap();
    let mut run = BondRun::new(dev, model, schedule, &start, None).unwrap();
    let mut host = start.clone();
    for _ in 0..60 {
        if host.queue.is_empty() || host.reached(VERTICAL_FACES) {
            break;
        }
        run.launch(rule).unwrap();
        replay_launch(&mut host, model, rule, schedule).unwrap();
    }
    let d = run.state().unwrap();
    assert!(host.broken > 10, "the crack grew ({})", host.broken);
    assert_eq!(
        (d.broken, d.marked, d.faces, d.step),
        (host.broken, host.marked, host.faces, host.step)
    );
    assert!(d.bonds == host.bonds && d.groups == host.groups, "bits differ");
}

#[test]
fn a_declared_model_runs_on_the_device_as_its_replay() {
    let dev = device();
    let k = K { k1: 0.8, k2: 1.5 };
    device_equals_replay(&dev, &fracture::model().unwrap(), &fracture::Rule(&k));
    device_equals_replay(&dev, &heat_bath::model().unwrap(), &heat_bath::Rule);
    // The serial reference takes the declared rule as well, and an acceptance that is not a
    // probability stops it with the error, not a wrong run.
    let model = heat_bath::model().unwrap();
    let mut s = BondState::nucleus(BondGeometry::new([8, 8, 8], 3).unwrap(), &model, 3).unwrap();
    let stop = serial_reference(&mut s, &model, &heat_bath::Rule, VERTICAL_FACES, 500).unwrap();
    assert!(matches!(stop, Stop::Reached | Stop::Limit | Stop::Exhausted));
    let bad = broken_rule::model().unwrap();
    let mut s = BondState::nucleus(BondGeometry::new([8, 8, 8], 3).unwrap(), &bad, 3).unwrap();
    assert!(matches!(
        serial_reference(&mut s, &bad, &broken_rule::Rule, VERTICAL_FACES, 10),
        Err(Error::InvalidConfig(_))
    ));
}

/// A rule whose acceptance is a given function of `du`, over the energy `broken`.
struct Accepting(fn(f64) -> f64);

impl BondEnergy for Accepting {
    fn energy(&self, broken: u64, _groups: u64) -> f64 {
        broken as f64
    }
    fn acceptance(&self, du: f64) -> Option<f64> {
        Some((self.0)(du))
    }
}

#[test]
fn special_acceptances() {
    let of = |f: fn(f64) -> f64| Acceptance::of(&Accepting(f), Dynamics::Metropolis, 9, 2);
    // NaN and negative probabilities are errors, never a silent "reject".
    for f in [
        (|_| f64::NAN) as fn(f64) -> f64,
        |_| -0.5,
        |_| f64::NEG_INFINITY,
        |_| -f64::MIN_POSITIVE,
    ] {
        assert!(matches!(of(f), Err(Error::InvalidConfig(_))));
    }
    // One or more (and +inf) always accepts; 0 and -0 never do; tiny and near-1 probabilities
    // become the thresholds `rng::threshold` gives.
    for f in [(|_| 1.0) as fn(f64) -> f64, |_| f64::INFINITY, |_| f64::MAX] {
        assert_eq!(of(f).unwrap().certain, 0b11);
    }
    for f in [(|_| 0.0) as fn(f64) -> f64, |_| -0.0, |_| f64::MIN_POSITIVE] {
        let a = of(f).unwrap();
        assert_eq!((a.certain, a.threshold), (0, [0, 0]));
        assert!(!a.accepts(0, 0) && !a.accepts(1, 0));
    }
    let a = of(|_| 1.0 - f64::EPSILON).unwrap();
    assert_eq!((a.certain, a.threshold), (0, [u32::MAX, u32::MAX]));
    let a = of(|_| 0.5).unwrap();
    assert_eq!(a.threshold, [1 << 31, 1 << 31]);
    assert!(a.accepts(0, (1 << 31) - 1) && !a.accepts(0, 1 << 31));
}
