//! The run-time half of the differential tester, compiled into every generated crate (and
//! into `clforge-difftest` itself, for the lints): inputs full of the values that break code
//! (NaN, ±inf, ±0, subnormals, extremes), every launch configuration, the comparison with the
//! host function, and a report of the first differing point with the inputs it read.
//!
//! Protocol: one JSON object per stdout line, `{"event": "start" | "done" | "mismatch", ...}`;
//! a case that never reports `done` crashed or hung the process.

use clforge::prelude::*;
use clforge::runtime::{Scalar, StencilSpec};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Instant;

/// How host and device values are compared.
#[derive(Clone, Copy, Debug)]
pub enum Tol {
    /// Bit for bit; any NaN equals any NaN.
    Exact,
    /// Within this many ulp, NaN with NaN and an infinity only with itself.
    Ulps(u32),
}

/// One generated stencil as the harness sees it.
#[derive(Clone, Copy, Debug)]
pub struct Case {
    pub id: u64,
    /// Inputs are drawn from this id's stream (a shrunk stencil keeps its original's inputs).
    pub input_id: u64,
    pub tol: Tol,
    /// Zeros compare equal whatever their sign (float `min`/`max` may return either).
    pub zero_sign_free: bool,
}

/// A value a grid, scalar or params field can hold.
pub trait Value: Scalar + PartialEq {
    /// A random value; `tame` draws ordinary values more often (scalars and params).
    fn random(rng: &mut SmallRng, tame: bool) -> Self;
    /// Host and device agree.
    fn same(host: Self, dev: Self, tol: Tol, zero_sign_free: bool) -> bool;
    /// The value and its bits.
    fn show(self) -> String;
}

pub fn show<T: Value>(v: T) -> String {
    v.show()
}

macro_rules! float_value {
    ($t:ty, $bits:ty, $exp_bits:expr, $max_exp:expr, $width:expr, $boundaries:expr) => {
        impl Value for $t {
            fn random(rng: &mut SmallRng, tame: bool) -> $t {
                let r = rng.random_range(0..100);
                if tame && r < 75 {
                    return rng.random_range(-100.0..100.0);
                }
                let sign: $bits = if rng.random_bool(0.5) {
                    1 << ($width - 1)
                } else {
                    0
                };
                let frac_bits = $width - 1 - $exp_bits;
                match r {
                    // NaN with a random payload and sign
                    0..=3 => <$t>::from_bits(
                        sign | (((1 << $exp_bits) - 1) << frac_bits)
                            | (1 << (frac_bits - 1))
                            | rng.random_range(0..(1 << (frac_bits - 1))),
                    ),
                    4..=6 => <$t>::INFINITY,
                    7..=9 => <$t>::NEG_INFINITY,
                    10..=15 => 0.0,
                    16..=20 => -0.0,
                    21..=26 => <$t>::from_bits(sign | rng.random_range(1..(1 << frac_bits))),
                    27..=29 => [<$t>::MAX, <$t>::MIN, <$t>::MIN_POSITIVE, -<$t>::MIN_POSITIVE][rng.random_range(0..4)],
                    30..=37 => {
                        let e: i32 = rng.random_range(10..$max_exp);
                        let v = (10.0 as $t).powi(e) * rng.random_range(1.0..9.9);
                        if sign != 0 {
                            -v
                        } else {
                            v
                        }
                    }
                    38..=43 => {
                        let e: i32 = rng.random_range(5..$max_exp - 1);
                        let v = (10.0 as $t).powi(-e) * rng.random_range(1.0..9.9);
                        if sign != 0 {
                            -v
                        } else {
                            v
                        }
                    }
                    44..=55 => {
                        let k = rng.random_range(-8..=8) as $t;
                        if rng.random_bool(0.5) {
                            k
                        } else {
                            k + 0.5
                        }
                    }
                    56..=61 => {
                        let b: &[$t] = &$boundaries;
                        b[rng.random_range(0..b.len())]
                    }
                    _ => rng.random_range(-100.0..100.0),
                }
            }
            fn same(h: $t, d: $t, tol: Tol, zero_sign_free: bool) -> bool {
                if h.is_nan() || d.is_nan() {
                    return h.is_nan() && d.is_nan();
                }
                if h == 0.0 && d == 0.0 {
                    return zero_sign_free || h.to_bits() == d.to_bits();
                }
                match tol {
                    Tol::Exact => h.to_bits() == d.to_bits(),
                    Tol::Ulps(n) => {
                        if h.is_infinite() || d.is_infinite() {
                            return h == d;
                        }
                        let ord = |v: $t| -> i128 {
                            let b = v.to_bits();
                            let mag = (b & !(1 << ($width - 1))) as i128;
                            if b >> ($width - 1) == 1 {
                                -mag
                            } else {
                                mag
                            }
                        };
                        (ord(h) - ord(d)).abs() <= i128::from(n)
                    }
                }
            }
            fn show(self) -> String {
                format!("{:?} (0x{:0w$x})", self, self.to_bits(), w = $width / 4)
            }
        }
    };
}

