//! Sweeps: every schedule bitwise equal to the sequential host sweep, for every direction and
//! dimension, on sizes that are and are not multiples of the block, down to one point wide,
//! on input with NaN, ±inf, ±0 and extremes.
#![allow(clippy::too_many_arguments)]

use crate::common;

use clforge::prelude::*;
use clforge::runtime::{Scalar, SweepSpec};
use common::*;
use rand::rngs::SmallRng;
use rand::Rng;

#[derive(Params, Clone, Copy, Debug)]
pub struct Relax {
    pub w: f32,
    pub h2: f32,
}

/// Gauss–Seidel for Δu = f, forward in x and y (seed 001's step 1 shape): new values behind.
#[sweep(order = forward)]
pub fn gs_forward(u: &Sweep<f32>, f: &Grid<f32>, k: &Relax) -> f32 {
    let s = u.new(-1, 0) + u.new(0, -1) + u.old(1, 0) + u.old(0, 1);
    (1.0 - k.w) * u.old(0, 0) + k.w * 0.25 * (s - k.h2 * f.at(0, 0))
}

/// The mirror image, its direction derived from the reads (backward in x and y).
#[sweep]
pub fn gs_backward(u: &Sweep<f32>, f: &Grid<f32>) -> f32 {
    0.25 * (u.new(1, 0) + u.new(0, 1) + u.old(-1, 0) + u.old(0, -1)) + f.at(0, 0)
}

/// An orthant (x forward, y backward) with a diagonal new read and halo 2 along x.
#[sweep(order = (forward, backward))]
pub fn orthant(u: &Sweep<f64>, a: &Grid<f64>) -> f64 {
    let behind = 0.5 * u.new(-1, 0) + 0.25 * u.new(0, 1) + 0.125 * u.new(-1, 1) + 0.0625 * u.new(-2, 0);
    behind + 0.03125 * (u.old(1, 0) + u.old(2, -1) + u.old(0, 0)) * a.at(0, 0)
}

/// Boundary cells inside the sweep from a mask: Dirichlet (keep), Neumann (copy the neighbour
/// inside), given flux (neighbour plus a gradient), interior update otherwise.
#[sweep(order = forward)]
pub fn masked(u: &Sweep<f32>, mask: &Grid<u8>, g: &Grid<f32>) -> f32 {
    match mask.at(0, 0) {
        1 => u.old(0, 0),
        2 => u.old(1, 0),
        3 => u.old(0, 1) + 0.5 * g.at(0, 0),
        _ => {
            let m = u.new(-1, 0).max(u.new(0, -1));
            if m > 1e20 {
                g.at(0, 0)
            } else {
                (0.5 * m + 0.25 * u.old(1, 0) + 0.25 * u.old(0, 1)).clamp(-1e30, 1e30)
            }
        }
    }
}

/// 3-D, forward in x and z, backward in y, with a params struct and a scalar.
#[sweep(order = (forward, backward, forward))]
pub fn relax3(u: &Sweep3<f32>, f: &Grid3<f32>, k: &Relax, bias: f32) -> f32 {
    let n = u.new(-1, 0, 0) + u.new(0, 1, 0) + u.new(0, 0, -1);
    let o = u.old(1, 0, 0) + u.old(0, -1, 0) + u.old(0, 0, 1);
    k.w * (n + o) / 6.0 + f.at(0, 0, 0) * k.h2 + bias
}

/// 3-D backward in every axis, f64.
#[sweep(order = backward)]
pub fn relax3_back(u: &Sweep3<f64>, f: &Grid3<f64>) -> f64 {
    (u.new(1, 0, 0) + u.new(0, 1, 0) + u.new(0, 0, 1) + u.new(1, 1, 1)) * 0.2 + u.old(-1, -1, 0) * 0.1 + f.at(0, 0, 0)
}

/// 1-D running recurrence (one chain: serial only).
#[sweep]
pub fn chain(u: &Sweep1<f32>, f: &Grid1<f32>) -> f32 {
    0.5 * u.new(-1) + 0.25 * u.old(1) + f.at(0)
}

