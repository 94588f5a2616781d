//! Conjugate gradients preconditioned by the diagonal, on the device ([`cg`]) and on the host
//! ([`cg_host`]): one loop ([`cg_loop`]) over the vector operations of either, on the system
//! scaled exactly by a power of two so that any finite right-hand side converges.

use super::*;
use crate::num::{binary_exponent, times_pow2};

/// When [`cg`] stops.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CgOptions {
    /// Stop once `‖r‖ / ‖b‖ ≤ tol` (finite, positive).
    pub tol: f64,
    /// Fail with [`Error::NotConverged`] after this many iterations.
    pub max_iter: usize,
}

impl Default for CgOptions {
    /// `tol = 1e-10`, `max_iter = 10 000`.
    fn default() -> Self {
        CgOptions {
            tol: 1e-10,
            max_iter: 10_000,
        }
    }
}

/// What [`cg`] found.
#[derive(Clone, Debug, PartialEq)]
pub struct CgReport {
    /// The solution.
    pub x: Vec<f64>,
    /// Iterations done (0 when the start already satisfied the tolerance).
    pub iterations: usize,
    /// The true relative residual `‖b − A x‖ / ‖b‖` of `x`, recomputed at the end (the iteration
    /// stops on the recursively updated residual; the two differ by rounding).
    pub residual: f64,
}

/// The vector operations of preconditioned CG, on the device or the host, so that one loop
/// ([`cg_loop`]) defines the algorithm for both.
trait CgOps {
    /// `q = A x; r = b − q; z = D⁻¹ r; p = z`; returns `(r·z, r·r)`.
    fn restart(&mut self) -> Result<(f64, f64)>;
    /// `q = A p`; returns `p·q`.
    fn apply(&mut self) -> Result<f64>;
    /// `x += α p; r −= α q; z = D⁻¹ r`; returns `(r·z, r·r)`.
    fn update(&mut self, alpha: f64) -> Result<(f64, f64)>;
    /// `p = z + β p`.
    fn direction(&mut self, beta: f64) -> Result<()>;
    /// `x`.
    fn solution(&mut self) -> Result<Vec<f64>>;
}

fn cg_loop(ops: &mut impl CgOps, b_norm: f64, opts: &CgOptions) -> Result<CgReport> {
    let (mut rz, rr) = ops.restart()?;
    let mut residual = rr.sqrt() / b_norm;
    let mut iterations = 0;
    // A NaN residual is not converged.
    let converged = |residual: f64| residual <= opts.tol;
    while !converged(residual) {
        if iterations >= opts.max_iter || !residual.is_finite() {
            return Err(Error::NotConverged {
                solver: CG,
                iterations,
                residual,
                tol: opts.tol,
                max_iter: opts.max_iter,
            });
        }
        let pq = ops.apply()?;
        if pq.is_nan() || pq <= 0.0 {
            return Err(Error::NotPositiveDefinite {
                what: format!("the curvature p·Ap at conjugate-gradient iteration {}", iterations + 1),
                value: pq,
            });
        }
        let (rz_next, rr) = ops.update(rz / pq)?;
        iterations += 1;
        residual = rr.sqrt() / b_norm;
        if converged(residual) {
            break;
        }
        ops.direction(rz_next / rz)?;
        rz = rz_next;
    }
    if iterations > 0 {
        let (_, rr) = ops.restart()?;
        residual = rr.sqrt() / b_norm;
    }
    Ok(CgReport {
        x: ops.solution()?,
        iterations,
        residual,
    })
}

/// A solve's right-hand side and start scaled by a power of two `2^-e` so that `max |b|` is
/// in `[1, 2)`: conjugate gradients is invariant under the scaling, and norms and dot products of
/// the scaled vectors neither underflow nor overflow for any finite `b` (subnormal entries
/// included). `e` is `None` for `b = 0`.
pub(super) struct Scaled {
    pub(super) b: Vec<f64>,
    pub(super) x0: Option<Vec<f64>>,
    pub(super) e: Option<i32>,
}

