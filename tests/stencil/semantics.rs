//! The kernel means what the Rust means: one regression per divergence users found,
//! each stencil run host vs every variant on input full of NaN, ±inf, ±0, subnormals and
//! extremes, compared bit for bit (any NaN equals any NaN). docs/SEMANTICS.md says why each
//! lowering equals Rust.
#![allow(non_upper_case_globals, clippy::bool_comparison, clippy::unnecessary_min_or_max)]

use crate::common;

use clforge::prelude::*;
use clforge::runtime::{Scalar, StencilSpec};
use common::*;
use rand::rngs::SmallRng;
use rand::Rng;

/// Values that break naive lowerings, mixed with ordinary ones.
trait Special: Scalar + Copy + std::fmt::Debug {
    fn special(r: &mut SmallRng) -> Self;
    /// Same value: equal bits, or both NaN.
    fn same(a: Self, b: Self) -> bool;
}

impl Special for f32 {
    fn special(r: &mut SmallRng) -> f32 {
        let pick = [
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            0.0,
            -0.0,
            1e-40,
            -1e-41,
            f32::MAX,
            -f32::MAX,
            f32::MIN_POSITIVE,
            1.076,
            0.5,
            -1.0,
            2.5e9,
            -3.0e9,
            1.0,
        ];
        if r.random_bool(0.5) {
            pick[r.random_range(0..pick.len())]
        } else {
            r.random_range(-300.0..300.0)
        }
    }
    fn same(a: f32, b: f32) -> bool {
        a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
    }
}

impl Special for f64 {
    fn special(r: &mut SmallRng) -> f64 {
        let pick = [
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            0.0,
            -0.0,
            1e-310,
            f64::MAX,
            -f64::MAX,
            1e300,
            -1e-300,
            1.076,
            0.5,
            -1.0,
            5e9,
            1.0,
        ];
        if r.random_bool(0.5) {
            pick[r.random_range(0..pick.len())]
        } else {
            r.random_range(-300.0..300.0)
        }
    }
    fn same(a: f64, b: f64) -> bool {
        a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
    }
}

macro_rules! special_int {
    ($($t:ty),*) => {$(
        impl Special for $t {
            fn special(r: &mut SmallRng) -> $t {
                let pick = [<$t>::MIN, <$t>::MAX, 0, 1, 2, 3, 7, 8, 250, 255];
                if r.random_bool(0.5) {
                    pick[r.random_range(0..pick.len())] as $t
                } else {
                    r.random()
                }
            }
            fn same(a: $t, b: $t) -> bool {
                a == b
            }
        }
    )*};
}
special_int!(u8, i32, u32);

fn special<T: Special>(shape: Shape, r: &mut SmallRng) -> HostGrid<T> {
    HostGrid::from_fn(shape, |_| T::special(r)).expect("grid")
}

/// Every generated variant of a stencil: plain, vector, tiled (default and a small tile),
/// one step of the steps variant where it exists, and the march variant (3-D).
fn variants(spec: &StencilSpec) -> Vec<LaunchConfig> {
    let small = if spec.rank == 1 {
        Tile { x: 16, y: 1, rows: 1 }
    } else {
        Tile { x: 8, y: 8, rows: 2 }
    };
    let mut v = vec![
        LaunchConfig::variant(Variant::Plain),
        LaunchConfig::variant(Variant::Vector),
        LaunchConfig::variant(Variant::Tiled),
        LaunchConfig::tiled(small),
    ];
    if spec.variant(Variant::Steps).unavailable.is_none() {
        v.push(LaunchConfig::steps(1, small));
    }
    if spec.variant(Variant::March).unavailable.is_none() {
        v.push(LaunchConfig::march(Tile { x: 8, y: 4, rows: 2 }, 2));
    }
    v
}

