//! Systems of fields: a stencil that returns a tuple writes one grid per element in one
//! kernel. Every variant equals the Rust function bit for bit (NaN for NaN), on one device
//! and split over several; a Gray-Scott run matches its host reference step by step.

use crate::{common, kernels};

use clforge::prelude::*;
use clforge::runtime::Devices;
use common::*;
use kernels::gray_scott::{GrayScott, Gs};
use rand::Rng;

/// Three outputs of three types, the tuple chosen by `if` and `match` (each branch ends in
/// one), a clamped 3-D neighbourhood.
#[clforge::stencil(boundary = clamp)]
fn mixed_system(a: &Grid3<f64>, m: &Grid3<u8>, s: f64) -> (f64, u8, i32) {
    let grad = a.at(1, 0, 0) - a.at(-1, 0, 0) + a.at(0, 0, 1) - a.at(0, -1, 0);
    if grad > s {
        (grad * 0.5, m.at(0, 0, 0) + 1, 1)
    } else {
        match m.at(0, 0, 0) {
            0 => (a.at(0, 0, 0), 7, -1),
            1 | 2 => {
                let h = a.at(0, 1, 0) * s;
                (h, m.at(0, 0, -1), 2)
            }
            _ => (-grad, 0, (grad * 10.0) as i32),
        }
    }
}

/// A first-order wave system on a fixed 1-D string: `u' = v`, `v' = c² u_xx`, two outputs
/// of one kernel.
#[clforge::stencil]
fn wave_uv(u: &Grid1<f32>, v: &Grid1<f32>, c2dt: f32, dt: f32) -> (f32, f32) {
    let vn = v.at(0) + c2dt * (u.at(1) - 2.0 * u.at(0) + u.at(-1));
    (u.at(0) + dt * vn, vn)
}

const GS: Gs = Gs {
    du: 0.16,
    dv: 0.08,
    feed: 0.035,
    kill: 0.065,
    dt: 1.0,
};

#[test]
fn gray_scott_equals_host_in_every_variant() {
    let dev = device();
    for (i, &shape) in shapes(2).iter().enumerate() {
        for config in configs(2) {
            let mut r = rng(40 + i as u64);
            let u = wild_f32(shape, &mut r, 0.0, 1.0);
            let v = wild_f32(shape, &mut r, 0.0, 1.0);
            let (mut hu, mut hv) = (u.clone(), v.clone());
            GrayScott::apply_host((&mut hu, &mut hv), &u, &v, &GS).unwrap();
            let mut du = DeviceGrid::new(&dev, shape).unwrap();
            let mut dv = DeviceGrid::new(&dev, shape).unwrap();
            GrayScott::launch(&config, (&mut du, &mut dv), &up(&u), &up(&v), &GS)
                .unwrap_or_else(|e| panic!("{shape} {config:?}: {e}"));
            same(&format!("u on {shape} {config:?}"), &du.to_host().unwrap(), &hu);
            same(&format!("v on {shape} {config:?}"), &dv.to_host().unwrap(), &hv);
        }
    }
}

#[test]
fn mixed_types_and_branching_tuples_equal_host() {
    let dev = device();
    for (i, &shape) in shapes(3).iter().enumerate() {
        for config in configs(3) {
            let mut r = rng(70 + i as u64);
            let a = random_f64(shape, &mut r, -1.0, 1.0);
            let m = HostGrid::from_fn(shape, |_| r.random_range(0..4u8)).unwrap();
            let mut h = (
                HostGrid::new(shape).unwrap(),
                HostGrid::new(shape).unwrap(),
                HostGrid::new(shape).unwrap(),
            );
            MixedSystem::apply_host((&mut h.0, &mut h.1, &mut h.2), &a, &m, 0.3).unwrap();
            let mut d0 = DeviceGrid::<f64>::new(&dev, shape).unwrap();
            let mut d1 = DeviceGrid::<u8>::new(&dev, shape).unwrap();
            let mut d2 = DeviceGrid::<i32>::new(&dev, shape).unwrap();
            MixedSystem::launch(&config, (&mut d0, &mut d1, &mut d2), &up(&a), &up(&m), 0.3)
                .unwrap_or_else(|e| panic!("{shape} {config:?}: {e}"));
            let what = format!("{shape} {config:?}");
            same(&format!("a {what}"), &d0.to_host().unwrap(), &h.0);
            assert_eq!(d1.to_host().unwrap().data(), h.1.data(), "m {what}");
            assert_eq!(d2.to_host().unwrap().data(), h.2.data(), "i {what}");
        }
    }
}

