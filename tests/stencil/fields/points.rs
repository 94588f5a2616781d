//! A stencil that reads its point (`at: Point`): the index and the whole grid's extents are
//! the same numbers in every variant (temporal blocking included), at every boundary and rank,
//! on one device and on a grid split over several, as in the Rust function.

use crate::{common, kernels};

use clforge::prelude::*;
use common::*;
use kernels::heated::Heated;

/// The index itself, as an integer code, on a clamped 3-D grid: exact numbers to compare.
#[clforge::stencil(boundary = clamp)]
fn where3(u: &Grid3<f32>, at: Point) -> f32 {
    let code = at.x + 1000 * at.y + 1000000 * at.z;
    let edge = if at.x == 0 || at.y == at.ny - 1 || at.z == at.nz - 1 {
        0.5
    } else {
        0.0
    };
    (u.at(1, 0, 0) + u.at(0, 0, -1)) * 0.0 + code as f32 + edge
}

/// A 1-D fixed boundary; the point is an argument in the middle of the list.
#[clforge::stencil]
fn ramp(u: &Grid1<f64>, at: Point, s: f64) -> f64 {
    0.5 * (u.at(-1) + u.at(1)) + s * (at.x as f64) / (at.nx as f64)
}

/// A system of fields reading its point, periodic in 3-D (wrapped lanes and planes).
#[clforge::stencil(boundary = periodic)]
fn pair3(u: &Grid3<f32>, at: Point) -> (f32, i32) {
    (u.at(0, 1, 0) + at.z as f32, at.x - at.y + at.z * at.nx)
}

/// Every variant of one step, and the steps variant over 3 steps against 3 host steps.
fn with_steps(rank: usize) -> Vec<LaunchConfig> {
    let mut c = configs(rank);
    let tile = if rank == 1 {
        Tile { x: 16, y: 1, rows: 1 }
    } else {
        Tile { x: 8, y: 4, rows: 2 }
    };
    c.push(LaunchConfig::steps(3, tile));
    c
}

#[test]
fn position_dependent_source_equals_host_in_every_variant() {
    for (i, &shape) in shapes(2).iter().enumerate() {
        let u0 = random_f32(shape, &mut rng(300 + i as u64), -1.0, 1.0);
        for config in with_steps(2) {
            let mut host = u0.clone();
            for _ in 0..config.iterations() {
                let mut next = host.clone();
                Heated::apply_host(&mut next, &host, 0.1).unwrap();
                host = next;
            }
            let mut out = up(&u0);
            Heated::launch(&config, &mut out, &up(&u0), 0.1).unwrap_or_else(|e| panic!("{shape} {config:?}: {e}"));
            same(&format!("{shape} {config:?}"), &out.to_host().unwrap(), &host);
        }
    }
}

#[test]
fn index_and_extents_in_3d_clamp_and_1d_fixed() {
    for (i, &shape) in shapes(3).iter().enumerate() {
        let u = random_f32(shape, &mut rng(400 + i as u64), -1.0, 1.0);
        for config in configs(3) {
            let mut host = u.clone();
            Where3::apply_host(&mut host, &u).unwrap();
            let mut out = up(&u);
            Where3::launch(&config, &mut out, &up(&u)).unwrap();
            same(&format!("{shape} {config:?}"), &out.to_host().unwrap(), &host);
        }
        // Something to compare: the codes differ from point to point.
        if shape.len() > 1 {
            let mut host = u.clone();
            Where3::apply_host(&mut host, &u).unwrap();
            assert!(host.data().windows(2).any(|w| w[0] != w[1]));
        }
    }
    for (i, &shape) in shapes(1).iter().enumerate() {
        let u = random_f64(shape, &mut rng(500 + i as u64), -1.0, 1.0);
        for config in with_steps(1) {
            let mut host = u.clone();
            for _ in 0..config.iterations() {
                let mut next = host.clone();
                Ramp::apply_host(&mut next, &host, 0.25).unwrap();
                host = next;
            }
            let mut out = up(&u);
            Ramp::launch(&config, &mut out, &up(&u), 0.25).unwrap();
            same(&format!("{shape} {config:?}"), &out.to_host().unwrap(), &host);
        }
    }
}

#[test]
fn systems_read_their_point_in_periodic_3d() {
    let dev = device();
    for (i, &shape) in shapes(3).iter().enumerate() {
        let u = random_f32(shape, &mut rng(600 + i as u64), -1.0, 1.0);
        for config in configs(3) {
            let (mut h0, mut h1) = (HostGrid::new(shape).unwrap(), HostGrid::new(shape).unwrap());
            Pair3::apply_host((&mut h0, &mut h1), &u).unwrap();
            let mut d0 = DeviceGrid::<f32>::new(&dev, shape).unwrap();
            let mut d1 = DeviceGrid::<i32>::new(&dev, shape).unwrap();
            Pair3::launch(&config, (&mut d0, &mut d1), &up(&u)).unwrap();
            same(&format!("{shape} {config:?}"), &d0.to_host().unwrap(), &h0);
            assert_eq!(d1.to_host().unwrap().data(), h1.data(), "{shape} {config:?}");
        }
    }
}

/// Split over two and three slabs (the default device repeated): every slab's points are
/// the whole grid's, periodic halos included, with temporal blocking too.
#[test]
fn split_grids_see_whole_grid_points() {
    let dev = device();
    let shape = Shape::d2(23, 41);
    let u0 = random_f32(shape, &mut rng(7), -1.0, 1.0);
    for parts in [2, 3] {
        for config in [
            LaunchConfig::variant(Variant::Plain),
            LaunchConfig::steps(2, Tile { x: 8, y: 4, rows: 2 }),
        ] {
            let devices = Devices::new(vec![dev.clone(); parts])
                .unwrap()
                .depth(4)
                .unwrap()
                .periodic(true);
            let plan = Heated::plan(&devices, &config, shape).unwrap();
            let mut u = PingPong::from_host(&devices, &u0).unwrap();
            let mut host = u0.clone();
            for _ in 0..3 {
                let (next, cur) = u.split();
                Heated::launch_plan(&plan, next, cur, 0.1).unwrap();
                u.swap();
                for _ in 0..config.iterations() {
                    let mut next = host.clone();
                    Heated::apply_host(&mut next, &host, 0.1).unwrap();
                    host = next;
                }
            }
            same(
                &format!("{parts} slabs {config:?}"),
                &u.current().to_host().unwrap(),
                &host,
            );
        }
    }
    // A fixed 3-D boundary split along z.
    let shape = Shape::d3(9, 7, 30);
    let u = random_f32(shape, &mut rng(8), -1.0, 1.0);
    let devices = Devices::new(vec![dev.clone(); 2]).unwrap();
    let plan = Where3::plan(&devices, &LaunchConfig::default(), shape).unwrap();
    let mut out = SplitGrid::new(&devices, shape).unwrap();
    Where3::launch_plan(&plan, &mut out, &SplitGrid::from_host(&devices, &u).unwrap()).unwrap();
    let mut host = u.clone();
    Where3::apply_host(&mut host, &u).unwrap();
    same("where3 split", &out.to_host().unwrap(), &host);
}
