//! Explicit central-difference stepping of seed 000 (section 5.3, modified CSM scheme):
//! `F += f_ext(t); F -= K_e·U_e; v += F·M⁻¹·dt; u += v·dt; F = C·v` with `C = -α·M`,
//! on the device ([`Stepper`]); [`HostStepper`] does the same on the host with the same arithmetic.
//! [`StepperConfig`], shared by both, lives with [`Model`] in `problem.rs`.

use crate::buffer::Buffer;
use crate::cl::Lane;
use crate::device::{Device, DeviceInfo};
use crate::error::{Error, Result};
use crate::fem::blocks::block_control;
use crate::fem::element::ElementSpec;
use crate::fem::kernels::{At, ElementKernels};
use crate::fem::load::check_load;
use crate::fem::mesh::{Mesh, UnstructuredMesh};
use crate::fem::real::Real;
use crate::fem::reference::padded;
use crate::fem::schedule::{plan, Pass, Schedule};
use crate::program::{check_work_group, Event, Program};

pub use crate::fem::load::{Load, TimeFunction};
pub use crate::fem::problem::{Model, StepperConfig};
pub use crate::fem::reference::HostStepper;
pub use crate::fem::stability::{check_resolution, check_time_step, stability_bound, wave_speed, StabilityBound};

/// Work-items per work-group of `_unstructured_pe`, rounded down to whole elements.
const PE_GROUP: usize = 256;

/// Each node's slots `e · nodes + a` (element `e` has the node as its local node `a`), dead
/// elements left out, in element order: `(first, slots)` with node `c`'s slots at
/// `slots[first[c]..first[c + 1]]`.
fn node_slots(conn: &[u32], nodes: usize, node_count: usize, dead: &[bool]) -> Result<(Vec<i32>, Vec<i32>)> {
    let live = |s: usize| !dead[s / nodes];
    let mut first = vec![0usize; node_count + 1];
    for (s, &c) in conn.iter().enumerate() {
        if live(s) {
            first[c as usize + 1] += 1;
        }
    }
    for c in 0..node_count {
        first[c + 1] += first[c];
    }
    let mut next = first.clone();
    let mut slots = vec![0i32; first[node_count]];
    for (s, &c) in conn.iter().enumerate() {
        if live(s) {
            slots[next[c as usize]] = int_index("element nodes (elements × nodes per element)", s)?;
            next[c as usize] += 1;
        }
    }
    let first = first
        .iter()
        .map(|&f| int_index("element nodes (elements × nodes per element)", f))
        .collect::<Result<_>>()?;
    Ok((first, slots))
}

/// `n` as a kernel's `int`, or [`Error::TooLarge`] naming `what`.
fn int_index(what: &str, n: usize) -> Result<i32> {
    i32::try_from(n).map_err(|_| Error::TooLarge {
        what: format!("a model of {n} {what}"),
        detail: format!("the element kernels index with 32-bit `int`s, so at most {}", i32::MAX),
    })
}

/// Checks the launches of a plan against the device before the program is built: work-groups
/// within `CL_DEVICE_MAX_WORK_GROUP_SIZE` and `CL_DEVICE_MAX_WORK_ITEM_SIZES`, global sizes
/// within the kernels' `int` indices, and the `__local` memory of the blocked-material kernel
/// (`K_e` as `ND · NV` `real8`s and the `MASK_WORDS` words of a crack mask) within
/// `CL_DEVICE_LOCAL_MEM_SIZE`.
fn check_launches(
    info: &DeviceInfo,
    spec: &ElementSpec,
    schedule: Schedule,
    passes: &[Pass],
    real_bytes: usize,
) -> Result<()> {
    let kernel = || format!("kernel `{}_{}`", spec.name, schedule.suffix());
    for p in passes {
        if let Some(local) = &p.local {
            let padded = std::array::from_fn(|d| local.get(d).copied().unwrap_or(1));
            check_work_group(info, &padded, || format!("work-group {local:?} of {}", kernel()))?;
        }
        if let Some(&g) = p.global.iter().find(|&&g| g > i32::MAX as usize) {
            return Err(Error::TooLarge {
                what: format!("global work size {:?} of {}", p.global, kernel()),
                detail: format!("{g} work-items along one axis exceed the kernels' 32-bit `int` indices"),
            });
        }
    }
    if let Schedule::BlockedMaterial(b) = schedule {
        let nd = spec.nd();
        let ndp = nd.div_ceil(clforge_abi::LANES) * clforge_abi::LANES;
        // `real` is `float` or `double` (`real_bytes`); mask words are 4-byte `uint`s.
        let bytes = nd
            .checked_mul(ndp)
            .and_then(|k| k.checked_mul(real_bytes))
            .and_then(|k| k.checked_add(b.checked_mask_words()?.checked_mul(4)?))
            .map_or(u64::MAX, |v| v as u64);
        if bytes > info.local_mem_bytes {
            return Err(Error::DeviceLimit {
                what: format!("`__local` memory (K_e and a crack mask of {b:?}) of {}", kernel()),
                needed: bytes,
                limit: info.local_mem_bytes,
                limit_name: "CL_DEVICE_LOCAL_MEM_SIZE",
                hint: "choose a `Blocking` of fewer elements (l_x · l_y · wi_size)".into(),
            });
        }
    }
    Ok(())
}

/// Per-element matrices in groups (`order`, `group_sizes`): within a group of `count` elements
/// starting at `first`, the `real8` chunk `i` of its `g`-th element at chunk
/// `first · len / 8 + i · count + g`, so work-items on neighbouring elements read neighbouring
/// chunks (`_gather_pe`: one group of all elements). `own(e)`: element `e`'s padded matrix,
/// `len` reals.
fn interleaved<R: Real>(order: &[usize], group_sizes: &[usize], len: usize, own: impl Fn(usize) -> Vec<R>) -> Vec<R> {
    const L: usize = clforge_abi::LANES;
    let chunks = len / L;
    let mut out = vec![R::default(); order.len() * len];
    let mut first = 0;
    for &count in group_sizes {
        for (g, &e) in order[first..first + count].iter().enumerate() {
            for (i, chunk) in own(e).chunks_exact(L).enumerate() {
                let at = (first * chunks + i * count + g) * L;
                out[at..at + L].copy_from_slice(chunk);
            }
        }
        first += count;
    }
    out
}

/// What every explicit stepper does — one device ([`Stepper`]) or several
/// ([`SplitStepper`](crate::fem::split::SplitStepper)) — so that a program can take either.
pub trait Explicit<R: Real> {
    /// Runs `n` steps.
    fn step(&mut self, n: usize) -> Result<()>;
    /// Sets displacements and velocities.
    fn set_state(&mut self, u: &[R], v: &[R]) -> Result<()>;
    /// Adds an external force.
    fn add_load(&mut self, load: &Load) -> Result<()>;
    /// Displacements per DOF.
    fn displacement(&self) -> Result<Vec<R>>;
    /// Velocities per DOF.
    fn velocity(&self) -> Result<Vec<R>>;
    /// `σ = G_e·U_e` per element.
    fn stress(&self) -> Result<Vec<R>>;
    /// The stability bound the run was checked against.
    fn stability_bound(&self) -> &StabilityBound;
}

impl<R: Real> Explicit<R> for Stepper<R> {
    fn step(&mut self, n: usize) -> Result<()> {
        Stepper::step(self, n)
    }
    fn set_state(&mut self, u: &[R], v: &[R]) -> Result<()> {
        Stepper::set_state(self, u, v)
    }
    fn add_load(&mut self, load: &Load) -> Result<()> {
        Stepper::add_load(self, load)
    }
    fn displacement(&self) -> Result<Vec<R>> {
        Stepper::displacement(self)
    }
    fn velocity(&self) -> Result<Vec<R>> {
        Stepper::velocity(self)
    }
    fn stress(&self) -> Result<Vec<R>> {
        Stepper::stress(self)
    }
    fn stability_bound(&self) -> &StabilityBound {
        Stepper::stability_bound(self)
    }
}

struct DeviceLoad<R: Real> {
    dofs: Buffer<i32>,
    weights: Buffer<R>,
    time: TimeFunction,
    n: usize,
}

