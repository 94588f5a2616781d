//! The `element-matrices` suite (seed 004's table): stiffness matrices of `m` distorted
//! trunk-space hexahedra of order p = 1..6 for 3-D elasticity, f64, each element with its own
//! material, formed by every device kernel (algorithms I, II, II with several elements per
//! group, and the tiled kernel in several tile sizes) and by the host on one core and on all
//! cores. Every kernel is first checked against the host on the first elements (relative
//! 1e-12 of each element's largest entry); the run stops if one differs.
//!
//! Device times are the kernels' profiling events (median of the timed launches; slow kernels
//! get fewer launches, the count is in the report). "With transfers" adds the upload of the
//! coordinates and materials and the download of every packed `K_e` (wall clock, one run each).
//! Host times are wall clock on `host_m` elements, scaled to `m` (the rate is per element).
//!
//! Work model: per point, `nf · S · nnz(B)` FMA for `D B_b` and `nf (nf + 1)/2 · DOFS · nnz(B)`
//! FMA for the blocks `B_aᵀ (D B_b)` (nnz(B) = 9 in 3-D): the arithmetic of the tiled kernel,
//! counted once per pair. Bytes: the packed output written once. The f64 FMA rate and the
//! copy bandwidth are measured in the same run.

mod order;

use anyhow::Result;
use clforge::prelude::*;
use clforge::runtime::abi::modal::{Mma, Staging, Tiling};
use clforge::runtime::element::forming::Algorithm;
use clforge::runtime::element::hybrid::{self, Assignment, Hybrid, Worker};
use clforge::runtime::element::Element;
use rand::{rngs::SmallRng, Rng, SeedableRng};
use serde::Serialize;

use crate::measure::{Reps, Stats};
use crate::roofline;
use order::order;

/// An isotropic solid (Lamé constants).
#[derive(Clone, Copy, Debug)]
pub struct Iso {
    pub lambda: f64,
    pub mu: f64,
}

/// Hooke's law in Voigt notation (xx, yy, zz, yz, xz, xy), shared by the suites' 3-D elements.
pub(crate) fn hooke(m: &Iso) -> [[f64; 6]; 6] {
    let (l, g) = (m.lambda, m.mu);
    let d = l + 2.0 * g;
    [
        [d, l, l, 0.0, 0.0, 0.0],
        [l, d, l, 0.0, 0.0, 0.0],
        [l, l, d, 0.0, 0.0, 0.0],
        [0.0, 0.0, 0.0, g, 0.0, 0.0],
        [0.0, 0.0, 0.0, 0.0, g, 0.0],
        [0.0, 0.0, 0.0, 0.0, 0.0, g],
    ]
}

macro_rules! trunk_hex {
    ($($name:ident = $p:literal),*) => {$(
        /// Trunk-space hexahedron for 3-D elasticity (seed 004).
        #[element(dim = 3, operator = elasticity, basis = trunk, order = $p)]
        pub mod $name {
            use super::Iso;
            pub fn material(m: &Iso) -> [[f64; 6]; 6] {
                super::hooke(m)
            }
            pub fn density(_m: &Iso) -> f64 {
                1.0
            }
        }
    )*};
}
trunk_hex!(hex_p1 = 1, hex_p2 = 2, hex_p3 = 3, hex_p4 = 4, hex_p5 = 5, hex_p6 = 6);

macro_rules! lame_hex {
    ($($name:ident = $p:literal),*) => {$(
        /// The same hexahedron with its physics written as Lamé's form (`--forms`).
        #[element(dim = 3, dofs = 3, basis = trunk, order = $p)]
        pub mod $name {
            use super::Iso;
            use clforge::runtime::element::form::{inner, Field, Position};
            #[form(stiffness)]
            pub fn lame(u: &Field, v: &Field, _x: &Position, m: &Iso) -> f64 {
                m.lambda * u.div() * v.div() + 2.0 * m.mu * inner(u.sym_grad(), v.sym_grad())
            }
            #[form(mass)]
            pub fn inertia(u: &Field, v: &Field, _x: &Position, _m: &Iso) -> f64 {
                clforge::runtime::element::form::dot(u.vector(), v.vector())
            }
        }
    )*};
}
lame_hex!(
    form_p1 = 1,
    form_p2 = 2,
    form_p3 = 3,
    form_p4 = 4,
    form_p5 = 5,
    form_p6 = 6
);

