//! Element matrices formed on the CPU and the device together (`element::hybrid`): mixed orders
//! equal the host, the split routes groups by relative rate and is optimal, misuse is refused.

use super::*;
use clforge::runtime::element::hybrid::{self, Assignment, Hybrid, Rates, Worker};

fn close(a: &[f64], b: &[f64], what: &str) {
    assert_eq!(a.len(), b.len(), "{what}: lengths");
    let scale = b.iter().fold(0.0f64, |m, v| m.max(v.abs())).max(f64::MIN_POSITIVE);
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!((x - y).abs() <= 1e-12 * scale, "{what}: entry {i}: {x} vs {y}");
    }
}

fn solids<E: Element<Material = Iso>>(m: usize, seed: u64) -> (Vec<f64>, Vec<Iso>) {
    let mut rng = common::rng(seed);
    let coords = (0..m).flat_map(|_| hexahedron::<E>(&mut rng, 0.1)).collect();
    (coords, (0..m).map(|_| iso(&mut rng)).collect())
}

#[test]
fn hybrid_mixed_orders_equal_the_host() {
    let dev = common::device();
    let (x1, m1) = solids::<HexP1>(40, 31);
    let (x3, m3) = solids::<HexP3>(9, 32);
    let mut work = Hybrid::new(std::slice::from_ref(&dev), 2).unwrap();
    let g1 = work.add::<HexP1>(&x1, &m1).unwrap();
    let g3 = work.add::<HexP3>(&x3, &m3).unwrap();
    assert_eq!(work.workers(), vec![Worker::Device(0), Worker::Host]);
    let rates = work.measure_for(0.0).unwrap();
    assert!(
        rates.per_second.iter().flatten().all(|r| r.is_finite() && *r > 0.0),
        "{rates:?}"
    );
    let reference1 = forming::form_host::<HexP1>(&x1, &m1, 1).unwrap();
    let reference3 = forming::form_host::<HexP3>(&x3, &m3, 1).unwrap();
    // The measured split, and a fixed one that gives both workers a share of both groups.
    let measured = work.split(&rates).unwrap();
    let both = Assignment {
        ranges: vec![
            vec![(Worker::Host, 0..13), (Worker::Device(0), 13..40)],
            vec![(Worker::Device(0), 0..4), (Worker::Host, 4..9)],
        ],
        predicted_s: vec![0.0, 0.0],
    };
    for plan in [measured, both] {
        let formed = work.run(&plan).unwrap();
        assert_eq!(formed.worker_s.len(), 2);
        close(&formed.to_host(g1).unwrap(), &reference1, "p = 1 group");
        close(&formed.to_host(g3).unwrap(), &reference3, "p = 3 group");
    }
}

#[test]
fn the_split_routes_groups_by_relative_rate_and_is_optimal() {
    let workers = [Worker::Device(0), Worker::Host];
    // Seed 004's mixed mesh: 50 000 p = 1 and 50 000 p = 3 hexahedra. The device is 5× the host
    // at p = 1 but 50× at p = 3: the host should take p = 1 elements only (a part of them: all
    // of them would take it 1 s, longer than the device's whole p = 3 group).
    let sizes = [50_000, 50_000];
    let rates = Rates {
        per_second: vec![vec![1.0e6, 1.0e5], vec![5.0e4, 2.0e3]],
    };
    let plan = hybrid::split_with(&workers, &sizes, &rates, 0.0, 0.0).unwrap();
    assert_eq!(plan.count(1, Worker::Host), 0, "{plan:?}");
    assert!((20_000..30_000).contains(&plan.count(0, Worker::Host)), "{plan:?}");
    for (g, &m) in sizes.iter().enumerate() {
        assert_eq!(plan.count(g, Worker::Host) + plan.count(g, Worker::Device(0)), m);
    }
    // No split on a grid of fractions does better than the program's.
    let mut best = f64::INFINITY;
    for a in 0..=200 {
        for b in 0..=200 {
            let (fa, fb) = (a as f64 / 200.0, b as f64 / 200.0);
            let host = fa * 5e4 / 5e4 + fb * 5e4 / 2e3;
            let dev = (1.0 - fa) * 5e4 / 1e6 + (1.0 - fb) * 5e4 / 1e5;
            best = best.min(host.max(dev));
        }
    }
    assert!(
        plan.makespan_s() <= best * (1.0 + 1e-6) + 1e-5,
        "{} vs grid {best}",
        plan.makespan_s()
    );
    // One group: shares in proportion to the rates.
    let one = hybrid::split(
        &workers,
        &[1000],
        &Rates {
            per_second: vec![vec![3.0], vec![1.0]],
        },
    )
    .unwrap();
    assert_eq!(one.count(0, Worker::Device(0)), 750);
    assert_eq!(one.count(0, Worker::Host), 250);
    // A worker that cannot form a group gets none of it.
    let none = hybrid::split(
        &workers,
        &[10, 10],
        &Rates {
            per_second: vec![vec![1.0, 1.0], vec![0.0, 1.0]],
        },
    )
    .unwrap();
    assert_eq!(none.count(0, Worker::Host), 0);
}

#[test]
fn hybrid_misuse_is_refused() {
    let dev = common::device();
    assert!(matches!(Hybrid::new(&[], 0), Err(Error::InvalidConfig(_))));
    assert!(matches!(
        Hybrid::new(&[dev.clone(), dev.clone()], 1),
        Err(Error::InvalidConfig(_))
    ));
    let workers = [Worker::Device(0), Worker::Host];
    let ok = Rates {
        per_second: vec![vec![1.0], vec![1.0]],
    };
    assert!(
        hybrid::split(&workers, &[5, 5], &ok).is_err(),
        "rates for one group, two groups"
    );
    let nan = Rates {
        per_second: vec![vec![f64::NAN], vec![1.0]],
    };
    assert!(hybrid::split(&workers, &[5], &nan).is_err());
    let zero = Rates {
        per_second: vec![vec![0.0], vec![0.0]],
    };
    assert!(hybrid::split(&workers, &[5], &zero).is_err());
    let (x1, m1) = solids::<HexP1>(6, 33);
    let mut work = Hybrid::new(std::slice::from_ref(&dev), 1).unwrap();
    assert!(work.add::<HexP1>(&x1[1..], &m1).is_err(), "short coordinates");
    let g = work.add::<HexP1>(&x1, &m1).unwrap();
    let gap = Assignment {
        ranges: vec![vec![(Worker::Host, 0..2), (Worker::Device(0), 3..6)]],
        predicted_s: vec![0.0, 0.0],
    };
    assert!(matches!(work.run(&gap), Err(Error::InvalidConfig(_))));
    let stranger = Assignment {
        ranges: vec![vec![(Worker::Device(1), 0..6)]],
        predicted_s: vec![0.0, 0.0],
    };
    assert!(matches!(work.run(&stranger), Err(Error::InvalidConfig(_))));
    assert!(work.measure_for(f64::NAN).is_err());
    let formed = work.run(&work.split(&ok).unwrap()).unwrap();
    assert!(formed.to_host(g + 1).is_err());
}
