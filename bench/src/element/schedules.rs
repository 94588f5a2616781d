//! The schedules and gather variants the `elements` suite times, what each is called in the
//! table, and how its minimum bytes per step are counted (see the suite's header in `mod.rs`).

use anyhow::Result;
use clforge::runtime::element::mesh::Mesh;
use clforge::runtime::element::schedule::{Blocking, ForceSchedule};
use clforge::runtime::element::stepper::{Model, Stepper, StepsBox};
use clforge::runtime::element::Real;

/// How the minimum bytes of a schedule are counted: (bytes per node, bytes per element, text).
pub(super) fn min_bytes(kind: Kind) -> (f64, f64, &'static str) {
    const INDEX: &str = "element pass: read u, read+write F (24 B/node) + node indices (16 B/element); \
                         integration: read M^-1, C, u, v, F, write u, v, F (64 B/node)";
    const COMPUTED: &str = "element pass: read u, read+write F (24 B/node); integration: read M^-1, C, u, v, F, \
                            write u, v, F (64 B/node)";
    const BLOCK: &str = "element pass: read u, read+write F (24 B/node) + a 16 B control word per 512-element \
                         block; integration: read M^-1, C, u, v, F, write u, v, F (64 B/node)";
    match kind {
        Kind::ForceSchedule(ForceSchedule::Gather) => (
            32.0,
            0.0,
            "fused: read u, v, write u, v (32 B/node); M^-1 and C looked up by node class, fixed DOFs one bit each",
        ),
        Kind::GatherArrays => (48.0, 0.0, "fused: read u, v, M^-1, C, write u, v (48 B/node)"),
        Kind::ForceSchedule(ForceSchedule::Coloured | ForceSchedule::Unstructured) | Kind::Seed(1) => {
            (88.0, 16.0, INDEX)
        }
        Kind::ForceSchedule(ForceSchedule::BlockedMaterial(_)) | Kind::Seed(4) => (88.0, 16.0 / 512.0, BLOCK),
        _ => (88.0, 0.0, COMPUTED),
    }
}

/// A runtime schedule or a seed algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    ForceSchedule(ForceSchedule),
    /// The structured gather reading M⁻¹ and C per DOF (`Stepper::set_derived_mass(false)`).
    GatherArrays,
    Seed(u8),
}

/// A timed variant of a schedule: the structured gather with M⁻¹ and C by node class (`derived`)
/// or per DOF, its nodes per work-item along y and its work-group (`None`: the stepper's
/// default); other schedules ignore all three.
#[derive(Clone, Copy)]
pub(super) struct Variant {
    pub(super) derived: bool,
    /// Nodes per work-item along y (0: the stepper's default).
    pub(super) rows: usize,
    pub(super) group: Option<[usize; 2]>,
    /// `Stepper::tune_gather` picks rows and group (the others are then ignored).
    pub(super) tuned: bool,
    /// The class-table gather sums the elements' rows (`Stepper::set_assembled(false)`)
    /// rather than the assembled node stencil.
    pub(super) roles: bool,
    /// Steps per launch (`Stepper::set_gather_steps`; 0: the stepper's default) and the box of
    /// nodes of a work-group (`None`: the default box).
    pub(super) steps: usize,
    pub(super) bx: Option<StepsBox>,
}

/// The several-steps gather's boxes the bench tries besides the default: steps per launch,
/// nodes along x and y, work-items (rows of 64 or 128 local nodes with the margin).
const STEPS_BOXES: [(usize, [usize; 2], usize); 7] = [
    (2, [60, 24], 256),
    (3, [58, 16], 256),
    (3, [58, 24], 256),
    (3, [122, 10], 256),
    (3, [58, 16], 128),
    (4, [56, 16], 256),
    (4, [56, 24], 256),
];

/// The class-table gather's work-groups the bench tries besides the default, at 1 and 2 rows.
const GATHER_GROUPS: [[usize; 2]; 7] = [[64, 2], [128, 1], [32, 4], [32, 8], [32, 16], [16, 8], [16, 16]];