/// The seed's best time per order (GTX 580/680, algorithms I/II, transfers included), s.
const SEED_BEST_S: [Option<f64>; 6] = [Some(0.189), Some(0.537), Some(1.64), Some(7.02), Some(58.0), None];

#[derive(Debug, Serialize)]
pub struct KernelRow {
    pub kernel: String,
    pub time: Stats,
    /// The useful-FMA count (`B_aᵀ (D B_b)` per pair and point, the same for every kernel) over
    /// the time.
    pub gflop_s: f64,
    /// The kernel's own FLOP count over the time: the moment kernels (`-mom`) do `dim²`
    /// multiply-adds per pair and point plus `dofs² dim²` per pair, not `B_aᵀ (D B_b)`'s.
    pub own_gflop_s: f64,
    pub write_gb_s: f64,
    /// Kernel + upload + download, one run (s).
    pub with_transfers_s: f64,
}

#[derive(Debug, Serialize)]
pub struct OrderRow {
    /// `built-in` (operator and `D`), or `form` (Lamé's form declared in the module).
    pub physics: &'static str,
    pub p: usize,
    pub ne: usize,
    pub points: usize,
    pub m: usize,
    pub gflop: f64,
    pub out_gb: f64,
    pub kernels: Vec<KernelRow>,
    pub best: String,
    pub best_s: f64,
    /// Host wall time scaled to `m`: one core, all cores (s), measured on `host_m` elements.
    pub host_m: usize,
    pub host_1_s: f64,
    pub host_all_s: f64,
    pub threads: usize,
    pub seed_best_s: Option<f64>,
    /// The seed's best over ours (kernel only; with transfers).
    pub speedup_kernel: Option<f64>,
    pub speedup_transfers: Option<f64>,
    /// The device and the host's threads together (none in a device-only run).
    pub hybrid: Option<HybridRow>,
    /// The best kernel's useful FMA rate over the measured f64 FMA rate.
    pub best_of_fma_roofline: Option<f64>,
    /// The best kernel against whichever roofline bounds it: its own FLOP rate over the f64
    /// FMA rate, or its write rate over the copy rate, the larger.
    pub best_of_bounding_roofline: Option<f64>,
    /// `Forming::tune`'s choice (with `--tune`).
    pub tuned: Option<TunedRow>,
}

/// What `Forming::tune` chose over `Forming::candidates` on the device.
#[derive(Debug, Serialize)]
pub struct TunedRow {
    pub best: String,
    /// Its median time in the tuner's own runs (s).
    pub best_s: f64,
    /// Every candidate's label and median time (s), `None` where the device refused it.
    pub times: Vec<(String, Option<f64>)>,
    /// The tuner's wall time (s).
    pub wall_s: f64,
}

/// A CPU + device run (`element::hybrid`): rates measured, split by the makespan program, formed.
#[derive(Debug, Serialize)]
pub struct HybridRow {
    /// Measured elements per second: device, host (all threads), one row per group.
    pub device_rate: Vec<f64>,
    pub host_rate: Vec<f64>,
    /// Elements given to the host, per group (after the minimum-gain rule of `split`).
    pub host_share: Vec<usize>,
    /// The program's split without that rule: the host's share and the predicted time.
    pub unguarded_host_share: Vec<usize>,
    pub unguarded_predicted_s: f64,
    pub predicted_s: f64,
    /// Wall clock of the split run and of the device alone (uploads and waits included;
    /// median of 3), seconds.
    pub hybrid_s: f64,
    pub device_only_s: f64,
    /// The host's all-cores time of the whole work, from its measured rates (s).
    pub host_only_s: f64,
}

/// Seed 004's mixed mesh: `m1` p = 1 and `m3` p = 3 hexahedra.
#[derive(Debug, Serialize)]
pub struct MixedRow {
    pub m1: usize,
    pub m3: usize,
    pub run: HybridRow,
}