/// The wave system stepped with two ping-pong pairs: the device run equals the host run after
/// many steps (fixed ends keep their values), and the discrete energy stays near its start.
#[test]
fn wave_system_steps_equal_host_and_keep_energy() {
    let dev = device();
    let n = 301;
    let shape = Shape::d1(n);
    let (c, dx) = (1.0f32, 1.0 / (n - 1) as f32);
    let dt = 0.5 * dx / c;
    let c2dt = c * c * dt / (dx * dx);
    let u0 = HostGrid::from_fn(shape, |[x, _, _]| {
        let s = x as f32 * dx;
        (-((s - 0.5) / 0.05).powi(2)).exp()
    })
    .unwrap();
    let v0 = HostGrid::<f32>::new(shape).unwrap();
    let energy = |u: &HostGrid<f32>, v: &HostGrid<f32>| -> f64 {
        let (u, v) = (u.data(), v.data());
        (0..n - 1)
            .map(|i| {
                let ux = ((u[i + 1] - u[i]) / dx) as f64;
                0.5 * (v[i] as f64).powi(2) + 0.5 * (c as f64 * ux).powi(2)
            })
            .sum::<f64>()
            * dx as f64
    };
    let e0 = energy(&u0, &v0);
    for variant in [Variant::Plain, Variant::Vector, Variant::Tiled] {
        let config = LaunchConfig::variant(variant);
        let plan = WaveUv::plan(&dev, &config, shape).unwrap();
        let mut u = PingPong::from_host(&dev, &u0).unwrap();
        let mut v = PingPong::from_host(&dev, &v0).unwrap();
        let (mut hu, mut hv) = (u0.clone(), v0.clone());
        for _ in 0..400 {
            let (un, uc) = u.split();
            let (vn, vc) = v.split();
            WaveUv::enqueue_plan(&plan, (un, vn), uc, vc, c2dt, dt).unwrap();
            u.swap();
            v.swap();
            let (mut nu, mut nv) = (hu.clone(), hv.clone());
            WaveUv::apply_host((&mut nu, &mut nv), &hu, &hv, c2dt, dt).unwrap();
            (hu, hv) = (nu, nv);
        }
        same(&format!("u {variant:?}"), &u.current().to_host().unwrap(), &hu);
        same(&format!("v {variant:?}"), &v.current().to_host().unwrap(), &hv);
        let e = energy(&hu, &hv);
        assert!(
            (e - e0).abs() < 0.05 * e0,
            "{variant:?}: energy {e} drifted from {e0} (symplectic Euler keeps it within a few percent)"
        );
    }
}

/// Split over two devices (the default device twice): the same bits as one device.
#[test]
fn gray_scott_split_over_devices_equals_one_device() {
    let dev = device();
    let shape = Shape::d2(37, 29);
    let mut r = rng(5);
    let u0 = random_f32(shape, &mut r, 0.0, 1.0);
    let v0 = random_f32(shape, &mut r, 0.0, 0.5);
    let devices = Devices::new(vec![dev.clone(), dev.clone()]).unwrap().periodic(true);
    let config = LaunchConfig::variant(Variant::Plain);
    let one = GrayScott::plan(&dev, &config, shape).unwrap();
    let two = GrayScott::plan(&devices, &config, shape).unwrap();
    let mut u1 = PingPong::from_host(&dev, &u0).unwrap();
    let mut v1 = PingPong::from_host(&dev, &v0).unwrap();
    let mut u2 = PingPong::from_host(&devices, &u0).unwrap();
    let mut v2 = PingPong::from_host(&devices, &v0).unwrap();
    for _ in 0..5 {
        let ((un, uc), (vn, vc)) = (u1.split(), v1.split());
        GrayScott::launch_plan(&one, (un, vn), uc, vc, &GS).unwrap();
        let ((un, uc), (vn, vc)) = (u2.split(), v2.split());
        GrayScott::launch_plan(&two, (un, vn), uc, vc, &GS).unwrap();
        u1.swap();
        v1.swap();
        u2.swap();
        v2.swap();
    }
    same(
        "u split",
        &u2.current().to_host().unwrap(),
        &u1.current().to_host().unwrap(),
    );
    same(
        "v split",
        &v2.current().to_host().unwrap(),
        &v1.current().to_host().unwrap(),
    );
}