float_value!(
    f32,
    u32,
    8,
    38,
    32,
    [
        2147483520.0,
        -2147483648.0,
        2147483648.0,
        4294967040.0,
        4294967296.0,
        255.0,
        255.5,
        256.0,
        -0.5,
        0.5,
        1.5,
        2.5,
        -2.5,
        16777216.0,
        -1.0,
        127.5,
        -128.5
    ]
);
float_value!(
    f64,
    u64,
    11,
    308,
    64,
    [
        2147483647.0,
        2147483647.5,
        -2147483648.0,
        -2147483649.0,
        2147483648.0,
        4294967295.0,
        4294967295.5,
        4294967296.0,
        255.0,
        255.5,
        256.0,
        -0.5,
        0.5,
        1.5,
        2.5,
        -2.5,
        9007199254740992.0,
        16777217.0,
        -1.0
    ]
);

macro_rules! int_value {
    ($t:ty, $small:expr, $specials:expr) => {
        impl Value for $t {
            fn random(rng: &mut SmallRng, tame: bool) -> $t {
                let r = rng.random_range(0..100);
                let specials: &[$t] = &$specials;
                match r {
                    0..=39 => rng.random_range($small),
                    40..=59 if !tame => specials[rng.random_range(0..specials.len())],
                    _ => rng.random(),
                }
            }
            fn same(h: $t, d: $t, _: Tol, _: bool) -> bool {
                h == d
            }
            fn show(self) -> String {
                format!("{self} ({self:#x})")
            }
        }
    };
}

int_value!(
    i32,
    -8..=8,
    [
        i32::MIN,
        i32::MAX,
        0,
        -1,
        1,
        i32::MIN + 1,
        1 << 30,
        -(1 << 16),
        255,
        256
    ]
);
int_value!(
    u32,
    0..=8,
    [u32::MAX, 0, 1, 1 << 31, (1 << 31) - 1, 255, 256, 65535, 65536]
);
int_value!(u8, 0..=4, [0, 255, 128, 127, 1, 2, 3, 254]);

/// Draws a stencil's inputs for one shape: deterministic in (seed, input id, shape).
pub struct Inputs {
    rng: SmallRng,
}

impl Inputs {
    pub fn grid<T: Value>(&mut self, shape: Shape) -> HostGrid<T> {
        let n: usize = shape.dims().iter().product();
        let data = (0..n).map(|_| T::random(&mut self.rng, false)).collect();
        HostGrid::from_vec(shape, data).expect("a small grid")
    }
    pub fn scalar<T: Value>(&mut self) -> T {
        T::random(&mut self.rng, true)
    }
}

/// The host function applied to a state (the iterated grid, or the output's initial values).
pub type HostFn<'a, O> = dyn Fn(&HostGrid<O>) -> clforge::runtime::Result<HostGrid<O>> + 'a;
/// One launch of a configuration from a state.
pub type DeviceFn<'a, O> = dyn Fn(&LaunchConfig, &HostGrid<O>) -> clforge::runtime::Result<HostGrid<O>> + 'a;
/// `(read as written, value)` of every read at a point.
pub type ReadsFn<'a> = dyn Fn([usize; 3]) -> Vec<(&'static str, String)> + 'a;

/// A generated stencil's driver.
pub type CaseFn = fn(&mut Harness);

