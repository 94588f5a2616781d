//! Element matrices formed by the host's cores and any number of OpenCL devices together
//! (seed 004's CPU + 2 GPU split), over element groups of several types and orders.
//!
//! A [`Hybrid`] holds *workers* — each device with its own [`Forming`] kernels, and the host's
//! threads through [`form_host`](super::form_host)'s arithmetic — and *groups*: the
//! elements of one type (one order `p` of a modal family, say), with their coordinates and
//! materials. [`Hybrid::measure`] times every worker on a sample of every group and returns
//! [`Rates`] (elements per second, wall clock, uploads included); [`Hybrid::split`] turns rates
//! into an [`Assignment`] that minimises the time of the slowest worker, and [`Hybrid::run`]
//! forms everything, each device on its own thread while the host computes its share.
//!
//! The split is the linear program
//!
//! ```text
//! minimise T  subject to  Σ_w x[w][g] = m_g  (every element of group g is formed once)
//!                         Σ_g x[w][g] / r[w][g] ≤ T  (every worker is done by T)
//!                         x ≥ 0
//! ```
//!
//! solved exactly (`microlp`), then rounded to whole elements. With one group it is the
//! proportional split (`x[w] ∝ r[w]`); with several it *routes by type*: a worker gets the
//! groups where its rate, relative to the others', is highest — seed 004 put its 50 000 p = 1
//! hexahedra on the CPU cores and its 50 000 p = 3 ones on the GPUs, and the program finds that
//! routing, or a better one, from the measured rates.
//!
//! ```no_run
//! # fn demo<P1: clforge_runtime::fem::Element, P3: clforge_runtime::fem::Element>(
//! #     x1: &[f64], m1: &[P1::Material], x3: &[f64], m3: &[P3::Material]) -> clforge_runtime::Result<()> {
//! use clforge_runtime::{fem::hybrid::Hybrid, Device};
//! let mut work = Hybrid::new(&[Device::default()?], 8)?; // one device and 8 host threads
//! let low = work.add::<P1>(x1, m1)?;
//! let high = work.add::<P3>(x3, m3)?;
//! let rates = work.measure()?;
//! let plan = work.split(&rates)?;
//! let formed = work.run(&plan)?;
//! let k1 = formed.to_host(low)?; // packed K_e of every p = 1 element, in element order
//! # let _ = (k1, high); Ok(()) }
//! ```

use super::{self as forming, packed_len, Algorithm, Forming, Matrices};
use crate::device::Device;
use crate::element::spec::Element;
use crate::error::{Error, Result};
use std::fmt;
use std::ops::Range;
use std::time::Instant;

/// Who forms a share of the elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Worker {
    /// Device `i` of [`Hybrid::new`]'s list.
    Device(usize),
    /// The host's threads.
    Host,
}

/// One group's elements, type-erased: what the workers need of it.
trait Group: Send + Sync {
    fn name(&self) -> &'static str;
    fn len(&self) -> usize;
    fn ne(&self) -> usize;
    fn host(&self, range: Range<usize>, threads: usize) -> Result<Vec<f64>>;
    fn device(&self, d: usize, range: Range<usize>) -> Result<Matrices>;
}

struct GroupOf<'a, E: Element> {
    coords: &'a [f64],
    de: Vec<f64>,
    forming: Vec<Forming<E>>,
    algorithm: Algorithm,
}

impl<E: Element> GroupOf<'_, E> {
    fn slices(&self, range: &Range<usize>) -> (&[f64], &[f64]) {
        let per = E::GEOMETRY_NODES * E::DIM;
        let s = E::OPERATOR.strains(E::DIM);
        (
            &self.coords[range.start * per..range.end * per],
            &self.de[range.start * s * s..range.end * s * s],
        )
    }
}

