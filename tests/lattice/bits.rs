//! Bit-packed lattice state (`Lattice<bool>`, multi-spin coding): 32 sites of one colour per
//! word on the device, the rule written per site as ordinary Rust on `bool`s. Every rule here is
//! checked bit for bit against its host replay (the same colours, the same draws) on shapes
//! whose half-rows are shorter than, exactly, and not a multiple of 32 sites, for every boundary
//! and both colourings.

use clforge::prelude::*;
use clforge::runtime::lattice::{rng, DeviceBits, LatticeSpec};
use clforge::runtime::KernelArg;
use rand::{rngs::SmallRng, Rng, SeedableRng};

/// 2-D Ising model on bits (the snapshot's rule, `tests/kernels/ising_bits.rs`).
#[path = "../kernels/ising_bits.rs"]
mod ising_bits;
use ising_bits::IsingBits;

/// 3-D Ising on bits: six neighbours, thresholds for ΔE = 4, 8, 12 (a = 4, 5, 6).
#[lattice]
pub fn ising3_bits(s: &Lattice3<bool>, rng: &Draws, t4: u32, t8: u32, t12: u32) -> bool {
    let me = s.at(0, 0, 0);
    let a = (s.at(1, 0, 0) == me) as u32
        + (s.at(-1, 0, 0) == me) as u32
        + (s.at(0, 1, 0) == me) as u32
        + (s.at(0, -1, 0) == me) as u32
        + (s.at(0, 0, 1) == me) as u32
        + (s.at(0, 0, -1) == me) as u32;
    let u = rng.draw(1);
    if a <= 3 || (a == 4 && u < t4) || (a == 5 && u < t8) || (a == 6 && u < t12) {
        !me
    } else {
        me
    }
}

/// A fixed-boundary rule with a field beside the state, reads beyond the nearest neighbours
/// (odd offsets up to 3 along x and across rows), two draws and a uniform.
#[lattice(boundary = fixed)]
pub fn infect(s: &Lattice<bool>, w: &Grid<f32>, rng: &Draws, p: f32) -> bool {
    let near = s.at(1, 0) as u32 + s.at(-1, 0) as u32 + s.at(0, 1) as u32 + s.at(0, -1) as u32;
    let far = s.at(3, 0) || s.at(-2, 1) || s.at(0, -3);
    let chance = p * near as f32 + w.at(0, 0) * 0.25 + if far { 0.1 } else { 0.0 };
    if s.at(0, 0) {
        rng.draw(2) % 5 >= 1
    } else {
        rng.uniform(0) < chance
    }
}

/// A 1-D clamped rule: majority of the two neighbours and the site, with noise.
#[lattice(boundary = clamp)]
pub fn vote(s: &Lattice1<bool>, rng: &Draws) -> bool {
    let n = s.at(1) as u32 + s.at(-1) as u32 + s.at(0) as u32;
    (n >= 2) != (rng.draw(0) < 0x1000_0000)
}

/// A rule reading the 8 neighbours of a square (diagonals: four parity colours), periodic.
#[lattice]
pub fn moore_bits(s: &Lattice<bool>, rng: &Draws) -> bool {
    let n = s.at(1, 0) as i32
        + s.at(-1, 0) as i32
        + s.at(0, 1) as i32
        + s.at(0, -1) as i32
        + s.at(1, 1) as i32
        + s.at(-1, 1) as i32
        + s.at(1, -1) as i32
        + s.at(-1, -1) as i32;
    if n == 3 || (s.at(0, 0) && n == 2) {
        true
    } else {
        rng.draw(0) < 0x0800_0000
    }
}

/// Boolean logic of the state that the packed kernel evaluates on whole words (`!`, `==`,
/// `!=`, `^`, `|`, `&&`, `||`, literals, through `let`s), mixed with per-site values; clamped.
#[lattice(boundary = clamp)]
#[allow(clippy::nonminimal_bool)] // the literals are the point
pub fn logic(s: &Lattice<bool>, rng: &Draws) -> bool {
    let me = s.at(0, 0);
    let l = s.at(-1, 0) != me;
    let r = (s.at(1, 0) ^ me) | !s.at(0, 1);
    let keep = (l && r) == ((s.at(0, -1) || false) ^ true);
    if rng.draw(0) < 0x4000_0000 {
        keep
    } else {
        (!me ^ l) && (true & r)
    }
}

