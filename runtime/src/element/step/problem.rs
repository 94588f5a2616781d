//! The problem description [`Model`]: element type, mesh, materials, masses and fixed DOFs,
//! with its validation and energy; and [`StepperConfig`], how a run steps it.

use crate::element::mesh::{ElementMap, Mesh};
use crate::element::schedule::ForceSchedule;
use crate::element::spec::{Element, ElementSpec};
use crate::element::{geometry, matrices, Real};
use crate::error::{Error, Result};

/// Everything about a model that does not depend on where it runs.
#[derive(Clone, Debug)]
pub struct Model {
    /// The element type.
    pub spec: ElementSpec,
    /// The mesh.
    pub mesh: Mesh,
    /// `K_e` of each material, `nd × nd` row-major (`nd = nodes · dofs`); of each element, in
    /// element order, where [`Model::per_element`] is set.
    pub stiffness: Vec<Vec<f64>>,
    /// `G_e` of each material (each element), `strains × nd` row-major; empty if stresses are
    /// not needed.
    pub stress: Vec<Vec<f64>>,
    /// Material and crack state per element. With per-element matrices the material indices
    /// are not read (each element's matrices already hold its material); crack flags are.
    pub elements: ElementMap,
    /// `stiffness` and `stress` hold one matrix per element ([`Model::per_element`]) rather
    /// than one per material: meshes whose elements differ in shape (distorted quads, every
    /// simplex mesh). Such models step on the device with `ForceSchedule::Unstructured` or
    /// `ForceSchedule::Gather`.
    pub per_element: bool,
    /// Lumped mass per DOF.
    pub mass: Vec<f64>,
    /// Fixed DOFs (zero velocity: their inverse mass is 0).
    pub fixed: Vec<bool>,
}

