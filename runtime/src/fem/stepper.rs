//! Explicit central-difference stepping of seed 000 (section 5.3, modified CSM scheme):
//! `F += f_ext(t); F -= K_e·U_e; v += F·M⁻¹·dt; u += v·dt; F = C·v` with `C = -α·M`,
//! on the device ([`Stepper`]) and on the host with the same arithmetic ([`HostStepper`]).

use crate::buffer::Buffer;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::fem::element::ElementSpec;
use crate::fem::mesh::{ElementMap, Mesh};
use crate::fem::schedule::{plan, Pass, Schedule};
use crate::program::{Arg, Event, Program};

/// Longitudinal wave speed `c = sqrt(E/ρ)` (seed 000, eq. 3.3.2).
pub fn wave_speed(young: f64, density: f64) -> f64 {
    (young / density).sqrt()
}

/// The largest stable time step of seed 000 eq. 3.3.2: `Δt < Δx / (2 c_max)`.
///
/// ```
/// # use clforge_runtime::fem::stepper::{stability_bound, wave_speed};
/// let c = wave_speed(200e9, 7800.0); // steel, ≈ 5064 m/s
/// assert!((stability_bound(1e-6, c) - 9.87e-11).abs() < 1e-12);
/// ```
pub fn stability_bound(dx_min: f64, c_max: f64) -> f64 {
    dx_min / (2.0 * c_max)
}

/// Checks `dt` against seed 000 eqs. 3.3.1-3.3.2 and explains the bound when it is violated.
pub fn check_time_step(dt: f64, dx_min: f64, c_max: f64) -> Result<()> {
    let bound = stability_bound(dx_min, c_max);
    if !(dt > 0.0 && dt < bound) {
        return Err(Error::InvalidConfig(format!(
            "time step {dt:e} s violates the stability bound Δt < Δx / (2 c_max) = {bound:e} s (seed 000, \
             eqs. 3.3.1-3.3.2) with Δx = {dx_min:e} m the shortest node distance and c_max = sqrt(E/ρ) = \
             {c_max:e} m/s the fastest longitudinal wave speed; choose 0 < dt < {bound:e}"
        )));
    }
    Ok(())
}

/// Checks the spatial resolution of seed 000 eq. 3.3.2: `Δx < c_min / (5 ω_exc)`.
pub fn check_resolution(dx_max: f64, c_min: f64, omega: f64) -> Result<()> {
    let bound = c_min / (5.0 * omega);
    if dx_max >= bound {
        return Err(Error::InvalidConfig(format!(
            "element size {dx_max:e} m is too coarse for excitation ω = {omega:e} rad/s: seed 000 eq. 3.3.2 \
             asks Δx < c_min / (5 ω) = {bound:e} m"
        )));
    }
    Ok(())
}

/// The time dependence of a load.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TimeFunction {
    /// Always 1.
    Constant,
    /// `sin(2π f t)` under a Hann window of `cycles` periods, 0 afterwards.
    WindowedSine {
        /// Frequency in Hz.
        frequency: f64,
        /// Periods under the window.
        cycles: f64,
    },
}

impl TimeFunction {
    /// The value at time `t`.
    pub fn value(&self, t: f64) -> f64 {
        match *self {
            TimeFunction::Constant => 1.0,
            TimeFunction::WindowedSine { frequency, cycles } => {
                let duration = cycles / frequency;
                if !(0.0..=duration).contains(&t) {
                    return 0.0;
                }
                let window = 0.5 * (1.0 - (2.0 * std::f64::consts::PI * t / duration).cos());
                window * (2.0 * std::f64::consts::PI * frequency * t).sin()
            }
        }
    }
}

/// An external force: `F[dofs[i]] += weights[i] · time(t)`.
#[derive(Clone, Debug, PartialEq)]
pub struct Load {
    /// Global DOF indices (`node · dofs + component`), each at most once.
    pub dofs: Vec<u32>,
    /// Force per DOF at time-function value 1.
    pub weights: Vec<f32>,
    /// The time dependence.
    pub time: TimeFunction,
}

