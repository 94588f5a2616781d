//! Restarted GMRES (Saad & Schultz 1986) preconditioned on the right by the diagonal, on the
//! device: the robust solver of non-symmetric systems (where BiCGStab stalls or diverges on
//! strongly non-normal ones, such as Galerkin advection at high Péclet numbers). The Krylov
//! basis lives on the device; each Arnoldi step is one product, two passes of classical
//! Gram–Schmidt (CGS2: as stable as modified Gram–Schmidt, four launches instead of `2j`), and
//! the small Hessenberg least-squares problem is solved on the host by Givens rotations.

use super::cg::{general_prepare, norm, zero_solution};
use super::*;

/// The solver's name in [`Error::NotConverged`].
const GMRES: &str = "GMRES";

/// The default restart length of [`gmres`]: the basis holds `restart + 1` vectors of `n`.
pub const GMRES_RESTART: usize = 50;

/// Solves `A x = rhs` for a general `A` by GMRES(`restart`) right-preconditioned by the
/// diagonal of `A`, on the device, from `x0` (zeros when `None`), until the true relative
/// residual `‖b − A x‖ / ‖b‖ ≤ opts.tol`; `opts.max_iter` counts Arnoldi steps over all cycles.
///
/// Fails with [`Error::LengthMismatch`], [`Error::InvalidConfig`] (a tolerance that is not finite
/// and positive, a non-finite `rhs`, `restart = 0`), [`Error::NotPositiveDefinite`] for a zero or
/// non-finite diagonal entry (the preconditioner divides by it) and [`Error::NotConverged`].
pub fn gmres(csr: &DeviceCsr, rhs: &[f64], x0: Option<&[f64]>, opts: &CgOptions, restart: usize) -> Result<CgReport> {
    let n = csr.n();
    if restart == 0 {
        return Err(Error::InvalidConfig(
            "GMRES needs a restart length of at least 1".into(),
        ));
    }
    let Some((scaled, diag)) = general_prepare(csr, rhs, x0, opts, GMRES)? else {
        return Ok(zero_solution(n));
    };
    let m = restart.min(n.max(1));
    index32(|| format!("a GMRES basis of {} vectors of {n}", m + 1), (m + 1) * n)?;
    let mut g = Gmres::new(csr, &scaled.b, scaled.x0.as_deref(), diag, m)?;
    let report = g.solve(norm(&scaled.b), opts)?;
    scaled.unscale(report)
}

struct Gmres<'a> {
    rows: Rows<'a>,
    m: usize,
    b: Buffer<f64>,
    diag: Buffer<f64>,
    x: Buffer<f64>,
    /// The basis, `m + 1` vectors of `n`.
    v: Buffer<f64>,
    w: Buffer<f64>,
    z: Buffer<f64>,
    /// Coefficients uploaded for `sparse_gs_update` and `sparse_gmres_update`.
    coef: Buffer<f64>,
    /// Per work-group partial sums of up to `m + 1` dot products.
    partial: Buffer<f64>,
}

impl<'a> Gmres<'a> {
    fn new(csr: &'a DeviceCsr, rhs: &[f64], x0: Option<&[f64]>, diag: Buffer<f64>, m: usize) -> Result<Gmres<'a>> {
        let (dev, n) = (csr.device(), csr.n());
        let rows = Rows::new(csr)?;
        Ok(Gmres {
            x: rows.start(x0)?,
            partial: Buffer::new(dev, (m + 1) * rows.groups())?,
            rows,
            m,
            b: Buffer::from_slice(dev, rhs)?,
            diag,
            v: Buffer::new(dev, (m + 1) * n)?,
            w: Buffer::new(dev, n)?,
            z: Buffer::new(dev, n)?,
            coef: Buffer::new(dev, m + 1)?,
        })
    }

    fn n(&self) -> Arg<'static> {
        Arg::u32(self.rows.n)
    }

    /// `V_i · w` for `i < k`.
    fn dots(&self, k: usize) -> Result<Vec<f64>> {
        self.rows.launch(
            "sparse_multidot",
            &[
                ("V", Arg::buffer(&self.v)),
                ("w", Arg::buffer(&self.w)),
                ("partial", Arg::buffer(&self.partial)),
                ("scratch", self.rows.scratch()),
                ("k", Arg::u32(k as u32)),
                ("n", self.n()),
            ],
        )?;
        let parts = self.partial.to_vec()?;
        Ok((0..k)
            .map(|i| parts.chunks_exact(k).take(self.rows.groups()).map(|g| g[i]).sum())
            .collect())
    }

    /// `‖w‖`.
    fn w_norm(&self) -> Result<f64> {
        let w = &self.w;
        Ok(self.rows.dot2(&self.partial, [w, w, w, w])?.0.sqrt())
    }

    /// `V_j = a w`.
    fn set_basis(&self, j: usize, a: f64) -> Result<()> {
        self.rows.launch(
            "sparse_set_basis",
            &[
                ("V", Arg::buffer(&self.v)),
                ("w", Arg::buffer(&self.w)),
                ("a", Arg::f64(a)),
                ("j", Arg::u32(j as u32)),
                ("n", self.n()),
            ],
        )
    }

