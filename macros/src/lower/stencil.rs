//! Stencil model -> IR program: the body lowered once, the access analysis, the five
//! variants (plain, tiled, vec8, steps, march) with their signatures, legality and local memory,
//! the narrow vector kernel (vec4) and one fold kernel per reduction output.

use super::body::{Lowerer, Names};
use super::{access, variants};
use crate::ir::stencil::{Output, Reduction, StencilBody};
use crate::ir::{
    self, Access, Binding, Body, Completion, Define, Elem, Kernel, Origin, Param, Program, Role, Tunable, Ty,
};
use crate::model::{Arg, Boundary, OutType, ReduceOp, Scalar, Stencil};
use syn::ext::IdentExt;

/// A point update lowered once, for every kind that has one (stencils, sweeps).
pub struct Lowered {
    pub body: StencilBody,
    pub origin: Origin,
    pub completion: Completion,
    pub fp64: bool,
}

pub fn lower(s: &Stencil) -> syn::Result<Program> {
    let Lowered {
        body,
        origin,
        completion,
        fp64,
    } = lower_body(s, s.state.as_ref())?;
    let params = signature(&body);
    let plain = Kernel::new(&origin, "plain", params.clone());
    let mut tiled = Kernel::new(&origin, "tiled", params.clone());
    tiled.local_bytes_per_point = variants::tiled_local_bytes(&body);
    let mut vector = Kernel::new(&origin, &format!("vec{}", variants::LANES), params.clone());
    vector.lanes = variants::LANES;
    let mut narrow = Kernel::new(&origin, &format!("vec{}", variants::NARROW_LANES), params.clone());
    narrow.lanes = variants::NARROW_LANES;
    narrow.role = Role::Narrow;
    let mut steps = Kernel::new(&origin, "steps", params.clone());
    steps.unavailable = variants::steps_unavailable(&body);
    steps.local_bytes_per_point = variants::steps_local_bytes(&body);
    let mut march = Kernel::new(&origin, "march", params);
    march.unavailable = variants::march_unavailable(&body);
    march.local_bytes_per_point = variants::tiled_local_bytes(&body);

    let (tx, ty, wy) = body.tile;
    let mut tunables = vec![
        tunable("TILE_X", tx, "points along x of a tile (= work-group width)"),
        tunable("TILE_Y", ty, "points along y of a tile"),
        tunable("WG_Y", wy, "work-group rows; each walks TILE_Y / WG_Y rows"),
        tunable(
            "PTS",
            1,
            "points per work-item of the plain variant along the slowest axis",
        ),
    ];
    if steps.unavailable.is_none() {
        tunables.push(tunable("STEPS", 4, "iterations per launch of the steps variant"));
    }
    if march.unavailable.is_none() {
        tunables.push(tunable(
            "MARCH_Z",
            clforge_abi::DEFAULT_MARCH_Z,
            "planes along z per work-group of the march variant",
        ));
    }
    let contracts = region_contracts(&body);
    let mut kernels = vec![plain, tiled, vector, steps, march, narrow];
    kernels.extend(fold_kernels(&origin, &body));
    Ok(Program {
        origin,
        family: "stencil".into(),
        kernels,
        tunables,
        contracts,
        fp64,
        completion,
        body: Body::Stencil(Box::new(body)),
        extension: None,
    })
}

/// One kernel per reduction output, in the outputs' order: each work-group folds a chunk of
/// the variant's partials, `(partials, n, result)`; the runtime launches it over many groups,
/// then over their results in one group.
fn fold_kernels(origin: &Origin, body: &StencilBody) -> Vec<Kernel> {
    let first = body.out_reduce.as_ref().map(|_| ("out", body.out));
    let more = body
        .more
        .iter()
        .filter(|o| o.reduce.is_some())
        .map(|o| (o.name.as_str(), o.ty));
    first
        .into_iter()
        .chain(more)
        .map(|(output, ty)| {
            let global = || Ty::Global {
                elem: Elem::Scalar(ty),
                lanes: 1,
            };
            let params = vec![
                Param::new("partials", global(), Access::Read, Binding::Named).restrict(),
                Param::new("n", Ty::Value(Elem::Scalar(Scalar::I32)), Access::Read, Binding::Named),
                Param::new("result", global(), Access::Write, Binding::Named).restrict(),
            ];
            let mut k = Kernel::new(origin, &format!("fold_{output}"), params);
            k.role = Role::Fold {
                output: output.to_string(),
            };
            k
        })
        .collect()
}

