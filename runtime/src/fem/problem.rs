//! The problem description [`Model`]: element type, mesh, materials, masses and fixed DOFs,
//! with its validation and energy; and [`StepperConfig`], how a run steps it.

use crate::error::{Error, Result};
use crate::fem::element::{Element, ElementSpec};
use crate::fem::mesh::{ElementMap, Mesh};
use crate::fem::schedule::Schedule;
use crate::fem::{geometry, matrices, Matrix};

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
    ///
    /// The mesh must hold elements of `spec` ([`geometry::check_mesh`]: a structured mesh of
    /// the element's order, an unstructured one of its nodes per element) and none of its
    /// elements may be inverted ([`geometry::check_orientation`]).
    pub fn new(spec: ElementSpec, mesh: Mesh, k: Vec<f32>, element_mass: f64) -> Result<Model> {
        geometry::check_orientation(&spec, &mesh)?;
        if !(element_mass.is_finite() && element_mass > 0.0) {
            return Err(Error::InvalidConfig(format!(
                "element mass {element_mass} must be positive and finite"
            )));
        }
        let nd = spec.nd();
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
        let mut mass = dof_vec(&spec, &mesh)?;
        for &n in &conn {
            for d in 0..spec.dofs {
                mass[n as usize * spec.dofs + d] += element_mass / spec.nodes as f64;
            }
        }
        let dofs = mass.len();
        Ok(Model {
            spec,
            elements: ElementMap::uniform(mesh.element_count())?,
            mesh,
            stiffness: vec![k],
            stress: vec![],
            mass: mass.into_iter().map(|m| m as f32).collect(),
            fixed: vec![false; dofs],
        })
    }

    /// The model of element type `E` on `mesh` in one material: `K_e`, `G_e` and the lumped
    /// masses computed from the element's own matrices (`E::stiffness`, `E::stress_matrix`,
    /// `E::mass_lumped`) at the mesh's element geometry. The device kernels share one `K_e`
    /// per material, so every element must be a translate of element 0; a mesh whose elements
    /// differ in shape or size is an error rather than a silently wrong model.
    ///
    /// The mesh must hold elements of `E` ([`geometry::check_mesh`]) and no element may be
    /// inverted or degenerate: `det J > 0` at every quadrature point and node of `E`
    /// ([`Error::InvertedElement`] names the element).
    pub fn of<E: Element>(mesh: Mesh, material: &E::Material) -> Result<Model> {
        let spec = E::spec();
        geometry::check_mesh(&spec, &mesh)?;
        let ne = mesh.element_count();
        let conn = mesh.connectivity(spec.node_offsets);
        if ne == 0 || conn.len() != ne * spec.nodes {
            return Err(Error::InvalidConfig(format!(
                "a mesh of {ne} elements with {} node indices cannot hold `{}` elements of {} nodes",
                conn.len(),
                spec.name,
                spec.nodes
            )));
        }
        let first = mesh.element_coords(spec.node_offsets, 0);
        check_orientation::<E>(&first, 0)?;
        let shape =
            |c: &[[f64; 3]]| -> Vec<[f64; 3]> { c.iter().map(|p| std::array::from_fn(|k| p[k] - c[0][k])).collect() };
        let reference = shape(&first);
        let size = reference.iter().flatten().fold(0.0f64, |m, &x| m.max(x.abs()));
        for e in 1..ne {
            let other = shape(&mesh.element_coords(spec.node_offsets, e));
            let off = reference
                .iter()
                .flatten()
                .zip(other.iter().flatten())
                .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
            if off.is_nan() || off > 1e-9 * size {
                // An inverted element differs from element 0 too: say which it is.
                check_orientation::<E>(&mesh.element_coords(spec.node_offsets, e), e)?;
                return Err(Error::InvalidConfig(format!(
                    "element {e} of the mesh differs in shape from element 0 (by {off:.3e}); the device \
                     kernels share one K_e per material, so `Model::of` needs congruent, equally oriented elements"
                )));
            }
        }
        let coords: Vec<&[f64]> = first.iter().map(|p| &p[..spec.dim]).collect();
        let to_f32 = |m: &Matrix| m.data().iter().map(|&v| v as f32).collect::<Vec<f32>>();
        let k = matrices::stiffness::<E, _>(&coords, material)?;
        let g = matrices::stress_matrix::<E, _>(&coords, material)?;
        let lumped = matrices::mass_lumped::<E, _>(&coords, material)?;
        let mut mass = dof_vec(&spec, &mesh)?;
        for e in 0..ne {
            for (a, &n) in conn[e * spec.nodes..(e + 1) * spec.nodes].iter().enumerate() {
                for d in 0..spec.dofs {
                    mass[n as usize * spec.dofs + d] += lumped[a];
                }
            }
        }
        let dofs = mass.len();
        Ok(Model {
            spec,
            elements: ElementMap::uniform(ne)?,
            mesh,
            stiffness: vec![to_f32(&k)],
            stress: vec![to_f32(&g)],
            mass: mass.into_iter().map(|m| m as f32).collect(),
            fixed: vec![false; dofs],
        })
    }

    /// `nodes · dofs`.
    pub fn nd(&self) -> usize {
        self.spec.nd()
    }

    /// Number of global DOFs (saturating at `usize::MAX`; [`Model::validate`] refuses that).
    pub fn dof_count(&self) -> usize {
        self.mesh.node_count().saturating_mul(self.spec.dofs)
    }

    /// Checks everything the steppers rely on, since the fields are public: the mesh holds
    /// elements of `spec` and none is inverted ([`geometry::check_orientation`]), one mass and
    /// fixed flag per DOF, one material and crack flag per element, 1 to 254 matrices of the
    /// element's sizes, every element's material among them, a positive finite mass on every
    /// free DOF.
    pub fn validate(&self) -> Result<()> {
        geometry::check_orientation(&self.spec, &self.mesh)?;
        self.check_sizes()
    }

    /// [`Model::validate`] without the element orientations: what indexing relies on.
    fn check_sizes(&self) -> Result<()> {
        geometry::check_mesh(&self.spec, &self.mesh)?;
        self.mesh
            .node_count()
            .checked_mul(self.spec.dofs)
            .ok_or_else(|| Error::TooLarge {
                what: format!("a model of {} nodes", self.mesh.node_count()),
                detail: format!("its DOFs ({} per node) overflow usize", self.spec.dofs),
            })?;
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
        let positive = |m: f32| m.is_finite() && m > 0.0;
        if let Some(i) = (0..n).find(|&i| !self.fixed[i] && !positive(self.mass[i])) {
            return Err(Error::InvalidConfig(format!(
                "DOF {i} is free but has mass {}; give it a positive mass",
                self.mass[i]
            )));
        }
        Ok(())
    }

    /// Inverse mass and damping coefficient (`-α·m`) per DOF; both 0 on fixed DOFs.
    pub(crate) fn integration(&self, alpha: f32) -> (Vec<f32>, Vec<f32>) {
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

    /// `½ vᵀ M v + ½ uᵀ K u` (in f64; dead elements store no energy); `u` and `v` hold one
    /// value per DOF, and the model must be valid ([`Model::validate`]).
    pub fn energy(&self, u: &[f32], v: &[f32]) -> Result<f64> {
        self.check_sizes()?;
        let n = self.dof_count();
        for (what, x) in [("displacements", u), ("velocities", v)] {
            if x.len() != n {
                return Err(Error::LengthMismatch {
                    what: format!("{what} for the energy"),
                    expected: n,
                    found: x.len(),
                });
            }
        }
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
        Ok(kinetic + strain)
    }
}