pub struct Harness {
    device: Device,
    seed: u64,
    only_config: Option<String>,
    only_shape: Option<usize>,
    ids: Option<Vec<u64>>,
    after: Option<u64>,
    shard: (u64, u64),
    /// (case, configuration) whose program failed to build: not rebuilt for the next shapes.
    failed: std::cell::RefCell<Vec<(u64, String)>>,
}

/// Shapes that are and are not multiples of the tile and of the vector lanes, down to one point.
pub fn shapes(rank: usize) -> Vec<Shape> {
    match rank {
        1 => [1, 5, 37, 70].map(Shape::d1).to_vec(),
        // (40, 7) and (24, 4, 3): rows of whole vectors of 8 with interior ones (the vector
        // variant's aligned reads, VEC_ALIGNED); the others' rows are not
        2 => [(1, 1), (3, 2), (13, 6), (35, 19), (40, 7)]
            .map(|(x, y)| Shape::d2(x, y))
            .to_vec(),
        _ => [(1, 1, 1), (3, 2, 2), (11, 6, 5), (24, 4, 3)]
            .map(|(x, y, z)| Shape::d3(x, y, z))
            .to_vec(),
    }
}

/// Every launch configuration of a stencil, labelled: each variant, the default tile and a
/// small one, the march variant in 3-D, and temporal blocking where the stencil has it: 3 steps, or 1 when results are
/// only ulp-close or zeros may differ in sign (an iterated difference grows).
pub fn configs(spec: &StencilSpec, case: &Case) -> Vec<(String, LaunchConfig)> {
    let small = if spec.rank == 1 {
        Tile { x: 16, y: 1, rows: 1 }
    } else {
        Tile { x: 8, y: 8, rows: 2 }
    };
    let mut out = vec![
        ("plain".to_string(), LaunchConfig::variant(Variant::Plain)),
        ("vector".to_string(), LaunchConfig::variant(Variant::Vector)),
        ("tiled".to_string(), LaunchConfig::variant(Variant::Tiled)),
        (
            format!("tiled-{}x{}x{}", small.x, small.y, small.rows),
            LaunchConfig::tiled(small),
        ),
    ];
    if spec.rank > 1 {
        out.push((
            "plain-3pts".to_string(),
            LaunchConfig {
                points: Some(3),
                ..LaunchConfig::variant(Variant::Plain)
            },
        ));
        out.push((
            "vector-2pts".to_string(),
            LaunchConfig {
                points: Some(2),
                ..LaunchConfig::variant(Variant::Vector)
            },
        ));
    }
    // The narrow vector kernel (4 lanes), the GPU's default.
    out.push((
        "vector4".to_string(),
        LaunchConfig {
            lanes: Some(4),
            ..LaunchConfig::variant(Variant::Vector)
        },
    ));
    // 3-D: 2.5-D blocking over 2 planes per work-group, so the shapes' depths (1, 2, 5) take
    // one, one and three (the last clipped) work-groups along z
    if spec.variant(Variant::March).unavailable.is_none() {
        let tile = Tile { x: 8, y: 4, rows: 2 };
        out.push((
            format!("march-{}x{}x{}-z2", tile.x, tile.y, tile.rows),
            LaunchConfig::march(tile, 2),
        ));
    }
    if spec.variant(Variant::Steps).unavailable.is_none() {
        let steps = if matches!(case.tol, Tol::Exact) && !case.zero_sign_free {
            3
        } else {
            1
        };
        // in 3-D the steps tile is `y` deep along z: keep it small
        let tile = if spec.rank == 3 {
            Tile { x: 8, y: 4, rows: 2 }
        } else {
            small
        };
        out.push((
            format!("steps-{steps}-{}x{}x{}", tile.x, tile.y, tile.rows),
            LaunchConfig::steps(steps, tile),
        ));
    }
    out
}

fn emit(v: serde_json::Value) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{v}");
    let _ = out.flush();
}

fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panic".to_string())
}

