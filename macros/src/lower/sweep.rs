//! Sweep model -> IR program: the legality proof (each `new` read behind the point, each `old`
//! read ahead, along every axis, in the declared or derived direction), the body lowered once
//! as a stencil body, and the nine schedules with their signatures and availability.

use super::stencil::{define, lower_body, region_contracts, tunable, Lowered};
use crate::ir::sweep::SweepBody;
use crate::ir::{Access, Binding, Body, Dependence, Elem, Kernel, Origin, Param, Program, Tunable, Ty};
use crate::model::sweep::{Sweep, SweepRead};
use crate::model::{Arg, Boundary, Scalar};

const AXES: [&str; 3] = ["x", "y", "z"];

fn dir_name(forward: bool) -> &'static str {
    if forward {
        "forward (increasing)"
    } else {
        "backward (decreasing)"
    }
}

/// `(x+1, y-1)` for an offset, over `rank` axes.
fn point(offset: [i64; 3], rank: usize) -> String {
    let parts: Vec<String> = (0..rank)
        .map(|a| match offset[a] {
            0 => AXES[a].to_string(),
            d if d > 0 => format!("{}+{d}", AXES[a]),
            d => format!("{}{d}", AXES[a]),
        })
        .collect();
    format!("({})", parts.join(", "))
}

/// The direction each read asks of an axis: `Some(true)` forward, `Some(false)` backward.
fn asks(r: &SweepRead, axis: usize) -> Option<bool> {
    match r.offset[axis].signum() {
        0 => None,
        // A new value behind (negative) needs the axis increasing; an old one ahead too.
        s => Some((s < 0) == r.new),
    }
}

/// The direction per axis: declared, else derived from the reads (forward where nothing asks);
/// then every read is checked against it. The error names the offending read and the order
/// that would break.
pub fn direction(sw: &Sweep) -> syn::Result<[bool; 3]> {
    let rank = sw.stencil.rank;
    let mut forward = [true; 3];
    let mut declared = [false; 3];
    if let Some(order) = &sw.order {
        match order.forward.len() {
            1 => {
                forward = [order.forward[0]; 3];
                declared = [true; 3];
            }
            n if n == rank => {
                for (a, &f) in order.forward.iter().enumerate() {
                    forward[a] = f;
                    declared[a] = true;
                }
            }
            n => {
                return Err(syn::Error::new(
                    order.span,
                    format!("this sweep is {rank}-D: give one direction (all axes) or {rank}, found {n}"),
                ))
            }
        }
    }
    // Derive undeclared axes; two reads asking opposite directions of one axis are a cycle.
    for a in 0..rank {
        if declared[a] {
            continue;
        }
        let mut first: Option<(&SweepRead, bool)> = None;
        for r in &sw.reads {
            let Some(f) = asks(r, a) else { continue };
            match first {
                None => first = Some((r, f)),
                Some((r0, f0)) if f0 != f => {
                    return Err(syn::Error::new_spanned(
                        &r.tokens,
                        format!(
                            "these reads need opposite directions along {axis}: `{}` needs {axis} {} and `{}` needs \
                             {axis} {}; no order of the points gives both (a cycle), so no sweep computes this update \
                             in place. Read one of them from another grid, or split the update into two sweeps",
                            r0.text,
                            dir_name(f0),
                            r.text,
                            dir_name(f),
                            axis = AXES[a],
                        ),
                    ))
                }
                Some(_) => {}
            }
        }
        if let Some((_, f)) = first {
            forward[a] = f;
        }
    }
    for r in &sw.reads {
        check_read(r, forward, rank)?;
    }
    Ok(forward)
}