/// Clamped reads: every point updated; reads beyond the edge land on the edge.
#[sweep(order = forward, boundary = clamp)]
pub fn clamped(u: &Sweep<f32>, f: &Grid<f32>) -> f32 {
    0.3 * u.new(-1, 0) + 0.3 * u.new(0, -1) + 0.2 * u.old(1, 1) + f.at(0, 0)
}

/// Integers: a running hash whose every bit depends on the order of the points.
#[sweep(order = forward)]
pub fn hash(h: &Sweep<u32>, seed: &Grid<u32>) -> u32 {
    (h.new(-1, 0) ^ (h.new(0, -1) << 3) ^ (h.old(1, 1) >> 2) ^ (h.new(-1, -1) << 11)) ^ seed.at(0, 0)
}

/// Mostly ordinary values, a few specials: enough NaN and infinities to test their paths
/// without turning the whole recurrence into NaN.
fn value(r: &mut SmallRng) -> f64 {
    const SPECIAL: [f64; 9] = [
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        0.0,
        -0.0,
        1e-40,
        -1e-310,
        3e38,
        1e300,
    ];
    if r.random_bool(0.02) {
        SPECIAL[r.random_range(0..SPECIAL.len())]
    } else {
        r.random_range(-4.0..4.0)
    }
}

trait Val: Scalar + Copy + std::fmt::Debug {
    fn from_f64(v: f64) -> Self;
    fn same(a: Self, b: Self) -> bool;
}
impl Val for f32 {
    fn from_f64(v: f64) -> f32 {
        v as f32
    }
    fn same(a: f32, b: f32) -> bool {
        a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
    }
}
impl Val for f64 {
    fn from_f64(v: f64) -> f64 {
        v
    }
    fn same(a: f64, b: f64) -> bool {
        a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
    }
}

fn grid<T: Val>(shape: Shape, r: &mut SmallRng) -> HostGrid<T> {
    HostGrid::from_fn(shape, |_| T::from_f64(value(r))).expect("grid")
}

fn assert_same<T: Val>(what: &str, device: &HostGrid<T>, host: &HostGrid<T>) {
    let bad: Vec<usize> = (0..host.data().len())
        .filter(|&i| !T::same(device.data()[i], host.data()[i]))
        .collect();
    assert!(
        bad.is_empty(),
        "{what}: {} of {} points differ from the sequential sweep; first at index {}: device {:?}, host {:?}",
        bad.len(),
        host.data().len(),
        bad[0],
        device.data()[bad[0]],
        host.data()[bad[0]]
    );
}

/// The schedules and block edges each sweep is checked in: every available schedule with a
/// block that divides none of the test sizes, the default block, and 1 (the strip schedule
/// also with phases of 5 and 1 steps).
fn configs(spec: &SweepSpec) -> Vec<SweepConfig> {
    let mut out = Vec::new();
    for s in spec.available() {
        for b in [1, 3, spec.default_block()] {
            if s == Schedule::Serial && b != spec.default_block() {
                continue;
            }
            out.push(SweepConfig::with_block(s, b));
            if s == Schedule::Strip {
                // Phases shorter than a strip, not dividing the extents, and of one step.
                out.push(SweepConfig::with_block(s, b).with_phase(5));
                out.push(SweepConfig::with_block(s, b).with_phase(1));
                out.push(SweepConfig::with_block(s, b).with_phase(3).with_prefetch(4));
                if b > 1 {
                    // Several rows per work-item, the next phase's lines loaded ahead.
                    let r = if b.is_multiple_of(4) { 4 } else { b };
                    out.push(
                        SweepConfig::with_block(s, b)
                            .with_rows(r)
                            .with_phase(5)
                            .with_prefetch(2),
                    );
                }
            }
        }
    }
    out
}

const SHAPES_2D: [[usize; 2]; 7] = [[1, 1], [1, 9], [9, 1], [2, 2], [7, 5], [16, 16], [37, 23]];

fn shapes(rank: usize) -> Vec<Shape> {
    match rank {
        1 => [1, 2, 5, 40].into_iter().map(Shape::d1).collect(),
        2 => SHAPES_2D.iter().map(|&[x, y]| Shape::d2(x, y)).collect(),
        _ => [[1, 1, 1], [1, 4, 3], [5, 1, 2], [3, 3, 3], [10, 7, 9], [17, 9, 12]]
            .iter()
            .map(|&[x, y, z]| Shape::d3(x, y, z))
            .collect(),
    }
}