impl Load {
    /// A point force `amplitude` on `component` of `node`, element of `dofs` DOFs per node.
    pub fn point(node: usize, dofs: usize, component: usize, amplitude: f32, time: TimeFunction) -> Load {
        Load {
            dofs: vec![(node * dofs + component) as u32],
            weights: vec![amplitude],
            time,
        }
    }

    /// A force `total` spread along a straight edge of equally spaced `nodes` (end nodes take
    /// half a share: the consistent load of linear edges).
    pub fn edge(nodes: &[usize], dofs: usize, component: usize, total: f32, time: TimeFunction) -> Load {
        let segments = nodes.len().saturating_sub(1).max(1) as f32;
        let weights = (0..nodes.len())
            .map(|i| if nodes.len() > 1 && (i == 0 || i + 1 == nodes.len()) { 0.5 } else { 1.0 } * total / segments)
            .collect();
        Load {
            dofs: nodes.iter().map(|&n| (n * dofs + component) as u32).collect(),
            weights,
            time,
        }
    }
}

/// Everything about a model that does not depend on where it runs.
#[derive(Clone, Debug)]
pub struct Model {
    /// The element type.
    pub spec: ElementSpec,
    /// The mesh.
    pub mesh: Mesh,
    /// `K_e` of each material, `nd × nd` row-major (`nd = nodes · dofs`).
    pub stiffness: Vec<Vec<f32>>,
    /// `G_e` of each material, `strains × nd` row-major; empty if stresses are not needed.
    pub stress: Vec<Vec<f32>>,
    /// Material and crack state per element.
    pub elements: ElementMap,
    /// Lumped mass per DOF.
    pub mass: Vec<f32>,
    /// Fixed DOFs (zero velocity: their inverse mass is 0).
    pub fixed: Vec<bool>,
}

impl Model {
    /// One material with stiffness `k` (`nd × nd` row-major) and lumped element mass
    /// `element_mass` shared equally by the element's nodes.
    pub fn new(spec: ElementSpec, mesh: Mesh, k: Vec<f32>, element_mass: f64) -> Result<Model> {
        let nd = spec.nodes * spec.dofs;
        if k.len() != nd * nd {
            return Err(Error::LengthMismatch {
                what: "entries of K_e".into(),
                expected: nd * nd,
                found: k.len(),
            });
        }
        let conn = mesh.connectivity(spec.node_offsets);
        if conn.len() != mesh.element_count() * spec.nodes {
            return Err(Error::LengthMismatch {
                what: "nodes per element of the mesh".into(),
                expected: spec.nodes,
                found: conn.len() / mesh.element_count().max(1),
            });
        }
        let mut mass = vec![0f64; mesh.node_count() * spec.dofs];
        for &n in &conn {
            for d in 0..spec.dofs {
                mass[n as usize * spec.dofs + d] += element_mass / spec.nodes as f64;
            }
        }
        let dofs = mass.len();
        Ok(Model {
            spec,
            elements: ElementMap::uniform(mesh.element_count()),
            mesh,
            stiffness: vec![k],
            stress: vec![],
            mass: mass.into_iter().map(|m| m as f32).collect(),
            fixed: vec![false; dofs],
        })
    }

    /// `nodes · dofs`.
    pub fn nd(&self) -> usize {
        self.spec.nodes * self.spec.dofs
    }

    /// Number of global DOFs.
    pub fn dof_count(&self) -> usize {
        self.mesh.node_count() * self.spec.dofs
    }