fn check_read(r: &SweepRead, forward: [bool; 3], rank: usize) -> syn::Result<()> {
    let here = point([0; 3], rank);
    let there = point(r.offset, rank);
    // +1 ahead, -1 behind, per axis, in the sweep's direction.
    let side: Vec<i64> = (0..rank)
        .map(|a| r.offset[a].signum() * if forward[a] { 1 } else { -1 })
        .collect();
    let order: Vec<String> = (0..rank)
        .map(|a| format!("{} {}", AXES[a], if forward[a] { "forward" } else { "backward" }))
        .collect();
    let order = order.join(", ");
    let ahead: Vec<&str> = (0..rank).filter(|&a| side[a] > 0).map(|a| AXES[a]).collect();
    let behind: Vec<&str> = (0..rank).filter(|&a| side[a] < 0).map(|a| AXES[a]).collect();
    let mixed = !ahead.is_empty() && !behind.is_empty();
    let mixed_note = || {
        format!(
            " {there} lies ahead along {} but behind along {}: a row-by-row sweep would have updated it and a \
             column-by-column one would not, so its value depends on the loop order; clforge's schedules \
             (wavefronts) need every `new` read behind or level along every axis and every `old` read ahead or level",
            ahead.join(", "),
            behind.join(", ")
        )
    };
    if r.new {
        if side.iter().all(|&s| s == 0) {
            return Err(syn::Error::new_spanned(
                &r.tokens,
                format!(
                    "`{}` is the value this function computes; read the point's value before the sweep with `.old({})`",
                    r.text,
                    vec!["0"; rank].join(", ")
                ),
            ));
        }
        if !ahead.is_empty() {
            let mut msg = format!(
                "`{}` reads a new value ahead of the point along {}: the sweep runs {order}, so {there} is not \
                 updated yet when {here} is. Read its value before the sweep with `.old(..)`, or sweep {} the other way",
                r.text,
                ahead.join(", "),
                ahead.join(", "),
            );
            if mixed {
                msg.push('.');
                msg.push_str(&mixed_note());
            }
            return Err(syn::Error::new_spanned(&r.tokens, msg));
        }
    } else if !behind.is_empty() {
        let mut msg = format!(
            "`{}` reads an old value behind the point along {}: the sweep runs {order} in place, so {there} is \
             already overwritten when {here} is computed. Read the updated value with `.new(..)`, or keep the old \
             values in a separate grid",
            r.text,
            behind.join(", "),
        );
        if mixed {
            msg.push('.');
            msg.push_str(&mixed_note());
        }
        return Err(syn::Error::new_spanned(&r.tokens, msg));
    }
    Ok(())
}

pub fn lower(sw: &Sweep) -> syn::Result<Program> {
    let forward = direction(sw)?;
    let s = &sw.stencil;
    let Lowered {
        mut body,
        origin,
        completion,
        fp64,
    } = lower_body(s, Some(s.args[sw.state].name()))?;
    // The local-memory schedules stage every field the block reads (the swept field included,
    // whatever its offsets): the walk through the block then touches no global memory, whose
    // latency would otherwise sit on every one of its 2L - 1 steps.
    for (i, a) in s.args.iter().enumerate() {
        if matches!(a, Arg::Field(_)) {
            body.access.staged[i] = true;
        }
    }
    let dependence = Dependence { forward };
    let mut kernels = schedules(&origin, &body, sw);
    for k in &mut kernels {
        k.dependence = Some(dependence);
    }
    let tunables = tunables(s.rank);
    let mut contracts = region_contracts(&body);
    for (a, n) in ["SW_DIRX", "SW_DIRY", "SW_DIRZ"].iter().enumerate() {
        contracts.push(define(
            n,
            u8::from(forward[a]),
            "1: the sweep runs this axis forward (increasing index)",
        ));
    }
    Ok(Program {
        origin,
        family: "sweep".into(),
        kernels,
        tunables,
        contracts,
        fp64,
        completion,
        body: Body::Sweep(Box::new(SweepBody {
            body,
            state: sw.state,
            forward,
        })),
        extension: None,
    })
}