/// The explicit step on an OpenCL device, for any [`Schedule`], in precision `R`: `f32` (the
/// default) or `f64` (`Stepper::<f64>::new`; the device needs `cl_khr_fp64`). The element
/// kernels are the same source built with `real` = `R`; the model's `f64` matrices, masses and
/// loads are rounded to `R` on upload, as [`HostStepper<R>`] rounds them.
pub struct Stepper<R: Real = f32> {
    spec: ElementSpec,
    schedule: Schedule,
    program: Program,
    passes: Vec<Pass>,
    mesh_dims: [i32; 3],
    dt: R,
    bound: StabilityBound,
    n_dofs: usize,
    n_elements: usize,
    /// `k` holds one `K_e` per element (colour order) rather than the shared one.
    per_element: bool,
    k: Buffer<R>,
    k_all: Buffer<R>,
    g: Option<Buffer<R>>,
    emat: Buffer<u8>,
    elem_nodes: Buffer<i32>,
    elem_nodes_sorted: Buffer<i32>,
    /// `_gather_unstructured`: node `c`'s slots `e · NODES + a` are
    /// `node_slots[node_first[c]..node_first[c + 1]]`.
    node_first: Buffer<i32>,
    node_slots: Buffer<i32>,
    /// The gather on an unstructured mesh (`_gather_unstructured`).
    gather_unstructured: bool,
    control: Buffer<i32>,
    masks: Buffer<u32>,
    minv: Buffer<R>,
    damp: Buffer<R>,
    /// `damp` on the host, for the damping force `F = C·v` of a state set from the host.
    damp_host: Vec<R>,
    /// The structured gather's M⁻¹ and damping by node class (`_gather_derived`), where every
    /// node of a class has the same masses ([`mass_table`]); used while `derived` is set.
    mass_table: Option<MassTable<R>>,
    derived: bool,
    /// `_gather_derived` sums the assembled node stencil at nodes that play every role
    /// (`GATHER_ASSEMBLED`, built into `program`; see [`Stepper::set_assembled`]).
    assembled: bool,
    /// Nodes along y per work-item of `_gather_derived` (`GATHER_ROWS`, built into `program`).
    gather_rows: usize,
    /// Class-table gather steps per launch (`_gather_steps`, `GATHER_STEPS` built into
    /// `program`; 1: `_gather_derived`, a step per launch).
    gather_steps: usize,
    /// The box of nodes one work-group of `_gather_steps` advances.
    steps_box: StepsBox,
    /// The velocities `_gather_steps` writes, swapped with `v` after each launch (allocated by
    /// [`Stepper::set_gather_steps`]).
    v_alt: Option<Buffer<R>>,
    /// The work-groups of the launches that do not come from `passes`.
    groups: Groups,
    /// The build options of `program` without the class-table gather's (`gather_options`).
    options: String,
    u: Buffer<R>,
    u_alt: Buffer<R>,
    v: Buffer<R>,
    f: Buffer<R>,
    loads: Vec<DeviceLoad<R>>,
    steps: u64,
    /// Events of the kernels the last `step` call queued.
    last_events: Vec<Event>,
    /// Events of a step being launched in ranges ([`Stepper::gather_range`]).
    range_events: Vec<Event>,
}

impl<R: Real> std::fmt::Debug for Stepper<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stepper")
            .field("element", &self.spec.name)
            .field("schedule", &self.schedule)
            .field("real", &R::NAME)
            .field("steps", &self.steps)
            .finish_non_exhaustive()
    }
}

impl Stepper {
    /// An `f32` stepper: builds the element's program for `config.schedule`, checks the model
    /// ([`Model::validate`]) and the time step against the stability bound computed from its
    /// element matrices and masses ([`check_time_step`]), and uploads the model at rest.
    /// [`Stepper::with_precision`] steps in `f64`.
    pub fn new(device: &Device, model: &Model, config: &StepperConfig) -> Result<Stepper> {
        Stepper::with_precision(device, model, config)
    }
}