impl<E: Element> Group for GroupOf<'_, E> {
    fn name(&self) -> &'static str {
        E::NAME
    }

    fn len(&self) -> usize {
        let s = E::OPERATOR.strains(E::DIM);
        self.de.len() / (s * s)
    }

    fn ne(&self) -> usize {
        E::NODES * E::DOFS
    }

    fn host(&self, range: Range<usize>, threads: usize) -> Result<Vec<f64>> {
        let (x, de) = self.slices(&range);
        forming::form_host_checked::<E>(x, de, threads)
    }

    fn device(&self, d: usize, range: Range<usize>) -> Result<Matrices> {
        let (x, de) = self.slices(&range);
        let forming = &self.forming[d];
        let elements = forming.upload_checked(x, de)?;
        let (k, event) = forming.form(&elements, self.algorithm)?;
        event.wait()?;
        Ok(k)
    }
}

/// Measured forming rates: `per_second[w][g]` elements of group `g` per second on worker `w`
/// (workers in the order of [`Hybrid::workers`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Rates {
    /// Elements per second, `[worker][group]`.
    pub per_second: Vec<Vec<f64>>,
}

/// Which elements of which group each worker forms: `ranges[g]` lists `(worker, range)` pairs
/// that cover group `g`'s elements `0..m_g` in order, without overlap.
#[derive(Clone, Debug, PartialEq)]
pub struct Assignment {
    /// Per group, the workers' contiguous ranges of elements.
    pub ranges: Vec<Vec<(Worker, Range<usize>)>>,
    /// The predicted time of each worker from the rates, seconds (`[worker]`).
    pub predicted_s: Vec<f64>,
}

impl Assignment {
    /// Elements of group `g` given to `worker`.
    pub fn count(&self, g: usize, worker: Worker) -> usize {
        self.ranges
            .get(g)
            .map(|r| r.iter().filter(|(w, _)| *w == worker).map(|(_, r)| r.len()).sum())
            .unwrap_or(0)
    }

    /// The predicted time of the slowest worker, seconds.
    pub fn makespan_s(&self) -> f64 {
        self.predicted_s.iter().copied().fold(0.0, f64::max)
    }
}

/// Where one share of a group's matrices lies.
#[derive(Debug)]
pub enum Stored {
    /// On device `i`, packed as [`Matrices`].
    Device(usize, Matrices),
    /// On the host, packed lower triangles in element order.
    Host(Vec<f64>),
}

/// One worker's share of a group after [`Hybrid::run`].
#[derive(Debug)]
pub struct Part {
    /// The group's elements this part holds.
    pub range: Range<usize>,
    /// Their packed matrices.
    pub stored: Stored,
}

/// The result of [`Hybrid::run`]: every group's parts and each worker's measured time.
#[derive(Debug)]
pub struct Formed {
    /// `parts[g]`: group `g`'s shares, in element order.
    pub parts: Vec<Vec<Part>>,
    /// Wall-clock seconds of each worker (`[worker]`), uploads and waits included.
    pub worker_s: Vec<f64>,
    /// Wall-clock seconds of the whole run.
    pub total_s: f64,
    ne: Vec<usize>,
}

impl Formed {
    /// Group `g`'s packed matrices, all of them, in element order (device shares downloaded).
    pub fn to_host(&self, g: usize) -> Result<Vec<f64>> {
        let parts = self
            .parts
            .get(g)
            .ok_or_else(|| Error::InvalidConfig(format!("group {g} of {} formed groups", self.parts.len())))?;
        let p = packed_len(self.ne[g]);
        let mut out = Vec::with_capacity(parts.iter().map(|x| x.range.len()).sum::<usize>() * p);
        for part in parts {
            match &part.stored {
                Stored::Host(v) => out.extend_from_slice(v),
                Stored::Device(_, k) => {
                    let v = k.to_host()?;
                    out.extend_from_slice(&v[..part.range.len() * p]);
                }
            }
        }
        Ok(out)
    }
}

/// Element matrices of several groups split over devices and the host's threads.
pub struct Hybrid<'a> {
    devices: Vec<Device>,
    host_threads: usize,
    groups: Vec<Box<dyn Group + 'a>>,
}