impl Scaled {
    /// The solution of the scaled system, back at the caller's scale; an entry beyond f64's
    /// range is an error, not an infinity.
    pub(super) fn unscale(&self, mut report: CgReport) -> Result<CgReport> {
        let Some(e) = self.e else { return Ok(report) };
        for v in &mut report.x {
            *v = times_pow2(*v, e);
        }
        if let Some(i) = report.x.iter().position(|v| !v.is_finite()) {
            return Err(Error::TooLarge {
                what: "the conjugate-gradient solution".into(),
                detail: format!(
                    "entry {i} exceeds f64's range (the right-hand side is of order 2^{e}); scale the system's units"
                ),
            });
        }
        Ok(report)
    }
}

/// Checks the options and vector lengths of a solve; returns the scaled system.
pub(super) fn cg_prepare(n: usize, rhs: &[f64], x0: Option<&[f64]>, opts: &CgOptions) -> Result<Scaled> {
    if !(opts.tol > 0.0 && opts.tol.is_finite()) {
        return Err(Error::InvalidConfig(format!(
            "conjugate-gradient tolerance {} must be finite and positive",
            opts.tol
        )));
    }
    check_len("right-hand side (one per DOF)", n, rhs.len())?;
    if let Some(x0) = x0 {
        check_len("initial guess `x0` (one per DOF)", n, x0.len())?;
        if let Some(i) = x0.iter().position(|v| !v.is_finite()) {
            return Err(Error::InvalidConfig(format!(
                "the initial guess has a non-finite entry ({} at DOF {i})",
                x0[i]
            )));
        }
    }
    if let Some(i) = rhs.iter().position(|v| !v.is_finite()) {
        return Err(Error::InvalidConfig(format!(
            "the right-hand side has a non-finite entry ({} at DOF {i})",
            rhs[i]
        )));
    }
    let Some(e) = binary_exponent(rhs) else {
        return Ok(Scaled {
            b: rhs.to_vec(),
            x0: x0.map(<[f64]>::to_vec),
            e: None,
        });
    };
    let down = |v: &[f64]| v.iter().map(|&x| times_pow2(x, -e)).collect::<Vec<f64>>();
    Ok(Scaled {
        b: down(rhs),
        x0: x0.map(down),
        e: Some(e),
    })
}

/// The checks and the scaled system of a solver of general matrices preconditioned by the
/// diagonal (BiCGStab, GMRES): `None` for `b = 0`; else the scaled system and `diag(A)`, none
/// of whose entries is zero or not finite ([`Error::NotPositiveDefinite`] names the first, and
/// `solver` whose preconditioner divides by it).
pub(super) fn general_prepare(
    csr: &DeviceCsr,
    rhs: &[f64],
    x0: Option<&[f64]>,
    opts: &CgOptions,
    solver: &str,
) -> Result<Option<(Scaled, Buffer<f64>)>> {
    let scaled = cg_prepare(csr.n(), rhs, x0, opts)?;
    if scaled.e.is_none() {
        return Ok(None);
    }
    let diag = csr.diagonal()?;
    let d = diag.to_vec()?;
    if let Some(i) = d.iter().position(|v| *v == 0.0 || !v.is_finite()) {
        return Err(Error::NotPositiveDefinite {
            what: format!("the diagonal entry A[{i}][{i}] ({solver}'s preconditioner divides by it)"),
            value: d[i],
        });
    }
    Ok(Some((scaled, diag)))
}

/// `‖v‖` of a scaled vector (its largest entry in `[1, 2)`).
pub(super) fn norm(v: &[f64]) -> f64 {
    v.iter().map(|x| x * x).sum::<f64>().sqrt()
}

/// The solution of `b = 0`.
pub(super) fn zero_solution(n: usize) -> CgReport {
    CgReport {
        x: vec![0.0; n],
        iterations: 0,
        residual: 0.0,
    }
}