impl<R: Real> Stepper<R> {
    /// As [`Stepper::new`] in precision `R`: `Stepper::<f64>::with_precision(&device, &model,
    /// &config)` builds the kernels in `double` (the device must support `cl_khr_fp64`, else
    /// [`Error::InvalidConfig`]) and uploads the model's matrices, masses and loads unrounded.
    pub fn with_precision(device: &Device, model: &Model, config: &StepperConfig) -> Result<Stepper<R>> {
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
        let gather_unstructured = unstructured && schedule == Schedule::Gather;
        let needs_uniform = !matches!(schedule, Schedule::BlockedMaterial(_)) && !gather_unstructured;
        if model.per_element && !matches!(schedule, Schedule::Unstructured | Schedule::Gather) {
            return Err(Error::InvalidConfig(format!(
                "a model with one K_e per element (`Model::per_element`) steps with `Schedule::Unstructured` \
                 (any mesh) or `Schedule::Gather` (any mesh), which read K_e by element index; schedule \
                 `{}` shares one K_e per material",
                schedule.suffix()
            )));
        }
        // Per-element matrices hold their material, and a dead element gets a zero K_e.
        if needs_uniform && !uniform && !model.per_element {
            return Err(Error::InvalidConfig(format!(
                "schedule `{}` keeps one K_e in constant memory for all elements; a model with several materials \
                 or cracked elements needs `Schedule::BlockedMaterial`",
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
        let conn = model.mesh.connectivity(spec.node_offsets);
        // Unstructured: elements stored colour by colour (a structured grid coloured as a mesh).
        let (order, sorted, colour_sizes) = match (&model.mesh, schedule) {
            (mesh, Schedule::Unstructured) => {
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
        };
        let mut passes = plan(schedule, &model.mesh, &colour_sizes)?;
        if gather_unstructured {
            // A work-item per DOF.
            for p in &mut passes {
                p.global[0] = p.global[0].saturating_mul(spec.dofs);
            }
        }
        if model.per_element && schedule == Schedule::Unstructured {
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
        if schedule != Schedule::Gather {
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
            if schedule == Schedule::Unstructured {
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
                interleaved(&order, &[ne], nd * ndp, own)
            }
        } else {
            model
                .stiffness
                .iter()
                .flat_map(|k| padded(&rounded(k), nd, nd, ndp))
                .collect()
        };
        let (k, k_all) = if model.per_element || gather_unstructured {
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
        };
        let g_all: Vec<R> = model
            .stress
            .iter()
            .flat_map(|g| padded(&rounded(g), spec.strains, nd, ndp))
            .collect();
        let emat: Vec<u8> = (0..ne)
            .map(|e| {
                if model.elements.dead[e] {
                    clforge_abi::element::DEAD_MATERIAL
                } else {
                    model.elements.material[e]
                }
            })
            .collect();
        let (control, masks) = match (schedule, &model.mesh) {
            (Schedule::BlockedMaterial(b), Mesh::Structured(m)) => block_control(b, m, &model.elements)?,
            _ => (vec![0; 4], vec![0]),
        };
        let (minv, damp) = model.integration(config.alpha);
        let (node_first, node_slots) = if gather_unstructured {
            node_slots(&conn, spec.nodes, model.mesh.node_count(), &model.elements.dead)?
        } else {
            (vec![0], vec![0])
        };
        let zeros = vec![R::default(); n];
        let mass_table = match (&model.mesh, schedule) {
            (Mesh::Structured(_), Schedule::Gather) if !model.per_element && spec.nodes <= MAX_CLASS_ROLES => {
                mass_table(&conn, spec.nodes, spec.dofs, &model.fixed, &minv, &damp)
                    .map(|(tab, bits)| -> Result<MassTable<R>> {
                        Ok(MassTable {
                            tab: Buffer::from_slice(device, &tab)?,
                            fixed: Buffer::from_slice(device, &bits)?,
                        })
                    })
                    .transpose()?
            }
            _ => None,
        };
        let mut stepper = Stepper {
            spec,
            schedule,
            program,
            passes,
            mesh_dims,
            dt: R::of(config.dt),
            bound,
            n_dofs: n,
            n_elements: ne,
            per_element: model.per_element,
            k,
            k_all,
            g: if g_all.is_empty() {
                None
            } else {
                Some(Buffer::from_slice(device, &g_all)?)
            },
            emat: Buffer::from_slice(device, &emat)?,
            elem_nodes: Buffer::from_slice(device, &conn.iter().map(|&c| c as i32).collect::<Vec<_>>())?,
            elem_nodes_sorted: Buffer::from_slice(device, &sorted)?,
            node_first: Buffer::from_slice(device, &node_first)?,
            node_slots: Buffer::from_slice(device, &node_slots)?,
            gather_unstructured,
            control: Buffer::from_slice(device, &control)?,
            masks: Buffer::from_slice(device, &masks)?,
            minv: Buffer::from_slice(device, &minv)?,
            damp: Buffer::from_slice(device, &damp)?,
            damp_host: damp,
            derived: mass_table.is_some(),
            assembled: mass_table.is_some() && assembles(&spec),
            gather_rows: class_rows,
            gather_steps: 1,
            steps_box: StepsBox::default_for(spec.dim),
            v_alt: None,
            groups,
            options,
            mass_table,
            u: Buffer::from_slice(device, &zeros)?,
            u_alt: Buffer::from_slice(device, &zeros)?,
            v: Buffer::from_slice(device, &zeros)?,
            f: Buffer::from_slice(device, &zeros)?,
            loads: vec![],
            steps: 0,
            last_events: Vec::new(),
            range_events: Vec::new(),
        };
        // Several steps per launch where they are the measured default and fit the device.
        let (steps, bx) = gather_steps_default(&spec, device.info(), size_of::<R>());
        if steps > 1 && stepper.derived && stepper.check_steps(steps, bx).is_ok() {
            stepper.steps_box = bx;
            stepper.set_gather_steps(steps)?;
        }
        Ok(stepper)
    }

    /// Whether the structured gather looks M⁻¹ and the damping up by node class
    /// (`_gather_derived`: 8 fewer bytes per DOF and step) instead of reading them per DOF.
    /// It does by default wherever it can: `Schedule::Gather` on a structured grid with one
    /// `K_e`, at most 9 nodes per element, and every node of a class (the roles it plays in
    /// the grid's elements) with the same masses, bit for bit, which holds for the masses the
    /// `Model` constructors compute on a uniform grid. Both kernels give the same bits.
    pub fn derived_mass(&self) -> bool {
        self.derived
    }

    /// Chooses between the class table (`true`) and the per-DOF arrays (`false`) for the
    /// structured gather; asking for the table where [`Stepper::derived_mass`] could not use it
    /// is an [`Error::InvalidConfig`] saying why.
    pub fn set_derived_mass(&mut self, on: bool) -> Result<()> {
        if on && self.mass_table.is_none() {
            return Err(Error::InvalidConfig(format!(
                "the `{}` stepper cannot look masses up by node class: that needs `Schedule::Gather` on a \
                 structured grid with one K_e, at most {MAX_CLASS_ROLES} nodes per element, and the same \
                 lumped masses at every node that belongs to the same elements' roles (a mass added at one \
                 node breaks this)",
                self.spec.name
            )));
        }
        self.derived = on;
        Ok(())
    }

    /// `Ok` where this stepper can run the class-table gather (`Schedule::Gather` with a class
    /// table), else the [`Error::InvalidConfig`] naming what needs it (`what`).
    fn class_gather(&self, what: &str) -> Result<()> {
        if self.schedule == Schedule::Gather && self.mass_table.is_some() {
            return Ok(());
        }
        Err(Error::InvalidConfig(format!(
            "the `{}` stepper does not run the class-table gather, whose {what} (see `Stepper::derived_mass`)",
            self.spec.name
        )))
    }

    /// Nodes along y that one work-item of the class-table gather ([`Stepper::derived_mass`])
    /// updates ([`class_gather_defaults`] unless set).
    pub fn gather_rows(&self) -> usize {
        self.gather_rows
    }

    /// Lets each work-item of the class-table gather update `rows` nodes along y (1 to
    /// [`MAX_GATHER_ROWS`]): where all of them play every role (away from the grid's edges), it
    /// reads the `u` of the nodes their elements touch once for all rows, `3·(rows + 2)` nodes in
    /// 2-D and `9·(rows + 2)` in 3-D instead of `NODES²` per node, for elements of order 1. The
    /// arithmetic per node is unchanged (the same bits for every `rows`). Rebuilds the program;
    /// an [`Error::InvalidConfig`] where the stepper does not use that gather or `rows` is out
    /// of range.
    pub fn set_gather_rows(&mut self, rows: usize) -> Result<()> {
        if !(1..=MAX_GATHER_ROWS).contains(&rows) {
            return Err(Error::InvalidConfig(format!(
                "gather rows {rows}: a work-item updates 1 to {MAX_GATHER_ROWS} nodes along y"
            )));
        }
        self.class_gather("work-items `set_gather_rows` sizes")?;
        if self.spec.dim < 2 && rows != 1 {
            return Err(Error::InvalidConfig(format!(
                "gather rows {rows}: the `{}` stepper's grid is 1-D, one node per work-item",
                self.spec.name
            )));
        }
        if rows != self.gather_rows {
            self.rebuild(rows, self.assembled, self.gather_steps, self.steps_box)?;
        }
        Ok(())
    }

    /// Builds `program` again with `rows` nodes per work-item, the assembled stencil on or off
    /// and `steps` steps per launch in boxes `bx` (the class-table gather's build-time
    /// tunables), and keeps them; on an error the program and tunables stay as they were.
    fn rebuild(&mut self, rows: usize, assembled: bool, steps: usize, bx: StepsBox) -> Result<()> {
        let options = gather_options(&self.options, rows, assembled, (steps > 1).then_some((steps, bx)));
        let program = self.u.device().program(self.spec.name, self.spec.source, &options)?;
        if steps > 1 {
            let kernel = format!("{}_gather_steps", self.spec.name);
            let limit = program.kernel_limits(&kernel).map(|l| l.work_group_size).unwrap_or(0);
            if limit < bx.items {
                return Err(Error::InvalidConfig(format!(
                    "gather steps box {bx:?}: {} work-items exceed what the `{kernel}` kernel takes on this device \
                     ({limit}, CL_KERNEL_WORK_GROUP_SIZE); choose fewer `items`",
                    bx.items
                )));
            }
        }
        self.program = program;
        self.groups = Groups::new(&self.program, self.spec.name, self.per_element, self.groups.gather);
        self.gather_rows = rows;
        self.assembled = assembled;
        self.gather_steps = steps;
        self.steps_box = bx;
        Ok(())
    }

    /// Class-table gather steps per launch (1 unless [`Stepper::set_gather_steps`] set more).
    pub fn gather_steps(&self) -> usize {
        self.gather_steps
    }

    /// Lets one launch of the class-table gather ([`Stepper::derived_mass`]) advance `steps`
    /// steps (1 to [`MAX_GATHER_STEPS`]; temporal blocking): each work-group stages the `u` and
    /// `v` of a box of nodes ([`Stepper::steps_box`]) and a margin of `steps` nodes in local
    /// memory, advances them `steps` steps there (each step on a margin one node thinner) and
    /// writes the box once, so that a step reads and writes global memory `steps` times less
    /// often. Every node's arithmetic is the one-step kernel's in the same order: the bits are
    /// those of `steps` single steps. [`Stepper::step`] uses it for every whole group of `steps`
    /// steps while no load is applied (a load kicks the state between steps; with loads every
    /// step is a launch). For elements of order 1 in 2-D and 3-D; rebuilds the program. An
    /// [`Error::InvalidConfig`] where the stepper does not run the class-table gather, its
    /// elements are of another kind, `steps` is out of range or the box with its margin does not
    /// fit the device's local memory.
    pub fn set_gather_steps(&mut self, steps: usize) -> Result<()> {
        if !(1..=MAX_GATHER_STEPS).contains(&steps) {
            return Err(Error::InvalidConfig(format!(
                "gather steps {steps}: a launch advances 1 to {MAX_GATHER_STEPS} steps"
            )));
        }
        self.class_gather("steps per launch `set_gather_steps` sets")?;
        if steps == self.gather_steps {
            return Ok(());
        }
        if steps > 1 {
            self.check_steps(steps, self.steps_box)?;
        }
        self.rebuild(self.gather_rows, self.assembled, steps, self.steps_box)?;
        if steps > 1 && self.v_alt.is_none() {
            self.v_alt = Some(Buffer::from_slice(self.u.device(), &vec![R::default(); self.n_dofs])?);
        }
        Ok(())
    }

    /// The box of nodes one work-group of the several-steps gather advances
    /// ([`Stepper::set_gather_steps`]) and its work-items.
    pub fn steps_box(&self) -> StepsBox {
        self.steps_box
    }

    /// Sets the several-steps gather's box ([`StepsBox`]); rebuilds the program where it runs
    /// several steps per launch. An [`Error::InvalidConfig`] where a side or `items` is 0, a
    /// 2-D box is deeper than 1 node, the box does not fit local memory at the current steps
    /// per launch, or the kernel takes fewer work-items.
    pub fn set_steps_box(&mut self, bx: StepsBox) -> Result<()> {
        self.class_gather("boxes `set_steps_box` sizes")?;
        self.check_steps(self.gather_steps.max(2), bx)?;
        if self.gather_steps > 1 {
            self.rebuild(self.gather_rows, self.assembled, self.gather_steps, bx)?;
        }
        self.steps_box = bx;
        Ok(())
    }

    /// `Ok` where `steps` steps per launch in boxes `bx` can run: elements with the register
    /// window, the class table switched on, a box of whole sides that fits local memory.
    fn check_steps(&self, steps: usize, bx: StepsBox) -> Result<()> {
        if !assembles(&self.spec) {
            return Err(Error::InvalidConfig(format!(
                "the `{}` element cannot advance several steps per launch: that needs elements of order 1 in \
                 2-D or 3-D (order {}, {}-D)",
                self.spec.name, self.spec.order, self.spec.dim
            )));
        }
        if !self.derived {
            return Err(Error::InvalidConfig(format!(
                "the `{}` stepper's class-table gather is switched off (`set_derived_mass(false)`): several \
                 steps per launch run only on it",
                self.spec.name
            )));
        }
        if bx.nodes.contains(&0) || bx.items == 0 || (self.spec.dim < 3 && bx.nodes[2] != 1) {
            return Err(Error::InvalidConfig(format!(
                "gather steps box {bx:?}: every side and `items` at least 1, and 1 node deep on a {}-D grid",
                self.spec.dim
            )));
        }
        let info = self.u.device().info();
        if bx.items > info.max_work_group_size {
            return Err(Error::DeviceLimit {
                what: format!("work-items of the gather steps box {bx:?}"),
                needed: bx.items as u64,
                limit: info.max_work_group_size as u64,
                limit_name: "CL_DEVICE_MAX_WORK_GROUP_SIZE",
                hint: "choose fewer `items` (`set_steps_box`)".into(),
            });
        }
        let need = bx.local_bytes(steps, self.spec.dim, self.spec.dofs, size_of::<R>());
        let have = info.local_mem_bytes;
        if need > have {
            return Err(Error::DeviceLimit {
                what: format!(
                    "local memory of {steps} gather steps per launch in boxes of {:?} nodes",
                    bx.nodes
                ),
                needed: need,
                limit: have,
                limit_name: "CL_DEVICE_LOCAL_MEM_SIZE",
                hint: "choose a smaller box (`set_steps_box`) or fewer steps per launch".into(),
            });
        }
        Ok(())
    }

    /// Whether the class-table gather sums the assembled node stencil at the nodes that play
    /// every role (the default where it can; see [`Stepper::set_assembled`]).
    pub fn assembled(&self) -> bool {
        self.assembled
    }

    /// Chooses how the class-table gather ([`Stepper::derived_mass`]) forms the force at a node
    /// that plays every role (away from the grid's edges), for elements of order 1 in 2-D and
    /// 3-D. `true` (the default): from the assembled node stencil, `K_e` summed over the node's
    /// elements once on the host (in `f64`, then rounded), `3^dim · DOFS²` products per node
    /// (36 for `quad4`, 243 for `hex8`) instead of `NODES² · DOFS²` (128, 1 536). `false`:
    /// element by element as the other gathers and [`HostStepper`] do, which gives the same bits
    /// as the per-DOF arrays' gather. Both agree with the host to rounding (the sums are taken
    /// in another order). Rebuilds the program; an [`Error::InvalidConfig`] where the stepper
    /// does not run that gather or its elements have no stencil (order above 1, or 1-D).
    pub fn set_assembled(&mut self, on: bool) -> Result<()> {
        self.class_gather("assembled stencil `set_assembled` switches")?;
        if on && !assembles(&self.spec) {
            return Err(Error::InvalidConfig(format!(
                "the `{}` element has no assembled node stencil: it needs elements of order 1 in 2-D or 3-D \
                 (order {}, {}-D)",
                self.spec.name, self.spec.order, self.spec.dim
            )));
        }
        if on != self.assembled {
            self.rebuild(self.gather_rows, on, self.gather_steps, self.steps_box)?;
        }
        Ok(())
    }

    /// The class-table gather's work-group, nodes along x by work-items along y (`None`: the
    /// driver chooses, where the kernel takes fewer work-items than [`GATHER_GROUP`]).
    pub fn gather_group(&self) -> Option<[usize; 2]> {
        self.groups.gather
    }

    /// Sets the class-table gather's work-group (nodes along x, work-items along y; a 1-D grid
    /// takes `[x, 1]`); an [`Error::InvalidConfig`] where the stepper does not run that gather, a
    /// side is 0, or the kernel takes fewer work-items per group.
    pub fn set_gather_group(&mut self, group: [usize; 2]) -> Result<()> {
        self.class_gather("work-groups `set_gather_group` sizes")?;
        if group.contains(&0) || (self.spec.dim < 2 && group[1] != 1) {
            return Err(Error::InvalidConfig(format!(
                "gather work-group {group:?}: both sides at least 1, and 1 along y on a 1-D grid"
            )));
        }
        if !kernel_fits(&self.program, &format!("{}_gather_derived", self.spec.name), group) {
            return Err(Error::InvalidConfig(format!(
                "gather work-group {group:?}: {} work-items exceed what the `{}_gather_derived` kernel takes on this device \
                 (CL_KERNEL_WORK_GROUP_SIZE)",
                group[0] * group[1],
                self.spec.name
            )));
        }
        self.groups.gather = Some(group);
        Ok(())
    }

    /// Times the class-table gather's tunables on this device and keeps the fastest: 1, 2 and
    /// 4 nodes per work-item along y ([`Stepper::set_gather_rows`]; 1 only on a 1-D grid) in
    /// each of [`GATHER_TUNE_GROUPS`] the kernel takes ([`Stepper::set_gather_group`]), each
    /// over `steps` steps after one to warm up (the median of the steps' profiled device times);
    /// then, where no load is applied and the elements have the register window, 2, 3 and 4
    /// steps per launch ([`Stepper::set_gather_steps`]) in the current box where it fits, each
    /// over `steps` launches (time per step: the launch's over its steps).
    /// Then it puts the state back as it was (displacements, velocities, the step count), so
    /// tuning changes no result: every candidate gives the same bits. Returns each candidate's
    /// time, fastest first. An [`Error::InvalidConfig`] where the stepper does not run that
    /// gather or `steps` is 0.
    pub fn tune_gather(&mut self, steps: usize) -> Result<Vec<GatherTiming>> {
        self.class_gather("tunables `tune_gather` times")?;
        if !self.derived {
            return Err(Error::InvalidConfig(format!(
                "the `{}` stepper's class-table gather is switched off (`set_derived_mass(false)`): \
                 nothing for `tune_gather` to time",
                self.spec.name
            )));
        }
        if steps == 0 {
            return Err(Error::InvalidConfig(
                "tune_gather needs at least one timed step per candidate".into(),
            ));
        }
        let (u0, v0, steps0) = (self.u.to_vec()?, self.v.to_vec()?, self.steps);
        let (several0, bx) = (self.gather_steps, self.steps_box);
        let rows: &[usize] = if self.spec.dim >= 2 { &[1, 2, 4] } else { &[1] };
        let mut timings = Vec::new();
        let mut outcome = Ok(());
        'search: for &r in rows {
            if let Err(e) = self.set_gather_rows(r) {
                outcome = Err(e);
                break;
            }
            for &g in GATHER_TUNE_GROUPS.iter() {
                let g = if self.spec.dim >= 2 { g } else { [g[0] * g[1], 1] };
                if self.set_gather_group(g).is_err() {
                    continue; // more work-items than the kernel takes here
                }
                match self.median_step_ns(1, steps) {
                    Ok(median_ns) => timings.push(GatherTiming {
                        rows: r,
                        group: g,
                        steps: 1,
                        median_ns,
                    }),
                    Err(e) => {
                        outcome = Err(e);
                        break 'search;
                    }
                }
            }
        }
        // Several steps per launch (the rows and group above serve the single steps left over).
        let several: Vec<usize> = if self.loads.is_empty() && outcome.is_ok() {
            [2, 3, 4]
                .into_iter()
                .filter(|&k| self.check_steps(k, bx).is_ok())
                .collect()
        } else {
            vec![]
        };
        for k in several {
            if let Err(e) = self.set_gather_steps(k) {
                outcome = Err(e);
                break;
            }
            match self.median_step_ns(k, steps) {
                Ok(median_ns) => timings.push(GatherTiming {
                    rows: self.gather_rows,
                    group: self.groups.gather.unwrap_or(GATHER_GROUP),
                    steps: k,
                    median_ns,
                }),
                Err(e) => {
                    outcome = Err(e);
                    break;
                }
            }
        }
        // The best candidate (or, after an error, the defaults), and the state as it was.
        timings.sort_by_key(|t| t.median_ns);
        let (default_rows, default_group) = class_gather_defaults(self.spec.dim);
        let (rows, group, several) = match (&outcome, timings.first()) {
            // Several steps per launch: the fastest single step's rows and group for the rest.
            (Ok(()), Some(t)) if t.steps > 1 => {
                let single = timings.iter().find(|t| t.steps == 1).unwrap_or(t);
                (single.rows, Some(single.group), t.steps)
            }
            (Ok(()), Some(t)) => (t.rows, Some(t.group), 1),
            _ => (default_rows, None, several0),
        };
        self.set_gather_steps(several)?;
        self.set_gather_rows(rows)?;
        match group {
            Some(g) => self.set_gather_group(g)?,
            // The default work-group where the kernel takes it (`Groups::new` checks).
            None => self.groups = Groups::new(&self.program, self.spec.name, self.per_element, Some(default_group)),
        }
        self.set_state(&u0, &v0)?;
        self.steps = steps0;
        self.last_events.clear();
        outcome.map(|()| timings)
    }

    /// The median profiled device time per step of `reps` calls of `step(per_call)` after one
    /// to warm up (each call's time over its steps).
    fn median_step_ns(&mut self, per_call: usize, reps: usize) -> Result<u64> {
        self.step(per_call)?;
        let mut ns = Vec::with_capacity(reps);
        for _ in 0..reps {
            self.step(per_call)?;
            ns.push(self.last_step_ns()? / per_call as u64);
        }
        ns.sort_unstable();
        Ok(ns[ns.len() / 2])
    }

    /// The stability bound this run was checked against (`dt ≤ dt_max = SAFETY · dt_critical`).
    pub fn stability_bound(&self) -> &StabilityBound {
        &self.bound
    }

    /// Steps taken so far.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// Simulated time `steps · dt`.
    pub fn time(&self) -> f64 {
        self.steps as f64 * self.dt.widen()
    }

    /// Sets displacements and velocities (and the damping force `F = C·v`).
    pub fn set_state(&mut self, u: &[R], v: &[R]) -> Result<()> {
        crate::error::check_len("displacements", self.n_dofs, u.len())?;
        crate::error::check_len("velocities", self.n_dofs, v.len())?;
        self.set_state_range(0, u, v)
    }

    /// Displacements and velocities of DOFs `first..first + len` (waits for queued steps).
    #[cfg(feature = "mpi")]
    pub(crate) fn state_range(&self, first: usize, len: usize) -> Result<(Vec<R>, Vec<R>)> {
        let (mut u, mut v) = (vec![R::default(); len], vec![R::default(); len]);
        if len == 0 {
            return Ok((u, v));
        }
        self.u.read_at(first, &mut u)?;
        self.v.read_at(first, &mut v)?;
        Ok((u, v))
    }

    /// Overwrites displacements and velocities of DOFs from `first` on (and their damping
    /// force `F = C·v`, as [`Stepper::set_state`]).
    pub(crate) fn set_state_range(&mut self, first: usize, u: &[R], v: &[R]) -> Result<()> {
        crate::error::check_len("velocities", u.len(), v.len())?;
        if u.is_empty() {
            return Ok(());
        }
        self.u.write_at(first, u)?;
        self.v.write_at(first, v)?;
        if self.schedule == Schedule::Gather {
            // The fused gather starts each step from `C·v` itself: there is no `F` to keep.
            return Ok(());
        }
        let f: Vec<R> = self
            .damping(first, v.len())?
            .iter()
            .zip(v)
            .map(|(&c, &v)| c * v)
            .collect();
        self.f.write_at(first, &f)
    }

    /// The damping coefficients of DOFs `first..first + len`.
    fn damping(&self, first: usize, len: usize) -> Result<&[R]> {
        self.damp_host.get(first..first + len).ok_or_else(|| {
            Error::InvalidConfig(format!(
                "DOFs {first}..{} past the model's {}",
                first + len,
                self.n_dofs
            ))
        })
    }

    /// The device this stepper runs on.
    pub fn device(&self) -> &Device {
        self.u.device()
    }

    /// `len` elements of pinned host memory in this stepper's device context (exchange staging).
    pub(crate) fn pinned(&self, len: usize) -> Result<crate::cl::Pinned<R>> {
        self.u.pinned(len)
    }

    /// Enqueues reading `u` and `v` of DOFs `first..first + u.len()` behind the queued steps;
    /// returns at once with the reads' events.
    ///
    /// # Safety
    /// `u` and `v` must stay valid and untouched until the events complete.
    pub(crate) unsafe fn read_state_async(&self, first: usize, u: &mut [R], v: &mut [R]) -> Result<[Event; 2]> {
        // SAFETY: forwarded to the caller.
        unsafe {
            Ok([
                self.u.read_at_async(Lane::Compute, first, u, &[])?,
                self.v.read_at_async(Lane::Compute, first, v, &[])?,
            ])
        }
    }

    /// Enqueues overwriting displacements and velocities of DOFs from `first` on (and, where
    /// the schedule keeps it, the damping force `F = C·v`, computed into `f`) ahead of the
    /// next steps; returns at once with the writes' events. The same state as
    /// [`Stepper::set_state_range`].
    ///
    /// # Safety
    /// `u`, `v` and `f` must stay valid and unchanged until the events complete.
    pub(crate) unsafe fn write_state_async(
        &mut self,
        first: usize,
        u: &[R],
        v: &[R],
        f: &mut [R],
    ) -> Result<Vec<Event>> {
        crate::error::check_len("velocities", u.len(), v.len())?;
        if u.is_empty() {
            return Ok(Vec::new());
        }
        // SAFETY: forwarded to the caller.
        let mut events = unsafe {
            vec![
                self.u.write_at_async(Lane::Compute, first, u, &[])?,
                self.v.write_at_async(Lane::Compute, first, v, &[])?,
            ]
        };
        if self.schedule != Schedule::Gather {
            crate::error::check_len("damping staging", v.len(), f.len())?;
            for ((f, &c), &v) in f.iter_mut().zip(self.damping(first, v.len())?).zip(v) {
                *f = c * v;
            }
            // SAFETY: forwarded to the caller.
            events.push(unsafe { self.f.write_at_async(Lane::Compute, first, f, &[]) }?);
        }
        Ok(events)
    }

    /// Elements of the model.
    pub fn element_count(&self) -> usize {
        self.n_elements
    }

    /// Adds an external force.
    pub fn add_load(&mut self, load: &Load) -> Result<()> {
        check_load(load, self.n_dofs)?;
        let device = self.u.device().clone();
        let dofs: Vec<i32> = load.dofs.iter().map(|&i| i as i32).collect();
        self.loads.push(DeviceLoad {
            dofs: Buffer::from_slice(&device, &dofs)?,
            weights: Buffer::from_slice(&device, &load.weights.iter().map(|&w| R::of(w)).collect::<Vec<R>>())?,
            time: load.time,
            n: dofs.len(),
        });
        Ok(())
    }

    fn kernels(&self) -> Result<&'static dyn ElementKernels<R>> {
        self.spec.kernels.map(R::kernels).ok_or_else(|| {
            Error::InvalidConfig(format!(
                "element `{}` has no device kernels (its `ElementSpec` names none): declare it with \
                 `#[clforge::element]`",
                self.spec.name
            ))
        })
    }

    /// Runs `n` steps (queued; reading results waits for them).
    pub fn step(&mut self, n: usize) -> Result<()> {
        let kernels = self.kernels()?;
        let mut events = Vec::new();
        let [nx, ny, nz] = self.mesh_dims;
        let dt = self.dt;
        fn at<'a>(program: &'a Program, global: &'a [usize], local: Option<&'a [usize]>) -> At<'a> {
            At { program, global, local }
        }
        let mut left = n;
        while left > 0 {
            left -= 1;
            let t = self.steps as f64 * dt.widen();
            if self.schedule == Schedule::Gather {
                let pass = &self.passes[0];
                // Several steps per launch while no load kicks the state between them.
                let several = self.gather_steps;
                if several > 1 && left + 1 >= several && self.derived && self.loads.is_empty() {
                    if let (Some(tab), Some(v_alt)) = (self.mass_table.as_ref(), self.v_alt.as_mut()) {
                        let (global, local) = steps_launch(&pass.global, self.steps_box);
                        events.push(kernels.gather_steps(
                            at(&self.program, &global, Some(&local)),
                            &self.k,
                            &tab.tab,
                            &tab.fixed,
                            &self.u,
                            &mut self.u_alt,
                            &self.v,
                            v_alt,
                            dt,
                            nx,
                            ny,
                            nz,
                        )?);
                        std::mem::swap(&mut self.u, &mut self.u_alt);
                        std::mem::swap(&mut self.v, v_alt);
                        self.steps += several as u64;
                        left -= several - 1;
                        continue;
                    }
                }
                if self.gather_unstructured {
                    let all = 0..self.n_dofs;
                    events.extend(self.launch_gather_unstructured(kernels, all)?);
                } else if let Some(t) = self.mass_table.as_ref().filter(|_| self.derived) {
                    let (global, local) = gather_launch(&pass.global, self.gather_rows, self.groups.gather);
                    events.push(kernels.gather_derived(
                        at(&self.program, &global, local.as_deref()),
                        &self.k,
                        &t.tab,
                        &t.fixed,
                        &self.u,
                        &mut self.u_alt,
                        &mut self.v,
                        dt,
                        nx,
                        ny,
                        nz,
                    )?);
                } else {
                    let gather = if self.per_element {
                        ElementKernels::gather_pe
                    } else {
                        ElementKernels::gather
                    };
                    let (global, local) = gather_launch(&pass.global, 1, self.groups.arrays);
                    events.push(gather(
                        kernels,
                        at(&self.program, &global, local.as_deref()),
                        &self.k,
                        &self.minv,
                        &self.damp,
                        &self.u,
                        &mut self.u_alt,
                        &mut self.v,
                        dt,
                        nx,
                        ny,
                        nz,
                    )?);
                }
                self.end_gather_step(kernels, &mut events)?;
                continue;
            }
            for l in &self.loads {
                let s = R::of(l.time.value(t));
                let (global, local) = flat_launch(l.n, self.groups.flat_ok);
                events.push(kernels.load(
                    at(&self.program, &global, local.as_ref().map(|l| &l[..])),
                    &l.dofs,
                    &l.weights,
                    s,
                    &mut self.f,
                    l.n as i32,
                )?);
            }
            for p in &self.passes {
                let [sx, sy, sz] = p.shift;
                let a = at(&self.program, &p.global, p.local.as_deref());
                let (u, f) = (&self.u, &mut self.f);
                events.push(match self.schedule {
                    Schedule::Coloured => {
                        kernels.coloured(a, &self.k, &self.elem_nodes, u, f, nx, ny, nz, sx, sy, sz)?
                    }
                    Schedule::Unstructured if self.per_element => kernels.unstructured_pe(
                        a,
                        &self.k,
                        &self.elem_nodes_sorted,
                        u,
                        f,
                        p.range.0 as i32,
                        p.range.1 as i32,
                    )?,
                    Schedule::Unstructured => kernels.unstructured(
                        a,
                        &self.k,
                        &self.elem_nodes_sorted,
                        u,
                        f,
                        p.range.0 as i32,
                        p.range.1 as i32,
                    )?,
                    Schedule::Computed => kernels.computed(a, &self.k, u, f, nx, ny, nz, sx, sy, sz)?,
                    Schedule::Blocked(_) => kernels.blocked(a, &self.k, u, f, nx, ny, nz, sx, sy, sz)?,
                    Schedule::BlockedMaterial(_) => {
                        kernels.blocked_mat(a, &self.control, &self.masks, &self.k_all, u, f, nx, ny, nz, sx, sy, sz)?
                    }
                    Schedule::Gather => continue,
                });
            }
            let (global, local) = flat_launch(self.n_dofs, self.groups.flat_ok);
            events.push(kernels.integrate(
                at(&self.program, &global, local.as_ref().map(|l| &l[..])),
                &self.minv,
                &self.damp,
                &mut self.u,
                &mut self.v,
                &mut self.f,
                dt,
                self.n_dofs as i32,
            )?);
            self.steps += 1;
        }
        self.last_events = events;
        Ok(())
    }

    /// The unstructured node gather of the next step over DOFs `dofs` (into the next
    /// displacements), behind the queued work: a split part launches its interior while its
    /// ghosts travel, then the DOFs next to them ([`Stepper::end_gather_step`] ends the step).
    fn launch_gather_unstructured(
        &mut self,
        kernels: &dyn ElementKernels<R>,
        dofs: std::ops::Range<usize>,
    ) -> Result<Option<Event>> {
        if dofs.is_empty() {
            return Ok(None);
        }
        // Whole work-groups of FLAT_GROUP (the kernel skips DOFs past the range): for a range of
        // awkward length (a split part's interior, a prime) the driver's own choice can be a
        // work-group of one work-item.
        let (global, local) = flat_launch(dofs.len(), self.groups.unstructured);
        let at = At {
            program: &self.program,
            global: &global,
            local: local.as_ref().map(|l| &l[..]),
        };
        Ok(Some(kernels.gather_unstructured(
            at,
            &self.k,
            &self.elem_nodes,
            &self.node_first,
            &self.node_slots,
            &self.minv,
            &self.damp,
            &self.u,
            &mut self.u_alt,
            &mut self.v,
            self.dt,
            dofs.start as i32,
            dofs.end as i32,
        )?))
    }

    /// Ends a gather step: the new displacements become current, then the loads' kicks.
    fn end_gather_step(&mut self, kernels: &dyn ElementKernels<R>, events: &mut Vec<Event>) -> Result<()> {
        let t = self.steps as f64 * self.dt.widen();
        std::mem::swap(&mut self.u, &mut self.u_alt);
        for l in &self.loads {
            let s = R::of(l.time.value(t));
            let (global, local) = flat_launch(l.n, self.groups.flat_ok);
            let at = At {
                program: &self.program,
                global: &global,
                local: local.as_ref().map(|l| &l[..]),
            };
            events.push(kernels.kick(
                at,
                &l.dofs,
                &l.weights,
                s,
                &self.minv,
                &mut self.u,
                &mut self.v,
                self.dt,
                l.n as i32,
            )?);
        }
        self.steps += 1;
        Ok(())
    }

    /// Whether one step can be launched in DOF ranges ([`Stepper::gather_range`]): the
    /// unstructured node gather, which split parts use.
    pub(crate) fn steps_in_ranges(&self) -> bool {
        self.gather_unstructured
    }

    /// Launches the next step's gather over DOFs `dofs` only, behind the queued work; the
    /// step ends with [`Stepper::end_ranges`] once every DOF has been launched exactly once.
    /// Only for [`Stepper::steps_in_ranges`] steppers.
    pub(crate) fn gather_range(&mut self, dofs: std::ops::Range<usize>) -> Result<()> {
        if !self.gather_unstructured || dofs.end > self.n_dofs {
            return Err(Error::InvalidConfig(format!(
                "DOFs {dofs:?} of a {}-DOF stepper launched in ranges (the unstructured node gather only)",
                self.n_dofs
            )));
        }
        let kernels = self.kernels()?;
        if let Some(e) = self.launch_gather_unstructured(kernels, dofs)? {
            self.range_events.push(e);
        }
        Ok(())
    }

    /// Ends a step launched by [`Stepper::gather_range`].
    pub(crate) fn end_ranges(&mut self) -> Result<()> {
        let kernels = self.kernels()?;
        let mut events = std::mem::take(&mut self.range_events);
        self.end_gather_step(kernels, &mut events)?;
        self.last_events = events;
        Ok(())
    }

    /// Device time of the kernels the last [`Stepper::step`] call queued, in nanoseconds, from
    /// OpenCL profiling events (waits for them).
    pub fn last_step_ns(&self) -> Result<u64> {
        self.last_events.iter().map(Event::duration_ns).sum()
    }

    /// Kernels the last [`Stepper::step`] call queued: a step per launch of the gathers and
    /// their loads' kicks, or one launch per [`Stepper::gather_steps`] steps.
    pub fn last_launches(&self) -> usize {
        self.last_events.len()
    }

    /// Waits until every queued step has run.
    pub fn finish(&self) -> Result<()> {
        self.u.device().finish()
    }

    /// Displacements per DOF (waits for queued steps).
    pub fn displacement(&self) -> Result<Vec<R>> {
        self.u.to_vec()
    }

    /// Velocities per DOF, at the last half step.
    pub fn velocity(&self) -> Result<Vec<R>> {
        self.v.to_vec()
    }

    /// `σ = G_e·U_e` per element (`strains` values each, 0 for dead elements).
    pub fn stress(&self) -> Result<Vec<R>> {
        let g = self
            .g
            .as_ref()
            .ok_or_else(|| Error::InvalidConfig("no G_e matrices were given: set `Model::stress`".into()))?;
        let device = self.u.device().clone();
        let mut out = Buffer::<R>::new(&device, self.n_elements.saturating_mul(self.spec.strains))?;
        let kernels = self.kernels()?;
        let [nx, ny, nz] = self.mesh_dims;
        // Per-element G_e are in element order on any mesh: the unstructured kernel reads them
        // with the connectivity (a structured grid's too).
        if self.schedule == Schedule::Unstructured || self.gather_unstructured || self.per_element {
            let at = At {
                program: &self.program,
                global: &[self.n_elements],
                local: None,
            };
            let (g, emat, nodes, u, ne) = (g, &self.emat, &self.elem_nodes, &self.u, self.n_elements as i32);
            if self.per_element {
                kernels.stress_unstructured_pe(at, g, emat, nodes, u, &mut out, ne)?;
            } else {
                kernels.stress_unstructured(at, g, emat, nodes, u, &mut out, ne)?;
            }
        } else {
            let global = self.mesh_dims.map(|v| v as usize);
            let at = At {
                program: &self.program,
                global: &global,
                local: None,
            };
            kernels.stress(at, g, &self.emat, &self.u, &mut out, nx, ny, nz)?;
        }
        out.to_vec()
    }
}

/// The derived-mass gather's tables on the device: per node class `DOFS` inverse masses, then
/// `DOFS` damping factors; one bit per DOF for the fixed ones.
struct MassTable<R: Real> {
    tab: Buffer<R>,
    fixed: Buffer<u32>,
}

/// The work-group of the launches over DOFs or elements (the unstructured gather, integration,
/// loads; the element-force passes of the unstructured schedule).
pub const FLAT_GROUP: usize = 128;

/// The work-group a launch of `dims` dimensions gets unless its schedule sets one: a
/// [`FLAT_GROUP`] row, or [`GATHER_GROUP`] in 2-D and 3-D.
fn default_local(dims: usize) -> Vec<usize> {
    match dims {
        1 => vec![FLAT_GROUP],
        n => (0..n).map(|i| GATHER_GROUP.get(i).copied().unwrap_or(1)).collect(),
    }
}

/// Global and local size of a launch over `n` items: whole groups of [`FLAT_GROUP`] where
/// `ok` (the kernel skips items from `n`), else `n` and the driver's choice.
fn flat_launch(n: usize, ok: bool) -> ([usize; 1], Option<[usize; 1]>) {
    if ok {
        ([n.div_ceil(FLAT_GROUP) * FLAT_GROUP], Some([FLAT_GROUP]))
    } else {
        ([n], None)
    }
}

/// The work-groups [`Stepper::tune_gather`] tries (nodes along x, work-items along y); on a
/// 1-D grid each as one row of as many work-items.
pub const GATHER_TUNE_GROUPS: [[usize; 2]; 5] = [[32, 4], [32, 2], [32, 8], [64, 2], [16, 8]];

/// One candidate of [`Stepper::tune_gather`]: its nodes per work-item along y, its
/// work-group, and the median device time of one step with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GatherTiming {
    /// Nodes along y per work-item.
    pub rows: usize,
    /// Work-group: nodes along x, work-items along y.
    pub group: [usize; 2],
    /// Steps per launch ([`Stepper::set_gather_steps`]; `rows` and `group` then serve the
    /// single steps left over).
    pub steps: usize,
    /// Median profiled device time of one step, in nanoseconds.
    pub median_ns: u64,
}

/// The class-table gather's default nodes per work-item along y and work-group on a grid of
/// `dim` dimensions: 2 rows in 32 × 2 work-groups in 2-D, the fastest on an H100 at 2M and 8M
/// quads (38.3 and 126.9 µs per step against 41.9 and 137.6 for 1 row in 32 × 4, 2026-11-27,
/// docs/PERFORMANCE.md); 1 row in [`GATHER_GROUP`] in 1-D and 3-D (not measured otherwise).
/// [`Stepper::tune_gather`] searches on the user's device.
pub fn class_gather_defaults(dim: usize) -> (usize, [usize; 2]) {
    if dim == 2 {
        (2, [32, 2])
    } else {
        (1, GATHER_GROUP)
    }
}

/// The build options of a stepper's program: `base` and the class-table gather's build-time
/// tunables (one spelling, so equal settings hit the same cached build).
fn gather_options(base: &str, rows: usize, assembled: bool, steps: Option<(usize, StepsBox)>) -> String {
    let mut o = format!(
        "{base} -D GATHER_ROWS={rows} -D GATHER_ASSEMBLED={}",
        u8::from(assembled)
    );
    if let Some((steps, b)) = steps {
        let [x, y, z] = b.nodes;
        o += &format!(
            " -D GATHER_STEPS={steps} -D GS_TX={x} -D GS_TY={y} -D GS_TZ={z} -D GS_ITEMS={}",
            b.items
        );
    }
    o
}

/// The several-steps gather's default ([`Stepper::set_gather_steps`]) on `info`'s device for
/// `spec`'s elements in reals of `real` bytes: 3 steps per launch in boxes of 58 × 24 nodes (rows
/// of 64 local nodes with the margin) of 256 work-items for 2-D elements in `f32` on a GPU, the
/// fastest on an H100 at 2M and 8M quads (29.0 and 97.0 µs per step against 39.0 and 126.7 for a
/// step per launch, 2026-11-27, docs/PERFORMANCE.md); a step per launch elsewhere: on a CPU local
/// memory is ordinary memory (slower there), and `f64` and 3-D were not measured.
pub fn gather_steps_default(spec: &ElementSpec, info: &DeviceInfo, real: usize) -> (usize, StepsBox) {
    if info.kind == crate::DeviceKind::Gpu && spec.dim == 2 && real == 4 && assembles(spec) {
        (
            3,
            StepsBox {
                nodes: [58, 24, 1],
                items: 256,
            },
        )
    } else {
        (1, StepsBox::default_for(spec.dim))
    }
}

/// The box of nodes one work-group of the several-steps gather advances
/// ([`Stepper::set_gather_steps`]), and its work-items.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StepsBox {
    /// Nodes along x, y and z (1 on a 2-D grid).
    pub nodes: [usize; 3],
    /// Work-items per work-group.
    pub items: usize,
}