fn assert_same<T: Special>(name: &str, config: &LaunchConfig, dev: &HostGrid<T>, host: &HostGrid<T>, inputs: &str) {
    for (i, (d, h)) in dev.data().iter().zip(host.data()).enumerate() {
        assert!(
            T::same(*d, *h),
            "{name} {config:?}: point {i} of {}: device {d:?}, host {h:?}\n{inputs}",
            host.shape()
        );
    }
}

/// Runs a stencil on the host and in every variant on random special input; `$g: $t` are its
/// grids (in order), `$s` its scalar and params arguments after the grids.
macro_rules! same {
    ($ty:ident -> $out:ty, ($($g:ident: $gt:ty),*) $(, $s:expr)*) => {{
        for (seed, shape) in [Shape::d2(37, 11), Shape::d2(9, 3)].into_iter().enumerate() {
            let mut r = rng(7 + seed as u64);
            $(let $g: HostGrid<$gt> = special(shape, &mut r);)*
            let mut host = HostGrid::<$out>::new(shape).expect("grid");
            $ty::apply_host(&mut host, $(&$g,)* $($s),*).expect("host");
            for config in variants(&$ty::spec()) {
                let mut out = DeviceGrid::<$out>::new(&device(), shape).expect("out");
                // The steps variant starts from the state: give it the host's untouched ring.
                if config.variant == Variant::Steps {
                    out.upload(&host).expect("upload");
                }
                $ty::launch(&config, &mut out, $(&up(&$g),)* $($s),*).expect("launch");
                let inputs = format!(concat!($(stringify!($g), " = {:?}\n"),*), $($g.data()),*);
                assert_same(stringify!($ty), &config, &out.to_host().expect("download"), &host, &inputs);
            }
        }
    }};
}

mod bools {
    use clforge::prelude::*;

    /// A per-point mask beside a uniform bool (`vec8` used to mix -1 and 1 lanes).
    #[stencil]
    pub fn mask_or_force(u: &Grid<f32>, force: f32) -> f32 {
        if (u.at(0, 0) > 0.0) | (force > 0.0) {
            1.0
        } else {
            0.0
        }
    }

    #[stencil]
    pub fn eq_true(u: &Grid<f32>) -> f32 {
        let pos = u.at(0, 0) > 0.0;
        if pos == true {
            u.at(1, 0)
        } else {
            -1.0
        }
    }

    /// Masks of three widths (`long8` from doubles, `char8` from bytes, uniform `int`).
    #[stencil]
    pub fn wide_masks(u: &Grid<f64>, m: &Grid<u8>, flag: i32) -> f64 {
        let a = u.at(0, 0) > 0.0;
        let b = m.at(1, 0) > 2;
        let c = flag > 0;
        let d = (a ^ b) & !c || (b && c);
        if d != (a | b) {
            1.0
        } else {
            0.0
        }
    }

    /// `false < true`, though a true mask lane is -1.
    #[stencil]
    pub fn bool_order(u: &Grid<f32>, g: f32) -> f32 {
        if (u.at(0, 0) > 0.0) < (g > 0.0) {
            1.0
        } else {
            0.0
        }
    }

    /// A bool chosen per point between a uniform and a varying one.
    #[stencil]
    pub fn bool_value(u: &Grid<f32>, g: f32) -> f32 {
        let b = if u.at(0, 0) > 0.0 { g > 0.0 } else { u.at(1, 0) > 0.0 };
        if b {
            1.0
        } else {
            0.0
        }
    }
}

#[test]
fn bools_mix_masks_and_uniform_values() {
    use bools::*;
    for g in [1.0f32, -1.0] {
        same!(MaskOrForce -> f32, (u: f32), g);
        same!(BoolOrder -> f32, (u: f32), g);
        same!(BoolValue -> f32, (u: f32), g);
    }
    same!(EqTrue -> f32, (u: f32));
    for flag in [1, -1] {
        same!(WideMasks -> f64, (u: f64, m: u8), flag);
    }
}

mod literals {
    use clforge::prelude::*;