/// A zero per DOF of `spec` on `mesh`, or an error where their count overflows or does not fit
/// in host memory.
fn dof_vec(spec: &ElementSpec, mesh: &Mesh) -> Result<Vec<f64>> {
    let n = mesh
        .node_count()
        .checked_mul(spec.dofs)
        .ok_or_else(|| Error::TooLarge {
            what: format!("a model of {} nodes", mesh.node_count()),
            detail: format!("its DOFs ({} per node) overflow usize", spec.dofs),
        })?;
    crate::grid::try_filled(n, 0.0, || "lumped masses".into())
}

/// `det J > 0` at every quadrature point and local node of `E` for element `index` at `coords`.
fn check_orientation<E: Element>(coords: &[[f64; 3]], index: usize) -> Result<()> {
    let coords: Vec<&[f64]> = coords.iter().map(|p| &p[..E::DIM.min(3)]).collect();
    let points = matrices::quadrature_points::<E>()?.into_iter().map(|(p, _)| p);
    for local in points.chain(E::local_nodes().iter().copied()) {
        match matrices::jacobian::<E, _>(&coords, local) {
            Err(Error::DegenerateElement { element, det, local }) => {
                return Err(Error::InvertedElement {
                    index,
                    element,
                    det,
                    local,
                })
            }
            other => other?,
        };
    }
    Ok(())
}

/// Time step, damping and stability data of a run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepperConfig {
    /// How element forces are scattered.
    pub schedule: Schedule,
    /// Time step in s: `0 < dt ≤ SAFETY · Δt_crit` of
    /// [`stability_bound`](crate::fem::stability::stability_bound), computed from the model's
    /// element matrices and masses when a stepper is made.
    pub dt: f64,
    /// Mass-proportional damping `C = α·M` (1/s, non-negative); it lowers `Δt_crit`.
    pub alpha: f64,
    /// Information only (0: not given): the fastest wave speed the user expects. It is never
    /// the stability bound; a time-step error quotes the estimate `Δx / (2 c_max)` beside the
    /// computed bound.
    pub c_max: f64,
}
