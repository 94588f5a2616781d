//! The unstructured half of the `elements` suite: one explicit step of linear
//! elastic tetrahedra with **one `K_e` per element** (`Model::per_element`), in `f32` and `f64`,
//! with both schedules that read `K_e` by element index on an unstructured mesh:
//! `ForceSchedule::Unstructured` (greedy colours, a launch per colour, then the integration) and
//! `ForceSchedule::Gather` (one launch: a work-item per DOF gathers its node's element rows, fused
//! with the integration).
//!
//! The mesh: `nx × ny × nz` unit cubes, each cut into the 6 tetrahedra of Kuhn's triangulation
//! (paths from the cube's lowest to its highest corner), interior nodes moved by up to 20 % of
//! a cube's edge so no two elements are alike; nodes lexicographic, elements cube by cube (what
//! a mesher's output sorted for locality looks like). Every element gets its own random
//! material. 56³ cubes are 1 053 696 elements and 185 193 nodes.
//!
//! # Minimum bytes per step (each schedule's own roofline)
//! Both read per element its `K_e`, `ND × ND` = 144 reals (576 B in f32, 1152 B in f64; stored
//! and read without padding), plus its 4 node indices (16 B).
//! - Unstructured: per node (3 DOFs) the element pass reads `u` and reads + writes `F` (9
//!   reals), the integration reads `M⁻¹`, `C`, `u`, `v`, `F` and writes `u`, `v`, `F` (24
//!   reals): 33 reals.
//! - Gather: per element its 4 slots in the nodes' lists (16 B); per node its list's start
//!   (4 B) and per DOF `M⁻¹`, `C`, `u`, `v` read, `u`, `v` written: 18 reals.
//!
//! `% roofline` = min bytes / median device time / copy rate.

use anyhow::{bail, Result};
use clforge::element;
use clforge::runtime::element::mesh::{Mesh, UnstructuredMesh};
use clforge::runtime::element::schedule::ForceSchedule;
use clforge::runtime::element::stepper::{stability_bound, HostStepper, Model, Stepper, StepperConfig};
use clforge::runtime::element::Real;
use clforge::runtime::Device;

use super::timing::{time_tets, timed_row, RowHead};
use super::{batch_steps, CHECK_STEPS};
use crate::measure::Progress;
use crate::options::Options;
use crate::report::{Check, Report};

/// An isotropic solid: Lamé constants and density.
#[derive(Clone, Copy, Debug)]
pub struct Solid {
    pub iso: crate::element::forming::Iso,
    pub rho: f64,
}

/// The linear tetrahedron on the unit simplex (Gmsh's node order).
#[element(dim = 3, nodes = 4, operator = elasticity, cell = simplex, quadrature = 2)]
mod tet4 {
    use super::Solid;

    pub const NODES: [[f64; 3]; 4] = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];

    pub fn shape(r: f64, s: f64, t: f64) -> [f64; 4] {
        [1.0 - r - s - t, r, s, t]
    }

    pub fn material(m: &Solid) -> [[f64; 6]; 6] {
        crate::element::forming::hooke(&m.iso)
    }

    pub fn density(m: &Solid) -> f64 {
        m.rho
    }
}

/// How the minimum bytes of the gather are counted (see the module docs).
pub const MIN_BYTES_GATHER: &str = "per element: K_e (12 x 12 reals, unpadded) + 4 node indices + 4 node-list slots; \
                                    per node: list start (4 B), read M^-1, C, u, v, write u, v (18 reals)";

/// Minimum bytes of one gather step of `ne` elements on `nodes` nodes in reals of `real` bytes.
pub fn min_bytes_gather(ne: usize, nodes: usize, real: usize) -> f64 {
    let (ne, nodes, real) = (ne as f64, nodes as f64, real as f64);
    ne * (12.0 * 12.0 * real + 32.0) + nodes * (4.0 + 18.0 * real)
}

/// How the minimum bytes of the coloured scatter are counted (see the module docs).
pub const MIN_BYTES: &str = "per element: K_e (12 x 12 reals, unpadded) + 4 node indices; \
                             per node: element pass read u, read+write F (9 reals), integration read M^-1, C, u, v, F, \
                             write u, v, F (24 reals)";

/// Minimum bytes of one step of `ne` elements on `nodes` nodes in reals of `real` bytes.
pub fn min_bytes(ne: usize, nodes: usize, real: usize) -> f64 {
    let (ne, nodes, real) = (ne as f64, nodes as f64, real as f64);
    ne * (12.0 * 12.0 * real + 16.0) + nodes * 33.0 * real
}

/// xorshift64 in `[0, 1)`.
struct Noise(u64);

