//! Reductions fused into the update: `Max`, `Min` and `Sum` outputs equal the host
//! reference's fold over the same points (bit for bit where the operation is exact, within
//! rounding for float sums), in every variant, on one device and split over several, with
//! NaN propagated and the same bits on every repeat.

use crate::{common, kernels};

use clforge::prelude::*;
use clforge::runtime::{Max, Min, Reduction, Sum};
use common::*;
use kernels::jacobi_checked::JacobiChecked;
use rand::Rng;

/// Several reductions of several types beside a grid output, 3-D periodic; a branch picks the
/// reduced values.
#[clforge::stencil(boundary = periodic)]
fn stats3(u: &Grid3<f64>, m: &Grid3<i32>) -> (Sum<f64>, f64, Min<f64>, Sum<i32>, Max<u32>) {
    let lap = u.at(1, 0, 0) + u.at(-1, 0, 0) + u.at(0, 1, 0) + u.at(0, -1, 0) + u.at(0, 0, 1) + u.at(0, 0, -1)
        - 6.0 * u.at(0, 0, 0);
    if m.at(0, 0, 0) > 0 {
        (
            Sum(u.at(0, 0, 0) * u.at(0, 0, 0)),
            lap,
            Min(lap),
            Sum(m.at(0, 0, 0)),
            Max(m.at(0, 0, 0) as u32),
        )
    } else {
        (Sum(0.0), lap, Min(u.at(0, 0, 0)), Sum(-1), Max(7))
    }
}

/// A reduction alone, on a fixed 1-D boundary: only the updated points count.
#[clforge::stencil]
fn total(u: &Grid1<f32>) -> Sum<f32> {
    Sum(u.at(-1) - u.at(1))
}

fn jacobi_case(shape: Shape, r: &mut rand::rngs::SmallRng, nan: bool) -> (HostGrid<f32>, HostGrid<f32>) {
    let mut u = random_f32(shape, r, -1.0, 1.0);
    let f = random_f32(shape, r, -1.0, 1.0);
    if nan {
        let i = r.random_range(0..shape.len());
        u.data_mut()[i] = f32::NAN;
    }
    (u, f)
}

#[test]
fn max_change_equals_host_in_every_variant() {
    let dev = device();
    for (i, &shape) in shapes(2).iter().enumerate() {
        for config in configs(2) {
            for nan in [false, true] {
                let mut r = rng(800 + i as u64);
                let (u, f) = jacobi_case(shape, &mut r, nan);
                let mut host = u.clone();
                let mut host_max = Max(0.0f32);
                JacobiChecked::apply_host((&mut host, &mut host_max), &u, &f, 0.01).unwrap();
                let mut out = DeviceGrid::new(&dev, shape).unwrap();
                let mut change = Reduction::new();
                JacobiChecked::launch(&config, (&mut out, &mut change), &up(&u), &up(&f), 0.01)
                    .unwrap_or_else(|e| panic!("{shape} {config:?}: {e}"));
                let what = format!("{shape} {config:?} nan {nan}");
                let got = change.value().unwrap();
                assert!(
                    (got.is_nan() && host_max.0.is_nan()) || got.to_bits() == host_max.0.to_bits(),
                    "{what}: max change {got:e} on the device, {:e} on the host",
                    host_max.0
                );
                assert_eq!(nan, got.is_nan(), "{what}: a NaN input must make the maximum NaN");
                let dev_grid = out.to_host().unwrap();
                for (d, h) in dev_grid.data().iter().zip(host.data()) {
                    assert!(
                        d.to_bits() == h.to_bits() || (d.is_nan() && h.is_nan()),
                        "{what}: grid differs"
                    );
                }
            }
        }
    }
}