    fn validate(&self) -> Result<()> {
        let nd = self.nd();
        let ne = self.mesh.element_count();
        let n = self.dof_count();
        let check = |what: &str, expected: usize, found: usize| {
            if expected == found {
                Ok(())
            } else {
                Err(Error::LengthMismatch {
                    what: what.into(),
                    expected,
                    found,
                })
            }
        };
        check("lumped masses (one per DOF)", n, self.mass.len())?;
        check("fixed flags (one per DOF)", n, self.fixed.len())?;
        check("element materials", ne, self.elements.material.len())?;
        check("element crack flags", ne, self.elements.dead.len())?;
        if self.stiffness.is_empty() || self.stiffness.len() > 254 {
            return Err(Error::InvalidConfig(format!(
                "{} materials given; 1 to 254 allowed",
                self.stiffness.len()
            )));
        }
        for k in &self.stiffness {
            check("entries of K_e", nd * nd, k.len())?;
        }
        for g in &self.stress {
            check("entries of G_e", self.spec.strains * nd, g.len())?;
        }
        if let Some(&m) = self
            .elements
            .material
            .iter()
            .find(|&&m| m as usize >= self.stiffness.len())
        {
            return Err(Error::InvalidConfig(format!(
                "an element uses material {m}, but only {} stiffness matrices are given",
                self.stiffness.len()
            )));
        }
        if let Some(i) = (0..n).find(|&i| !self.fixed[i] && (self.mass[i].is_nan() || self.mass[i] <= 0.0)) {
            return Err(Error::InvalidConfig(format!(
                "DOF {i} is free but has mass {}; give it a positive mass",
                self.mass[i]
            )));
        }
        Ok(())
    }

    /// Inverse mass and damping coefficient (`-α·m`) per DOF; both 0 on fixed DOFs.
    fn integration(&self, alpha: f32) -> (Vec<f32>, Vec<f32>) {
        let minv = self
            .mass
            .iter()
            .zip(&self.fixed)
            .map(|(&m, &f)| if f { 0.0 } else { 1.0 / m })
            .collect();
        let damp = self
            .mass
            .iter()
            .zip(&self.fixed)
            .map(|(&m, &f)| if f { 0.0 } else { -alpha * m })
            .collect();
        (minv, damp)
    }

    /// `½ vᵀ M v + ½ uᵀ K u` (in f64; dead elements store no energy).
    pub fn energy(&self, u: &[f32], v: &[f32]) -> f64 {
        let kinetic: f64 = v
            .iter()
            .zip(&self.mass)
            .map(|(&v, &m)| 0.5 * f64::from(m) * f64::from(v).powi(2))
            .sum();
        let conn = self.mesh.connectivity(self.spec.node_offsets);
        let (nd, d) = (self.nd(), self.spec.dofs);
        let mut strain = 0.0;
        for e in 0..self.mesh.element_count() {
            if self.elements.dead[e] {
                continue;
            }
            let k = &self.stiffness[self.elements.material[e] as usize];
            let ue: Vec<f64> = (0..nd)
                .map(|i| f64::from(u[conn[e * self.spec.nodes + i / d] as usize * d + i % d]))
                .collect();
            for r in 0..nd {
                let ku: f64 = (0..nd).map(|c| f64::from(k[r * nd + c]) * ue[c]).sum();
                strain += 0.5 * ue[r] * ku;
            }
        }
        kinetic + strain
    }
}

/// Time step, damping and stability data of a run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepperConfig {
    /// How element forces are scattered.
    pub schedule: Schedule,
    /// Time step in s; must satisfy [`stability_bound`].
    pub dt: f64,
    /// Mass-proportional damping `C = α·M`.
    pub alpha: f64,
    /// The fastest longitudinal wave speed `sqrt(E/ρ)` over the materials.
    pub c_max: f64,
}

/// 8-lane pairwise sum of the seed's `sum_v8`.
fn sum_v8(p: &[f32; 8]) -> f32 {
    ((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7]))
}

/// Row `r` of `M·U` the way the kernels compute it: `float8` chunks summed by `sum_v8`, then
/// the chunks added left to right. `m` has rows of `ndp` (padded) entries.
fn row_product(m: &[f32], ndp: usize, r: usize, ue: &[f32]) -> f32 {
    let mut acc = 0.0f32;
    for c in 0..ndp / 8 {
        let p: [f32; 8] = std::array::from_fn(|l| m[r * ndp + c * 8 + l] * ue[c * 8 + l]);
        acc = if c == 0 { sum_v8(&p) } else { acc + sum_v8(&p) };
    }
    acc
}

