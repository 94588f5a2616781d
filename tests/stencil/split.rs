//! Several devices in one host: a stencil on a grid split into slabs over
//! `Devices` gives the single device's bits, for every variant, boundary, halo width, depth,
//! uneven split and number of slabs, in 1-D, 2-D and 3-D; misuse is a typed error. On PoCL the
//! "devices" are the one CPU device several times (each slab its own grid and launches, halos
//! through the host as between GPUs).

use crate::common;

use clforge::prelude::*;
use clforge::runtime::Scalar;
use common::rng;
use rand::Rng;
use std::result::Result as Std;

#[derive(clforge::Params, Clone, Copy, Debug)]
struct Weights {
    a: f32,
    b: f32,
}

/// Jacobi with a right-hand side: halo 1, reads two grids and a params struct.
#[clforge::stencil]
fn jacobi(u: &Grid<f32>, f: &Grid<f32>, k: &Weights) -> f32 {
    k.a * (u.at(1, 0) + u.at(-1, 0) + u.at(0, 1) + u.at(0, -1)) + k.b * f.at(0, 0)
}

/// As `jacobi`, with `u` named the iterated state (temporal blocking).
#[clforge::stencil(state = u)]
fn jacobi_state(u: &Grid<f32>, f: &Grid<f32>, k: &Weights) -> f32 {
    k.a * (u.at(1, 0) + u.at(-1, 0) + u.at(0, 1) + u.at(0, -1)) + k.b * f.at(0, 0)
}

#[clforge::stencil(boundary = clamp, state = u)]
fn jacobi_clamp(u: &Grid<f32>, f: &Grid<f32>, k: &Weights) -> f32 {
    k.a * (u.at(1, 0) + u.at(-1, 0) + u.at(0, 1) + u.at(0, -1)) + k.b * f.at(0, 0)
}

#[clforge::stencil(boundary = periodic, state = u)]
fn jacobi_periodic(u: &Grid<f32>, f: &Grid<f32>, k: &Weights) -> f32 {
    k.a * (u.at(1, 0) + u.at(-1, 0) + u.at(0, 1) + u.at(0, -1)) + k.b * f.at(0, 0)
}

/// Halo 2 along the split axis, 1 along x; a scalar argument.
#[clforge::stencil(boundary = clamp)]
fn wide(u: &Grid<f32>, s: f32) -> f32 {
    s * (u.at(0, 2) - 2.0 * u.at(0, 0) + u.at(0, -2)) + 0.5 * (u.at(1, 0) + u.at(-1, 1)) + u.at(0, -1)
}

#[clforge::stencil]
fn heat3(u: &Grid3<f32>) -> f32 {
    u.at(0, 0, 0)
        + 0.1
            * (u.at(1, 0, 0) + u.at(-1, 0, 0) + u.at(0, 1, 0) + u.at(0, -1, 0) + u.at(0, 0, 1) + u.at(0, 0, -1)
                - 6.0 * u.at(0, 0, 0))
}

#[clforge::stencil(boundary = periodic)]
fn heat3_periodic(u: &Grid3<f32>) -> f32 {
    u.at(0, 0, 0) + 0.1 * (u.at(1, 1, 0) + u.at(-1, 0, -1) + u.at(0, -1, 1) - 3.0 * u.at(0, 0, 0))
}

#[clforge::stencil(boundary = clamp)]
fn smooth1(u: &Grid1<f64>) -> f64 {
    0.25 * u.at(-1) + 0.5 * u.at(0) + 0.25 * u.at(3)
}

fn device() -> Device {
    common::device()
}

fn same_bits<T: Scalar + std::fmt::Debug>(
    a: &HostGrid<T>,
    b: &HostGrid<T>,
    bits: impl Fn(T) -> u64,
) -> Std<(), String> {
    match a.data().iter().zip(b.data()).position(|(x, y)| bits(*x) != bits(*y)) {
        None => Ok(()),
        Some(i) => Err(format!(
            "point {i}: split {:?}, one device {:?}",
            a.data()[i],
            b.data()[i]
        )),
    }
}

