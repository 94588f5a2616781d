//! The lattice kind: checkerboard rules with counter-based random numbers, on the device bit for
//! bit equal to the host reference (the same two colours, the same draws).

use clforge::prelude::*;
use clforge::runtime::lattice::rng;
use rand::{rngs::SmallRng, Rng, SeedableRng};

/// 2-D Ising model, checkerboard Metropolis: flip when the energy falls, else with probability
/// exp(-beta dE), compared as integers (`t4`, `t8` are the acceptance thresholds of dE = 4, 8).
#[lattice]
pub fn ising(s: &Lattice<i32>, rng: &Draws, t4: u32, t8: u32) -> i32 {
    let h = s.at(1, 0) + s.at(-1, 0) + s.at(0, 1) + s.at(0, -1);
    let de = 2 * s.at(0, 0) * h;
    let u = rng.draw(0);
    if de <= 0 || (de == 4 && u < t4) || (de == 8 && u < t8) {
        -s.at(0, 0)
    } else {
        s.at(0, 0)
    }
}

#[derive(Params, Clone, Copy, Debug)]
pub struct Noise {
    pub amplitude: f32,
    pub keep: f32,
}

/// A 3-D rule on `f32` with a field beside the state, a params struct, two draws, a uniform
/// and reads at odd offsets beyond the nearest neighbours; fixed boundary.
#[lattice(boundary = fixed)]
pub fn relax(v: &Lattice3<f32>, k: &Noise, w: &Grid3<f32>, rng: &Draws) -> f32 {
    let mean = (v.at(1, 0, 0) + v.at(-1, 0, 0) + v.at(0, 1, 0) + v.at(0, -1, 0) + v.at(0, 0, 1) + v.at(0, 0, -1)) / 6.0;
    let far = v.at(2, 1, 0) - v.at(0, 0, -3);
    let kick = (rng.uniform(1) - 0.5) * k.amplitude;
    if rng.draw(0) % 3 == 1 {
        v.at(0, 0, 0) * k.keep + w.at(0, 0, 0) + kick
    } else {
        mean + 0.01 * far + kick
    }
}

fn device() -> Device {
    Device::default().expect("device")
}

#[test]
fn ising_device_steps_equal_host_replay() {
    let dev = device();
    let beta = 0.44f64;
    let (t4, t8) = (rng::threshold((-4.0 * beta).exp()), rng::threshold((-8.0 * beta).exp()));
    for shape in [Shape::d2(64, 48), Shape::d2(2, 2), Shape::d2(130, 6)] {
        let mut r = SmallRng::seed_from_u64(shape.dims()[0] as u64);
        let mut host = HostGrid::from_fn(shape, |_| if r.random_bool(0.5) { 1 } else { -1 }).unwrap();
        let mut state = DeviceGrid::from_host(&dev, &host).unwrap();
        let plan = Ising::plan(&dev, shape).unwrap();
        let seed = 0x5eed_0000_0000_0001;
        for step in 0..20 {
            Ising::apply_host(seed, step, &mut host, t4, t8).unwrap();
            Ising::step_plan(&plan, seed, step, &mut state, t4, t8).unwrap();
        }
        let got = state.to_host().unwrap();
        assert_eq!(got, host, "{shape}");
        // The run moved: near T_c a lattice of many sites is not all one sign after 20 steps.
        let up = got.data().iter().filter(|&&s| s == 1).count();
        assert!(
            got.data().len() < 100 || (up > 0 && up < got.data().len()),
            "{shape}: {up} up"
        );
    }
}

#[test]
fn ising_orders_at_low_temperature_and_not_at_high() {
    let dev = device();
    let shape = Shape::d2(64, 64);
    let magnetisation = |beta: f64| {
        let (t4, t8) = (rng::threshold((-4.0 * beta).exp()), rng::threshold((-8.0 * beta).exp()));
        let start = HostGrid::from_fn(shape, |_| 1).unwrap();
        let mut state = DeviceGrid::from_host(&dev, &start).unwrap();
        for step in 0..200 {
            Ising::step(7, step, &mut state, t4, t8).unwrap();
        }
        let s = state.to_host().unwrap();
        s.data().iter().map(|&v| f64::from(v)).sum::<f64>().abs() / s.data().len() as f64
    };
    // Onsager: beta_c = 0.4407. Ordered well below T_c (|m| ≈ 0.99 at beta = 0.7), disordered
    // well above (|m| ~ 1/sqrt(N) at beta = 0.2).
    let (cold, hot) = (magnetisation(0.7), magnetisation(0.2));
    assert!(cold > 0.95, "|m| = {cold} at beta 0.7");
    assert!(hot < 0.2, "|m| = {hot} at beta 0.2");
}

