//! Forming on the device: the geometry pass, then the element-matrix kernel of the chosen
//! algorithm, launched batch by batch.

use super::*;

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
        let nq = points::<E>();
        if let Algorithm::Mma(t) = algo {
            self.check_mma(t)?;
        }
        let program = self.program(algo)?;
        let bad = Buffer::<i32>::from_slice(&self.dev, &[i32::MAX])?;
        let s = E::OPERATOR.strains(E::DIM);
        let ke: &Buffer<f64> = ke;
        let common = vec![
            Arg::buffer(&elements.xe),
            Arg::buffer(&elements.de),
            Arg::buffer(&self.dref),
            Arg::buffer(&self.w),
            Arg::buffer(ke),
            Arg::i32(mi),
            Arg::buffer(&bad),
        ];
        let name = |k: &str| format!("{}_{k}", E::NAME);
        let event = if m == 0 {
            return Ok(Event::null());
        } else {
            match algo {
                Algorithm::PerElement => {
                    let local = 64;
                    program.launch(&name("ke_ai"), &[m.div_ceil(local) * local], Some(&[local]), &common)?
                }
                Algorithm::PerPoint { elements: epg } => {
                    let qp = points_per_group(nq);
                    let dd = E::DOFS * E::DOFS;
                    if epg == 0 || epg * qp > 1024 {
                        return Err(Error::InvalidConfig(format!(
                            "algorithm II with {epg} elements of {qp} work-items per group; use 1 to {} elements",
                            (1024 / qp).max(1)
                        )));
                    }
                    let bytes = 8 * epg * qp * dd;
                    program.launch(
                        &name("ke_aii"),
                        &[qp, m.div_ceil(epg) * epg],
                        Some(&[qp, epg]),
                        &concat(common, vec![Arg::local(bytes)]),
                    )?
                }
                Algorithm::Tiled(t) => {
                    if t.ts == 0 || t.wt == 0 || t.epg == 0 || t.qc == 0 || t.qc > t.wt || t.wt * t.epg > 1024 {
                        return Err(Error::InvalidConfig(format!(
                            "tiled launch {t:?}: every size at least 1, qc ≤ wt and wt · epg ≤ 1024"
                        )));
                    }
                    let slices = t.tiles(E::NODES).div_ceil(t.wt);
                    let f = |n: usize| 8 * t.epg * t.qc * n;
                    program.launch(
                        &name("ke_tiled"),
                        &[slices * t.wt, m.div_ceil(t.epg) * t.epg],
                        Some(&[t.wt, t.epg]),
                        &concat(
                            common,
                            vec![
                                Arg::local(f(E::DIM * E::NODES)),
                                Arg::local(f(s * s)),
                                Arg::local(f(E::DIM * E::DIM)),
                            ],
                        ),
                    )?
                }
                Algorithm::Staged(t) => {
                    if t.ta == 0
                        || t.tb == 0
                        || t.wt == 0
                        || t.epg == 0
                        || t.qc == 0
                        || t.qc > t.wt
                        || t.wt * t.epg > 1024
                    {
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
                    let slices = t.tiles(E::NODES).div_ceil(t.wt);
                    let f = |n: usize| 8 * t.epg * t.qc * n;
                    let nfp = E::NODES.div_ceil(t.ta) * t.ta;
                    let locals = if t.moments {
                        vec![
                            Arg::local(f(E::DIM * nfp)),
                            // C once per element, D once per element, w det J per point
                            Arg::local((8 * t.epg * E::DOFS * E::DOFS * E::DIM * E::DIM).next_multiple_of(16)),
                            Arg::local(8 * t.epg * s * s),
                            Arg::local(f(1)),
                        ]
                    } else {
                        vec![
                            Arg::local(f(E::DIM * nfp)),
                            Arg::local(f(t.span(E::NODES) * s * E::DOFS).next_multiple_of(16)),
                            // with the pre-pass: D once per element, no J⁻¹
                            Arg::local(if t.pre { 8 * t.epg * s * s } else { f(s * s) }),
                            Arg::local(if t.pre { 8 } else { f(E::DIM * E::DIM) }),
                        ]
                    };
                    if !t.pre {
                        program.launch(
                            &name("ke_staged"),
                            &[slices * t.wt, m.div_ceil(t.epg) * t.epg],
                            Some(&[t.wt, t.epg]),
                            &concat(common, locals),
                        )?
                    } else {
                        self.staged_pre(&program, t, elements, ke, &bad, slices, locals)?
                    }
                }
                Algorithm::Mma(t) => self.mma(&program, t, elements, ke, &bad)?,
            }
        };
        let first_bad = bad.to_vec()?;
        if let Some(&e) = first_bad.first().filter(|&&e| e != i32::MAX) {
            return Err(self.degenerate(elements, e as usize));
        }
        Ok(event)
    }

    /// The staged kernel after the geometry pre-pass ([`Forming::after_geometry`]).
    #[allow(clippy::too_many_arguments)] // the launch's pieces, computed by form_into
    fn staged_pre(
        &self,
        program: &Program,
        t: Staging,
        elements: &Elements,
        ke: &Buffer<f64>,
        bad: &Buffer<i32>,
        slices: usize,
        locals: Vec<Arg<'_>>,
    ) -> Result<Event> {
        let name = format!("{}_ke_staged", E::NAME);
        self.after_geometry(program, elements, bad, |gj, e0, n| {
            let mut args = vec![
                Arg::buffer(&elements.xe),
                Arg::buffer(&elements.de),
                Arg::buffer(&self.dref),
                Arg::buffer(&self.w),
                Arg::buffer(ke),
                Arg::i32(to_i32(e0 + n, "elements formed in one launch")?),
                Arg::buffer(bad),
            ];
            args.extend(locals.iter().copied());
            args.push(Arg::buffer(gj));
            args.push(Arg::i32(to_i32(e0, "first element of a batch")?));
            program.launch(
                &name,
                &[slices * t.wt, n.div_ceil(t.epg) * t.epg],
                Some(&[t.wt, t.epg]),
                &args,
            )
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
        ke: &Buffer<f64>,
        bad: &Buffer<i32>,
    ) -> Result<Event> {
        let s = E::OPERATOR.strains(E::DIM);
        let group = t.warps * 32;
        let slices = t.slices(E::NODES);
        let name = format!("{}_ke_mma", E::NAME);
        self.after_geometry(program, elements, bad, |gj, e0, n| {
            program.launch(
                &name,
                &[slices * group, n],
                Some(&[group, 1]),
                &[
                    Arg::buffer(&elements.de),
                    Arg::buffer(&self.dref),
                    Arg::buffer(ke),
                    Arg::buffer(gj),
                    Arg::i32(to_i32(e0, "first element of a batch")?),
                    Arg::local(8 * t.staged_doubles(E::NODES, E::DIM)),
                    Arg::local(8 * t.point_doubles(E::DIM)),
                    Arg::local(8 * 81),
                    Arg::local(8 * s * s),
                ],
            )
        })
    }

    /// The geometry pre-pass (`J⁻¹` and `w det J` of every point), then `main(gj, e0, n)` on
    /// its elements, in batches whose pre-pass output fits in the buffer
    /// ([`Forming::with_geometry_batch_bytes`]); one event spans every launch.
    fn after_geometry(
        &self,
        program: &Program,
        elements: &Elements,
        bad: &Buffer<i32>,
        mut main: impl FnMut(&Buffer<f64>, usize, usize) -> Result<Event>,
    ) -> Result<Event> {
        let m = elements.m;
        let nq = points::<E>();
        let per = clforge_abi::modal::geometry_bytes(nq, E::DIM);
        let batch = (self.geometry_batch_bytes / per).clamp(1, m);
        let gj = Buffer::<f64>::new(&self.dev, batch * per / 8)?;
        let name = format!("{}_ke_geometry", E::NAME);
        let mut first: Option<Event> = None;
        let mut last = Event::null();
        for e0 in (0..m).step_by(batch) {
            let n = batch.min(m - e0);
            let geometry = program.launch(
                &name,
                &[(n * nq).div_ceil(128) * 128],
                Some(&[128]),
                &[
                    Arg::buffer(&elements.xe),
                    Arg::buffer(&self.dref),
                    Arg::buffer(&self.w),
                    Arg::buffer(&gj),
                    Arg::i32(to_i32(e0, "first element of a batch")?),
                    Arg::i32(to_i32(n, "elements of a batch")?),
                    Arg::buffer(bad),
                ],
            )?;
            first.get_or_insert(geometry);
            last = main(&gj, e0, n)?;
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
