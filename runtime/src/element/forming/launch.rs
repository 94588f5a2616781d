//! Forming on the device: the geometry pass, then the element-matrix kernel of the chosen
//! algorithm, launched batch by batch.

use super::*;
use crate::element::At;
use crate::program::Local;

impl<E: Element> Forming<E> {
    /// [`Forming::form`] into an existing buffer of at least `m · packed_len(ne)` values.
    pub fn form_into(&self, elements: &Elements, algo: Algorithm, ke: &mut Buffer<f64>) -> Result<Event> {
        let m = elements.m;
        let ne = E::NODES * E::DOFS;
        let need = m.saturating_mul(packed_len(ne));
        if ke.len() < need {
            return Err(Error::LengthMismatch {
                what: format!("buffer for the packed matrices of {m} `{}` elements", E::NAME),
                expected: need,
                found: ke.len(),
            });
        }
        let mi = to_i32(m, "elements formed in one launch")?;
        if let Algorithm::Mma(t) = algo {
            self.check_mma(t)?;
        }
        let program = self.program(algo)?;
        if m == 0 {
            return Ok(Event::null());
        }
        let mut bad = Buffer::<i32>::from_slice(&self.dev, &[i32::MAX])?;
        let event = self.launch(&program, algo, elements, ke, mi, &mut bad)?;
        let first_bad = bad.to_vec()?;
        if let Some(&e) = first_bad.first().filter(|&&e| e != i32::MAX) {
            return Err(self.degenerate(elements, e as usize));
        }
        Ok(event)
    }

    /// The chosen algorithm's launches, after its sizes are checked.
    fn launch(
        &self,
        program: &Program,
        algo: Algorithm,
        elements: &Elements,
        ke: &mut Buffer<f64>,
        mi: i32,
        bad: &mut Buffer<i32>,
    ) -> Result<Event> {
        let (m, k) = (elements.m, self.kernels);
        let (xe, de, dref, wq) = (&elements.xe, &elements.de, &self.dref, &self.w);
        match algo {
            Algorithm::PerElement => {
                let local = 64;
                let at = At {
                    program,
                    global: &[m.div_ceil(local) * local],
                    local: Some(&[local]),
                };
                k.ke_ai(at, xe, de, dref, wq, ke, mi, bad)
            }
            Algorithm::PerPoint { elements: epg } => {
                let qp = points_per_group(points::<E>());
                if epg == 0 || epg * qp > 1024 {
                    return Err(Error::InvalidConfig(format!(
                        "algorithm II with {epg} elements of {qp} work-items per group; use 1 to {} elements",
                        (1024 / qp).max(1)
                    )));
                }
                let at = At {
                    program,
                    global: &[qp, m.div_ceil(epg) * epg],
                    local: Some(&[qp, epg]),
                };
                let red = Local::doubles(epg * qp * E::DOFS * E::DOFS);
                k.ke_aii(at, xe, de, dref, wq, ke, mi, bad, red)
            }
            Algorithm::Tiled(t) => {
                if t.ts == 0 || t.wt == 0 || t.epg == 0 || t.qc == 0 || t.qc > t.wt || t.wt * t.epg > 1024 {
                    return Err(Error::InvalidConfig(format!(
                        "tiled launch {t:?}: every size at least 1, qc ≤ wt and wt · epg ≤ 1024"
                    )));
                }
                let slices = t.tiles(E::NODES).div_ceil(t.wt);
                let f = |n: usize| Local::doubles(t.epg * t.qc * n);
                let s = E::OPERATOR.strains(E::DIM);
                let at = At {
                    program,
                    global: &[slices * t.wt, m.div_ceil(t.epg) * t.epg],
                    local: Some(&[t.wt, t.epg]),
                };
                let (lg, lwd, ljinv) = (f(E::DIM * E::NODES), f(s * s), f(E::DIM * E::DIM));
                k.ke_tiled(at, xe, de, dref, wq, ke, mi, bad, lg, lwd, ljinv)
            }
            Algorithm::Staged(t) => self.staged(program, t, elements, ke, mi, bad),
            Algorithm::Mma(t) => self.mma(program, t, elements, ke, bad),
        }
    }