/// Solves `A x = rhs` by conjugate gradients preconditioned by the diagonal of `A`, on the
/// device, from `x0` (zeros when `None`), until `‖r‖ / ‖b‖ ≤ opts.tol`. `b = 0` gives `x = 0`.
///
/// Fails with [`Error::LengthMismatch`] for vectors not of `n` entries, [`Error::InvalidConfig`]
/// for a tolerance that is not finite and positive or a non-finite `rhs`,
/// [`Error::NotPositiveDefinite`] when a diagonal entry or a curvature `p·Ap` is not positive
/// (the matrix is not SPD) and [`Error::NotConverged`] after `opts.max_iter` iterations.
pub fn cg(csr: &DeviceCsr, rhs: &[f64], x0: Option<&[f64]>, opts: &CgOptions) -> Result<CgReport> {
    let n = csr.n();
    let scaled = cg_prepare(n, rhs, x0, opts)?;
    if scaled.e.is_none() {
        return Ok(zero_solution(n));
    }
    let diag = csr.diagonal()?;
    check_diagonal(&diag.to_vec()?, 0..n, "")?;
    let mut ops = DeviceCg::new(csr, &scaled.b, scaled.x0.as_deref(), diag)?;
    scaled.unscale(cg_loop(&mut ops, norm(&scaled.b), opts)?)
}

/// [`cg`] on the host, with the same algorithm, checks and errors.
pub fn cg_host(a: &HostCsr, rhs: &[f64], x0: Option<&[f64]>, opts: &CgOptions) -> Result<CgReport> {
    let n = a.n();
    let scaled = cg_prepare(n, rhs, x0, opts)?;
    if scaled.e.is_none() {
        return Ok(zero_solution(n));
    }
    let diag = a.diagonal();
    check_diagonal(&diag, 0..n, "")?;
    let mut ops = HostCg {
        a,
        b: &scaled.b,
        diag,
        x: scaled.x0.clone().unwrap_or_else(|| vec![0.0; n]),
        r: vec![0.0; n],
        z: vec![0.0; n],
        p: vec![0.0; n],
        q: vec![0.0; n],
    };
    scaled.unscale(cg_loop(&mut ops, norm(&scaled.b), opts)?)
}

struct HostCg<'a> {
    a: &'a HostCsr,
    b: &'a [f64],
    diag: Vec<f64>,
    x: Vec<f64>,
    r: Vec<f64>,
    z: Vec<f64>,
    p: Vec<f64>,
    q: Vec<f64>,
}

impl HostCg<'_> {
    /// `z = D⁻¹ r`; returns `(r·z, r·r)`.
    fn precondition(&mut self) -> (f64, f64) {
        let (mut rz, mut rr) = (0.0, 0.0);
        for ((z, &r), &d) in self.z.iter_mut().zip(&self.r).zip(&self.diag) {
            *z = r / d;
            rz += r * *z;
            rr += r * r;
        }
        (rz, rr)
    }
}

impl CgOps for HostCg<'_> {
    fn restart(&mut self) -> Result<(f64, f64)> {
        self.a.mul_into(&self.x, &mut self.q);
        for ((r, &b), &q) in self.r.iter_mut().zip(self.b).zip(&self.q) {
            *r = b - q;
        }
        let dots = self.precondition();
        self.p.copy_from_slice(&self.z);
        Ok(dots)
    }

    fn apply(&mut self) -> Result<f64> {
        self.a.mul_into(&self.p, &mut self.q);
        Ok(self.p.iter().zip(&self.q).map(|(p, q)| p * q).sum())
    }

    fn update(&mut self, alpha: f64) -> Result<(f64, f64)> {
        for (((x, r), &p), &q) in self.x.iter_mut().zip(self.r.iter_mut()).zip(&self.p).zip(&self.q) {
            *x += alpha * p;
            *r -= alpha * q;
        }
        Ok(self.precondition())
    }

    fn direction(&mut self, beta: f64) -> Result<()> {
        for (p, &z) in self.p.iter_mut().zip(&self.z) {
            *p = z + beta * *p;
        }
        Ok(())
    }

    fn solution(&mut self) -> Result<Vec<f64>> {
        Ok(self.x.clone())
    }
}

/// CG's vectors on the device and the launch geometry of its kernels.
struct DeviceCg<'a> {
    rows: Rows<'a>,
    b: Buffer<f64>,
    diag: Buffer<f64>,
    x: Buffer<f64>,
    r: Buffer<f64>,
    z: Buffer<f64>,
    p: Buffer<f64>,
    q: Buffer<f64>,
    /// One partial sum per work-group (`p·q`).
    dot: Buffer<f64>,
    /// Two partial sums per work-group (`r·z`, `r·r`).
    dots: Buffer<f64>,
}