/// Random values with NaN, ±inf and the largest finite value sprinkled in.
fn field(shape: Shape, seed: u64) -> HostGrid<f32> {
    let mut r = rng(seed);
    HostGrid::from_fn(shape, |_| match r.random_range(0..200) {
        0 => f32::NAN,
        1 => f32::INFINITY,
        2 => f32::NEG_INFINITY,
        3 => f32::MAX,
        _ => r.random_range(-1.0..1.0),
    })
    .unwrap()
}

/// `steps` launches of the 2-D Jacobi stencils on one device and split over `devices`, with
/// `config`; the states must have the same bits after every launch.
fn jacobi_parity(devices: &Devices, shape: Shape, config: &LaunchConfig, steps: usize) -> Std<(), String> {
    let dev = device();
    let (u0, f) = (field(shape, 1), field(shape, 2));
    let k = Weights { a: 0.25, b: -0.01 };
    let run = |boundary: Boundary| -> Std<(), String> {
        let periodic = boundary == Boundary::Periodic;
        let devices = devices.clone().periodic(periodic);
        let mut one = PingPong::from_host(&dev, &u0).map_err(|e| e.to_string())?;
        let mut many = PingPong::from_host(&devices, &u0).map_err(|e| e.to_string())?;
        let (f1, fs) = (dev.upload(&f).unwrap(), devices.upload(&f).unwrap());
        macro_rules! go {
            ($s:ty) => {{
                let p1 = <$s>::plan(&dev, config, shape).map_err(|e| e.to_string())?;
                let ps = <$s>::plan(&devices, config, shape).map_err(|e| e.to_string())?;
                for step in 0..steps {
                    let (n, c) = one.split();
                    <$s>::launch_plan(&p1, n, c, &f1, &k).unwrap();
                    one.swap();
                    let (n, c) = many.split();
                    <$s>::launch_plan(&ps, n, c, &fs, &k).unwrap();
                    many.swap();
                    same_bits(
                        &many.current().to_host().unwrap(),
                        &one.current().to_host().unwrap(),
                        |v| u64::from(v.to_bits()),
                    )
                    .map_err(|e| format!("{boundary:?}, launch {step}: {e}"))?;
                }
            }};
        }
        match boundary {
            Boundary::Fixed => go!(JacobiState),
            Boundary::Clamp => go!(JacobiClamp),
            Boundary::Periodic => go!(JacobiPeriodic),
        }
        Ok(())
    };
    for b in [Boundary::Fixed, Boundary::Clamp, Boundary::Periodic] {
        run(b)?;
    }
    Ok(())
}

#[test]
fn a_split_jacobi_gives_the_single_device_bits_for_every_variant_and_boundary() {
    let d = device();
    let shape = Shape::d2(37, 29);
    for parts in [1, 2, 3, 4] {
        let devices = Devices::new(vec![d.clone(); parts]).unwrap().depth(3).unwrap();
        // temporal blocking too: 3 steps per launch fit the depth of 3, wrapped and clamped
        // tile points included
        let steps = LaunchConfig::steps(3, Tile { x: 8, y: 8, rows: 2 });
        for config in common::configs(2).into_iter().chain([steps]) {
            jacobi_parity(&devices, shape, &config, 7).unwrap_or_else(|e| panic!("{parts} slabs, {config:?}: {e}"));
        }
    }
}