    /// The staged kernel, after the geometry pre-pass where `t` asks for it.
    fn staged(
        &self,
        program: &Program,
        t: Staging,
        elements: &Elements,
        ke: &mut Buffer<f64>,
        mi: i32,
        bad: &mut Buffer<i32>,
    ) -> Result<Event> {
        if t.ta == 0 || t.tb == 0 || t.wt == 0 || t.epg == 0 || t.qc == 0 || t.qc > t.wt || t.wt * t.epg > 1024 {
            return Err(Error::InvalidConfig(format!(
                "staged launch {t:?}: every size at least 1, qc ≤ wt and wt · epg ≤ 1024"
            )));
        }
        if t.moments && !has_moments::<E>() {
            return Err(not_elasticity::<E>(&format!("staged launch {t:?}")));
        }
        let t = Staging {
            pre: t.pre || t.moments,
            ..t
        };
        let s = E::OPERATOR.strains(E::DIM);
        let slices = t.tiles(E::NODES).div_ceil(t.wt);
        let f = |n: usize| 8 * t.epg * t.qc * n;
        let nfp = E::NODES.div_ceil(t.ta) * t.ta;
        let [lg, lh2, lwd, ljinv] = if t.moments {
            [
                f(E::DIM * nfp),
                // C once per element, D once per element, w det J per point
                (8 * t.epg * E::DOFS * E::DOFS * E::DIM * E::DIM).next_multiple_of(16),
                8 * t.epg * s * s,
                f(1),
            ]
        } else {
            [
                f(E::DIM * nfp),
                f(t.span(E::NODES) * s * E::DOFS).next_multiple_of(16),
                // with the pre-pass: D once per element, no J⁻¹
                if t.pre { 8 * t.epg * s * s } else { f(s * s) },
                if t.pre { 8 } else { f(E::DIM * E::DIM) },
            ]
        }
        .map(Local::bytes);
        let (xe, de, dref, wq) = (&elements.xe, &elements.de, &self.dref, &self.w);
        let k = self.kernels;
        let group = [t.wt, t.epg];
        let global = |n: usize| [slices * t.wt, n.div_ceil(t.epg) * t.epg];
        if !t.pre {
            // Built without the pre-pass, the kernel reads neither `gj` nor `e0`.
            let unused = Buffer::<f64>::new(&self.dev, 1)?;
            let at = At {
                program,
                global: &global(elements.m),
                local: Some(&group),
            };
            return k.ke_staged(at, xe, de, dref, wq, ke, mi, bad, lg, lh2, lwd, ljinv, &unused, 0);
        }
        self.after_geometry(program, elements, bad, |gj, bad, e0, n| {
            let at = At {
                program,
                global: &global(n),
                local: Some(&group),
            };
            let last = to_i32(e0 + n, "elements formed in one launch")?;
            let e0 = to_i32(e0, "first element of a batch")?;
            k.ke_staged(at, xe, de, dref, wq, ke, last, bad, lg, lh2, lwd, ljinv, gj, e0)
        })
    }

    /// Refuses a tensor-core shape this device cannot launch, before anything is built.
    fn check_mma(&self, t: Mma) -> Result<()> {
        if !has_moments::<E>() {
            return Err(not_elasticity::<E>(&format!("tensor-core launch {t:?}")));
        }
        let s = E::OPERATOR.strains(E::DIM);
        let group = t.warps.saturating_mul(32);
        let local = t.local_bytes(E::NODES, E::DIM, s) as u64;
        let info = self.dev.info();
        if t.spw == 0
            || t.rows == 0
            || t.warps == 0
            || t.qc == 0
            || !t.qc.is_multiple_of(4)
            || group > info.max_work_group_size
        {
            return Err(Error::InvalidConfig(format!(
                "tensor-core launch {t:?}: spw, rows and warps at least 1, qc a positive multiple of 4, and warps · 32 \
                 ≤ {} (the device's largest work-group)",
                info.max_work_group_size
            )));
        }
        if local > info.local_mem_bytes {
            return Err(Error::InvalidConfig(format!(
                "tensor-core launch {t:?}: needs {local} bytes of local memory for `{}`, the device has {}; \
                 stage fewer points (qc)",
                E::NAME,
                info.local_mem_bytes
            )));
        }
        Ok(())
    }