fn median3(mut f: impl FnMut() -> Result<f64>) -> Result<f64> {
    let mut v = [f()?, f()?, f()?];
    v.sort_by(f64::total_cmp);
    Ok(v[1])
}

/// Measures, splits and runs `work` (whose workers are `dev` and the host), and the device
/// alone on the same groups.
fn hybrid_row(work: &Hybrid<'_>, sizes: &[usize]) -> Result<HybridRow> {
    let rates = work.measure()?;
    let plan = work.split(&rates)?;
    // The split the linear program finds before the minimum-gain rule, for the record.
    let unguarded = hybrid::split_with(&work.workers(), sizes, &rates, 0.0, 0.0)?;
    let hybrid_s = median3(|| Ok(work.run(&plan)?.total_s))?;
    let alone = Assignment {
        ranges: sizes.iter().map(|&m| vec![(Worker::Device(0), 0..m)]).collect(),
        predicted_s: vec![0.0; 2],
    };
    let device_only_s = median3(|| Ok(work.run(&alone)?.total_s))?;
    let (device_rate, host_rate) = (rates.per_second[0].clone(), rates.per_second[1].clone());
    let host_only_s = sizes.iter().zip(&host_rate).map(|(&m, r)| m as f64 / r).sum();
    Ok(HybridRow {
        host_share: (0..sizes.len()).map(|g| plan.count(g, Worker::Host)).collect(),
        unguarded_host_share: (0..sizes.len()).map(|g| unguarded.count(g, Worker::Host)).collect(),
        unguarded_predicted_s: unguarded.makespan_s(),
        predicted_s: plan.makespan_s(),
        device_rate,
        host_rate,
        hybrid_s,
        device_only_s,
        host_only_s,
    })
}

#[derive(Debug, Serialize)]
pub struct Report {
    pub device: String,
    pub driver: String,
    pub copy_gb_s: f64,
    pub fma_f64_gflop_s: Option<f64>,
    pub orders: Vec<OrderRow>,
    pub mixed: Option<MixedRow>,
    pub command: String,
}

fn hexahedra<E: Element>(rng: &mut SmallRng, m: usize) -> Vec<f64> {
    let mut out = Vec::with_capacity(m * 24);
    for e in 0..m {
        // A column of unit cubes, vertices displaced by up to 0.15.
        for p in E::local_nodes() {
            for (a, x) in p.iter().enumerate() {
                let shift = if a == 0 { e as f64 * 2.0 } else { 0.0 };
                out.push(shift + x + rng.random_range(-0.15..0.15));
            }
        }
    }
    out
}