#[test]
fn overlapped_exchanges_are_taken_where_kernels_allow_and_give_the_same_bits() {
    let d = device();
    let shape = Shape::d2(31, 43);
    let two = Devices::new(vec![d.clone(); 2]).unwrap().depth(4).unwrap();
    // Which kernels overlap: those launched over a range of planes by global id.
    let plan = |devices: &Devices, config: &LaunchConfig| JacobiState::plan(devices, config, shape).unwrap();
    let points = LaunchConfig {
        points: Some(3),
        ..LaunchConfig::variant(Variant::Plain)
    };
    for (config, overlaps) in [
        (LaunchConfig::variant(Variant::Plain), true),
        (LaunchConfig::variant(Variant::Vector), true),
        (points.clone(), true),
        (LaunchConfig::variant(Variant::Tiled), false),
        (LaunchConfig::steps(2, Tile { x: 8, y: 8, rows: 2 }), false),
    ] {
        assert_eq!(plan(&two, &config).overlaps(), overlaps, "{config:?}");
        assert!(!plan(&two.clone().overlap(false), &config).overlaps(), "{config:?}");
    }
    let one = Devices::new(vec![d.clone()]).unwrap();
    assert!(!plan(&one, &LaunchConfig::default()).overlaps());
    let heat = |config: &LaunchConfig| Heat3::plan(&two, config, Shape::d3(8, 9, 20)).unwrap().overlaps();
    assert!(heat(&LaunchConfig::variant(Variant::Tiled)));
    // the march kernel's work-groups start MARCH_Z planes apart, by global id: ranges of them
    assert!(heat(&LaunchConfig::march(Tile { x: 8, y: 4, rows: 2 }, 3)));
    // Overlapped and exchange-first launches give one device's bits: slabs from 2 to 40
    // planes (an interior that is empty, thin or wide), depths whose exchanges keep 0 to 3
    // current planes, 1 and 3 points per work-item.
    for (weights, depth) in [(vec![1.0, 1.0], 1), (vec![1.0, 9.0, 1.0], 4), (vec![4.0, 1.0], 7)] {
        for overlap in [true, false] {
            let devices = Devices::new(vec![d.clone(); weights.len()])
                .unwrap()
                .with_weights(&weights)
                .unwrap()
                .depth(depth)
                .unwrap()
                .overlap(overlap);
            for config in [LaunchConfig::default(), points.clone()] {
                jacobi_parity(&devices, shape, &config, 2 * depth + 3).unwrap_or_else(|e| {
                    panic!("weights {weights:?}, depth {depth}, overlap {overlap}, {config:?}: {e}")
                });
            }
        }
    }
}

#[test]
fn uneven_splits_and_every_depth_give_the_same_bits() {
    let d = device();
    let shape = Shape::d2(19, 41);
    for (weights, depth) in [
        (vec![1.0, 3.0], 1),
        (vec![2.0, 1.0, 1.0], 2),
        (vec![1.0, 5.0, 2.0], 5),
        (vec![3.0, 1.0], 8),
    ] {
        let devices = Devices::new(vec![d.clone(); weights.len()])
            .unwrap()
            .with_weights(&weights)
            .unwrap()
            .depth(depth)
            .unwrap();
        jacobi_parity(&devices, shape, &LaunchConfig::default(), 2 * depth + 3)
            .unwrap_or_else(|e| panic!("weights {weights:?}, depth {depth}: {e}"));
    }
}