impl Harness {
    /// `--seed S --ids a,b --after ID --shard K/N --only-config LABEL --only-shape I`.
    pub fn from_args() -> Harness {
        let args: Vec<String> = std::env::args().collect();
        let get = |name: &str| {
            args.iter()
                .position(|a| a == name)
                .and_then(|i| args.get(i + 1))
                .cloned()
        };
        let shard = get("--shard")
            .and_then(|s| {
                s.split_once('/')
                    .map(|(a, b)| (a.parse().unwrap_or(0), b.parse().unwrap_or(1)))
            })
            .unwrap_or((0, 1));
        Harness {
            device: Device::default().expect("an OpenCL device (make deps installs PoCL)"),
            seed: get("--seed").and_then(|s| s.parse().ok()).unwrap_or(0),
            only_config: get("--only-config"),
            only_shape: get("--only-shape").and_then(|s| s.parse().ok()),
            ids: get("--ids").map(|s| s.split(',').filter_map(|x| x.parse().ok()).collect()),
            after: get("--after").and_then(|s| s.parse().ok()),
            shard,
            failed: Default::default(),
        }
    }

    /// Runs the selected cases in order, reporting `start` and `done` around each.
    pub fn run(&mut self, cases: &[(u64, CaseFn)]) {
        for (i, (id, run)) in cases.iter().enumerate() {
            if (i as u64) % self.shard.1 != self.shard.0
                || self.ids.as_ref().is_some_and(|ids| !ids.contains(id))
                || self.after.is_some_and(|a| *id <= a)
            {
                continue;
            }
            emit(serde_json::json!({"event": "start", "id": id}));
            let t = Instant::now();
            run(self);
            emit(serde_json::json!({"event": "done", "id": id, "ms": t.elapsed().as_millis() as u64}));
        }
    }

    pub fn device(&self) -> Device {
        self.device.clone()
    }

    /// The shapes of this rank to run, with their index (the input stream depends on it).
    pub fn shapes(&self, rank: usize) -> Vec<(usize, Shape)> {
        shapes(rank)
            .into_iter()
            .enumerate()
            .filter(|(i, _)| self.only_shape.is_none_or(|s| s == *i))
            .collect()
    }

    pub fn inputs(&self, input_id: u64, shape_index: usize) -> Inputs {
        Harness::inputs_for(self.seed, input_id, shape_index)
    }

    /// The inputs of stencil `input_id` on shape `shape_index` in the run with `seed`.
    pub fn inputs_for(seed: u64, input_id: u64, shape_index: usize) -> Inputs {
        let s = seed
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .wrapping_add(input_id.wrapping_mul(0xD1B5_4A32_D192_ED03))
            .wrapping_add(shape_index as u64);
        Inputs {
            rng: SmallRng::seed_from_u64(s),
        }
    }

    fn mismatch(&self, case: &Case, config: &str, shape: Shape, kind: &str, count: usize, text: String) {
        emit(serde_json::json!({
            "event": "mismatch", "id": case.id, "config": config, "shape": shape.to_string(),
            "kind": kind, "count": count, "text": text,
        }));
    }

