//! Element matrices formed on the host by the device kernels' arithmetic: the reference every
//! device algorithm is checked against, and the CPU share of a split run.

use super::{check_coords, packed_index, packed_len, tables};
use crate::element::matrices::jacobian;
use crate::element::spec::Element;
use crate::error::{Error, Result};

/// Forms the packed `K_e` of every element on the host, by the tiled kernel's arithmetic, on
/// `threads` threads (elements split in contiguous blocks). The host share of a split run,
/// and the CPU columns of the bench.
pub fn form_host<E: Element>(coords: &[f64], materials: &[E::Material], threads: usize) -> Result<Vec<f64>> {
    check_coords::<E>(coords, materials.len())?;
    let de = super::materials::<E>(materials)?;
    form_host_checked::<E>(coords, &de, threads)
}

/// [`form_host`] of checked coordinates and material matrices (from [`materials`]).
pub(crate) fn form_host_checked<E: Element>(coords: &[f64], de: &[f64], threads: usize) -> Result<Vec<f64>> {
    let (dref, w) = tables::<E>()?;
    let s = E::OPERATOR.strains(E::DIM);
    let m = de.len() / (s * s);
    let ne = E::NODES * E::DOFS;
    let p = packed_len(ne);
    let mut out = vec![0.0; m * p];
    let threads = threads.clamp(1, m.max(1));
    let per = m.div_ceil(threads).max(1);
    let results: Vec<Result<()>> = std::thread::scope(|scope| {
        let handles: Vec<_> = out
            .chunks_mut(per * p)
            .enumerate()
            .map(|(c, chunk)| {
                let (dref, w) = (&dref, &w);
                scope.spawn(move || -> Result<()> {
                    for (i, k) in chunk.chunks_mut(p).enumerate() {
                        let e = c * per + i;
                        let x = &coords[e * E::GEOMETRY_NODES * E::DIM..(e + 1) * E::GEOMETRY_NODES * E::DIM];
                        host_element::<E>(x, &de[e * s * s..(e + 1) * s * s], dref, w, k)?;
                    }
                    Ok(())
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(Error::InvalidConfig("a host forming thread panicked".into())))
            })
            .collect()
    });
    results.into_iter().collect::<Result<Vec<()>>>()?;
    Ok(out)
}

/// One element's packed `K_e` on the host (zeroed first).
fn host_element<E: Element>(x: &[f64], d: &[f64], dref: &[f64], w: &[f64], k: &mut [f64]) -> Result<()> {
    let (dim, nf, dofs) = (E::DIM, E::NODES, E::DOFS);
    let s = E::OPERATOR.strains(dim);
    let b = clforge_abi::modal::b_entries(dim, dofs, s).collect::<Vec<_>>();
    k.fill(0.0);
    let mut g = vec![0.0; dim * nf];
    let mut h = vec![0.0; s * dofs];
    let mut wd = vec![0.0; s * s];
    let nodes: Vec<&[f64]> = x.chunks(dim).collect();
    for (q, (local, _)) in crate::element::matrices::quadrature_points::<E>()?
        .into_iter()
        .enumerate()
    {
        let jac = jacobian::<E, &[f64]>(&nodes, local)?;
        let dq = &dref[q * dim * nf..(q + 1) * dim * nf];
        for a in 0..dim {
            for f in 0..nf {
                g[a * nf + f] = (0..dim).map(|l| jac.inverse[(a, l)] * dq[l * nf + f]).sum();
            }
        }
        let wdet = w[q] * jac.det;
        for (o, v) in wd.iter_mut().zip(d) {
            *o = wdet * v;
        }
        for fb in 0..nf {
            for (si, hs) in h.chunks_mut(dofs).enumerate() {
                hs.fill(0.0);
                for &(t, c, axis) in &b {
                    hs[c] += wd[si * s + t] * g[axis * nf + fb];
                }
            }
            for fa in fb..nf {
                for i in 0..dofs {
                    let row = fa * dofs + i;
                    for j in 0..dofs {
                        let col = fb * dofs + j;
                        if col > row {
                            continue;
                        }
                        let mut v = 0.0;
                        for &(si, c, axis) in &b {
                            if c == i {
                                v += g[axis * nf + fa] * h[si * dofs + j];
                            }
                        }
                        k[packed_index(row, col)] += v;
                    }
                }
            }
        }
    }
    Ok(())
}