#[test]
fn temporal_blocking_needs_and_gets_halo_times_steps() {
    let d = device();
    let shape = Shape::d2(40, 48);
    let steps = LaunchConfig::steps(3, Tile { x: 16, y: 8, rows: 4 });
    let devices = Devices::new(vec![d.clone(); 3]).unwrap().depth(6).unwrap();
    let dev = device();
    let (u0, f) = (field(shape, 3), field(shape, 4));
    let k = Weights { a: 0.25, b: 0.5 };
    let mut one = PingPong::from_host(&dev, &u0).unwrap();
    let mut many = PingPong::from_host(&devices, &u0).unwrap();
    let (f1, fs) = (dev.upload(&f).unwrap(), devices.upload(&f).unwrap());
    let p1 = JacobiState::plan(&dev, &steps, shape).unwrap();
    let ps = JacobiState::plan(&devices, &steps, shape).unwrap();
    for step in 0..5 {
        let (n, c) = one.split();
        JacobiState::launch_plan(&p1, n, c, &f1, &k).unwrap();
        one.swap();
        let (n, c) = many.split();
        JacobiState::launch_plan(&ps, n, c, &fs, &k).unwrap();
        many.swap();
        same_bits(
            &many.current().to_host().unwrap(),
            &one.current().to_host().unwrap(),
            |v| u64::from(v.to_bits()),
        )
        .unwrap_or_else(|e| panic!("launch {step}: {e}"));
    }
    // Three steps per launch read 3 planes: a depth of 2 is refused, naming the fix.
    let shallow = Devices::new(vec![d; 2]).unwrap().depth(2).unwrap();
    let err = JacobiState::plan(&shallow, &steps, shape).unwrap_err();
    assert!(err.to_string().contains("Devices::depth(3)"), "{err}");
}

/// The march kernel (2.5-D blocking) on slabs split along z, its exchanges overlapped with
/// ranges of its work-groups (each `MARCH_Z` planes, by global id and offset): one device's bits
/// at every launch, fixed and periodic, 2 to 4 slabs, depths 1 and 2. Finite input, so that no
/// NaN spreads over the grid and hides a plane left unwritten.
#[test]
fn split_march_with_overlapped_exchanges_gives_the_single_device_bits() {
    let d = device();
    let shape = Shape::d3(9, 7, 20);
    let mut r = rng(31);
    let u0 = HostGrid::from_fn(shape, |_| r.random_range(-1.0f32..1.0)).unwrap();
    for (periodic, parts, depth) in [(false, 2, 1), (true, 3, 2), (false, 4, 2)] {
        let devices = Devices::new(vec![d.clone(); parts])
            .unwrap()
            .depth(depth)
            .unwrap()
            .periodic(periodic);
        for config in [
            LaunchConfig::march(Tile { x: 8, y: 4, rows: 2 }, 3),
            LaunchConfig::variant(Variant::March),
        ] {
            let mut one = PingPong::from_host(&d, &u0).unwrap();
            let mut many = PingPong::from_host(&devices, &u0).unwrap();
            for step in 0..4 {
                let (n, c) = one.split();
                let (m, s) = many.split();
                if periodic {
                    Heat3Periodic::launch_plan(&Heat3Periodic::plan(&d, &config, shape).unwrap(), n, c).unwrap();
                    let plan = Heat3Periodic::plan(&devices, &config, shape).unwrap();
                    assert!(plan.overlaps(), "{config:?}");
                    Heat3Periodic::launch_plan(&plan, m, s).unwrap();
                } else {
                    Heat3::launch_plan(&Heat3::plan(&d, &config, shape).unwrap(), n, c).unwrap();
                    let plan = Heat3::plan(&devices, &config, shape).unwrap();
                    assert!(plan.overlaps(), "{config:?}");
                    Heat3::launch_plan(&plan, m, s).unwrap();
                }
                one.swap();
                many.swap();
                let (got, want) = (many.current().to_host().unwrap(), one.current().to_host().unwrap());
                assert!(want.data().iter().all(|v| v.is_finite()));
                same_bits(&got, &want, |v| u64::from(v.to_bits())).unwrap_or_else(|e| {
                    panic!("periodic {periodic}, {parts} slabs, depth {depth}, {config:?}, launch {step}: {e}")
                });
            }
        }
    }
}

