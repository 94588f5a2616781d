//! The march variant (2.5-D blocking): a work-group walks a column of tiles along z with the
//! planes it reads in a ring in local memory. It equals the Rust host function and the plain
//! kernel bit for bit on input with NaN, infinities and extremes, for every boundary, halo 1
//! and 2 along z, f32 and f64, diagonal offsets through z, grids read at offsets and at the
//! centre only, reductions and the point; depths that are and are not multiples of the march;
//! misuse is a typed error.

use crate::common::*;
use clforge::prelude::*;
use clforge::runtime::{Error, Max, Reduction, Sum};
use rand::rngs::SmallRng;
use rand::Rng;

/// Fixed boundary, halo 1: diagonal offsets through z; `k` is read at the centre only (not
/// staged: from global memory).
#[clforge::stencil]
fn march_fixed(u: &Grid3<f32>, k: &Grid3<f32>, s: f32) -> f32 {
    let c = u.at(0, 0, 0);
    k.at(0, 0, 0) * (u.at(1, 0, 1) - u.at(-1, 0, -1))
        + s * (u.at(0, 1, -1) + u.at(0, -1, 1) - 2.0 * c)
        + 0.5 * u.at(0, 0, 1)
}

/// Clamped edges, halo 2 along z (a ring of six planes) and along x; two staged grids, each
/// with its own ring.
#[clforge::stencil(boundary = clamp)]
fn march_clamp(u: &Grid3<f32>, k: &Grid3<f32>) -> f32 {
    u.at(0, 0, 0) + k.at(0, 0, -1) * (u.at(0, 0, 2) - 2.0 * u.at(0, 0, 0) + u.at(0, 0, -2)) + 0.25 * u.at(1, -1, -2)
        - k.at(-1, 1, 1) * u.at(2, 0, 1)
}

/// Periodic, f64, halo 2 along y and z with wrapped corners; a branch on a centre-only grid.
#[clforge::stencil(boundary = periodic)]
fn march_periodic(u: &Grid3<f64>, m: &Grid3<f64>) -> f64 {
    let lap = u.at(0, 0, 2) + u.at(0, 0, -2) + u.at(0, 2, 0) + u.at(1, 1, 1) + u.at(-1, -1, -1) - 5.0 * u.at(0, 0, 0);
    if m.at(0, 0, 0) > 0.0 {
        u.at(0, 0, 0) + 0.1 * lap
    } else {
        lap.max(u.at(-2, 0, 1))
    }
}

/// Reductions beside the grid, and the point: the largest change, and a weighted sum of the
/// updated points' indices (each counted once, whichever work-group and plane updates it).
#[clforge::stencil]
fn march_checked(u: &Grid3<f32>, at: Point) -> (f32, Max<f32>, Sum<i32>) {
    let next = 0.5 * u.at(0, 0, 0) + 0.25 * (u.at(0, 0, 1) + u.at(0, 0, -1)) + at.z as f32 * 0.001;
    (
        next,
        Max((next - u.at(0, 0, 0)).abs()),
        Sum(at.x + 5 * at.y + 13 * at.z),
    )
}

/// The march launches checked: the default (a 32 x 8 column over 16 planes: one clipped
/// work-group per column on these depths), several columns over 4 planes with the last one
/// clipped, and one plane per work-group.
fn marches() -> [LaunchConfig; 3] {
    [
        LaunchConfig::variant(Variant::March),
        LaunchConfig::march(Tile { x: 8, y: 4, rows: 2 }, 4),
        LaunchConfig::march(Tile { x: 4, y: 2, rows: 1 }, 1),
    ]
}

/// Depths not multiples of 4 or 16, extents not multiples of the tiles, one point.
const SHAPES: [(usize, usize, usize); 3] = [(20, 13, 11), (9, 5, 6), (1, 1, 1)];