impl fmt::Debug for Hybrid<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Hybrid")
            .field("devices", &self.devices)
            .field("host_threads", &self.host_threads)
            .field(
                "groups",
                &self.groups.iter().map(|g| (g.name(), g.len())).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl<'a> Hybrid<'a> {
    /// Workers: every device of `devices` (each listed once) and, when `host_threads > 0`, the
    /// host with that many threads. At least one worker.
    pub fn new(devices: &[Device], host_threads: usize) -> Result<Hybrid<'a>> {
        if devices.is_empty() && host_threads == 0 {
            return Err(Error::InvalidConfig(
                "a hybrid split needs at least one worker: a device or host threads > 0".into(),
            ));
        }
        for (i, d) in devices.iter().enumerate() {
            if let Some(j) = devices[..i].iter().position(|o| o.same_as(d)) {
                return Err(Error::InvalidConfig(format!(
                    "device {i} ({}) is listed twice (also at {j}); list each device once",
                    d.info().name
                )));
            }
        }
        Ok(Hybrid {
            devices: devices.to_vec(),
            host_threads,
            groups: Vec::new(),
        })
    }

    /// The workers, devices first (in their order), then the host if it has threads.
    pub fn workers(&self) -> Vec<Worker> {
        let mut w: Vec<Worker> = (0..self.devices.len()).map(Worker::Device).collect();
        if self.host_threads > 0 {
            w.push(Worker::Host);
        }
        w
    }

    /// Adds a group of `E` elements (coordinates and materials as in [`Forming::upload`]),
    /// formed on the devices by `E`'s default tiled kernel; returns the group's index.
    pub fn add<E: Element + 'a>(&mut self, coords: &'a [f64], materials: &[E::Material]) -> Result<usize> {
        self.add_with::<E>(coords, materials, Algorithm::default_for::<E>())
    }

    /// [`Hybrid::add`] with the device kernel chosen.
    pub fn add_with<E: Element + 'a>(
        &mut self,
        coords: &'a [f64],
        materials: &[E::Material],
        algorithm: Algorithm,
    ) -> Result<usize> {
        forming::check_coords::<E>(coords, materials.len())?;
        let de = forming::device_materials::<E>(materials)?;
        let forming = self.devices.iter().map(Forming::<E>::new).collect::<Result<Vec<_>>>()?;
        self.groups.push(Box::new(GroupOf::<E> {
            coords,
            de,
            forming,
            algorithm,
        }));
        Ok(self.groups.len() - 1)
    }

    /// Number of groups.
    pub fn groups(&self) -> usize {
        self.groups.len()
    }

    /// Times every worker on a sample of every group: the sample doubles from a small start
    /// until it takes at least `min_s` seconds (or is the whole group), after one untimed
    /// warm-up launch on each device (program build). Uses [`Hybrid::measure_for`] with
    /// 20 ms.
    pub fn measure(&self) -> Result<Rates> {
        self.measure_for(0.02)
    }

    /// [`Hybrid::measure`] with the minimum sample time given, in seconds.
    pub fn measure_for(&self, min_s: f64) -> Result<Rates> {
        if !(min_s.is_finite() && min_s >= 0.0) {
            return Err(Error::InvalidConfig(format!(
                "minimum sample time {min_s} s must be finite and non-negative"
            )));
        }
        let mut per_second = Vec::new();
        for worker in self.workers() {
            let mut row = Vec::new();
            for g in &self.groups {
                if g.len() == 0 {
                    row.push(1.0);
                    continue;
                }
                let start = match worker {
                    Worker::Host => self.host_threads,
                    Worker::Device(d) => {
                        g.device(d, 0..1)?; // builds the program
                        256
                    }
                };
                let mut n = start.clamp(1, g.len());
                let rate = loop {
                    let t = Instant::now();
                    self.form_share(g.as_ref(), worker, 0..n)?;
                    let s = t.elapsed().as_secs_f64();
                    if s >= min_s || n == g.len() {
                        break n as f64 / s.max(1e-9);
                    }
                    n = (n * 2).min(g.len());
                };
                row.push(rate);
            }
            per_second.push(row);
        }
        Ok(Rates { per_second })
    }

    fn form_share(&self, g: &dyn Group, worker: Worker, range: Range<usize>) -> Result<Stored> {
        Ok(match worker {
            Worker::Host => Stored::Host(g.host(range, self.host_threads)?),
            Worker::Device(d) => Stored::Device(d, g.device(d, range)?),
        })
    }

    /// The split that minimises the slowest worker's predicted time under `rates` (see the
    /// module's linear program), rounded to whole elements.
    pub fn split(&self, rates: &Rates) -> Result<Assignment> {
        let workers = self.workers();
        let sizes: Vec<usize> = self.groups.iter().map(|g| g.len()).collect();
        split(&workers, &sizes, rates)
    }

    /// [`Hybrid::split`] with the minimum gain given (see [`split_with`]).
    pub fn split_with(&self, rates: &Rates, min_gain: f64, min_saving_s: f64) -> Result<Assignment> {
        let workers = self.workers();
        let sizes: Vec<usize> = self.groups.iter().map(|g| g.len()).collect();
        split_with(&workers, &sizes, rates, min_gain, min_saving_s)
    }

    /// Forms every group as `plan` says: each device on its own thread, the host's share on
    /// the calling thread with the host's threads.
    pub fn run(&self, plan: &Assignment) -> Result<Formed> {
        let workers = self.workers();
        check_plan(plan, &workers, &self.groups.iter().map(|g| g.len()).collect::<Vec<_>>())?;
        let t0 = Instant::now();
        let shares = |worker: Worker| -> Vec<(usize, usize, Range<usize>)> {
            let mut v = Vec::new();
            for (g, ranges) in plan.ranges.iter().enumerate() {
                for (i, (w, r)) in ranges.iter().enumerate() {
                    if *w == worker && !r.is_empty() {
                        v.push((g, i, r.clone()));
                    }
                }
            }
            v
        };
        type Done = Result<(Vec<(usize, usize, Stored)>, f64)>;
        let work = |worker: Worker| -> Done {
            let t = Instant::now();
            let mut out = Vec::new();
            for (g, i, r) in shares(worker) {
                out.push((g, i, self.form_share(self.groups[g].as_ref(), worker, r)?));
            }
            Ok((out, t.elapsed().as_secs_f64()))
        };
        let results: Vec<Done> = std::thread::scope(|scope| {
            let handles: Vec<_> = workers
                .iter()
                .filter(|w| matches!(w, Worker::Device(_)))
                .map(|&w| scope.spawn(move || work(w)))
                .collect();
            let host = workers.contains(&Worker::Host).then(|| work(Worker::Host));
            let mut all: Vec<Done> = handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(Error::InvalidConfig("a device forming thread panicked".into())))
                })
                .collect();
            all.extend(host);
            all
        });
        let mut slots: Vec<Vec<Option<Stored>>> =
            plan.ranges.iter().map(|r| r.iter().map(|_| None).collect()).collect();
        let mut worker_s = Vec::new();
        for result in results {
            let (parts, s) = result?;
            worker_s.push(s);
            for (g, i, stored) in parts {
                slots[g][i] = Some(stored);
            }
        }
        let mut parts = Vec::new();
        for (g, ranges) in plan.ranges.iter().enumerate() {
            let mut v = Vec::new();
            for (i, (_, r)) in ranges.iter().enumerate() {
                if let Some(stored) = slots[g][i].take() {
                    v.push(Part {
                        range: r.clone(),
                        stored,
                    });
                }
            }
            parts.push(v);
        }
        Ok(Formed {
            parts,
            worker_s,
            total_s: t0.elapsed().as_secs_f64(),
            ne: self.groups.iter().map(|g| g.ne()).collect(),
        })
    }
}

