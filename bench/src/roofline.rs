//! The device's roofline in this run: copy bandwidth (a `float8` copy kernel and
//! `clEnqueueCopyBuffer`) and arithmetic throughput (a `float8` / `double8` FMA kernel).

use anyhow::{Context, Result};
use clforge::runtime::{Arg, Buffer, Device, DeviceKind};
use serde::Serialize;

use crate::measure::{time_launches, Reps, Stats};

/// Independent FMA chains per work-item (latency hiding within a work-item).
const CHAINS: usize = 8;
/// FMA steps per chain.
const FMA_ITERS: usize = 256;
/// Work-group of the FMA kernel (work-group 8 measured 4x slower on the H100).
const FMA_WG: usize = 64;
/// Work-group of the copy kernel.
const COPY_WG: usize = 256;

/// A `float8` copy, and a `float8` triad (two reads per write, like a stencil's fields).
const COPY_SOURCE: &str = "
__kernel void copy8(__global float8* restrict dst, __global const float8* restrict src) {
    const size_t i = get_global_id(0);
    dst[i] = src[i];
}
__kernel void triad8(__global float8* restrict a, __global const float8* restrict b,
                     __global const float8* restrict c, const float s) {
    const size_t i = get_global_id(0);
    a[i] = b[i] + s * c[i];
}
";

/// `CHAINS` independent `x = fma(x, a, b)` chains of `FMA_ITERS` steps on `<ty>8` values.
fn fma_source(ty: &str) -> String {
    let decl: Vec<String> = (0..CHAINS).map(|c| format!("x{c} = seed + ({ty})({c})")).collect();
    let step: Vec<String> = (0..CHAINS).map(|c| format!("x{c} = fma(x{c}, a, b);")).collect();
    let sum: Vec<String> = (0..CHAINS).map(|c| format!("x{c}")).collect();
    let ext = if ty == "double" {
        "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
    } else {
        ""
    };
    format!(
        "{ext}__kernel void fma8(__global {ty}8* out, const {ty} a, const {ty} b) {{\n\
         \x20   const {ty}8 seed = ({ty}8)(({ty})get_global_id(0) * ({ty})1e-7);\n\
         \x20   {ty}8 {decl};\n\
         \x20   for (int i = 0; i < {FMA_ITERS}; ++i) {{\n\
         \x20       {step}\n\
         \x20   }}\n\
         \x20   out[get_global_id(0)] = {sum};\n\
         }}\n",
        decl = decl.join(", "),
        step = step.join("\n        "),
        sum = sum.join(" + "),
    )
}

/// One roofline measurement.
#[derive(Clone, Debug, Serialize)]
pub struct Point {
    pub what: String,
    /// Bytes moved (read + written) or floating-point operations per launch.
    pub amount: f64,
    pub unit: &'static str,
    pub time: Stats,
    /// `amount / median time`, in G`unit`/s.
    pub rate_g: f64,
    /// `amount / fastest time`.
    pub best_rate_g: f64,
}

impl Point {
    fn new(what: String, amount: f64, unit: &'static str, time: Stats) -> Point {
        let per_us = |us: f64| if us > 0.0 { amount / us / 1e3 } else { 0.0 };
        Point {
            what,
            amount,
            unit,
            rate_g: per_us(time.median_us),
            best_rate_g: per_us(time.min_us),
            time,
        }
    }
}

/// The roofline of one device.
#[derive(Clone, Debug, Serialize)]
pub struct Roofline {
    pub copy_kernel: Point,
    pub copy_buffer: Point,
    /// `a = b + s·c` (two reads, one write): read-heavy kernels such as stencils can beat copy.
    pub triad: Point,
    pub fma_f32: Point,
    pub fma_f64: Option<Point>,
}

impl Roofline {
    /// Copy bandwidth (GB/s, read + write) that stencils are compared with: the faster of
    /// the copy kernel and `clEnqueueCopyBuffer`.
    pub fn copy_gb_s(&self) -> f64 {
        self.copy_kernel.rate_g.max(self.copy_buffer.rate_g)
    }
}

/// Size of each copy buffer: 256 MiB on GPUs (well past the caches), less on CPUs and
/// with `--quick`, never above the device's allocation limit.
pub fn copy_bytes(dev: &Device, quick: bool) -> usize {
    let want: u64 = match (dev.info().kind == DeviceKind::Gpu, quick) {
        (true, false) => 256 << 20,
        (true, true) | (false, false) => 64 << 20,
        (false, true) => 32 << 20,
    };
    let cap = (dev.info().max_alloc_bytes / 2).min(dev.info().global_mem_bytes / 8);
    let bytes = want.min(cap).max(1 << 20) / (1 << 20) * (1 << 20);
    usize::try_from(bytes).unwrap_or(1 << 20)
}

