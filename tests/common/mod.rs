//! Shared parity driver: every generated kernel against its Rust host function.
#![allow(dead_code)]

use clforge::prelude::*;
use clforge::runtime::Scalar;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// The launch configurations every stencil is checked in: each variant, the default tile
/// and a small tile that leaves partial tiles on most shapes, several points per work-item of
/// the plain and vector variants (in 3-D the march variant too).
pub fn configs(rank: usize) -> Vec<LaunchConfig> {
    let small = if rank == 1 {
        Tile { x: 16, y: 1, rows: 1 }
    } else {
        Tile { x: 8, y: 8, rows: 2 }
    };
    let mut configs = vec![
        LaunchConfig::variant(Variant::Plain),
        LaunchConfig::variant(Variant::Vector),
        LaunchConfig::variant(Variant::Tiled),
        LaunchConfig::tiled(small),
    ];
    if rank > 1 {
        // three points per work-item along the slowest axis: rarely a divisor of the extent
        configs.push(LaunchConfig {
            points: Some(3),
            ..LaunchConfig::variant(Variant::Plain)
        });
        // and three vectors (on the shapes whose rows are multiples of 8 points, whole aligned
        // vectors: VEC_ALIGNED)
        configs.push(LaunchConfig {
            points: Some(3),
            ..LaunchConfig::variant(Variant::Vector)
        });
    }
    // The narrow vector kernel (4 lanes, the GPU's default), one and two vectors per work-item.
    configs.push(LaunchConfig {
        lanes: Some(4),
        ..LaunchConfig::variant(Variant::Vector)
    });
    if rank > 1 {
        configs.push(LaunchConfig {
            lanes: Some(4),
            points: Some(2),
            ..LaunchConfig::variant(Variant::Vector)
        });
    }
    if rank == 3 {
        // 2.5-D blocking: columns of a small tile walked over 3 planes, so most depths end in
        // a clipped work-group
        configs.push(LaunchConfig::march(Tile { x: 8, y: 4, rows: 2 }, 3));
    }
    configs
}

pub fn rng(seed: u64) -> SmallRng {
    SmallRng::seed_from_u64(seed)
}

pub fn random_f32(shape: Shape, rng: &mut SmallRng, lo: f32, hi: f32) -> HostGrid<f32> {
    HostGrid::from_fn(shape, |_| rng.random_range(lo..hi)).expect("a host grid")
}

pub fn random_f64(shape: Shape, rng: &mut SmallRng, lo: f64, hi: f64) -> HostGrid<f64> {
    HostGrid::from_fn(shape, |_| rng.random_range(lo..hi)).expect("a host grid")
}

pub fn device() -> Device {
    Device::default().expect("an OpenCL device (make test installs PoCL)")
}

pub fn up<T: Scalar>(g: &HostGrid<T>) -> DeviceGrid<T> {
    DeviceGrid::from_host(&device(), g).expect("upload")
}

/// Largest |a - b| relative to the largest |b| (1 when all are tiny).
pub fn rel_error<T: Scalar + Into<f64>>(a: &HostGrid<T>, b: &HostGrid<T>) -> f64 {
    slice_rel_error(a.data(), b.data())
}

/// [`rel_error`] of two slices (a NaN anywhere makes it NaN, which fails every `<=`).
pub fn slice_rel_error<T: Copy + Into<f64>>(a: &[T], b: &[T]) -> f64 {
    assert_eq!(a.len(), b.len(), "compared slices differ in length");
    let scale = b.iter().map(|v| (*v).into().abs()).fold(1e-30, f64::max);
    let diff = a
        .iter()
        .zip(b)
        .map(|(x, y)| ((*x).into() - (*y).into()).abs())
        .fold(
            0.0,
            |m: f64, d| if d.is_nan() || m.is_nan() { f64::NAN } else { m.max(d) },
        );
    diff / scale
}