/// Sums of boolean functions of the state (bit-sliced counters on the device) compared with
/// literals on either side, out of range (-1, 20), used as numbers, and a sum of 16 terms
/// (beyond a 4-bit counter: summed per site); 4 colours (diagonal reads).
#[lattice]
#[allow(clippy::nonminimal_bool)] // the redundant comparisons are the point
pub fn counts(s: &Lattice<bool>, rng: &Draws, w: i32) -> bool {
    let n = s.at(1, 0) as i32 + s.at(-1, 0) as i32 + s.at(0, 1) as i32 + s.at(0, -1) as i32 + s.at(1, 1) as i32;
    let m = (s.at(1, 0) != s.at(-1, -1)) as u32 + (!s.at(0, 1)) as u32;
    let b = s.at(1, 0) as u8 + s.at(-1, 0) as u8;
    let sixteen = s.at(1, 0) as u32
        + s.at(1, 0) as u32
        + s.at(1, 0) as u32
        + s.at(1, 0) as u32
        + s.at(1, 0) as u32
        + s.at(1, 0) as u32
        + s.at(1, 0) as u32
        + s.at(1, 0) as u32
        + s.at(-1, 0) as u32
        + s.at(-1, 0) as u32
        + s.at(-1, 0) as u32
        + s.at(-1, 0) as u32
        + s.at(0, 1) as u32
        + s.at(0, 1) as u32
        + s.at(0, 1) as u32
        + s.at(0, 1) as u32;
    let a = (n > 2 && m != 1) || (3 <= n && m == 0) || n < 1 || 2 > m && n >= 4;
    let odd = n > -1 && n < 20 && 20 != n && -1 < n && b == 1;
    let big = sixteen >= 12 || sixteen == 4;
    if rng.draw(0) % 4 < 1 {
        n * w + m as i32 > 6
    } else {
        (a ^ odd) || (big && s.at(0, 0))
    }
}

/// A chain of `let`s each using the previous one twice: its word-level form doubles at every
/// step, so beyond the inlining depth it is evaluated per site (the source stays small, the
/// bits equal).
#[lattice]
pub fn chain(s: &Lattice<bool>) -> bool {
    let a1 = s.at(1, 0) == s.at(-1, 0);
    let a2 = a1 == (a1 || s.at(0, 1));
    let a3 = a2 == (a2 || s.at(0, -1));
    let a4 = a3 == (a3 || s.at(1, 0));
    let a5 = a4 == (a4 || s.at(-1, 0));
    let a6 = a5 == (a5 || s.at(0, 1));
    let a7 = a6 == (a6 || s.at(0, -1));
    let a8 = a7 == (a7 || s.at(1, 0));
    let a9 = a8 == (a8 || s.at(-1, 0));
    let a10 = a9 == (a9 || s.at(0, 1));
    let a11 = a10 == (a10 || s.at(0, -1));
    let a12 = a11 == (a11 || s.at(1, 0));
    let a13 = a12 == (a12 || s.at(-1, 0));
    a13 != s.at(0, 0)
}

fn device() -> Device {
    Device::default().expect("device")
}

fn random_bits(shape: Shape, seed: u64, p: f64) -> HostGrid<bool> {
    let mut r = SmallRng::seed_from_u64(seed);
    HostGrid::from_fn(shape, |_| r.random_bool(p)).unwrap()
}

fn thresholds(beta: f64) -> (u32, u32, u32) {
    let t = |de: f64| rng::threshold((-de * beta).exp());
    (t(4.0), t(8.0), t(12.0))
}

#[test]
fn ising_bits_device_steps_equal_host_replay() {
    let dev = device();
    let (t4, t8, _) = thresholds(0.44);
    // Half-rows of 1, 3, 32, 33, 64 and 100 sites: one partial word, exact words, a word and
    // a bit, and the funnel shift across words.
    for shape in [
        Shape::d2(2, 2),
        Shape::d2(6, 4),
        Shape::d2(64, 6),
        Shape::d2(66, 4),
        Shape::d2(128, 10),
        Shape::d2(200, 8),
    ] {
        let mut host = random_bits(shape, shape.dims()[0] as u64, 0.5);
        let mut state = DeviceBits::from_host(&dev, &host).unwrap();
        let plan = IsingBits::plan(&dev, shape).unwrap();
        let seed = 0x5eed_0000_0000_0002;
        for step in 0..20 {
            IsingBits::apply_host(seed, step, &mut host, t4, t8).unwrap();
            IsingBits::step_plan(&plan, seed, step, &mut state, t4, t8).unwrap();
            assert_eq!(state.to_host().unwrap(), host, "{shape}, step {step}");
        }
        let up = host.data().iter().filter(|&&s| s).count();
        assert_eq!(state.count_ones().unwrap(), up as u64, "{shape}");
        assert!(
            host.data().len() < 100 || (up > 0 && up < host.data().len()),
            "{shape}: {up} up"
        );
    }
}

