//! The `scaling` suite: stencils split over several devices of one host
//! (`Devices`, deep halos exchanged through the host), weak and strong scaling.
//!
//! Devices: every device of the chosen device's kind (all GPUs of the machine); on a machine
//! with one device (PoCL on the CPU) the same device twice, which checks the path but cannot
//! scale. Per row: the median wall time per step of `steps` launches enqueued without events
//! and waited for on every device (5 repetitions), the time of one halo exchange alone
//! (median of 20), how many exchanges a step needs (reach / depth), and the efficiency
//! against the single device (`Device`, no split). Before timing, the split run is checked
//! against the single device bit for bit.
//!
//! Weak scaling keeps the grid per device (8192² in 2-D, 512³ in 3-D by default) and stacks
//! the devices along the split axis; strong scaling splits one grid (16384², 512³).

use std::time::Instant;

use anyhow::{bail, Result};
use clforge::prelude::*;
use clforge::runtime::DeviceKind;
use serde::Serialize;

/// Jacobi for `Δu = f`, 5 points, fixed boundary (seed 002 without the cell mask).
#[clforge::stencil]
fn scale_jacobi(u: &Grid<f32>, f: &Grid<f32>) -> f32 {
    0.25 * (u.at(1, 0) + u.at(-1, 0) + u.at(0, 1) + u.at(0, -1)) - 0.25 * f.at(0, 0)
}

/// The 3-D 7-point heat step.
#[clforge::stencil]
fn scale_heat(u: &Grid3<f32>) -> f32 {
    u.at(0, 0, 0)
        + 0.1
            * (u.at(1, 0, 0) + u.at(-1, 0, 0) + u.at(0, 1, 0) + u.at(0, -1, 0) + u.at(0, 0, 1) + u.at(0, 0, -1)
                - 6.0 * u.at(0, 0, 0))
}

/// One measured configuration.
#[derive(Debug, Serialize)]
pub struct Row {
    pub case: String,
    pub scaling: &'static str,
    pub devices: usize,
    pub shape: String,
    pub shares: Vec<(usize, usize)>,
    pub depth: usize,
    /// Exchanges overlapped with interior work (`Devices::overlap`), else exchange first.
    pub overlap: bool,
    pub step_us: f64,
    pub step_min_us: f64,
    pub exchange_us: f64,
    pub exchanges_per_step: f64,
    /// Exchange time per step over the step time.
    pub exchange_share: f64,
    /// Weak: t(1) / t(n); strong: t(1) / t(n) / n.
    pub efficiency: f64,
    /// Strong: t(1) / t(n).
    pub speedup: f64,
    /// Overlapped rows: the share of the exchange time per step that overlap hides, from the
    /// same configuration exchanging first: (t_first - t_overlapped) / (exchange × exch/step).
    pub hidden: Option<f64>,
}

/// The suite's report.
#[derive(Debug, Serialize)]
pub struct Report {
    pub devices: Vec<String>,
    pub weights_gb_s: Vec<f64>,
    pub rows: Vec<Row>,
}

impl Report {
    pub fn table(&self) -> String {
        let mut s = format!(
            "clforge-bench — suite `scaling`\ndevices: {}\nmeasured copy rates (shares): {:?} GB/s\n\
             time per step: wall clock, median of 5 runs of a batch enqueued without events and waited for on \
             every device\n\n",
            self.devices.join("; "),
            self.weights_gb_s
                .iter()
                .map(|w| (w * 10.0).round() / 10.0)
                .collect::<Vec<_>>()
        );
        s += &format!(
            "  {:<10} {:<6} {:>3} {:<16} {:>5} {:>4} {:>10} {:>10} {:>12} {:>8} {:>8} {:>7} {:>7} {:>7}\n",
            "case",
            "scale",
            "dev",
            "shape",
            "depth",
            "ovl",
            "step us",
            "min us",
            "exchange us",
            "exch/st",
            "exch %",
            "eff",
            "speedup",
            "hidden"
        );
        for r in &self.rows {
            s += &format!(
                "  {:<10} {:<6} {:>3} {:<16} {:>5} {:>4} {:>10.1} {:>10.1} {:>12.1} {:>8.3} {:>7.1}% {:>6.1}% {:>7.2} {:>7}\n",
                r.case,
                r.scaling,
                r.devices,
                r.shape,
                r.depth,
                if r.overlap { "yes" } else { "no" },
                r.step_us,
                r.step_min_us,
                r.exchange_us,
                r.exchanges_per_step,
                100.0 * r.exchange_share,
                100.0 * r.efficiency,
                r.speedup,
                r.hidden.map_or("-".to_string(), |h| format!("{:.0}%", 100.0 * h))
            );
        }
        s
    }
}

