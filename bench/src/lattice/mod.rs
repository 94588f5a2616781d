//! The `lattice` suite: the 2-D Ising model written with `#[clforge::lattice]`
//! (checkerboard Metropolis, one `i32` spin per site, Philox draws), checked bit for bit against
//! its host replay on a small lattice first, then timed per step (device time from colour 0's
//! start to colour 1's end, median of the steps) at several sizes beside the device's copy
//! bandwidth measured in the same run and the host reference on one core.

pub mod fracture;

use std::time::Instant;

use anyhow::{bail, Result};
use clforge::prelude::*;
use clforge::runtime::lattice::{rng, DeviceBits};
use rand::{rngs::SmallRng, Rng, SeedableRng};
use serde::Serialize;

use crate::baselines::ising::IsingC4;
use crate::measure::{Progress, Reps, Stats};
use crate::roofline;
use clforge::runtime::Buffer;

/// Checkerboard Metropolis for the 2-D Ising model (J = 1, no field).
#[lattice(boundary = periodic)]
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

/// The same model with one byte per spin (1 up, 0 down): `a` is the number of aligned
/// neighbours, ΔE = 4a − 8. Moves 4× fewer bytes than `ising`.
#[lattice(boundary = periodic)]
pub fn ising_u8(s: &Lattice<u8>, rng: &Draws, t4: u32, t8: u32) -> u8 {
    let up = s.at(1, 0) + s.at(-1, 0) + s.at(0, 1) + s.at(0, -1);
    let me = s.at(0, 0);
    let a = if me == 1 { up } else { 4 - up };
    let u = rng.draw(0);
    if a <= 2 || (a == 3 && u < t4) || (a == 4 && u < t8) {
        1 - me
    } else {
        me
    }
}

/// Zero-temperature Ising (flip when the energy falls or stays, no random numbers): the memory
/// traffic of a step without the generator, to tell a bandwidth bound from Philox's cost.
#[lattice(boundary = periodic)]
pub fn quench(s: &Lattice<i32>) -> i32 {
    let h = s.at(1, 0) + s.at(-1, 0) + s.at(0, 1) + s.at(0, -1);
    if 2 * s.at(0, 0) * h <= 0 {
        -s.at(0, 0)
    } else {
        s.at(0, 0)
    }
}

/// The same model on bits (true = up; multi-spin coding: 32 spins of one colour per word):
/// `a` aligned neighbours, ΔE = 4a − 8. Moves 32× fewer bytes than `ising`.
#[lattice(boundary = periodic)]
pub fn ising_bits(s: &Lattice<bool>, rng: &Draws, t4: u32, t8: u32) -> bool {
    let me = s.at(0, 0);
    let a =
        (s.at(1, 0) == me) as u32 + (s.at(-1, 0) == me) as u32 + (s.at(0, 1) == me) as u32 + (s.at(0, -1) == me) as u32;
    let u = rng.draw(0);
    if a <= 2 || (a == 3 && u < t4) || (a == 4 && u < t8) {
        !me
    } else {
        me
    }
}

/// Onsager's critical coupling, where the updates are the least predictable.
const BETA: f64 = 0.440_686_793_509_771_5;

#[derive(Serialize)]
pub struct Row {
    /// `ising` (i32 spins), `ising_u8` (one byte per spin), `ising_bits` (one bit per spin),
    /// `quench` (i32, no draws) or `hand_u8_c4` (the hand-written byte kernel).
    pub rule: String,
    pub size: String,
    pub sites: usize,
    pub step: Stats,
    /// Attempted spin flips per nanosecond (sites / step time).
    pub flips_per_ns: f64,
    /// Bytes a step moves at least (each launch reads the lattice, writes half): 10 per site.
    pub gb_s: f64,
    pub pct_of_copy: f64,
}

#[derive(Serialize)]
pub struct Report {
    pub device: String,
    pub copy_gb_s: f64,
    pub rows: Vec<Row>,
    /// The host reference (`Ising::apply_host`) on one core: size, ns per step, flips per ns.
    pub host: (String, f64, f64),
    pub wall_s: f64,
}

/// Device time per step (colour 0's start to the last colour's end) of `reps.timed` steps after
/// the warm-up ones.
fn time_steps<T: Timed>(reps: Reps, mut step: impl FnMut(u32) -> clforge::runtime::Result<T>) -> Result<Vec<u64>> {
    for s in 0..reps.warmup as u32 {
        step(s)?.span_ns()?;
    }
    let mut ns = Vec::with_capacity(reps.timed);
    for s in 0..reps.timed as u32 {
        ns.push(step(1000 + s)?.span_ns()?);
    }
    Ok(ns)
}

/// A step's launches: device time from the first one's start to the last one's end (waits).
trait Timed {
    fn span_ns(&self) -> clforge::runtime::Result<u64>;
}

impl Timed for clforge::runtime::lattice::StepEvents {
    fn span_ns(&self) -> clforge::runtime::Result<u64> {
        self.elapsed_ns()
    }
}