/// Runs `device(config, shape, seed)` and `host(shape, seed)` for every shape and
/// configuration and compares bit for bit.
fn check<T: Val>(
    name: &str,
    spec: SweepSpec,
    host: impl Fn(Shape, u64) -> HostGrid<T>,
    device: impl Fn(&SweepConfig, Shape, u64) -> HostGrid<T>,
) {
    for (i, shape) in shapes(spec.rank).into_iter().enumerate() {
        let want = host(shape, i as u64);
        for config in configs(&spec) {
            let got = device(&config, shape, i as u64);
            assert_same(&format!("{name} {config:?} on {shape}"), &got, &want);
        }
    }
}

#[test]
fn every_schedule_equals_the_sequential_sweep_2d() {
    let k = Relax { w: 1.25, h2: 0.01 };
    let inputs = |shape: Shape, seed: u64| {
        let mut r = rng(seed);
        (grid::<f32>(shape, &mut r), grid::<f32>(shape, &mut r))
    };
    check(
        "gs_forward",
        GsForward::spec(),
        |shape, seed| {
            let (mut u, f) = inputs(shape, seed);
            GsForward::apply_host(&mut u, &f, &k).unwrap();
            u
        },
        |config, shape, seed| {
            let (u, f) = inputs(shape, seed);
            let mut du = up(&u);
            let ev = GsForward::sweep(config, &mut du, &up(&f), &k).unwrap();
            ev.wait().unwrap();
            du.to_host().unwrap()
        },
    );
    check(
        "gs_backward",
        GsBackward::spec(),
        |shape, seed| {
            let (mut u, f) = inputs(shape, seed);
            GsBackward::apply_host(&mut u, &f).unwrap();
            u
        },
        |config, shape, seed| {
            let (u, f) = inputs(shape, seed);
            let mut du = up(&u);
            GsBackward::sweep(config, &mut du, &up(&f)).unwrap();
            du.to_host().unwrap()
        },
    );
    check(
        "clamped",
        Clamped::spec(),
        |shape, seed| {
            let (mut u, f) = inputs(shape, seed);
            Clamped::apply_host(&mut u, &f).unwrap();
            u
        },
        |config, shape, seed| {
            let (u, f) = inputs(shape, seed);
            let mut du = up(&u);
            Clamped::sweep(config, &mut du, &up(&f)).unwrap();
            du.to_host().unwrap()
        },
    );
}

#[test]
fn orthants_halo_two_and_f64() {
    let inputs = |shape: Shape, seed: u64| {
        let mut r = rng(100 + seed);
        (grid::<f64>(shape, &mut r), grid::<f64>(shape, &mut r))
    };
    assert_eq!(Orthant::spec().forward, [true, false, true]);
    assert_eq!(Orthant::spec().halo, [2, 1, 0]);
    check(
        "orthant",
        Orthant::spec(),
        |shape, seed| {
            let (mut u, a) = inputs(shape, seed);
            Orthant::apply_host(&mut u, &a).unwrap();
            u
        },
        |config, shape, seed| {
            let (u, a) = inputs(shape, seed);
            let mut du = up(&u);
            Orthant::sweep(config, &mut du, &up(&a)).unwrap();
            du.to_host().unwrap()
        },
    );
}

#[test]
fn boundary_cells_from_a_mask() {
    let inputs = |shape: Shape, seed: u64| {
        let mut r = rng(200 + seed);
        let u = grid::<f32>(shape, &mut r);
        let g = grid::<f32>(shape, &mut r);
        let mask = HostGrid::from_fn(shape, |_| r.random_range(0u8..6)).unwrap();
        (u, mask, g)
    };
    check(
        "masked",
        Masked::spec(),
        |shape, seed| {
            let (mut u, m, g) = inputs(shape, seed);
            Masked::apply_host(&mut u, &m, &g).unwrap();
            u
        },
        |config, shape, seed| {
            let (u, m, g) = inputs(shape, seed);
            let mut du = up(&u);
            Masked::sweep(config, &mut du, &up(&m), &up(&g)).unwrap();
            du.to_host().unwrap()
        },
    );
}