#[test]
fn relax_3d_device_equals_host_on_special_values() {
    let dev = device();
    let shape = Shape::d3(13, 10, 11);
    let specials = [
        0.0f32,
        -0.0,
        1.0,
        -1.5,
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        1e-40,
        f32::MAX,
        3.25,
    ];
    let mut r = SmallRng::seed_from_u64(11);
    let mut pick = || {
        if r.random_bool(0.2) {
            specials[r.random_range(0..specials.len())]
        } else {
            r.random_range(-2.0..2.0)
        }
    };
    let mut host = HostGrid::from_fn(shape, |_| pick()).unwrap();
    let w = HostGrid::from_fn(shape, |_| pick()).unwrap();
    let k = Noise {
        amplitude: 0.3,
        keep: 0.5,
    };
    let mut state = DeviceGrid::from_host(&dev, &host).unwrap();
    let wd = DeviceGrid::from_host(&dev, &w).unwrap();
    for step in [0, 1, u32::MAX] {
        Relax::apply_host(u64::MAX, step, &mut host, &k, &w).unwrap();
        Relax::step(u64::MAX, step, &mut state, &k, &wd).unwrap();
    }
    let got = state.to_host().unwrap();
    for (i, (g, h)) in got.data().iter().zip(host.data()).enumerate() {
        assert!(
            g.to_bits() == h.to_bits() || (g.is_nan() && h.is_nan()),
            "site {i}: device {g}, host {h}"
        );
    }
}

#[test]
fn odd_periodic_lattice_is_refused() {
    let dev = device();
    let err = Ising::plan(&dev, Shape::d2(65, 64)).unwrap_err().to_string();
    assert!(err.contains("even") && err.contains("65"), "{err}");
    let err = Ising::plan(&dev, Shape::d3(4, 4, 4)).unwrap_err().to_string();
    assert!(err.contains("2-D"), "{err}");
}

#[test]
fn generated_kernel_reads_as_the_rule() {
    let src = Ising::source();
    assert!(src.contains("ising_checkerboard"), "{src}");
    assert!(
        src.contains("clforge_block_0 = clforge_site_block(")
            && src.contains("clforge_word(clforge_block_0, clforge_j)"),
        "{src}"
    );
    assert!(
        src.contains("clforge_px = (clforge_colour + clforge_gy + clforge_gz) & 1")
            && src.contains("x = 2 * (clforge_g + clforge_j * clforge_w) + clforge_px"),
        "{src}"
    );
}

/// A 1-D rule with clamped reads of the nearest neighbours (the only legal ones with `clamp`).
#[lattice(boundary = clamp)]
pub fn walk(s: &Lattice1<f64>, rng: &Draws) -> f64 {
    let u = rng.uniform(0) as f64;
    if u < 0.5 {
        0.5 * (s.at(-1) + s.at(1))
    } else {
        s.at(0) - 0.25 * u
    }
}

/// 3-D Ising on a periodic cube: six neighbours, thresholds for dE = 4, 8, 12.
#[lattice]
pub fn ising3(s: &Lattice3<i32>, rng: &Draws, t4: u32, t8: u32, t12: u32) -> i32 {
    let h = s.at(1, 0, 0) + s.at(-1, 0, 0) + s.at(0, 1, 0) + s.at(0, -1, 0) + s.at(0, 0, 1) + s.at(0, 0, -1);
    let de = 2 * s.at(0, 0, 0) * h;
    let u = rng.draw(3);
    let flip = match de {
        4 => u < t4,
        8 => u < t8,
        12 => u < t12,
        _ => de <= 0,
    };
    if flip {
        -s.at(0, 0, 0)
    } else {
        s.at(0, 0, 0)
    }
}

#[test]
fn one_and_three_dimensional_rules_equal_their_host_replay() {
    let dev = device();
    for n in [1usize, 2, 17, 300] {
        let shape = Shape::d1(n);
        let mut host = HostGrid::from_fn(shape, |[x, _, _]| x as f64 * 0.5 - 3.0).unwrap();
        let mut state = DeviceGrid::from_host(&dev, &host).unwrap();
        for step in 0..7 {
            Walk::apply_host(9, step, &mut host).unwrap();
            Walk::step(9, step, &mut state).unwrap();
        }
        let got = state.to_host().unwrap();
        assert!(
            got.data()
                .iter()
                .zip(host.data())
                .all(|(g, h)| g.to_bits() == h.to_bits()),
            "1-D, {n} sites"
        );
    }
    let beta = 0.22f64;
    let t = |de: f64| rng::threshold((-de * beta).exp());
    let shape = Shape::d3(8, 6, 10);
    let mut r = SmallRng::seed_from_u64(3);
    let mut host = HostGrid::from_fn(shape, |_| if r.random_bool(0.5) { 1 } else { -1 }).unwrap();
    let mut state = DeviceGrid::from_host(&dev, &host).unwrap();
    for step in 0..12 {
        Ising3::apply_host(4, step, &mut host, t(4.0), t(8.0), t(12.0)).unwrap();
        Ising3::step(4, step, &mut state, t(4.0), t(8.0), t(12.0)).unwrap();
    }
    assert_eq!(state.to_host().unwrap(), host);
}

