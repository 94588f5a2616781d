//! Explicit central-difference stepping of seed 000 (section 5.3, modified CSM scheme):
//! `F += f_ext(t); F -= K_e·U_e; v += F·M⁻¹·dt; u += v·dt; F = C·v` with `C = -α·M`,
//! on the device ([`Stepper`]); [`HostStepper`] does the same on the host with the same arithmetic.
//! [`StepperConfig`], shared by both, lives with [`Model`] in `problem.rs`.

use crate::buffer::Buffer;
use crate::cl::Lane;
use crate::device::{Device, DeviceInfo};
use crate::element::kernels::{At, ElementKernels};
use crate::element::load::check_load;
use crate::element::mesh::Mesh;
use crate::element::reference::padded;
use crate::element::schedule::{ForceSchedule, Pass};
use crate::element::spec::ElementSpec;
use crate::element::step::blocks::block_control;
use crate::element::step::real::Real;
use crate::error::{Error, Result};
use crate::program::{check_work_group, Event, Program};

pub use crate::element::load::{Load, TimeFunction};
pub use crate::element::problem::{Model, StepperConfig};
pub use crate::element::reference::HostStepper;
pub use crate::element::stability::{check_resolution, check_time_step, stability_bound, wave_speed, StabilityBound};

/// Work-items per work-group of `_unstructured_pe`, rounded down to whole elements.
pub(crate) const PE_GROUP: usize = 256;