trait Bits: Copy + Default + std::fmt::Debug {
    fn bits(self) -> u64;
    fn nan(self) -> bool;
    fn special(r: &mut SmallRng) -> Self;
}

macro_rules! bits {
    ($($t:ty => $u:ty),*) => {$(
        impl Bits for $t {
            fn bits(self) -> u64 {
                self.to_bits() as u64
            }
            fn nan(self) -> bool {
                self.is_nan()
            }
            /// Mostly ordinary values, one in five an extreme: NaN, ±inf, ±MAX, the smallest
            /// normal, a subnormal, -0.0.
            fn special(r: &mut SmallRng) -> $t {
                let extremes = [
                    <$t>::NAN,
                    <$t>::INFINITY,
                    <$t>::NEG_INFINITY,
                    <$t>::MAX,
                    -<$t>::MAX,
                    <$t>::MIN_POSITIVE,
                    <$t>::from_bits(1),
                    -0.0,
                ];
                if r.random_range(0..5) == 0 {
                    extremes[r.random_range(0..extremes.len())]
                } else {
                    r.random_range(-1.0..1.0)
                }
            }
        }
    )*};
}
bits!(f32 => u32, f64 => u64);

fn special<T: Bits>(shape: Shape, r: &mut SmallRng) -> HostGrid<T> {
    HostGrid::from_fn(shape, |_| T::special(r)).expect("grid")
}

/// Equal bits, or NaN on both sides, at every point.
fn assert_same<T: Bits>(what: &str, got: &HostGrid<T>, want: &HostGrid<T>) {
    for (i, (g, w)) in got.data().iter().zip(want.data()).enumerate() {
        assert!(
            g.bits() == w.bits() || (g.nan() && w.nan()),
            "{what}: point {i} of {}: {g:?}, want {w:?}",
            want.shape()
        );
    }
}

/// Runs `launch(config, out)` for the plain kernel and each march, from an output that starts
/// as `start` (points a launch does not write keep it), and checks each against `host` and
/// the marches against the plain kernel.
fn check<T: Bits + clforge::runtime::Scalar>(
    name: &str,
    shape: Shape,
    start: &HostGrid<T>,
    host: &HostGrid<T>,
    mut launch: impl FnMut(&LaunchConfig, &mut DeviceGrid<T>) -> clforge::runtime::Result<()>,
) {
    let mut plain = None;
    for config in std::iter::once(LaunchConfig::variant(Variant::Plain)).chain(marches()) {
        let mut out = up(start);
        launch(&config, &mut out).unwrap_or_else(|e| panic!("{name} {shape} {config:?}: {e}"));
        let got = out.to_host().expect("download");
        assert_same(&format!("{name} {shape} {config:?} vs host"), &got, host);
        match &plain {
            Some(p) => assert_same(&format!("{name} {shape} {config:?} vs plain"), &got, p),
            None => plain = Some(got),
        }
    }
}

#[test]
fn march_equals_host_and_plain_for_every_boundary() {
    for (i, &(nx, ny, nz)) in SHAPES.iter().enumerate() {
        let shape = Shape::d3(nx, ny, nz);
        let mut r = rng(1400 + i as u64);
        // A start value no update gives: a point the kernel fails to write is seen.
        let start = HostGrid::from_fn(shape, |_| 12345.0f32).unwrap();
        let (u, k) = (special::<f32>(shape, &mut r), special::<f32>(shape, &mut r));

        let mut host = start.clone();
        MarchFixed::apply_host(&mut host, &u, &k, 0.3).unwrap();
        let (du, dk) = (up(&u), up(&k));
        check("march_fixed", shape, &start, &host, |c, out| {
            MarchFixed::launch(c, out, &du, &dk, 0.3).map(drop)
        });

        let mut host = start.clone();
        MarchClamp::apply_host(&mut host, &u, &k).unwrap();
        check("march_clamp", shape, &start, &host, |c, out| {
            MarchClamp::launch(c, out, &du, &dk).map(drop)
        });

        let start = HostGrid::from_fn(shape, |_| 12345.0f64).unwrap();
        let (u, m) = (special::<f64>(shape, &mut r), special::<f64>(shape, &mut r));
        let mut host = start.clone();
        MarchPeriodic::apply_host(&mut host, &u, &m).unwrap();
        let (du, dm) = (up(&u), up(&m));
        check("march_periodic", shape, &start, &host, |c, out| {
            MarchPeriodic::launch(c, out, &du, &dm).map(drop)
        });
    }
}

