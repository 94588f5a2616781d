//! Forms over a mesh, assembled, and the first time integrators over them: steady problems
//! `K u = f` and first-order ones `M u̇ + K u = f` by the θ-method (forward Euler θ = 0,
//! Crank–Nicolson θ = ½, backward Euler θ = 1), each step a solve of
//! `(M + θΔt K) u⁺ = (M − (1−θ)Δt K) u + Δt f` on the device. Dirichlet
//! values are held fixed in time, imposed symmetrically.
//!
//! Any bilinear form is assembled (its whole element matrices); symmetric systems are solved by
//! conjugate gradients, non-symmetric ones (advection, stabilised forms, couplings) by
//! GMRES(50), both on the device and preconditioned by the diagonal.

use super::{bilinear, linear, Field, Position};
use crate::device::Device;
use crate::element::sparse::{self, CgOptions, CgReport, DeviceCsr, DofMap, HostCsr};
use crate::element::spec::Element;
use crate::error::{Error, Result};

/// A form's element matrices over a mesh of `E`s, assembled: node coordinates `coords` (`DIM`
/// per node), `cells` (`NODES` node numbers per element), `materials` one per element or one
/// for all. DOFs are `node · DOFS + component`.
pub fn assemble<E, F>(coords: &[f64], cells: &[u32], materials: &[E::Material], form: F) -> Result<(DofMap, HostCsr)>
where
    E: Element,
    F: Fn(&Field, &Field, &Position, &E::Material) -> f64,
{
    let mesh = Mesh::<E>::new(coords, cells, materials.len())?;
    let (nodes, dofs, n_nodes) = (E::NODES, E::DOFS, mesh.nodes);
    let elements = cells.len() / nodes;
    let ne = nodes * dofs;
    let index: Vec<u32> = cells
        .iter()
        .flat_map(|&c| (0..dofs as u32).map(move |d| c * dofs as u32 + d))
        .collect();
    let map = DofMap::new(n_nodes * dofs, ne, index, vec![1; elements * ne])?;
    let pattern = sparse::pattern(&map)?;
    let mut values = vec![0.0; pattern.nnz()];
    for (e, cell) in cells.chunks(nodes).enumerate() {
        let k = bilinear::<E, _, _>(&mesh.element(cell), of_element(materials, e), &form)?;
        let rows = map.element_dofs(e);
        for (i, &r) in rows.iter().enumerate() {
            for (j, &c) in rows.iter().enumerate() {
                // Every pair of one element's DOFs is in the pattern.
                if let Some(slot) = pattern.find(r as usize, c as usize) {
                    values[slot] += k[(i, j)];
                }
            }
        }
    }
    let csr = HostCsr::new(pattern, values)?;
    Ok((map, csr))
}

/// A linear form's element vectors over the mesh of [`assemble`], summed into one global
/// vector (`node · DOFS + component`).
pub fn assemble_load<E, F>(coords: &[f64], cells: &[u32], materials: &[E::Material], form: F) -> Result<Vec<f64>>
where
    E: Element,
    F: Fn(&Field, &Position, &E::Material) -> f64,
{
    let mesh = Mesh::<E>::new(coords, cells, materials.len())?;
    let mut out = vec![0.0; mesh.nodes * E::DOFS];
    for (e, cell) in cells.chunks(E::NODES).enumerate() {
        let material = of_element(materials, e);
        let f = linear::<E, _, _>(&mesh.element(cell), material, &form)?;
        for (a, &c) in cell.iter().enumerate() {
            for d in 0..E::DOFS {
                out[c as usize * E::DOFS + d] += f[a * E::DOFS + d];
            }
        }
    }
    Ok(out)
}

/// The L2 norm of `u_h − exact` over the mesh of [`assemble`], `u_h` the scalar field of nodal
/// values `u` (one per node), integrated with each element's quadrature.
pub fn l2_error<E: Element>(coords: &[f64], cells: &[u32], u: &[f64], exact: impl Fn([f64; 3]) -> f64) -> Result<f64> {
    let mesh = Mesh::<E>::new(coords, cells, 1)?;
    if u.len() != mesh.nodes {
        return Err(Error::LengthMismatch {
            what: "nodal values (one per node)".into(),
            expected: mesh.nodes,
            found: u.len(),
        });
    }
    let mut sum = 0.0;
    for cell in cells.chunks(E::NODES) {
        for at in super::points::<E, _>(&mesh.element(cell))? {
            let uh: f64 = cell.iter().zip(&at.n).map(|(&c, n)| n * u[c as usize]).sum();
            sum += at.wdet * (uh - exact(at.point.x)).powi(2);
        }
    }
    Ok(sum.sqrt())
}