impl StepsBox {
    /// 60 × 16 nodes in 2-D, 8 × 8 × 4 in 3-D, 256 work-items.
    pub fn default_for(dim: usize) -> StepsBox {
        StepsBox {
            nodes: if dim >= 3 { [8, 8, 4] } else { [60, 16, 1] },
            items: 256,
        }
    }

    /// Bytes of local memory for `steps` steps per launch: the box with its margin of `steps`
    /// nodes (along z in 3-D only), three arrays (`u` twice, `v`) of `dofs` reals.
    pub fn local_bytes(&self, steps: usize, dim: usize, dofs: usize, real: usize) -> u64 {
        let [x, y, z] = self.nodes;
        let hz = if dim >= 3 { steps } else { 0 };
        let n = (x + 2 * steps) * (y + 2 * steps) * (z + 2 * hz);
        (3 * n * dofs * real) as u64
    }
}

/// The class-table gather's work-group: 32 nodes along x (a warp's coalesced row) by 4 along y.
/// The driver's own choice for a grid of `2^k + 1` nodes per row (a prime factor or 3) gave
/// work-groups of a few work-items: the kernel ran 1.5 to 5 times slower on an H100.
pub const GATHER_GROUP: [usize; 2] = [32, 4];

/// The work-groups of the stepper's own launches (the passes carry theirs): each is used where
/// the built kernel takes that many work-items, else the launch leaves the size to the driver.
#[derive(Clone, Copy, Debug)]
struct Groups {
    /// `_gather_derived`'s: [`GATHER_GROUP`] or the one [`Stepper::set_gather_group`] set.
    gather: Option<[usize; 2]>,
    /// `_gather`'s and `_gather_pe`'s: [`GATHER_GROUP`].
    arrays: Option<[usize; 2]>,
    /// Whether `_gather_unstructured` takes [`FLAT_GROUP`].
    unstructured: bool,
    /// Whether `_integrate`, `_load` and `_kick` take [`FLAT_GROUP`] (an element without one of
    /// them never launches it).
    flat_ok: bool,
}