/// Misuse at run time: temporal blocking is not generated for systems; outputs of another
/// shape and outputs from another split are refused with the grid named.
#[test]
fn systems_refuse_steps_and_mismatched_outputs() {
    let dev = device();
    let shape = Shape::d2(16, 16);
    let u = DeviceGrid::<f32>::new(&dev, shape).unwrap();
    let v = DeviceGrid::<f32>::new(&dev, shape).unwrap();
    let mut a = DeviceGrid::<f32>::new(&dev, shape).unwrap();
    let mut b = DeviceGrid::<f32>::new(&dev, Shape::d2(16, 15)).unwrap();
    let err = GrayScott::plan(&dev, &LaunchConfig::variant(Variant::Steps), shape).unwrap_err();
    assert!(err.to_string().contains("2 outputs"), "{err}");
    let err = GrayScott::launch(&LaunchConfig::default(), (&mut a, &mut b), &u, &v, &GS).unwrap_err();
    assert!(err.to_string().contains("output 1"), "{err}");
    let devices = Devices::new(vec![dev.clone(), dev.clone()]).unwrap().periodic(true);
    let other = Devices::new(vec![dev.clone(), dev.clone()])
        .unwrap()
        .with_weights(&[3.0, 1.0])
        .unwrap()
        .periodic(true);
    let shape = Shape::d2(16, 40);
    let plan = GrayScott::plan(&devices, &LaunchConfig::default(), shape).unwrap();
    let su = SplitGrid::<f32>::new(&devices, shape).unwrap();
    let sv = SplitGrid::<f32>::new(&devices, shape).unwrap();
    let mut sa = SplitGrid::<f32>::new(&devices, shape).unwrap();
    let mut sb = SplitGrid::<f32>::new(&other, shape).unwrap();
    let err = GrayScott::launch_plan(&plan, (&mut sa, &mut sb), &su, &sv, &GS).unwrap_err();
    assert!(
        err.to_string().contains("output 1") && err.to_string().contains("split as"),
        "{err}"
    );
    let mut sb = SplitGrid::<f32>::new(&devices, shape).unwrap();
    GrayScott::launch_plan(&plan, (&mut sa, &mut sb), &su, &sv, &GS).unwrap();
}

/// Leapfrog for the wave equation: reads two time levels (`u^n`, `u^{n-1}`).
#[clforge::stencil]
fn leapfrog(u: &Grid<f64>, u_old: &Grid<f64>, r2: f64) -> f64 {
    2.0 * u.at(0, 0) - u_old.at(0, 0) + r2 * (u.at(1, 0) + u.at(-1, 0) + u.at(0, 1) + u.at(0, -1) - 4.0 * u.at(0, 0))
}

/// Leapfrog's discrete energy between levels `u0` and `u1` (edges of the grid, zero
/// boundary): conserved exactly by the scheme, up to round-off.
fn leapfrog_energy(u1: &HostGrid<f64>, u0: &HostGrid<f64>, r2: f64) -> f64 {
    let [nx, ny, _] = u1.shape().dims();
    let at = |g: &HostGrid<f64>, x: usize, y: usize| g.data()[x + nx * y];
    let mut kinetic = 0.0;
    let mut potential = 0.0;
    for y in 0..ny {
        for x in 0..nx {
            kinetic += (at(u1, x, y) - at(u0, x, y)).powi(2);
            if x + 1 < nx {
                potential += (at(u1, x + 1, y) - at(u1, x, y)) * (at(u0, x + 1, y) - at(u0, x, y));
            }
            if y + 1 < ny {
                potential += (at(u1, x, y + 1) - at(u1, x, y)) * (at(u0, x, y + 1) - at(u0, x, y));
            }
        }
    }
    0.5 * kinetic + 0.5 * r2 * potential
}

