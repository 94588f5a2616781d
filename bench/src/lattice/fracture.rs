//! Seed 003's fracture: the `fracture` suite times the device's work-queue schedule
//! to completion (the crack touching the four vertical faces) beside the serial reference on one
//! core of the same run, after checking the device against its host replay; the `fracture-study`
//! suite compares the two schedules statistically (many seeds per (K1, K2) pair of the thesis'
//! appendix A: means, 95 % confidence intervals, Welch's t-test).

use std::time::Instant;

use anyhow::{bail, Result};
use clforge::runtime::lattice::bonds::{
    replay, replay_launch, serial_reference, BondGeometry, BondModel, BondRun, BondSchedule, BondState, Fracture, Stop,
    VERTICAL_FACES,
};
use clforge::runtime::Device;
use serde::Serialize;

use crate::measure::Progress;

/// The (K1, K2) pairs of the thesis' appendix A.
pub const PAIRS: [(f64, f64); 6] = [(0.5, 1.0), (1.0, 1.0), (1.0, 2.0), (2.0, 1.0), (3.0, 1.0), (4.0, 1.0)];

#[derive(Serialize)]
pub struct Row {
    pub size: String,
    /// Each live bond proposes in a launch with probability 1 / thinning.
    pub thinning: u32,
    pub bonds: u64,
    pub launches: u64,
    /// Proposals: entries visited / thinning (each visit proposes with probability 1 / thinning).
    pub proposals: u64,
    pub broken: u64,
    pub columns: u64,
    /// Wall time to the stop, launches and counter reads included.
    pub wall_s: f64,
    /// Sum of the step kernels' device times.
    pub kernel_s: f64,
    pub proposals_per_s: f64,
    pub bonds_per_s: f64,
    /// The serial reference on one core at this size (None: not run).
    pub serial: Option<Serial>,
}

#[derive(Serialize, Clone)]
pub struct Serial {
    pub proposals: u64,
    pub broken: u64,
    pub columns: u64,
    pub wall_s: f64,
    pub proposals_per_s: f64,
    pub bonds_per_s: f64,
}

#[derive(Serialize)]
pub struct Report {
    pub device: String,
    pub k1: f64,
    pub k2: f64,
    pub rows: Vec<Row>,
    pub wall_s: f64,
}

fn serial(size: [usize; 3], energy: &Fracture, seed: u64) -> Result<Serial> {
    let model = BondModel::fracture();
    let mut s = BondState::nucleus(BondGeometry::new(size, 3)?, &model, seed)?;
    let t = Instant::now();
    serial_reference(&mut s, &model, energy, VERTICAL_FACES, u64::MAX)?;
    let wall_s = t.elapsed().as_secs_f64();
    Ok(Serial {
        proposals: s.proposals,
        broken: s.broken,
        columns: s.marked,
        wall_s,
        proposals_per_s: s.proposals as f64 / wall_s,
        bonds_per_s: s.broken as f64 / wall_s,
    })
}

