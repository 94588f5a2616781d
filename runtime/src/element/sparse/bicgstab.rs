//! BiCGStab (van der Vorst 1992) preconditioned by the diagonal, on the device: the solver of
//! non-symmetric systems (advection, SUPG, couplings), on the same CSR matrices as [`super::cg`],
//! with the same exact power-of-two scaling of the right-hand side and the same options.

use super::cg::{general_prepare, norm, zero_solution};
use super::*;

/// The solver's name in [`Error::NotConverged`].
const BICGSTAB: &str = "BiCGStab";

/// Restarts after breakdowns before [`bicgstab`] gives up.
const MAX_RESTARTS: usize = 20;

/// Solves `A x = rhs` for a general (non-symmetric) `A` by BiCGStab preconditioned by the
/// diagonal of `A`, on the device, from `x0` (zeros when `None`), until `‖r‖ / ‖b‖ ≤ opts.tol`.
/// `b = 0` gives `x = 0`.
///
/// Fails with [`Error::LengthMismatch`] for vectors not of `n` entries, [`Error::InvalidConfig`]
/// for a tolerance that is not finite and positive or a non-finite `rhs`,
/// [`Error::NotPositiveDefinite`] for a zero or non-finite diagonal entry (the preconditioner
/// divides by it; a negative one is allowed), and [`Error::NotConverged`] after `opts.max_iter`
/// iterations or after more than 20 breakdowns (`r̂·r`, `r̂·v` or `ω` vanishing; each restarts
/// from the true residual with it as the new shadow residual).
pub fn bicgstab(csr: &DeviceCsr, rhs: &[f64], x0: Option<&[f64]>, opts: &CgOptions) -> Result<CgReport> {
    let Some((scaled, diag)) = general_prepare(csr, rhs, x0, opts, BICGSTAB)? else {
        return Ok(zero_solution(csr.n()));
    };
    let mut v = Vectors::new(csr, &scaled.b, scaled.x0.as_deref(), diag)?;
    let report = v.solve(norm(&scaled.b), opts)?;
    scaled.unscale(report)
}

struct Vectors<'a> {
    rows: Rows<'a>,
    b: Buffer<f64>,
    diag: Buffer<f64>,
    x: Buffer<f64>,
    r: Buffer<f64>,
    rhat: Buffer<f64>,
    p: Buffer<f64>,
    v: Buffer<f64>,
    y: Buffer<f64>,
    s: Buffer<f64>,
    z: Buffer<f64>,
    t: Buffer<f64>,
    dots: Buffer<f64>,
}