impl Groups {
    fn new(program: &Program, name: &str, per_element: bool, gather: Option<[usize; 2]>) -> Groups {
        let pe = if per_element { "_pe" } else { "" };
        let flat = |k: &str, missing: bool| {
            program
                .kernel_limits(&format!("{name}_{k}"))
                .map_or(missing, |l| l.work_group_size >= FLAT_GROUP)
        };
        Groups {
            gather: gather.filter(|&g| kernel_fits(program, &format!("{name}_gather_derived"), g)),
            arrays: Some(GATHER_GROUP).filter(|&g| kernel_fits(program, &format!("{name}_gather{pe}"), g)),
            unstructured: flat("gather_unstructured", false),
            flat_ok: ["integrate", "load", "kick"].iter().all(|k| flat(k, true)),
        }
    }
}

/// Whether `kernel` of `program` takes work-groups of `group` (false where there is no such
/// kernel).
fn kernel_fits(program: &Program, kernel: &str, group: [usize; 2]) -> bool {
    program
        .kernel_limits(kernel)
        .map(|l| l.work_group_size >= group[0] * group[1])
        .unwrap_or(false)
}

/// The node gathers' global and local sizes: `rows` nodes along y per work-item, the global
/// size rounded up to whole work-groups (the kernel skips work-items past the grid).
fn gather_launch(nodes: &[usize], rows: usize, group: Option<[usize; 2]>) -> (Vec<usize>, Option<Vec<usize>>) {
    let mut global = nodes.to_vec();
    if let Some(y) = global.get_mut(1) {
        *y = y.div_ceil(rows);
    }
    let Some(group) = group else {
        return (global, None);
    };
    let local: Vec<usize> = (0..global.len()).map(|i| group.get(i).copied().unwrap_or(1)).collect();
    for (g, l) in global.iter_mut().zip(&local) {
        *g = g.div_ceil(*l) * l;
    }
    (global, Some(local))
}