/// Each schedule's timed variants: the structured gather by node class at its default, at 2,
/// 4 and 8 rows per work-item (`Stepper::set_gather_rows`) and at [`GATHER_GROUPS`]
/// (`quick`: 2 rows and one other group), then per DOF; the others once.
pub(super) fn variants(s: ForceSchedule, quick: bool) -> Vec<Variant> {
    // Variants of rows, groups and the element rows time one step per launch.
    let v = |derived, rows, group| Variant {
        derived,
        rows,
        group,
        tuned: false,
        roles: false,
        steps: if rows > 0 || group.is_some() { 1 } else { 0 },
        bx: None,
    };
    let several = |steps, bx| Variant {
        steps,
        bx,
        ..v(true, 0, None)
    };
    if s != ForceSchedule::Gather {
        return vec![v(true, 0, None)];
    }
    // Rows 0: the stepper's defaults (`class_gather_defaults`).
    let mut all = vec![
        v(true, 0, None),
        Variant {
            roles: true,
            steps: 1,
            ..v(true, 0, None)
        },
    ];
    let (rows, groups): (&[usize], &[[usize; 2]]) = if quick {
        (&[1], &GATHER_GROUPS[..1])
    } else {
        (&[1, 2, 4, 8], &GATHER_GROUPS)
    };
    all.extend(rows.iter().map(|&r| v(true, r, None)));
    for r in [1, 2] {
        all.extend(groups.iter().map(|&g| v(true, r, Some(g))));
    }
    // One step per launch, and several (temporal blocking): 2, 3 and 4 in the default box, then
    // others.
    all.push(several(1, None));
    all.push(several(2, None));
    if !quick {
        all.extend([3, 4].map(|k| several(k, None)));
        all.extend(STEPS_BOXES.iter().map(|&(steps, [x, y], items)| {
            several(
                steps,
                Some(StepsBox {
                    nodes: [x, y, 1],
                    items,
                }),
            )
        }));
    }
    if !quick {
        all.push(Variant {
            tuned: true,
            ..v(true, 0, None)
        });
    }
    all.push(v(false, 0, None));
    all
}

/// `", 4 rows per work-item, work-groups 64x2"` for a gather variant off the defaults.
pub(super) fn variant_config(v: Variant) -> String {
    let mut s = String::new();
    if v.tuned {
        return ", tuned by Stepper::tune_gather".to_owned();
    }
    if v.roles {
        s += ", element rows (set_assembled(false))";
    }
    if v.steps > 0 {
        s += &format!(", {} steps per launch", v.steps);
    }
    if let Some(b) = v.bx {
        s += &format!(", boxes of {}x{} nodes, {} work-items", b.nodes[0], b.nodes[1], b.items);
    }
    if v.rows > 0 {
        s += &format!(", {} rows per work-item", v.rows);
    }
    if let Some([x, y]) = v.group {
        s += &format!(", work-groups {x}x{y}");
    }
    s
}

/// `", 3 steps per launch (default)"` where the stepper's default runs several steps per launch
/// and the variant did not choose its own.
pub(super) fn defaults_note<R: Real>(st: &Stepper<R>, v: Variant) -> String {
    if v.steps == 0 && st.derived_mass() && st.gather_steps() > 1 {
        let b = st.steps_box();
        format!(
            ", {} steps per launch in boxes of {}x{} nodes (default)",
            st.gather_steps(),
            b.nodes[0],
            b.nodes[1]
        )
    } else {
        String::new()
    }
}

/// `gather-r2-64x2` for a gather variant off the defaults.
pub(super) fn variant_name(v: Variant) -> String {
    let mut s = "gather".to_owned();
    if v.tuned {
        return "gather-tuned".to_owned();
    }
    if v.roles {
        s += "-roles";
    }
    if v.steps > 0 && v.rows == 0 && v.group.is_none() && !v.roles {
        s += &format!("-s{}", v.steps);
    }
    if let Some(b) = v.bx {
        s += &format!("-b{}x{}i{}", b.nodes[0], b.nodes[1], b.items);
    }
    if v.rows > 0 {
        s += &format!("-r{}", v.rows);
    }
    if let Some([x, y]) = v.group {
        s += &format!("-{x}x{y}");
    }
    s
}

