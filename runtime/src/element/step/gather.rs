//! The node gather's variants on a structured grid: the class table of masses, the assembled
//! node stencil, several steps per launch, rows per work-item, work-groups, and their tuner.

use crate::buffer::Buffer;
use crate::device::DeviceInfo;
use crate::element::plan::*;
use crate::element::schedule::ForceSchedule;
use crate::element::spec::ElementSpec;
use crate::element::Real;
use crate::error::{Error, Result};
use crate::program::Program;

impl<R: Real> Stepper<R> {
    /// Whether the structured gather looks M⁻¹ and the damping up by node class
    /// (`_gather_derived`: 8 fewer bytes per DOF and step) instead of reading them per DOF.
    /// It does by default wherever it can: `ForceSchedule::Gather` on a structured grid with one
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
                "the `{}` stepper cannot look masses up by node class: that needs `ForceSchedule::Gather` on a \
                 structured grid with one K_e, at most {MAX_CLASS_ROLES} nodes per element, and the same \
                 lumped masses at every node that belongs to the same elements' roles (a mass added at one \
                 node breaks this)",
                self.spec.name
            )));
        }
        self.derived = on;
        Ok(())
    }

    /// `Ok` where this stepper can run the class-table gather (`ForceSchedule::Gather` with a class
    /// table), else the [`Error::InvalidConfig`] naming what needs it (`what`).
    pub(crate) fn class_gather(&self, what: &str) -> Result<()> {
        if self.schedule == ForceSchedule::Gather && self.mass_table.is_some() {
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
    pub(crate) fn rebuild(&mut self, rows: usize, assembled: bool, steps: usize, bx: StepsBox) -> Result<()> {
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
    pub(crate) fn check_steps(&self, steps: usize, bx: StepsBox) -> Result<()> {
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
    pub(crate) fn median_step_ns(&mut self, per_call: usize, reps: usize) -> Result<u64> {
        self.step(per_call)?;
        let mut ns = Vec::with_capacity(reps);
        for _ in 0..reps {
            self.step(per_call)?;
            ns.push(self.last_step_ns()? / per_call as u64);
        }
        ns.sort_unstable();
        Ok(ns[ns.len() / 2])
    }
}

/// The derived-mass gather's tables on the device: per node class `DOFS` inverse masses, then
/// `DOFS` damping factors; one bit per DOF for the fixed ones.
pub(crate) struct MassTable<R: Real> {
    pub(crate) tab: Buffer<R>,
    pub(crate) fixed: Buffer<u32>,
}

/// The work-group of the launches over DOFs or elements (the unstructured gather, integration,
/// loads; the element-force passes of the unstructured schedule).
pub const FLAT_GROUP: usize = 128;

/// The work-group a launch of `dims` dimensions gets unless its schedule sets one: a
/// [`FLAT_GROUP`] row, or [`GATHER_GROUP`] in 2-D and 3-D.
pub(crate) fn default_local(dims: usize) -> Vec<usize> {
    match dims {
        1 => vec![FLAT_GROUP],
        n => (0..n).map(|i| GATHER_GROUP.get(i).copied().unwrap_or(1)).collect(),
    }
}

/// Global and local size of a launch over `n` items: whole groups of [`FLAT_GROUP`] where
/// `ok` (the kernel skips items from `n`), else `n` and the driver's choice.
pub(crate) fn flat_launch(n: usize, ok: bool) -> ([usize; 1], Option<[usize; 1]>) {
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
pub(crate) fn gather_options(base: &str, rows: usize, assembled: bool, steps: Option<(usize, StepsBox)>) -> String {
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
pub(crate) struct Groups {
    /// `_gather_derived`'s: [`GATHER_GROUP`] or the one [`Stepper::set_gather_group`] set.
    pub(crate) gather: Option<[usize; 2]>,
    /// `_gather`'s and `_gather_pe`'s: [`GATHER_GROUP`].
    pub(crate) arrays: Option<[usize; 2]>,
    /// Whether `_gather_unstructured` takes [`FLAT_GROUP`].
    pub(crate) unstructured: bool,
    /// Whether `_integrate`, `_load` and `_kick` take [`FLAT_GROUP`] (an element without one of
    /// them never launches it).
    pub(crate) flat_ok: bool,
}

impl Groups {
    pub(crate) fn new(program: &Program, name: &str, per_element: bool, gather: Option<[usize; 2]>) -> Groups {
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
pub(crate) fn kernel_fits(program: &Program, kernel: &str, group: [usize; 2]) -> bool {
    program
        .kernel_limits(kernel)
        .map(|l| l.work_group_size >= group[0] * group[1])
        .unwrap_or(false)
}

/// The node gathers' global and local sizes: `rows` nodes along y per work-item, the global
/// size rounded up to whole work-groups (the kernel skips work-items past the grid).
pub(crate) fn gather_launch(
    nodes: &[usize],
    rows: usize,
    group: Option<[usize; 2]>,
) -> (Vec<usize>, Option<Vec<usize>>) {
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
pub(crate) fn steps_launch(nodes: &[usize], bx: StepsBox) -> ([usize; 3], [usize; 3]) {
    let side = |d: usize| nodes.get(d).copied().unwrap_or(1).div_ceil(bx.nodes[d]);
    ([side(0) * bx.items, side(1), side(2)], [bx.items, 1, 1])
}

/// Whether the class-table gather of `spec`'s elements has the assembled node stencil (the
/// kernel's register window: order 1 in 2-D and 3-D).
pub(crate) fn assembles(spec: &ElementSpec) -> bool {
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
pub(crate) fn assembled_stencil(spec: &ElementSpec, k: &[f64], max: f64) -> Vec<f64> {
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
pub(crate) const MAX_CLASS_ROLES: usize = 9;

/// The class table of `_gather_derived` from the per-DOF `minv`, `damp` the other kernels
/// read: a node's class has bit `a` set when it is local node `a` of an element (`conn`,
/// `nodes` per element), which is how the kernel tells it from the grid. `None` when two free
/// DOFs of one class (same component) differ in a bit; fixed DOFs go to the bit mask, and
/// their table entries are never read.
pub(crate) fn mass_table<R: Real>(
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