impl Timed for (clforge::runtime::Event, clforge::runtime::Event) {
    fn span_ns(&self) -> clforge::runtime::Result<u64> {
        self.1.since_start_of(&self.0)
    }
}

impl Row {
    /// `bytes`: what a step moves at least per site (read all, write half).
    fn new(rule: &str, shape: Shape, ns: &[u64], bytes: f64, copy: f64) -> Row {
        let step = Stats::from_ns(ns);
        let sites = shape.len();
        let t_ns = step.median_us * 1e3;
        let gb_s = sites as f64 * bytes / t_ns;
        Row {
            rule: rule.to_string(),
            size: shape.to_string(),
            sites,
            flips_per_ns: sites as f64 / t_ns,
            gb_s,
            pct_of_copy: 100.0 * gb_s / copy,
            step,
        }
    }
}

fn thresholds() -> (u32, u32) {
    (rng::threshold((-4.0 * BETA).exp()), rng::threshold((-8.0 * BETA).exp()))
}

fn random_spins(shape: Shape) -> Result<HostGrid<i32>> {
    let mut i = 0u64;
    Ok(HostGrid::from_fn(shape, |_| {
        i += 1;
        if rng::draw(99, 0, i, 0) & 1 == 0 {
            1
        } else {
            -1
        }
    })?)
}

pub fn run(dev: &Device, quick: bool, sizes: Option<&[Shape]>, reps: Reps) -> Result<Report> {
    let start = Instant::now();
    let (t4, t8) = thresholds();
    let default: Vec<Shape> = if quick {
        vec![Shape::d2(256, 256), Shape::d2(1024, 1024)]
    } else {
        vec![
            Shape::d2(4096, 4096),
            Shape::d2(16384, 16384),
            Shape::d2(32768, 32768),
            Shape::d2(65536, 65536),
        ]
    };
    let sizes = sizes.map_or(default, <[Shape]>::to_vec);
    let mut progress = Progress::new(sizes.len() as u64 + 7);
    let roof = roofline::measure(dev, quick, reps, |m| progress.step(m))?;
    let copy = roof.copy_gb_s();

    // Bitwise check against the host replay before timing anything.
    progress.step("ising: device = host replay, 64x48, 10 steps");
    let shape = Shape::d2(64, 48);
    let mut host = random_spins(shape)?;
    let mut state = DeviceGrid::from_host(dev, &host)?;
    for step in 0..10 {
        Ising::apply_host(1, step, &mut host, t4, t8)?;
        Ising::step(1, step, &mut state, t4, t8)?;
    }
    if state.to_host()? != host {
        bail!("the Ising kernel differs from its host replay on {shape}");
    }
    let mut host_u8 = HostGrid::from_fn(shape, |p| u8::from(host.data()[shape.index(p)] > 0))?;
    let mut state_u8 = DeviceGrid::from_host(dev, &host_u8)?;
    let mut host_q = host.clone();
    let mut state_q = DeviceGrid::from_host(dev, &host_q)?;
    for step in 0..10 {
        IsingU8::apply_host(1, step, &mut host_u8, t4, t8)?;
        IsingU8::step(1, step, &mut state_u8, t4, t8)?;
        Quench::apply_host(1, step, &mut host_q)?;
        Quench::step(1, step, &mut state_q)?;
    }
    if state_u8.to_host()? != host_u8 || state_q.to_host()? != host_q {
        bail!("the u8 Ising or the quench kernel differs from its host replay on {shape}");
    }
    let mut host_bits = HostGrid::from_fn(shape, |p| host.data()[shape.index(p)] > 0)?;
    let mut state_bits = DeviceBits::from_host(dev, &host_bits)?;
    for step in 0..10 {
        IsingBits::apply_host(1, step, &mut host_bits, t4, t8)?;
        IsingBits::step(1, step, &mut state_bits, t4, t8)?;
    }
    if state_bits.to_host()? != host_bits {
        bail!("the bit-packed Ising kernel differs from its host replay on {shape}");
    }
    let hand = IsingC4::build(dev)?;
    let (hx, hy) = (64, 48);
    let mut hand_host: Vec<u8> = (0..hx * hy).map(|i| (rng::draw(7, 0, i as u64, 0) & 1) as u8).collect();
    let hand_dev = Buffer::from_slice(dev, &hand_host)?;
    for step in 0..10 {
        for colour in 0..2 {
            IsingC4::host(&mut hand_host, hx, hy, 1, step, colour, (t4, t8));
            hand.launch(&hand_dev, hx, hy, 1, step, colour as i32, (t4, t8))?
                .wait()?;
        }
    }
    if hand_dev.to_vec()? != hand_host {
        bail!("the hand-written Ising kernel differs from its host replay on {hx}x{hy}");
    }

    let mut rows = Vec::new();
    for &shape in &sizes {
        progress.step(&format!("ising {shape}"));
        let sites = shape.len();
        // Bits first: they fit where the others do not (65536² is 512 MiB packed).
        if let Some(words) = clforge::runtime::lattice::packed_len(shape) {
            if shape.dims()[0].is_multiple_of(64) && (words * 4) as u64 <= dev.info().max_alloc_bytes {
                let mut r = SmallRng::seed_from_u64(5);
                let words: Vec<u32> = (0..words).map(|_| r.random()).collect();
                let mut state = DeviceBits::from_words(dev, shape, &words)?;
                let plan = IsingBits::plan(dev, shape)?;
                let ns = time_steps(reps, |step| IsingBits::step_plan(&plan, 2, step, &mut state, t4, t8))?;
                rows.push(Row::new("ising_bits", shape, &ns, 0.75, copy));
            }
        }
        if (sites * 4) as u64 > dev.info().max_alloc_bytes || sites > 1 << 31 {
            eprintln!(
                "skipping {shape}: {} bytes exceed the device's largest allocation",
                sites * 4
            );
            continue;
        }
        let spins = random_spins(shape)?;
        let mut state = DeviceGrid::from_host(dev, &spins)?;
        let plan = Ising::plan(dev, shape)?;
        let ns = time_steps(reps, |step| Ising::step_plan(&plan, 2, step, &mut state, t4, t8))?;
        rows.push(Row::new("ising", shape, &ns, 10.0, copy));

        let bytes = HostGrid::from_fn(shape, |p| u8::from(spins.data()[shape.index(p)] > 0))?;
        let mut state = DeviceGrid::from_host(dev, &bytes)?;
        let plan = IsingU8::plan(dev, shape)?;
        let ns = time_steps(reps, |step| IsingU8::step_plan(&plan, 2, step, &mut state, t4, t8))?;
        rows.push(Row::new("ising_u8", shape, &ns, 2.5, copy));

        let mut state = DeviceGrid::from_host(dev, &spins)?;
        let plan = Quench::plan(dev, shape)?;
        let ns = time_steps(reps, |step| Quench::step_plan(&plan, 2, step, &mut state))?;
        rows.push(Row::new("quench", shape, &ns, 10.0, copy));

        let [nx, ny, _] = shape.dims();
        if shape.rank() == 2 && nx.is_multiple_of(8) {
            let s = Buffer::from_slice(dev, bytes.data())?;
            let ns = time_steps(reps, |step| {
                let a = hand
                    .launch(&s, nx, ny, 2, step, 0, (t4, t8))
                    .map_err(|e| clforge::runtime::Error::InvalidConfig(e.to_string()))?;
                let b = hand
                    .launch(&s, nx, ny, 2, step, 1, (t4, t8))
                    .map_err(|e| clforge::runtime::Error::InvalidConfig(e.to_string()))?;
                Ok((a, b))
            })?;
            rows.push(Row::new("hand_u8_c4", shape, &ns, 2.5, copy));
        }
    }

    // The host reference on one core, at the smallest size but at most 4096² (a few steps; its
    // rate does not depend on the size, and 32768² takes two minutes a step).
    let shape = sizes
        .iter()
        .copied()
        .min_by_key(|s| s.len())
        .filter(|s| s.len() <= 4096 * 4096)
        .unwrap_or(Shape::d2(4096, 4096));
    progress.step(&format!("host reference {shape}"));
    let mut host = random_spins(shape)?;
    let steps = if quick { 2 } else { 3 };
    let t = Instant::now();
    for step in 0..steps {
        Ising::apply_host(3, step, &mut host, t4, t8)?;
    }
    let host_ns = t.elapsed().as_nanos() as f64 / f64::from(steps);
    progress.finish();
    Ok(Report {
        device: dev.info().name.clone(),
        copy_gb_s: copy,
        rows,
        host: (shape.to_string(), host_ns, shape.len() as f64 / host_ns),
        wall_s: start.elapsed().as_secs_f64(),
    })
}