/// The work-group partials of a march launch cover each updated point once: the maximum and
/// the index sum equal the host's (both exact), NaN propagates.
#[test]
fn march_reductions_and_points_equal_host() {
    for (i, &(nx, ny, nz)) in SHAPES.iter().enumerate() {
        let shape = Shape::d3(nx, ny, nz);
        for nan in [false, true] {
            let mut u = random_f32(shape, &mut rng(1500 + i as u64), -1.0, 1.0);
            if nan {
                let at = shape.len() / 2;
                u.data_mut()[at] = f32::NAN;
            }
            let mut host = (u.clone(), Max(0.0f32), Sum(0));
            MarchChecked::apply_host((&mut host.0, &mut host.1, &mut host.2), &u).unwrap();
            for config in std::iter::once(LaunchConfig::variant(Variant::Plain)).chain(marches()) {
                let what = format!("{shape} nan {nan} {config:?}");
                let mut out = up(&u);
                let (mut change, mut sum) = (Reduction::new(), Reduction::new());
                MarchChecked::launch(&config, (&mut out, &mut change, &mut sum), &up(&u))
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                assert_same(&what, &out.to_host().unwrap(), &host.0);
                let got = change.value().unwrap();
                assert!(
                    got.to_bits() == host.1 .0.to_bits() || (got.is_nan() && host.1 .0.is_nan()),
                    "{what}: max change {got:e}, host {:e}",
                    host.1 .0
                );
                assert_eq!(sum.value().unwrap(), host.2 .0, "{what}: index sum");
            }
        }
    }
}

/// A march on a 2-D stencil, over 0 planes, a depth given to another variant, or a tile whose
/// ring does not fit local memory: typed errors before anything runs.
#[test]
fn bad_marches_are_refused() {
    let dev = device();
    let err = crate::kernels::jacobi::Jacobi::plan(&dev, &LaunchConfig::variant(Variant::March), Shape::d2(16, 16))
        .unwrap_err();
    assert!(
        matches!(&err, Error::InvalidConfig(m) if m.contains("no march variant") && m.contains("3-D")),
        "{err}"
    );
    let shape = Shape::d3(8, 8, 8);
    let zero = LaunchConfig::march(Tile { x: 8, y: 4, rows: 2 }, 0);
    let err = MarchFixed::plan(&dev, &zero, shape).unwrap_err();
    assert!(
        matches!(&err, Error::InvalidConfig(m) if m.contains("0 planes")),
        "{err}"
    );
    let tiled = LaunchConfig {
        march: Some(4),
        ..LaunchConfig::variant(Variant::Tiled)
    };
    let err = MarchFixed::plan(&dev, &tiled, shape).unwrap_err();
    assert!(
        matches!(&err, Error::InvalidConfig(m) if m.contains("march variant only")),
        "{err}"
    );
    // 10 x (2^20 + 2) points x 6 planes x 2 grids x 4 B: far past any device's local memory
    let huge = LaunchConfig::march(
        Tile {
            x: 8,
            y: 1 << 20,
            rows: 1,
        },
        4,
    );
    let err = MarchClamp::plan(&dev, &huge, shape).unwrap_err();
    assert!(
        matches!(&err, Error::DeviceLimit { limit_name, .. } if *limit_name == "CL_DEVICE_LOCAL_MEM_SIZE"),
        "{err}"
    );
}
