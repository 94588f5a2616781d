//! The benchmark problem of the `elements` suite: seed 000's bilinear plane-stress quad on a
//! structured grid of unit squares, a unit-material plate, and the time step and damping of
//! every run.

use anyhow::Result;
use clforge::element;
use clforge::runtime::element::mesh::{Mesh, StructuredMesh, UnstructuredMesh};
use clforge::runtime::element::schedule::ForceSchedule;
use clforge::runtime::element::stepper::{wave_speed, Model, StepperConfig};
use clforge::runtime::element::Element;

/// Material of the benchmark plate: unit values (the timing does not depend on them; the
/// element matrices and the stability bound do).
#[derive(Clone, Copy, Debug)]
pub struct Plate {
    pub e: f64,
    pub nu: f64,
    pub rho: f64,
    pub thickness: f64,
}

const PLATE: Plate = Plate {
    e: 1.0,
    nu: 0.3,
    rho: 1.0,
    thickness: 1.0,
};

/// Seed 000's element (section 3.1): the bilinear plane-stress quadrilateral, 4 nodes × 2 DOF.
#[element(dim = 2, nodes = 4, dofs = 2, operator = plane_stress, quadrature = 2)]
mod quad4 {
    use super::Plate;

    /// Counter-clockwise from the lower left corner (the seed's node order).
    pub const NODES: [[f64; 2]; 4] = [[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]];

    pub fn shape(r: f64, s: f64) -> [f64; 4] {
        [
            0.25 * (1.0 - r) * (1.0 - s),
            0.25 * (1.0 + r) * (1.0 - s),
            0.25 * (1.0 + r) * (1.0 + s),
            0.25 * (1.0 - r) * (1.0 + s),
        ]
    }

    pub fn material(m: &Plate) -> [[f64; 3]; 3] {
        let c = m.e / (1.0 - m.nu * m.nu);
        [
            [c, c * m.nu, 0.0],
            [c * m.nu, c, 0.0],
            [0.0, 0.0, c * (1.0 - m.nu) / 2.0],
        ]
    }

    pub fn density(m: &Plate) -> f64 {
        m.rho
    }

    pub fn thickness(m: &Plate) -> f64 {
        m.thickness
    }
}

/// Unit square elements of a unit plate: well inside the stability bound the stepper computes
/// from `K_e` and the lumped masses (`Δt_crit ≈ 0.8`).
pub const DT: f64 = 0.05;
/// Mass-proportional damping `C = α·M`.
pub const ALPHA: f64 = 0.05;

/// The structured model of `nx × ny` unit elements (or its unstructured twin).
pub fn model(elements: [usize; 2], unstructured: bool) -> Result<Model> {
    let spec = Quad4::spec();
    let sm = StructuredMesh::for_element(&spec, [elements[0], elements[1], 1], [1.0; 3])?;
    let mesh = if unstructured {
        Mesh::Unstructured(UnstructuredMesh::from_structured(&sm, spec.node_offsets)?)
    } else {
        Mesh::Structured(sm)
    };
    Ok(Model::of::<Quad4>(mesh, &PLATE)?)
}

/// Time step and damping of every run, with `schedule`.
pub fn config(schedule: ForceSchedule) -> StepperConfig {
    StepperConfig {
        schedule,
        dt: DT,
        alpha: ALPHA,
        c_max: wave_speed(PLATE.e, PLATE.rho),
    }
}