impl Report {
    pub fn table(&self) -> String {
        let mut s = format!(
            "2-D Ising, checkerboard Metropolis at beta_c, one i32 per spin, Philox4x32-10 draws, on {}\n\
             copy bandwidth in the same run: {:.0} GB/s\n\n\
             | rule | lattice | step median µs | flips per ns | GB/s (10 B per site for i32, 2.5 for u8, 0.75 for bits) | % of copy |\n|---|---|---|---|---|---|\n",
            self.device, self.copy_gb_s
        );
        for r in &self.rows {
            s.push_str(&format!(
                "| {} | {} | {:.1} | {:.3} | {:.0} | {:.0} % |\n",
                r.rule, r.size, r.step.median_us, r.flips_per_ns, r.gb_s, r.pct_of_copy
            ));
        }
        let (size, ns, flips) = &self.host;
        s.push_str(&format!(
            "\nhost reference (Ising::apply_host, one core) at {size}: {:.1} ms per step, {flips:.3} flips per ns\n",
            ns / 1e6
        ));
        for rule in ["ising", "ising_bits"] {
            if let Some(best) = self
                .rows
                .iter()
                .filter(|r| r.rule == rule)
                .map(|r| r.flips_per_ns)
                .reduce(f64::max)
            {
                s.push_str(&format!(
                    "device ({rule}, best size) / one core: {:.0}x\n",
                    best / flips
                ));
            }
        }
        s
    }
}
