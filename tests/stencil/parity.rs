//! Every generated kernel equals its Rust host function on random input, in every variant,
//! on sizes that are and are not multiples of the tile, down to 1-wide grids; the 3-D march
//! variant's own cases in `march.rs`; packed grids in `packed.rs`.

use crate::common;
use crate::kernels;

use clforge::prelude::*;
use common::*;
use kernels::*;
use rand::Rng;

#[test]
fn jacobi_matches_host() {
    use jacobi::*;
    parity("jacobi", &shapes(2), 1e-5, |shape, rng, config| {
        let psi = random_f32(shape, rng, -1.0, 1.0);
        let w = random_f32(shape, rng, -1.0, 1.0);
        let cell = HostGrid::from_fn(shape, |_| [FLUID, FLUID, OUTFLOW, BODY][rng.random_range(0..4)])?;
        let k = Coeffs {
            a: 0.3,
            b: 0.2,
            c: -0.01,
        };
        let mut host = psi.clone();
        Jacobi::apply_host(&mut host, &psi, &w, &cell, &k)?;
        let mut out = up(&psi);
        Jacobi::launch(config, &mut out, &up(&psi), &up(&w), &up(&cell), &k)?;
        Ok((out.to_host()?, host))
    });
}

#[test]
fn heat3d_matches_host() {
    use heat3d::*;
    parity("heat3d", &shapes(3), 1e-5, |shape, rng, config| {
        let u = random_f32(shape, rng, 0.0, 1.0);
        let mut host = u.clone();
        Heat3d::apply_host(&mut host, &u, 0.1)?;
        let mut out = up(&u);
        Heat3d::launch(config, &mut out, &up(&u), 0.1)?;
        Ok((out.to_host()?, host))
    });
}

#[test]
fn diffusion_f64_matches_host() {
    use diffusion_f64::*;
    parity("diffusion_f64", &shapes(2), 1e-12, |shape, rng, config| {
        let u = random_f64(shape, rng, -1.0, 1.0);
        let d = random_f64(shape, rng, 0.1, 2.0);
        let m = Material { dt: 0.01, inv_h2: 4.0 };
        let mut host = u.clone();
        DiffusionF64::apply_host(&mut host, &u, &d, &m)?;
        let mut out = up(&u);
        DiffusionF64::launch(config, &mut out, &up(&u), &up(&d), &m)?;
        Ok((out.to_host()?, host))
    });
}

#[test]
fn advect_periodic_matches_host() {
    use advect_periodic::*;
    for (cx, cy) in [(0.3f32, -0.2f32), (-0.4, 0.1)] {
        parity("advect_periodic", &shapes(2), 1e-5, |shape, rng, config| {
            let q = random_f32(shape, rng, 0.0, 1.0);
            let mut host = HostGrid::new(shape)?;
            AdvectPeriodic::apply_host(&mut host, &q, cx, cy)?;
            let mut out = DeviceGrid::new(&device(), shape)?;
            AdvectPeriodic::launch(config, &mut out, &up(&q), cx, cy)?;
            Ok((out.to_host()?, host))
        });
    }
}

#[test]
fn limiter_clamp_matches_host() {
    use limiter_clamp::*;
    parity("limiter_clamp", &shapes(1), 1e-5, |shape, rng, config| {
        let q = random_f32(shape, rng, 0.0, 1.0);
        let mut host = HostGrid::new(shape)?;
        LimiterClamp::apply_host(&mut host, &q)?;
        let mut out = DeviceGrid::new(&device(), shape)?;
        LimiterClamp::launch(config, &mut out, &up(&q))?;
        Ok((out.to_host()?, host))
    });
}

/// A periodic stencil updates every point, so every point of the output is written: start
/// the device output from NaN to prove it.
#[test]
fn periodic_stencils_write_every_point() {
    use advect_periodic::*;
    let shape = Shape::d2(19, 11);
    let q = random_f32(shape, &mut rng(7), 0.0, 1.0);
    for config in configs(2) {
        let mut out = up(&HostGrid::from_fn(shape, |_| f32::NAN).unwrap());
        AdvectPeriodic::launch(&config, &mut out, &up(&q), 0.5, 0.5).unwrap();
        assert!(
            out.to_host().unwrap().data().iter().all(|v| v.is_finite()),
            "{config:?}"
        );
    }
}