/// The random stream's position is the step number: a run stopped after 10 steps, its state
/// saved and restored, and continued from step 10 gives the bits of an uninterrupted run.
#[test]
fn a_run_resumes_bit_for_bit_from_its_state_and_step() {
    let dev = device();
    let shape = Shape::d2(40, 30);
    let (t4, t8) = (
        rng::threshold((-4.0f64 * 0.4).exp()),
        rng::threshold((-8.0f64 * 0.4).exp()),
    );
    let start = HostGrid::from_fn(shape, |[x, y, _]| if (x * 7 + y * 3) % 5 < 2 { 1 } else { -1 }).unwrap();
    let mut straight = DeviceGrid::from_host(&dev, &start).unwrap();
    for step in 0..20 {
        Ising::step(77, step, &mut straight, t4, t8).unwrap();
    }
    let mut first = DeviceGrid::from_host(&dev, &start).unwrap();
    for step in 0..10 {
        Ising::step(77, step, &mut first, t4, t8).unwrap();
    }
    let saved: Vec<i32> = first.to_host().unwrap().data().to_vec();
    drop(first);
    let restored = HostGrid::from_fn(shape, |p| saved[shape.index(p)]).unwrap();
    let mut resumed = DeviceGrid::from_host(&dev, &restored).unwrap();
    for step in 10..20 {
        Ising::step(77, step, &mut resumed, t4, t8).unwrap();
    }
    assert_eq!(resumed.to_host().unwrap(), straight.to_host().unwrap());
}

/// Physics: below T_c the device's Ising model holds Onsager's spontaneous magnetisation
/// m = (1 - sinh(2β)^-4)^(1/8) (Yang 1952): 0.9736 at β = 0.6, measured on 128² after 300
/// equilibration steps as the mean |m| of 300 steps (finite-size and statistical errors at this
/// β are below 10^-3).
#[test]
fn ising_magnetisation_matches_onsager_below_tc() {
    let dev = device();
    let beta = 0.6f64;
    let exact = (1.0 - (2.0 * beta).sinh().powi(-4)).powf(0.125);
    let (t4, t8) = (rng::threshold((-4.0 * beta).exp()), rng::threshold((-8.0 * beta).exp()));
    let shape = Shape::d2(128, 128);
    let mut state = DeviceGrid::from_host(&dev, &HostGrid::from_fn(shape, |_| 1).unwrap()).unwrap();
    let plan = Ising::plan(&dev, shape).unwrap();
    let mut sum = 0.0;
    for step in 0..600 {
        Ising::step_plan(&plan, 2026, step, &mut state, t4, t8).unwrap();
        if step >= 300 {
            let s = state.to_host().unwrap();
            sum += s.data().iter().map(|&v| f64::from(v)).sum::<f64>().abs() / s.data().len() as f64;
        }
    }
    let m = sum / 300.0;
    eprintln!("|m| = {m:.5}, Onsager-Yang {exact:.5}");
    assert!((m - exact).abs() < 0.005, "|m| = {m}, Onsager-Yang {exact}");
}

/// The 8 neighbours of a square: diagonals have the checkerboard colour of the site, so the
/// macro derives the 4 parity classes (x % 2) + 2 (y % 2).
#[lattice(boundary = fixed)]
pub fn moore(s: &Lattice<f32>, rng: &Draws, w: f32) -> f32 {
    let edges = s.at(1, 0) + s.at(-1, 0) + s.at(0, 1) + s.at(0, -1);
    let corners = s.at(1, 1) + s.at(-1, 1) + s.at(1, -1) + s.at(-1, -1);
    (1.0 - w) * s.at(0, 0) + w * (0.15 * edges + 0.1 * corners) + 0.01 * rng.uniform(0)
}