/// `serial_up_to`: the largest lattice (in bonds) on which the serial reference runs too.
pub fn run(dev: &Device, quick: bool, sizes: Option<&[[usize; 3]]>, serial_up_to: u64) -> Result<Report> {
    let start = Instant::now();
    let energy = Fracture { k1: 1.0, k2: 1.0 };
    let model = BondModel::fracture();
    let default: Vec<[usize; 3]> = if quick {
        vec![[32, 32, 32], [48, 48, 48]]
    } else {
        vec![[128, 128, 128], [512, 512, 512], [1000, 1000, 500]]
    };
    let sizes = sizes.map_or(default, <[[usize; 3]]>::to_vec);
    let mut progress = Progress::new(sizes.len() as u64 * 3 + 1);

    progress.step("fracture: device = host replay, 20^3, 60 launches");
    let g = BondGeometry::new([20, 20, 20], 3)?;
    let start_state = BondState::nucleus(g, &model, 1)?;
    let mut run = BondRun::new(dev, &model, BondSchedule::default(), &start_state, None)?;
    let mut host = start_state.clone();
    for _ in 0..60 {
        if host.queue.is_empty() {
            break;
        }
        run.launch(&energy)?;
        replay_launch(&mut host, &model, &energy, BondSchedule::default())?;
    }
    let dev_state = run.state()?;
    if dev_state.bonds != host.bonds || dev_state.broken != host.broken || dev_state.marked != host.marked {
        bail!("the fracture kernel differs from its host replay on 20^3");
    }

    let mut rows = Vec::new();
    for &size in &sizes {
        let label = format!("{}x{}x{}", size[0], size[1], size[2]);
        let g = BondGeometry::new(size, 3)?;
        // Bits, the live list (twice: compaction), its keep flags: about 12 bytes per interior bond.
        let need = g.bonds() / 8 + 12 * g.interior_bonds();
        if need > dev.info().global_mem_bytes / 10 * 9 {
            eprintln!("skipping {label}: about {need} bytes exceed the device's memory");
            continue;
        }
        let serial = if g.bonds() <= serial_up_to {
            progress.step(&format!("fracture {label}: serial reference, one core"));
            Some(serial(size, &energy, 2)?)
        } else {
            None
        };
        for thinning in [1, 8] {
            progress.step(&format!("fracture {label} on the device, thinning {thinning}"));
            let state = BondState::nucleus(g, &model, 2)?;
            let schedule = BondSchedule {
                thinning,
                ..BondSchedule::default()
            };
            let mut run = BondRun::new(dev, &model, schedule, &state, None)?;
            let (mut kernel_ns, mut timing) = (0u64, Ok(()));
            let t = Instant::now();
            let stop = run.run(&energy, VERTICAL_FACES, u64::MAX, |_, l| match l.event.duration_ns() {
                Ok(ns) => kernel_ns += ns,
                Err(e) => timing = Err(e),
            })?;
            let wall_s = t.elapsed().as_secs_f64();
            timing?;
            if stop != Stop::Reached {
                bail!("fracture {label} stopped without reaching the faces ({stop:?})");
            }
            rows.push(Row {
                size: label.clone(),
                thinning,
                bonds: g.bonds(),
                launches: run.step(),
                proposals: run.proposals() / u64::from(thinning),
                broken: run.broken(),
                columns: run.marked(),
                wall_s,
                kernel_s: kernel_ns as f64 * 1e-9,
                proposals_per_s: run.proposals() as f64 / f64::from(thinning) / wall_s,
                bonds_per_s: run.broken() as f64 / wall_s,
                serial: serial.clone(),
            });
        }
    }
    progress.finish();
    Ok(Report {
        device: dev.info().name.clone(),
        k1: energy.k1,
        k2: energy.k2,
        rows,
        wall_s: start.elapsed().as_secs_f64(),
    })
}

impl Report {
    pub fn table(&self) -> String {
        let mut s = format!(
            "seed 003 fracture to the four vertical faces, K1 = {}, K2 = {}, on {} (work queue: each live bond proposes in a launch with probability 1 / thinning) and the serial reference on one core\n\n\
             | grains | thinning | launches | proposals | broken | columns | wall s | kernels s | M proposals/s | M bonds/s | \
             serial wall s | serial M proposals/s | serial M bonds/s | device / serial (time to the faces) |\n\
             |---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
            self.k1, self.k2, self.device
        );
        for r in &self.rows {
            let serial = r.serial.as_ref().map_or_else(
                || "| — | — | — | — |".to_string(),
                |q| {
                    format!(
                        "| {:.2} | {:.1} | {:.2} | {:.1}x |",
                        q.wall_s,
                        q.proposals_per_s / 1e6,
                        q.bonds_per_s / 1e6,
                        q.wall_s / r.wall_s
                    )
                },
            );
            s.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {:.2} | {:.2} | {:.1} | {:.2} {serial}\n",
                r.size,
                r.thinning,
                r.launches,
                r.proposals,
                r.broken,
                r.columns,
                r.wall_s,
                r.kernel_s,
                r.proposals_per_s / 1e6,
                r.bonds_per_s / 1e6
            ));
        }
        s
    }
}

/// One schedule's sample of runs.
#[derive(Serialize, Clone)]
pub struct Sample {
    pub broken: Vec<f64>,
    pub columns: Vec<f64>,
}

#[derive(Serialize)]
pub struct StudyRow {
    pub k1: f64,
    pub k2: f64,
    pub serial: Sample,
    pub parallel: Sample,
}

#[derive(Serialize)]
pub struct Study {
    pub size: [usize; 3],
    pub seeds: usize,
    pub thinning: u32,
    /// Where the parallel schedule ran: the device, or its exact host replay.
    pub parallel_on: String,
    pub rows: Vec<StudyRow>,
    pub wall_s: f64,
}