/// Three time levels through `Levels`: the device equals the host bit for bit after 300 steps
/// in every variant, and leapfrog's discrete energy is conserved to round-off.
#[test]
fn leapfrog_on_three_levels_equals_host_and_conserves_energy() {
    let dev = device();
    let shape = Shape::d2(45, 38);
    let r2 = 0.4;
    let bump = |x: usize, y: usize| {
        let (dx, dy) = (x as f64 - 20.0, y as f64 - 17.0);
        if x == 0 || y == 0 || x == 44 || y == 37 {
            0.0
        } else {
            (-(dx * dx + dy * dy) / 18.0).exp()
        }
    };
    let previous = HostGrid::from_fn(shape, |[x, y, _]| bump(x, y)).unwrap();
    let mut current = previous.clone();
    Leapfrog::apply_host(&mut current, &previous, &previous, r2 * 0.5).unwrap();
    let e0 = leapfrog_energy(&current, &previous, r2);
    for variant in [Variant::Plain, Variant::Vector, Variant::Tiled] {
        let plan = Leapfrog::plan(&dev, &LaunchConfig::variant(variant), shape).unwrap();
        let mut u = Levels::from_hosts(&dev, &[&previous, &current]).unwrap();
        assert_eq!(u.depth(), 2);
        let (mut h_old, mut h) = (previous.clone(), current.clone());
        for _ in 0..300 {
            let (next, past) = u.split();
            Leapfrog::enqueue_plan(&plan, next, &past[0], &past[1], r2).unwrap();
            u.rotate();
            let mut h_new = h.clone();
            Leapfrog::apply_host(&mut h_new, &h, &h_old, r2).unwrap();
            (h_old, h) = (h, h_new);
        }
        same(&format!("leapfrog {variant:?}"), &u.current().to_host().unwrap(), &h);
        let e = leapfrog_energy(&h, &h_old, r2);
        assert!(
            ((e - e0) / e0).abs() < 1e-10,
            "{variant:?}: leapfrog energy {e} drifted from {e0}"
        );
        // Something moved: the energy check is not of a standing grid.
        assert!(h.data().iter().zip(current.data()).any(|(a, b)| (a - b).abs() > 1e-3));
    }
}

#[test]
fn levels_refuse_no_state_and_mismatched_shapes() {
    let dev = device();
    let a = HostGrid::<f64>::new(Shape::d2(8, 8)).unwrap();
    let b = HostGrid::<f64>::new(Shape::d2(8, 9)).unwrap();
    let err = Levels::<f64>::from_hosts(&dev, &[]).unwrap_err();
    assert!(err.to_string().contains("at least one"), "{err}");
    let err = Levels::<f64>::from_hosts(&dev, &[&a, &b]).unwrap_err();
    assert!(err.to_string().contains("time level 0"), "{err}");
    let mut one = Levels::<f64>::from_hosts(&dev, &[&a]).unwrap();
    let (_, past) = one.split();
    assert_eq!((past.len(), past.get(1).is_none()), (1, true));
}

/// Three time levels split over devices: the same bits as one device.
#[test]
fn leapfrog_levels_on_devices_equal_one_device() {
    let dev = device();
    let shape = Shape::d2(21, 40);
    let mut r = rng(17);
    let previous = random_f64(shape, &mut r, -1.0, 1.0);
    let current = random_f64(shape, &mut r, -1.0, 1.0);
    let devices = Devices::new(vec![dev.clone(), dev.clone(), dev.clone()]).unwrap();
    let (one, split) = (
        Leapfrog::plan(&dev, &LaunchConfig::default(), shape).unwrap(),
        Leapfrog::plan(&devices, &LaunchConfig::default(), shape).unwrap(),
    );
    let mut a = Levels::from_hosts(&dev, &[&previous, &current]).unwrap();
    let mut b = Levels::from_hosts(&devices, &[&previous, &current]).unwrap();
    for _ in 0..30 {
        let (next, past) = a.split();
        Leapfrog::launch_plan(&one, next, &past[0], &past[1], 0.3).unwrap();
        a.rotate();
        let (next, past) = b.split();
        Leapfrog::launch_plan(&split, next, &past[0], &past[1], 0.3).unwrap();
        b.rotate();
    }
    same(
        "leapfrog on 3 devices",
        &b.current().to_host().unwrap(),
        &a.current().to_host().unwrap(),
    );
}