impl Noise {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// `nx × ny × nz` jittered unit cubes, 6 Kuhn tetrahedra each, positively oriented.
pub fn mesh(cubes: [usize; 3], seed: u64) -> Result<UnstructuredMesh> {
    let mut noise = Noise(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let [nx, ny, nz] = cubes;
    let (mx, my) = (nx + 1, ny + 1);
    let mut coords = Vec::with_capacity(mx * my * (nz + 1));
    for k in 0..=nz {
        for j in 0..=ny {
            for i in 0..=nx {
                let mut p = [i as f64, j as f64, k as f64];
                for (axis, (c, n)) in [(i, nx), (j, ny), (k, nz)].into_iter().enumerate() {
                    if c > 0 && c < n {
                        p[axis] += (noise.next() - 0.5) * 0.4;
                    }
                }
                coords.push(p);
            }
        }
    }
    let id = |i: usize, j: usize, k: usize| (i + mx * (j + my * k)) as u32;
    // The 6 axis orders of the paths from corner (0,0,0) to (1,1,1); odd permutations are
    // written with their last two vertices swapped so every tetrahedron has det J > 0.
    const PATHS: [([usize; 3], bool); 6] = [
        ([0, 1, 2], false),
        ([1, 2, 0], false),
        ([2, 0, 1], false),
        ([0, 2, 1], true),
        ([1, 0, 2], true),
        ([2, 1, 0], true),
    ];
    let mut conn = Vec::with_capacity(6 * 4 * nx * ny * nz);
    for k in 0..nz {
        for j in 0..ny {
            for i in 0..nx {
                for (order, odd) in PATHS {
                    let mut c = [i, j, k];
                    let mut tet = [id(i, j, k); 4];
                    for (v, &axis) in order.iter().enumerate() {
                        c[axis] += 1;
                        tet[v + 1] = id(c[0], c[1], c[2]);
                    }
                    if odd {
                        tet.swap(2, 3);
                    }
                    conn.extend(tet);
                }
            }
        }
    }
    Ok(UnstructuredMesh::new(coords, 4, conn)?)
}

/// The per-element model on `mesh(n, seed)`, each element in its own material.
pub fn model(cubes: [usize; 3], seed: u64) -> Result<Model> {
    let mesh = mesh(cubes, seed)?;
    let mut noise = Noise(seed ^ 0x0005_DEEC_E66D);
    let materials: Vec<Solid> = (0..mesh.element_count())
        .map(|_| Solid {
            iso: crate::element::forming::Iso {
                lambda: 0.3 + noise.next(),
                mu: 0.3 + 0.7 * noise.next(),
            },
            rho: 0.5 + noise.next(),
        })
        .collect();
    Ok(Model::per_element::<Tet4>(Mesh::Unstructured(mesh), &materials)?)
}

/// Half the stability limit, light damping.
pub fn config(model: &Model, schedule: ForceSchedule) -> Result<StepperConfig> {
    let alpha = 0.01;
    Ok(StepperConfig {
        schedule,
        dt: 0.5 * stability_bound(model, alpha)?.dt_max,
        alpha,
        c_max: 0.0,
    })
}

/// `max |a - b| / max |b|`, infinite for a NaN or a length mismatch.
fn rel_error<R: Real>(a: &[R], b: &[R]) -> f64 {
    let scale = b.iter().fold(1e-30f64, |m, v| m.max(v.widen().abs()));
    let diff = a
        .iter()
        .zip(b)
        .fold(0f64, |m, (x, y)| m.max((x.widen() - y.widen()).abs()));
    if a.len() != b.len() || diff.is_nan() {
        return f64::INFINITY;
    }
    diff / scale
}

/// Steps `model` `steps` times on the device and the host in `R` from a random state; the
/// relative error of `u` and `v`, or an error above `tol`.
pub fn check<R: Real>(dev: &Device, model: &Model, schedule: ForceSchedule, steps: usize, tol: f64) -> Result<f64> {
    let n = model.dof_count();
    let mut noise = Noise(7);
    let u: Vec<R> = (0..n).map(|_| R::of(1e-3 * (noise.next() - 0.5))).collect();
    let v: Vec<R> = (0..n).map(|_| R::of(1e-3 * (noise.next() - 0.5))).collect();
    let cfg = config(model, schedule)?;
    let mut host = HostStepper::<R>::with_precision(model, &cfg)?;
    host.set_state(&u, &v)?;
    host.step(steps);
    let mut st = Stepper::<R>::with_precision(dev, model, &cfg)?;
    st.set_state(&u, &v)?;
    st.step(steps)?;
    let err = rel_error(&st.displacement()?, &host.u).max(rel_error(&st.velocity()?, &host.v));
    if err.is_nan() || err > tol {
        bail!(
            "tet4 per element ({schedule:?}) in {} differs from the host reference: relative error {err:.2e} > \
             {tol:.0e}; refusing to benchmark a wrong kernel",
            R::NAME
        );
    }
    Ok(err)
}

/// The per-element tetrahedra ([`tets`]) on `cubes`: checked against the host in f32 and f64
/// on a small mesh, then one step timed in each precision.
pub(super) fn run_tets(
    dev: &Device,
    opts: &Options,
    report: &mut Report,
    copy: f64,
    progress: &mut Progress,
    cubes: [usize; 3],
) -> Result<()> {
    progress.step("tet4 per element: check f32 and f64 against the host stepper");
    let small = model([5, 4, 3], 11)?;
    let shape = format!(
        "5x4x3 cubes x 6 tets ({} elements), {CHECK_STEPS} steps",
        small.mesh.element_count()
    );
    // The coloured scatter and the node gather, each with its own minimum bytes.
    let schedules = [
        (
            ForceSchedule::Unstructured,
            "tet4_unstructured_pe",
            "greedy colours, K_e per element",
        ),
        (
            ForceSchedule::Gather,
            "tet4_gather_unstructured",
            "node lists, K_e per element",
        ),
    ];
    for (schedule, kernel, config) in schedules {
        for (real, err) in [
            ("f32", check::<f32>(dev, &small, schedule, CHECK_STEPS, 1e-5)?),
            ("f64", check::<f64>(dev, &small, schedule, CHECK_STEPS, 1e-12)?),
        ] {
            report.checks.push(Check {
                kernel: format!("{kernel} {real}"),
                config: config.into(),
                shape: shape.clone(),
                max_rel_err: err,
                exact: err == 0.0,
            });
        }
    }
    let [nx, ny, nz] = cubes;
    progress.step(&format!("tet4 per element: model of {nx}x{ny}x{nz} cubes x 6 tets"));
    let model = model(cubes, 3)?;
    let batch = batch_steps(dev, opts.quick);
    let (ne, nodes) = (model.mesh.element_count(), model.mesh.node_count());
    for real in ["f32", "f64"] {
        let label = format!("{nx}x{ny}x{nz} cubes x 6 tet4 {real}");
        let bytes = if real == "f32" { 4 } else { 8 };
        for (schedule, kernels, config, min) in [
            (
                ForceSchedule::Unstructured,
                "tet4_unstructured_pe (one launch per colour) + tet4_integrate",
                "greedy colours, elements stored colour by colour",
                (min_bytes(ne, nodes, bytes), MIN_BYTES),
            ),
            (
                ForceSchedule::Gather,
                "tet4_gather_unstructured (+ tet4_kick per load)",
                "a work-item per DOF walks its node's element list",
                (min_bytes_gather(ne, nodes, bytes), MIN_BYTES_GATHER),
            ),
        ] {
            progress.step(&format!("tet4 per element: {label}, {schedule:?}"));
            let (time, wall_ms, launches) = match real {
                "f32" => time_tets::<f32>(dev, &model, schedule, opts.reps, batch)?,
                _ => time_tets::<f64>(dev, &model, schedule, opts.reps, batch)?,
            };
            let head = RowHead {
                case: format!("tet4 elasticity, K_e per element, {real}"),
                elements: label.clone(),
                element_count: ne,
                node_count: nodes,
                implementation: "clforge",
                schedule: match schedule {
                    ForceSchedule::Gather => "gather-unstructured".into(),
                    _ => "unstructured-pe".into(),
                },
                kernels: kernels.into(),
                config: config.into(),
                launches_per_step: launches,
            };
            report.elements.push(timed_row(head, min, time, (wall_ms, batch), copy));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kuhn_mesh_counts_and_orientation() {
        let m = mesh([3, 2, 4], 1).unwrap();
        assert_eq!((m.element_count(), m.node_count()), (6 * 24, 4 * 3 * 5));
        // Model::per_element refuses inverted elements: every tetrahedron is positive. The
        // densities are in [0.5, 1.5), the volume 24.
        let model = model([3, 2, 4], 1).unwrap();
        let mass: f64 = model.mass.iter().step_by(3).sum();
        assert!(mass > 0.5 * 24.0 && mass < 1.5 * 24.0, "{mass}");
    }

    #[test]
    fn min_bytes_counts_k_e_and_nodes() {
        assert_eq!(min_bytes(1, 0, 4), 592.0);
        assert_eq!(min_bytes(0, 1, 8), 264.0);
        assert_eq!(min_bytes_gather(1, 0, 8), 1184.0);
        assert_eq!(min_bytes_gather(0, 1, 4), 76.0);
    }
}