    /// `t0` is `f64` because of its use with an `f64` grid, two lines later.
    #[stencil]
    pub fn late_f64(u: &Grid<f64>) -> f64 {
        let t0 = 1000000000.25;
        let shifted = t0 - 1000000000.0;
        u.at(0, 0) + shifted
    }

    /// Unconstrained float literals are `f64` in Rust (`1e300 * 1e-300` is 1, not NaN).
    #[stencil]
    pub fn unconstrained(u: &Grid<f32>) -> f32 {
        let t = 0.1;
        let big = 1e300;
        u.at(0, 0) + (t as f32) + ((big * 1e-300) as f32)
    }

    /// `f32::sqrt(0.1)` is an `f32` computed in `f32`, though the literal alone would be `f64`.
    #[stencil]
    pub fn typed_call(u: &Grid<f64>) -> f64 {
        let s = f32::sqrt(0.1);
        let m = f32::max(0.3, 0.2);
        u.at(0, 0) + s as f64 + m as f64
    }

    /// Negated negative literals (`--1e30f` is a decrement in C; found by the tester).
    #[stencil]
    pub fn double_negation(u: &Grid<f32>) -> f32 {
        -(-1e30f32) * u.at(0, 0) + -(-0.0f32) + (-(-3i32)) as f32
    }

    /// `-2147483648` is one `i32` literal.
    #[stencil]
    pub fn int_min(m: &Grid<i32>) -> i32 {
        if m.at(0, 0) == -2147483648 {
            1
        } else {
            m.at(0, 0) / 2
        }
    }

    /// An inner block's `let` hides the outer one of the same name: `t3` is an `i32` (it was
    /// typed from the outer `f32` `t0`; long difftest run, stencil 103655).
    #[stencil]
    #[allow(clippy::let_and_return)] // the shape under test
    pub fn inner_shadow(m: &Grid<i32>) -> i32 {
        let t0: f32 = 0.5f32;
        let t3 = {
            let t0 = 8i32;
            t0
        };
        let t4 = if m.at(0, 0) > 0 {
            let t0 = m.at(0, 0);
            t0
        } else {
            3
        };
        (7i32 ^ t3) ^ t4 ^ t0 as i32
    }
}

#[test]
fn literals_take_rust_types() {
    use literals::*;
    same!(LateF64 -> f64, (u: f64));
    same!(Unconstrained -> f32, (u: f32));
    same!(IntMin -> i32, (m: i32));
    same!(TypedCall -> f64, (u: f64));
    same!(DoubleNegation -> f32, (u: f32));
    same!(InnerShadow -> i32, (m: i32));
}

mod casts {
    use clforge::prelude::*;

    /// Float to integer saturates, NaN gives 0 (C: undefined, 1.076 * 255 gave 18).
    #[stencil]
    pub fn to_u8(u: &Grid<f32>) -> u8 {
        (u.at(0, 0) * 255.0) as u8
    }

    #[stencil]
    pub fn to_i32(u: &Grid<f32>) -> i32 {
        u.at(0, 0) as i32
    }

    #[stencil]
    pub fn to_u32(u: &Grid<f64>) -> u32 {
        u.at(0, 0) as u32
    }

    /// Integer casts keep the low bits; `u32 as i32` reinterprets.
    #[stencil]
    pub fn int_casts(m: &Grid<u32>, k: &Grid<i32>) -> i32 {
        (m.at(0, 0) as i32) ^ ((k.at(0, 0) as u8) as i32) ^ ((k.at(1, 0) as u32 >> 3) as i32)
    }

    /// `clamp` keeps NaN (OpenCL's returns the lower bound) and `-0.0`.
    #[stencil]
    pub fn clamp_nan(u: &Grid<f32>) -> f32 {
        u.at(0, 0).clamp(-1.0, 1.0) + (u.at(0, 0) * 2.0 - u.at(1, 0)).clamp(-0.0, 0.5)
    }

