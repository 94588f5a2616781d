//! The `chain` suite: the latency floor of any sweep schedule that is bitwise equal to the
//! sequential sweep (docs/SWEEPS.md "The floor").
//!
//! A forward 2-D sweep's points form a dependence chain of nx + ny − 1 points (each reads the
//! new value of the one before it); a schedule may reorder everything else, but it must run
//! this chain's updates one after another, and bitwise equality forbids reassociating them.
//! So no schedule is faster than (nx + ny − 1) × the latency of one update from its `new`
//! input to its result. This suite measures that latency in the most favourable setting there
//! is: one work-item, the chain value in a register, every other operand precomputed in arrays
//! (loads independent of the chain, unrolled so they can be issued early), the update's
//! operations in the host's order (`FP_CONTRACT OFF`, correctly rounded division as the
//! generated kernels get it). It also measures one step of the block wavefront's skeleton
//! (a local store, a barrier, a local load, the update), the floor of the in-block walk.
//!
//! Each kernel's result is checked bit for bit against the same chain computed in Rust.

use anyhow::{bail, Result};
use clforge::runtime::{Arg, Buffer, Device};
use serde::Serialize;

use crate::measure::{time_launches, Reps, Stats};

/// The chains' bodies: `x` is the chain value, `s r1 r2 r3 d` the per-step operands.
/// Transport (seed 001 eq. 13, from `c.new(0, -1)`, the later of its two `new` terms, to
/// `rhs / diag`): a multiply, four adds and a division. Gauss–Seidel: three adds and a
/// multiply.
const SOURCE: &str = r#"
#pragma OPENCL FP_CONTRACT OFF
#define TRANSPORT(x, i) (((((s[i] + r1[i] * (x)) + r2[i]) + r3[i]) + s[i]) / d[i])
#define GS(x, i) (0.25f * ((((x) + r1[i]) + r2[i]) + r3[i]))

__kernel void chain_transport(__global const float* restrict s, __global const float* restrict r1,
                              __global const float* restrict r2, __global const float* restrict r3,
                              __global const float* restrict d, __global float* out, const int n)
{
    if (get_global_id(0) != 0) return;
    float x = 1.0f;
#pragma unroll 16
    for (int i = 0; i < n; ++i) {
        x = TRANSPORT(x, i);
    }
    out[0] = x;
}

__kernel void chain_gs(__global const float* restrict s, __global const float* restrict r1,
                       __global const float* restrict r2, __global const float* restrict r3,
                       __global const float* restrict d, __global float* out, const int n)
{
    if (get_global_id(0) != 0) return;
    float x = 1.0f;
#pragma unroll 16
    for (int i = 0; i < n; ++i) {
        x = GS(x, i);
    }
    out[0] = x;
}

/* The wavefront's in-block skeleton: work-item t at step k takes its left neighbour's value
 * of step k - 1 from local memory (the skewed walk of a block row by row), updates it, stores
 * it, and the work-group meets at a barrier. Work-item 0 reads its own previous value. */
__kernel void step_transport(__global const float* restrict s, __global const float* restrict r1,
                             __global const float* restrict r2, __global const float* restrict r3,
                             __global const float* restrict d, __global float* out, const int n)
{
    __local float tile[2][256];
    const int t = get_local_id(0);
    tile[0][t] = 1.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    float x = 1.0f;
    for (int i = 0; i < n; ++i) {
        const float in = tile[i & 1][t == 0 ? 0 : t - 1];
        x = TRANSPORT(in, i);
        tile[(i + 1) & 1][t] = x;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    out[t] = x;
}
"#;

/// Steps per chain: long enough that a launch's overhead is under 1 %.
const STEPS: usize = 1 << 18;
/// Work-items of the skeleton kernel (one warp on NVIDIA; the blocks of the 2-D schedules).
const STEP_WG: usize = 32;

/// One measured chain.
#[derive(Clone, Debug, Serialize)]
pub struct Chain {
    pub what: String,
    pub steps: usize,
    pub time: Stats,
    /// Median device time per dependent step.
    pub ns_per_step: f64,
}

/// The suite's result.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub device: String,
    pub chains: Vec<Chain>,
}

fn transport(x: f32, s: f32, r1: f32, r2: f32, r3: f32, d: f32) -> f32 {
    ((((s + r1 * x) + r2) + r3) + s) / d
}

fn gs(x: f32, r1: f32, r2: f32, r3: f32) -> f32 {
    0.25 * (((x + r1) + r2) + r3)
}