/// Rows of `rows × nd` padded to `ndp` entries.
fn padded(m: &[f32], rows: usize, nd: usize, ndp: usize) -> Vec<f32> {
    let mut out = vec![0.0; rows * ndp];
    for r in 0..rows {
        out[r * ndp..r * ndp + nd].copy_from_slice(&m[r * nd..(r + 1) * nd]);
    }
    out
}

/// The reference: the same step on the host, element by element in element order.
#[derive(Clone, Debug)]
pub struct HostStepper {
    model: Model,
    dt: f32,
    conn: Vec<u32>,
    k: Vec<Vec<f32>>,
    g: Vec<Vec<f32>>,
    minv: Vec<f32>,
    damp: Vec<f32>,
    /// Displacements per DOF.
    pub u: Vec<f32>,
    /// Velocities per DOF (at half steps).
    pub v: Vec<f32>,
    f: Vec<f32>,
    loads: Vec<Load>,
    steps: u64,
}

impl HostStepper {
    /// A host stepper at rest.
    pub fn new(model: &Model, config: &StepperConfig) -> Result<HostStepper> {
        model.validate()?;
        check_time_step(config.dt, model.mesh.min_spacing(), config.c_max)?;
        let nd = model.nd();
        let ndp = nd.div_ceil(8) * 8;
        let (minv, damp) = model.integration(config.alpha as f32);
        let n = model.dof_count();
        Ok(HostStepper {
            conn: model.mesh.connectivity(model.spec.node_offsets),
            k: model.stiffness.iter().map(|k| padded(k, nd, nd, ndp)).collect(),
            g: model
                .stress
                .iter()
                .map(|g| padded(g, model.spec.strains, nd, ndp))
                .collect(),
            model: model.clone(),
            dt: config.dt as f32,
            minv,
            damp,
            u: vec![0.0; n],
            v: vec![0.0; n],
            f: vec![0.0; n],
            loads: vec![],
            steps: 0,
        })
    }

    /// Sets displacements and velocities (and the damping force `F = C·v`).
    pub fn set_state(&mut self, u: &[f32], v: &[f32]) -> Result<()> {
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
        self.loads.push(load);
        Ok(())
    }