/// The temporally blocked kernel does `steps` iterations per launch; it equals `steps`
/// applications of the host function, also where the tile does not divide the grid.
#[test]
fn steps_variant_equals_repeated_host_steps() {
    use jacobi::*;
    let tiles = [Tile { x: 32, y: 32, rows: 4 }, Tile { x: 8, y: 8, rows: 2 }];
    for (i, shape) in [Shape::d2(1, 1), Shape::d2(3, 3), Shape::d2(40, 19), Shape::d2(100, 37)]
        .into_iter()
        .enumerate()
    {
        let mut r = rng(50 + i as u64);
        let psi = random_f32(shape, &mut r, -1.0, 1.0);
        let w = random_f32(shape, &mut r, -1.0, 1.0);
        let cell = HostGrid::from_fn(shape, |_| [FLUID, FLUID, FLUID, OUTFLOW, BODY][r.random_range(0..5)]).unwrap();
        let k = Coeffs {
            a: 0.25,
            b: 0.25,
            c: -0.01,
        };
        for tile in tiles {
            for steps in [1, 3, 6] {
                let mut host = psi.clone();
                for _ in 0..steps {
                    let mut next = host.clone();
                    Jacobi::apply_host(&mut next, &host, &w, &cell, &k).unwrap();
                    host = next;
                }
                let config = LaunchConfig::steps(steps, tile);
                assert_eq!(config.iterations(), steps);
                let mut out = up(&HostGrid::from_fn(shape, |p| psi.get(p).unwrap()).unwrap());
                Jacobi::launch(&config, &mut out, &up(&psi), &up(&w), &up(&cell), &k).unwrap();
                let err = rel_error(&out.to_host().unwrap(), &host);
                assert!(err <= 1e-5, "{shape} {tile:?} steps {steps}: {err:e}");
            }
        }
    }
}

/// A clamped (zero-gradient) 2-D diffusion whose coefficient field is read at neighbours, and
/// a periodic one reaching two points along y: the steps variant's wrapped and ghost points.
mod steps_boundaries {
    use clforge::prelude::*;

    #[stencil(boundary = clamp, state = u)]
    pub fn smooth_clamp(u: &Grid<f32>, k: &Grid<f32>) -> f32 {
        u.at(0, 0)
            + k.at(1, 0) * (u.at(1, 0) - u.at(0, 0))
            + k.at(-1, 0) * (u.at(-1, 0) - u.at(0, 0))
            + k.at(0, 1) * (u.at(0, 1) - u.at(0, 0))
            + k.at(0, -1) * (u.at(0, -1) - u.at(0, 0))
            + 0.01 * u.at(2, -1)
    }

    #[stencil(boundary = clamp, state = u)]
    pub fn heat3_clamp(u: &Grid3<f32>, k: &Grid3<f32>) -> f32 {
        u.at(0, 0, 0)
            + k.at(0, 0, 1)
                * (u.at(1, 0, 0) + u.at(-1, 0, 0) + u.at(0, 1, 0) + u.at(0, -1, 0) + u.at(0, 0, 1) + u.at(0, 0, -1)
                    - 6.0 * u.at(0, 0, 0))
            + 0.01 * u.at(1, -1, 2)
    }

    #[stencil(boundary = periodic, state = u)]
    pub fn heat3_periodic(u: &Grid3<f32>, k: &Grid3<f32>) -> f32 {
        u.at(0, 0, 0) + k.at(-1, 0, 0) * (u.at(0, 0, -2) + u.at(1, 1, 0) - 2.0 * u.at(0, 0, 0)) - 0.01 * u.at(0, -1, 1)
    }

    #[stencil(boundary = periodic, state = u)]
    pub fn smooth_periodic(u: &Grid<f32>, k: &Grid<f32>) -> f32 {
        u.at(0, 0)
            + k.at(1, 0) * (u.at(1, 0) - u.at(0, 0))
            + k.at(0, -1) * (u.at(0, -2) - u.at(0, 0))
            + 0.125 * (u.at(-1, 1) - u.at(0, 2))
    }
}

/// Bit-equal, or NaN on both sides.
fn same_bits(a: &HostGrid<f32>, b: &HostGrid<f32>) -> Option<usize> {
    let (a, b) = (a.data(), b.data());
    (0..a.len()).find(|&i| !(a[i].to_bits() == b[i].to_bits() || (a[i].is_nan() && b[i].is_nan())))
}