#[test]
fn every_schedule_equals_the_sequential_sweep_3d() {
    let k = Relax { w: 0.9, h2: 0.5 };
    let inputs32 = |shape: Shape, seed: u64| {
        let mut r = rng(300 + seed);
        (grid::<f32>(shape, &mut r), grid::<f32>(shape, &mut r))
    };
    let inputs64 = |shape: Shape, seed: u64| {
        let mut r = rng(400 + seed);
        (grid::<f64>(shape, &mut r), grid::<f64>(shape, &mut r))
    };
    check(
        "relax3",
        Relax3::spec(),
        |shape, seed| {
            let (mut u, f) = inputs32(shape, seed);
            Relax3::apply_host(&mut u, &f, &k, 0.125).unwrap();
            u
        },
        |config, shape, seed| {
            let (u, f) = inputs32(shape, seed);
            let mut du = up(&u);
            Relax3::sweep(config, &mut du, &up(&f), &k, 0.125).unwrap();
            du.to_host().unwrap()
        },
    );
    check(
        "relax3_back",
        Relax3Back::spec(),
        |shape, seed| {
            let (mut u, f) = inputs64(shape, seed);
            Relax3Back::apply_host(&mut u, &f).unwrap();
            u
        },
        |config, shape, seed| {
            let (u, f) = inputs64(shape, seed);
            let mut du = up(&u);
            Relax3Back::sweep(config, &mut du, &up(&f)).unwrap();
            du.to_host().unwrap()
        },
    );
}

#[test]
fn one_dimensional_sweeps_are_one_chain() {
    let spec = Chain::spec();
    assert_eq!(spec.available().collect::<Vec<_>>(), [Schedule::Serial]);
    let inputs = |shape: Shape, seed: u64| {
        let mut r = rng(500 + seed);
        (grid::<f32>(shape, &mut r), grid::<f32>(shape, &mut r))
    };
    check(
        "chain",
        spec,
        |shape, seed| {
            let (mut u, f) = inputs(shape, seed);
            Chain::apply_host(&mut u, &f).unwrap();
            u
        },
        |config, shape, seed| {
            let (u, f) = inputs(shape, seed);
            let mut du = up(&u);
            Chain::sweep(config, &mut du, &up(&f)).unwrap();
            du.to_host().unwrap()
        },
    );
}

#[test]
fn integer_sweeps_are_exact() {
    let inputs = |shape: Shape, seed: u64| {
        let mut r = rng(600 + seed);
        let h = HostGrid::from_fn(shape, |_| r.random::<u32>()).unwrap();
        let s = HostGrid::from_fn(shape, |_| r.random::<u32>()).unwrap();
        (h, s)
    };
    for (i, shape) in shapes(2).into_iter().enumerate() {
        let (mut want, s) = inputs(shape, i as u64);
        Hash::apply_host(&mut want, &s).unwrap();
        for config in configs(&Hash::spec()) {
            let (h, s) = inputs(shape, i as u64);
            let mut dh = up(&h);
            Hash::sweep(&config, &mut dh, &up(&s)).unwrap();
            assert_eq!(dh.to_host().unwrap().data(), want.data(), "hash {config:?} on {shape}");
        }
    }
}