/// Element `e`'s material: its own, or the one shared by all (checked by [`Mesh::new`]).
pub(super) fn of_element<M>(materials: &[M], e: usize) -> &M {
    &materials[if materials.len() == 1 { 0 } else { e }]
}

/// A mesh of `E`s as [`assemble`] takes it, checked.
pub(super) struct Mesh<'a, E> {
    coords: &'a [f64],
    nodes: usize,
    _element: std::marker::PhantomData<fn() -> E>,
}

impl<'a, E: Element> Mesh<'a, E> {
    pub(super) fn new(coords: &'a [f64], cells: &[u32], materials: usize) -> Result<Self> {
        if E::GEOMETRY_NODES != E::NODES {
            return Err(Error::InvalidConfig(format!(
                "`{}` carries its geometry on other nodes than its functions (a modal element); assemble it on a \
                 modal mesh",
                E::NAME
            )));
        }
        for (what, len, per) in [
            ("node coordinates", coords.len(), E::DIM),
            ("cell node numbers", cells.len(), E::NODES),
        ] {
            if !len.is_multiple_of(per) {
                return Err(Error::LengthMismatch {
                    what: format!("{what} of a `{}` mesh ({per} each)", E::NAME),
                    expected: len.div_ceil(per) * per,
                    found: len,
                });
            }
        }
        let (nodes, elements) = (coords.len() / E::DIM, cells.len() / E::NODES);
        if materials != 1 && materials != elements {
            return Err(Error::LengthMismatch {
                what: "materials (one per element, or one for all)".into(),
                expected: elements,
                found: materials,
            });
        }
        if let Some(&c) = cells.iter().find(|&&c| c as usize >= nodes) {
            return Err(Error::InvalidConfig(format!(
                "cell node {c} is not one of the mesh's {nodes} nodes"
            )));
        }
        Ok(Mesh {
            coords,
            nodes,
            _element: std::marker::PhantomData,
        })
    }

    /// The coordinates of one cell's nodes.
    pub(super) fn element(&self, cell: &[u32]) -> Vec<&'a [f64]> {
        let dim = E::DIM;
        cell.iter()
            .map(|&c| &self.coords[c as usize * dim..(c as usize + 1) * dim])
            .collect()
    }
}

/// Dirichlet values held in time: `u[fixed[k]] = values[k]`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Fixed {
    /// The fixed DOFs.
    pub dofs: Vec<u32>,
    /// Their values, one per DOF.
    pub values: Vec<f64>,
}

/// A matrix on the device with Dirichlet values imposed symmetrically, and the right-hand side's
/// lifting: `b ↦ lift(b)` is `b + lift` on free rows and `lift` on fixed ones.
pub(super) struct Constrained {
    a: DeviceCsr,
    lift: Vec<f64>,
    fixed: Vec<bool>,
    /// CG when the matrix is symmetric, GMRES when not.
    symmetric: bool,
}

impl Constrained {
    pub(super) fn new(dev: &Device, a: &HostCsr, fixed: &Fixed) -> Result<Constrained> {
        let symmetric = is_symmetric(a);
        // A fixed row keeps only its diagonal, `A_ii u_i = A_ii g_i`: any non-zero `A_ii` holds
        // `g_i`. A non-symmetric operator (advection) may leave it zero or negative at the
        // boundary, so there the row's largest magnitude stands in (CG needs the true one).
        let mut a = if symmetric {
            DeviceCsr::from_host(dev, a)?
        } else {
            let mut values = a.values().to_vec();
            for &d in &fixed.dofs {
                let (d, p) = (d as usize, a.pattern());
                let top = p.row(d).map(|k| values[k].abs()).fold(0.0, f64::max);
                if let Some(slot) = p.find(d, d) {
                    values[slot] = if top > 0.0 { top } else { 1.0 };
                }
            }
            DeviceCsr::from_host(dev, &HostCsr::new(a.pattern().clone(), values)?)?
        };
        let mut lift = vec![0.0; a.n()];
        sparse::apply_dirichlet(&mut a, &fixed.dofs, &fixed.values, &mut lift)?;
        let mut is_fixed = vec![false; a.n()];
        for &d in &fixed.dofs {
            is_fixed[d as usize] = true;
        }
        Ok(Constrained {
            a,
            lift,
            fixed: is_fixed,
            symmetric,
        })
    }

