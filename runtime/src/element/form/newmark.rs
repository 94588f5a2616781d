//! Second-order problems `M ü + C u̇ + K u = f` by the Newmark-β family (Newmark 1959) over
//! assembled form matrices: β = ¼, γ = ½ is the implicit average-acceleration rule
//! (unconditionally stable, second order, no numerical damping); β = 0, γ = ½ is central
//! differences (explicit in `M`, stable below `Δt = 2/ω_max`). Each step solves
//! `(M + γΔt C + βΔt² K) a⁺ = f⁺ − C ṽ − K ũ` on the device (CG when symmetric, BiCGStab
//! otherwise) after the predictors `ũ = u + Δt v + (½ − β)Δt² a`, `ṽ = v + (1 − γ)Δt a`, then
//! `u⁺ = ũ + βΔt² a⁺`, `v⁺ = ṽ + γΔt a⁺`. Fixed DOFs keep their values (zero velocity and
//! acceleration).

use super::time::{Constrained, Fixed};
use crate::device::Device;
use crate::element::sparse::{CgOptions, CgReport, HostCsr};
use crate::error::{Error, Result};

/// Displacement, velocity and acceleration, one entry per DOF.
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    /// `u`.
    pub u: Vec<f64>,
    /// `u̇`.
    pub v: Vec<f64>,
    /// `ü`.
    pub a: Vec<f64>,
}

/// The Newmark-β stepper: matrices on the host for the products, the step's system on the device.
pub struct Newmark {
    m: HostCsr,
    k: HostCsr,
    c: Option<HostCsr>,
    beta: f64,
    gamma: f64,
    dt: f64,
    fixed: Vec<bool>,
    system: Constrained,
    mass: Constrained,
    opts: CgOptions,
}

impl Newmark {
    /// `0 ≤ β ≤ ½`, `½ ≤ γ ≤ 1` (below ½ the rule adds energy), `dt` positive and finite; `M`, `K`
    /// (and `C`, if any) of one assembly. `fixed` holds the Dirichlet values. For β < γ/2
    /// (conditionally stable, central differences at β = 0) a `dt` beyond the undamped limit of
    /// `λ_max(M⁻¹K)` is [`Error::UnstableTimeStep`].
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        dev: &Device,
        m: &HostCsr,
        k: &HostCsr,
        c: Option<&HostCsr>,
        (beta, gamma): (f64, f64),
        dt: f64,
        fixed: &Fixed,
        opts: CgOptions,
    ) -> Result<Newmark> {
        if !((0.0..=0.5).contains(&beta) && (0.5..=1.0).contains(&gamma) && dt > 0.0 && dt.is_finite()) {
            return Err(Error::InvalidConfig(format!(
                "Newmark β = {beta} must be in [0, ½], γ = {gamma} in [½, 1] and Δt = {dt} positive and finite \
                 (β = ¼, γ = ½: average acceleration; β = 0, γ = ½: central differences)"
            )));
        }
        for (name, other) in [("K", Some(k)), ("C", c)] {
            if other.is_some_and(|o| o.pattern() != m.pattern()) {
                return Err(Error::InvalidConfig(format!(
                    "M and {name} have different sparsity patterns; assemble them from the same mesh"
                )));
            }
        }
        if beta < 0.5 * gamma {
            super::bound::check_newmark_step(beta, gamma, dt, super::bound::lambda_max_assembled(m, k)?)?;
        }
        let values: Vec<f64> = (0..m.nnz())
            .map(|i| m.values()[i] + gamma * dt * c.map_or(0.0, |c| c.values()[i]) + beta * dt * dt * k.values()[i])
            .collect();
        let a = HostCsr::new(m.pattern().clone(), values)?;
        // Accelerations of fixed DOFs are zero.
        let still = Fixed {
            dofs: fixed.dofs.clone(),
            values: vec![0.0; fixed.dofs.len()],
        };
        let mut is_fixed = vec![false; m.n()];
        for &d in &fixed.dofs {
            if let Some(f) = is_fixed.get_mut(d as usize) {
                *f = true;
            }
        }
        Ok(Newmark {
            m: m.clone(),
            k: k.clone(),
            c: c.cloned(),
            beta,
            gamma,
            dt,
            fixed: is_fixed,
            system: Constrained::new(dev, &a, &still)?,
            mass: Constrained::new(dev, m, &still)?,
            opts,
        })
    }

    /// `f − K u − C v` (f = 0 when `None`).
    fn residual(&self, u: &[f64], v: &[f64], f: Option<&[f64]>) -> Result<Vec<f64>> {
        let ku = self.k.mul(u)?;
        let cv = match &self.c {
            Some(c) => c.mul(v)?,
            None => vec![0.0; u.len()],
        };
        let mut b: Vec<f64> = ku.iter().zip(&cv).map(|(k, c)| -k - c).collect();
        if let Some(f) = f {
            if f.len() != b.len() {
                return Err(Error::LengthMismatch {
                    what: "load (one per DOF)".into(),
                    expected: b.len(),
                    found: f.len(),
                });
            }
            b.iter_mut().zip(f).for_each(|(bi, fi)| *bi += fi);
        }
        Ok(b)
    }

    /// The state at rest or moving: `u`, `v` given, `a = M⁻¹ (f − K u − C v)` solved on the device.
    pub fn start(&self, u: Vec<f64>, v: Vec<f64>, f: Option<&[f64]>) -> Result<State> {
        let n = self.m.n();
        for (what, len) in [("displacements", u.len()), ("velocities", v.len())] {
            if len != n {
                return Err(Error::LengthMismatch {
                    what: format!("initial {what} (one per DOF)"),
                    expected: n,
                    found: len,
                });
            }
        }
        let b = self.residual(&u, &v, f)?;
        let a = self.mass.solve(b, &vec![0.0; n], &self.opts)?.x;
        Ok(State { u, v, a })
    }

    /// One step of the state under the load `f` at the new time (`None`: no load).
    pub fn step(&self, s: &mut State, f: Option<&[f64]>) -> Result<CgReport> {
        let (dt, beta, gamma) = (self.dt, self.beta, self.gamma);
        let n = self.m.n();
        if s.u.len() != n || s.v.len() != n || s.a.len() != n {
            return Err(Error::LengthMismatch {
                what: "Newmark state (one entry per DOF in u, v and a)".into(),
                expected: n,
                found: s.u.len().min(s.v.len()).min(s.a.len()),
            });
        }
        let mut up = vec![0.0; n];
        let mut vp = vec![0.0; n];
        for i in 0..n {
            if self.fixed[i] {
                (up[i], vp[i]) = (s.u[i], 0.0);
            } else {
                up[i] = s.u[i] + dt * s.v[i] + (0.5 - beta) * dt * dt * s.a[i];
                vp[i] = s.v[i] + (1.0 - gamma) * dt * s.a[i];
            }
        }
        let b = self.residual(&up, &vp, f)?;
        let report = self.system.solve(b, &s.a, &self.opts)?;
        for i in 0..n {
            let a = if self.fixed[i] { 0.0 } else { report.x[i] };
            s.u[i] = up[i] + beta * dt * dt * a;
            s.v[i] = vp[i] + gamma * dt * a;
            s.a[i] = a;
        }
        Ok(report)
    }
}
