//! What [`Stepper::with_precision`](super::Stepper::with_precision) checks, orders, sizes and
//! uploads before the first step.

use crate::buffer::Buffer;
use crate::device::Device;
use crate::element::mesh::{Mesh, UnstructuredMesh};
use crate::element::plan::{assembled_stencil, assembles, class_gather_defaults, gather_options, kernel_fits, Groups};
use crate::element::plan::{check_launches, default_local, int_index, interleaved, PE_GROUP};
use crate::element::reference::padded;
use crate::element::schedule::{plan, ForceSchedule, Pass};
use crate::element::spec::ElementSpec;
use crate::element::stability::{check_time_step, StabilityBound};
use crate::element::{
    problem::{Model, StepperConfig},
    Real,
};
use crate::error::{Error, Result};
use crate::program::Program;

/// What a stepper's checks find: the stability bound, the mesh's extents as kernel `int`s, and
/// whether the gather runs on an unstructured mesh.
pub(crate) struct Checked {
    pub(crate) bound: StabilityBound,
    pub(crate) mesh_dims: [i32; 3],
    pub(crate) gather_unstructured: bool,
}

/// The model, schedule, precision and sizes a stepper refuses, before anything is built.
pub(crate) fn check_model<R: Real>(device: &Device, model: &Model, config: &StepperConfig) -> Result<Checked> {
    let bound = check_time_step(model, config.dt, config.alpha, config.c_max)?;
    if size_of::<R>() == 8 && !device.info().fp64 {
        return Err(Error::InvalidConfig(format!(
            "an `f64` stepper computes in `double`, which device `{}` does not support (no `cl_khr_fp64`); \
                 step in `f32` or select another device",
            device.info().name
        )));
    }
    let spec = model.spec;
    let schedule = config.schedule;
    let (nd, ne) = (model.nd(), model.mesh.element_count());
    let ndp = nd.div_ceil(8) * 8;
    let uniform = model.elements.is_uniform();
    let unstructured = matches!(model.mesh, Mesh::Unstructured(_));
    // The gather on an unstructured mesh reads a K_e per element (materials expanded).
    let gather_unstructured = unstructured && schedule == ForceSchedule::Gather;
    let needs_uniform = !matches!(schedule, ForceSchedule::BlockedMaterial(_)) && !gather_unstructured;
    if model.per_element && !matches!(schedule, ForceSchedule::Unstructured | ForceSchedule::Gather) {
        return Err(Error::InvalidConfig(format!(
            "a model with one K_e per element (`Model::per_element`) steps with `ForceSchedule::Unstructured` \
                 (any mesh) or `ForceSchedule::Gather` (any mesh), which read K_e by element index; schedule \
                 `{}` shares one K_e per material",
            schedule.suffix()
        )));
    }
    // Per-element matrices hold their material, and a dead element gets a zero K_e.
    if needs_uniform && !uniform && !model.per_element {
        return Err(Error::InvalidConfig(format!(
            "schedule `{}` keeps one K_e in constant memory for all elements; a model with several materials \
                 or cracked elements needs `ForceSchedule::BlockedMaterial`",
            schedule.suffix()
        )));
    }
    // The kernels index DOFs, nodes and elements with 32-bit `int`s.
    let n = model.dof_count();
    int_index("DOFs (nodes × DOFs per node)", n)?;
    let mesh_dims = match &model.mesh {
        Mesh::Structured(m) => [
            int_index("elements along x", m.elements[0])?,
            int_index("elements along y", m.elements[1])?,
            int_index("elements along z", m.elements[2])?,
        ],
        Mesh::Unstructured(_) => [int_index("elements", ne)?, 1, 1],
    };
    int_index("elements", ne)?;
    if model.per_element || gather_unstructured {
        // The kernels index `K_e` of element `e` at `e · ND · ND` reals (unstructured) or
        // `e + i · elements` `real8`s (gather), `G_e` at `e · STRAINS · NV` `real8`s.
        let nv = ndp / 8;
        int_index("K_e entries (elements × ND × ND)", ne.saturating_mul(nd * nd))?;
        int_index("K_e rows (elements × ND × NV)", ne.saturating_mul(nd * nv))?;
        int_index(
            "G_e rows (elements × STRAINS × NV)",
            ne.saturating_mul(spec.strains * nv),
        )?;
    }
    Ok(Checked {
        bound,
        mesh_dims,
        gather_unstructured,
    })
}