impl<'a> DeviceCg<'a> {
    fn new(csr: &'a DeviceCsr, rhs: &[f64], x0: Option<&[f64]>, diag: Buffer<f64>) -> Result<DeviceCg<'a>> {
        let (dev, n) = (csr.device(), csr.n());
        let rows = Rows::new(csr)?;
        let groups = rows.groups();
        Ok(DeviceCg {
            x: rows.start(x0)?,
            rows,
            b: Buffer::from_slice(dev, rhs)?,
            diag,
            r: Buffer::new(dev, n)?,
            z: Buffer::new(dev, n)?,
            p: Buffer::new(dev, n)?,
            q: Buffer::new(dev, n)?,
            dot: Buffer::new(dev, groups)?,
            dots: Buffer::new(dev, 2 * groups)?,
        })
    }

    /// `q = A v`; returns `v·q`.
    fn spmv(&self, v: &Buffer<f64>) -> Result<f64> {
        let args = [
            ("row_ptr", Arg::buffer(&self.rows.csr.row_ptr)),
            ("cols", Arg::buffer(&self.rows.csr.cols)),
            ("values", Arg::buffer(&self.rows.csr.values)),
            ("p", Arg::buffer(v)),
            ("q", Arg::buffer(&self.q)),
            ("partial", Arg::buffer(&self.dot)),
            ("scratch", self.rows.scratch()),
            ("n", Arg::u32(self.rows.n)),
        ];
        self.rows.launch("sparse_spmv_dot", &args)?;
        Ok(self.dot.to_vec()?.iter().sum())
    }

    /// Sums the pairs of partial sums.
    fn pair_sums(&self) -> Result<(f64, f64)> {
        let parts = self.dots.to_vec()?;
        Ok(parts
            .chunks_exact(2)
            .fold((0.0, 0.0), |(a, b), pair| (a + pair[0], b + pair[1])))
    }
}

impl CgOps for DeviceCg<'_> {
    fn restart(&mut self) -> Result<(f64, f64)> {
        self.spmv(&self.x)?;
        let args = [
            ("b", Arg::buffer(&self.b)),
            ("q", Arg::buffer(&self.q)),
            ("diag", Arg::buffer(&self.diag)),
            ("r", Arg::buffer(&self.r)),
            ("z", Arg::buffer(&self.z)),
            ("p", Arg::buffer(&self.p)),
            ("partial", Arg::buffer(&self.dots)),
            ("scratch", self.rows.scratch()),
            ("n", Arg::u32(self.rows.n)),
        ];
        self.rows.launch("sparse_cg_start", &args)?;
        self.pair_sums()
    }

    fn apply(&mut self) -> Result<f64> {
        self.spmv(&self.p)
    }

    fn update(&mut self, alpha: f64) -> Result<(f64, f64)> {
        let args = [
            ("x", Arg::buffer(&self.x)),
            ("r", Arg::buffer(&self.r)),
            ("z", Arg::buffer(&self.z)),
            ("p", Arg::buffer(&self.p)),
            ("q", Arg::buffer(&self.q)),
            ("diag", Arg::buffer(&self.diag)),
            ("alpha", Arg::f64(alpha)),
            ("partial", Arg::buffer(&self.dots)),
            ("scratch", self.rows.scratch()),
            ("n", Arg::u32(self.rows.n)),
        ];
        self.rows.launch("sparse_cg_update", &args)?;
        self.pair_sums()
    }

    fn direction(&mut self, beta: f64) -> Result<()> {
        let args = [
            ("p", Arg::buffer(&self.p)),
            ("z", Arg::buffer(&self.z)),
            ("beta", Arg::f64(beta)),
            ("n", Arg::u32(self.rows.n)),
        ];
        self.rows.launch("sparse_cg_direction", &args)?;
        Ok(())
    }

    fn solution(&mut self) -> Result<Vec<f64>> {
        self.x.to_vec()
    }
}
