//! Seed 001's performance model of wavefront sweeps (eqs. 17-21), corrected, calibrated per
//! device and schedule from measured sweeps, and used to choose the schedule and block edge.
//!
//! A block of edge L takes `T_b(L) = s(L)·t_step + p(L)·t_point` where `s` is its number of
//! in-block steps (barriers: 2L−1 for a square block walked by diagonals, 3L−2 for a cube) and
//! `p` its points (L², or L²·K for a column of K layers walked by algorithm 1, L³ for a cube):
//! eq. (17)'s `(5L+16) t_g + (2L−1)(13 t_l + t_c + t_b)` with the load/store term read as
//! proportional to the block's points and the step term kept. The device runs `b` blocks at once,
//! so a block diagonal of `n_k` blocks takes `ceil(n_k / b)` block times (eq. 18's
//! `floor(n_k/b) + 1` over the *corrected* count of diagonals: `nbx + nby − 1`, `nbx + nby + nbz − 2`
//! in 3-D, not the printed 2n+1 and 3n−1). Each launch adds `t_launch` (the seed's t_kc). The
//! persistent schedule has one launch and its blocks overlap along the diagonals: its time is
//! the longer of the critical path (the diagonals, one block time each) and the total work over
//! `b`. The unknowns `t_step`, `t_point`, `t_launch` enter linearly and are fitted by least
//! squares to measured sweeps of the user's own kernel; `b` comes from the device.

use super::{launches, Schedule, SweepConfig, SweepSpec, DEFAULT_PHASE};
use crate::device::{DeviceInfo, DeviceKind};
use crate::error::{Error, Result};
use crate::grid::Shape;

/// Fitted costs of one schedule, in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Costs {
    /// One in-block step (a barrier and the point updates between).
    pub step_ns: f64,
    /// One point's share of a block's memory traffic and arithmetic.
    pub point_ns: f64,
    /// One kernel launch (the seed's t_kc).
    pub launch_ns: f64,
}

/// The model's terms for one configuration: `time = steps·t_step + points·t_point +
/// launches·t_launch`, every count already weighted by how many blocks run at once.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Terms {
    /// In-block steps on the critical path.
    pub steps: f64,
    /// Block points processed in those rounds.
    pub points: f64,
    /// Kernel launches.
    pub launches: f64,
}

impl Terms {
    /// The predicted time with these costs, in nanoseconds.
    pub fn time_ns(&self, c: &Costs) -> f64 {
        self.steps * c.step_ns + self.points * c.point_ns + self.launches * c.launch_ns
    }
}

/// Blocks a device runs at once for a work-group of `items` work-items: on GPUs up to 32
/// groups and 2048 work-items per compute unit; on CPUs one group per compute unit.
pub fn concurrent_blocks(info: &DeviceInfo, items: usize) -> usize {
    let cu = info.compute_units.max(1) as usize;
    match info.kind {
        DeviceKind::Gpu => cu * (2048 / items.max(1)).clamp(1, 32),
        _ => cu,
    }
}

/// Blocks on each block diagonal (`i + j = k`, or the plane `i + j + m = k` in 3-D).
fn diagonal_counts(blocks: [usize; 3], planes: bool) -> Vec<usize> {
    let [bx, by, bz] = blocks;
    let bz = if planes { bz } else { 1 };
    let mut counts = vec![0usize; bx + by + bz - 2];
    for i in 0..bx {
        for j in 0..by {
            for m in 0..bz {
                counts[i + j + m] += 1;
            }
        }
    }
    counts
}