    fn element_u(&self, e: usize, ndp: usize) -> Vec<f32> {
        let (n, d) = (self.model.spec.nodes, self.model.spec.dofs);
        let mut ue = vec![0.0; ndp];
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
            let t = self.steps as f64 * f64::from(self.dt);
            for load in &self.loads {
                let s = load.time.value(t) as f32;
                for (&i, &w) in load.dofs.iter().zip(&load.weights) {
                    self.f[i as usize] += w * s;
                }
            }
            for e in 0..self.model.mesh.element_count() {
                if self.model.elements.dead[e] {
                    continue;
                }
                let k = &self.k[self.model.elements.material[e] as usize];
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
    pub fn stress(&self) -> Result<Vec<f32>> {
        let s = self.model.spec.strains;
        if self.g.is_empty() {
            return Err(Error::InvalidConfig(
                "no G_e matrices were given: set `Model::stress`".into(),
            ));
        }
        let ndp = self.model.nd().div_ceil(8) * 8;
        let mut out = vec![0.0; self.model.mesh.element_count() * s];
        for e in 0..self.model.mesh.element_count() {
            if self.model.elements.dead[e] {
                continue;
            }
            let g = &self.g[self.model.elements.material[e] as usize];
            let ue = self.element_u(e, ndp);
            for r in 0..s {
                out[e * s + r] = row_product(g, ndp, r, &ue);
            }
        }
        Ok(out)
    }
}

fn check_load(load: &Load, dofs: usize) -> Result<()> {
    if load.dofs.len() != load.weights.len() || load.dofs.is_empty() {
        return Err(Error::LengthMismatch {
            what: "load weights".into(),
            expected: load.dofs.len(),
            found: load.weights.len(),
        });
    }
    if let Some(&i) = load.dofs.iter().find(|&&i| i as usize >= dofs) {
        return Err(Error::InvalidConfig(format!(
            "load on DOF {i}, but the model has {dofs} DOFs"
        )));
    }
    let mut sorted = load.dofs.clone();
    sorted.sort_unstable();
    if sorted.windows(2).any(|w| w[0] == w[1]) {
        return Err(Error::InvalidConfig(
            "a load names a DOF twice; merge the weights".into(),
        ));
    }
    Ok(())
}

struct DeviceLoad {
    dofs: Buffer<i32>,
    weights: Buffer<f32>,
    time: TimeFunction,
    n: usize,
}

/// The explicit step on an OpenCL device, for any [`Schedule`].
pub struct Stepper {
    spec: ElementSpec,
    schedule: Schedule,
    program: Program,
    passes: Vec<Pass>,
    mesh_dims: [i32; 3],
    dt: f32,
    bound: f64,
    n_dofs: usize,
    n_elements: usize,
    k: Buffer<f32>,
    k_all: Buffer<f32>,
    g: Option<Buffer<f32>>,
    emat: Buffer<u8>,
    elem_nodes: Buffer<i32>,
    elem_nodes_sorted: Buffer<i32>,
    control: Buffer<i32>,
    masks: Buffer<u32>,
    minv: Buffer<f32>,
    damp: Buffer<f32>,
    u: Buffer<f32>,
    u_alt: Buffer<f32>,
    v: Buffer<f32>,
    f: Buffer<f32>,
    loads: Vec<DeviceLoad>,
    steps: u64,
    /// Events of the kernels the last `step` call queued.
    last_events: Vec<Event>,
}

impl std::fmt::Debug for Stepper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stepper")
            .field("element", &self.spec.name)
            .field("schedule", &self.schedule)
            .field("steps", &self.steps)
            .finish_non_exhaustive()
    }
}

