//! The element-matrix kernels (`templates/element/forming.cl.tera`, f64) and their ABI: the
//! template prints their signatures from these lists and the macro prints the runtime's
//! `FormingKernels` launchers from them, so the forming algorithms write no argument order.

use crate::ir::{Access, Binding, Elem, Kernel, Origin, Param, Role, Ty};
use crate::model::Scalar;

/// Every forming kernel: one per algorithm, and the geometry pre-pass.
pub fn kernels(origin: &Origin) -> Vec<Kernel> {
    // The inputs every per-element kernel reads, the packed matrices it writes, the element
    // count and the first degenerate element's slot.
    let common = || {
        vec![
            read("xe"),
            read("de"),
            read("dref"),
            read("wq"),
            write("ke"),
            int("m"),
            flag("bad"),
        ]
    };
    let with = |mut ps: Vec<Param>, more: Vec<Param>| {
        ps.extend(more);
        ps
    };
    let k = |variant: &str, params: Vec<Param>| {
        let mut k = Kernel::new(origin, variant, params);
        k.role = Role::Forming;
        k
    };
    vec![
        k("ke_ai", common()),
        k("ke_aii", with(common(), vec![local("red", 1)])),
        k(
            "ke_tiled",
            with(common(), vec![local("lg", 1), local("lwd", 1), local("ljinv", 1)]),
        ),
        k(
            "ke_geometry",
            vec![
                read("xe"),
                read("dref"),
                read("wq"),
                write("gj"),
                int("e0"),
                int("n"),
                flag("bad"),
            ],
        ),
        // Without the geometry pre-pass (`SPRE` 0) `gj` and `e0` are not read.
        k(
            "ke_staged",
            with(
                common(),
                vec![
                    local("lg", 1),
                    local("lh2", 2),
                    local("lwd", 1),
                    local("ljinv", 1),
                    read("gj"),
                    int("e0"),
                ],
            ),
        ),
        k(
            "ke_mma",
            vec![
                read("de"),
                read("dref"),
                write("ke"),
                read("gj"),
                int("e0"),
                shared("ly"),
                shared("lw"),
                shared("lc"),
                shared("ld"),
            ],
        ),
    ]
}

fn global(name: &str, s: Scalar, access: Access) -> Param {
    Param::new(
        name,
        Ty::Global {
            elem: Elem::Scalar(s),
            lanes: 1,
        },
        access,
        Binding::Named,
    )
    .restrict()
}

/// `__global const double* restrict`.
fn read(name: &str) -> Param {
    global(name, Scalar::F64, Access::Read)
}

/// `__global double* restrict`.
fn write(name: &str) -> Param {
    global(name, Scalar::F64, Access::Write)
}

/// `__global int* restrict`: the first degenerate element, lowered with `atomic_min`.
fn flag(name: &str) -> Param {
    global(name, Scalar::I32, Access::Write)
}

fn int(name: &str) -> Param {
    Param::new(name, Ty::Value(Elem::Scalar(Scalar::I32)), Access::Read, Binding::Named)
}

/// `__local doubleN* restrict` scratch.
fn local(name: &str, lanes: usize) -> Param {
    shared_lanes(name, lanes).restrict()
}

/// `__local double*` scratch that other pointers into it may alias (the tensor-core stages).
fn shared(name: &str) -> Param {
    shared_lanes(name, 1)
}

fn shared_lanes(name: &str, lanes: usize) -> Param {
    Param::new(
        name,
        Ty::Local {
            elem: Elem::Scalar(Scalar::F64),
            lanes,
        },
        Access::ReadWrite,
        Binding::Named,
    )
}
