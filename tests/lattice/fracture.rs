//! Seed 003's fracture schedule on the device: launch by launch equal to its host replay (bonds,
//! groups, counters, faces, the live list as a set), resumable from a checkpoint, and a full list
//! is a typed error that loses nothing.

use clforge::prelude::*;
use clforge::runtime::lattice::bonds::{
    replay, replay_launch, BondGeometry, BondModel, BondRun, BondSchedule, BondState, Dynamics, Fracture, Groups,
    NeighbourTable, Stop, VERTICAL_FACES,
};
use clforge::runtime::Error;

fn device() -> Device {
    Device::default().expect("device")
}

/// The parts of two states that must be equal (the queue compared as a set of live entries:
/// its order is immaterial and dead entries leave it at different moments).
fn assert_same(device: &BondState, host: &BondState, model: &BondModel, what: &str) {
    assert_eq!(device.broken, host.broken, "{what}: broken bonds");
    assert_eq!(device.marked, host.marked, "{what}: marked columns");
    assert_eq!(device.faces, host.faces, "{what}: faces");
    assert_eq!(device.step, host.step, "{what}: launches");
    assert_eq!(device.proposals, host.proposals, "{what}: proposals");
    assert!(device.bonds == host.bonds, "{what}: bond bits differ");
    assert!(device.groups == host.groups, "{what}: column bits differ");
    let (mut d, mut h) = (device.clone(), host.clone());
    d.purge(model);
    h.purge(model);
    assert_eq!(d.sorted_queue(), h.sorted_queue(), "{what}: live lists differ");
}

#[test]
fn device_launches_equal_host_replay() {
    let dev = device();
    let model = BondModel::fracture();
    for (size, k, thinning, purge_every, seed) in [
        ([12, 12, 12], Fracture { k1: 1.0, k2: 1.0 }, 1, 8, 1u64),
        ([10, 14, 9], Fracture { k1: 0.5, k2: 2.0 }, 3, 2, 2),
        ([16, 16, 8], Fracture { k1: 3.0, k2: 1.0 }, 1, 1, 0xdead_beef_0123),
    ] {
        let g = BondGeometry::new(size, 3).unwrap();
        let schedule = BondSchedule {
            thinning,
            purge_every,
            purge_above: 16,
        };
        let start = BondState::nucleus(g, &model, seed).unwrap();
        let mut run = BondRun::new(&dev, &model, schedule, &start, None).unwrap();
        let mut host = start.clone();
        let mut launches = 0;
        let stop = loop {
            if host.reached(VERTICAL_FACES) {
                break Stop::Reached;
            }
            if host.queue.is_empty() {
                break Stop::Exhausted;
            }
            if launches == 400 {
                break Stop::Limit;
            }
            run.launch(&k).unwrap();
            replay_launch(&mut host, &model, &k, schedule).unwrap();
            launches += 1;
            if launches % 7 == 0 {
                assert_same(
                    &run.state().unwrap(),
                    &host,
                    &model,
                    &format!("{size:?} launch {launches}"),
                );
            }
        };
        assert_same(&run.state().unwrap(), &host, &model, &format!("{size:?} at the end"));
        assert!(
            host.broken > 20,
            "{size:?}: the crack grew ({} bonds, {stop:?})",
            host.broken
        );
    }
}

#[test]
fn device_run_stops_at_the_faces_and_resumes_bit_for_bit() {
    let dev = device();
    let model = BondModel::fracture();
    let g = BondGeometry::new([14, 14, 14], 3).unwrap();
    let k = Fracture { k1: 1.0, k2: 1.0 };
    let schedule = BondSchedule::default();
    let start = BondState::nucleus(g, &model, 5).unwrap();

    let mut whole = BondRun::new(&dev, &model, schedule, &start, None).unwrap();
    assert_eq!(whole.run(&k, VERTICAL_FACES, 10_000, |_, _| ()).unwrap(), Stop::Reached);
    let end = whole.state().unwrap();
    assert!(end.reached(VERTICAL_FACES));
    let mut host = start.clone();
    assert_eq!(
        replay(&mut host, &model, &k, schedule, VERTICAL_FACES, u64::MAX).unwrap(),
        Stop::Reached
    );
    assert_same(&end, &host, &model, "run to the faces");

    // Stop halfway, save, load, continue on a fresh run: the same end.
    let mut first = BondRun::new(&dev, &model, schedule, &start, None).unwrap();
    assert_eq!(
        first.run(&k, VERTICAL_FACES, end.step / 2, |_, _| ()).unwrap(),
        Stop::Limit
    );
    let mut bytes = Vec::new();
    first.state().unwrap().save(&mut bytes).unwrap();
    drop(first);
    let resumed = BondState::load(&bytes[..]).unwrap();
    let mut second = BondRun::new(&dev, &model, schedule, &resumed, None).unwrap();
    assert_eq!(
        second.run(&k, VERTICAL_FACES, 10_000, |_, _| ()).unwrap(),
        Stop::Reached
    );
    assert_same(&second.state().unwrap(), &end, &model, "resumed run");
}