#[test]
fn several_reductions_of_several_types() {
    let dev = device();
    for (i, &shape) in shapes(3).iter().enumerate() {
        let mut r = rng(900 + i as u64);
        let u = random_f64(shape, &mut r, -1.0, 1.0);
        let m = HostGrid::from_fn(shape, |_| r.random_range(-3..1000)).unwrap();
        let mut host_grid = HostGrid::new(shape).unwrap();
        let mut h = (Sum(0.0), Min(0.0), Sum(0), Max(0u32));
        Stats3::apply_host((&mut h.0, &mut host_grid, &mut h.1, &mut h.2, &mut h.3), &u, &m).unwrap();
        for config in configs(3) {
            let mut grid = DeviceGrid::new(&dev, shape).unwrap();
            let (mut s, mut mn, mut si, mut mx) =
                (Reduction::new(), Reduction::new(), Reduction::new(), Reduction::new());
            let (du, dm) = (up(&u), up(&m));
            let what = format!("{shape} {config:?}");
            for repeat in 0..2 {
                Stats3::launch(&config, (&mut s, &mut grid, &mut mn, &mut si, &mut mx), &du, &dm)
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                let sum = s.value().unwrap();
                assert!(
                    (sum - h.0 .0).abs() <= 1e-12 * h.0 .0.abs().max(1.0),
                    "{what}: sum {sum} vs host {}",
                    h.0 .0
                );
                assert_eq!(mn.value().unwrap().to_bits(), h.1 .0.to_bits(), "{what}: min");
                assert_eq!(si.value().unwrap(), h.2 .0, "{what}: integer sum");
                assert_eq!(mx.value().unwrap(), h.3 .0, "{what}: max");
                if repeat == 1 {
                    // A launch's fold order is fixed: the same bits every time.
                    assert_eq!(sum.to_bits(), s.value().unwrap().to_bits());
                }
            }
            assert_eq!(grid.to_host().unwrap().data(), host_grid.data(), "{what}: grid");
        }
    }
}

#[test]
fn a_reduction_alone_counts_the_updated_points_only() {
    for (i, &shape) in shapes(1).iter().enumerate() {
        let u = random_f32(shape, &mut rng(1000 + i as u64), -1.0, 1.0);
        let mut host = Sum(1.0f32);
        Total::apply_host(&mut host, &u).unwrap();
        for config in configs(1) {
            let mut s = Reduction::new();
            Total::launch(&config, &mut s, &up(&u)).unwrap();
            let got = s.value().unwrap();
            assert!((got - host.0).abs() <= 1e-5, "{shape} {config:?}: {got} vs {}", host.0);
        }
        // The telescoping sum is u[0] + u[1] - u[n-2] - u[n-1]: only updated points count.
        if shape.len() >= 3 {
            let d = u.data();
            let n = d.len();
            assert!((host.0 - (d[0] + d[1] - d[n - 2] - d[n - 1])).abs() < 1e-4);
        } else {
            assert_eq!(host.0, 0.0);
        }
    }
    // Read before any launch: an error, not a value.
    assert!(Reduction::<Sum<f32>>::new().value().is_err());
}

/// Split over 2 and 3 slabs: the same maximum (and integer sum) as one device.
#[test]
fn split_reductions_equal_one_device() {
    let dev = device();
    let shape = Shape::d2(31, 45);
    let (u, f) = jacobi_case(shape, &mut rng(11), false);
    let mut one = Reduction::new();
    let mut out = DeviceGrid::new(&dev, shape).unwrap();
    JacobiChecked::launch(&LaunchConfig::default(), (&mut out, &mut one), &up(&u), &up(&f), 0.01).unwrap();
    let want = one.value().unwrap();
    for parts in [2, 3] {
        let devices = Devices::new(vec![dev.clone(); parts]).unwrap();
        let plan = JacobiChecked::plan(&devices, &LaunchConfig::default(), shape).unwrap();
        let mut out = SplitGrid::new(&devices, shape).unwrap();
        let mut change = Reduction::new();
        let (su, sf) = (
            SplitGrid::from_host(&devices, &u).unwrap(),
            SplitGrid::from_host(&devices, &f).unwrap(),
        );
        JacobiChecked::launch_plan(&plan, (&mut out, &mut change), &su, &sf, 0.01).unwrap();
        assert_eq!(change.value().unwrap().to_bits(), want.to_bits(), "{parts} slabs");
        assert_eq!(
            out.to_host().unwrap().data(),
            self::out_host(&u, &f).data(),
            "{parts} slabs grid"
        );
    }
}

fn out_host(u: &HostGrid<f32>, f: &HostGrid<f32>) -> HostGrid<f32> {
    let mut g = u.clone();
    JacobiChecked::apply_host((&mut g, &mut Max(0.0)), u, f, 0.01).unwrap();
    g
}

#[test]
fn reductions_refuse_temporal_blocking() {
    let err = JacobiChecked::plan(&device(), &LaunchConfig::variant(Variant::Steps), Shape::d2(8, 8)).unwrap_err();
    assert!(err.to_string().contains("reduction"), "{err}");
}