/// `HX HY HZ` (the halo) and `UX UY UZ` (the first updated point per axis).
pub fn region_contracts(body: &StencilBody) -> Vec<Define> {
    let [hx, hy, hz] = body.access.halo;
    // The update region: a fixed boundary leaves a halo-wide edge on each axis of the grid.
    let edge = |axis: usize, h: usize| {
        if body.boundary == Boundary::Fixed && axis < body.rank {
            h
        } else {
            0
        }
    };
    vec![
        define("HX", hx, "halo along x: largest |offset| read"),
        define("HY", hy, "halo along y"),
        define("HZ", hz, "halo along z"),
        define(
            "UX",
            edge(0, hx),
            "first updated x (the updated region is UX <= x < nx - UX)",
        ),
        define("UY", edge(1, hy), "first updated y"),
        define("UZ", edge(2, hz), "first updated z"),
    ]
}

/// The body, its access analysis, names, and what the source completes at run time.
pub fn lower_body(s: &Stencil, state: Option<&syn::Ident>) -> syn::Result<Lowered> {
    let (mut names, arg_names) = Names::new(&s.args);
    // Names derived from the arguments' come before the body's own.
    let tile_names: Vec<String> = arg_names.iter().map(|n| names.fresh(&format!("t_{n}"))).collect();
    let mut struct_names: Vec<(String, String)> = Vec::new();
    for a in &s.args {
        if let Arg::Params { ty, .. } = a {
            let written = quote::quote!(#ty).to_string();
            if !struct_names.iter().any(|(w, _)| *w == written) {
                let last = ty
                    .segments
                    .last()
                    .map(|s| s.ident.unraw().to_string())
                    .unwrap_or_default();
                struct_names.push((written, names.fresh(&last)));
            }
        }
    }
    let mut l = Lowerer::new(&s.args, s.out, names);
    let first = OutType {
        ty: s.out,
        reduce: s.out_reduce,
    };
    let outs: Vec<OutType> = std::iter::once(first).chain(s.more_outs.iter().copied()).collect();
    let mut results = l.outputs(&s.body, &outs)?.into_iter();
    let result = results
        .next()
        .ok_or_else(|| syn::Error::new(s.name.span(), "a stencil without a value"))?;
    let reduction = |names: &mut Names, param: &str, op: Option<ReduceOp>| {
        op.map(|op| Reduction {
            op,
            acc: names.fresh(&format!("{param}_acc")),
            local: names.fresh(&format!("{param}_wg")),
        })
    };
    let out_reduce = reduction(&mut l.names, "out", s.out_reduce);
    let mut more = Vec::new();
    for (i, (result, o)) in results.zip(&s.more_outs).enumerate() {
        let name = l.names.fresh(&format!("out_{}", i + 1));
        let reduce = reduction(&mut l.names, &name, o.reduce);
        more.push(Output {
            name,
            ty: o.ty,
            result,
            reduce,
        });
    }
    if let (Some(name), false) = (state, more.is_empty() && out_reduce.is_none()) {
        return Err(syn::Error::new_spanned(
            name,
            format!(
                "`state = {name}`: temporal blocking is not generated for a stencil with several outputs or a \
                 reduction; \
                 remove `state` and launch one step at a time"
            ),
        ));
    }
    let mut access = access::analyse(&s.args, s.out, &l.reads, state)?;
    if !more.is_empty() || out_reduce.is_some() {
        access.iterated = None;
        access.state_candidates.clear();
    }
    // The march variant's plane pointers, one per z offset a staged grid is read at, after
    // every other name (so 1-D and 2-D kernels and the body's names are as without them).
    let plane_names = (0..s.args.len())
        .map(|i| {
            if s.rank < 3 || !access.staged[i] {
                return Vec::new();
            }
            let dzs: std::collections::BTreeSet<i64> =
                l.reads.iter().filter(|(a, _)| *a == i).map(|(_, o)| o[2]).collect();
            dzs.into_iter()
                .map(|dz| {
                    let part = match dz {
                        0 => "0".to_string(),
                        d if d > 0 => format!("p{d}"),
                        d => format!("m{}", d.unsigned_abs()),
                    };
                    (dz, l.names.fresh(&format!("{}_{part}", tile_names[i])))
                })
                .collect()
        })
        .collect();
    let body = StencilBody {
        args: s.args.clone(),
        arg_names,
        tile_names,
        plane_names,
        struct_names: struct_names.clone(),
        out: s.out,
        rank: s.rank,
        boundary: s.boundary,
        lets: l.lets,
        result,
        result_line: s.body.tail.line,
        out_reduce,
        more,
        uses_point: l.uses_point,
        access,
        tile: clforge_abi::default_tile(s.rank),
        lanes: variants::LANES,
    };
    let origin = Origin {
        name: s.name.unraw().to_string(),
        file: s.file.clone(),
        line: s.line,
        doc: s.doc.clone(),
    };
    let fp64 = uses_f64(&body, &l.members, &l.consts);
    let completion = Completion {
        params: s
            .args
            .iter()
            .filter_map(|a| match a {
                Arg::Params { ty, .. } => Some(ty.clone()),
                _ => None,
            })
            .scan(Vec::new(), |seen: &mut Vec<String>, ty| {
                let written = quote::quote!(#ty).to_string();
                let first = !seen.contains(&written);
                seen.push(written.clone());
                Some(first.then(|| {
                    let cl = struct_names.iter().find(|(w, _)| *w == written).map(|(_, n)| n.clone());
                    (ty, cl.unwrap_or_default())
                }))
            })
            .flatten()
            .collect(),
        consts: l.consts,
        members: l.members,
    };
    Ok(Lowered {
        body,
        origin,
        completion,
        fp64,
    })
}

/// The ABI of every stencil variant: the output, the user's arguments in order, the extents.
fn signature(b: &StencilBody) -> Vec<Param> {
    let mut params = vec![Param::new(
        "out",
        Ty::Global {
            elem: Elem::Scalar(b.out),
            lanes: 1,
        },
        Access::Write,
        Binding::Output,
    )
    .restrict()];
    for (i, o) in b.more.iter().enumerate() {
        params.push(
            Param::new(
                &o.name,
                Ty::Global {
                    elem: Elem::Scalar(o.ty),
                    lanes: 1,
                },
                Access::Write,
                Binding::MoreOutput(i + 1),
            )
            .restrict(),
        );
    }
    for (i, (a, name)) in b.args.iter().zip(&b.arg_names).enumerate() {
        if let Some(ty) = arg_ty(b, a) {
            params.push(Param::new(name, ty, Access::Read, Binding::UserArg(i)).restrict());
        }
    }
    for (axis, n) in ["nx", "ny", "nz"].iter().enumerate() {
        params.push(Param::new(
            n,
            Ty::Value(Elem::Scalar(Scalar::I32)),
            Access::Read,
            Binding::Extent(axis),
        ));
    }
    // A body that reads its point: where this grid starts in the whole grid (a slab of a split
    // grid starts past 0) and the whole grid's extents.
    if b.uses_point {
        for (axis, n) in ["ox", "oy", "oz"].iter().enumerate() {
            params.push(Param::new(
                n,
                Ty::Value(Elem::Scalar(Scalar::I32)),
                Access::Read,
                Binding::Origin(axis),
            ));
        }
        for (axis, n) in ["gnx", "gny", "gnz"].iter().enumerate() {
            params.push(Param::new(
                n,
                Ty::Value(Elem::Scalar(Scalar::I32)),
                Access::Read,
                Binding::WholeExtent(axis),
            ));
        }
    }
    // Reductions: the box of points that count (a split grid's own planes, not its halos).
    if b.out_reduce.is_some() || b.more.iter().any(|o| o.reduce.is_some()) {
        for (k, n) in ["rx0", "ry0", "rz0", "rx1", "ry1", "rz1"].iter().enumerate() {
            params.push(Param::new(
                n,
                Ty::Value(Elem::Scalar(Scalar::I32)),
                Access::Read,
                Binding::ReduceBox(k),
            ));
        }
    }
    params
}

/// The kernel parameter type of a user argument; `None` for one the kernel supplies itself
/// (`at: Point`).
pub(crate) fn arg_ty(b: &StencilBody, a: &Arg) -> Option<Ty> {
    Some(match a {
        // `packed(name = bits)`: 32-bit words of `32 / bits` points each.
        Arg::Field(f) if f.packed.is_some() => Ty::Packed {
            word: Scalar::U32,
            bits: f.packed.unwrap_or(8) as usize,
        },
        Arg::Field(f) => Ty::Global {
            elem: Elem::Scalar(f.elem),
            lanes: 1,
        },
        Arg::Params { ty, .. } => {
            let written = quote::quote!(#ty).to_string();
            Ty::Struct(
                b.struct_names
                    .iter()
                    .find(|(w, _)| *w == written)
                    .map(|(_, n)| n.clone())
                    .unwrap_or_default(),
            )
        }
        Arg::Scalar { ty, .. } => Ty::Value(Elem::Scalar(*ty)),
        Arg::Point { .. } => return None,
    })
}

fn uses_f64(b: &StencilBody, members: &[ir::MemberUse], consts: &[ir::ConstUse]) -> bool {
    b.out == Scalar::F64
        || b.more.iter().any(|o| o.ty == Scalar::F64)
        || b.args.iter().any(|a| {
            matches!(a, Arg::Field(f) if f.elem == Scalar::F64) || matches!(a, Arg::Scalar { ty: Scalar::F64, .. })
        })
        || members.iter().any(|m| m.ty == Scalar::F64)
        || consts.iter().any(|c| c.ty == Scalar::F64)
}

pub fn tunable(name: &str, default: usize, doc: &str) -> Tunable {
    Tunable {
        name: name.into(),
        default,
        doc: doc.into(),
    }
}

pub fn define(name: &str, value: impl ToString, doc: &str) -> Define {
    Define {
        name: name.into(),
        value: value.to_string(),
        doc: doc.into(),
    }
}