#[test]
fn halo_two_with_a_scalar_and_3d_and_1d_grids_split_alike() {
    let d = device();
    // Halo 2 along y, depths 2 and 5.
    let shape = Shape::d2(23, 31);
    for depth in [2, 5] {
        let devices = Devices::new(vec![d.clone(); 3]).unwrap().depth(depth).unwrap();
        let mut one = PingPong::from_host(&d, &field(shape, 5)).unwrap();
        let mut many = PingPong::from_host(&devices, &field(shape, 5)).unwrap();
        let p1 = Wide::plan(&d, &LaunchConfig::default(), shape).unwrap();
        let ps = Wide::plan(&devices, &LaunchConfig::default(), shape).unwrap();
        for step in 0..6 {
            let (n, c) = one.split();
            Wide::launch_plan(&p1, n, c, 0.3).unwrap();
            one.swap();
            let (n, c) = many.split();
            Wide::enqueue_plan(&ps, n, c, 0.3).unwrap();
            many.swap();
            same_bits(
                &many.current().to_host().unwrap(),
                &one.current().to_host().unwrap(),
                |v| u64::from(v.to_bits()),
            )
            .unwrap_or_else(|e| panic!("depth {depth}, launch {step}: {e}"));
        }
    }
    // 3-D, split along z: fixed and periodic (edges and corners of the slabs included).
    let shape = Shape::d3(9, 7, 20);
    for (periodic, parts) in [(false, 2), (true, 3), (false, 4)] {
        let devices = Devices::new(vec![d.clone(); parts])
            .unwrap()
            .depth(2)
            .unwrap()
            .periodic(periodic);
        let mut one = PingPong::from_host(&d, &field(shape, 6)).unwrap();
        let mut many = PingPong::from_host(&devices, &field(shape, 6)).unwrap();
        // temporal blocking too: 2 steps per launch in tiles 4 deep along z, at depth 2
        let steps = LaunchConfig::steps(2, Tile { x: 8, y: 4, rows: 2 });
        for config in common::configs(3).into_iter().chain([steps]) {
            for step in 0..4 {
                let (n, c) = one.split();
                let (m, s) = many.split();
                if periodic {
                    Heat3Periodic::launch_plan(&Heat3Periodic::plan(&d, &config, shape).unwrap(), n, c).unwrap();
                    Heat3Periodic::launch_plan(&Heat3Periodic::plan(&devices, &config, shape).unwrap(), m, s).unwrap();
                } else {
                    Heat3::launch_plan(&Heat3::plan(&d, &config, shape).unwrap(), n, c).unwrap();
                    Heat3::launch_plan(&Heat3::plan(&devices, &config, shape).unwrap(), m, s).unwrap();
                }
                one.swap();
                many.swap();
                same_bits(
                    &many.current().to_host().unwrap(),
                    &one.current().to_host().unwrap(),
                    |v| u64::from(v.to_bits()),
                )
                .unwrap_or_else(|e| panic!("3-D periodic {periodic}, {parts} slabs, {config:?}, launch {step}: {e}"));
            }
        }
    }
    // 1-D in f64, reach 3 to one side.
    let shape = Shape::d1(50);
    let devices = Devices::new(vec![d.clone(); 3]).unwrap().depth(3).unwrap();
    let u0 = HostGrid::from_fn(shape, |[x, _, _]| (x as f64 * 0.37).sin()).unwrap();
    let mut one = PingPong::from_host(&d, &u0).unwrap();
    let mut many = PingPong::from_host(&devices, &u0).unwrap();
    let (p1, ps) = (
        Smooth1::plan(&d, &LaunchConfig::default(), shape).unwrap(),
        Smooth1::plan(&devices, &LaunchConfig::default(), shape).unwrap(),
    );
    for step in 0..9 {
        let (n, c) = one.split();
        Smooth1::launch_plan(&p1, n, c).unwrap();
        one.swap();
        let (n, c) = many.split();
        Smooth1::launch_plan(&ps, n, c).unwrap();
        many.swap();
        same_bits(
            &many.current().to_host().unwrap(),
            &one.current().to_host().unwrap(),
            f64::to_bits,
        )
        .unwrap_or_else(|e| panic!("1-D launch {step}: {e}"));
    }
}