/// Runs `case(shape, rng, config) -> (device result, host result)` for every shape and
/// configuration and asserts the relative error is within `tol`.
pub fn parity<T: Scalar + Into<f64>>(
    name: &str,
    shapes: &[Shape],
    tol: f64,
    mut case: impl FnMut(Shape, &mut SmallRng, &LaunchConfig) -> clforge::runtime::Result<(HostGrid<T>, HostGrid<T>)>,
) {
    for (i, &shape) in shapes.iter().enumerate() {
        for config in configs(shape.rank()) {
            let mut r = rng(1000 + i as u64);
            let (dev, host) = case(shape, &mut r, &config).unwrap_or_else(|e| panic!("{name} {shape} {config:?}: {e}"));
            let err = rel_error(&dev, &host);
            assert!(
                err <= tol,
                "{name} on {shape} with {config:?}: relative error {err:e} > {tol:e}"
            );
        }
    }
}

pub fn shapes(rank: usize) -> Vec<Shape> {
    match rank {
        1 => [1, 2, 5, 8, 9, 33, 300, 513].map(Shape::d1).to_vec(),
        2 => [
            (1, 1),
            (1, 9),
            (9, 1),
            (2, 3),
            (3, 3),
            (8, 8),
            (32, 32),
            (33, 17),
            (17, 70),
            (100, 37),
        ]
        .map(|(x, y)| Shape::d2(x, y))
        .to_vec(),
        // (40, 6, 5): rows of whole aligned vectors with interior ones (the vector variant's
        // VEC_ALIGNED path needs a vector with one on either side)
        _ => [
            (1, 1, 1),
            (3, 3, 3),
            (9, 4, 3),
            (33, 9, 5),
            (16, 16, 16),
            (8, 40, 7),
            (40, 6, 5),
        ]
        .map(|(x, y, z)| Shape::d3(x, y, z))
        .to_vec(),
    }
}

/// Cholesky succeeds: the symmetric matrix is positive definite (pivots above 1e-10 of its
/// largest entry).
pub fn positive_definite(a: &clforge::runtime::element::Matrix) -> bool {
    let n = a.rows();
    let mut l = vec![0.0; n * n];
    for j in 0..n {
        let d = a[(j, j)] - (0..j).map(|k| l[j * n + k] * l[j * n + k]).sum::<f64>();
        if d.is_nan() || d <= 1e-10 * a.max_abs() {
            return false;
        }
        l[j * n + j] = d.sqrt();
        for i in j + 1..n {
            l[i * n + j] = (a[(i, j)] - (0..j).map(|k| l[i * n + k] * l[j * n + k]).sum::<f64>()) / l[j * n + j];
        }
    }
    true
}

/// Same bits, NaN for NaN (the payload of a NaN is not specified across devices).
pub fn same<T: Scalar + Into<f64>>(what: &str, dev: &HostGrid<T>, host: &HostGrid<T>) {
    assert_eq!(dev.shape(), host.shape(), "{what}: shapes differ");
    for (i, (d, h)) in dev.data().iter().zip(host.data()).enumerate() {
        let (d, h): (f64, f64) = ((*d).into(), (*h).into());
        let ok = (d.is_nan() && h.is_nan()) || d.to_bits() == h.to_bits();
        assert!(ok, "{what}: point {i} is {d:e} on the device, {h:e} on the host");
    }
}

macro_rules! wild_grid {
    ($name:ident, $t:ty) => {
        /// Random values in `lo..hi`, one in twenty replaced by NaN, ±inf, ±max, the smallest
        /// normal or -0.
        pub fn $name(shape: Shape, rng: &mut SmallRng, lo: $t, hi: $t) -> HostGrid<$t> {
            let special = [
                <$t>::NAN,
                <$t>::INFINITY,
                <$t>::NEG_INFINITY,
                <$t>::MAX,
                -<$t>::MAX,
                <$t>::MIN_POSITIVE,
                -0.0,
            ];
            HostGrid::from_fn(shape, |_| {
                if rng.random_range(0..20) == 0 {
                    special[rng.random_range(0..special.len())]
                } else {
                    rng.random_range(lo..hi)
                }
            })
            .expect("a host grid")
        }
    };
}
wild_grid!(wild_f32, f32);
wild_grid!(wild_f64, f64);