#[test]
fn three_dimensional_and_one_dimensional_bit_rules_equal_their_host_replay() {
    let dev = device();
    let (t4, t8, t12) = thresholds(0.22);
    for shape in [Shape::d3(8, 6, 10), Shape::d3(66, 4, 6), Shape::d3(2, 2, 2)] {
        let mut host = random_bits(shape, 11, 0.5);
        let mut state = DeviceBits::from_host(&dev, &host).unwrap();
        for step in 0..8 {
            Ising3Bits::apply_host(4, step, &mut host, t4, t8, t12).unwrap();
            Ising3Bits::step(4, step, &mut state, t4, t8, t12).unwrap();
        }
        assert_eq!(state.to_host().unwrap(), host, "{shape}");
    }
    for n in [1usize, 2, 5, 63, 64, 65, 129, 300] {
        let shape = Shape::d1(n);
        let mut host = random_bits(shape, n as u64, 0.3);
        let mut state = DeviceBits::from_host(&dev, &host).unwrap();
        for step in 0..9 {
            Vote::apply_host(77, step, &mut host).unwrap();
            Vote::step(77, step, &mut state).unwrap();
        }
        assert_eq!(state.to_host().unwrap(), host, "1-D, {n} sites");
    }
}

#[test]
fn fixed_rule_with_far_reads_and_a_field_equals_host_replay_on_special_values() {
    let dev = device();
    let specials = [
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::MAX,
        f32::MIN,
        f32::MIN_POSITIVE,
        1e-45,
        -0.0,
        0.0,
        1.0,
    ];
    // Odd widths are allowed with a fixed boundary.
    for shape in [Shape::d2(9, 9), Shape::d2(71, 12), Shape::d2(135, 9)] {
        let mut r = SmallRng::seed_from_u64(5);
        let w = HostGrid::from_fn(shape, |_| {
            if r.random_bool(0.2) {
                specials[r.random_range(0..specials.len())]
            } else {
                r.random_range(-1.0..1.0)
            }
        })
        .unwrap();
        let w_dev = DeviceGrid::from_host(&dev, &w).unwrap();
        let mut host = random_bits(shape, 6, 0.2);
        let mut state = DeviceBits::from_host(&dev, &host).unwrap();
        for (step, p) in [0.05f32, f32::NAN, 0.3, f32::INFINITY, -0.0, 0.12]
            .into_iter()
            .enumerate()
        {
            Infect::apply_host(12, step as u32, &mut host, &w, p).unwrap();
            Infect::step(12, step as u32, &mut state, &w_dev, p).unwrap();
            assert_eq!(state.to_host().unwrap(), host, "{shape}, step {step}, p = {p}");
        }
    }
}

#[test]
fn word_level_logic_equals_host_replay() {
    let dev = device();
    for shape in [Shape::d2(3, 3), Shape::d2(67, 5), Shape::d2(130, 7)] {
        let mut host = random_bits(shape, 21, 0.5);
        let mut state = DeviceBits::from_host(&dev, &host).unwrap();
        for step in 0..12 {
            Logic::apply_host(8, step, &mut host).unwrap();
            Logic::step(8, step, &mut state).unwrap();
            assert_eq!(state.to_host().unwrap(), host, "{shape}, step {step}");
        }
    }
    // The word-level forms are what the kernel computes.
    let src = Logic::source();
    assert!(src.contains("~(") && src.contains(" ^ clforge_me"), "{src}");
}

#[test]
fn bit_sliced_counts_equal_host_replay() {
    let dev = device();
    for shape in [Shape::d2(4, 4), Shape::d2(66, 6), Shape::d2(130, 10)] {
        let mut host = random_bits(shape, 31, 0.5);
        let mut state = DeviceBits::from_host(&dev, &host).unwrap();
        for (step, w) in [1, -3, 2, 0, 7, 100_000, -100_000, 1].into_iter().enumerate() {
            Counts::apply_host(5, step as u32, &mut host, w).unwrap();
            Counts::step(5, step as u32, &mut state, w).unwrap();
            assert_eq!(state.to_host().unwrap(), host, "{shape}, step {step}");
        }
    }
    let src = Counts::source();
    assert!(
        src.contains("clforge_count_lt(") && src.contains("clforge_count_eq(") && src.contains("clforge_count_at("),
        "{src}"
    );
}

#[test]
fn a_doubling_let_chain_stays_small_and_exact() {
    assert!(Chain::source().len() < 100_000, "{} bytes", Chain::source().len());
    let dev = device();
    let shape = Shape::d2(68, 6);
    let mut host = random_bits(shape, 2, 0.5);
    let mut state = DeviceBits::from_host(&dev, &host).unwrap();
    for step in 0..6 {
        Chain::apply_host(1, step, &mut host).unwrap();
        Chain::step(1, step, &mut state).unwrap();
        assert_eq!(state.to_host().unwrap(), host, "step {step}");
    }
}