/// The model's terms for `schedule` with block edge `l` on a region of `region` points.
pub fn terms(schedule: Schedule, region: [usize; 3], rank: usize, l: usize, b: usize) -> Terms {
    let l = l.max(1);
    let blocks = region.map(|m| m.div_ceil(l).max(1));
    let b = b.max(1) as f64;
    let layers = if rank == 3 { region[2].max(1) as f64 } else { 1.0 };
    let lf = l as f64;
    let n_launch = launches(schedule, blocks) as f64;
    match schedule {
        Schedule::Serial => {
            let points: f64 = region.iter().map(|&m| m.max(1) as f64).product();
            Terms {
                steps: 0.0,
                points,
                launches: 1.0,
            }
        }
        Schedule::Wave | Schedule::WaveLocal | Schedule::Persistent | Schedule::PersistentLocal => {
            let rounds: f64 = diagonal_counts(blocks, false)
                .iter()
                .map(|&n| (n as f64 / b).ceil())
                .sum();
            let (steps, points) = ((2.0 * lf - 1.0) * layers, lf * lf * layers);
            let rounds = if matches!(schedule, Schedule::Persistent | Schedule::PersistentLocal) {
                let path = (blocks[0] + blocks[1] - 1) as f64;
                let work = (blocks[0] * blocks[1]) as f64 / b;
                path.max(work)
            } else {
                rounds
            };
            Terms {
                steps: rounds * steps,
                points: rounds * points,
                launches: n_launch,
            }
        }
        Schedule::Strip => {
            // Strips of l rows, row r one column behind row r - 1; a strip starts a phase once
            // the strip above has finished the columns it reads: it trails by about
            // l - 1 + phase steps. The longer of that chain and the work over b strips at once.
            let (mx, my) = (region[0].max(1) as f64, region[1].max(1) as f64);
            let strips = blocks[1] as f64;
            let per_strip = mx + lf - 1.0;
            let path = per_strip + (strips - 1.0) * (lf - 1.0 + DEFAULT_PHASE as f64);
            Terms {
                steps: path.max(strips * per_strip / b),
                points: mx * my / b,
                launches: 1.0,
            }
        }
        Schedule::Blocks | Schedule::PersistentBlocks | Schedule::BlocksLocal => {
            let rounds: f64 = if schedule == Schedule::PersistentBlocks {
                let path = (blocks[0] + blocks[1] + blocks[2] - 2) as f64;
                path.max((blocks[0] * blocks[1] * blocks[2]) as f64 / b)
            } else {
                diagonal_counts(blocks, true)
                    .iter()
                    .map(|&n| (n as f64 / b).ceil())
                    .sum()
            };
            Terms {
                steps: rounds * (3.0 * lf - 2.0),
                points: rounds * lf * lf * lf,
                launches: n_launch,
            }
        }
    }
}

/// One measured sweep for calibration.
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct Sample {
    /// The schedule measured.
    pub schedule: Schedule,
    /// Its block edge.
    pub block: usize,
    /// Device time of one sweep (median of three).
    pub measured_ns: f64,
}

/// Costs per schedule, fitted on one device for one sweep.
#[derive(Clone, Debug, serde::Serialize)]
pub struct CostModel {
    /// `(schedule, costs)` for every schedule calibrated.
    pub costs: Vec<(Schedule, Costs)>,
    /// Blocks the device runs at once per work-group size: `concurrent_blocks`.
    #[serde(skip)]
    info: DeviceInfo,
}

/// Least squares for `A x = y` with three unknowns kept non-negative (a negative cost would be
/// an artefact of noise): normal equations, clamping one unknown to 0 and refitting if needed.
fn fit3(rows: &[[f64; 3]], y: &[f64]) -> [f64; 3] {
    let solve = |active: [bool; 3]| -> [f64; 3] {
        let idx: Vec<usize> = (0..3).filter(|&i| active[i]).collect();
        let n = idx.len();
        let mut m = vec![vec![0.0; n + 1]; n];
        for (r, &yv) in rows.iter().zip(y) {
            for a in 0..n {
                for c in 0..n {
                    m[a][c] += r[idx[a]] * r[idx[c]];
                }
                m[a][n] += r[idx[a]] * yv;
            }
        }
        // Gaussian elimination with partial pivoting; a singular system leaves zeros.
        for col in 0..n {
            let piv = (col..n).max_by(|&a, &b| m[a][col].abs().total_cmp(&m[b][col].abs()));
            let Some(piv) = piv else { break };
            m.swap(col, piv);
            if m[col][col].abs() < 1e-300 {
                continue;
            }
            let pivot_row = m[col].clone();
            for (r, row) in m.iter_mut().enumerate() {
                if r != col {
                    let f = row[col] / pivot_row[col];
                    for (v, p) in row.iter_mut().zip(&pivot_row).skip(col) {
                        *v -= f * p;
                    }
                }
            }
        }
        let mut x = [0.0; 3];
        for (a, &i) in idx.iter().enumerate() {
            if m[a][a].abs() > 1e-300 {
                x[i] = m[a][n] / m[a][a];
            }
        }
        x
    };
    let mut active = [true; 3];
    for _ in 0..3 {
        let x = solve(active);
        match (0..3).find(|&i| active[i] && x[i] < 0.0) {
            Some(i) => active[i] = false,
            None => return x,
        }
    }
    solve(active)
}

