//! One order of the `element-matrices` suite: every selected kernel checked against the host on
//! the first elements, then timed on all of them, the tuner's choice, and the host columns.

use std::time::Instant;

use anyhow::{bail, Result};
use clforge::runtime::abi::modal::b_nonzeros;
use clforge::runtime::element::forming::{form_host, packed_len, Algorithm, Elements, Forming};
use clforge::runtime::element::hybrid::Hybrid;
use clforge::runtime::element::Element;
use clforge::runtime::Device;
use rand::{rngs::SmallRng, Rng, SeedableRng};

use super::{algorithms, hexahedra, hybrid_row, HybridRow, Iso, KernelRow, OrderRow, Selection, TunedRow, SEED_BEST_S};
use crate::measure::{self, Reps};

/// The work and output of one order on `m` elements, for the rates of the table.
struct Work {
    /// Packed entries of one element's matrix.
    np: usize,
    /// Useful FMAs per element (the tiled kernel's arithmetic, each pair once).
    fma: f64,
    /// GFLOP of the `B_aᵀ D B_b` form, and of the moment form, for all elements.
    gflop: f64,
    moments_gflop: f64,
    /// GB of the packed output.
    out_gb: f64,
}

impl Work {
    fn of<E: Element>(m: usize) -> Work {
        let np = packed_len(E::NODES * 3);
        let nq = E::QUADRATURE.pow(3);
        let nnz = b_nonzeros(3, 3, 6).len() as f64;
        let nf = E::NODES as f64;
        let fma = nq as f64 * (nf * 6.0 * nnz + nf * (nf + 1.0) / 2.0 * 3.0 * nnz);
        // The moment form: dim² per pair and point (plus scaling g_b by w), dofs² dim² per pair.
        let pairs = nf * (nf + 1.0) / 2.0;
        Work {
            np,
            fma,
            gflop: 2.0 * fma * m as f64 / 1e9,
            moments_gflop: 2.0 * (nq as f64 * (pairs * 9.0 + nf * 3.0) + pairs * 81.0) * m as f64 / 1e9,
            out_gb: (m * np * 8) as f64 / 1e9,
        }
    }
}

/// The first entry of the first `count` elements' matrices in `got` that differs from the host's
/// `reference` by more than 1e-12 of the element's largest entry.
fn first_difference(got: &[f64], reference: &[f64], count: usize, np: usize) -> Option<String> {
    for e in 0..count {
        let block = &reference[e * np..(e + 1) * np];
        let scale = block.iter().fold(0.0f64, |x, v| x.max(v.abs()));
        for (i, (g, h)) in got[e * np..(e + 1) * np].iter().zip(block).enumerate() {
            if (g - h).abs() > 1e-12 * scale {
                return Some(format!("element {e} entry {i}: device {g} vs host {h}"));
            }
        }
    }
    None
}

/// The selected kernels this device can build and launch: shapes whose local memory it does not
/// have are left out, and so is a shape it refuses at launch (registers or local memory past its
/// limits: CL_OUT_OF_RESOURCES), reported.
fn usable<E: Element<Material = Iso>>(
    forming: &Forming<E>,
    small: &Elements,
    p: usize,
    quick: bool,
    sel: &Selection,
) -> Vec<Algorithm> {
    let local = forming.device().info().local_mem_bytes as usize;
    let mut algos: Vec<Algorithm> = algorithms::<E>(quick)
        .into_iter()
        .filter(|a| sel.keeps(a))
        .filter(|a| !matches!(a, Algorithm::Mma(t) if t.local_bytes(E::NODES, 3, 6) > local))
        .collect();
    algos.retain(|a| match forming.form(small, *a) {
        Ok(_) => true,
        Err(e) => {
            eprintln!("  p = {p}: skipping {}: {e}", a.label());
            false
        }
    });
    algos
}