/// The tuner measures every schedule on a scratch copy (the field is unchanged), fits the
/// model, and its choice runs; the model's prediction for the measured samples is finite and
/// positive.
#[test]
fn tuning_leaves_the_field_alone_and_chooses_a_schedule() {
    let shape = Shape::d2(40, 33);
    let mut r = rng(700);
    let u = grid::<f32>(shape, &mut r);
    let f = grid::<f32>(shape, &mut r);
    let mut du = up(&u);
    let t = GsBackward::tune(&mut du, &up(&f)).unwrap();
    assert_eq!(
        du.to_host()
            .unwrap()
            .data()
            .iter()
            .map(|v| v.to_bits())
            .collect::<Vec<_>>(),
        u.data().iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        "tune changed the field"
    );
    let spec = GsBackward::spec();
    assert!(spec.available().any(|s| s == t.chosen.schedule));
    assert!(t.samples.len() >= 4, "{:?}", t.samples);
    for s in &t.samples {
        let p = t
            .model
            .predict_ns(&spec, shape, &SweepConfig::with_block(s.schedule, s.block))
            .unwrap();
        assert!(p.is_finite() && p > 0.0, "{s:?}: {p}");
    }
    let mut want = u.clone();
    GsBackward::apply_host(&mut want, &f).unwrap();
    GsBackward::sweep(&t.chosen, &mut du, &up(&f)).unwrap();
    assert_same("the tuned schedule", &du.to_host().unwrap(), &want);
}

/// The schedules a split is checked in, at a block edge that divides no test extent: every
/// available one if `every`, else the wave, blocks and persistent ones (each slab of a split
/// builds its own program, so every schedule is checked once per sweep rank, not per split).
fn split_configs(spec: &SweepSpec, every: bool) -> Vec<SweepConfig> {
    spec.available()
        .filter(|&s| every || matches!(s, Schedule::Wave | Schedule::Blocks | Schedule::Persistent))
        .map(|s| SweepConfig::with_block(s, 3))
        .collect()
}

/// Splits over 2 and 3 slabs of the one test device (uneven shares; halos deeper than the
/// sweep's reach, so each slab sweeps a window of its buffer).
fn splits() -> Vec<Devices> {
    let d = common::device();
    [(vec![1.0, 1.0], 1), (vec![1.0, 3.0, 2.0], 3)]
        .into_iter()
        .map(|(w, depth)| {
            Devices::new(vec![d.clone(); w.len()])
                .unwrap()
                .with_weights(&w)
                .unwrap()
                .depth(depth)
                .unwrap()
        })
        .collect()
}

#[test]
fn split_sweeps_equal_the_sequential_sweep() {
    let k = Relax { w: 1.25, h2: 0.01 };
    // Two sweeps in a row, so the second reads halos the first left stale.
    for devices in splits() {
        let n = devices.devices().len();
        // 2-D, forward along the split axis.
        let shape = Shape::d2(13, 29);
        let mut r = rng(11);
        let (u0, f) = (grid::<f32>(shape, &mut r), grid::<f32>(shape, &mut r));
        let mut want = u0.clone();
        for _ in 0..2 {
            GsForward::apply_host(&mut want, &f, &k).unwrap();
        }
        let fs = devices.upload(&f).unwrap();
        for config in split_configs(&GsForward::spec(), n == 3) {
            let plan = GsForward::plan(&devices, &config, shape).unwrap();
            let mut u = devices.upload(&u0).unwrap();
            for _ in 0..2 {
                GsForward::sweep_plan(&plan, &mut u, &fs, &k).unwrap();
                plan.check().unwrap();
            }
            assert_same(
                &format!("gs_forward on {n} slabs, {config:?}"),
                &u.to_host().unwrap(),
                &want,
            );
        }
        // 2-D f64, backward along the split axis, a diagonal new read, halo 2 along x.
        let (a0, a) = (grid::<f64>(shape, &mut r), grid::<f64>(shape, &mut r));
        let mut want = a0.clone();
        for _ in 0..2 {
            Orthant::apply_host(&mut want, &a).unwrap();
        }
        let as_ = devices.upload(&a).unwrap();
        for config in split_configs(&Orthant::spec(), false) {
            let plan = Orthant::plan(&devices, &config, shape).unwrap();
            let mut u = devices.upload(&a0).unwrap();
            for _ in 0..2 {
                Orthant::sweep_plan(&plan, &mut u, &as_).unwrap();
            }
            assert_same(
                &format!("orthant on {n} slabs, {config:?}"),
                &u.to_host().unwrap(),
                &want,
            );
        }
        // 3-D, forward and backward along z (the split axis).
        let shape = Shape::d3(6, 5, 17);
        let (v0, g) = (grid::<f32>(shape, &mut r), grid::<f32>(shape, &mut r));
        let mut want = v0.clone();
        for _ in 0..2 {
            Relax3::apply_host(&mut want, &g, &k, 0.5).unwrap();
        }
        let gs = devices.upload(&g).unwrap();
        for config in split_configs(&Relax3::spec(), n == 3) {
            let plan = Relax3::plan(&devices, &config, shape).unwrap();
            let mut u = devices.upload(&v0).unwrap();
            for _ in 0..2 {
                Relax3::sweep_plan(&plan, &mut u, &gs, &k, 0.5).unwrap();
            }
            assert_same(
                &format!("relax3 on {n} slabs, {config:?}"),
                &u.to_host().unwrap(),
                &want,
            );
        }
        let (w0, h) = (grid::<f64>(shape, &mut r), grid::<f64>(shape, &mut r));
        let mut want = w0.clone();
        Relax3Back::apply_host(&mut want, &h).unwrap();
        let hs = devices.upload(&h).unwrap();
        for config in split_configs(&Relax3Back::spec(), false) {
            let plan = Relax3Back::plan(&devices, &config, shape).unwrap();
            let mut u = devices.upload(&w0).unwrap();
            Relax3Back::sweep_plan(&plan, &mut u, &hs).unwrap();
            assert_same(
                &format!("relax3_back on {n} slabs, {config:?}"),
                &u.to_host().unwrap(),
                &want,
            );
        }
    }
}