#[test]
fn parity_coloured_bit_rule_equals_its_host_replay() {
    assert_eq!(MooreBits::spec().colours, 4);
    let dev = device();
    for shape in [Shape::d2(4, 4), Shape::d2(70, 6), Shape::d2(256, 8)] {
        let mut host = random_bits(shape, 8, 0.35);
        let mut state = DeviceBits::from_host(&dev, &host).unwrap();
        for step in 0..10 {
            MooreBits::apply_host(3, step, &mut host).unwrap();
            MooreBits::step(3, step, &mut state).unwrap();
        }
        assert_eq!(state.to_host().unwrap(), host, "{shape}");
    }
}

/// Physics: below T_c the bit-packed model orders to Onsager–Yang's spontaneous magnetisation.
#[test]
fn ising_bits_magnetisation_matches_onsager_below_tc() {
    let dev = device();
    let beta = 0.6f64;
    let (t4, t8, _) = thresholds(beta);
    let shape = Shape::d2(128, 128);
    let mut state = DeviceBits::from_host(&dev, &HostGrid::from_fn(shape, |_| true).unwrap()).unwrap();
    let plan = IsingBits::plan(&dev, shape).unwrap();
    let mut sum = 0.0;
    let (warm, measured) = (200, 800);
    for step in 0..warm + measured {
        IsingBits::step_plan(&plan, 99, step, &mut state, t4, t8).unwrap();
        if step >= warm {
            let up = state.count_ones().unwrap() as f64;
            sum += (2.0 * up / (128.0 * 128.0) - 1.0).abs();
        }
    }
    let m = sum / f64::from(measured);
    let onsager = (1.0 - (2.0 * beta).sinh().powi(-4)).powf(0.125);
    assert!((m - onsager).abs() < 0.002, "m = {m}, Onsager-Yang {onsager}");
}

/// A run resumes bit for bit from its state and step, and a bit rule's plan refuses a grid
/// of another layout with a typed error.
#[test]
fn a_bit_run_resumes_and_layouts_are_checked() {
    let dev = device();
    let (t4, t8, _) = thresholds(0.4);
    let shape = Shape::d2(96, 20);
    let start = random_bits(shape, 1, 0.5);
    let mut whole = DeviceBits::from_host(&dev, &start).unwrap();
    for step in 0..20 {
        IsingBits::step(7, step, &mut whole, t4, t8).unwrap();
    }
    let mut first = DeviceBits::from_host(&dev, &start).unwrap();
    for step in 0..10 {
        IsingBits::step(7, step, &mut first, t4, t8).unwrap();
    }
    let saved = first.to_host().unwrap();
    drop(first);
    let mut resumed = DeviceBits::new(&dev, shape).unwrap();
    resumed.upload(&saved).unwrap();
    for step in 10..20 {
        IsingBits::step(7, step, &mut resumed, t4, t8).unwrap();
    }
    assert_eq!(resumed.to_host().unwrap(), whole.to_host().unwrap());

    let spec: LatticeSpec = IsingBits::spec();
    assert!(spec.packed);
    let plan = IsingBits::plan(&dev, shape).unwrap();
    let grid = DeviceGrid::<i32>::new(&dev, shape).unwrap();
    let err = plan
        .run(
            &grid,
            &[
                KernelArg::grid("s", &grid),
                KernelArg::scalar(t4),
                KernelArg::scalar(t8),
            ],
            7,
            0,
        )
        .unwrap_err()
        .to_string();
    assert!(err.contains("bit-packed"), "{err}");
    // An odd periodic extent is refused as for any checkerboard.
    assert!(IsingBits::plan(&dev, Shape::d2(65, 4)).is_err());
    // A lattice too large to index is too large, whatever its parity.
    for shape in [Shape::d2(1 << 31 | 1, 3), Shape::d2(1 << 20, (1 << 17) + 1)] {
        match IsingBits::plan(&dev, shape) {
            Err(Error::TooLarge { .. }) => {}
            other => panic!("{shape}: {other:?}"),
        }
    }
    // On several devices: the same call compiles and says why it cannot run.
    let two = Devices::new(vec![dev.clone(), dev.clone()]).unwrap().periodic(true);
    let err = IsingBits::plan(&two, Shape::d2(64, 64)).unwrap_err().to_string();
    assert!(err.contains("bit-packed") && err.contains("one device"), "{err}");
}