/// Times every kernel in `algos` on `elements`: device time (slow kernels fewer times), rates,
/// and the time with `upload_s` and the download.
fn time_kernels<E: Element<Material = Iso>>(
    forming: &Forming<E>,
    elements: &Elements,
    algos: &[Algorithm],
    (w, upload_s): (&Work, f64),
    reps: Reps,
    p: usize,
) -> Result<Vec<KernelRow>> {
    let mut out = clforge::runtime::Buffer::<f64>::new(forming.device(), (elements.len() * w.np).max(1))?;
    let mut kernels = Vec::new();
    for &a in algos {
        // One launch to size the repetitions: slow kernels are timed fewer times.
        let first = forming.form_into(elements, a, &mut out)?;
        first.wait()?;
        let once_s = first.duration_ns()? as f64 / 1e9;
        let timed = if once_s > 2.0 {
            3
        } else if once_s > 0.2 {
            5
        } else {
            reps.timed
        };
        let time = measure::time_launches(Reps { warmup: 0, timed }, || {
            Ok(forming.form_into(elements, a, &mut out)?)
        })?;
        let s = time.median_us / 1e6;
        let t1 = Instant::now();
        let host = out.to_vec()?;
        let download_s = t1.elapsed().as_secs_f64();
        drop(host);
        let own = if matches!(a, Algorithm::Mma(_)) || a.label().ends_with("-mom") {
            w.moments_gflop
        } else {
            w.gflop
        };
        kernels.push(KernelRow {
            kernel: a.label(),
            gflop_s: w.gflop / s,
            own_gflop_s: own / s,
            write_gb_s: w.out_gb / s,
            with_transfers_s: upload_s + s + download_s,
            time,
        });
        eprintln!("  p = {p}: {} {:.4} s", a.label(), s);
    }
    Ok(kernels)
}

/// `Forming::tune` over `Forming::candidates`; its choice must form the host's `reference`
/// matrices of the `small` elements too (unless `probing`).
fn tune_row<E: Element<Material = Iso>>(
    forming: &Forming<E>,
    (elements, small): (&Elements, &Elements),
    (reference, np): (&[f64], usize),
    reps: Reps,
    p: usize,
    probing: bool,
) -> Result<TunedRow> {
    let t = Instant::now();
    let tuned = forming.tune(elements, &forming.candidates(), reps.timed.min(10))?;
    let wall_s = t.elapsed().as_secs_f64();
    let got = forming.form(small, tuned.best)?.0.to_host()?;
    if let Some(bad) = first_difference(&got, reference, small.len(), np).filter(|_| !probing) {
        bail!("p = {p}, tuned {}: {bad}", tuned.best.label());
    }
    let best_s = tuned
        .times
        .iter()
        .find(|(a, _)| *a == tuned.best)
        .and_then(|(_, t)| *t)
        .unwrap_or(f64::NAN);
    eprintln!(
        "  p = {p}: Forming::tune chose {} ({best_s:.4} s) in {wall_s:.1} s",
        tuned.best.label()
    );
    Ok(TunedRow {
        best: tuned.best.label(),
        best_s,
        times: tuned.times.iter().map(|(a, t)| (a.label(), *t)).collect(),
        wall_s,
    })
}

/// The host columns: `host_m` elements on one core and on `threads`, each scaled to all `m`, and
/// the CPU + device split.
fn host_columns<E: Element<Material = Iso>>(
    dev: &Device,
    (coords, mats): (&[f64], &[Iso]),
    host_m: usize,
    threads: usize,
) -> Result<(f64, f64, HybridRow)> {
    let m = mats.len();
    let t = Instant::now();
    form_host::<E>(&coords[..host_m * 24], &mats[..host_m], 1)?;
    let host_1_s = t.elapsed().as_secs_f64() * m as f64 / host_m as f64;
    let t = Instant::now();
    form_host::<E>(&coords[..host_m * 24], &mats[..host_m], threads)?;
    let host_all_s = t.elapsed().as_secs_f64() * m as f64 / host_m as f64;
    let mut work = Hybrid::new(std::slice::from_ref(dev), threads)?;
    work.add::<E>(coords, mats)?;
    Ok((host_1_s, host_all_s, hybrid_row(&work, &[m])?))
}