impl CostModel {
    /// Fits each schedule's costs to `samples` measured on `shape` (at least two block edges
    /// per schedule; one gives a fit with the launch cost only).
    pub fn fit(spec: &SweepSpec, info: &DeviceInfo, shape: Shape, samples: &[Sample]) -> Result<CostModel> {
        let region = super::region(shape, spec.halo, spec.boundary);
        let mut costs = Vec::new();
        for s in Schedule::ALL {
            let mine: Vec<&Sample> = samples.iter().filter(|x| x.schedule == s).collect();
            if mine.is_empty() {
                continue;
            }
            let rows: Vec<[f64; 3]> = mine
                .iter()
                .map(|x| {
                    let t = terms(
                        s,
                        region,
                        spec.rank,
                        x.block,
                        concurrent_blocks(info, items(s, x.block)),
                    );
                    [t.steps, t.points, t.launches]
                })
                .collect();
            let y: Vec<f64> = mine.iter().map(|x| x.measured_ns).collect();
            let [step_ns, point_ns, launch_ns] = fit3(&rows, &y);
            costs.push((
                s,
                Costs {
                    step_ns,
                    point_ns,
                    launch_ns,
                },
            ));
        }
        if costs.is_empty() {
            return Err(Error::InvalidConfig(format!(
                "no measured sweep to calibrate the model of sweep `{}`",
                spec.name
            )));
        }
        Ok(CostModel {
            costs,
            info: info.clone(),
        })
    }

    /// The predicted time of `config` on `shape`, if its schedule was calibrated.
    pub fn predict_ns(&self, spec: &SweepSpec, shape: Shape, config: &SweepConfig) -> Option<f64> {
        let l = config.block.unwrap_or(spec.default_block());
        let (_, c) = self.costs.iter().find(|(s, _)| *s == config.schedule)?;
        let region = super::region(shape, spec.halo, spec.boundary);
        let b = concurrent_blocks(&self.info, items(config.schedule, l));
        Some(terms(config.schedule, region, spec.rank, l, b).time_ns(c))
    }

    /// The calibrated schedule and block edge (from `blocks`) the model predicts fastest on
    /// `shape`, with its predicted time.
    pub fn choose(&self, spec: &SweepSpec, shape: Shape, blocks: &[usize]) -> Option<(SweepConfig, f64)> {
        let mut best: Option<(SweepConfig, f64)> = None;
        for (s, _) in &self.costs {
            // Only block edges of the calibrated range: the fit says nothing outside it.
            let range = candidate_blocks(*s, spec.rank);
            for &l in blocks.iter().filter(|l| range.contains(l)) {
                if !fits(spec, &self.info, *s, l) {
                    continue;
                }
                let config = SweepConfig::with_block(*s, l);
                if let Some(t) = self.predict_ns(spec, shape, &config) {
                    if best.as_ref().is_none_or(|(_, bt)| t < *bt) {
                        best = Some((config, t));
                    }
                }
            }
        }
        best
    }
}

/// Whether a block edge `l` fits the device: work-group size and the local arrays.
pub fn fits(spec: &SweepSpec, info: &DeviceInfo, schedule: Schedule, l: usize) -> bool {
    let [hx, hy, hz] = spec.halo;
    let local = match schedule {
        Schedule::WaveLocal | Schedule::PersistentLocal => (l + 2 * hx) * (l + 2 * hy),
        Schedule::BlocksLocal => (l + 2 * hx) * (l + 2 * hy) * (l + 2 * hz),
        _ => 0,
    } * spec.local_bytes_per_point;
    items(schedule, l) <= info.max_work_group_size && (local as u64) <= info.local_mem_bytes
}