/// A stepper set to variant `v` (`None`: the variant does not apply, e.g. no class table).
pub(super) fn apply(mut st: Stepper, v: Variant) -> Result<Option<Stepper>> {
    let custom = v.rows > 0 || v.group.is_some() || v.tuned || v.roles || v.steps > 0;
    if (!v.derived || custom) && !st.derived_mass() {
        return Ok(None);
    }
    if v.roles && !st.assembled() {
        return Ok(None);
    }
    st.set_derived_mass(v.derived && st.derived_mass())?;
    if v.roles {
        st.set_assembled(false)?;
    }
    if v.rows > 0 {
        st.set_gather_rows(v.rows)?;
    }
    if let Some(b) = v.bx {
        st.set_steps_box(b)?;
    }
    if v.steps > 0 {
        // A box or step count the device cannot take is reported and skipped.
        if let Err(e) = st.set_gather_steps(v.steps) {
            eprintln!("skipping {}: {e}", variant_name(v));
            return Ok(None);
        }
    }
    if v.tuned {
        let timings = st.tune_gather(5)?;
        if let Some(best) = timings.first() {
            eprintln!(
                "tune_gather: {} steps per launch, {} rows per work-item, work-groups {:?}, {:.1} us per step (of {} candidates)",
                best.steps,
                best.rows,
                best.group,
                best.median_ns as f64 / 1e3,
                timings.len()
            );
        }
    }
    if let Some(g) = v.group {
        // A work-group the kernel does not take on this device is reported and skipped.
        if let Err(e) = st.set_gather_group(g) {
            eprintln!("skipping {}: {e}", variant_name(v));
            return Ok(None);
        }
    }
    Ok(Some(st))
}

pub(super) fn schedule_name(s: ForceSchedule) -> String {
    match s {
        ForceSchedule::BlockedMaterial(_) => "blocked-mat".to_owned(),
        _ => s.suffix().to_owned(),
    }
}

pub(super) fn schedule_config(s: ForceSchedule, elements: [usize; 2]) -> String {
    match s {
        ForceSchedule::Coloured | ForceSchedule::Computed => "4 colours, driver work-groups".to_owned(),
        ForceSchedule::Blocked(b) | ForceSchedule::BlockedMaterial(b) => {
            format!("L_X {} L_Y {} WI_SIZE {} (default), 4 colours", b.l_x, b.l_y, b.wi_size)
        }
        ForceSchedule::Gather => format!("one launch over {}x{} nodes", elements[0] + 1, elements[1] + 1),
        ForceSchedule::Unstructured => "greedy colours, node indices loaded".to_owned(),
    }
}

/// The kernel a stepper of schedule `s` launches (`derived`: the gather's class table).
pub(super) fn kernel_name(s: ForceSchedule, derived: bool) -> String {
    let derived = if derived { "_derived" } else { "" };
    format!("quad4_{}{derived}", s.suffix())
}

/// Schedules timed, in table order.
pub(super) fn schedules() -> Vec<ForceSchedule> {
    let b = Blocking::default();
    vec![
        ForceSchedule::Coloured,
        ForceSchedule::Computed,
        ForceSchedule::Blocked(b),
        ForceSchedule::BlockedMaterial(b),
        ForceSchedule::Gather,
        ForceSchedule::Unstructured,
    ]
}

/// Launches per step of a schedule on `model`'s mesh (no loads).
pub(super) fn launches_of(s: ForceSchedule, model: &Model) -> usize {
    match (s, &model.mesh) {
        (ForceSchedule::Gather, _) => 1,
        (ForceSchedule::Unstructured, Mesh::Unstructured(m)) => m.greedy_colours().map_or(0, |(_, c)| c) + 1,
        _ => 5,
    }
}
