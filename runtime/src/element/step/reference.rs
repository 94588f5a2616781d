//! The host reference of the explicit step, [`HostStepper`], and the mirror of the kernels'
//! arithmetic (`sum_v8`, row products over padded rows) that makes it agree with them.

use crate::element::load::{check_load, Load};
use crate::element::problem::{Model, StepperConfig};
use crate::element::stability::{check_time_step, StabilityBound};
use crate::element::step::real::Real;
use crate::error::{Error, Result};

/// 8-lane pairwise sum of the seed's `sum_v8`.
fn sum_v8<R: Real>(p: &[R; 8]) -> R {
    ((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7]))
}

/// Row `r` of `M·U` the way the kernels compute it: `float8` chunks summed by `sum_v8`, then
/// the chunks added left to right. `m` has rows of `ndp` (padded) entries.
fn row_product<R: Real>(m: &[R], ndp: usize, r: usize, ue: &[R]) -> R {
    let mut acc = R::default();
    for c in 0..ndp / 8 {
        let p: [R; 8] = std::array::from_fn(|l| m[r * ndp + c * 8 + l] * ue[c * 8 + l]);
        acc = if c == 0 { sum_v8(&p) } else { acc + sum_v8(&p) };
    }
    acc
}

/// Rows of `rows × nd` padded to `ndp` entries.
pub(crate) fn padded<T: Copy + Default>(m: &[T], rows: usize, nd: usize, ndp: usize) -> Vec<T> {
    let mut out = vec![T::default(); rows * ndp];
    for r in 0..rows {
        out[r * ndp..r * ndp + nd].copy_from_slice(&m[r * nd..(r + 1) * nd]);
    }
    out
}

/// The reference: the same step on the host, element by element in element order, in
/// precision `R` (`f32` by default, or `f64`): the model's matrices, masses and loads rounded to
/// `R` as the device steppers round them, and every operation in `R`.
#[derive(Clone, Debug)]
pub struct HostStepper<R: Real = f32> {
    model: Model,
    dt: R,
    conn: Vec<u32>,
    k: Vec<Vec<R>>,
    g: Vec<Vec<R>>,
    minv: Vec<R>,
    damp: Vec<R>,
    /// Displacements per DOF.
    pub u: Vec<R>,
    /// Velocities per DOF (at half steps).
    pub v: Vec<R>,
    f: Vec<R>,
    loads: Vec<(Load, Vec<R>)>,
    steps: u64,
    bound: Option<StabilityBound>,
}

impl HostStepper {
    /// An `f32` host stepper at rest, after the checks of
    /// [`Stepper::new`](crate::element::plan::Stepper::new): a valid model and a time step within
    /// the stability bound. [`HostStepper::with_precision`] steps in `f64`.
    pub fn new(model: &Model, config: &StepperConfig) -> Result<HostStepper> {
        HostStepper::with_precision(model, config)
    }

    /// An `f32` host stepper at rest that skips the time-step check (the model is still
    /// validated): for experiments that probe the stability bound, such as showing that a run
    /// just above it grows without bound. [`HostStepper::stability_bound`] is `None`.
    pub fn new_unchecked(model: &Model, config: &StepperConfig) -> Result<HostStepper> {
        HostStepper::with_precision_unchecked(model, config)
    }
}

impl<R: Real> HostStepper<R> {
    /// As [`HostStepper::new`] in precision `R` (`HostStepper::<f64>::with_precision`).
    pub fn with_precision(model: &Model, config: &StepperConfig) -> Result<HostStepper<R>> {
        let bound = check_time_step(model, config.dt, config.alpha, config.c_max)?;
        Self::build(model, config, Some(bound))
    }

    /// As [`HostStepper::new_unchecked`] in precision `R`.
    pub fn with_precision_unchecked(model: &Model, config: &StepperConfig) -> Result<HostStepper<R>> {
        model.validate()?;
        Self::build(model, config, None)
    }

    /// The stability bound the time step was checked against (`None` from
    /// [`HostStepper::new_unchecked`]).
    pub fn stability_bound(&self) -> Option<&StabilityBound> {
        self.bound.as_ref()
    }