/// The elements' order on the device (colour by colour for the unstructured schedule, else
/// element order), the sorted connectivity and the colours' sizes.
pub(crate) fn element_order(
    model: &Model,
    spec: &ElementSpec,
    schedule: ForceSchedule,
    conn: &[u32],
) -> Result<(Vec<usize>, Vec<i32>, Vec<usize>)> {
    let ne = model.mesh.element_count();
    // Unstructured: elements stored colour by colour (a structured grid coloured as a mesh).
    Ok(match (&model.mesh, schedule) {
        (mesh, ForceSchedule::Unstructured) => {
            let (colours, count) = match mesh {
                Mesh::Unstructured(m) => m.greedy_colours()?,
                Mesh::Structured(m) => UnstructuredMesh::from_structured(m, spec.node_offsets)?.greedy_colours()?,
            };
            let mut order: Vec<usize> = (0..ne).collect();
            order.sort_by_key(|&e| colours[e]);
            let sizes = (0..count as u32)
                .map(|c| colours.iter().filter(|&&x| x == c).count())
                .collect();
            let sorted: Vec<i32> = order
                .iter()
                .flat_map(|&e| conn[e * spec.nodes..(e + 1) * spec.nodes].iter().map(|&n| n as i32))
                .collect();
            (order, sorted, sizes)
        }
        // Element order (the per-element gather reads K_e of element e at e · ND · NV).
        _ => ((0..ne).collect(), vec![0], vec![]),
    })
}

/// The built program and its sized launches: the element-force passes, the work-groups of the
/// other launches, the build options and the class-table gather's rows.
pub(crate) struct Built {
    pub(crate) passes: Vec<Pass>,
    pub(crate) program: Program,
    pub(crate) groups: Groups,
    pub(crate) options: String,
    pub(crate) class_rows: usize,
}

/// Builds the element's program for the schedule and sizes its launches.
pub(crate) fn build<R: Real>(
    device: &Device,
    model: &Model,
    schedule: ForceSchedule,
    colour_sizes: &[usize],
    gather_unstructured: bool,
) -> Result<Built> {
    let spec = model.spec;
    let nd = model.nd();
    let mut passes = plan(schedule, &model.mesh, colour_sizes)?;
    if gather_unstructured {
        // A work-item per DOF.
        for p in &mut passes {
            p.global[0] = p.global[0].saturating_mul(spec.dofs);
        }
    }
    if model.per_element && schedule == ForceSchedule::Unstructured {
        // `_unstructured_pe` runs one work-item per row of K_e, in work-groups of whole
        // elements (about 256 work-items), so an element's rows share one multiprocessor.
        let group = nd * (PE_GROUP / nd).max(1);
        let fits = group <= device.info().max_work_group_size;
        for p in &mut passes {
            p.global[0] = p.global[0].saturating_mul(nd);
            if fits {
                p.global[0] = p.global[0].div_ceil(group).saturating_mul(group);
                p.local = Some(vec![group]);
            }
        }
    }
    check_launches(device.info(), &spec, schedule, &passes, size_of::<R>())?;
    let options = format!("{} {}", schedule.options(), R::BUILD_OPTION);
    // The class-table gather's defaults (rows per work-item, work-group) for this grid.
    let (class_rows, class_group) = class_gather_defaults(spec.dim);
    let program = device.program(
        spec.name,
        spec.source,
        &gather_options(&options, class_rows, true, None),
    )?;
    // Work-groups for the element-force passes the driver would otherwise size: for a global
    // size with an awkward factorisation (a colour of a greedy colouring, a grid of 2^k + 1
    // nodes) its choice can be a work-group of a few work-items. The kernels skip the
    // work-items past their range, so the global size is rounded up to whole groups.
    if schedule != ForceSchedule::Gather {
        let pe = if model.per_element { "_pe" } else { "" };
        let kernel = format!("{}_{}{pe}", spec.name, schedule.suffix());
        for p in passes.iter_mut().filter(|p| p.local.is_none()) {
            let local = default_local(p.global.len());
            if kernel_fits(&program, &kernel, [local.iter().product(), 1]) {
                for (g, l) in p.global.iter_mut().zip(&local) {
                    *g = g.div_ceil(*l) * l;
                }
                p.local = Some(local);
            }
        }
    }
    let groups = Groups::new(&program, spec.name, model.per_element, Some(class_group));
    // The built kernel's own work-group limit can be below the device's (GPU registers).
    if let Some(local) = passes.iter().find_map(|p| p.local.as_ref()) {
        let pe = if model.per_element { "_pe" } else { "" };
        let kernel = format!("{}_{}{pe}", spec.name, schedule.suffix());
        let limit = program.kernel_limits(&kernel)?.work_group_size;
        let items: usize = local.iter().product();
        if items > limit {
            return Err(Error::DeviceLimit {
                what: format!("work-group {local:?} of kernel `{kernel}`"),
                needed: items as u64,
                limit: limit as u64,
                limit_name: "CL_KERNEL_WORK_GROUP_SIZE",
                hint: "choose a `Blocking` of fewer work-items (l_x · l_y)".into(),
            });
        }
    }
    Ok(Built {
        passes,
        program,
        groups,
        options,
        class_rows,
    })
}