    /// `u8` arithmetic stays in 8 bits: `!`, shifts (OpenCL promotes to `int`).
    #[stencil]
    pub fn u8_ops(m: &Grid<u8>, s: &Grid<u8>) -> u8 {
        let n = !m.at(0, 0);
        let sh = (m.at(0, 0) << (s.at(0, 0) & 7)) >> 1;
        if n == 250 {
            sh
        } else {
            n ^ sh
        }
    }

    /// A guarded integer division: the select evaluates both branches, so the kernel must
    /// not divide by zero (x86 traps) where the host does not.
    #[stencil]
    pub fn guarded_div(m: &Grid<i32>, d: &Grid<i32>, e: &Grid<u32>) -> i32 {
        let q = if d.at(0, 0) != 0 && d.at(0, 0) != -1 {
            m.at(0, 0) / d.at(0, 0) + m.at(0, 0) % d.at(0, 0)
        } else {
            7
        };
        let r = if e.at(0, 0) != 0 {
            (e.at(1, 0) % e.at(0, 0)) as i32
        } else {
            1
        };
        q ^ r
    }

    #[stencil]
    pub fn int_ops(m: &Grid<i32>) -> i32 {
        let a = if m.at(0, 0) == -2147483648 { 0 } else { m.at(0, 0).abs() };
        (m.at(0, 0) >> 16) * 3 + (m.at(1, 0) & 1023) - 5 + (a >> 2) + m.at(0, 0).min(m.at(1, 0)) / 4
    }

    /// `i32::abs` wraps: `i32::MIN.abs()` is `i32::MIN` (PoCL's `abs` made INT_MIN poison:
    /// `(-1 << 31) ^ i32::MIN.abs()` came out `i32::MIN`, not 0; long difftest run, stencil 103597).
    #[stencil]
    pub fn abs_min(m: &Grid<i32>, k: &Grid<i32>) -> i32 {
        (k.at(0, 0) << 31) ^ m.at(0, 0).abs() ^ m.at(1, 0).abs().max(k.at(1, 0))
    }

    /// `i32::MIN.abs() % d` is negative: NVIDIA's compiler took the helper's arithmetic for a
    /// non-negative abs and made the `%` unsigned (8, not -8, for d = 127; long difftest run
    /// on the H100, stencil 104980).
    #[stencil]
    pub fn abs_min_rem(m: &Grid<i32>, s0: f32) -> i32 {
        m.at(1, 0).abs() % (((s0 as i32) & 255) + 1)
    }

    /// Uniform `u8` arithmetic beside `uchar8` lanes, and integer `clamp`/`min` with literal
    /// bounds (C promotes both to `int`: ambiguous overloads, refused vector operands; found
    /// by the differential tester).
    #[stencil]
    pub fn u8_uniform(m: &Grid<u8>) -> u8 {
        let q = m.at(0, 0) / (15u8 | 1) + 0x80u8.min(127u8);
        let c = (m.at(1, 0) / 3).clamp(0, 3u8);
        if q == 4 {
            c
        } else {
            !q ^ c
        }
    }

    /// Float `%` is `fmod`; min/max ignore a NaN operand as Rust's do.
    #[stencil]
    pub fn float_ops(u: &Grid<f64>) -> f64 {
        u.at(0, 0) % 3.5 + u.at(1, 0).max(u.at(0, 0)) * u.at(-1, 0).min(-2.0) + u.at(0, 0).mul_add(2.0, 1.0)
    }
}

#[test]
fn casts_and_integer_ops_follow_rust() {
    use casts::*;
    same!(ToU8 -> u8, (u: f32));
    same!(ToI32 -> i32, (u: f32));
    same!(ToU32 -> u32, (u: f64));
    same!(IntCasts -> i32, (m: u32, k: i32));
    same!(ClampNan -> f32, (u: f32));
    same!(U8Ops -> u8, (m: u8, s: u8));
    same!(GuardedDiv -> i32, (m: i32, d: i32, e: u32));
    same!(IntOps -> i32, (m: i32));
    same!(U8Uniform -> u8, (m: u8));
    same!(FloatOps -> f64, (u: f64));
}