impl Stepper {
    /// Builds the element's program for `config.schedule`, checks the time step against the
    /// stability bound and uploads the model at rest.
    pub fn new(device: &Device, model: &Model, config: &StepperConfig) -> Result<Stepper> {
        model.validate()?;
        let bound = stability_bound(model.mesh.min_spacing(), config.c_max);
        check_time_step(config.dt, model.mesh.min_spacing(), config.c_max)?;
        let spec = model.spec;
        let schedule = config.schedule;
        let (nd, ne) = (model.nd(), model.mesh.element_count());
        let ndp = nd.div_ceil(8) * 8;
        let uniform = model.elements.is_uniform();
        let needs_uniform = !matches!(schedule, Schedule::BlockedMaterial(_));
        if needs_uniform && !uniform {
            return Err(Error::InvalidConfig(format!(
                "schedule `{}` keeps one K_e in constant memory for all elements; a model with several materials \
                 or cracked elements needs `Schedule::BlockedMaterial`",
                schedule.suffix()
            )));
        }
        let mesh_dims = match &model.mesh {
            Mesh::Structured(m) => m.elements.map(|v| v as i32),
            Mesh::Unstructured(_) => [ne as i32, 1, 1],
        };
        let conn = model.mesh.connectivity(spec.node_offsets);
        // Unstructured: elements stored colour by colour.
        let (sorted, colour_sizes) = match (&model.mesh, schedule) {
            (Mesh::Unstructured(m), Schedule::Unstructured) => {
                let (colours, count) = m.greedy_colours()?;
                let mut order: Vec<usize> = (0..ne).collect();
                order.sort_by_key(|&e| colours[e]);
                let sizes = (0..count as u32)
                    .map(|c| colours.iter().filter(|&&x| x == c).count())
                    .collect();
                let sorted: Vec<i32> = order
                    .iter()
                    .flat_map(|&e| conn[e * spec.nodes..(e + 1) * spec.nodes].iter().map(|&n| n as i32))
                    .collect();
                (sorted, sizes)
            }
            _ => (vec![0], vec![]),
        };
        let passes = plan(schedule, &model.mesh, &colour_sizes)?;
        let options = schedule.options();
        let program = device.program(spec.name, spec.source, &options)?;

        let k_all: Vec<f32> = model.stiffness.iter().flat_map(|k| padded(k, nd, nd, ndp)).collect();
        let g_all: Vec<f32> = model
            .stress
            .iter()
            .flat_map(|g| padded(g, spec.strains, nd, ndp))
            .collect();
        let emat: Vec<u8> = (0..ne)
            .map(|e| {
                if model.elements.dead[e] {
                    255
                } else {
                    model.elements.material[e]
                }
            })
            .collect();
        let (control, masks) = match (schedule, &model.mesh) {
            (Schedule::BlockedMaterial(b), Mesh::Structured(m)) => block_control(b, m, &model.elements)?,
            _ => (vec![0; 4], vec![0]),
        };
        let (minv, damp) = model.integration(config.alpha as f32);
        let n = model.dof_count();
        let zeros = vec![0.0f32; n];
        Ok(Stepper {
            spec,
            schedule,
            program,
            passes,
            mesh_dims,
            dt: config.dt as f32,
            bound,
            n_dofs: n,
            n_elements: ne,
            k: Buffer::from_slice(device, &k_all[..nd * ndp])?,
            k_all: Buffer::from_slice(device, &k_all)?,
            g: if g_all.is_empty() {
                None
            } else {
                Some(Buffer::from_slice(device, &g_all)?)
            },
            emat: Buffer::from_slice(device, &emat)?,
            elem_nodes: Buffer::from_slice(device, &conn.iter().map(|&c| c as i32).collect::<Vec<_>>())?,
            elem_nodes_sorted: Buffer::from_slice(device, &sorted)?,
            control: Buffer::from_slice(device, &control)?,
            masks: Buffer::from_slice(device, &masks)?,
            minv: Buffer::from_slice(device, &minv)?,
            damp: Buffer::from_slice(device, &damp)?,
            u: Buffer::from_slice(device, &zeros)?,
            u_alt: Buffer::from_slice(device, &zeros)?,
            v: Buffer::from_slice(device, &zeros)?,
            f: Buffer::from_slice(device, &zeros)?,
            loads: vec![],
            steps: 0,
            last_events: Vec::new(),
        })
    }

    /// The stability bound `Δx / (2 c_max)` this run was checked against.
    pub fn stability_bound(&self) -> f64 {
        self.bound
    }

    /// Steps taken so far.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// Simulated time `steps · dt`.
    pub fn time(&self) -> f64 {
        self.steps as f64 * f64::from(self.dt)
    }

    /// Sets displacements and velocities (and the damping force `F = C·v`).
    pub fn set_state(&mut self, u: &[f32], v: &[f32]) -> Result<()> {
        self.u.write(u)?;
        self.v.write(v)?;
        let damp = self.damp.to_vec()?;
        let f: Vec<f32> = damp.iter().zip(v).map(|(&c, &v)| c * v).collect();
        self.f.write(&f)
    }

    /// Adds an external force.
    pub fn add_load(&mut self, load: &Load) -> Result<()> {
        check_load(load, self.n_dofs)?;
        let device = self.u.device().clone();
        let dofs: Vec<i32> = load.dofs.iter().map(|&i| i as i32).collect();
        self.loads.push(DeviceLoad {
            dofs: Buffer::from_slice(&device, &dofs)?,
            weights: Buffer::from_slice(&device, &load.weights)?,
            time: load.time,
            n: dofs.len(),
        });
        Ok(())
    }

    fn kernel(&self, what: &str) -> String {
        format!("{}_{what}", self.spec.name)
    }