#[test]
fn a_full_live_list_is_a_typed_error_that_loses_nothing() {
    let dev = device();
    let model = BondModel::fracture();
    let g = BondGeometry::new([12, 12, 12], 3).unwrap();
    let k = Fracture { k1: 0.2, k2: 1.0 };
    let start = BondState::nucleus(g, &model, 9).unwrap();
    let mut run = BondRun::new(&dev, &model, BondSchedule::default(), &start, Some(40)).unwrap();
    let mut host = start.clone();
    let err = loop {
        match run.launch(&k) {
            Ok(_) => {
                replay_launch(&mut host, &model, &k, BondSchedule::default()).unwrap();
            }
            Err(e) => break e,
        }
        assert!(run.step() < 1000, "the list of 40 entries never filled");
    };
    assert!(
        matches!(
            err,
            Error::QueueOverflow {
                capacity: 40,
                lost: 0,
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("larger capacity"), "{err}");
    // Nothing was launched or lost: the state equals the replay, and continues on a larger list.
    let state = run.state().unwrap();
    assert_same(&state, &host, &model, "after the refused launch");
    let mut bigger = BondRun::new(&dev, &model, BondSchedule::default(), &state, None).unwrap();
    bigger.launch(&k).unwrap();
    replay_launch(&mut host, &model, &k, BondSchedule::default()).unwrap();
    assert_same(&bigger.state().unwrap(), &host, &model, "continued on a larger list");
}

#[test]
fn bad_energies_and_models_are_errors() {
    let dev = device();
    let model = BondModel::fracture();
    let g = BondGeometry::new([6, 6, 6], 3).unwrap();
    let start = BondState::nucleus(g, &model, 1).unwrap();
    let mut run = BondRun::new(&dev, &model, BondSchedule::default(), &start, None).unwrap();
    let nan = |_: u64, _: u64| f64::NAN;
    assert!(matches!(run.launch(&nan), Err(Error::InvalidConfig(m)) if m.contains("NaN")));
    assert_eq!(run.step(), 0, "a refused launch is not counted");
    let no_subs = BondSchedule {
        thinning: 0,
        ..BondSchedule::default()
    };
    assert!(BondRun::new(&dev, &model, no_subs, &start, None).is_err());
    let two_kinds = BondGeometry::new([6, 6, 6], 2).unwrap();
    assert!(BondState::nucleus(two_kinds, &model, 1).is_err());
}

#[test]
fn tiny_lattices_run_to_the_end_and_oversized_lists_are_refused() {
    // The default list holds every interior bond, so it never overflows, however small the
    // lattice (a 3 x 3 x 2 sample has 12 interior bonds; a launch may append as many as it visits).
    let dev = device();
    let model = BondModel::fracture();
    let k = Fracture { k1: -1.0, k2: 1.0 };
    for size in [[2, 2, 2], [3, 3, 2], [2, 5, 3], [4, 2, 6]] {
        let g = BondGeometry::new(size, 3).unwrap();
        let start = BondState::nucleus(g, &model, 4).unwrap();
        let mut run = BondRun::new(&dev, &model, BondSchedule::default(), &start, None).unwrap();
        let stop = run.run(&k, VERTICAL_FACES, 10_000, |_, _| ()).unwrap();
        let mut host = start.clone();
        assert_eq!(
            replay(&mut host, &model, &k, BondSchedule::default(), VERTICAL_FACES, 10_000).unwrap(),
            stop
        );
        assert_same(&run.state().unwrap(), &host, &model, &format!("{size:?}"));
    }
    let g = BondGeometry::new([8, 8, 8], 3).unwrap();
    let start = BondState::nucleus(g, &model, 4).unwrap();
    let huge = BondRun::new(&dev, &model, BondSchedule::default(), &start, Some(usize::MAX / 4));
    assert!(matches!(huge, Err(Error::TooLarge { .. })), "{huge:?}");
}

#[test]
fn other_models_run_exactly_too() {
    // Heat-bath dynamics, the table in geometric order, groups along x marked by kind 0, or no
    // groups at all; an energy that is not seed 003's: the device still equals its replay.
    let dev = device();
    let energy = |nb: u64, ng: u64| 0.8 * nb as f64 - 2.0 * (ng as f64).sqrt();
    for (groups, dynamics) in [
        (Some(Groups { kind: 0, axis: 0 }), Dynamics::Glauber),
        (None, Dynamics::Metropolis),
        (Some(Groups { kind: 1, axis: 1 }), Dynamics::Metropolis),
    ] {
        let model = BondModel {
            table: NeighbourTable::cube_faces(),
            groups,
            dynamics,
        };
        let g = BondGeometry::new([11, 9, 10], 3).unwrap();
        let start = BondState::nucleus(g, &model, 21).unwrap();
        let schedule = BondSchedule {
            thinning: 2,
            purge_every: 3,
            purge_above: 8,
        };
        let mut run = BondRun::new(&dev, &model, schedule, &start, None).unwrap();
        let stop = run.run(&energy, VERTICAL_FACES, 300, |_, _| ()).unwrap();
        let mut host = start.clone();
        assert_eq!(
            replay(&mut host, &model, &energy, schedule, VERTICAL_FACES, 300).unwrap(),
            stop
        );
        assert_same(
            &run.state().unwrap(),
            &host,
            &model,
            &format!("{groups:?} {dynamics:?}"),
        );
        assert!(host.broken > 10, "{groups:?}: the crack grew");
        if groups.is_none() {
            assert_eq!(host.marked, 0);
        } else {
            assert!(host.marked > 0);
        }
        // A state of another model (its group bits sized otherwise) is refused.
        let other = BondModel {
            groups: Some(Groups { kind: 2, axis: 2 }),
            ..model.clone()
        };
        if other.group_count(&g) != model.group_count(&g) {
            assert!(BondRun::new(&dev, &other, schedule, &host, None).is_err());
        }
    }
    let bad = BondModel {
        groups: Some(Groups { kind: 3, axis: 0 }),
        ..BondModel::fracture()
    };
    assert!(BondState::nucleus(BondGeometry::new([4, 4, 4], 3).unwrap(), &bad, 1).is_err());
}

/// OpenCL failures injected into a run (`runtime::fault`): a launch whose kernel never started
/// leaves the run as it was, and it continues to the uninterrupted end; a failure after the
/// kernel started (the read-back of its counters) tears the run, which then refuses to continue
/// or to be saved, and the last checkpoint continues to the same end.
#[test]
fn injected_failures_lose_nothing_and_never_save_a_torn_state() {
    use clforge::runtime::fault::{self, Site};
    let dev = device();
    let model = BondModel::fracture();
    let g = BondGeometry::new([12, 12, 12], 3).unwrap();
    let k = Fracture { k1: 1.0, k2: 1.0 };
    let schedule = BondSchedule::default();
    let start = BondState::nucleus(g, &model, 9).unwrap();
    let steps = 12;
    let mut whole = BondRun::new(&dev, &model, schedule, &start, None).unwrap();
    whole.run(&k, VERTICAL_FACES, steps, |_, _| ()).unwrap();
    let end = whole.state().unwrap();

    // The kernel's enqueue fails at the fourth launch: nothing ran, nothing changed.
    let mut run = BondRun::new(&dev, &model, schedule, &start, None).unwrap();
    run.run(&k, VERTICAL_FACES, 3, |_, _| ()).unwrap();
    let before = run.state().unwrap();
    {
        let armed = fault::fail_nth(Site::Enqueue, 0);
        assert!(matches!(
            run.launch(&k),
            Err(Error::Cl {
                op: "clEnqueueNDRangeKernel",
                ..
            })
        ));
        assert!(armed.fired());
    }
    assert_same(&run.state().unwrap(), &before, &model, "after a failed enqueue");
    run.run(&k, VERTICAL_FACES, steps, |_, _| ()).unwrap();
    assert_same(&run.state().unwrap(), &end, &model, "continued after a failed enqueue");

    // The counters' read-back fails at the fourth launch: the run is torn.
    let mut run = BondRun::new(&dev, &model, schedule, &start, None).unwrap();
    run.run(&k, VERTICAL_FACES, 3, |_, _| ()).unwrap();
    let mut checkpoint = Vec::new();
    run.state().unwrap().save(&mut checkpoint).unwrap();
    {
        let armed = fault::fail_nth(Site::Read, 0);
        assert!(matches!(
            run.launch(&k),
            Err(Error::Cl {
                op: "clEnqueueReadBuffer",
                ..
            })
        ));
        assert!(armed.fired());
    }
    for refused in [
        run.state().map(|_| ()),
        run.launch(&k).map(|_| ()),
        run.purge().map(|_| ()),
    ] {
        match refused {
            Err(Error::InvalidConfig(msg)) => assert!(msg.contains("step 3") && msg.contains("checkpoint"), "{msg}"),
            other => panic!("a torn run went on: {other:?}"),
        }
    }
    let resumed = BondState::load(&checkpoint[..]).unwrap();
    let mut again = BondRun::new(&dev, &model, schedule, &resumed, None).unwrap();
    again.run(&k, VERTICAL_FACES, steps, |_, _| ()).unwrap();
    assert_same(&again.state().unwrap(), &end, &model, "resumed after a torn launch");
}