/// Measures the copy and FMA rates.
pub fn measure(dev: &Device, quick: bool, reps: Reps, mut step: impl FnMut(&str)) -> Result<Roofline> {
    let bytes = copy_bytes(dev, quick);
    let floats = bytes / 4;
    step(&format!("roofline: float8 copy kernel, 2 x {} MiB", bytes >> 20));
    let src = Buffer::<f32>::from_slice(dev, &vec![1.0f32; floats]).context("allocating the copy source")?;
    let mut dst = Buffer::<f32>::new(dev, floats).context("allocating the copy destination")?;
    let copy = dev.program("roofline copy", COPY_SOURCE, "")?;
    let items = floats / 8;
    let wg = COPY_WG.min(dev.info().max_work_group_size);
    let global = items.div_ceil(wg) * wg;
    if global != items {
        anyhow::bail!("copy buffer of {bytes} bytes is not a multiple of {wg} float8 items");
    }
    let t = time_launches(reps, || {
        Ok(copy.launch("copy8", &[global], Some(&[wg]), &[Arg::buffer(&dst), Arg::buffer(&src)])?)
    })?;
    let moved = 2.0 * bytes as f64;
    let copy_kernel = Point::new(format!("float8 copy kernel, 2 x {} MiB", bytes >> 20), moved, "B", t);
    if dst.to_vec()?.iter().any(|&v| v != 1.0) {
        anyhow::bail!("the roofline copy kernel copied wrong values");
    }

    step("roofline: clEnqueueCopyBuffer");
    let t = time_launches(reps, || Ok(dst.copy_from(&src)?))?;
    let copy_buffer = Point::new(format!("clEnqueueCopyBuffer, {} MiB", bytes >> 20), moved, "B", t);

    step("roofline: float8 triad kernel");
    let third = Buffer::<f32>::from_slice(dev, &vec![2.0f32; floats]).context("allocating the triad input")?;
    let args = [Arg::buffer(&dst), Arg::buffer(&src), Arg::buffer(&third), Arg::f32(0.5)];
    let t = time_launches(reps, || Ok(copy.launch("triad8", &[global], Some(&[wg]), &args)?))?;
    let triad = Point::new(
        format!("float8 triad a = b + s*c, 3 x {} MiB", bytes >> 20),
        3.0 * bytes as f64,
        "B",
        t,
    );
    if dst.to_vec()?.iter().any(|&v| v != 2.0) {
        anyhow::bail!("the roofline triad kernel computed wrong values");
    }
    drop((src, dst, third));

    step("roofline: float8 FMA");
    let fma_f32 = fma_point(dev, "float", reps)?;
    let fma_f64 = if dev.info().fp64 {
        step("roofline: double8 FMA");
        Some(fma_point(dev, "double", reps)?)
    } else {
        None
    };
    Ok(Roofline {
        copy_kernel,
        copy_buffer,
        triad,
        fma_f32,
        fma_f64,
    })
}

fn fma_point(dev: &Device, ty: &str, reps: Reps) -> Result<Point> {
    let wg = FMA_WG.min(dev.info().max_work_group_size);
    // Enough work-groups to fill every compute unit many times over.
    let groups = (dev.info().compute_units as usize).max(1) * 256;
    let global = groups * wg;
    let prog = dev.program(&format!("roofline fma {ty}"), &fma_source(ty), "")?;
    let t = if ty == "double" {
        let out = Buffer::<f64>::new(dev, global * 8)?;
        time_launches(reps, || {
            Ok(prog.launch(
                "fma8",
                &[global],
                Some(&[wg]),
                &[Arg::buffer(&out), Arg::f64(0.999), Arg::f64(1e-3)],
            )?)
        })?
    } else {
        let out = Buffer::<f32>::new(dev, global * 8)?;
        time_launches(reps, || {
            Ok(prog.launch(
                "fma8",
                &[global],
                Some(&[wg]),
                &[Arg::buffer(&out), Arg::f32(0.999), Arg::f32(1e-3)],
            )?)
        })?
    };
    let flops = (global * FMA_ITERS * CHAINS * 8 * 2) as f64;
    Ok(Point::new(
        format!("{ty}8 FMA, work-group {wg}, {} items", global),
        flops,
        "FLOP",
        t,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fma_source_has_every_chain() {
        let s = fma_source("float");
        assert!(
            s.contains("x7 = fma(x7, a, b);") && s.contains("x0 + x1") && !s.contains("cl_khr_fp64"),
            "{s}"
        );
        assert!(fma_source("double").contains("double8 x0 = seed + (double)(0)"));
    }
}
