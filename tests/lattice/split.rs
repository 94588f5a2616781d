//! Lattice rules split over several devices (the default device repeated): every step equals
//! the single device's and the host reference's bit for bit, for checkerboard and parity-class
//! rules, periodic and fixed boundaries, halos of 1 and 3, 2 and 3 slabs, uneven shares.

use clforge::prelude::*;
use clforge::runtime::lattice::{rng, SplitLatticePlan};
use rand::{rngs::SmallRng, Rng, SeedableRng};

/// 2-D Ising, checkerboard Metropolis.
#[lattice]
fn ising(s: &Lattice<i32>, rng: &Draws, t4: u32, t8: u32) -> i32 {
    let h = s.at(1, 0) + s.at(-1, 0) + s.at(0, 1) + s.at(0, -1);
    let de = 2 * s.at(0, 0) * h;
    let u = rng.draw(0);
    if de <= 0 || (de == 4 && u < t4) || (de == 8 && u < t8) {
        -s.at(0, 0)
    } else {
        s.at(0, 0)
    }
}

#[derive(Params, Clone, Copy, Debug)]
struct Noise {
    amplitude: f32,
    keep: f32,
}

/// 3-D, fixed boundary, a field and params beside the state, a halo of 3 along z.
#[lattice(boundary = fixed)]
fn relax(v: &Lattice3<f32>, k: &Noise, w: &Grid3<f32>, rng: &Draws) -> f32 {
    let mean = (v.at(1, 0, 0) + v.at(-1, 0, 0) + v.at(0, 1, 0) + v.at(0, -1, 0) + v.at(0, 0, 1) + v.at(0, 0, -1)) / 6.0;
    let far = v.at(2, 1, 0) - v.at(0, 0, -3);
    let kick = (rng.uniform(1) - 0.5) * k.amplitude;
    if rng.draw(0) % 3 == 1 {
        v.at(0, 0, 0) * k.keep + w.at(0, 0, 0) + kick
    } else {
        mean + 0.01 * far + kick
    }
}

/// 2-D parity classes (the 8 neighbours of a square), periodic.
#[lattice]
fn moore(s: &Lattice<f32>, rng: &Draws, w: f32) -> f32 {
    let ring = s.at(1, 1) + s.at(-1, 1) + s.at(1, -1) + s.at(-1, -1) + s.at(1, 0) + s.at(0, 1);
    0.5 * s.at(0, 0) + w * ring + rng.uniform(0)
}

fn devices(n: usize, periodic: bool, weights: &[f64]) -> Devices {
    let dev = Device::default().expect("device");
    let d = Devices::new(vec![dev; n]).unwrap().periodic(periodic);
    if weights.is_empty() {
        d
    } else {
        d.with_weights(weights).unwrap()
    }
}

fn same<T: clforge::runtime::Scalar + PartialEq + std::fmt::Debug>(what: &str, a: &HostGrid<T>, b: &HostGrid<T>) {
    if let Some(i) = a.data().iter().zip(b.data()).position(|(x, y)| x != y) {
        panic!(
            "{what}: site {i} is {:?} split, {:?} on one device",
            a.data()[i],
            b.data()[i]
        );
    }
}

#[test]
fn ising_split_equals_one_device_and_host() {
    let beta = 0.44f64;
    let (t4, t8) = (rng::threshold((-4.0 * beta).exp()), rng::threshold((-8.0 * beta).exp()));
    let shape = Shape::d2(40, 48);
    let mut r = SmallRng::seed_from_u64(3);
    let init = HostGrid::from_fn(shape, |_| if r.random_bool(0.5) { 1 } else { -1 }).unwrap();
    let dev = Device::default().unwrap();
    for (n, weights) in [(2, vec![]), (3, vec![]), (2, vec![3.0, 1.0])] {
        let split = devices(n, true, &weights);
        let plan = Ising::plan(&split, shape).unwrap();
        let one = Ising::plan(&dev, shape).unwrap();
        let mut s = SplitGrid::from_host(&split, &init).unwrap();
        let mut d = DeviceGrid::from_host(&dev, &init).unwrap();
        let mut host = init.clone();
        let seed = 0xabcdef;
        for step in 0..25 {
            Ising::step_plan(&plan, seed, step, &mut s, t4, t8).unwrap();
            Ising::step_plan(&one, seed, step, &mut d, t4, t8).unwrap();
            Ising::apply_host(seed, step, &mut host, t4, t8).unwrap();
        }
        let what = format!("ising over {n} {weights:?}");
        same(&what, &s.to_host().unwrap(), &d.to_host().unwrap());
        same(&what, &d.to_host().unwrap(), &host);
        assert_ne!(host.data(), init.data(), "{what}: nothing flipped");
    }
}