/// Each node's slots `e · nodes + a` (element `e` has the node as its local node `a`), dead
/// elements left out, in element order: `(first, slots)` with node `c`'s slots at
/// `slots[first[c]..first[c + 1]]`.
pub(crate) fn node_slots(conn: &[u32], nodes: usize, node_count: usize, dead: &[bool]) -> Result<(Vec<i32>, Vec<i32>)> {
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
pub(crate) fn int_index(what: &str, n: usize) -> Result<i32> {
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
pub(crate) fn check_launches(
    info: &DeviceInfo,
    spec: &ElementSpec,
    schedule: ForceSchedule,
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
    if let ForceSchedule::BlockedMaterial(b) = schedule {
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
pub(crate) fn interleaved<R: Real>(
    order: &[usize],
    group_sizes: &[usize],
    len: usize,
    own: impl Fn(usize) -> Vec<R>,
) -> Vec<R> {
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
/// ([`SplitStepper`](crate::element::split::SplitStepper)) — so that a program can take either.
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

pub(crate) struct DeviceLoad<R: Real> {
    pub(crate) dofs: Buffer<i32>,
    pub(crate) weights: Buffer<R>,
    pub(crate) time: TimeFunction,
    pub(crate) n: usize,
}

/// The explicit step on an OpenCL device, for any [`ForceSchedule`], in precision `R`: `f32` (the
/// default) or `f64` (`Stepper::<f64>::new`; the device needs `cl_khr_fp64`). The element
/// kernels are the same source built with `real` = `R`; the model's `f64` matrices, masses and
/// loads are rounded to `R` on upload, as [`HostStepper<R>`] rounds them.
pub struct Stepper<R: Real = f32> {
    pub(crate) spec: ElementSpec,
    pub(crate) schedule: ForceSchedule,
    pub(crate) program: Program,
    pub(crate) passes: Vec<Pass>,
    pub(crate) mesh_dims: [i32; 3],
    pub(crate) dt: R,
    pub(crate) bound: StabilityBound,
    pub(crate) n_dofs: usize,
    pub(crate) n_elements: usize,
    /// `k` holds one `K_e` per element (colour order) rather than the shared one.
    pub(crate) per_element: bool,
    pub(crate) k: Buffer<R>,
    pub(crate) k_all: Buffer<R>,
    pub(crate) g: Option<Buffer<R>>,
    pub(crate) emat: Buffer<u8>,
    pub(crate) elem_nodes: Buffer<i32>,
    pub(crate) elem_nodes_sorted: Buffer<i32>,
    /// `_gather_unstructured`: node `c`'s slots `e · NODES + a` are
    /// `node_slots[node_first[c]..node_first[c + 1]]`.
    pub(crate) node_first: Buffer<i32>,
    pub(crate) node_slots: Buffer<i32>,
    /// The gather on an unstructured mesh (`_gather_unstructured`).
    pub(crate) gather_unstructured: bool,
    pub(crate) control: Buffer<i32>,
    pub(crate) masks: Buffer<u32>,
    pub(crate) minv: Buffer<R>,
    pub(crate) damp: Buffer<R>,
    /// `damp` on the host, for the damping force `F = C·v` of a state set from the host.
    pub(crate) damp_host: Vec<R>,
    /// The structured gather's M⁻¹ and damping by node class (`_gather_derived`), where every
    /// node of a class has the same masses ([`mass_table`]); used while `derived` is set.
    pub(crate) mass_table: Option<MassTable<R>>,
    pub(crate) derived: bool,
    /// `_gather_derived` sums the assembled node stencil at nodes that play every role
    /// (`GATHER_ASSEMBLED`, built into `program`; see [`Stepper::set_assembled`]).
    pub(crate) assembled: bool,
    /// Nodes along y per work-item of `_gather_derived` (`GATHER_ROWS`, built into `program`).
    pub(crate) gather_rows: usize,
    /// Class-table gather steps per launch (`_gather_steps`, `GATHER_STEPS` built into
    /// `program`; 1: `_gather_derived`, a step per launch).
    pub(crate) gather_steps: usize,
    /// The box of nodes one work-group of `_gather_steps` advances.
    pub(crate) steps_box: StepsBox,
    /// The velocities `_gather_steps` writes, swapped with `v` after each launch (allocated by
    /// [`Stepper::set_gather_steps`]).
    pub(crate) v_alt: Option<Buffer<R>>,
    /// The work-groups of the launches that do not come from `passes`.
    pub(crate) groups: Groups,
    /// The build options of `program` without the class-table gather's (`gather_options`).
    pub(crate) options: String,
    pub(crate) u: Buffer<R>,
    pub(crate) u_alt: Buffer<R>,
    pub(crate) v: Buffer<R>,
    pub(crate) f: Buffer<R>,
    pub(crate) loads: Vec<DeviceLoad<R>>,
    pub(crate) steps: u64,
    /// Events of the kernels the last `step` call queued.
    pub(crate) last_events: Vec<Event>,
    /// Events of a step being launched in ranges ([`Stepper::gather_range`]).
    pub(crate) range_events: Vec<Event>,
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
        use crate::element::step::upload;
        let upload::Checked {
            bound,
            mesh_dims,
            gather_unstructured,
        } = upload::check_model::<R>(device, model, config)?;
        let spec = model.spec;
        let schedule = config.schedule;
        let (nd, ne) = (model.nd(), model.mesh.element_count());
        let ndp = nd.div_ceil(8) * 8;
        let n = model.dof_count();
        let conn = model.mesh.connectivity(spec.node_offsets);
        let (order, sorted, colour_sizes) = upload::element_order(model, &spec, schedule, &conn)?;
        let upload::Built {
            passes,
            program,
            groups,
            options,
            class_rows,
        } = upload::build::<R>(device, model, schedule, &colour_sizes, gather_unstructured)?;
        let (k, k_all) = upload::stiffness::<R>(device, model, schedule, &order, gather_unstructured)?;
        let rounded = |m: &[f64]| m.iter().map(|&v| R::of(v)).collect::<Vec<R>>();
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
            (ForceSchedule::BlockedMaterial(b), Mesh::Structured(m)) => block_control(b, m, &model.elements)?,
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
            (Mesh::Structured(_), ForceSchedule::Gather) if !model.per_element && spec.nodes <= MAX_CLASS_ROLES => {
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
        if self.schedule == ForceSchedule::Gather {
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
    pub(crate) fn damping(&self, first: usize, len: usize) -> Result<&[R]> {
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
        if self.schedule != ForceSchedule::Gather {
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

    pub(crate) fn kernels(&self) -> Result<&'static dyn ElementKernels<R>> {
        self.spec.kernels.map(R::kernels).ok_or_else(|| {
            Error::InvalidConfig(format!(
                "element `{}` has no device kernels (its `ElementSpec` names none): declare it with \
                 `#[clforge::element]`",
                self.spec.name
            ))
        })
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
        if self.schedule == ForceSchedule::Unstructured || self.gather_unstructured || self.per_element {
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

pub use crate::element::step::gather::*;