/// Counts the points it updates, and sums their indices: on split grids, only each slab's own
/// planes count (not its halos).
#[clforge::stencil(boundary = periodic)]
fn counted(u: &Grid3<f32>, at: Point) -> (f32, Sum<i32>, Sum<i32>) {
    (u.at(0, 0, 1), Sum(1), Sum(at.x + 7 * at.y + 31 * at.z))
}

#[test]
fn split_reductions_count_each_point_once() {
    let dev = device();
    for shape in [Shape::d3(5, 4, 40), Shape::d3(13, 3, 37)] {
        let u = random_f32(shape, &mut rng(12), -1.0, 1.0);
        let mut host = (HostGrid::new(shape).unwrap(), Sum(0), Sum(0));
        Counted::apply_host((&mut host.0, &mut host.1, &mut host.2), &u).unwrap();
        assert_eq!(host.1 .0 as usize, shape.len());
        for parts in [1, 2, 3] {
            for config in configs(3) {
                let devices = Devices::new(vec![dev.clone(); parts]).unwrap().periodic(true);
                let plan = Counted::plan(&devices, &config, shape).unwrap();
                let mut out = SplitGrid::new(&devices, shape).unwrap();
                let (mut n, mut s) = (Reduction::new(), Reduction::new());
                let su = SplitGrid::from_host(&devices, &u).unwrap();
                Counted::launch_plan(&plan, (&mut out, &mut n, &mut s), &su).unwrap();
                let what = format!("{shape} over {parts} {config:?}");
                assert_eq!(n.value().unwrap(), host.1 .0, "{what}: points counted");
                assert_eq!(s.value().unwrap(), host.2 .0, "{what}: index sum");
                assert_eq!(out.to_host().unwrap().data(), host.0.data(), "{what}: grid");
            }
        }
    }
}

/// Many work-groups (more than the fold's first pass takes in one group): the two-pass fold
/// gives the host's count and index sum.
#[test]
fn many_groups_fold_in_two_passes() {
    let dev = device();
    let shape = Shape::d3(256, 64, 40);
    let u = HostGrid::<f32>::new(shape).unwrap();
    let mut host = (HostGrid::new(shape).unwrap(), Sum(0), Sum(0));
    Counted::apply_host((&mut host.0, &mut host.1, &mut host.2), &u).unwrap();
    for config in [
        LaunchConfig::variant(Variant::Plain),
        LaunchConfig::variant(Variant::Vector),
    ] {
        let mut out = DeviceGrid::new(&dev, shape).unwrap();
        let (mut n, mut s) = (Reduction::new(), Reduction::new());
        Counted::launch(&config, (&mut out, &mut n, &mut s), &up(&u)).unwrap();
        assert_eq!(n.value().unwrap(), host.1 .0, "{config:?}: points counted");
        assert_eq!(s.value().unwrap(), host.2 .0, "{config:?}: index sum");
    }
}

/// An f64 sum alone, each point's own value.
#[clforge::stencil]
fn total64(u: &Grid1<f64>) -> Sum<f64> {
    Sum(u.at(0))
}

/// A fused sum of values anywhere in f64's range (subnormal ones included) equals the host's
/// fold within the rounding of a sum: the reduction neither flushes small values nor loses large
/// ones.
#[test]
fn sums_at_every_scale_equal_the_host() {
    let dev = device();
    let shape = Shape::d1(1000);
    for (i, s) in [1e-310, 1e-300, 1e-150, 1.0, 1e150, 1e300].into_iter().enumerate() {
        let mut r = rng(900 + i as u64);
        let u = HostGrid::from_fn(shape, |_| r.random_range(-1.0..1.0) * s).unwrap();
        let mut host = Sum(0.0f64);
        Total64::apply_host(&mut host, &u).unwrap();
        let magnitude: f64 = u.data().iter().map(|v| v.abs()).sum();
        for config in configs(1) {
            let mut sum = Reduction::new();
            Total64::launch(&config, &mut sum, &dev.upload(&u).unwrap()).unwrap();
            let got = sum.value().unwrap();
            let tol = 1e3 * f64::EPSILON * magnitude + 1e-323;
            assert!(
                (got - host.0).abs() <= tol,
                "scale {s:e} {config:?}: device {got:e}, host {:e}",
                host.0
            );
        }
    }
}