/// Work-items per work-group of a schedule with block edge `l`.
pub fn items(schedule: Schedule, l: usize) -> usize {
    match schedule {
        Schedule::Serial => 1,
        Schedule::Blocks | Schedule::PersistentBlocks | Schedule::BlocksLocal => l * l,
        _ => l,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_launch_schedules_only_where_the_handover_fence_is_device_wide() {
        use crate::cl::test_info;
        use crate::DeviceKind;
        // (Assumes CLFORGE_UNFENCED_HANDOVER and CLFORGE_SWEEP_FENCE unset, as in CI.)
        let nvidia = test_info(DeviceKind::Gpu, "NVIDIA CUDA", 1024, 48 << 10);
        let other = test_info(DeviceKind::Gpu, "AMD Accelerated Parallel Processing", 1024, 64 << 10);
        let pocl = test_info(DeviceKind::Cpu, "Portable Computing Language", 4096, 512 << 10);
        assert!(
            crate::sweep::ptx_fence(&nvidia) && !crate::sweep::ptx_fence(&other) && !crate::sweep::ptx_fence(&pocl)
        );
        assert!(crate::sweep::handover_allowed(&nvidia) && crate::sweep::handover_allowed(&pocl));
        assert!(!crate::sweep::handover_allowed(&other));
    }

    #[test]
    fn diagonals_count_every_block_once() {
        let c = diagonal_counts([4, 3, 1], false);
        assert_eq!(c, vec![1, 2, 3, 3, 2, 1]);
        assert_eq!(c.iter().sum::<usize>(), 12);
        let p = diagonal_counts([2, 2, 2], true);
        assert_eq!(p, vec![1, 3, 3, 1]);
    }

    #[test]
    fn all_running_at_once_gives_the_corrected_step_counts() {
        // b large, square: 2n - 1 diagonals of one block time each (eq. 19 corrected).
        let t = terms(Schedule::Wave, [160, 160, 1], 2, 16, 1 << 20);
        assert_eq!(t.steps, 19.0 * 31.0);
        assert_eq!(t.launches, 19.0);
        // Cubes: 3n - 2 planes of 3L - 2 steps.
        let t = terms(Schedule::Blocks, [64, 64, 64], 3, 8, 1 << 20);
        assert_eq!(t.steps, 22.0 * 22.0);
    }

    #[test]
    fn the_fit_recovers_known_costs() {
        let truth = Costs {
            step_ns: 40.0,
            point_ns: 0.5,
            launch_ns: 5000.0,
        };
        let rows: Vec<[f64; 3]> = [4usize, 8, 16, 32]
            .iter()
            .map(|&l| {
                let t = terms(Schedule::Wave, [1000, 700, 1], 2, l, 64);
                [t.steps, t.points, t.launches]
            })
            .collect();
        let y: Vec<f64> = rows
            .iter()
            .map(|r| r[0] * truth.step_ns + r[1] * truth.point_ns + r[2] * truth.launch_ns)
            .collect();
        let [s, p, l] = fit3(&rows, &y);
        assert!(
            (s - 40.0).abs() < 1e-6 && (p - 0.5).abs() < 1e-9 && (l - 5000.0).abs() < 1e-3,
            "{s} {p} {l}"
        );
    }
}

/// What [`tune`] found: every measured sample, the fitted model, the configuration the model
/// chooses and the fastest one measured (the two agree when the model is good).
#[derive(Clone, Debug, serde::Serialize)]
pub struct Tuning {
    /// Every measured configuration.
    pub samples: Vec<Sample>,
    /// The costs fitted to them.
    pub model: CostModel,
    /// The model's choice among the candidates.
    pub chosen: SweepConfig,
    /// Its predicted time.
    pub predicted_ns: f64,
    /// The fastest candidate measured.
    pub fastest: SweepConfig,
    /// Its measured time.
    pub fastest_ns: f64,
}

/// Block edges tried per schedule and rank.
pub fn candidate_blocks(schedule: Schedule, rank: usize) -> &'static [usize] {
    match (schedule, rank) {
        (Schedule::Serial, _) => &[1],
        (Schedule::Strip, _) => &[16, 32, 64, 128],
        (Schedule::Blocks | Schedule::PersistentBlocks | Schedule::BlocksLocal, _) => &[4, 8, 16],
        (_, 3) => &[4, 8, 16, 32],
        _ => &[8, 16, 32, 64],
    }
}

/// Measures every available schedule at its candidate block edges with `measure` (device
/// nanoseconds of one sweep; the median of three after a warm-up is kept), fits the model and
/// chooses. The serial schedule is measured only on regions of at most 10^5 points.
pub fn tune(
    info: &DeviceInfo,
    spec: &SweepSpec,
    shape: Shape,
    mut measure: impl FnMut(&SweepConfig) -> Result<u64>,
) -> Result<Tuning> {
    let region = super::region(shape, spec.halo, spec.boundary);
    let points: usize = region.iter().product();
    let mut samples = Vec::new();
    for s in spec.available() {
        if (s == Schedule::Serial && points > 100_000) || (s.is_persistent() && !super::handover_allowed(info)) {
            continue;
        }
        for &l in candidate_blocks(s, spec.rank) {
            if !fits(spec, info, s, l) {
                continue;
            }
            let config = SweepConfig::with_block(s, l);
            // A block the device cannot hold (work-group, local memory) is no candidate.
            match measure(&config) {
                Err(Error::DeviceLimit { .. }) => continue,
                r => r?,
            };
            let mut t = [measure(&config)?, measure(&config)?, measure(&config)?];
            t.sort_unstable();
            samples.push(Sample {
                schedule: s,
                block: l,
                measured_ns: t[1] as f64,
            });
        }
    }
    let model = CostModel::fit(spec, info, shape, &samples)?;
    let all: Vec<usize> = [4, 8, 16, 32, 64, 128].into();
    let (chosen, predicted_ns) = model
        .choose(spec, shape, &all)
        .ok_or_else(|| Error::InvalidConfig(format!("no schedule of sweep `{}` could be modelled", spec.name)))?;
    let fastest = samples
        .iter()
        .min_by(|a, b| a.measured_ns.total_cmp(&b.measured_ns))
        .map(|x| (SweepConfig::with_block(x.schedule, x.block), x.measured_ns))
        .ok_or_else(|| Error::InvalidConfig(format!("no schedule of sweep `{}` was measured", spec.name)))?;
    Ok(Tuning {
        samples,
        model,
        chosen,
        predicted_ns,
        fastest: fastest.0,
        fastest_ns: fastest.1,
    })
}