    /// Runs `n` steps (queued; reading results waits for them).
    pub fn step(&mut self, n: usize) -> Result<()> {
        let mut events = Vec::new();
        let [nx, ny, nz] = self.mesh_dims;
        let dt = self.dt;
        for _ in 0..n {
            let s_t = |l: &DeviceLoad| l.time.value(self.steps as f64 * f64::from(dt)) as f32;
            if self.schedule == Schedule::Gather {
                let pass = &self.passes[0];
                let args = [
                    Arg::buffer(&self.k),
                    Arg::buffer(&self.minv),
                    Arg::buffer(&self.damp),
                    Arg::buffer(&self.u),
                    Arg::buffer(&self.u_alt),
                    Arg::buffer(&self.v),
                    Arg::f32(dt),
                    Arg::i32(nx),
                    Arg::i32(ny),
                    Arg::i32(nz),
                ];
                events.push(self.program.launch(&self.kernel("gather"), &pass.global, None, &args)?);
                std::mem::swap(&mut self.u, &mut self.u_alt);
                for l in &self.loads {
                    let args = [
                        Arg::buffer(&l.dofs),
                        Arg::buffer(&l.weights),
                        Arg::f32(s_t(l)),
                        Arg::buffer(&self.minv),
                        Arg::buffer(&self.u),
                        Arg::buffer(&self.v),
                        Arg::f32(dt),
                        Arg::i32(l.n as i32),
                    ];
                    events.push(self.program.launch(&self.kernel("kick"), &[l.n], None, &args)?);
                }
                self.steps += 1;
                continue;
            }
            for l in &self.loads {
                let args = [
                    Arg::buffer(&l.dofs),
                    Arg::buffer(&l.weights),
                    Arg::f32(s_t(l)),
                    Arg::buffer(&self.f),
                    Arg::i32(l.n as i32),
                ];
                events.push(self.program.launch(&self.kernel("load"), &[l.n], None, &args)?);
            }
            let name = self.kernel(self.schedule.suffix());
            for p in &self.passes {
                let [sx, sy, sz] = p.shift;
                let local = p.local.as_deref();
                // Every element-force kernel ends with (u, F) and, on structured grids, the
                // grid size and the colour's shift; only the leading buffers differ.
                let uf = [Arg::buffer(&self.u), Arg::buffer(&self.f)];
                let grid = [nx, ny, nz, sx, sy, sz].map(Arg::i32);
                let args: Vec<Arg<'_>> = match self.schedule {
                    Schedule::Coloured => [Arg::buffer(&self.k), Arg::buffer(&self.elem_nodes)]
                        .into_iter()
                        .chain(uf)
                        .chain(grid)
                        .collect(),
                    Schedule::Unstructured => [Arg::buffer(&self.k), Arg::buffer(&self.elem_nodes_sorted)]
                        .into_iter()
                        .chain(uf)
                        .chain([Arg::i32(p.range.0 as i32), Arg::i32(p.range.1 as i32)])
                        .collect(),
                    Schedule::Computed | Schedule::Blocked(_) => {
                        [Arg::buffer(&self.k)].into_iter().chain(uf).chain(grid).collect()
                    }
                    Schedule::BlockedMaterial(_) => [
                        Arg::buffer(&self.control),
                        Arg::buffer(&self.masks),
                        Arg::buffer(&self.k_all),
                    ]
                    .into_iter()
                    .chain(uf)
                    .chain(grid)
                    .collect(),
                    Schedule::Gather => continue,
                };
                events.push(self.program.launch(&name, &p.global, local, &args)?);
            }
            let args = [
                Arg::buffer(&self.minv),
                Arg::buffer(&self.damp),
                Arg::buffer(&self.u),
                Arg::buffer(&self.v),
                Arg::buffer(&self.f),
                Arg::f32(dt),
                Arg::i32(self.n_dofs as i32),
            ];
            events.push(
                self.program
                    .launch(&self.kernel("integrate"), &[self.n_dofs], None, &args)?,
            );
            self.steps += 1;
        }
        self.last_events = events;
        Ok(())
    }

    /// Device time of the kernels the last [`Stepper::step`] call queued, in nanoseconds, from
    /// OpenCL profiling events (waits for them).
    pub fn last_step_ns(&self) -> Result<u64> {
        self.last_events.iter().map(Event::duration_ns).sum()
    }

    /// Waits until every queued step has run.
    pub fn finish(&self) -> Result<()> {
        self.u.device().finish()
    }

    /// Displacements per DOF (waits for queued steps).
    pub fn displacement(&self) -> Result<Vec<f32>> {
        self.u.to_vec()
    }

    /// Velocities per DOF, at the last half step.
    pub fn velocity(&self) -> Result<Vec<f32>> {
        self.v.to_vec()
    }

    /// `σ = G_e·U_e` per element (`strains` values each, 0 for dead elements).
    pub fn stress(&self) -> Result<Vec<f32>> {
        let g = self
            .g
            .as_ref()
            .ok_or_else(|| Error::InvalidConfig("no G_e matrices were given: set `Model::stress`".into()))?;
        let device = self.u.device().clone();
        let out = Buffer::<f32>::new(&device, self.n_elements * self.spec.strains)?;
        let [nx, ny, nz] = self.mesh_dims;
        if self.schedule == Schedule::Unstructured {
            let args = [
                Arg::buffer(g),
                Arg::buffer(&self.emat),
                Arg::buffer(&self.elem_nodes),
                Arg::buffer(&self.u),
                Arg::buffer(&out),
                Arg::i32(self.n_elements as i32),
            ];
            self.program
                .launch(&self.kernel("stress_unstructured"), &[self.n_elements], None, &args)?;
        } else {
            let args = [
                Arg::buffer(g),
                Arg::buffer(&self.emat),
                Arg::buffer(&self.u),
                Arg::buffer(&out),
                Arg::i32(nx),
                Arg::i32(ny),
                Arg::i32(nz),
            ];
            let global = self.mesh_dims.map(|v| v as usize);
            self.program.launch(&self.kernel("stress"), &global, None, &args)?;
        }
        out.to_vec()
    }
}

