//! The element family's per-element-matrix kernels: the unstructured schedule and the stress
//! recovery reading `K_e`, `G_e` of element `e` from global memory (`e · ND · NV` and
//! `e · STRAINS · NV` `real8`s in), for meshes whose elements differ (distorted quads,
//! every simplex mesh). A pass after `element::lower`: the shared-matrix kernels keep one
//! `K_e` in `__constant` memory, which cannot hold one matrix per element.

use crate::ir::{Access, Binding, Body, Elem, Kernel, Param, Program, Ty};
use crate::model::Scalar;

/// Adds `<element>_unstructured_pe` and `<element>_stress_unstructured_pe` to an element
/// program with device kernels (modal elements have only the forming kernels).
pub fn with_kernels(mut p: Program) -> Program {
    let Body::Element(b) = &p.body else {
        return p;
    };
    if p.kernels.is_empty() {
        return p;
    }
    let lanes = b.lanes;
    let global = |name: &str, elem: Elem, lanes: usize, access: Access| {
        Param::new(name, Ty::Global { elem, lanes }, access, Binding::Named)
    };
    let int = |name: &str| Param::new(name, Ty::Value(Elem::Scalar(Scalar::I32)), Access::Read, Binding::Named);
    let nodes = || global("elem_nodes", Elem::Scalar(Scalar::I32), 1, Access::Read);
    let u = || global("u", Elem::Real, 1, Access::Read);
    let kernels = [
        Kernel::new(
            &p.origin,
            "unstructured_pe",
            vec![
                global("Ke", Elem::Real, lanes, Access::Read),
                nodes(),
                u(),
                global("f", Elem::Real, 1, Access::ReadWrite),
                int("first"),
                int("count"),
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