mod powi {
    use clforge::prelude::*;

    /// Rust's `powi` multiplies by squaring and takes the reciprocal last, so x^6 overflows to
    /// inf and x^-6 is 0 where OpenCL's `pown` gives the subnormal (long difftest run, stencils
    /// 101094 and 101564 of seed 1).
    #[stencil]
    pub fn powi_f32(u: &Grid<f32>, n: &Grid<i32>) -> f32 {
        (u.at(0, 0) * 65536.0).powi(-6) + u.at(1, 0).powi(n.at(0, 0) % 40)
    }

    #[stencil]
    pub fn powi_f64(v: &Grid<f64>, n: &Grid<i32>) -> f64 {
        (v.at(0, 0) * 1e52).powi(-6) - v.at(0, 1).powi(n.at(0, 0) % 70)
    }
}

/// `abs_min` on `i32::MIN`: this test profile checks overflow, so the host function would panic
/// where a release build wraps; the reference is written out with `wrapping_*`, the release
/// semantics docs/SEMANTICS.md states.
#[test]
fn abs_of_min_wraps() {
    use casts::AbsMin;
    let shape = Shape::d2(19, 3);
    let mins = [i32::MIN, -1, 0, 1, i32::MAX, i32::MIN + 1, -7];
    let m = HostGrid::from_fn(shape, |[x, y, _]| mins[(x + 3 * y) % mins.len()]).unwrap();
    let k = HostGrid::from_fn(shape, |[x, y, _]| mins[(2 * x + y) % mins.len()]).unwrap();
    let mut want = HostGrid::<i32>::new(shape).unwrap();
    for p in clforge::runtime::UpdateRegion::new(shape, [1, 0, 0], Boundary::Fixed).points() {
        let at = |g: &HostGrid<i32>, dx: usize| g.get([p[0] + dx, p[1], 0]).unwrap();
        let v = at(&k, 0).wrapping_shl(31) ^ at(&m, 0).wrapping_abs() ^ at(&m, 1).wrapping_abs().max(at(&k, 1));
        want.set(p, v);
    }
    for config in variants(&AbsMin::spec()) {
        let mut out = DeviceGrid::<i32>::new(&device(), shape).unwrap();
        AbsMin::launch(&config, &mut out, &up(&m), &up(&k)).unwrap();
        assert_eq!(out.to_host().unwrap().data(), want.data(), "{config:?}");
    }
    use casts::AbsMinRem;
    for s0 in [126.5f32, -3.065, 6.0, f32::NAN] {
        let d = ((if s0.is_nan() { 0 } else { s0 as i32 }) & 255) + 1;
        let mut want = HostGrid::<i32>::new(shape).unwrap();
        for p in clforge::runtime::UpdateRegion::new(shape, [1, 0, 0], Boundary::Fixed).points() {
            want.set(p, m.get([p[0] + 1, p[1], 0]).unwrap().wrapping_abs().wrapping_rem(d));
        }
        for config in variants(&AbsMinRem::spec()) {
            let mut out = DeviceGrid::<i32>::new(&device(), shape).unwrap();
            AbsMinRem::launch(&config, &mut out, &up(&m), s0).unwrap();
            assert_eq!(out.to_host().unwrap().data(), want.data(), "{config:?}, s0 = {s0}");
        }
    }
}

mod rounding {
    use clforge::prelude::*;

    pub const NAN_K: f32 = f32::NAN;
    pub const NAN_D: f64 = f64::NAN;

    /// A NaN the OpenCL compiler can see through `round`, `floor`, `ceil`: PoCL gave 0 and 2
    /// (long difftest run, stencil 101760; `rint` of one crashed its compiler).
    #[stencil]
    pub fn round_nan_alone(_u: &Grid3<f32>) -> f32 {
        let t0: f32 = f32::round(NAN_K);
        t0
    }