/// Per-block control words `(has_cracks, mask index, material, 0)` and crack masks of seed
/// algorithm 4. Every element of a block must have the block's material.
fn block_control(
    b: crate::fem::schedule::Blocking,
    m: &crate::fem::mesh::StructuredMesh,
    map: &ElementMap,
) -> Result<(Vec<i32>, Vec<u32>)> {
    let nb = b.blocks(m);
    let words = b.mask_words();
    let mut control = Vec::with_capacity(nb.iter().product::<usize>() * 4);
    let mut masks = Vec::new();
    for bz in 0..nb[2] {
        for by in 0..nb[1] {
            for bx in 0..nb[0] {
                let mut material = None;
                let mut mask = vec![0u32; words];
                let mut cracked = false;
                for lx in 0..b.l_x {
                    for row in 0..b.rows() {
                        let (ex, ey) = (bx * b.l_x + lx, by * b.rows() + row);
                        if ex >= m.elements[0] || ey >= m.elements[1] {
                            continue;
                        }
                        let e = m.element_index([ex, ey, bz]);
                        let mat = map.material[e];
                        if *material.get_or_insert(mat) != mat {
                            return Err(Error::InvalidConfig(format!(
                                "block ({bx}, {by}, {bz}) of {} x {} elements mixes materials {} and {mat}; \
                                 `Schedule::BlockedMaterial` keeps one material per block",
                                b.l_x,
                                b.rows(),
                                material.unwrap_or(mat)
                            )));
                        }
                        if map.dead[e] {
                            let bit = lx * b.rows() + row;
                            mask[bit / 32] |= 1 << (bit % 32);
                            cracked = true;
                        }
                    }
                }
                let index = if cracked { masks.len() / words } else { 0 };
                if cracked {
                    masks.extend(mask);
                }
                control.extend([i32::from(cracked), index as i32, i32::from(material.unwrap_or(0)), 0]);
            }
        }
    }
    if masks.is_empty() {
        masks = vec![0; words];
    }
    Ok((control, masks))
}