fn algorithms<E: Element>(quick: bool) -> Vec<Algorithm> {
    let nq = E::QUADRATURE.pow(3);
    let qp = nq.next_power_of_two();
    let mut v = vec![Algorithm::PerElement, Algorithm::PerPoint { elements: 1 }];
    if qp <= 16 {
        v.push(Algorithm::PerPoint { elements: 32 / qp });
    }
    let default = clforge::runtime::element::forming::default_tiling::<E>();
    v.push(Algorithm::Tiled(default));
    if !quick {
        for ts in [1, 3] {
            let t = Tiling::default_for(E::NODES, nq, 3, 6);
            let per_point = 8 * t.epg * (3 * E::NODES + 36 + 9);
            let qc = (clforge::runtime::abi::modal::TILED_LOCAL_BYTES / per_point).clamp(1, t.wt.min(nq));
            v.push(Algorithm::Tiled(Tiling { ts, qc, ..t }));
        }
    }
    // p = 1 (8 functions) is left to the tiled kernel: its staged launch (2 x 2 tiles, 8
    // elements per group) failed on the H100 with CL_OUT_OF_RESOURCES, not yet understood.
    if E::NODES >= 16 {
        let t = clforge::runtime::element::forming::default_staging::<E>();
        v.push(Algorithm::Staged(t));
        v.push(Algorithm::Staged(t.with_pre(true, E::NODES, nq, 3, 3, 6)));
        // moments: dim² multiply-adds per pair and point instead of B_aᵀ (D B_b)
        v.push(Algorithm::Staged(t.with_moments(true, E::NODES, nq, 3, 3, 6)));
    }
    if E::NODES >= 16 {
        // moments as f64 matrix products (tensor cores on NVIDIA from sm_80)
        let d = clforge::runtime::element::forming::default_mma::<E>();
        v.push(Algorithm::Mma(d));
        if !quick {
            for (spw, warps) in [(1, 8), (2, 4), (2, 10), (3, 8), (4, 4), (3, 4)] {
                v.push(Algorithm::Mma(Mma {
                    spw,
                    rows: 1,
                    warps,
                    tensor_contraction: false,
                    ..d
                }));
            }
            // the default before register tiles (one block row per warp), to compare with
            let n = E::NODES;
            v.push(Algorithm::Mma(Mma {
                spw: if n >= 64 { 3 } else { 2 },
                rows: 1,
                warps: 8,
                tensor_contraction: (64..100).contains(&n),
                ..d
            }));
            // the contraction with C on tensor cores, and not, in the default shape
            v.push(Algorithm::Mma(Mma {
                tensor_contraction: !d.tensor_contraction,
                ..d
            }));
            if d.qc > 4 {
                v.push(Algorithm::Mma(Mma { qc: d.qc - 4, ..d }));
            }
            // Chunks of 8 points: 2 point quads, so every even number of warps reads J⁻¹ once
            // per chunk (the staging's point-quad-first order); one double-buffered shape.
            for (spw, warps, qc, double_buffer) in [
                (3, 8, 8, false),
                (2, 10, 8, false),
                (2, 8, 8, false),
                (4, 8, 8, false),
                (3, 8, 4, false),
                (3, 8, 8, true),
                // fewer groups per element (each restages the element): more warps or longer
                // runs, where the registers allow
                (3, 11, 16, false),
                (3, 12, 16, false),
                (4, 9, 16, false),
                (5, 8, 16, false),
                (4, 10, 8, false),
            ] {
                let t = Mma {
                    spw,
                    rows: 1,
                    warps,
                    qc,
                    double_buffer,
                    tensor_contraction: false,
                };
                if t.local_bytes(E::NODES, 3, 6) <= 48 * 1024 {
                    v.push(Algorithm::Mma(t));
                }
            }
            // register tiles: several block rows per warp, so each column fragment feeds
            // rows · dim products (fewer fragment loads per product, fewer groups per element)
            for (spw, rows, warps, qc) in [(2, 2, 8, 16), (2, 2, 8, 8), (1, 2, 8, 16), (2, 2, 4, 16), (1, 3, 8, 16)] {
                for tensor_contraction in [false, true] {
                    let t = Mma {
                        spw,
                        rows,
                        warps,
                        qc,
                        double_buffer: false,
                        tensor_contraction,
                    };
                    if t.local_bytes(E::NODES, 3, 6) <= 48 * 1024 {
                        v.push(Algorithm::Mma(t));
                    }
                }
            }
        }
    }
    if !quick && E::NODES >= 16 {
        for (ta, tb, group) in [
            (4, 2, 64),
            (4, 2, 256),
            (2, 2, 128),
            (4, 1, 128),
            (3, 3, 128),
            (2, 4, 128),
            (2, 4, 256),
            (1, 8, 128),
        ] {
            let t = Staging::sized(ta, tb, group, E::NODES, nq, 3, 3, 6);
            v.push(Algorithm::Staged(t));
            // with the geometry pre-pass (J⁻¹ and w det J from global memory)
            v.push(Algorithm::Staged(t.with_pre(true, E::NODES, nq, 3, 3, 6)));
            v.push(Algorithm::Staged(t.with_moments(true, E::NODES, nq, 3, 3, 6)));
        }
    }
    v.dedup();
    v
}

/// Which orders, kernels and host columns a run measures.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    /// Lowest order p (1 to 6).
    pub min_order: usize,
    /// Kernels whose label starts with one of these (all when empty).
    pub kernels: Vec<String>,
    /// Skip the host columns, the CPU + device splits and the mixed mesh.
    pub device_only: bool,
    /// Run `Forming::tune` over `Forming::candidates` per order.
    pub tune: bool,
    /// Also form each order's element declared with Lamé's form (the same physics).
    pub forms: bool,
}