    /// `1.1920929e-7 + -3.0` is a tie that rounds to -3.0; NVIDIA's compiler folded a
    /// constant `fmin`/`fmax` with the sum unrounded, and `ceil` gave -2 (long difftest run on
    /// the H100, stencil 107754). `min`/`max` are compared and selected now.
    #[stencil]
    pub fn constant_min_tie(u: &Grid<f32>, v: &Grid<f64>) -> f32 {
        let lo = (f32::EPSILON + -3.0f32.min(f32::MAX)).ceil();
        let hi = (f32::EPSILON + -(-1.0f32).max(3.0)).ceil();
        let wide = (f64::EPSILON + -3.0f64.min(4.0)).ceil();
        lo * 3.0 + hi + wide as f32 + u.at(0, 0).min(u.at(1, 0)).max(v.at(0, 0) as f32)
    }

    /// PoCL's `exp` of a NaN its compiler can see gave 0.27 (long difftest run, stencil 103699):
    /// every one-argument function passes NaN through a helper.
    #[stencil]
    pub fn transcendental_nan(u: &Grid<f32>, v: &Grid<f64>) -> f32 {
        let a = f32::NAN.exp() + NAN_K.sin() + NAN_K.ln() + f32::NAN.sqrt() + NAN_K.atan() + NAN_K.cbrt();
        let b: f64 = NAN_D.exp() + NAN_D.cos() + NAN_D.log2() + NAN_D.tanh() + f64::NAN.sqrt();
        let c = u.at(0, 0).exp() + u.at(1, 0).sqrt() + (v.at(0, 0).tan() + v.at(-1, 0).log10()) as f32;
        if u.at(0, 0) > 0.0 {
            a + b as f32
        } else {
            c
        }
    }

    #[stencil]
    pub fn round_nan(u: &Grid<f32>) -> f32 {
        f32::round(NAN_K) + u.at(0, 0).floor() * NAN_K.ceil() + f32::NAN.floor() + u.at(1, 0).round()
    }

    #[stencil]
    pub fn round_nan_f64(v: &Grid<f64>) -> f64 {
        let n = NAN_D.round();
        if v.at(0, 0) > 0.0 {
            n + v.at(0, 0).ceil()
        } else {
            f64::NAN.floor().max(v.at(0, 0))
        }
    }
}

#[test]
fn rounding_keeps_nan() {
    use rounding::*;
    same!(RoundNan -> f32, (u: f32));
    same!(ConstantMinTie -> f32, (u: f32, v: f64));
    same!(TranscendentalNan -> f32, (u: f32, v: f64));
    let shape = Shape::d3(5, 4, 3);
    let u = HostGrid::<f32>::new(shape).unwrap();
    let mut want = HostGrid::<f32>::new(shape).unwrap();
    RoundNanAlone::apply_host(&mut want, &u).unwrap();
    for config in variants(&RoundNanAlone::spec()) {
        let mut out = DeviceGrid::<f32>::new(&device(), shape).unwrap();
        RoundNanAlone::launch(&config, &mut out, &up(&u)).unwrap();
        assert!(
            out.to_host().unwrap().data().iter().all(|v| v.is_nan()),
            "{config:?}: round(NaN) is not NaN"
        );
    }
    same!(RoundNanF64 -> f64, (v: f64));
}

#[test]
fn powi_is_rusts_algorithm() {
    use powi::*;
    same!(PowiF32 -> f32, (u: f32, n: i32));
    same!(PowiF64 -> f64, (v: f64, n: i32));
}

mod names {
    use clforge::prelude::*;

    pub mod gain {
        pub const K: f32 = 2.0;
    }
    /// Would map to the same OpenCL name as `gain::K`.
    pub const gain_K: f32 = 3.0;
    /// Names of the generated macros.
    pub const HX: f32 = 0.5;
    pub const INTERIOR: f32 = 0.25;

    #[stencil]
    pub fn consts(u: &Grid<f32>) -> f32 {
        u.at(1, 0) * gain::K + u.at(-1, 0) * gain_K + HX * INTERIOR
    }