    /// The tensor-core moment kernel after the geometry pre-pass.
    fn mma(
        &self,
        program: &Program,
        t: Mma,
        elements: &Elements,
        ke: &mut Buffer<f64>,
        bad: &mut Buffer<i32>,
    ) -> Result<Event> {
        let s = E::OPERATOR.strains(E::DIM);
        let group = [t.warps * 32, 1];
        let slices = t.slices(E::NODES);
        let k = self.kernels;
        let (de, dref) = (&elements.de, &self.dref);
        let ly = Local::doubles(t.staged_doubles(E::NODES, E::DIM));
        let lw = Local::doubles(t.point_doubles(E::DIM));
        let (lc, ld) = (Local::doubles(81), Local::doubles(s * s));
        self.after_geometry(program, elements, bad, |gj, _, e0, n| {
            let at = At {
                program,
                global: &[slices * group[0], n],
                local: Some(&group),
            };
            let e0 = to_i32(e0, "first element of a batch")?;
            k.ke_mma(at, de, dref, ke, gj, e0, ly, lw, lc, ld)
        })
    }

    /// The geometry pre-pass (`J⁻¹` and `w det J` of every point), then `main(gj, bad, e0, n)`
    /// on its elements, in batches whose pre-pass output fits in the buffer
    /// ([`Forming::with_geometry_batch_bytes`]); one event spans every launch.
    fn after_geometry(
        &self,
        program: &Program,
        elements: &Elements,
        bad: &mut Buffer<i32>,
        mut main: impl FnMut(&Buffer<f64>, &mut Buffer<i32>, usize, usize) -> Result<Event>,
    ) -> Result<Event> {
        let m = elements.m;
        let nq = points::<E>();
        let per = clforge_abi::modal::geometry_bytes(nq, E::DIM);
        let batch = (self.geometry_batch_bytes / per).clamp(1, m);
        let mut gj = Buffer::<f64>::new(&self.dev, batch * per / 8)?;
        let mut first: Option<Event> = None;
        let mut last = Event::null();
        for e0 in (0..m).step_by(batch) {
            let n = batch.min(m - e0);
            let at = At {
                program,
                global: &[(n * nq).div_ceil(128) * 128],
                local: Some(&[128]),
            };
            let (first_e, count) = (
                to_i32(e0, "first element of a batch")?,
                to_i32(n, "elements of a batch")?,
            );
            let geometry =
                self.kernels
                    .ke_geometry(at, &elements.xe, &self.dref, &self.w, &mut gj, first_e, count, bad)?;
            first.get_or_insert(geometry);
            last = main(&gj, bad, e0, n)?;
        }
        Ok(match first {
            Some(first) => Event::spanning(&first, last),
            None => last,
        })
    }

    /// The host's account of a degenerate element found on the device.
    fn degenerate(&self, elements: &Elements, e: usize) -> Error {
        let per = E::GEOMETRY_NODES * E::DIM;
        let coords = match elements.xe.to_vec() {
            Ok(c) => c,
            Err(err) => return err,
        };
        let nodes: Vec<&[f64]> = coords[e * per..(e + 1) * per].chunks(E::DIM).collect();
        for (local, _) in crate::element::matrices::quadrature_points::<E>().unwrap_or_default() {
            if let Err(err) = jacobian::<E, &[f64]>(&nodes, local) {
                return err;
            }
        }
        Error::InvalidConfig(format!("element {e} of type `{}` has a degenerate Jacobian", E::NAME))
    }
}
