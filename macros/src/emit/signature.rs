//! Kernel parameter lists printed from `ir::Param`: the one statement of a kernel's ABI in C.
//! The generated Rust launchers bind arguments from the same list (`expand/launch.rs`).

use crate::ir::{Access, Param, Ty};

/// One declaration per parameter, in ABI order.
pub fn params(params: &[Param]) -> Vec<String> {
    params.iter().map(param).collect()
}

fn param(p: &Param) -> String {
    let restrict = if p.restrict { " restrict" } else { "" };
    let name = &p.name;
    match &p.ty {
        Ty::Global { elem, lanes } => {
            let ty = elem.cl(*lanes);
            match p.access {
                Access::Read => format!("__global const {ty}*{restrict} {name}"),
                Access::Write | Access::ReadWrite => format!("__global {ty}*{restrict} {name}"),
                Access::Atomic | Access::Volatile => format!("volatile __global {ty}* {name}"),
            }
        }
        Ty::Constant { elem, lanes } => format!("__constant const {}*{restrict} {name}", elem.cl(*lanes)),
        Ty::Struct(s) => format!("__constant const {s}*{restrict} {name}"),
        Ty::Value(elem) => format!("const {} {name}", elem.cl(1)),
        Ty::Local { elem, lanes } => format!("__local {}*{restrict} {name}", elem.cl(*lanes)),
        Ty::Packed { word, .. } => match p.access {
            Access::Read => format!("__global const {}*{restrict} {name}", word.cl()),
            _ => format!("__global {}*{restrict} {name}", word.cl()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Binding, Elem};
    use crate::model::Scalar;

    #[test]
    fn signatures_print_access_and_aliasing() {
        let g = || Ty::Global {
            elem: Elem::Scalar(Scalar::F32),
            lanes: 1,
        };
        let ps = [
            Param::new("out", g(), Access::Write, Binding::Output).restrict(),
            Param::new("psi", g(), Access::Read, Binding::UserArg(0)).restrict(),
            Param::new(
                "K",
                Ty::Constant {
                    elem: Elem::Real,
                    lanes: 8,
                },
                Access::Read,
                Binding::Named,
            ),
            Param::new("k", Ty::Struct("Coeffs".into()), Access::Read, Binding::UserArg(1)).restrict(),
            Param::new(
                "nx",
                Ty::Value(Elem::Scalar(Scalar::I32)),
                Access::Read,
                Binding::Extent(0),
            ),
        ];
        assert_eq!(
            params(&ps),
            [
                "__global float* restrict out",
                "__global const float* restrict psi",
                "__constant const real8* K",
                "__constant const Coeffs* restrict k",
                "const int nx",
            ]
        );
    }
}