impl<'a> Vectors<'a> {
    fn new(csr: &'a DeviceCsr, rhs: &[f64], x0: Option<&[f64]>, diag: Buffer<f64>) -> Result<Vectors<'a>> {
        let (dev, n) = (csr.device(), csr.n());
        let rows = Rows::new(csr)?;
        let vec = || Buffer::<f64>::new(dev, n);
        Ok(Vectors {
            x: rows.start(x0)?,
            dots: Buffer::new(dev, 2 * rows.groups())?,
            rows,
            b: Buffer::from_slice(dev, rhs)?,
            diag,
            r: vec()?,
            rhat: vec()?,
            p: vec()?,
            v: vec()?,
            y: vec()?,
            s: vec()?,
            z: vec()?,
            t: vec()?,
        })
    }

    /// `(a·b, c·d)`.
    fn dots(&self, a: &Buffer<f64>, b: &Buffer<f64>, c: &Buffer<f64>, d: &Buffer<f64>) -> Result<(f64, f64)> {
        self.rows.dot2(&self.dots, [a, b, c, d])
    }

    /// `r = b − A x`, `r̂ = r`; returns `r·r`.
    fn restart(&self) -> Result<f64> {
        self.rows.spmv(&self.x, &self.t)?;
        self.rows.launch(
            "sparse_bicg_start",
            &[
                ("b", Arg::buffer(&self.b)),
                ("q", Arg::buffer(&self.t)),
                ("r", Arg::buffer(&self.r)),
                ("rhat", Arg::buffer(&self.rhat)),
                ("n", Arg::u32(self.rows.n)),
            ],
        )?;
        Ok(self.dots(&self.r, &self.r, &self.r, &self.r)?.0)
    }

    fn solve(&mut self, b_norm: f64, opts: &CgOptions) -> Result<CgReport> {
        let mut residual = self.restart()?.sqrt() / b_norm;
        let (mut rho, mut alpha, mut omega) = (1.0, 1.0, 1.0);
        let mut iterations = 0;
        let fail = |iterations, residual| Error::NotConverged {
            solver: BICGSTAB,
            iterations,
            residual,
            tol: opts.tol,
            max_iter: opts.max_iter,
        };
        // Iterations since the shadow residual was chosen; a breakdown (`r̂·r`, `r̂·v` or `ω`
        // vanishing) restarts from the true residual, at most `MAX_RESTARTS` times.
        let (mut fresh, mut restarts) = (0usize, 0usize);
        let converged = |residual: f64| residual <= opts.tol;
        while !converged(residual) {
            if iterations >= opts.max_iter || !residual.is_finite() || restarts > MAX_RESTARTS {
                return Err(fail(iterations, residual));
            }
            let (rho_next, _) = self.dots(&self.rhat, &self.r, &self.r, &self.r)?;
            let tiny = |x: f64| !x.is_finite() || x.abs() <= f64::EPSILON * f64::EPSILON;
            if tiny(rho_next) && fresh > 0 {
                residual = self.restart()?.sqrt() / b_norm;
                (fresh, restarts) = (0, restarts + 1);
                continue;
            }
            let beta = if fresh == 0 {
                0.0
            } else {
                (rho_next / rho) * (alpha / omega)
            };
            rho = rho_next;
            self.rows.launch(
                "sparse_bicg_direction",
                &[
                    ("p", Arg::buffer(&self.p)),
                    ("r", Arg::buffer(&self.r)),
                    ("v", Arg::buffer(&self.v)),
                    ("y", Arg::buffer(&self.y)),
                    ("diag", Arg::buffer(&self.diag)),
                    ("beta", Arg::f64(beta)),
                    ("omega", Arg::f64(omega)),
                    ("n", Arg::u32(self.rows.n)),
                ],
            )?;
            self.rows.spmv(&self.y, &self.v)?;
            let (rv, _) = self.dots(&self.rhat, &self.v, &self.v, &self.v)?;
            if tiny(rv) {
                residual = self.restart()?.sqrt() / b_norm;
                (fresh, restarts) = (0, restarts + 1);
                continue;
            }
            alpha = rho / rv;
            self.rows.launch(
                "sparse_bicg_half",
                &[
                    ("s", Arg::buffer(&self.s)),
                    ("r", Arg::buffer(&self.r)),
                    ("v", Arg::buffer(&self.v)),
                    ("z", Arg::buffer(&self.z)),
                    ("diag", Arg::buffer(&self.diag)),
                    ("alpha", Arg::f64(alpha)),
                    ("n", Arg::u32(self.rows.n)),
                ],
            )?;
            self.rows.spmv(&self.z, &self.t)?;
            let (ts, tt) = self.dots(&self.t, &self.s, &self.t, &self.t)?;
            // `s = 0`: the half step solved it (ω = 0 keeps x += α y).
            omega = if tt > 0.0 { ts / tt } else { 0.0 };
            self.rows.launch(
                "sparse_bicg_update",
                &[
                    ("x", Arg::buffer(&self.x)),
                    ("r", Arg::buffer(&self.r)),
                    ("y", Arg::buffer(&self.y)),
                    ("z", Arg::buffer(&self.z)),
                    ("s", Arg::buffer(&self.s)),
                    ("t", Arg::buffer(&self.t)),
                    ("alpha", Arg::f64(alpha)),
                    ("omega", Arg::f64(omega)),
                    ("n", Arg::u32(self.rows.n)),
                ],
            )?;
            iterations += 1;
            fresh += 1;
            residual = self.dots(&self.r, &self.r, &self.r, &self.r)?.0.sqrt() / b_norm;
            if omega == 0.0 && !converged(residual) {
                residual = self.restart()?.sqrt() / b_norm;
                (fresh, restarts) = (0, restarts + 1);
            }
        }
        if iterations > 0 {
            residual = self.restart()?.sqrt() / b_norm;
        }
        Ok(CgReport {
            x: self.x.to_vec()?,
            iterations,
            residual,
        })
    }
}