    fn build(model: &Model, config: &StepperConfig, bound: Option<StabilityBound>) -> Result<HostStepper<R>> {
        let nd = model.nd();
        let ndp = nd.div_ceil(8) * 8;
        let (minv, damp) = model.integration(config.alpha);
        let rounded = |m: &Vec<f64>| m.iter().map(|&v| R::of(v)).collect::<Vec<R>>();
        let n = model.dof_count();
        Ok(HostStepper {
            conn: model.mesh.connectivity(model.spec.node_offsets),
            k: model
                .stiffness
                .iter()
                .map(|k| padded(&rounded(k), nd, nd, ndp))
                .collect(),
            g: model
                .stress
                .iter()
                .map(|g| padded(&rounded(g), model.spec.strains, nd, ndp))
                .collect(),
            model: model.clone(),
            dt: R::of(config.dt),
            minv,
            damp,
            u: vec![R::default(); n],
            v: vec![R::default(); n],
            f: vec![R::default(); n],
            loads: vec![],
            steps: 0,
            bound,
        })
    }

    /// Sets displacements and velocities (and the damping force `F = C·v`).
    pub fn set_state(&mut self, u: &[R], v: &[R]) -> Result<()> {
        let n = self.model.dof_count();
        for (what, x) in [("displacements", u), ("velocities", v)] {
            if x.len() != n {
                return Err(Error::LengthMismatch {
                    what: what.into(),
                    expected: n,
                    found: x.len(),
                });
            }
        }
        self.u = u.to_vec();
        self.v = v.to_vec();
        self.f = self.damp.iter().zip(v).map(|(&c, &v)| c * v).collect();
        Ok(())
    }

    /// Adds an external force.
    pub fn add_load(&mut self, load: Load) -> Result<()> {
        check_load(&load, self.model.dof_count())?;
        let weights = load.weights.iter().map(|&w| R::of(w)).collect();
        self.loads.push((load, weights));
        Ok(())
    }

    fn element_u(&self, e: usize, ndp: usize) -> Vec<R> {
        let (n, d) = (self.model.spec.nodes, self.model.spec.dofs);
        let mut ue = vec![R::default(); ndp];
        for (a, &node) in self.conn[e * n..(e + 1) * n].iter().enumerate() {
            for k in 0..d {
                ue[a * d + k] = self.u[node as usize * d + k];
            }
        }
        ue
    }

    /// Runs `n` steps.
    pub fn step(&mut self, n: usize) {
        let (nodes, d) = (self.model.spec.nodes, self.model.spec.dofs);
        let nd = nodes * d;
        let ndp = nd.div_ceil(8) * 8;
        for _ in 0..n {
            let t = self.steps as f64 * self.dt.widen();
            for (load, weights) in &self.loads {
                let s = R::of(load.time.value(t));
                for (&i, &w) in load.dofs.iter().zip(weights) {
                    self.f[i as usize] += w * s;
                }
            }
            for e in 0..self.model.mesh.element_count() {
                if self.model.elements.dead[e] {
                    continue;
                }
                let k = &self.k[self.model.matrix_index(e)];
                let ue = self.element_u(e, ndp);
                for r in 0..nd {
                    let node = self.conn[e * nodes + r / d] as usize;
                    self.f[node * d + r % d] -= row_product(k, ndp, r, &ue);
                }
            }
            for i in 0..self.u.len() {
                let vv = self.v[i] + self.f[i] * self.minv[i] * self.dt;
                self.u[i] += vv * self.dt;
                self.v[i] = vv;
                self.f[i] = self.damp[i] * vv;
            }
            self.steps += 1;
        }
    }

    /// `σ = G_e·U_e` per element (`strains` values each; 0 for dead elements).
    pub fn stress(&self) -> Result<Vec<R>> {
        let s = self.model.spec.strains;
        if self.g.is_empty() {
            return Err(Error::InvalidConfig(
                "no G_e matrices were given: set `Model::stress`".into(),
            ));
        }
        let ndp = self.model.nd().div_ceil(8) * 8;
        let mut out = vec![R::default(); self.model.mesh.element_count() * s];
        for e in 0..self.model.mesh.element_count() {
            if self.model.elements.dead[e] {
                continue;
            }
            let g = &self.g[self.model.matrix_index(e)];
            let ue = self.element_u(e, ndp);
            for r in 0..s {
                out[e * s + r] = row_product(g, ndp, r, &ue);
            }
        }
        Ok(out)
    }
}