/// `(k, k_all)`: the stiffness the kernels read, rounded to `R` and laid out for the schedule.
pub(crate) fn stiffness<R: Real>(
    device: &Device,
    model: &Model,
    schedule: ForceSchedule,
    order: &[usize],
    gather_unstructured: bool,
) -> Result<(Buffer<R>, Buffer<R>)> {
    let spec = model.spec;
    let (nd, ne) = (model.nd(), model.mesh.element_count());
    let ndp = nd.div_ceil(8) * 8;
    // Per element: K_e in the colour order of the elements, one after another; for the
    // gather in element order, interleaved chunk by chunk ([`interleaved`]); zero for a dead
    // element.
    let rounded = |m: &[f64]| m.iter().map(|&v| R::of(v)).collect::<Vec<R>>();
    let k_all: Vec<R> = if gather_unstructured {
        // Element order, rows unpadded; a dead element's K_e is never read (no slots).
        (0..ne)
            .flat_map(|e| rounded(&model.stiffness[model.matrix_index(e)]))
            .collect()
    } else if model.per_element {
        let zero = vec![R::default(); nd * nd];
        let own = |e: usize| {
            let k = if model.elements.dead[e] {
                zero.clone()
            } else {
                rounded(&model.stiffness[e])
            };
            padded(&k, nd, nd, ndp)
        };
        if schedule == ForceSchedule::Unstructured {
            // One work-item per row: the rows of one K_e one after another, unpadded.
            let unpadded = |e: usize| {
                if model.elements.dead[e] {
                    zero.clone()
                } else {
                    rounded(&model.stiffness[e])
                }
            };
            order.iter().flat_map(|&e| unpadded(e)).collect()
        } else {
            // The gather: all elements one group (element order), interleaved.
            interleaved(order, &[ne], nd * ndp, own)
        }
    } else {
        model
            .stiffness
            .iter()
            .flat_map(|k| padded(&rounded(k), nd, nd, ndp))
            .collect()
    };
    Ok(if model.per_element || gather_unstructured {
        (
            Buffer::from_slice(device, &k_all)?,
            Buffer::from_slice(device, &[R::default()])?,
        )
    } else {
        // The class-table gather's assembled node stencil after the one K_e's rows.
        let mut shared = k_all[..nd * ndp].to_vec();
        if matches!(model.mesh, Mesh::Structured(_)) && assembles(&spec) {
            shared.extend(rounded(&assembled_stencil(&spec, &model.stiffness[0], R::MAX)));
        }
        (
            Buffer::from_slice(device, &shared)?,
            Buffer::from_slice(device, &k_all)?,
        )
    })
}