impl Selection {
    fn keeps(&self, a: &Algorithm) -> bool {
        let label = a.label();
        self.kernels.is_empty() || self.kernels.iter().any(|k| label.starts_with(k.as_str()))
    }
}

/// Seed 004's non-uniform case: `m1` p = 1 and `m3` p = 3 elements split by measured rates.
fn mixed(dev: &Device, m1: usize, m3: usize, threads: usize) -> Result<MixedRow> {
    let mut rng = SmallRng::seed_from_u64(13);
    let x1 = hexahedra::<HexP1>(&mut rng, m1);
    let x3 = hexahedra::<HexP3>(&mut rng, m3);
    let mut mats = |m: usize| -> Vec<Iso> {
        (0..m)
            .map(|_| Iso {
                lambda: rng.random_range(0.5..2.0),
                mu: rng.random_range(0.3..1.5),
            })
            .collect()
    };
    let (k1, k3) = (mats(m1), mats(m3));
    let mut work = Hybrid::new(std::slice::from_ref(dev), threads)?;
    work.add::<HexP1>(&x1, &k1)?;
    work.add::<HexP3>(&x3, &k3)?;
    Ok(MixedRow {
        m1,
        m3,
        run: hybrid_row(&work, &[m1, m3])?,
    })
}

pub fn run(
    dev: &Device,
    quick: bool,
    m: Option<usize>,
    max_p: usize,
    reps: Reps,
    threads: usize,
    sel: &Selection,
) -> Result<Report> {
    let roof = roofline::measure(dev, quick, reps, |s| eprintln!("{s}"))?;
    let m = m.unwrap_or(if quick { 64 } else { 10_000 });
    let mut orders = Vec::new();
    let max_p = if quick { max_p.min(3) } else { max_p.min(6) };
    let fma_g = roof.fma_f64.as_ref().map(|p| p.rate_g);
    let physics: &[&'static str] = if sel.forms {
        &["built-in", "form"]
    } else {
        &["built-in"]
    };
    for (p, &which) in (sel.min_order.max(1)..=max_p).flat_map(|p| physics.iter().map(move |w| (p, w))) {
        let mut row = match (p, which == "form") {
            (1, false) => order::<HexP1>(dev, p, m, quick, reps, threads, sel)?,
            (2, false) => order::<HexP2>(dev, p, m, quick, reps, threads, sel)?,
            (3, false) => order::<HexP3>(dev, p, m, quick, reps, threads, sel)?,
            (4, false) => order::<HexP4>(dev, p, m, quick, reps, threads, sel)?,
            (5, false) => order::<HexP5>(dev, p, m, quick, reps, threads, sel)?,
            (_, false) => order::<HexP6>(dev, p, m, quick, reps, threads, sel)?,
            (1, true) => order::<FormP1>(dev, p, m, quick, reps, threads, sel)?,
            (2, true) => order::<FormP2>(dev, p, m, quick, reps, threads, sel)?,
            (3, true) => order::<FormP3>(dev, p, m, quick, reps, threads, sel)?,
            (4, true) => order::<FormP4>(dev, p, m, quick, reps, threads, sel)?,
            (5, true) => order::<FormP5>(dev, p, m, quick, reps, threads, sel)?,
            (_, true) => order::<FormP6>(dev, p, m, quick, reps, threads, sel)?,
        };
        row.physics = which;
        row.best_of_fma_roofline = fma_g.map(|f| row.gflop / row.best_s / f);
        let copy = roof.copy_gb_s();
        row.best_of_bounding_roofline =
            row.kernels.iter().find(|k| k.kernel == row.best).and_then(|k| {
                fma_g.map(|f| (k.own_gflop_s / f).max(if copy > 0.0 { k.write_gb_s / copy } else { 0.0 }))
            });
        orders.push(row);
    }
    let half = if quick { m } else { 50_000 };
    let mixed = if sel.device_only {
        None
    } else {
        Some(mixed(dev, half, half, threads)?)
    };
    Ok(Report {
        device: dev.info().name.clone(),
        driver: dev.info().driver_version.clone(),
        copy_gb_s: roof.copy_gb_s(),
        fma_f64_gflop_s: roof.fma_f64.as_ref().map(|p| p.rate_g),
        orders,
        mixed,
        command: std::env::args().collect::<Vec<_>>().join(" "),
    })
}