/// Seed 003's shape of rule: a site holds 3 bond bits (+x, +y, +z); a bond breaks with a
/// probability that grows with the broken bonds around it, read from the 12 sites that share
/// an edge with the site's cube corner (offsets with components in {-1, 0, 1}): 8 colours.
#[lattice]
pub fn bonds(s: &Lattice3<u32>, rng: &Draws, t: u32) -> u32 {
    let around = (s.at(1, 0, 0) | s.at(-1, 0, 0) | s.at(0, 1, 0) | s.at(0, -1, 0))
        ^ (s.at(1, 1, 0) & s.at(-1, 0, 1))
        ^ (s.at(0, 1, -1) | s.at(1, 0, -1))
        ^ (s.at(0, 0, 1) & s.at(-1, -1, 0));
    let broken = (around & 1) + ((around >> 1) & 1) + ((around >> 2) & 1);
    let bond = rng.draw(0) % 3;
    if rng.draw(1) / (broken + 1) < t {
        s.at(0, 0, 0) | (1 << bond)
    } else {
        s.at(0, 0, 0)
    }
}

#[test]
fn parity_coloured_rules_equal_their_host_replay() {
    let dev = device();
    assert!(Moore::source().contains("4 parity classes"), "{}", Moore::source());
    assert!(Bonds::source().contains("8 parity classes"), "{}", Bonds::source());
    assert_eq!(Moore::spec().colours, 4);
    assert_eq!(Bonds::spec().colours, 8);
    assert_eq!(Ising::spec().colours, 2);
    for shape in [Shape::d2(33, 20), Shape::d2(3, 3), Shape::d2(64, 2)] {
        let mut r = SmallRng::seed_from_u64(8);
        let mut host = HostGrid::from_fn(shape, |_| r.random_range(-1.0..1.0)).unwrap();
        let mut state = DeviceGrid::from_host(&dev, &host).unwrap();
        for step in 0..5 {
            Moore::apply_host(6, step, &mut host, 0.3).unwrap();
            Moore::step(6, step, &mut state, 0.3).unwrap();
        }
        let got = state.to_host().unwrap();
        assert!(
            got.data()
                .iter()
                .zip(host.data())
                .all(|(g, h)| g.to_bits() == h.to_bits()),
            "{shape}"
        );
    }
    let shape = Shape::d3(10, 8, 6);
    let mut host = HostGrid::<u32>::new(shape).unwrap();
    let mut state = DeviceGrid::from_host(&dev, &host).unwrap();
    let t = rng::threshold(0.05);
    for step in 0..30 {
        Bonds::apply_host(13, step, &mut host, t).unwrap();
        Bonds::step(13, step, &mut state, t).unwrap();
    }
    let got = state.to_host().unwrap();
    assert_eq!(got, host);
    let broken: u32 = got.data().iter().map(|b| b.count_ones()).sum();
    assert!(broken > 10 && broken < 3 * 480, "{broken} bonds broken");
    // Periodic parity classes need even extents too.
    let err = Bonds::plan(&dev, Shape::d3(10, 7, 6)).unwrap_err().to_string();
    assert!(err.contains("even"), "{err}");
}

/// User names that a template could also use (`j`, `g`, `W`, `px`, `m`) next to draws: the
/// generated kernel keeps its own loop and stream variables apart (equal to the host replay).
#[lattice]
pub fn crowded(s: &Lattice<u32>, rng: &Draws) -> u32 {
    let j = rng.draw(1);
    let g = s.at(1, 0) ^ j;
    #[allow(non_snake_case)]
    let W = g ^ rng.draw(0);
    let px = W >> 3;
    let m = px ^ s.at(0, -1) ^ rng.draw(5);
    m ^ s.at(0, 0)
}

#[test]
fn user_names_do_not_meet_the_templates() {
    let dev = device();
    for shape in [Shape::d2(18, 6), Shape::d2(2, 2), Shape::d2(36, 10)] {
        let mut host = HostGrid::from_fn(shape, |p| (p[0] * 7 + p[1] * 131) as u32).unwrap();
        let mut state = DeviceGrid::from_host(&dev, &host).unwrap();
        for step in 0..3 {
            Crowded::apply_host(4, step, &mut host).unwrap();
            Crowded::step(4, step, &mut state).unwrap();
        }
        assert_eq!(state.to_host().unwrap(), host, "{shape}");
    }
}

/// The host reference refuses what the plan refuses: odd extents of a periodic lattice (two
/// sites of one colour would be neighbours across the boundary), with the same message.
#[test]
fn odd_periodic_lattice_is_refused_on_the_host_too() {
    let mut s = HostGrid::<i32>::new(Shape::d2(65, 64)).unwrap();
    let err = Ising::apply_host(1, 0, &mut s, 1, 2).unwrap_err().to_string();
    assert!(err.contains("even") && err.contains("65"), "{err}");
    let mut even = HostGrid::<i32>::new(Shape::d2(64, 64)).unwrap();
    Ising::apply_host(1, 0, &mut even, 1, 2).unwrap();
}