    /// OpenCL keywords and builtins as names. A doc comment with */ inside, /* and ??/ too.
    #[stencil]
    pub fn keywords(local: &Grid<f32>, global: &Grid<f32>, kernel: f32, half: f32, constant: f32) -> f32 {
        let floor = local.at(1, 0).floor();
        let x = global.at(0, 0);
        let c = floor * 2.0;
        floor + x * kernel + half - constant + c
    }

    /// Names the generated Rust uses for its own parameters.
    #[stencil]
    pub fn rust_names(p: &Grid<f32>, out: &Grid<f32>, shape: &Grid<f32>, config: f32, plan: f32) -> f32 {
        p.at(1, 0) + out.at(0, 0) * shape.at(-1, 0) + config * plan
    }

    pub mod a {
        use clforge::prelude::*;
        #[derive(Clone, Copy, Debug, Params)]
        pub struct Coeffs {
            pub half: f32,
            pub c: f32,
        }
    }
    pub mod b {
        use clforge::prelude::*;
        #[derive(Clone, Copy, Debug, Params)]
        pub struct Coeffs {
            pub w: f64,
        }
    }

    /// Two params structs of one name, and members named like OpenCL types and kernel locals.
    #[stencil]
    pub fn two_params(u: &Grid<f32>, ka: &a::Coeffs, kb: &b::Coeffs) -> f32 {
        let w: f64 = kb.w;
        u.at(0, 0) * ka.half + ka.c + w as f32
    }

    /// Raw identifiers.
    #[stencil]
    pub fn r#yield(r#loop: &Grid<f32>) -> f32 {
        let r#match = r#loop.at(1, 0);
        r#match + r#loop.at(0, 0)
    }

    /// A macro of the march variant.
    pub const MARCH_Z: f32 = 0.5;

    /// Names the march variant prints: its macro, a local and a plane pointer (`t_u_p1`).
    #[stencil]
    pub fn march_names(u: &Grid3<f32>, z_end: f32) -> f32 {
        let t_u_p1 = u.at(0, 0, 1) * MARCH_Z;
        let z0 = u.at(1, 0, -1);
        t_u_p1 + z0 * z_end
    }
}