#[test]
fn fixed_3d_rule_with_deep_reads_split_along_z() {
    let shape = Shape::d3(12, 9, 40);
    let mut r = SmallRng::seed_from_u64(4);
    let init = HostGrid::from_fn(shape, |_| r.random_range(-1.0f32..1.0)).unwrap();
    let w = HostGrid::from_fn(shape, |_| r.random_range(0.0f32..0.1)).unwrap();
    let k = Noise {
        amplitude: 0.2,
        keep: 0.7,
    };
    let dev = Device::default().unwrap();
    for n in [2, 3] {
        let split = devices(n, false, &[]);
        let plan = Relax::plan(&split, shape).unwrap();
        let mut s = SplitGrid::from_host(&split, &init).unwrap();
        let sw = SplitGrid::from_host(&split, &w).unwrap();
        let mut d = DeviceGrid::from_host(&dev, &init).unwrap();
        let dw = DeviceGrid::from_host(&dev, &w).unwrap();
        let one = Relax::plan(&dev, shape).unwrap();
        let mut host = init.clone();
        for step in 0..7 {
            Relax::step_plan(&plan, 9, step, &mut s, &k, &sw).unwrap();
            Relax::step_plan(&one, 9, step, &mut d, &k, &dw).unwrap();
            Relax::apply_host(9, step, &mut host, &k, &w).unwrap();
        }
        let one = d.to_host().unwrap();
        same(&format!("relax over {n}"), &s.to_host().unwrap(), &one);
        same(&format!("relax over {n}, host"), &one, &host);
    }
}

#[test]
fn parity_classes_split_with_odd_slabs() {
    let shape = Shape::d2(18, 50);
    let mut r = SmallRng::seed_from_u64(5);
    let init = HostGrid::from_fn(shape, |_| r.random_range(0.0f32..1.0)).unwrap();
    let dev = Device::default().unwrap();
    // 3 slabs of 50 rows: 17, 16, 17, so slabs start at odd and even rows.
    let split = devices(3, true, &[]);
    let plan: SplitLatticePlan = Moore::plan(&split, shape).unwrap();
    let mut s = SplitGrid::from_host(&split, &init).unwrap();
    let mut host = init.clone();
    for step in 0..9 {
        Moore::step_plan(&plan, 77, step, &mut s, 0.05).unwrap();
        Moore::apply_host(77, step, &mut host, 0.05).unwrap();
    }
    let mut d = DeviceGrid::from_host(&dev, &init).unwrap();
    for step in 0..9 {
        Moore::step(77, step, &mut d, 0.05).unwrap();
    }
    same("moore split", &s.to_host().unwrap(), &host);
    same("moore one device", &d.to_host().unwrap(), &host);
}

#[test]
fn splits_a_lattice_cannot_take_are_refused() {
    // Periodic rule on a split that does not wrap, and the converse.
    let err = Ising::plan(&devices(2, false, &[]), Shape::d2(16, 32)).unwrap_err();
    assert!(err.to_string().contains("periodic"), "{err}");
    let err = Relax::plan(&devices(2, true, &[]), Shape::d3(8, 8, 32)).unwrap_err();
    assert!(err.to_string().contains("periodic"), "{err}");
    // A z halo of 3 needs 3 halo planes.
    let shallow = Devices::new(vec![Device::default().unwrap(); 2])
        .unwrap()
        .depth(2)
        .unwrap();
    let err = Relax::plan(&shallow, Shape::d3(8, 8, 32)).unwrap_err();
    assert!(err.to_string().contains("depth(3)"), "{err}");
    // Odd periodic extents, as on one device.
    let err = Ising::plan(&devices(2, true, &[]), Shape::d2(16, 33)).unwrap_err();
    assert!(err.to_string().contains("even"), "{err}");
}