#[test]
fn misuse_of_split_devices_is_a_typed_error() {
    let d = device();
    // No devices.
    assert!(matches!(Devices::new(vec![]), Err(Error::InvalidConfig(_))));
    // Weights: one per device, positive and finite.
    let two = Devices::new(vec![d.clone(); 2]).unwrap();
    assert!(matches!(
        two.clone().with_weights(&[1.0]),
        Err(Error::LengthMismatch {
            expected: 2,
            found: 1,
            ..
        })
    ));
    assert!(two.clone().with_weights(&[1.0, f64::NAN]).is_err());
    assert!(two.clone().with_weights(&[1.0, 0.0]).is_err());
    assert!(two.clone().depth(0).is_err());
    // A slab thinner than its halo.
    let err = SplitGrid::<f32>::new(&two.clone().depth(8).unwrap(), Shape::d2(8, 10)).unwrap_err();
    assert!(err.to_string().contains("at least 8"), "{err}");
    // Periodic stencils need a periodic split, others refuse one.
    let shape = Shape::d2(16, 16);
    let err = JacobiPeriodic::plan(&two, &LaunchConfig::default(), shape).unwrap_err();
    assert!(err.to_string().contains("Devices::periodic(true)"), "{err}");
    let err = Jacobi::plan(&two.clone().periodic(true), &LaunchConfig::default(), shape).unwrap_err();
    assert!(err.to_string().contains("periodic(false)"), "{err}");
    // Grids split differently from the plan.
    let shape = Shape::d2(16, 48);
    let plan = Jacobi::plan(&two, &LaunchConfig::default(), shape).unwrap();
    let uneven = two.clone().with_weights(&[1.0, 2.0]).unwrap();
    let u = uneven.zeros::<f32>(shape).unwrap();
    let f = two.zeros::<f32>(shape).unwrap();
    let mut out = two.zeros::<f32>(shape).unwrap();
    let err = Jacobi::launch_plan(&plan, &mut out, &u, &f, &Weights { a: 1.0, b: 1.0 }).unwrap_err();
    assert!(err.to_string().contains("grid `u`"), "{err}");
    // A host grid of another shape.
    let mut g = two.zeros::<f32>(shape).unwrap();
    assert!(g.upload(&HostGrid::new(Shape::d2(16, 47)).unwrap()).is_err());
}

/// Shares from measured copy rates: positive, one per device, and a plan on them works.
#[test]
fn measured_shares_are_rates() {
    let d = device();
    let devices = Devices::new(vec![d.clone(); 2]).unwrap().measured(1 << 20).unwrap();
    assert!(
        devices.weights().iter().all(|&w| w.is_finite() && w > 0.0),
        "{:?}",
        devices.weights()
    );
    jacobi_parity(&devices, Shape::d2(24, 40), &LaunchConfig::default(), 3).unwrap();
}

/// Grids made with one halo depth and a plan made with another are split alike plane for plane:
/// the refusal names the depths, not two identical splits.
#[test]
fn grids_and_a_plan_of_different_halo_depths_are_refused_naming_the_depths() {
    let d = device();
    let shape = Shape::d2(24, 20);
    let deep = Devices::new(vec![d.clone(); 2]).unwrap().depth(3).unwrap();
    let shallow = Devices::new(vec![d.clone(); 2]).unwrap().depth(2).unwrap();
    let u0 = field(shape, 1);
    let mut grids = PingPong::from_host(&deep, &u0).unwrap();
    let f = deep.upload(&field(shape, 2)).unwrap();
    let plan = JacobiState::plan(&shallow, &LaunchConfig::default(), shape).unwrap();
    let (n, c) = grids.split();
    let err = JacobiState::launch_plan(&plan, n, c, &f, &Weights { a: 0.25, b: 0.0 })
        .unwrap_err()
        .to_string();
    assert!(err.contains("3 planes deep") && err.contains("needs 2"), "{err}");
}