#[test]
fn sweeps_that_cannot_be_split_are_refused() {
    let d = common::device();
    let two = Devices::new(vec![d.clone(); 2]).unwrap();
    let config = SweepConfig::new(Schedule::Wave);
    let err = |e: clforge::runtime::Error| e.to_string();
    // A clamped boundary, a 1-D chain and a periodic split axis: typed errors that say why.
    let e = err(Clamped::plan(&two, &config, Shape::d2(8, 20)).unwrap_err());
    assert!(e.contains("cannot be split") && e.contains("fixed"), "{e}");
    let e = err(Chain::plan(&two, &SweepConfig::new(Schedule::Serial), Shape::d1(40)).unwrap_err());
    assert!(e.contains("1-D sweep"), "{e}");
    let e = err(GsForward::plan(&two.clone().periodic(true), &config, Shape::d2(8, 20)).unwrap_err());
    assert!(e.contains("periodic"), "{e}");
    // A state split otherwise than the plan.
    let three = Devices::new(vec![d.clone(); 3]).unwrap().depth(2).unwrap();
    let plan = GsForward::plan(&two, &config, Shape::d2(8, 20)).unwrap();
    let mut u = three.zeros::<f32>(Shape::d2(8, 20)).unwrap();
    let f = two.zeros::<f32>(Shape::d2(8, 20)).unwrap();
    let e = err(GsForward::sweep_plan(&plan, &mut u, &f, &Relax { w: 1.0, h2: 0.0 }).unwrap_err());
    assert!(e.contains("split as"), "{e}");
}

/// A sweep written with a loop over a weight table and an accumulator (unrolled by the macro):
/// upwind smoothing over the three points behind along x.
#[sweep(order = forward)]
pub fn looped(u: &Sweep<f32>, f: &Grid<f32>) -> f32 {
    const W: [f32; 3] = [0.5, 0.25, 0.125];
    let mut s = 0.0;
    for k in 1..4 {
        s += W[k - 1] * u.new(-(k as isize), 0);
    }
    s + 0.125 * f.at(0, 0)
}

#[test]
fn a_sweep_with_a_loop_equals_the_sequential_sweep() {
    let inputs = |shape: Shape, seed: u64| {
        let mut r = rng(200 + seed);
        (grid::<f32>(shape, &mut r), grid::<f32>(shape, &mut r))
    };
    assert_eq!(Looped::spec().halo[0], 3);
    check(
        "looped",
        Looped::spec(),
        |shape, seed| {
            let (mut u, f) = inputs(shape, seed);
            Looped::apply_host(&mut u, &f).unwrap();
            u
        },
        |config, shape, seed| {
            let (u, f) = inputs(shape, seed);
            let mut du = up(&u);
            Looped::sweep(config, &mut du, &up(&f)).unwrap();
            du.to_host().unwrap()
        },
    );
}