/// A plan covers every group's elements in order with known workers.
fn check_plan(plan: &Assignment, workers: &[Worker], sizes: &[usize]) -> Result<()> {
    if plan.ranges.len() != sizes.len() {
        return Err(Error::LengthMismatch {
            what: "groups in the assignment".into(),
            expected: sizes.len(),
            found: plan.ranges.len(),
        });
    }
    for (g, (ranges, &m)) in plan.ranges.iter().zip(sizes).enumerate() {
        let mut next = 0;
        for (w, r) in ranges {
            if !workers.contains(w) {
                return Err(Error::InvalidConfig(format!(
                    "the assignment gives group {g} to {w:?}, which is not a worker of this split ({workers:?})"
                )));
            }
            if r.start != next || r.end < r.start {
                return Err(Error::InvalidConfig(format!(
                    "group {g}: range {r:?} does not continue at element {next}; ranges must cover 0..{m} in order"
                )));
            }
            next = r.end;
        }
        if next != m {
            return Err(Error::InvalidConfig(format!(
                "group {g}: the assignment covers elements 0..{next} of 0..{m}"
            )));
        }
    }
    Ok(())
}

/// The split gives every element to the single fastest worker unless sharing is predicted to
/// save at least this fraction of that worker's time ([`split_with`]) ...
pub const MIN_GAIN: f64 = 0.2;
/// ... and at least this many seconds: the cost of starting the other workers' threads and
/// launches, measured on the H100 machine at 1.4–10 ms (docs/ELEMENT-MATRICES.md).
pub const MIN_SAVING_S: f64 = 0.005;