/// The devices to split over: every device of `dev`'s kind, or `dev` twice where it is alone.
fn devices_like(dev: &Device) -> Result<Vec<Device>> {
    let kind = dev.info().kind.clone();
    let mut all = Vec::new();
    for info in Device::list()? {
        if info.kind == kind
            && (!matches!(kind, DeviceKind::Gpu) || !info.platform.contains("Portable Computing Language"))
        {
            all.push(Device::select(&info.index.to_string())?);
        }
    }
    if all.len() < 2 {
        all = vec![dev.clone(), dev.clone()];
    }
    Ok(all)
}

/// Wall time per step (µs) of `steps` launches of `step`, median and min of 5 runs;
/// `finish` waits for every device.
fn time_steps(
    steps: usize,
    mut step: impl FnMut() -> Result<()>,
    finish: impl Fn() -> Result<()>,
) -> Result<(f64, f64)> {
    for _ in 0..steps.min(20) {
        step()?;
    }
    finish()?;
    let mut t = Vec::new();
    for _ in 0..5 {
        let start = Instant::now();
        for _ in 0..steps {
            step()?;
        }
        finish()?;
        t.push(start.elapsed().as_secs_f64() * 1e6 / steps as f64);
    }
    t.sort_by(f64::total_cmp);
    Ok((t[2], t[0]))
}

/// Times of one configuration.
#[derive(Clone, Copy, Debug)]
struct Timing {
    step: f64,
    min: f64,
    exchange: f64,
    per_step: f64,
}

fn check_same(a: &HostGrid<f32>, b: &HostGrid<f32>, what: &str) -> Result<()> {
    if a.data().iter().zip(b.data()).any(|(x, y)| x.to_bits() != y.to_bits()) {
        bail!("{what}: the split run differs from the single device; refusing to time it");
    }
    Ok(())
}

fn noise(shape: Shape, seed: u32) -> Result<HostGrid<f32>> {
    let mut x = seed.wrapping_mul(2_654_435_761).max(1);
    Ok(HostGrid::from_fn(shape, |_| {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        (x >> 8) as f32 / (1u32 << 24) as f32
    })?)
}

/// `fn $name(dev, devices, shape, steps) -> Result<Timing>`: stencil `$st` (its state, then the
/// extra read-only grids `$extra` made from noise of the given seeds) on `dev` alone (`None`) or
/// split over `devices`; the split run is checked bit for bit against the single device, then
/// timed. One body for every case, so the cases cannot drift apart.
macro_rules! case {
    ($name:ident, $st:ty, $what:literal, [$($extra:ident = $seed:literal),*]) => {
        fn $name(dev: &Device, devices: Option<&Devices>, shape: Shape, steps: usize) -> Result<Timing> {
            let u0 = noise(shape, 1)?;
            let config = LaunchConfig::default();
            let mut one = PingPong::from_host(dev, &u0)?;
            $(let $extra = noise(shape, $seed)?;)*
            let p1 = <$st>::plan(dev, &config, shape)?;
            let Some(devices) = devices else {
                $(let $extra = dev.upload(&$extra)?;)*
                let (step, min) = time_steps(
                    steps,
                    || {
                        let (n, c) = one.split();
                        <$st>::enqueue_plan(&p1, n, c $(, &$extra)*)?;
                        one.swap();
                        Ok(())
                    },
                    || Ok(dev.finish()?),
                )?;
                return Ok(Timing { step, min, exchange: 0.0, per_step: 0.0 });
            };
            let mut many = PingPong::from_host(devices, &u0)?;
            let ps = <$st>::plan(devices, &config, shape)?;
            let depth = devices.layout(shape)?.depth();
            // (on the one device, split)
            $(let $extra = (dev.upload(&$extra)?, devices.upload(&$extra)?);)*
            for _ in 0..2 * depth + 3 {
                let (n, c) = one.split();
                <$st>::enqueue_plan(&p1, n, c $(, &$extra.0)*)?;
                one.swap();
                let (n, c) = many.split();
                <$st>::enqueue_plan(&ps, n, c $(, &$extra.1)*)?;
                many.swap();
            }
            check_same(&many.current().to_host()?, &one.current().to_host()?, $what)?;
            drop(one);
            let finish = || -> Result<()> {
                for d in devices.devices() {
                    d.finish()?;
                }
                Ok(())
            };
            let (step, min) = time_steps(
                steps,
                || {
                    let (n, c) = many.split();
                    <$st>::enqueue_plan(&ps, n, c $(, &$extra.1)*)?;
                    many.swap();
                    Ok(())
                },
                finish,
            )?;
            let grid = many.current();
            let exchange = time_exchange(|| Ok(grid.exchange()?), &finish)?;
            Ok(Timing { step, min, exchange, per_step: 1.0 / depth as f64 })
        }
    };
}

