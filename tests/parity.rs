//! Every generated kernel equals its Rust host function on random input, in every variant,
//! on sizes that are and are not multiples of the tile, down to 1-wide grids.

mod common;
mod kernels;

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

#[test]
fn steps_variant_is_refused_where_not_generated() {
    use advect_periodic::*;
    let err = AdvectPeriodic::plan(
        &device(),
        &LaunchConfig::steps(4, Tile { x: 32, y: 32, rows: 4 }),
        Shape::d2(64, 64),
    )
    .unwrap_err();
    assert!(err.to_string().contains("temporal blocking"), "{err}");
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