/// Runs `seeds` seeds of each pair with the serial reference (on `threads` cores) and with the
/// parallel schedule (on `dev`, or by its host replay, which equals the device bit for bit, on
/// the cores).
pub fn study(dev: Option<&Device>, size: [usize; 3], seeds: usize, thinning: u32, threads: usize) -> Result<Study> {
    let start = Instant::now();
    let model = BondModel::fracture();
    let g = BondGeometry::new(size, 3)?;
    let schedule = BondSchedule {
        thinning,
        ..BondSchedule::default()
    };
    let mut rows = Vec::new();
    let mut progress = Progress::new(PAIRS.len() as u64);
    for &(k1, k2) in &PAIRS {
        progress.step(&format!("K1 = {k1}, K2 = {k2}: {seeds} seeds x 2 schedules"));
        let energy = Fracture { k1, k2 };
        // Serial (and, without a device, replayed parallel) runs spread over the cores.
        let jobs: Vec<(bool, u64)> = (0..seeds as u64)
            .flat_map(|s| [(true, s), (false, s)])
            .filter(|(serial, _)| *serial || dev.is_none())
            .collect();
        let results: Vec<Result<(bool, u64, u64)>> = std::thread::scope(|scope| {
            let chunks: Vec<Vec<(bool, u64)>> = (0..threads.max(1))
                .map(|t| jobs.iter().copied().skip(t).step_by(threads.max(1)).collect())
                .collect();
            let handles: Vec<_> = chunks
                .into_iter()
                .map(|chunk| {
                    let (model, energy) = (&model, &energy);
                    scope.spawn(move || {
                        chunk
                            .into_iter()
                            .map(|(is_serial, seed)| {
                                let mut s = BondState::nucleus(g, model, 1000 + seed)?;
                                let stop = if is_serial {
                                    serial_reference(&mut s, model, energy, VERTICAL_FACES, u64::MAX)?
                                } else {
                                    replay(&mut s, model, energy, schedule, VERTICAL_FACES, u64::MAX)?
                                };
                                if stop != Stop::Reached {
                                    bail!("seed {seed} stopped without reaching the faces ({stop:?})");
                                }
                                Ok((is_serial, s.broken, s.marked))
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| {
                    h.join()
                        .unwrap_or_else(|_| vec![Err(anyhow::anyhow!("a worker panicked"))])
                })
                .collect()
        });
        let mut serial = Sample {
            broken: vec![],
            columns: vec![],
        };
        let mut parallel = serial.clone();
        for r in results {
            let (is_serial, b, c) = r?;
            let s = if is_serial { &mut serial } else { &mut parallel };
            s.broken.push(b as f64);
            s.columns.push(c as f64);
        }
        if let Some(dev) = dev {
            for seed in 0..seeds as u64 {
                let s = BondState::nucleus(g, &model, 1000 + seed)?;
                let mut run = BondRun::new(dev, &model, schedule, &s, None)?;
                if run.run(&energy, VERTICAL_FACES, u64::MAX, |_, _| ())? != Stop::Reached {
                    bail!("seed {seed} stopped without reaching the faces on the device");
                }
                parallel.broken.push(run.broken() as f64);
                parallel.columns.push(run.marked() as f64);
            }
        }
        rows.push(StudyRow {
            k1,
            k2,
            serial,
            parallel,
        });
    }
    progress.finish();
    Ok(Study {
        size,
        seeds,
        thinning,
        parallel_on: dev.map_or("host replay of the device schedule".into(), |d| d.info().name.clone()),
        rows,
        wall_s: start.elapsed().as_secs_f64(),
    })
}

/// Mean and the half width of its 95 % confidence interval (Student t).
fn mean_ci(x: &[f64]) -> (f64, f64, f64) {
    let n = x.len() as f64;
    let m = x.iter().sum::<f64>() / n;
    let var = x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
    (m, var, t_quantile_975(n - 1.0) * (var / n).sqrt())
}

/// Welch's two-sample t-test: the difference of means, its 95 % half width, and the two-sided p.
pub fn welch(a: &[f64], b: &[f64]) -> (f64, f64, f64) {
    let (ma, va, _) = mean_ci(a);
    let (mb, vb, _) = mean_ci(b);
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let se2 = va / na + vb / nb;
    if se2 == 0.0 {
        return (ma - mb, 0.0, if ma == mb { 1.0 } else { 0.0 });
    }
    let df = se2 * se2 / ((va / na).powi(2) / (na - 1.0) + (vb / nb).powi(2) / (nb - 1.0));
    let t = (ma - mb) / se2.sqrt();
    (ma - mb, t_quantile_975(df) * se2.sqrt(), student_two_sided_p(t, df))
}

/// Two-sided p of Student's t with `df` degrees of freedom: I_{df/(df+t²)}(df/2, 1/2).
fn student_two_sided_p(t: f64, df: f64) -> f64 {
    incomplete_beta(df / 2.0, 0.5, df / (df + t * t))
}

/// The 97.5 % quantile of Student's t (bisection on the p-value).
fn t_quantile_975(df: f64) -> f64 {
    let (mut lo, mut hi) = (0.0, 100.0);
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if student_two_sided_p(mid, df) > 0.05 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// The regularised incomplete beta function I_x(a, b) (continued fraction, Lentz's method).
fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    if x > (a + 1.0) / (a + b + 2.0) {
        return 1.0 - incomplete_beta(b, a, 1.0 - x);
    }
    let tiny = 1e-300;
    let (mut c, mut d) = (1.0, 1.0 - (a + b) * x / (a + 1.0));
    d = if d.abs() < tiny { tiny } else { d };
    d = 1.0 / d;
    let mut f = d;
    for m in 1..300 {
        let m = f64::from(m);
        for num in [
            m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0)),
        ] {
            d = 1.0 + num * d;
            d = if d.abs() < tiny { tiny } else { d };
            c = 1.0 + num / c;
            c = if c.abs() < tiny { tiny } else { c };
            d = 1.0 / d;
            f *= d * c;
        }
        if (d * c - 1.0).abs() < 1e-15 {
            break;
        }
    }
    ln_front.exp() * f / a
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7).
fn ln_gamma(x: f64) -> f64 {
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let t = x + 7.5;
    let s = C[1..]
        .iter()
        .enumerate()
        .fold(C[0], |s, (i, c)| s + c / (x + i as f64 + 1.0));
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + s.ln()
}

impl Study {
    pub fn table(&self) -> String {
        let [x, y, z] = self.size;
        let mut s = format!(
            "seed 003 fracture, {x}x{y}x{z} grains, {} seeds per pair and schedule: the serial reference (one \
             proposal at a time, current counters) against the parallel schedule (each live bond proposes in a launch \
             with probability 1/{}, counters of the launch's start) on {}. Means ± 95 % CI; \
             difference (parallel − serial) ± 95 % CI, Welch's p.\n\n\
             | K1 | K2 | broken, serial | broken, parallel | difference | p | columns, serial | columns, parallel | \
             difference | p |\n|---|---|---|---|---|---|---|---|---|---|\n",
            self.seeds, self.thinning, self.parallel_on
        );
        for r in &self.rows {
            let cell = |a: &[f64]| {
                let (m, _, h) = mean_ci(a);
                format!("{m:.0} ± {h:.0}")
            };
            let diff = |a: &[f64], b: &[f64]| {
                let (d, h, p) = welch(b, a);
                let (m, _, _) = mean_ci(a);
                format!("{d:+.0} ± {h:.0} ({:+.2} %) | {p:.3}", 100.0 * d / m)
            };
            s.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} | {} |\n",
                r.k1,
                r.k2,
                cell(&r.serial.broken),
                cell(&r.parallel.broken),
                diff(&r.serial.broken, &r.parallel.broken),
                cell(&r.serial.columns),
                cell(&r.parallel.columns),
                diff(&r.serial.columns, &r.parallel.columns)
            ));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn student_t_matches_tables() {
        // Two-sided 5 % critical values: df 1 → 12.706, 10 → 2.228, 30 → 2.042, ∞ → 1.960.
        for (df, t) in [(1.0, 12.706), (10.0, 2.228), (30.0, 2.042), (1e6, 1.960)] {
            assert!((t_quantile_975(df) - t).abs() < 2e-3, "df {df}: {}", t_quantile_975(df));
        }
        assert!((student_two_sided_p(0.0, 5.0) - 1.0).abs() < 1e-12);
        let (d, _, p) = welch(&[1.0, 2.0, 3.0, 4.0], &[11.0, 12.0, 13.0, 14.0]);
        assert!(d == -10.0 && p < 1e-4, "{p}");
        let (_, _, p) = welch(&[1.0, 2.0, 3.0, 4.0], &[1.5, 2.5, 2.0, 3.5]);
        assert!(p > 0.5, "{p}");
    }
}