/// [`split_with`] at [`MIN_GAIN`] and [`MIN_SAVING_S`].
pub fn split(workers: &[Worker], sizes: &[usize], rates: &Rates) -> Result<Assignment> {
    split_with(workers, sizes, rates, MIN_GAIN, MIN_SAVING_S)
}

/// The makespan-minimising split of groups of `sizes` elements over `workers` at `rates`,
/// unless it saves less than `min_gain` (a fraction) or `min_saving_s` (seconds) of the time of
/// the best single worker doing everything: then that worker does everything. Running several workers costs what the
/// rates do not show (threads, a device thread's waits, smaller launches): on an H100 with 16
/// host cores the program gives the host 0.5–2 % of the elements for a predicted gain of 3 %,
/// and the measured run was slower than the device alone (docs/ELEMENT-MATRICES.md).
pub fn split_with(
    workers: &[Worker],
    sizes: &[usize],
    rates: &Rates,
    min_gain: f64,
    min_saving_s: f64,
) -> Result<Assignment> {
    if !(min_gain.is_finite() && (0.0..1.0).contains(&min_gain) && min_saving_s.is_finite() && min_saving_s >= 0.0) {
        return Err(Error::InvalidConfig(format!(
            "minimum gain {min_gain} must be a fraction in [0, 1) and minimum saving {min_saving_s} s finite and non-negative"
        )));
    }
    let shared = split_exact(workers, sizes, rates)?;
    // The best single worker: the one that can form every group fastest.
    let alone = (0..workers.len())
        .filter(|&w| (0..sizes.len()).all(|g| sizes[g] == 0 || rates.per_second[w][g] > 0.0))
        .map(|w| {
            let t: f64 = (0..sizes.len())
                .filter(|&g| sizes[g] > 0)
                .map(|g| sizes[g] as f64 / rates.per_second[w][g])
                .sum();
            (w, t)
        })
        .min_by(|a, b| a.1.total_cmp(&b.1));
    match alone {
        Some((w, t)) if shared.makespan_s() > t - (min_gain * t).max(min_saving_s) => {
            let mut predicted_s = vec![0.0; workers.len()];
            predicted_s[w] = t;
            Ok(Assignment {
                ranges: sizes.iter().map(|&m| vec![(workers[w], 0..m)]).collect(),
                predicted_s,
            })
        }
        _ => Ok(shared),
    }
}