case!(jacobi, ScaleJacobi, "jacobi-2d", [f = 2]);
case!(heat, ScaleHeat, "heat-3d", []);

/// The explicit FEM step (seed 000's quad4 plate, `nx × ny` elements as an unstructured mesh,
/// the node gather) on `dev` alone or split over `devices` (`SplitStepper`, ghosts exchanged
/// every `depth` steps); the split run is checked bit for bit first.
fn fem(dev: &Device, devices: Option<&Devices>, elements: [usize; 2], steps: usize) -> Result<Timing> {
    use clforge::runtime::element::schedule::ForceSchedule;
    use clforge::runtime::element::split::SplitStepper;
    use clforge::runtime::element::stepper::{Explicit, Stepper};
    let model = crate::element::model::model(elements, true)?;
    let config = crate::element::model::config(ForceSchedule::Gather);
    let n = model.dof_count();
    let u0: Vec<f32> = noise(Shape::d1(n), 4)?.data().iter().map(|x| x * 1e-3).collect();
    let zero = vec![0f32; n];
    let mut one = Stepper::new(dev, &model, &config)?;
    one.set_state(&u0, &zero)?;
    // `steps` steps in one call, as a solver steps between outputs: the exchanges between
    // them overlap the next step's interior where the split does that (`Devices::overlap`).
    let time = |st: &mut dyn Explicit<f32>, finish: &dyn Fn() -> Result<()>| -> Result<(f64, f64)> {
        let (median, min) = time_steps(1, || Ok(st.step(steps)?), finish)?;
        Ok((median / steps as f64, min / steps as f64))
    };
    let Some(devices) = devices else {
        let (step, min) = time(&mut one, &|| Ok(dev.finish()?))?;
        return Ok(Timing {
            step,
            min,
            exchange: 0.0,
            per_step: 0.0,
        });
    };
    let mut split = SplitStepper::<f32>::with_precision(devices, &model, &config)?;
    split.set_state(&u0, &zero)?;
    one.step(5)?;
    split.step(5)?;
    let same = |a: &[f32], b: &[f32]| a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits());
    if !same(&split.displacement()?, &one.displacement()?) {
        bail!("fem: the split step differs from the single device; refusing to time it");
    }
    drop(one);
    let finish = || -> Result<()> {
        for d in devices.devices() {
            d.finish()?;
        }
        Ok(())
    };
    let (step, min) = time(&mut split, &finish)?;
    Ok(Timing {
        step,
        min,
        exchange: time_exchange(|| Ok(split.exchange_ghosts()?), &finish)?,
        per_step: 1.0 / devices.depth_planes() as f64,
    })
}