/// Temporal blocking with clamped and periodic edges (2-D) and clamped ends (1-D, halo 2)
/// equals as many host steps bit for bit, with NaN, ±inf and the largest values in the state,
/// on grids smaller than, equal to and not multiples of the tile.
#[test]
fn steps_variant_equals_host_steps_at_clamped_and_periodic_edges() {
    use steps_boundaries::*;
    let tiles = [
        Tile { x: 8, y: 8, rows: 2 },
        Tile { x: 32, y: 16, rows: 4 },
        Tile { x: 4, y: 4, rows: 4 },
    ];
    let extremes = [
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::MAX,
        -f32::MAX,
        f32::MIN_POSITIVE,
    ];
    for (i, shape) in [
        Shape::d2(1, 1),
        Shape::d2(3, 2),
        Shape::d2(8, 8),
        Shape::d2(40, 19),
        Shape::d2(67, 33),
    ]
    .into_iter()
    .enumerate()
    {
        let mut r = rng(80 + i as u64);
        let mut u = random_f32(shape, &mut r, -1.0, 1.0);
        let k = random_f32(shape, &mut r, 0.0, 0.2);
        if shape.len() > 20 {
            for (j, v) in extremes.iter().enumerate() {
                u.data_mut()[(j * 37 + 5) % shape.len()] = *v;
            }
        }
        for tile in tiles {
            for steps in [1, 2, 5] {
                let config = LaunchConfig::steps(steps, tile);
                let (mut hc, mut hp) = (u.clone(), u.clone());
                for _ in 0..steps {
                    let mut next = hc.clone();
                    SmoothClamp::apply_host(&mut next, &hc, &k).unwrap();
                    hc = next;
                    let mut next = hp.clone();
                    SmoothPeriodic::apply_host(&mut next, &hp, &k).unwrap();
                    hp = next;
                }
                let mut out = up(&u);
                SmoothClamp::launch(&config, &mut out, &up(&u), &up(&k)).unwrap();
                let got = out.to_host().unwrap();
                assert_eq!(same_bits(&got, &hc), None, "clamp {shape} {tile:?} steps {steps}");
                let mut out = up(&u);
                SmoothPeriodic::launch(&config, &mut out, &up(&u), &up(&k)).unwrap();
                let got = out.to_host().unwrap();
                assert_eq!(same_bits(&got, &hp), None, "periodic {shape} {tile:?} steps {steps}");
            }
        }
    }
    // 1-D, clamped, halo 2 (tiles one row high).
    use limiter_clamp::*;
    for (i, n) in [1usize, 2, 5, 33, 130].into_iter().enumerate() {
        let shape = Shape::d1(n);
        let q = random_f32(shape, &mut rng(90 + i as u64), 0.5, 2.0);
        for (tile, steps) in [(Tile { x: 8, y: 1, rows: 1 }, 3), (Tile { x: 32, y: 1, rows: 1 }, 2)] {
            let mut host = q.clone();
            for _ in 0..steps {
                let mut next = host.clone();
                LimiterClamp::apply_host(&mut next, &host).unwrap();
                host = next;
            }
            let mut out = up(&q);
            LimiterClamp::launch(&LaunchConfig::steps(steps, tile), &mut out, &up(&q)).unwrap();
            assert_eq!(
                same_bits(&out.to_host().unwrap(), &host),
                None,
                "1-D {n} {tile:?} steps {steps}"
            );
        }
    }
}

/// The event-free launch computes the same as the profiled one.
#[test]
fn enqueue_plan_equals_launch_plan() {
    use heat3d::*;
    let shape = Shape::d3(20, 9, 7);
    let u = random_f32(shape, &mut rng(3), 0.0, 1.0);
    let plan = Heat3d::plan(&device(), &LaunchConfig::variant(Variant::Vector), shape).unwrap();
    let (mut a, mut b) = (up(&u), up(&u));
    Heat3d::launch_plan(&plan, &mut a, &up(&u), 0.1).unwrap();
    Heat3d::enqueue_plan(&plan, &mut b, &up(&u), 0.1).unwrap();
    let mut host = u.clone();
    Heat3d::apply_host(&mut host, &u, 0.1).unwrap();
    assert_eq!(b.to_host().unwrap(), a.to_host().unwrap());
    assert!(rel_error(&b.to_host().unwrap(), &host) <= 1e-6);
}