    pub(super) fn solve(&self, mut b: Vec<f64>, x0: &[f64], opts: &CgOptions) -> Result<CgReport> {
        for ((bi, l), f) in b.iter_mut().zip(&self.lift).zip(&self.fixed) {
            *bi = if *f { *l } else { *bi + l };
        }
        if self.symmetric {
            sparse::cg(&self.a, &b, Some(x0), opts)
        } else {
            sparse::gmres(&self.a, &b, Some(x0), opts, sparse::GMRES_RESTART)
        }
    }
}

/// Whether `a[i][j] = a[j][i]` to rounding (relative to the largest entry) everywhere.
pub fn is_symmetric(a: &HostCsr) -> bool {
    let p = a.pattern();
    let scale = a.values().iter().fold(0.0f64, |m, v| m.max(v.abs()));
    (0..a.n()).all(|r| {
        p.row(r).all(|k| {
            let c = p.cols()[k] as usize;
            let t = p.find(c, r).map_or(0.0, |s| a.values()[s]);
            (a.values()[k] - t).abs() <= 1e-12 * scale
        })
    })
}

/// `K u = f` with `fixed` values, solved on `dev`: conjugate gradients when `K` is symmetric,
/// restarted GMRES when not (both preconditioned by the diagonal).
pub fn steady(dev: &Device, k: &HostCsr, f: &[f64], fixed: &Fixed, opts: &CgOptions) -> Result<CgReport> {
    let c = Constrained::new(dev, k, fixed)?;
    c.solve(f.to_vec(), &vec![0.0; k.n()], opts)
}

/// `M u̇ + K u = f` by the θ-method with step `dt`: the matrix `M + θΔt K` lives on the device
/// with the Dirichlet values imposed; the right-hand side `(M − (1−θ)Δt K) u + Δt f` is formed
/// on the host (one product with each matrix per step).
pub struct ThetaMethod {
    m: HostCsr,
    k: HostCsr,
    theta: f64,
    dt: f64,
    system: Constrained,
    opts: CgOptions,
}

impl ThetaMethod {
    /// `theta` in `[0, 1]`, `dt` positive; `M` and `K` of one assembly (the same pattern). For
    /// θ < ½ (conditionally stable) a `dt` beyond the limit of `λ_max(M⁻¹K)`
    /// ([`super::bound::lambda_max_assembled`]) is [`Error::UnstableTimeStep`].
    pub fn new(
        dev: &Device,
        m: &HostCsr,
        k: &HostCsr,
        theta: f64,
        dt: f64,
        fixed: &Fixed,
        opts: CgOptions,
    ) -> Result<ThetaMethod> {
        if !((0.0..=1.0).contains(&theta) && dt > 0.0 && dt.is_finite()) {
            return Err(Error::InvalidConfig(format!(
                "θ = {theta} must be in [0, 1] and Δt = {dt} positive and finite"
            )));
        }
        if m.pattern() != k.pattern() {
            return Err(Error::InvalidConfig(
                "M and K have different sparsity patterns; assemble both from the same mesh".into(),
            ));
        }
        if theta < 0.5 {
            super::bound::check_theta_step(theta, dt, super::bound::lambda_max_assembled(m, k)?)?;
        }
        let values: Vec<f64> = m
            .values()
            .iter()
            .zip(k.values())
            .map(|(a, b)| a + theta * dt * b)
            .collect();
        let a = HostCsr::new(m.pattern().clone(), values)?;
        Ok(ThetaMethod {
            m: m.clone(),
            k: k.clone(),
            theta,
            dt,
            system: Constrained::new(dev, &a, fixed)?,
            opts,
        })
    }

    /// One step from `u` (updated in place) under the load `f` (`None`: no load).
    pub fn step(&self, u: &mut [f64], f: Option<&[f64]>) -> Result<CgReport> {
        let mu = self.m.mul(u)?;
        let ku = self.k.mul(u)?;
        let c = (1.0 - self.theta) * self.dt;
        let mut b: Vec<f64> = mu.iter().zip(&ku).map(|(a, b)| a - c * b).collect();
        if let Some(f) = f {
            if f.len() != b.len() {
                return Err(Error::LengthMismatch {
                    what: "load (one per DOF)".into(),
                    expected: b.len(),
                    found: f.len(),
                });
            }
            b.iter_mut().zip(f).for_each(|(bi, fi)| *bi += self.dt * fi);
        }
        let report = self.system.solve(b, u, &self.opts)?;
        u.copy_from_slice(&report.x);
        Ok(report)
    }
}