/// The several-steps gather's global and local sizes: one work-group of `bx.items` work-items
/// per box of `bx.nodes` nodes (the last boxes cut short by the grid's end).
fn steps_launch(nodes: &[usize], bx: StepsBox) -> ([usize; 3], [usize; 3]) {
    let side = |d: usize| nodes.get(d).copied().unwrap_or(1).div_ceil(bx.nodes[d]);
    ([side(0) * bx.items, side(1), side(2)], [bx.items, 1, 1])
}

/// Whether the class-table gather of `spec`'s elements has the assembled node stencil (the
/// kernel's register window: order 1 in 2-D and 3-D).
fn assembles(spec: &ElementSpec) -> bool {
    spec.order == 1 && spec.dim >= 2 && spec.node_offsets.iter().flatten().all(|&o| o <= 1)
}

/// The assembled node stencil of a node that plays every role on a structured grid of one
/// `K_e` (`k`, `nd × nd` row-major), then the two limits of the kernel's guard, for reals whose
/// largest finite value is `max`.
///
/// `s[(n · DOFS + k) · DOFS + j]` is the coefficient of DOF `j` of neighbour `n` in the force on
/// the node's DOF `k`, neighbours numbered x fastest, then y, then z, over offsets −1, 0, 1 (9
/// in 2-D, 27 in 3-D), as the kernel reads it. As local node `a` of an element, the node meets
/// local node `b` at offset `offs[b] − offs[a]`; the sum runs over `a` in order, in `f64`.
///
/// The limits: the kernel takes the stencil only where the window's Σ|u| is at most
/// `max / (4 R)`, `R` the largest sum of |K_e| over one DOF's rows of all roles (then no product
/// or partial sum of either form exceeds `max / 4`), and each damping force |g| at most
/// `max / 4`; elsewhere it sums the elements' rows, so the two forms cannot differ in what
/// overflows or which infinities meet.
fn assembled_stencil(spec: &ElementSpec, k: &[f64], max: f64) -> Vec<f64> {
    let (d, nd) = (spec.dofs, spec.nd());
    let neighbours = if spec.dim == 3 { 27 } else { 9 };
    let mut s = vec![0.0; neighbours * d * d];
    let mut rows = vec![0.0f64; d];
    for (a, oa) in spec.node_offsets.iter().enumerate() {
        for (b, ob) in spec.node_offsets.iter().enumerate() {
            let rel = |i: usize| (ob[i] as i64 - oa[i] as i64 + 1) as usize;
            let z = if spec.dim == 3 { rel(2) } else { 0 };
            let n = (z * 3 + rel(1)) * 3 + rel(0);
            for (kk, row) in rows.iter_mut().enumerate() {
                for j in 0..d {
                    let x = k[(a * d + kk) * nd + b * d + j];
                    s[(n * d + kk) * d + j] += x;
                    *row += x.abs();
                }
            }
        }
    }
    let r = rows.iter().fold(0.0f64, |m, &x| m.max(x));
    // A little under the bound, so that rounding the limit to `f32` cannot raise it past.
    let safe = 1.0 - 1.0 / 1024.0;
    let u_limit = if r > 0.0 { (max / 4.0 / r * safe).min(max) } else { max };
    s.push(u_limit);
    s.push(max / 4.0);
    s
}