impl Report {
    pub fn table(&self) -> String {
        let mut s = format!(
            "element matrices on {} (driver {}): copy {:.0} GB/s, f64 FMA {} GFLOP/s\n",
            self.device,
            self.driver,
            self.copy_gb_s,
            self.fma_f64_gflop_s.map_or("-".into(), |v| format!("{v:.0}"))
        );
        for o in &self.orders {
            s += &format!(
                "p = {} {} (Ne = {}, {} points), m = {}: {:.1} GFLOP, {:.3} GB out; host 1 core {:.3} s, {} cores {:.3} s (from {} elements)\n",
                o.p, o.physics, o.ne, o.points, o.m, o.gflop, o.out_gb, o.host_1_s, o.threads, o.host_all_s, o.host_m
            );
            for k in &o.kernels {
                s += &format!(
                    "  {:<26} {:>10.5} s (n = {:>2})  {:>8.0} GFLOP/s{}  own {:>7.0} GFLOP/s{}  {:>7.0} GB/s ({:>4.1} % of copy)  with transfers {:.4} s\n",
                    k.kernel,
                    k.time.median_us / 1e6,
                    k.time.n,
                    k.gflop_s,
                    self.fma_f64_gflop_s
                        .map_or(String::new(), |f| format!(" ({:>4.1} %)", 100.0 * k.gflop_s / f)),
                    k.own_gflop_s,
                    self.fma_f64_gflop_s
                        .map_or(String::new(), |f| format!(" ({:>4.1} %)", 100.0 * k.own_gflop_s / f)),
                    k.write_gb_s,
                    100.0 * k.write_gb_s / self.copy_gb_s.max(1e-9),
                    k.with_transfers_s
                );
            }
            s += &format!(
                "  best: {} {:.5} s{}{}\n",
                o.best,
                o.best_s,
                o.best_of_bounding_roofline.map_or(String::new(), |r| format!(
                    ", {:.1} % of its bounding roofline",
                    100.0 * r
                )),
                match (o.seed_best_s, o.speedup_kernel, o.speedup_transfers) {
                    (Some(b), Some(k), Some(t)) =>
                        format!("; seed's best {b} s: {k:.0}x (kernel), {t:.0}x (with transfers)"),
                    _ => String::new(),
                }
            );
            if let Some(t) = &o.tuned {
                let refused = t.times.iter().filter(|(_, x)| x.is_none()).count();
                s += &format!(
                    "  Forming::tune: {} {:.5} s (of {} candidates, {refused} refused; {:.1} s)\n",
                    t.best,
                    t.best_s,
                    t.times.len(),
                    t.wall_s
                );
            }
            if let Some(h) = &o.hybrid {
                s += &hybrid_line(h);
            }
        }
        if let Some(mixed) = &self.mixed {
            s += &format!("mixed: {} p = 1 + {} p = 3 elements\n", mixed.m1, mixed.m3);
            s += &hybrid_line(&mixed.run);
        }
        s
    }
}

fn hybrid_line(h: &HybridRow) -> String {
    format!(
        "  device + host: rates {:?} / {:?} elements/s, host takes {:?} (program alone: {:?}, predicted {:.4} s); predicted {:.4} s, run {:.4} s; device alone {:.4} s, host alone {:.4} s (from rates)\n",
        h.device_rate.iter().map(|r| r.round()).collect::<Vec<_>>(),
        h.host_rate.iter().map(|r| r.round()).collect::<Vec<_>>(),
        h.host_share,
        h.unguarded_host_share,
        h.unguarded_predicted_s,
        h.predicted_s,
        h.hybrid_s,
        h.device_only_s,
        h.host_only_s
    )
}