/// Overlapped exchanges (the default): a colour that needs an exchange updates the interior
/// rows of every slab while the halos travel, then the rows near the halos. Slabs deep enough
/// for an interior that is not a whole number of work-groups, halos of 2 and 3, two colours
/// and parity classes, 2-D and 3-D, weighted and periodic: the bits of one device, with
/// overlap on and off.
#[test]
fn overlapped_exchanges_give_one_devices_bits() {
    let dev = Device::default().unwrap();
    let split = |n: usize, periodic: bool, depth: usize, overlap: bool, weights: &[f64]| {
        devices(n, periodic, weights).depth(depth).unwrap().overlap(overlap)
    };
    let beta = 0.44f64;
    let (t4, t8) = (rng::threshold((-4.0 * beta).exp()), rng::threshold((-8.0 * beta).exp()));
    let shape = Shape::d2(40, 150);
    let mut r = SmallRng::seed_from_u64(13);
    let spins = HostGrid::from_fn(shape, |_| if r.random_bool(0.5) { 1 } else { -1 }).unwrap();
    let mut one = DeviceGrid::from_host(&dev, &spins).unwrap();
    let plan1 = Ising::plan(&dev, shape).unwrap();
    for step in 0..11 {
        Ising::step_plan(&plan1, 5, step, &mut one, t4, t8).unwrap();
    }
    let want = one.to_host().unwrap();
    for (n, depth, weights) in [(2, 2, vec![]), (3, 3, vec![1.0, 2.0, 1.5]), (2, 5, vec![])] {
        for overlap in [true, false] {
            let devices = split(n, true, depth, overlap, &weights);
            let plan = Ising::plan(&devices, shape).unwrap();
            assert_eq!(plan.overlaps(), overlap);
            let mut s = SplitGrid::from_host(&devices, &spins).unwrap();
            for step in 0..11 {
                Ising::step_plan(&plan, 5, step, &mut s, t4, t8).unwrap();
            }
            same(
                &format!("ising over {n}, depth {depth}, overlap {overlap}"),
                &s.to_host().unwrap(),
                &want,
            );
        }
    }
    // 3-D, reading 3 planes along z, with an input grid that needs exchanges too.
    let shape = Shape::d3(12, 9, 70);
    let init = HostGrid::from_fn(shape, |_| r.random_range(-1.0f32..1.0)).unwrap();
    let w = HostGrid::from_fn(shape, |_| r.random_range(0.0f32..0.1)).unwrap();
    let k = Noise {
        amplitude: 0.2,
        keep: 0.7,
    };
    let mut d = DeviceGrid::from_host(&dev, &init).unwrap();
    let dw = DeviceGrid::from_host(&dev, &w).unwrap();
    let one = Relax::plan(&dev, shape).unwrap();
    for step in 0..5 {
        Relax::step_plan(&one, 9, step, &mut d, &k, &dw).unwrap();
    }
    let want = d.to_host().unwrap();
    for overlap in [true, false] {
        let devices = split(2, false, 4, overlap, &[]);
        let plan = Relax::plan(&devices, shape).unwrap();
        let mut s = SplitGrid::from_host(&devices, &init).unwrap();
        let sw = SplitGrid::from_host(&devices, &w).unwrap();
        for step in 0..5 {
            Relax::step_plan(&plan, 9, step, &mut s, &k, &sw).unwrap();
        }
        same(&format!("relax 3-D, overlap {overlap}"), &s.to_host().unwrap(), &want);
    }
    // Parity classes (four colours), slabs starting on odd and even rows.
    let shape = Shape::d2(18, 130);
    let init = HostGrid::from_fn(shape, |_| r.random_range(0.0f32..1.0)).unwrap();
    let mut d = DeviceGrid::from_host(&dev, &init).unwrap();
    for step in 0..7 {
        Moore::step(77, step, &mut d, 0.05).unwrap();
    }
    let want = d.to_host().unwrap();
    for overlap in [true, false] {
        let devices = split(3, true, 2, overlap, &[]);
        let plan: SplitLatticePlan = Moore::plan(&devices, shape).unwrap();
        let mut s = SplitGrid::from_host(&devices, &init).unwrap();
        for step in 0..7 {
            Moore::step_plan(&plan, 77, step, &mut s, 0.05).unwrap();
        }
        same(&format!("moore, overlap {overlap}"), &s.to_host().unwrap(), &want);
    }
}
