//! Timing one explicit step of a stepper, and turning a time into a row of the table.

use std::time::Instant;

use anyhow::Result;
use clforge::runtime::element::schedule::ForceSchedule;
use clforge::runtime::element::stepper::{Model, Stepper};
use clforge::runtime::element::Real;
use clforge::runtime::Device;

use super::schedules::launches_of;
use super::{noise, tets};
use crate::measure::{Reps, Stats};
use crate::report::ElementRow;

/// What a row of the table is, before its figures.
pub(super) struct RowHead {
    pub(super) case: String,
    pub(super) elements: String,
    pub(super) element_count: usize,
    pub(super) node_count: usize,
    pub(super) implementation: &'static str,
    pub(super) schedule: String,
    pub(super) kernels: String,
    pub(super) config: String,
    pub(super) launches_per_step: usize,
}

/// A row with its figures: `(bytes, how)` the minimum bytes of a step and how they are counted,
/// `time` the device time per step, `(wall_ms, batch)` the wall time per 1000 steps of a batch of
/// `batch` steps, `copy` the measured copy rate (GB/s).
pub(super) fn timed_row(
    h: RowHead,
    (bytes, how): (f64, &'static str),
    time: Stats,
    (wall_ms, batch): (f64, usize),
    copy: f64,
) -> ElementRow {
    let med_s = time.median_us * 1e-6;
    let gb_s = if med_s > 0.0 { bytes / med_s / 1e9 } else { 0.0 };
    ElementRow {
        case: h.case,
        elements: h.elements,
        element_count: h.element_count,
        node_count: h.node_count,
        implementation: h.implementation,
        schedule: h.schedule,
        kernels: h.kernels,
        config: h.config,
        launches_per_step: h.launches_per_step,
        min_bytes_per_step: bytes,
        bytes_per_node: bytes / h.node_count as f64,
        min_bytes: how,
        steps_per_s: if med_s > 0.0 { 1.0 / med_s } else { 0.0 },
        ms_per_1000_steps: time.median_us,
        wall_ms_per_1000_steps: wall_ms,
        batch_steps: batch,
        gb_s,
        roofline_ms_per_1000_steps: if copy > 0.0 { bytes / copy * 1e-3 } else { 0.0 },
        frac_roofline: if copy > 0.0 { gb_s / copy } else { 0.0 },
        vs_seed: None,
        time,
    }
}

/// Device time per step (profiled kernels), wall time per 1000 steps of a batch, launches per step.
pub(super) fn time_tets<R: Real>(
    dev: &Device,
    model: &Model,
    schedule: ForceSchedule,
    reps: Reps,
    batch: usize,
) -> Result<(Stats, f64, usize)> {
    let mut st = Stepper::<R>::with_precision(dev, model, &tets::config(model, schedule)?)?;
    let n = model.dof_count();
    let u: Vec<R> = noise(n, 5, 1e-3).into_iter().map(|x| R::of(f64::from(x))).collect();
    st.set_state(&u, &vec![R::default(); n])?;
    let (time, wall_ms) = time_stepper(&mut st, reps, batch)?;
    Ok((time, wall_ms, launches_of(schedule, model)))
}

/// `reps.warmup` steps, then the device time of `reps.timed` single steps (profiling events),
/// then the wall time per 1000 steps of `batch` steps enqueued back to back.
pub(super) fn time_stepper<R: Real>(st: &mut Stepper<R>, reps: Reps, batch: usize) -> Result<(Stats, f64)> {
    // Several steps per launch: each timed call runs one launch's steps, its time divided.
    let per_call = st.gather_steps();
    for _ in 0..reps.warmup {
        st.step(per_call)?;
        st.finish()?;
    }
    if per_call > 1 {
        // The batch below may end in single steps: their kernel's first launch too.
        st.step(1)?;
        st.finish()?;
    }
    let mut ns = Vec::with_capacity(reps.timed);
    for _ in 0..reps.timed {
        st.step(per_call)?;
        ns.push(st.last_step_ns()? / per_call as u64);
    }
    let t0 = Instant::now();
    st.step(batch)?;
    st.finish()?;
    Ok((
        Stats::from_ns(&ns),
        t0.elapsed().as_secs_f64() * 1e3 / batch as f64 * 1000.0,
    ))
}