pub(super) fn order<E: Element<Material = Iso>>(
    dev: &Device,
    p: usize,
    m: usize,
    quick: bool,
    reps: Reps,
    threads: usize,
    sel: &Selection,
) -> Result<OrderRow> {
    let mut rng = SmallRng::seed_from_u64(p as u64);
    let coords = hexahedra::<E>(&mut rng, m);
    let mats: Vec<Iso> = (0..m)
        .map(|_| Iso {
            lambda: rng.random_range(0.5..2.0),
            mu: rng.random_range(0.3..1.5),
        })
        .collect();
    let w = Work::of::<E>(m);

    let forming = Forming::<E>::new(dev)?;
    if algorithms::<E>(quick)
        .iter()
        .any(|a| matches!(a, Algorithm::Mma(_)) && sel.keeps(a))
    {
        eprintln!(
            "p = {p}: the mma kernels run {}",
            if forming.tensor_cores() {
                "on tensor cores (mma.sync f64)"
            } else {
                "as per-work-item products (no mma.sync f64 here)"
            }
        );
    }
    // Check every kernel on the first elements.
    let check_m = m.min(8);
    let reference = form_host::<E>(&coords[..check_m * 24], &mats[..check_m], threads)?;
    let small = forming.upload(&coords[..check_m * 24], &mats[..check_m])?;
    let algos = usable(&forming, &small, p, quick, sel);
    let probing = std::env::var(clforge::runtime::element::forming::PROBE_ENV).is_ok_and(|v| !v.trim().is_empty());
    if probing {
        eprintln!(
            "WARNING: {} is set: the kernels run with probe options and their matrices are not checked",
            clforge::runtime::element::forming::PROBE_ENV
        );
    }
    for &a in algos.iter().filter(|_| !probing) {
        let got = forming.form(&small, a)?.0.to_host()?;
        if let Some(bad) = first_difference(&got, &reference, check_m, w.np) {
            bail!("p = {p}, {}: {bad}", a.label());
        }
    }
    let t0 = Instant::now();
    let elements = forming.upload(&coords, &mats)?;
    dev.finish()?;
    let upload_s = t0.elapsed().as_secs_f64();
    let kernels = time_kernels(&forming, &elements, &algos, (&w, upload_s), reps, p)?;
    let tuned = if sel.tune {
        Some(tune_row(
            &forming,
            (&elements, &small),
            (&reference, w.np),
            reps,
            p,
            probing,
        )?)
    } else {
        None
    };
    let best = kernels
        .iter()
        .min_by(|a, b| a.time.median_us.total_cmp(&b.time.median_us))
        .map(|k| (k.kernel.clone(), k.time.median_us / 1e6, k.with_transfers_s))
        .unwrap_or_default();
    // Host: about a second's worth of elements on one core.
    let per_elem_guess = w.fma / 2e9;
    let host_m = ((1.0 / per_elem_guess) as usize).clamp(threads.max(4), m);
    let (host_1_s, host_all_s, hybrid) = if sel.device_only {
        (f64::NAN, f64::NAN, None)
    } else {
        let (one, all, hybrid) = host_columns::<E>(dev, (&coords, &mats), host_m, threads)?;
        (one, all, Some(hybrid))
    };
    let seed = if m == 10_000 { SEED_BEST_S[p - 1] } else { None };
    Ok(OrderRow {
        physics: "built-in",
        p,
        ne: E::NODES * 3,
        points: E::QUADRATURE.pow(3),
        m,
        gflop: w.gflop,
        out_gb: w.out_gb,
        kernels,
        best: best.0,
        best_s: best.1,
        host_m,
        host_1_s,
        host_all_s,
        threads,
        seed_best_s: seed,
        speedup_kernel: seed.map(|s| s / best.1),
        speedup_transfers: seed.map(|s| s / best.2),
        hybrid,
        best_of_fma_roofline: None,
        best_of_bounding_roofline: None,
        tuned,
    })
}