/// The nine schedules with their signatures, availability and local memory, in the runtime's
/// order.
fn schedules(origin: &Origin, body: &crate::ir::stencil::StencilBody, sw: &Sweep) -> Vec<Kernel> {
    let s = &sw.stencil;
    let rank = s.rank;
    let base = |state_access: Access| signature(body, sw.state, state_access);
    let diag = || {
        Param::new(
            "sw_diag",
            Ty::Value(Elem::Scalar(Scalar::I32)),
            Access::Read,
            Binding::Named,
        )
    };
    let serial = Kernel::new(origin, "serial", base(Access::ReadWrite));
    let mut wave_params = base(Access::ReadWrite);
    wave_params.push(diag());
    let mut wave = Kernel::new(origin, "wave", wave_params.clone());
    let mut wave_local = Kernel::new(origin, "wave_local", wave_params.clone());
    let mut blocks = Kernel::new(origin, "blocks", wave_params.clone());
    let mut blocks_local = Kernel::new(origin, "blocks_local", wave_params);
    // The one-launch schedules hand blocks over through flags, a ticket counter and the sweep's
    // epoch (`sw_epoch`) or flag base (`sw_base`).
    let handover = |params: &mut Vec<Param>, value: &str| {
        for name in ["sw_flags", "sw_ticket"] {
            params.push(Param::new(
                name,
                Ty::Global {
                    elem: Elem::Scalar(Scalar::I32),
                    lanes: 1,
                },
                Access::Atomic,
                Binding::Named,
            ));
        }
        params.push(Param::new(
            value,
            Ty::Value(Elem::Scalar(Scalar::I32)),
            Access::Read,
            Binding::Named,
        ));
    };
    let mut persistent_params = base(Access::Volatile);
    handover(&mut persistent_params, "sw_epoch");
    let mut persistent = Kernel::new(origin, "persistent", persistent_params.clone());
    let mut persistent_local = Kernel::new(origin, "persistent_local", persistent_params.clone());
    let mut cube_params = persistent_params;
    cube_params.push(Param::new(
        "sw_order",
        Ty::Global {
            elem: Elem::Scalar(Scalar::I32),
            lanes: 1,
        },
        Access::Read,
        Binding::Named,
    ));
    let mut persistent_blocks = Kernel::new(origin, "persistent_blocks", cube_params);
    // The strip schedule: the swept field is read through a volatile alias only for rows of
    // the strips above (written by other work-groups), so it is neither volatile nor restrict.
    let mut strip_params = base(Access::ReadWrite);
    strip_params[sw.state].restrict = false;
    handover(&mut strip_params, "sw_base");
    let mut strip = Kernel::new(origin, "strip", strip_params);
    if rank < 2 {
        let why = "a 1-D sweep is one chain of dependent points: only the serial schedule exists";
        wave.unavailable = Some(why.into());
        persistent.unavailable = Some(why.into());
    }
    if rank != 2 || s.boundary != Boundary::Fixed {
        let why: String = match (rank, s.boundary) {
            (2, _) => {
                "the local-memory schedules need `boundary = fixed` (a clamped read may land on a point \
                       this block has updated while its staged copy is old)"
            }
            _ => "the local-memory schedules are 2-D",
        }
        .into();
        wave_local.unavailable = Some(why.clone());
        persistent_local.unavailable = Some(why);
    }
    if rank != 2 {
        strip.unavailable = Some("the strip schedule is 2-D (work-groups own strips of rows of a plane)".into());
    }
    if rank != 3 {
        let why = "the cubic-block schedules (seed 001's algorithm 2) are 3-D";
        blocks.unavailable = Some(why.into());
        persistent_blocks.unavailable = Some(why.into());
        blocks_local.unavailable = Some(why.into());
    } else if s.boundary != Boundary::Fixed {
        blocks_local.unavailable = Some(
            "the local-memory schedules need `boundary = fixed` (a clamped read may land on a point this \
             block has updated while its staged copy is old)"
                .into(),
        );
    }
    wave_local.local_bytes_per_point = super::variants::tiled_local_bytes(body);
    persistent_local.local_bytes_per_point = wave_local.local_bytes_per_point;
    blocks_local.local_bytes_per_point = wave_local.local_bytes_per_point;
    vec![
        serial,
        wave,
        wave_local,
        blocks,
        persistent,
        persistent_local,
        persistent_blocks,
        blocks_local,
        strip,
    ]
}

/// The sweep's tunables with their defaults for a `rank`-D grid.
fn tunables(rank: usize) -> Vec<Tunable> {
    vec![
        tunable(
            "SW_L",
            if rank == 3 { 8 } else { 16 },
            "block edge L: points per block along each axis (work-items per block: L, or L*L for blocks)",
        ),
        tunable(
            "SW_C",
            32,
            "strip schedule: steps between two publications of a strip's progress (and polls of the strip above)",
        ),
        tunable(
            "SW_R",
            1,
            "strip schedule: rows each work-item walks (a divisor of SW_L)",
        ),
        tunable(
            "SW_PF",
            0,
            "strip schedule: the next phase's lines are loaded during this one, one load every SW_PF columns (0: none)",
        ),
        tunable(
            "SW_MAX_SPINS",
            1 << 26,
            "spins a persistent work-group waits for an upstream block before it raises the stall flag",
        ),
        tunable(
            "SW_BASE",
            0,
            "where the swept window starts in the grids, in points (a slab's window when the grid is split over devices)",
        ),
    ]
}

/// The ABI of every schedule: the user's arguments in order (the swept field read and written
/// in place), the extents; schedules append their own parameters.
pub(crate) fn signature(b: &crate::ir::stencil::StencilBody, state: usize, state_access: Access) -> Vec<Param> {
    let mut params = Vec::new();
    for (i, (a, name)) in b.args.iter().zip(&b.arg_names).enumerate() {
        let Some(ty) = super::stencil::arg_ty(b, a) else {
            continue;
        };
        let access = if i == state { state_access } else { Access::Read };
        let p = Param::new(name, ty, access, Binding::UserArg(i));
        // The persistent schedule's field is shared between work-groups: volatile, no restrict.
        params.push(if access == Access::Volatile { p } else { p.restrict() });
    }
    for (axis, n) in ["nx", "ny", "nz"].iter().enumerate() {
        params.push(Param::new(
            n,
            Ty::Value(Elem::Scalar(Scalar::I32)),
            Access::Read,
            Binding::Extent(axis),
        ));
    }
    params
}