/// Operands that keep the chain finite and its values changing (no constant folding, no
/// denormals): a contraction with varying coefficients.
fn operands(n: usize) -> [Vec<f32>; 5] {
    let u = |i: usize, k: u64| {
        let h = (i as u64 ^ k).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40;
        h as f32 / (1u64 << 24) as f32
    };
    [
        (0..n).map(|i| 0.5 + u(i, 1)).collect(),
        (0..n).map(|i| 0.25 + 0.5 * u(i, 2)).collect(),
        (0..n).map(|i| u(i, 3) - 0.5).collect(),
        (0..n).map(|i| 0.1 * u(i, 4)).collect(),
        (0..n).map(|i| 1.5 + u(i, 5)).collect(),
    ]
}

pub fn run(dev: &Device, reps: Reps) -> Result<Report> {
    let ops = operands(STEPS);
    let bufs = ops
        .iter()
        .map(|v| Buffer::<f32>::from_slice(dev, v))
        .collect::<Result<Vec<_>, _>>()?;
    let out = Buffer::<f32>::new(dev, STEP_WG)?;
    let prog = dev.program("sweep chain floor", SOURCE, "")?;
    let n = i32::try_from(STEPS)?;
    let mut chains = Vec::new();
    for (kernel, what, wg) in [
        (
            "chain_transport",
            "transport update (eq. 13), one work-item, chain in a register",
            1,
        ),
        ("chain_gs", "Gauss–Seidel update, one work-item, chain in a register", 1),
        (
            "step_transport",
            "transport update + local store + barrier + local load, 32 work-items (the in-block step)",
            STEP_WG,
        ),
    ] {
        let args = [
            Arg::buffer(&bufs[0]),
            Arg::buffer(&bufs[1]),
            Arg::buffer(&bufs[2]),
            Arg::buffer(&bufs[3]),
            Arg::buffer(&bufs[4]),
            Arg::buffer(&out),
            Arg::i32(n),
        ];
        let time = time_launches(reps, || Ok(prog.launch(kernel, &[wg], Some(&[wg]), &args)?))?;
        let got = out.to_vec()?;
        let mut x = 1.0f32;
        let rows = ops[0].iter().zip(&ops[1]).zip(&ops[2]).zip(&ops[3]).zip(&ops[4]);
        for ((((&s, &r1), &r2), &r3), &d) in rows.take(STEPS) {
            x = match kernel {
                "chain_gs" => gs(x, r1, r2, r3),
                _ => transport(x, s, r1, r2, r3, d),
            };
        }
        // The skeleton's work-items all follow work-item 0's chain after `wg` steps.
        if got[wg - 1].to_bits() != x.to_bits() {
            bail!(
                "{kernel}: the device computed {} where the host computes {x}",
                got[wg - 1]
            );
        }
        chains.push(Chain {
            what: what.into(),
            steps: STEPS,
            ns_per_step: time.median_us * 1e3 / STEPS as f64,
            time,
        });
    }
    Ok(Report {
        device: dev.info().name.clone(),
        chains,
    })
}

impl Report {
    pub fn table(&self) -> String {
        let mut s = format!(
            "dependent-chain floor on {}\n\n| chain | steps | median µs | ns per step | 3600×1800 sweep floor µs (5399 steps) | 16384² floor µs (32767 steps) |\n|---|---|---|---|---|---|\n",
            self.device
        );
        for c in &self.chains {
            s.push_str(&format!(
                "| {} | {} | {:.1} | {:.1} | {:.0} | {:.0} |\n",
                c.what,
                c.steps,
                c.time.median_us,
                c.ns_per_step,
                c.ns_per_step * 5399.0 / 1e3,
                c.ns_per_step * 32767.0 / 1e3
            ));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chains_stay_finite_and_move() {
        let ops = operands(4096);
        let (mut x, mut y) = (1.0f32, 1.0f32);
        let mut seen = std::collections::BTreeSet::new();
        let rows = ops[0].iter().zip(&ops[1]).zip(&ops[2]).zip(&ops[3]).zip(&ops[4]);
        for (i, ((((&s, &r1), &r2), &r3), &d)) in rows.enumerate() {
            x = transport(x, s, r1, r2, r3, d);
            y = gs(y, r1, r2, r3);
            assert!(x.is_normal() && y.is_normal(), "step {i}: {x} {y}");
            seen.insert(x.to_bits());
        }
        assert!(seen.len() > 1000, "the chain settled: {} distinct values", seen.len());
    }
}