impl Model {
    /// One material with stiffness `k` (`nd × nd` row-major) and element mass `element_mass`,
    /// lumped onto the element's nodes by the shares of the reference element
    /// ([`reference_lumping`]): equal shares for linear elements (a quarter per node of a
    /// quad4), Simpson's products for a 9-node quad (1/36 per corner, 1/9 per mid-side, 4/9 at
    /// the centre). The shares are exact for elements that are parallelograms
    /// (parallelepipeds) of equal size; [`Model::of`] lumps each element's own geometry.
    ///
    /// The spec carries no shape functions, only the node grid, so `Model::new` takes elements
    /// whose nodes fill their grid (`(order + 1)^dim` nodes, tensor Lagrange); others (8-node
    /// serendipity quads) are [`Error::LumpedMass`], pointing to [`Model::of`].
    ///
    /// The mesh must hold elements of `spec` ([`geometry::check_mesh`]: a structured mesh of
    /// the element's order, an unstructured one of its nodes per element) and none of its
    /// elements may be inverted ([`geometry::check_orientation`]). The DOFs of nodes that
    /// belong to no element are fixed (see [`Model::of`]).
    pub fn new(spec: ElementSpec, mesh: Mesh, k: Vec<f64>, element_mass: f64) -> Result<Model> {
        geometry::check_orientation(&spec, &mesh)?;
        if !(element_mass.is_finite() && element_mass > 0.0) {
            return Err(Error::LumpedMass {
                element: spec.name,
                detail: format!("the element mass {element_mass} given to `Model::new` must be positive and finite"),
            });
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
        let shares = reference_lumping(&spec)?.masses;
        let element: Vec<f64> = shares.iter().map(|s| element_mass * s).collect();
        let mut mass = dof_vec(&spec, &mesh)?;
        for nodes in conn.chunks_exact(spec.nodes) {
            add_nodal(&mut mass, nodes, spec.dofs, &element);
        }
        let fixed = orphans_fixed(&spec, &mesh, mass.len());
        Ok(Model {
            spec,
            elements: ElementMap::uniform(mesh.element_count())?,
            mesh,
            stiffness: vec![k],
            stress: vec![],
            mass,
            fixed,
            per_element: false,
        })
    }

    /// The model of element type `E` on `mesh` in one material: `K_e`, `G_e` and the lumped
    /// masses computed from the element's own matrices (`E::stiffness`, `E::stress_matrix`,
    /// [`matrices::lumped_mass`]: row-sum lumping where every row sum is positive, HRZ
    /// otherwise, as for 8-node serendipity quads) at the mesh's element geometry. The device
    /// kernels share one `K_e` per material, so every element must be a translate of element
    /// 0; a mesh whose elements differ in shape or size is an error rather than a silently
    /// wrong model.
    ///
    /// Nodes that belong to no element carry neither mass nor stiffness: their DOFs are fixed,
    /// so they stay at rest and [`Model::validate`] accepts the model. They arise on a
    /// structured grid whose elements leave nodes out (8-node serendipity quads on an order-2
    /// grid leave every element's centre); [`Mesh::unused_nodes`] lists them and
    /// [`UnstructuredMesh::from_structured`](crate::element::mesh::UnstructuredMesh::from_structured)
    /// builds the mesh without them.
    ///
    /// The mesh must hold elements of `E` ([`geometry::check_mesh`]) and no element may be
    /// inverted or degenerate: `det J > 0` at every quadrature point and node of `E`
    /// ([`Error::InvertedElement`] names the element).
    pub fn of<E: Element>(mesh: Mesh, material: &E::Material) -> Result<Model> {
        let spec = E::spec();
        let conn = element_nodes(&spec, &mesh)?;
        let ne = mesh.element_count();
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
                    "element {e} of the mesh differs in shape from element 0 (by {off:.3e}); `Model::of` \
                     shares one K_e per material, so it needs congruent, equally oriented elements: build a model \
                     with one K_e per element with `Model::per_element`"
                )));
            }
        }
        let coords: Vec<&[f64]> = first.iter().map(|p| &p[..spec.dim]).collect();
        let k = matrices::stiffness::<E, _>(&coords, material)?;
        let g = matrices::stress_matrix::<E, _>(&coords, material)?;
        let lumped = matrices::lumped_mass::<E, _>(&coords, material)?.masses;
        let mut mass = dof_vec(&spec, &mesh)?;
        for nodes in conn.chunks_exact(spec.nodes) {
            add_nodal(&mut mass, nodes, spec.dofs, &lumped);
        }
        let fixed = orphans_fixed(&spec, &mesh, mass.len());
        Ok(Model {
            spec,
            elements: ElementMap::uniform(ne)?,
            mesh,
            stiffness: vec![k.data().to_vec()],
            stress: vec![g.data().to_vec()],
            mass,
            fixed,
            per_element: false,
        })
    }

    /// The model of element type `E` on `mesh` with **one `K_e`, `G_e` per element**: each
    /// computed from the element's own node coordinates and its own material
    /// (`materials[e]`, one per element), and the lumped masses from each element's own
    /// geometry ([`matrices::lumped_mass`]: row sums, or HRZ where a row sum is not positive).
    /// For meshes whose elements are not congruent: distorted or unstructured quads and hexes,
    /// and every simplex mesh. The device reads `K_e` by element index from global memory
    /// (`nd²` floats per element and step) with `ForceSchedule::Unstructured`; a congruent mesh in one
    /// material is faster with [`Model::of`], whose single `K_e` stays in constant memory.
    ///
    /// As [`Model::of`], the DOFs of nodes in no element are fixed, and an inverted or
    /// degenerate element is [`Error::InvertedElement`] naming it. `materials.len()` must be
    /// the element count ([`Error::LengthMismatch`]).
    ///
    /// ```
    /// # use clforge_runtime::fem::{problem::Model, mesh::{Mesh, UnstructuredMesh}};
    /// # fn demo<E: clforge_runtime::fem::Element>(mesh: UnstructuredMesh, steel: E::Material) -> clforge_runtime::Result<()>
    /// # where E::Material: Clone {
    /// let materials = vec![steel; mesh.element_count()];
    /// let model = Model::per_element::<E>(Mesh::Unstructured(mesh), &materials)?;
    /// assert!(model.per_element && model.stiffness.len() == materials.len());
    /// # Ok(()) }
    /// ```
    pub fn per_element<E: Element>(mesh: Mesh, materials: &[E::Material]) -> Result<Model> {
        let spec = E::spec();
        let conn = element_nodes(&spec, &mesh)?;
        let ne = mesh.element_count();
        if materials.len() != ne {
            return Err(Error::LengthMismatch {
                what: format!(
                    "materials for `Model::per_element` (one per element of the mesh; repeat one material \
                     with `vec![material; {ne}]`)"
                ),
                expected: ne,
                found: materials.len(),
            });
        }
        let mut mass = dof_vec(&spec, &mesh)?;
        let mut stiffness = Vec::with_capacity(ne);
        let mut stress = Vec::with_capacity(ne);
        for (e, material) in materials.iter().enumerate() {
            let own = mesh.element_coords(spec.node_offsets, e);
            check_orientation::<E>(&own, e)?;
            let coords: Vec<&[f64]> = own.iter().map(|p| &p[..spec.dim]).collect();
            stiffness.push(matrices::stiffness::<E, _>(&coords, material)?.data().to_vec());
            stress.push(matrices::stress_matrix::<E, _>(&coords, material)?.data().to_vec());
            let lumped = matrices::lumped_mass::<E, _>(&coords, material)?.masses;
            add_nodal(
                &mut mass,
                &conn[e * spec.nodes..(e + 1) * spec.nodes],
                spec.dofs,
                &lumped,
            );
        }
        let fixed = orphans_fixed(&spec, &mesh, mass.len());
        Ok(Model {
            spec,
            elements: ElementMap::uniform(ne)?,
            mesh,
            stiffness,
            stress,
            mass,
            fixed,
            per_element: true,
        })
    }

    /// Which of `stiffness` (and `stress`) element `e` uses: `e` itself with per-element
    /// matrices, else its material.
    pub fn matrix_index(&self, e: usize) -> usize {
        if self.per_element {
            e
        } else {
            self.elements.material[e] as usize
        }
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
    /// free DOF ([`Error::MasslessDof`] names the first other, its node and why).
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
        let check = crate::error::check_len;
        check("lumped masses (one per DOF)", n, self.mass.len())?;
        check("fixed flags (one per DOF)", n, self.fixed.len())?;
        check("element materials", ne, self.elements.material.len())?;
        check("element crack flags", ne, self.elements.dead.len())?;
        if self.per_element {
            check(
                "K_e matrices (one per element: `per_element` is set)",
                ne,
                self.stiffness.len(),
            )?;
            if !self.stress.is_empty() {
                check(
                    "G_e matrices (one per element: `per_element` is set)",
                    ne,
                    self.stress.len(),
                )?;
            }
        } else if self.stiffness.is_empty() || self.stiffness.len() > 254 {
            return Err(Error::InvalidConfig(format!(
                "{} materials given; 1 to 254 allowed (or one K_e per element with `per_element` set)",
                self.stiffness.len()
            )));
        }
        for k in &self.stiffness {
            check("entries of K_e", nd * nd, k.len())?;
        }
        for g in &self.stress {
            check("entries of G_e", self.spec.strains * nd, g.len())?;
        }
        if self.per_element {
            // Material indices are not read.
        } else if let Some(&m) = self
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
        let positive = |m: f64| m.is_finite() && m > 0.0;
        if let Some(i) = (0..n).find(|&i| !self.fixed[i] && !positive(self.mass[i])) {
            return Err(self.massless(i));
        }
        Ok(())
    }

    /// [`Error::MasslessDof`] for free DOF `dof`, saying why its node has no mass.
    fn massless(&self, dof: usize) -> Error {
        let (spec, node) = (&self.spec, dof / self.spec.dofs);
        let orphan = !self.mesh.connectivity(spec.node_offsets).contains(&(node as u32));
        let reason = if orphan {
            let left_out = match &self.mesh {
                Mesh::Structured(m) => format!(
                    " (a node of the order-{} grid that the {} nodes of `{}` leave out)",
                    m.order, spec.nodes, spec.name
                ),
                Mesh::Unstructured(_) => String::new(),
            };
            format!(
                "node {node} belongs to no element{left_out}, so nothing moves it; keep its DOFs fixed \
                 (`Model::new` and `Model::of` fix them) or build the mesh without it \
                 (`UnstructuredMesh::from_structured`, `UnstructuredMesh::compact`)"
            )
        } else if self.mass[dof].is_finite() && self.mass[dof] < 0.0 {
            format!(
                "the lumped masses of the elements at node {node} add up to a negative mass; give it a positive one"
            )
        } else {
            format!("node {node} belongs to elements but has no positive finite mass; give it one (a positive density)")
        };
        Error::MasslessDof {
            dof,
            node,
            mass: self.mass[dof],
            reason,
        }
    }

    /// Inverse mass and damping coefficient (`-α·m`) per DOF, computed in `R` from the mass
    /// and `α` rounded to `R` (as the kernels would); both 0 on fixed DOFs.
    pub(crate) fn integration<R: Real>(&self, alpha: f64) -> (Vec<R>, Vec<R>) {
        let (zero, one, alpha) = (R::of(0.0), R::of(1.0), R::of(alpha));
        let of = |(&m, &fixed): (&f64, &bool)| if fixed { None } else { Some(R::of(m)) };
        let minv = self
            .mass
            .iter()
            .zip(&self.fixed)
            .map(|x| of(x).map_or(zero, |m| one / m))
            .collect();
        let damp = self
            .mass
            .iter()
            .zip(&self.fixed)
            .map(|x| of(x).map_or(zero, |m| -alpha * m))
            .collect();
        (minv, damp)
    }

    /// `½ vᵀ M v + ½ uᵀ K u` (in f64; dead elements store no energy); `u` and `v` hold one
    /// value per DOF, and the model must be valid ([`Model::validate`]).
    pub fn energy<R: Real>(&self, u: &[R], v: &[R]) -> Result<f64> {
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
            .map(|(&v, &m)| 0.5 * m * v.widen().powi(2))
            .sum();
        let conn = self.mesh.connectivity(self.spec.node_offsets);
        let (nd, d) = (self.nd(), self.spec.dofs);
        let mut strain = 0.0;
        for e in 0..self.mesh.element_count() {
            if self.elements.dead[e] {
                continue;
            }
            let k = &self.stiffness[self.matrix_index(e)];
            let ue: Vec<f64> = (0..nd)
                .map(|i| u[conn[e * self.spec.nodes + i / d] as usize * d + i % d].widen())
                .collect();
            for r in 0..nd {
                let ku: f64 = (0..nd).map(|c| k[r * nd + c] * ue[c]).sum();
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

/// The element→node indices of `mesh` for elements of `spec`: a mesh that holds such elements
/// ([`geometry::check_mesh`]), at least one, `spec.nodes` indices each.
fn element_nodes(spec: &ElementSpec, mesh: &Mesh) -> Result<Vec<u32>> {
    geometry::check_mesh(spec, mesh)?;
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
    Ok(conn)
}

/// Adds `per_node[a]` to every DOF of node `nodes[a]` (`dofs` per node): an element's lumped
/// masses onto the global ones.
fn add_nodal(mass: &mut [f64], nodes: &[u32], dofs: usize, per_node: &[f64]) {
    for (&n, &m) in nodes.iter().zip(per_node) {
        for d in 0..dofs {
            mass[n as usize * dofs + d] += m;
        }
    }
}

/// One fixed flag per DOF (`dofs` of them): the DOFs of nodes in no element, which have
/// neither mass nor stiffness.
fn orphans_fixed(spec: &ElementSpec, mesh: &Mesh, dofs: usize) -> Vec<bool> {
    let mut fixed = vec![false; dofs];
    for n in mesh.unused_nodes(spec.node_offsets) {
        for d in 0..spec.dofs {
            fixed[n * spec.dofs + d] = true;
        }
    }
    fixed
}

/// The lumped masses of the reference element of `spec`, summing to 1: the shares of an
/// element's mass that [`Model::new`] gives its nodes, by the rule of
/// [`matrices::lumped_mass`] (row sums where all are positive, HRZ otherwise).
///
/// Without shape functions this needs the tensor Lagrange element of the node grid: every one
/// of the `(order + 1)^dim` grid nodes is a node, and `N_a` is the product of 1-D Lagrange
/// polynomials through the grid points, so `∫ N_a` and `∫ N_a²` are products of 1-D integrals
/// (Newton-Cotes weights for the row sums). Other specs are [`Error::LumpedMass`].
///
/// ```
/// # use clforge_runtime::fem::{problem::reference_lumping, matrices::Lumping, ElementSpec};
/// let quad9 = ElementSpec {
///     name: "quad9", dim: 2, cell: clforge_runtime::fem::Cell::Cube, nodes: 9, dofs: 2, order: 2, strains: 3, source: "", kernels: None,
///     node_offsets: &[[0, 0, 0], [2, 0, 0], [2, 2, 0], [0, 2, 0], [1, 0, 0], [2, 1, 0], [1, 2, 0], [0, 1, 0], [1, 1, 0]],
/// };
/// let shares = reference_lumping(&quad9).unwrap();
/// assert_eq!(shares.scheme, Lumping::RowSum);
/// for (s, expected) in shares.masses.iter().zip([1.0, 1.0, 1.0, 1.0, 4.0, 4.0, 4.0, 4.0, 16.0]) {
///     assert!((s - expected / 36.0).abs() < 1e-15);
/// }
/// ```
pub fn reference_lumping(spec: &ElementSpec) -> Result<matrices::LumpedMass> {
    geometry::check_spec(spec)?;
    let (dim, order) = (spec.dim, spec.order);
    let mut grid = spec.node_offsets.to_vec();
    grid.sort_unstable();
    grid.dedup();
    let full = order
        .checked_add(1)
        .and_then(|n| n.checked_pow(dim as u32))
        .is_some_and(|n| n == spec.nodes && grid.len() == spec.nodes);
    if !full || order + 1 > matrices::MAX_QUADRATURE {
        return Err(Error::LumpedMass {
            element: spec.name,
            detail: format!(
                "`Model::new` knows the element only by its spec, which fixes the nodes' shares of the element \
                 mass only for a full Lagrange grid of (order + 1)^dim nodes up to order {}; this one has {} nodes \
                 on a {dim}-D grid of order {order} (serendipity corners have negative row sums). Build the model \
                 with `Model::of::<E>`, which lumps with the element's own shape functions",
                matrices::MAX_QUADRATURE - 1,
                spec.nodes
            ),
        });
    }
    // 1-D Lagrange polynomials through order + 1 equidistant points on [-1, 1], integrated
    // exactly (degree 2·order) by order + 1 Gauss points, over the interval's length 2.
    let points: Vec<f64> = (0..=order).map(|j| -1.0 + 2.0 * j as f64 / order as f64).collect();
    let ell = |i: usize, x: f64| -> f64 {
        (0..=order)
            .filter(|&m| m != i)
            .map(|m| (x - points[m]) / (points[i] - points[m]))
            .product()
    };
    let rule = matrices::gauss_legendre(order + 1)?;
    let integral = |f: &dyn Fn(f64) -> f64| rule.iter().map(|&(x, w)| w * f(x)).sum::<f64>() / 2.0;
    let row: Vec<f64> = (0..=order).map(|i| integral(&|x| ell(i, x))).collect();
    let diag: Vec<f64> = (0..=order).map(|i| integral(&|x| ell(i, x).powi(2))).collect();
    let product = |w: &[f64], o: &[usize; 3]| o[..dim].iter().map(|&k| w[k]).product::<f64>();
    let rows = spec.node_offsets.iter().map(|o| product(&row, o)).collect();
    let diagonal = spec.node_offsets.iter().map(|o| product(&diag, o)).collect();
    matrices::lump(spec.name, rows, diagonal, 1.0)
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
    pub schedule: ForceSchedule,
    /// Time step in s: `0 < dt ≤ SAFETY · Δt_crit` of
    /// [`stability_bound`](crate::element::stability::stability_bound), computed from the model's
    /// element matrices and masses when a stepper is made.
    pub dt: f64,
    /// Mass-proportional damping `C = α·M` (1/s, non-negative); it lowers `Δt_crit`.
    pub alpha: f64,
    /// Information only (0: not given): the fastest wave speed the user expects. It is never
    /// the stability bound; a time-step error quotes the estimate `Δx / (2 c_max)` beside the
    /// computed bound.
    pub c_max: f64,
}