/// One exchange (`exchange`) alone (devices idle), median of 20, in µs.
fn time_exchange(mut exchange: impl FnMut() -> Result<()>, finish: &dyn Fn() -> Result<()>) -> Result<f64> {
    finish()?;
    let mut t = Vec::new();
    for _ in 0..20 {
        let start = Instant::now();
        exchange()?;
        t.push(start.elapsed().as_secs_f64() * 1e6);
    }
    t.sort_by(f64::total_cmp);
    Ok(t[10])
}

pub fn run(dev: &Device, quick: bool, depths: &[usize], cases: &[String]) -> Result<Report> {
    let all = devices_like(dev)?;
    let rates = Devices::new(all.clone())?.measured(if quick { 1 << 22 } else { 1 << 28 })?;
    let mut rows = Vec::new();
    let (w2, s2, w3) = if quick { (512, 1024, 64) } else { (8192, 16384, 512) };
    let (wf, sf) = if quick { (64, [128, 64]) } else { (1024, [2048, 1024]) };
    let steps = |shape: Shape| -> usize {
        let pts = shape.len() as f64;
        ((4e9 / pts) as usize).clamp(20, 400)
    };
    for n in 1..=all.len() {
        for (case, scaling, shape) in [
            ("jacobi-2d", "weak", Shape::d2(w2, w2 * n)),
            ("jacobi-2d", "strong", Shape::d2(s2, s2)),
            ("heat-3d", "weak", Shape::d3(w3, w3, w3 * n)),
            ("heat-3d", "strong", Shape::d3(w3, w3, w3)),
            ("fem-quad4", "weak", Shape::d2(wf, wf * n)),
            ("fem-quad4", "strong", Shape::d2(sf[0], sf[1])),
        ] {
            if !cases.is_empty() && !cases.iter().any(|c| case.starts_with(c.as_str())) {
                continue;
            }
            let fem_case = case.starts_with("fem");
            let st = if fem_case { 50 } else { steps(shape) };
            let [ex, ey, _] = shape.dims();
            let run_case = |devices: Option<&Devices>| -> Result<Timing> {
                if fem_case {
                    fem(dev, devices, [ex, ey], st)
                } else if shape.rank() == 2 {
                    jacobi(dev, devices, shape, st)
                } else {
                    heat(dev, devices, shape, st)
                }
            };
            let single = run_case(None)?;
            let depths_here = if n == 1 { &depths[..1] } else { depths };
            // On several devices: exchange first, then overlapped.
            let overlaps: &[bool] = if n == 1 { &[false] } else { &[false, true] };
            for (&depth, &overlap) in depths_here.iter().flat_map(|d| overlaps.iter().map(move |o| (d, o))) {
                let devices = Devices::new(all[..n].to_vec())?
                    .with_weights(&rates.weights()[..n])?
                    .depth(depth)?
                    .overlap(overlap);
                let t = if n == 1 { single } else { run_case(Some(&devices))? };
                let base = rows
                    .iter()
                    .find(|r: &&Row| r.case == case && r.scaling == scaling && r.devices == 1)
                    .map_or(t.step, |r| r.step_us);
                let speedup = base / t.step;
                let hidden = rows
                    .iter()
                    .find(|r: &&Row| {
                        overlap && r.case == case && r.scaling == scaling && r.devices == n && r.depth == depth
                    })
                    .filter(|r| r.exchange_us * r.exchanges_per_step > 0.0)
                    .map(|r| (r.step_us - t.step) / (r.exchange_us * r.exchanges_per_step));
                rows.push(Row {
                    case: case.to_string(),
                    scaling,
                    devices: n,
                    shape: shape.to_string(),
                    shares: devices.layout(shape)?.owned().to_vec(),
                    depth,
                    overlap,
                    step_us: t.step,
                    step_min_us: t.min,
                    exchange_us: t.exchange,
                    exchanges_per_step: t.per_step,
                    exchange_share: if t.step > 0.0 {
                        t.exchange * t.per_step / t.step
                    } else {
                        0.0
                    },
                    efficiency: if scaling == "weak" { speedup } else { speedup / n as f64 },
                    speedup,
                    hidden,
                });
            }
        }
    }
    Ok(Report {
        devices: all.iter().map(|d| d.info().name.clone()).collect(),
        weights_gb_s: rates.weights().to_vec(),
        rows,
    })
}