#[test]
fn user_names_never_collide() {
    use names::*;
    same!(Consts -> f32, (u: f32));
    same!(Keywords -> f32, (local: f32, global: f32), 1.5, 0.25, -2.0);
    same!(RustNames -> f32, (p: f32, out: f32, shape: f32), 3.0, -0.5);
    let (ka, kb) = (a::Coeffs { half: 0.5, c: -1.0 }, b::Coeffs { w: 0.125 });
    same!(TwoParams -> f32, (u: f32), &ka, &kb);
    same!(Yield -> f32, (r#loop: f32));
    let shape = Shape::d3(11, 6, 5);
    let u = random_f32(shape, &mut rng(9), -1.0, 1.0);
    let mut want = HostGrid::new(shape).unwrap();
    MarchNames::apply_host(&mut want, &u, 0.75).unwrap();
    for config in variants(&MarchNames::spec()) {
        let mut out = DeviceGrid::new(&device(), shape).unwrap();
        MarchNames::launch(&config, &mut out, &up(&u), 0.75).unwrap();
        assert_eq!(out.to_host().unwrap().data(), want.data(), "{config:?}");
    }
}

mod state {
    use clforge::prelude::*;

    /// The right-hand side comes first: which grid does temporal blocking iterate?
    #[stencil]
    pub fn rhs_first(rhs: &Grid<f32>, u: &Grid<f32>) -> f32 {
        0.25 * (u.at(1, 0) + u.at(-1, 0) + u.at(0, 1) + u.at(0, -1)) - rhs.at(0, 0)
    }

    #[stencil(state = u)]
    pub fn rhs_first_named(rhs: &Grid<f32>, u: &Grid<f32>) -> f32 {
        0.25 * (u.at(1, 0) + u.at(-1, 0) + u.at(0, 1) + u.at(0, -1)) - rhs.at(0, 0)
    }
}

#[test]
fn steps_iterates_the_named_state_and_refuses_a_guess() {
    use state::*;
    let shape = Shape::d2(40, 19);
    let tile = Tile { x: 8, y: 8, rows: 2 };
    let err = RhsFirst::plan(&device(), &LaunchConfig::steps(3, tile), shape).unwrap_err();
    // The suggestion is the grid read at neighbours, the one an iteration replaces.
    let err = err.to_string();
    assert!(err.contains("state = u") && !err.contains("state = rhs"), "{err}");
    let mut r = rng(3);
    let rhs = random_f32(shape, &mut r, -1.0, 1.0);
    let u = random_f32(shape, &mut r, -1.0, 1.0);
    let mut host = u.clone();
    for _ in 0..3 {
        let mut next = host.clone();
        RhsFirstNamed::apply_host(&mut next, &rhs, &host).unwrap();
        host = next;
    }
    let mut out = up(&u);
    RhsFirstNamed::launch(&LaunchConfig::steps(3, tile), &mut out, &up(&rhs), &up(&u)).unwrap();
    let err = rel_error(&out.to_host().unwrap(), &host);
    assert!(err <= 1e-6, "steps iterated the wrong grid: relative error {err:e}");
}

mod zeros {
    use clforge::prelude::*;

    /// A clamp to a negative zero (difftest seed 7, stencil 170: PoCL's vector kernel gave -0.0
    /// for +0.0, its select against the constant -0.0 lowered to a swapped `minps`).
    #[stencil]
    pub fn clamp_to_negative_zero(u: &Grid<f32>) -> f32 {
        f32::clamp(u.at(0, 0), -0.5, -0.0)
    }

    /// The same by hand, against both zeros, in f64, with the zero in a `let`.
    #[stencil]
    pub fn select_zeros(u: &Grid<f64>) -> f64 {
        let z = -0.0;
        let a = if u.at(0, 0) > z { z } else { u.at(0, 0) };
        let b = if u.at(1, 0) < 0.0 { 0.0 } else { u.at(1, 0) };
        if u.at(0, 1) >= 0.0 {
            a
        } else {
            b
        }
    }
}

#[test]
fn selects_against_constant_zeros_keep_the_sign_of_zero() {
    use zeros::*;
    same!(ClampToNegativeZero -> f32, (u: f32));
    same!(SelectZeros -> f64, (u: f64));
}

mod unseen_casts {
    use clforge::prelude::*;

    pub const N: i32 = 3;
    pub const BIG: u32 = 4_000_000_000;
    pub const HALF: f64 = 0.5;

    #[derive(Clone, Copy, Debug, Params)]
    pub struct Counts {
        pub n: i32,
        pub m: u32,
        pub w: f32,
        pub d: f64,
        pub b: u8,
    }

    /// Constants and params members whose types the attribute cannot see, read only through
    /// casts: each keeps its own type, and the cast means what Rust's `as` means.
    #[stencil]
    pub fn by_cast(u: &Grid<f32>, k: &Counts) -> f32 {
        let wrapped = k.m as i32;
        u.at(0, 0) / N as f32 + BIG as f32 * HALF as f32 + k.n as f32 - k.m as f32 * k.d as f32
            + k.w as f64 as f32
            + wrapped as f32
            + k.b as f32
            + (k.n as u8) as f32
    }
}

#[test]
fn constants_and_members_cast_as_rust_casts_them() {
    use unseen_casts::*;
    for k in [
        Counts {
            n: -7,
            m: 4_000_000_001,
            w: 1.5,
            d: -0.25,
            b: 200,
        },
        Counts {
            n: 300,
            m: 17,
            w: -3.0e-3,
            d: 1.0e300,
            b: 0,
        },
    ] {
        same!(ByCast -> f32, (u: f32), &k);
    }
}