/// Most nodes along y one work-item of the class-table gather updates
/// ([`Stepper::set_gather_rows`]).
pub const MAX_GATHER_ROWS: usize = 16;

/// Most class-table gather steps one launch advances ([`Stepper::set_gather_steps`]).
pub const MAX_GATHER_STEPS: usize = 8;

/// Classes are `2^NODES` table rows (the kernel's limit, `MAX_DERIVED_ROLES` in the macros).
const MAX_CLASS_ROLES: usize = 9;

/// The class table of `_gather_derived` from the per-DOF `minv`, `damp` the other kernels
/// read: a node's class has bit `a` set when it is local node `a` of an element (`conn`,
/// `nodes` per element), which is how the kernel tells it from the grid. `None` when two free
/// DOFs of one class (same component) differ in a bit; fixed DOFs go to the bit mask, and
/// their table entries are never read.
fn mass_table<R: Real>(
    conn: &[u32],
    nodes: usize,
    dofs: usize,
    fixed: &[bool],
    minv: &[R],
    damp: &[R],
) -> Option<(Vec<R>, Vec<u32>)> {
    if nodes > MAX_CLASS_ROLES || nodes == 0 {
        return None;
    }
    let node_count = minv.len() / dofs;
    let mut class = vec![0usize; node_count];
    for element in conn.chunks(nodes) {
        for (a, &c) in element.iter().enumerate() {
            *class.get_mut(c as usize)? |= 1 << a;
        }
    }
    let mut tab = vec![R::default(); (1 << nodes) * 2 * dofs];
    let mut seen = vec![false; (1 << nodes) * dofs];
    let mut bits = vec![0u32; minv.len().div_ceil(32)];
    for (c, &cls) in class.iter().enumerate() {
        for k in 0..dofs {
            let i = c * dofs + k;
            if fixed[i] {
                bits[i / 32] |= 1 << (i % 32);
                continue;
            }
            let row = cls * 2 * dofs;
            let (m, d) = (minv[i], damp[i]);
            if std::mem::replace(&mut seen[cls * dofs + k], true) {
                let same = |a: R, b: R| a.widen().to_bits() == b.widen().to_bits();
                if !same(tab[row + k], m) || !same(tab[row + dofs + k], d) {
                    return None;
                }
            } else {
                tab[row + k] = m;
                tab[row + dofs + k] = d;
            }
        }
    }
    Some((tab, bits))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Several steps per launch by default for 2-D order-1 elements in `f32` on a GPU only, in a
    /// box whose rows with the margin are 64 local nodes and that fits 48 KiB of local memory.
    #[test]
    fn several_steps_are_the_default_where_they_were_measured() {
        let spec = |dim: usize, order: usize| ElementSpec {
            name: "e",
            dim,
            cell: crate::fem::element::Cell::Cube,
            nodes: 1 << dim,
            dofs: dim,
            order,
            node_offsets: &[],
            strains: 3,
            source: "",
            kernels: None,
        };
        let gpu = crate::cl::test_info(crate::DeviceKind::Gpu, "NVIDIA CUDA", 1024, 48 << 10);
        let cpu = crate::cl::test_info(crate::DeviceKind::Cpu, "Portable Computing Language", 4096, 4 << 20);
        let (steps, bx) = gather_steps_default(&spec(2, 1), &gpu, 4);
        assert_eq!(steps, 3);
        assert_eq!((bx.nodes[0] + 2 * steps) % 64, 0, "{bx:?}");
        assert!(bx.local_bytes(steps, 2, 2, 4) <= gpu.local_mem_bytes, "{bx:?}");
        for (s, info, real) in [
            (spec(2, 1), &cpu, 4),
            (spec(2, 1), &gpu, 8),
            (spec(3, 1), &gpu, 4),
            (spec(2, 2), &gpu, 4),
        ] {
            assert_eq!(
                gather_steps_default(&s, info, real).0,
                1,
                "{}-D order {} {real} B",
                s.dim,
                s.order
            );
        }
    }

    /// The local memory of a box: `u` twice and `v`, the margin along z in 3-D only.
    #[test]
    fn steps_boxes_count_their_margin() {
        let b = StepsBox {
            nodes: [58, 24, 1],
            items: 256,
        };
        assert_eq!(b.local_bytes(3, 2, 2, 4), 3 * 64 * 30 * 2 * 4);
        let b = StepsBox {
            nodes: [8, 8, 4],
            items: 256,
        };
        assert_eq!(b.local_bytes(2, 3, 3, 8), 3 * 12 * 12 * 8 * 3 * 8);
        assert_eq!(
            steps_launch(
                &[2049, 1025, 1],
                StepsBox {
                    nodes: [58, 24, 1],
                    items: 256
                }
            ),
            ([36 * 256, 43, 1], [256, 1, 1])
        );
    }

    /// The assembled stencil of a node of a 2-D order-1 element: each (a, b) pair of local nodes
    /// lands at neighbour `offs[b] - offs[a]`; the centre collects the diagonal blocks of all
    /// roles, a corner neighbour the one block that reaches it; the limits bound |K| row sums.
    #[test]
    fn assembled_stencil_sums_the_blocks_of_every_role() {
        const OFFS: [[usize; 3]; 4] = [[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]];
        let spec = ElementSpec {
            name: "quad4",
            dim: 2,
            cell: crate::fem::element::Cell::Cube,
            nodes: 4,
            dofs: 2,
            order: 1,
            node_offsets: &OFFS,
            strains: 3,
            source: "",
            kernels: None,
        };
        assert!(assembles(&spec));
        let nd = 8;
        let k: Vec<f64> = (0..nd * nd).map(|i| ((i * 37 % 23) as f64 - 11.0) * 0.25).collect();
        let kk = |r: usize, c: usize| k[r * nd + c];
        let s = assembled_stencil(&spec, &k, f64::from(f32::MAX));
        assert_eq!(s.len(), 9 * 4 + 2);
        let at = |n: usize, r: usize, c: usize| s[(n * 2 + r) * 2 + c];
        for (r, c) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
            // Centre (n = 4): every role's diagonal block.
            let centre: f64 = (0..4).map(|a| kk(a * 2 + r, a * 2 + c)).sum();
            assert_eq!(at(4, r, c), centre);
            // Neighbour (+1, +1) (n = 8): only as node 0 meeting node 2.
            assert_eq!(at(8, r, c), kk(r, 2 * 2 + c));
            // Neighbour (-1, 0) (n = 3): as node 1 meeting node 0, as node 2 meeting node 3.
            assert_eq!(at(3, r, c), kk(2 + r, c) + kk(4 + r, 6 + c));
        }
        // Σ over neighbours of a coefficient is Σ over the rows of all roles.
        for r in 0..2 {
            let all: f64 = (0..4)
                .flat_map(|a| (0..nd).map(move |c| (a, c)))
                .map(|(a, c)| kk(a * 2 + r, c))
                .sum();
            let stencil: f64 = (0..9)
                .flat_map(|n| (0..2).map(move |c| (n, c)))
                .map(|(n, c)| at(n, r, c))
                .sum();
            assert!((all - stencil).abs() <= 1e-12 * all.abs().max(1.0));
        }
        let rows: f64 = (0..2)
            .map(|r| {
                (0..4)
                    .flat_map(|a| (0..nd).map(move |c| (a, c)))
                    .map(|(a, c)| kk(a * 2 + r, c).abs())
                    .sum::<f64>()
            })
            .fold(0.0, f64::max);
        let (u_limit, g_limit) = (s[36], s[37]);
        assert!(u_limit * rows <= f64::from(f32::MAX) / 4.0 && u_limit * rows > f64::from(f32::MAX) / 4.1);
        assert_eq!(g_limit, f64::from(f32::MAX) / 4.0);
        // A zero matrix puts no bound on u.
        assert_eq!(assembled_stencil(&spec, &vec![0.0; nd * nd], 1.0)[36], 1.0);
        // Order 2 or 1-D: no stencil.
        assert!(!assembles(&ElementSpec { order: 2, ..spec }));
        assert!(!assembles(&ElementSpec { dim: 1, ..spec }));
    }

    #[test]
    fn gather_launches_cover_every_node_in_whole_groups() {
        // 2049 x 1025 nodes, 3 rows per work-item, 32 x 4 groups: 342 rows of work-items cover
        // the 1025 node rows, rounded up to 344 (whole groups), 2049 columns to 2080.
        let (global, local) = gather_launch(&[2049, 1025, 1], 3, Some([32, 4]));
        assert_eq!(local, Some(vec![32, 4, 1]));
        assert_eq!(global, vec![2080, 344, 1]);
        assert!(global[1] * 3 >= 1025 && global[0] >= 2049);
        // Without a group the driver chooses, and the sizes are the nodes' (rows folded in).
        assert_eq!(gather_launch(&[7, 9], 2, None), (vec![7, 5], None));
        // A 1-D grid: the group's first side only.
        assert_eq!(gather_launch(&[5], 1, Some([32, 4])), (vec![32], Some(vec![32])));
    }

    #[test]
    fn flat_launches_round_up_to_whole_groups() {
        assert_eq!(flat_launch(1, true), ([FLAT_GROUP], Some([FLAT_GROUP])));
        assert_eq!(flat_launch(FLAT_GROUP, true), ([FLAT_GROUP], Some([FLAT_GROUP])));
        assert_eq!(
            flat_launch(FLAT_GROUP + 1, true),
            ([2 * FLAT_GROUP], Some([FLAT_GROUP]))
        );
        assert_eq!(flat_launch(4099, false), ([4099], None));
        assert_eq!(default_local(1), vec![FLAT_GROUP]);
        assert_eq!(default_local(3), vec![GATHER_GROUP[0], GATHER_GROUP[1], 1]);
    }
}