/// The makespan-minimising split, no minimum gain.
fn split_exact(workers: &[Worker], sizes: &[usize], rates: &Rates) -> Result<Assignment> {
    let (nw, ng) = (workers.len(), sizes.len());
    if rates.per_second.len() != nw || rates.per_second.iter().any(|r| r.len() != ng) {
        return Err(Error::InvalidConfig(format!(
            "rates for {} workers × {:?} groups; the split has {nw} workers × {ng} groups",
            rates.per_second.len(),
            rates.per_second.iter().map(Vec::len).collect::<Vec<_>>()
        )));
    }
    if let Some((w, g, r)) = rates
        .per_second
        .iter()
        .enumerate()
        .flat_map(|(w, row)| row.iter().enumerate().map(move |(g, &r)| (w, g, r)))
        .find(|&(_, _, r)| !(r.is_finite() && r >= 0.0))
    {
        return Err(Error::InvalidConfig(format!(
            "rate of worker {w} on group {g} is {r} elements/s; rates must be finite and non-negative"
        )));
    }
    for (g, &m) in sizes.iter().enumerate() {
        if m > 0 && rates.per_second.iter().all(|row| row[g] <= 0.0) {
            return Err(Error::InvalidConfig(format!(
                "no worker has a positive rate for group {g} ({m} elements)"
            )));
        }
    }
    // Time of group g wholly on worker w, scaled so the coefficients are near 1.
    let time = |w: usize, g: usize| sizes[g] as f64 / rates.per_second[w][g];
    let scale = (0..ng)
        .filter(|&g| sizes[g] > 0)
        .map(|g| (0..nw).map(|w| time(w, g)).fold(f64::INFINITY, f64::min))
        .sum::<f64>()
        .max(f64::MIN_POSITIVE);
    let mut lp = microlp::Problem::new(microlp::OptimizationDirection::Minimize);
    let t = lp.add_var(1.0, (0.0, f64::INFINITY));
    // f[w][g]: the fraction of group g on worker w (only where the rate is positive).
    let f: Vec<Vec<Option<microlp::Variable>>> = (0..nw)
        .map(|w| {
            (0..ng)
                .map(|g| (sizes[g] > 0 && rates.per_second[w][g] > 0.0).then(|| lp.add_var(0.0, (0.0, 1.0))))
                .collect()
        })
        .collect();
    for g in 0..ng {
        let terms: Vec<(microlp::Variable, f64)> = f.iter().filter_map(|row| row[g].map(|v| (v, 1.0))).collect();
        if !terms.is_empty() {
            lp.add_constraint(&terms, microlp::ComparisonOp::Eq, 1.0);
        }
    }
    for (w, row) in f.iter().enumerate() {
        let mut terms: Vec<(microlp::Variable, f64)> = (0..ng)
            .filter_map(|g| row[g].map(|v| (v, (time(w, g) / scale).min(1e12))))
            .collect();
        terms.push((t, -1.0));
        lp.add_constraint(&terms, microlp::ComparisonOp::Le, 0.0);
    }
    let solution = lp
        .solve()
        .map_err(|e| Error::InvalidConfig(format!("the split's linear program failed: {e}")))?
        .into_solution()
        .map_err(|_| Error::InvalidConfig("the split's linear program was interrupted".into()))?;
    let mut ranges = Vec::with_capacity(ng);
    let mut predicted_s = vec![0.0; nw];
    for g in 0..ng {
        // Whole elements: floor each share, then the remainder one by one to the worker that
        // would finish it soonest.
        let mut counts: Vec<usize> = (0..nw)
            .map(|w| {
                f[w][g].map_or(0, |v| {
                    (solution.var_value(v).clamp(0.0, 1.0) * sizes[g] as f64).floor() as usize
                })
            })
            .collect();
        let mut left = sizes[g].saturating_sub(counts.iter().sum());
        while left > 0 {
            let best = (0..nw)
                .filter(|&w| rates.per_second[w][g] > 0.0)
                .min_by(|&a, &b| {
                    let fa = predicted_s[a] + (counts[a] + 1) as f64 / rates.per_second[a][g];
                    let fb = predicted_s[b] + (counts[b] + 1) as f64 / rates.per_second[b][g];
                    fa.total_cmp(&fb)
                })
                .unwrap_or(0);
            counts[best] += 1;
            left -= 1;
        }
        let mut next = 0;
        let mut v = Vec::new();
        for (w, &c) in counts.iter().enumerate() {
            if c > 0 {
                v.push((workers[w], next..next + c));
                predicted_s[w] += c as f64 / rates.per_second[w][g];
                next += c;
            }
        }
        if v.is_empty() {
            v.push((workers[0], 0..0));
        }
        ranges.push(v);
    }
    Ok(Assignment { ranges, predicted_s })
}