/// Temporal blocking in 3-D (tiles `y` deep along z) for every boundary, halo 2 along z, equals
/// as many host steps bit for bit, NaN and infinities included.
#[test]
fn steps_variant_equals_host_steps_in_3d() {
    use steps_boundaries::*;
    let tiles = [
        Tile { x: 8, y: 4, rows: 2 },
        Tile { x: 4, y: 2, rows: 1 },
        Tile { x: 16, y: 8, rows: 4 },
    ];
    for (i, shape) in [
        Shape::d3(1, 1, 1),
        Shape::d3(3, 2, 2),
        Shape::d3(9, 7, 5),
        Shape::d3(17, 6, 11),
    ]
    .into_iter()
    .enumerate()
    {
        let mut r = rng(120 + i as u64);
        let mut u = random_f32(shape, &mut r, -1.0, 1.0);
        let k = random_f32(shape, &mut r, 0.0, 0.1);
        if shape.len() > 20 {
            for (j, v) in [f32::NAN, f32::INFINITY, -f32::MAX].iter().enumerate() {
                u.data_mut()[(j * 53 + 7) % shape.len()] = *v;
            }
        }
        for tile in tiles {
            for steps in [1, 2, 3] {
                let config = LaunchConfig::steps(steps, tile);
                let (mut hc, mut hp, mut hf) = (u.clone(), u.clone(), u.clone());
                for _ in 0..steps {
                    let mut next = hc.clone();
                    Heat3Clamp::apply_host(&mut next, &hc, &k).unwrap();
                    hc = next;
                    let mut next = hp.clone();
                    Heat3Periodic::apply_host(&mut next, &hp, &k).unwrap();
                    hp = next;
                    let mut next = hf.clone();
                    heat3d::Heat3d::apply_host(&mut next, &hf, 0.1).unwrap();
                    hf = next;
                }
                let mut out = up(&u);
                Heat3Clamp::launch(&config, &mut out, &up(&u), &up(&k)).unwrap();
                assert_eq!(
                    same_bits(&out.to_host().unwrap(), &hc),
                    None,
                    "clamp {shape} {tile:?} steps {steps}"
                );
                let mut out = up(&u);
                Heat3Periodic::launch(&config, &mut out, &up(&u), &up(&k)).unwrap();
                assert_eq!(
                    same_bits(&out.to_host().unwrap(), &hp),
                    None,
                    "periodic {shape} {tile:?} steps {steps}"
                );
                let mut out = up(&u);
                heat3d::Heat3d::launch(&config, &mut out, &up(&u), 0.1).unwrap();
                assert_eq!(
                    same_bits(&out.to_host().unwrap(), &hf),
                    None,
                    "fixed {shape} {tile:?} steps {steps}"
                );
            }
        }
    }
}

/// Points per work-item are the plain and vector variants', at least 1, and 1 in 1-D: anything
/// else is a typed error before a build.
#[test]
fn bad_points_per_work_item_are_refused() {
    let points = |variant, n| LaunchConfig {
        points: Some(n),
        ..LaunchConfig::variant(variant)
    };
    for (config, want) in [
        (points(Variant::Plain, 0), "give 1 or more"),
        (points(Variant::Vector, 0), "give 1 or more"),
        (points(Variant::Tiled, 2), "plain and vector variants only"),
        (points(Variant::March, 2), "plain and vector variants only"),
    ] {
        let err = heat3d::Heat3d::plan(&device(), &config, Shape::d3(8, 8, 8)).unwrap_err();
        assert!(err.to_string().contains(want), "{config:?}: {err}");
    }
    for variant in [Variant::Plain, Variant::Vector] {
        let err = limiter_clamp::LimiterClamp::plan(&device(), &points(variant, 2), Shape::d1(40)).unwrap_err();
        assert!(err.to_string().contains("1 for a 1-D stencil"), "{variant:?}: {err}");
    }
    // Lanes: the vector kernels' 8 or 4, and only for the vector variant.
    let lanes = |variant, n| LaunchConfig {
        lanes: Some(n),
        ..LaunchConfig::variant(variant)
    };
    for (config, want) in [
        (
            lanes(Variant::Vector, 5),
            "5 lanes; the vector kernels of stencil `heat3d` have 8 or 4",
        ),
        (
            lanes(Variant::Plain, 4),
            "lanes are a tunable of the vector variant only",
        ),
    ] {
        let err = heat3d::Heat3d::plan(&device(), &config, Shape::d3(8, 8, 8)).unwrap_err();
        assert!(err.to_string().contains(want), "{config:?}: {err}");
    }
    for n in [8, 4] {
        let plan = heat3d::Heat3d::plan(&device(), &lanes(Variant::Vector, n), Shape::d3(16, 8, 8)).unwrap();
        assert_eq!(plan.kernel(), format!("heat3d_vec{n}"), "{n} lanes");
    }
}
