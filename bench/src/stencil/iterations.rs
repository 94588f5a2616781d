//! Many iterations of the small grid: what a launch costs the host, beside what it costs the
//! device.

use std::time::Instant;

use anyhow::Result;
use clforge::runtime::{Arg, Buffer, ConstBuffer, Device, LaunchConfig, Params, StencilPlan, StencilSpec, Variant};

use super::cases::{self, JacobiCase, JacobiHost};
use super::kernels::{Coeffs, Jacobi};
use super::Ctx;
use crate::measure::device_sum_ns;
use crate::options::describe;
use crate::report::IterRow;

/// µs per iteration of Jacobi f32 on the small grid (`--small`, seed 002's 512x256) over
/// `--iterations` launches: batched (one finish at the end; with events, and without through
/// `StencilPlan::enqueue`), synchronous (a wait after each launch), and the enqueue cost of a
/// raw `Program::launch`. On such a grid the host's per-launch cost sets the pace, not the
/// kernel: on the H100 the plain kernel takes 13.3 µs per iteration with profiling events and
/// 6.0 µs without.
pub(super) fn small_iterations(ctx: &mut Ctx) -> Result<()> {
    let shape = ctx.opts.small;
    let n = ctx.opts.iterations;
    if n == 0 {
        return Ok(());
    }
    let dev = ctx.dev;
    let host = JacobiHost::<f32>::new(shape)?;
    let mut case = JacobiCase::new(dev, cases::jacobi_f32(), &host)?;
    let spec = Jacobi::spec();
    let mut configs = vec![LaunchConfig::default()];
    if let Some(tuned) = ctx.tuner.cached(dev, &spec, shape) {
        if tuned.effective(&spec) != LaunchConfig::default().effective(&spec) {
            configs.push(tuned);
        }
    }
    for config in configs {
        ctx.progress.step(&format!(
            "jacobi f32 {shape}: {n} iterations, {}",
            describe(&config, &spec)
        ));
        ctx.check_jacobi(cases::jacobi_f32(), &config)?;
        let plan = case.plan(dev, &config)?;
        for _ in 0..10 {
            case.step(&plan)?;
        }
        dev.finish()?;

        let start = Instant::now();
        let mut events = Vec::with_capacity(n);
        for _ in 0..n {
            events.push(case.step(&plan)?);
        }
        let enqueued = start.elapsed();
        dev.finish()?;
        let batched_wall = start.elapsed();
        let batched_device = device_sum_ns(&events)?;

        let start = Instant::now();
        for _ in 0..n {
            case.step_without_event(&plan)?;
        }
        dev.finish()?;
        let no_event_wall = start.elapsed();

        let start = Instant::now();
        events.clear();
        for _ in 0..n {
            let ev = case.step(&plan)?;
            ev.wait()?;
            events.push(ev);
        }
        let sync_wall = start.elapsed();
        let sync_device = device_sum_ns(&events)?;
        drop(events);

        let raw_enqueue_us = if config.variant == Variant::Plain {
            Some(raw_enqueue_us(dev, &case, &plan, &spec, n)?)
        } else {
            None
        };
        let per = |d: std::time::Duration| d.as_secs_f64() * 1e6 / n as f64;
        ctx.report.iterations.push(IterRow {
            case: "jacobi f32".to_owned(),
            shape: shape.to_string(),
            config: describe(&config, &spec),
            iterations: n,
            batched_wall_us: per(batched_wall),
            batched_device_us: batched_device as f64 / 1e3 / n as f64,
            batched_enqueue_us: per(enqueued),
            no_event_wall_us: per(no_event_wall),
            sync_wall_us: Some(per(sync_wall)),
            sync_device_us: Some(sync_device as f64 / 1e3 / n as f64),
            raw_enqueue_us,
        });
    }
    Ok(())
}

/// Host time per launch of the plan's kernel through `Program::launch` with the arguments
/// prepared once (ping-pong included, events kept as in the batched loop): what a launch
/// costs without `StencilPlan`'s per-launch work.
fn raw_enqueue_us(
    dev: &Device,
    case: &JacobiCase<f32, Coeffs>,
    plan: &StencilPlan,
    spec: &StencilSpec,
    n: usize,
) -> Result<f64> {
    let program = dev.program(spec.origin, spec.source, "")?;
    let k = dev.constant_bytes(&case.k.to_bytes())?;
    let [nx, ny, nz] = case.shape.dims().map(|d| d as i32);
    let a = case.psi.current();
    let mut b = clforge::runtime::DeviceGrid::<f32>::new(dev, case.shape)?;
    b.copy_from(a)?.wait()?;
    let (w, cell) = (case.w.buffer(), case.cell.buffer());
    fn jacobi_args<'a>(
        bufs: [&'a Buffer<f32>; 3],
        cell: &'a Buffer<u8>,
        k: &'a ConstBuffer,
        n: [i32; 3],
    ) -> Vec<Arg<'a>> {
        let mut args: Vec<Arg> = bufs.into_iter().map(Arg::buffer).collect();
        args.extend([
            Arg::buffer(cell),
            Arg::constant(k),
            Arg::i32(n[0]),
            Arg::i32(n[1]),
            Arg::i32(n[2]),
        ]);
        args
    }
    let ping = jacobi_args([b.buffer(), a.buffer(), w], cell, &k, [nx, ny, nz]);
    let pong = jacobi_args([a.buffer(), b.buffer(), w], cell, &k, [nx, ny, nz]);
    let (global, local) = (plan.global(), plan.local());
    program.launch(plan.kernel(), global, Some(local), &ping)?.wait()?;
    let mut events = Vec::with_capacity(n);
    let start = Instant::now();
    for i in 0..n {
        let args = if i % 2 == 0 { &pong } else { &ping };
        events.push(program.launch(plan.kernel(), global, Some(local), args)?);
    }
    let enqueued = start.elapsed();
    dev.finish()?;
    Ok(enqueued.as_secs_f64() * 1e6 / n as f64)
}