    /// `w = b − A x`; returns `‖w‖`.
    fn residual(&self) -> Result<f64> {
        self.rows.spmv(&self.x, &self.z)?;
        self.rows.launch(
            "sparse_residual",
            &[
                ("b", Arg::buffer(&self.b)),
                ("q", Arg::buffer(&self.z)),
                ("w", Arg::buffer(&self.w)),
                ("n", self.n()),
            ],
        )?;
        self.w_norm()
    }

    /// `w = A D⁻¹ V_j`, orthogonalised against `V_0..V_j` (two passes); returns the column
    /// `h_0..h_j` and `‖w‖`.
    fn arnoldi(&mut self, j: usize) -> Result<(Vec<f64>, f64)> {
        self.rows.launch(
            "sparse_precondition",
            &[
                ("z", Arg::buffer(&self.z)),
                ("V", Arg::buffer(&self.v)),
                ("diag", Arg::buffer(&self.diag)),
                ("j", Arg::u32(j as u32)),
                ("n", self.n()),
            ],
        )?;
        self.rows.spmv(&self.z, &self.w)?;
        let k = j + 1;
        let mut h = vec![0.0; k];
        for _ in 0..2 {
            let pass = self.dots(k)?;
            let mut padded = pass.clone();
            padded.resize(self.m + 1, 0.0);
            self.coef.write(&padded)?;
            self.rows.launch(
                "sparse_gs_update",
                &[
                    ("V", Arg::buffer(&self.v)),
                    ("w", Arg::buffer(&self.w)),
                    ("h", Arg::buffer(&self.coef)),
                    ("k", Arg::u32(k as u32)),
                    ("n", self.n()),
                ],
            )?;
            h.iter_mut().zip(&pass).for_each(|(a, b)| *a += b);
        }
        Ok((h, self.w_norm()?))
    }

    fn solve(&mut self, b_norm: f64, opts: &CgOptions) -> Result<CgReport> {
        let mut iterations = 0;
        loop {
            let beta = self.residual()?;
            let residual = beta / b_norm;
            if residual <= opts.tol {
                return Ok(CgReport {
                    x: self.x.to_vec()?,
                    iterations,
                    residual,
                });
            }
            if iterations >= opts.max_iter || !residual.is_finite() {
                return Err(Error::NotConverged {
                    solver: GMRES,
                    iterations,
                    residual,
                    tol: opts.tol,
                    max_iter: opts.max_iter,
                });
            }
            self.set_basis(0, 1.0 / beta)?;
            let y = self.cycle(beta, b_norm, opts, &mut iterations)?;
            let mut padded = y.clone();
            padded.resize(self.m + 1, 0.0);
            self.coef.write(&padded)?;
            self.rows.launch(
                "sparse_gmres_update",
                &[
                    ("x", Arg::buffer(&self.x)),
                    ("V", Arg::buffer(&self.v)),
                    ("y", Arg::buffer(&self.coef)),
                    ("diag", Arg::buffer(&self.diag)),
                    ("k", Arg::u32(y.len() as u32)),
                    ("n", self.n()),
                ],
            )?;
        }
    }

    /// One cycle of up to `m` Arnoldi steps from `V_0`; returns the least-squares coefficients.
    fn cycle(&mut self, beta: f64, b_norm: f64, opts: &CgOptions, iterations: &mut usize) -> Result<Vec<f64>> {
        let m = self.m;
        // Columns of the Hessenberg matrix, rotated to upper triangular as they come.
        let mut r: Vec<Vec<f64>> = Vec::with_capacity(m);
        let (mut cs, mut sn) = (Vec::<f64>::with_capacity(m), Vec::<f64>::with_capacity(m));
        let mut g = vec![0.0; m + 1];
        g[0] = beta;
        for j in 0..m {
            let (mut h, hn) = self.arnoldi(j)?;
            h.push(hn);
            for i in 0..j {
                let (a, b) = (h[i], h[i + 1]);
                h[i] = cs[i] * a + sn[i] * b;
                h[i + 1] = -sn[i] * a + cs[i] * b;
            }
            let d = h[j].hypot(h[j + 1]);
            let (c, s) = if d == 0.0 { (1.0, 0.0) } else { (h[j] / d, h[j + 1] / d) };
            h[j] = d;
            g[j + 1] = -s * g[j];
            g[j] *= c;
            cs.push(c);
            sn.push(s);
            r.push(h);
            *iterations += 1;
            let estimate = g[j + 1].abs() / b_norm;
            // A breakdown (`hn = 0`) means the Krylov space holds the solution.
            if hn <= f64::EPSILON * beta || estimate <= opts.tol || *iterations >= opts.max_iter {
                break;
            }
            self.set_basis(j + 1, 1.0 / hn)?;
        }
        // Back substitution on the rotated columns.
        let k = r.len();
        let mut y = vec![0.0; k];
        for i in (0..k).rev() {
            let s: f64 = (i + 1..k).map(|l| r[l][i] * y[l]).sum();
            y[i] = if r[i][i] != 0.0 { (g[i] - s) / r[i][i] } else { 0.0 };
        }
        Ok(y)
    }
}