    /// Runs the host function and every configuration on one shape and reports where they
    /// differ: the first differing point, its host and device values, and what it read.
    #[allow(clippy::too_many_arguments)]
    pub fn check<O: Value>(
        &self,
        case: &Case,
        spec: &StencilSpec,
        shape: Shape,
        init: &HostGrid<O>,
        host: &HostFn<'_, O>,
        device: &DeviceFn<'_, O>,
        reads: &ReadsFn<'_>,
        uniforms: &[(&'static str, String)],
    ) {
        if let Ok(dir) = std::env::var("DIFFTEST_SOURCE_DIR") {
            let _ = std::fs::write(format!("{dir}/s{:06}.cl", case.id), spec.source);
        }
        let step = |state: &HostGrid<O>| -> std::result::Result<HostGrid<O>, String> {
            match catch_unwind(AssertUnwindSafe(|| host(state))) {
                Ok(Ok(g)) => Ok(g),
                Ok(Err(e)) => Err(format!("host reference failed: {e}")),
                Err(p) => Err(format!("host function panicked: {}", panic_text(&*p))),
            }
        };
        let mut iterates = vec![init.clone()];
        for (label, config) in configs(spec, case) {
            if self.only_config.as_ref().is_some_and(|c| *c != label)
                || self.failed.borrow().contains(&(case.id, label.clone()))
            {
                continue;
            }
            let n = config.iterations();
            while iterates.len() <= n {
                match step(&iterates[iterates.len() - 1]) {
                    Ok(g) => iterates.push(g),
                    Err(e) => {
                        self.mismatch(case, "host", shape, "host-panic", 0, e);
                        return;
                    }
                }
            }
            let got = match catch_unwind(AssertUnwindSafe(|| device(&config, init))) {
                Ok(Ok(g)) => g,
                Ok(Err(e)) => {
                    self.mismatch(case, &label, shape, "device-error", 0, format!("{config:?}: {e}"));
                    self.failed.borrow_mut().push((case.id, label));
                    continue;
                }
                Err(p) => {
                    let text = format!("{config:?}: launch panicked: {}", panic_text(&*p));
                    self.mismatch(case, &label, shape, "device-error", 0, text);
                    continue;
                }
            };
            let want = &iterates[n];
            let differ: Vec<usize> = (0..want.data().len())
                .filter(|&i| !O::same(want.data()[i], got.data()[i], case.tol, case.zero_sign_free))
                .collect();
            let Some(&first) = differ.first() else {
                continue;
            };
            let [nx, ny, _] = shape.dims();
            let p = [first % nx, (first / nx) % ny, first / (nx * ny)];
            let (h, d) = (want.data()[first], got.data()[first]);
            let nan_only = differ
                .iter()
                .all(|&i| want.data()[i].show().starts_with("NaN") || got.data()[i].show().starts_with("NaN"));
            let zero_only = differ.iter().all(|&i| {
                let (a, b) = (want.data()[i].show(), got.data()[i].show());
                a.trim_start_matches('-').starts_with("0.0 ") && b.trim_start_matches('-').starts_with("0.0 ")
            });
            let kind = if zero_only {
                "zero-sign"
            } else if nan_only {
                "nan"
            } else {
                "value"
            };
            let mut text = format!(
                "{config:?} on {shape}: {} of {} points differ\nfirst at ({}, {}, {}): host {} device {}\n",
                differ.len(),
                want.data().len(),
                p[0],
                p[1],
                p[2],
                h.show(),
                d.show()
            );
            if n > 1 {
                text.push_str(&format!("(after {n} steps; the reads below are the first step's)\n"));
            }
            for (r, v) in reads(p) {
                text.push_str(&format!("  {r} = {v}\n"));
            }
            for (u, v) in uniforms {
                text.push_str(&format!("  {u} = {v}\n"));
            }
            self.mismatch(case, &label, shape, kind, differ.len(), text);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_compare_by_bits_with_nan_equal_to_nan() {
        assert!(f32::same(f32::NAN, -f32::NAN, Tol::Exact, false));
        assert!(!f32::same(f32::NAN, 1.0, Tol::Exact, false));
        assert!(!f32::same(0.0, -0.0, Tol::Exact, false));
        assert!(f32::same(0.0, -0.0, Tol::Exact, true));
        assert!(!f64::same(1.0, 1.0 + f64::EPSILON, Tol::Exact, false));
    }

    #[test]
    fn ulp_tolerance_counts_representable_steps() {
        let one = 1.0f32;
        let up2 = f32::from_bits(one.to_bits() + 2);
        assert!(f32::same(one, up2, Tol::Ulps(2), false));
        assert!(!f32::same(one, up2, Tol::Ulps(1), false));
        // across zero: the smallest subnormals of both signs are 2 ulp apart
        let tiny = f32::from_bits(1);
        assert!(f32::same(tiny, -tiny, Tol::Ulps(2), false));
        assert!(!f32::same(f32::MAX, f32::INFINITY, Tol::Ulps(16), false));
    }

    #[test]
    fn inputs_hold_the_special_values() {
        let mut inp = Harness::inputs_for(1, 2, 0);
        let g: HostGrid<f32> = inp.grid(Shape::d2(40, 40));
        let d = g.data();
        assert!(d.iter().any(|v| v.is_nan()));
        assert!(d.iter().any(|v| v.is_infinite() && *v < 0.0));
        assert!(d.iter().any(|v| v.to_bits() == 0x8000_0000));
        assert!(d.iter().any(|v| v.is_subnormal()));
    }
}
