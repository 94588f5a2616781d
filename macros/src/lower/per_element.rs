//! The element family's per-element-matrix kernels: the unstructured schedule, the fused
//! node gather on a structured grid, and the stress recovery, reading `K_e`, `G_e` of element
//! `e` from global memory (`e · ND · NV` and `e · STRAINS · NV` `real8`s in), for meshes whose
//! elements differ (distorted quads, every simplex mesh, a grid whose elements each have their
//! own material). A pass after `element::lower`: the shared-matrix kernels keep one `K_e` in
//! `__constant` memory, which cannot hold one matrix per element.

use crate::ir::{Access, Binding, Body, Elem, Kernel, Param, Program, Ty};
use crate::model::Scalar;

/// Adds `<element>_unstructured_pe`, `<element>_gather_pe` (not for simplices: no grid),
/// `<element>_gather_unstructured` and `<element>_stress_unstructured_pe` to an element program with device kernels (modal
/// elements have only the forming kernels).
pub fn with_kernels(mut p: Program) -> Program {
    let Body::Element(b) = &p.body else {
        return p;
    };
    if b.forming.modal.is_some() {
        return p;
    }
    let lanes = b.lanes;
    let simplex = b.forming.cell == clforge_abi::Cell::Simplex;
    let global = |name: &str, elem: Elem, lanes: usize, access: Access| {
        Param::new(name, Ty::Global { elem, lanes }, access, Binding::Named)
    };
    let int = |name: &str| Param::new(name, Ty::Value(Elem::Scalar(Scalar::I32)), Access::Read, Binding::Named);
    let nodes = || global("elem_nodes", Elem::Scalar(Scalar::I32), 1, Access::Read);
    let u = || global("u", Elem::Real, 1, Access::Read);
    let real = |name: &str, access| global(name, Elem::Real, 1, access);
    let mut gather = Kernel::new(
        &p.origin,
        "gather_pe",
        vec![
            global("Ke", Elem::Real, lanes, Access::Read),
            real("minv", Access::Read),
            real("damp", Access::Read),
            real("u_in", Access::Read),
            real("u_out", Access::Write),
            real("v", Access::ReadWrite),
            Param::new("dt", Ty::Value(Elem::Real), Access::Read, Binding::Named),
            int("nx"),
            int("ny"),
            int("nz"),
        ],
    );
    if simplex {
        gather.unavailable = Some(
            "a `cell = simplex` element has no place on a structured grid: it steps on unstructured meshes only".into(),
        );
    }
    let kernels = [
        Kernel::new(
            &p.origin,
            "unstructured_pe",
            vec![
                global("Ke", Elem::Real, 1, Access::Read),
                nodes(),
                u(),
                global("f", Elem::Real, 1, Access::ReadWrite),
                int("first"),
                int("count"),
            ],
        ),
        gather,
        // The node gather on any mesh: one work-item per DOF walks its node's (element, local
        // node) slots, reading that row of each element's own K_e.
        Kernel::new(
            &p.origin,
            "gather_unstructured",
            vec![
                global("Ke", Elem::Real, 1, Access::Read),
                nodes(),
                global("node_first", Elem::Scalar(Scalar::I32), 1, Access::Read),
                global("node_slots", Elem::Scalar(Scalar::I32), 1, Access::Read),
                real("minv", Access::Read),
                real("damp", Access::Read),
                u(),
                real("u_out", Access::Write),
                real("v", Access::ReadWrite),
                Param::new("dt", Ty::Value(Elem::Real), Access::Read, Binding::Named),
                // DOFs `first .. n - 1`: a split part steps its interior while its ghosts travel.
                int("first"),
                int("n"),
            ],
        ),
        Kernel::new(
            &p.origin,
            "stress_unstructured_pe",
            vec![
                global("G", Elem::Real, lanes, Access::Read),
                global("emat", Elem::Scalar(Scalar::U8), 1, Access::Read),
                nodes(),
                u(),
                global("stress", Elem::Real, 1, Access::Write),
                int("ne"),
            ],
        ),
    ];
    p.kernels.extend(kernels);
    p
}
