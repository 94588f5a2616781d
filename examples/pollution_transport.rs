//! Seed 001 (Gladky & Bogaenko, «Моделирование переноса загрязнений в атмосфере с
//! использованием параллельных вычислений», Kyiv 2014): pollution transport in the atmosphere by
//! the running-count ("бегущий счёт") splitting schemes, on the default OpenCL device
//! (`CLFORGE_DEVICE` picks another). Every sweep is a `#[clforge::sweep]`: an in-place
//! directional point update that the runtime runs as block wavefronts, bitwise equal to the
//! sequential sweep (checked at start-up against `apply_host`).
//!
//! ```text
//! # 360×180 intervals (h = 100 m), 720 steps: ~4 s on 2 PoCL cores
//! cargo run --release --example pollution_transport -- --size 360x180
//! # 1200×600 (h = 30 m), 2400 steps: ~100 s
//! cargo run --release --example pollution_transport -- --size 1200x600
//! # the seed's 3600×1800 (h = 10 m), 7200 steps: about an hour on 2 PoCL cores (see Times)
//! cargo run --release --example pollution_transport
//! # 3-D: 320×320×240 intervals (h = 10 m) by default; 64×64×48 runs in ~5 s
//! cargo run --release --example pollution_transport -- --dim 3 --size 64x64x48
//! # the grids split along the last axis over 2 devices, or across MPI ranks: the same bits
//! cargo run --release --example pollution_transport -- --size 360x180 --devices 2
//! cargo build --release --features clforge/mpi --example pollution_transport
//! mpirun -np 2 target/release/examples/pollution_transport --size 360x180 --ranks
//! ```
//!
//! **1. Wind: potential flow** (seed eqs. (3)–(11)). `V = ∇p`, `Δp = 0`, solved as the
//! steady state of `p_t = Δp` by the two-step scheme (10)–(11): a forward sweep (new values at
//! −1 offsets) then a backward sweep (new values at +1 offsets) per pseudo-time step, the
//! explicit node updates of the notes §2.2 with the full pseudo-step τ_p in each half. The pair
//! is Samarskii's alternating-triangular method in Peaceman–Rachford form; its contraction per
//! step is `1 − O(h/l)` whatever τ_p (the smoothest mode is damped by ~`1 − θ/2` at best), so
//! the steps grow like N. τ_p = [`TAU_P`]`· h_min · l_max` (measured best). To cut the fine
//! grid's share the iteration is nested: the layout at N/2, N/4, … (down to `--coarsest`
//! intervals) is converged first and its potential, interpolated, starts the next level
//! (`--single-level` turns this off; at 360×180 it saves 45 % of the fine steps).
//! Boundary conditions come from a mask inside the sweep, on a grid with one ghost ring so that
//! every physical node, the boundary included, is updated by the sweep:
//! - outflow `p = p_s`: the node keeps its value ([`KEEP`]);
//! - walls `dp/dn = 0` and inflow `dp/dn = V_n`: first-order Neumann, the node takes the mean of
//!   its fluid face neighbours (the mask's low bits say which) plus `h·V_n` (`g`, zero on
//!   walls); a neighbour behind in the sweep's direction is read with `.new`, one ahead with
//!   `.old`. Obstacles are walls too: their surface nodes copy the fluid beside them.
//!
//! Each level stops when the largest change of p in one pseudo-step (host, from two downloads
//! every `--check-every` steps) is at most `--tol · U0 · h` (default 1e-4: the wind is then
//! within ~7e-4·U0 of the fully converged one, measured at 360×180); the contraction per step
//! is estimated from successive checks and the remaining error `change · ρ/(1−ρ)` printed. p is
//! f64: it spans `U0 · l1 = 1.8e5 m²/s` while the velocity needs differences of `U0 · h = 50` to
//! 1e-4, beyond f32. `V` is the central difference of p (the stencils [`wind_x`] …), f32.
//! Potential flow is singular at the obstacle's convex corners and where the south inflow ends
//! (the printed maximum speed grows with resolution there); the pictures scale by the 99th
//! percentile.
//!
//! **2. Transport** (seed eq. (12), scheme (13)–(16), notes §2.3): `C_t + u C_x + v C_y + σC =
//! μΔC + f`, a forward sweep with the upwind parts `u+, v+` and a backward sweep with `u−, v−`,
//! each with the full τ, `σ/2` on the new value and `f/2` in each; `C = 0` on the sides (the
//! seed's first-kind condition); zero gradient on obstacle surfaces and, in 3-D, at the ground
//! and the lid (no deposition, no escape upwards). C is f32, in µg/m³. The 3-D scheme, which the
//! seed does not write out, adds `w±` with R3 by analogy.
//!
//! **Grid.** `--size N1xN2` counts *intervals*, as the seed's `h_α = l_α / N_α`: nodes
//! `x_i = i·h1, i = 0..N1`, so 3600×1800 is 3601×1801 nodes (3599×1799 interior, the notes'
//! count), stored with the ghost ring as 3603×1803. The region is fixed (36 km × 18 km in 2-D,
//! 3.2 × 3.2 × 2.4 km in 3-D); `--size` sets the resolution.
//!
//! **Parameters the seed omits** (constants below, with their reasons): wind `U0 = 5 m/s` from
//! the west, plus 2 m/s through the western third of the south side (2-D; the mean speed is then
//! 6.4 m/s), out through the east side (p = p_s = 0), walls elsewhere, a 3 km × 6 km ridge (2-D)
//! or a 400 × 800 × 300 m block (3-D); μ = 100 m²/s (a horizontal eddy diffusivity at km scales,
//! the smallest round value with cell Péclet `R = h|u|/μ ≤ 1` at h = 10 m for the mean wind;
//! 10 m²/s vertically in 3-D); σ = 1e-4 1/s (half-life ~2 h); in 2-D C is the mean over a
//! 1000 m mixing layer, so a stack of Q g/s gives `f = Q/(H h1 h2)` at its nearest node; a
//! salvo of M kg adds `M/(H h1 h2 τ)` to f for the one step that contains its time (3-D: over
//! `h1 h2 h3`). `τ = min(0.5 h_min/U0, 1/Σ μ_α/(2h_α²))`: Courant 0.5 and the node's own
//! coefficient `1/τ − Σ d_α` non-negative (positivity).
//!
//! **Accuracy of the time step.** The seed states `O(h² + τ² + τ²/h²)` for (10)–(11). For
//! (13)–(14) tests/sweep/accuracy.rs measures `O(h² + τ/h)` (τ ∝ h² converges at first order
//! only): the convection sits in one half-step, so the O(τ/h) errors of the two diffusion halves
//! no longer cancel. At Courant 0.5 a Gaussian puff is ~5–9 % off its peak on every grid; a
//! smaller `--tau` reduces that in proportion.
//!
//! **Péclet > 1.** The seed's factor `(1 − R+)` (`(1 + R−)` backward) makes the discrete
//! diffusion `μ(1−R)/2` negative when `R > 1`: neighbour coefficients turn negative, C
//! oscillates and goes negative. By default (`--peclet clamp`) the factor is clamped at 0 there:
//! the scheme becomes plain upwind (effective diffusion `h|u|/2 > μ/2`), monotone; where `R ≤ 1`
//! it is exactly the seed's. `--peclet paper` follows the seed. At h = 10 m the wind exceeds
//! R = 1 only where it is faster than 10 m/s, around the obstacle; at coarser `--size` nearly
//! everywhere (the run prints the fraction of nodes).
//!
//! **Times** (2 shared PoCL cores, `--schedule wave`, measured): 360×180 3.5 s in all;
//! 1200×600 100 s (potential 41 s over 4 levels, transport 24 ms per step). The default
//! 3600×1800 (9× the nodes, 3× the steps) took 67 min beside other work (`nice`, load ≈ 4):
//! potential 28 min over 4 levels (12750 steps on the finest), transport 39 min (0.32 s per
//! step). 3-D 128×128×96: 52 s; the default 320×320×240 has 15.6× its nodes, ~30 min and
//! ~6 GB (estimated). `--schedule serial` is as fast as `wave` on 2 CPU cores; the wavefronts
//! are for GPUs.
//!
//! **Output** (`--out`, default `out/pollution_transport/`): `concentration.png` (2-D) or
//! `concentration_xy.png` (horizontal slice at the first stack's height) and
//! `concentration_xz.png` (vertical slice through it) (3-D): log10 of C over 6 decades below its
//! maximum on Viridis, the wind speed in grey below that, wind arrows, obstacles dark, stacks as
//! red dots, salvos (where released) as magenta crosses.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::{Parser, ValueEnum};
use clforge::prelude::*;
use clforge::runtime::{GridOn, SweepEvents};

// ---------------------------------------------------------------------------------------------
// Mask codes, shared by the potential and the transport sweeps.

/// Dirichlet (outflow p = p_s, C = 0 on the domain boundary), solid or unused: the value stays.
pub const KEEP: u8 = 0;
/// An interior node: the running-count update.
pub const INTERIOR: u8 = 128;
// 1..=63: a Neumann node, the mean of the face neighbours whose bits are set: bit 2a for the
// neighbour at −1 along axis a, bit 2a+1 for +1 (W = 1, E = 2, S = 4, N = 8, B = 16, T = 32).

// ---------------------------------------------------------------------------------------------
// Physical parameters (the seed gives none of them).

/// Wind entering through the west side, m/s.
pub const U0: f64 = 5.0;
/// Wind entering through the western third of the south side (2-D), m/s.
pub const V_SOUTH: f64 = 2.0;
/// Turbulent diffusion, m²/s: a horizontal eddy diffusivity at km scales; the cell Péclet
/// number `h|u|/μ` is 0.64 at h = 10 m for the mean wind (6.4 m/s), 1 at 10 m/s.
pub const MU: f64 = 100.0;
/// Vertical turbulent diffusion in 3-D, m²/s (weaker in a stable boundary layer).
pub const MU_VERTICAL: f64 = 10.0;
/// Transformation (decay) coefficient σ, 1/s: a half-life of ln 2/σ ≈ 1.9 h.
pub const SIGMA: f64 = 1e-4;
/// Mixing-layer height, m: the 2-D C is the mean over it, so a source of Q g/s adds
/// `Q·1e6/(H h1 h2)` µg/(m³ s).
pub const MIXING_HEIGHT: f64 = 1000.0;
/// The outflow potential p_s, m²/s.
pub const P_S: f64 = 0.0;
/// Pseudo-time step of the potential flow: `τ_p = TAU_P · h_min · l_max` (m²). Samarskii's
/// `ω = 2/sqrt(δΔ)` for the lowest mode `cos(πx/2l)` of a channel with one Dirichlet end gives
/// `≈ 0.9 h l`; on 360×180 single-level (tol 1e-4), 0.3/0.5/1/2/3 took 7850/6750/6150/6450/7100
/// pseudo-steps.
pub const TAU_P: f64 = 1.0;
/// Courant number `U0 τ/h` of the default transport step.
pub const COURANT: f64 = 0.5;
/// Simulated time, s: 2-D the wind crosses 36 km in 2 h; 3-D 3.2 km in ~11 min.
pub const T_END_2D: f64 = 7200.0;
pub const T_END_3D: f64 = 600.0;

// ---------------------------------------------------------------------------------------------
// Kernels.

/// The pseudo-time scheme (10)–(11) for `Δp = 0`: `keep = 1/τ − s`, `inv_diag = 1/(1/τ + s)`,
/// `c_α = 0.5/h_α²`, `s = Σ c_α` (notes §2.2).
#[derive(Params, Clone, Copy, Debug)]
pub struct Potential {
    pub keep: f64,
    pub inv_diag: f64,
    pub cx: f64,
    pub cy: f64,
    pub cz: f64,
}

impl Potential {
    pub fn new(h: [f64; 3], rank: usize, tau: f64) -> Potential {
        let c = |a: usize| if a < rank { 0.5 / (h[a] * h[a]) } else { 0.0 };
        let s = c(0) + c(1) + c(2);
        Potential {
            keep: 1.0 / tau - s,
            inv_diag: 1.0 / (1.0 / tau + s),
            cx: c(0),
            cy: c(1),
            cz: c(2),
        }
    }
}

/// Step 1, eq. (10): forward in x and y; new values at −1, old at +1 and at the node.
#[sweep(order = forward)]
pub fn potential_forward(p: &Sweep<f64>, mask: &Grid<u8>, g: &Grid<f64>, k: &Potential) -> f64 {
    match mask.at(0, 0) {
        INTERIOR => {
            (k.keep * p.old(0, 0) + k.cx * (p.new(-1, 0) + p.old(1, 0)) + k.cy * (p.new(0, -1) + p.old(0, 1)))
                * k.inv_diag
        }
        KEEP => p.old(0, 0),
        _ => {
            let m = mask.at(0, 0) as u32;
            let w = (m & 1) as f64;
            let e = ((m >> 1) & 1) as f64;
            let s = ((m >> 2) & 1) as f64;
            let n = ((m >> 3) & 1) as f64;
            (w * p.new(-1, 0) + e * p.old(1, 0) + s * p.new(0, -1) + n * p.old(0, 1)) / (w + e + s + n) + g.at(0, 0)
        }
    }
}

/// Step 2, eq. (11): backward in x and y; new values at +1, old at −1 and at the node.
#[sweep(order = backward)]
pub fn potential_backward(p: &Sweep<f64>, mask: &Grid<u8>, g: &Grid<f64>, k: &Potential) -> f64 {
    match mask.at(0, 0) {
        INTERIOR => {
            (k.keep * p.old(0, 0) + k.cx * (p.old(-1, 0) + p.new(1, 0)) + k.cy * (p.old(0, -1) + p.new(0, 1)))
                * k.inv_diag
        }
        KEEP => p.old(0, 0),
        _ => {
            let m = mask.at(0, 0) as u32;
            let w = (m & 1) as f64;
            let e = ((m >> 1) & 1) as f64;
            let s = ((m >> 2) & 1) as f64;
            let n = ((m >> 3) & 1) as f64;
            (w * p.old(-1, 0) + e * p.new(1, 0) + s * p.old(0, -1) + n * p.new(0, 1)) / (w + e + s + n) + g.at(0, 0)
        }
    }
}

/// Eq. (10) in 3-D.
#[sweep(order = forward)]
pub fn potential3_forward(p: &Sweep3<f64>, mask: &Grid3<u8>, g: &Grid3<f64>, k: &Potential) -> f64 {
    match mask.at(0, 0, 0) {
        INTERIOR => {
            (k.keep * p.old(0, 0, 0)
                + k.cx * (p.new(-1, 0, 0) + p.old(1, 0, 0))
                + k.cy * (p.new(0, -1, 0) + p.old(0, 1, 0))
                + k.cz * (p.new(0, 0, -1) + p.old(0, 0, 1)))
                * k.inv_diag
        }
        KEEP => p.old(0, 0, 0),
        _ => {
            let m = mask.at(0, 0, 0) as u32;
            let w = (m & 1) as f64;
            let e = ((m >> 1) & 1) as f64;
            let s = ((m >> 2) & 1) as f64;
            let n = ((m >> 3) & 1) as f64;
            let b = ((m >> 4) & 1) as f64;
            let t = ((m >> 5) & 1) as f64;
            (w * p.new(-1, 0, 0)
                + e * p.old(1, 0, 0)
                + s * p.new(0, -1, 0)
                + n * p.old(0, 1, 0)
                + b * p.new(0, 0, -1)
                + t * p.old(0, 0, 1))
                / (w + e + s + n + b + t)
                + g.at(0, 0, 0)
        }
    }
}

/// Eq. (11) in 3-D.
#[sweep(order = backward)]
pub fn potential3_backward(p: &Sweep3<f64>, mask: &Grid3<u8>, g: &Grid3<f64>, k: &Potential) -> f64 {
    match mask.at(0, 0, 0) {
        INTERIOR => {
            (k.keep * p.old(0, 0, 0)
                + k.cx * (p.old(-1, 0, 0) + p.new(1, 0, 0))
                + k.cy * (p.old(0, -1, 0) + p.new(0, 1, 0))
                + k.cz * (p.old(0, 0, -1) + p.new(0, 0, 1)))
                * k.inv_diag
        }
        KEEP => p.old(0, 0, 0),
        _ => {
            let m = mask.at(0, 0, 0) as u32;
            let w = (m & 1) as f64;
            let e = ((m >> 1) & 1) as f64;
            let s = ((m >> 2) & 1) as f64;
            let n = ((m >> 3) & 1) as f64;
            let b = ((m >> 4) & 1) as f64;
            let t = ((m >> 5) & 1) as f64;
            (w * p.old(-1, 0, 0)
                + e * p.new(1, 0, 0)
                + s * p.old(0, -1, 0)
                + n * p.new(0, 1, 0)
                + b * p.old(0, 0, -1)
                + t * p.new(0, 0, 1))
                / (w + e + s + n + b + t)
                + g.at(0, 0, 0)
        }
    }
}

/// `1/(2h_α)` for the central differences of the wind.
#[derive(Params, Clone, Copy, Debug)]
pub struct Spacing {
    pub inv_2h1: f64,
    pub inv_2h2: f64,
    pub inv_2h3: f64,
}

/// `u = ∂p/∂x` by central differences at interior nodes; 0 elsewhere (unused there).
#[stencil]
pub fn wind_x(p: &Grid<f64>, mask: &Grid<u8>, k: &Spacing) -> f32 {
    match mask.at(0, 0) {
        INTERIOR => ((p.at(1, 0) - p.at(-1, 0)) * k.inv_2h1) as f32,
        _ => 0.0,
    }
}

/// `v = ∂p/∂y`.
#[stencil]
pub fn wind_y(p: &Grid<f64>, mask: &Grid<u8>, k: &Spacing) -> f32 {
    match mask.at(0, 0) {
        INTERIOR => ((p.at(0, 1) - p.at(0, -1)) * k.inv_2h2) as f32,
        _ => 0.0,
    }
}

#[stencil]
pub fn wind3_x(p: &Grid3<f64>, mask: &Grid3<u8>, k: &Spacing) -> f32 {
    match mask.at(0, 0, 0) {
        INTERIOR => ((p.at(1, 0, 0) - p.at(-1, 0, 0)) * k.inv_2h1) as f32,
        _ => 0.0,
    }
}

#[stencil]
pub fn wind3_y(p: &Grid3<f64>, mask: &Grid3<u8>, k: &Spacing) -> f32 {
    match mask.at(0, 0, 0) {
        INTERIOR => ((p.at(0, 1, 0) - p.at(0, -1, 0)) * k.inv_2h2) as f32,
        _ => 0.0,
    }
}

#[stencil]
pub fn wind3_z(p: &Grid3<f64>, mask: &Grid3<u8>, k: &Spacing) -> f32 {
    match mask.at(0, 0, 0) {
        INTERIOR => ((p.at(0, 0, 1) - p.at(0, 0, -1)) * k.inv_2h3) as f32,
        _ => 0.0,
    }
}

/// The transport scheme's constants: `d_α = μ_α/(2h_α²)`, `pe_α = h_α/μ_α` (so `R = |u|·pe`),
/// and `floor`, the lower bound of the factors `(1 − R+)`, `(1 + R−)`: 0 clamps them (upwind
/// where the cell Péclet number exceeds 1), −1e30 follows the seed.
#[derive(Params, Clone, Copy, Debug)]
pub struct Transport {
    pub inv_tau: f32,
    pub half_sigma: f32,
    pub inv_h1: f32,
    pub inv_h2: f32,
    pub inv_h3: f32,
    pub d1: f32,
    pub d2: f32,
    pub d3: f32,
    pub pe1: f32,
    pub pe2: f32,
    pub pe3: f32,
    pub floor: f32,
}

/// How the factor `(1 − R)` is treated where the cell Péclet number R exceeds 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Peclet {
    /// Clamp the factor at 0: plain upwind there, monotone.
    Clamp,
    /// The seed's factor, negative for R > 1 (anti-diffusion).
    Paper,
}

impl Transport {
    /// `mu`, `h` per axis (unused axes ignored), `sigma`, the time step `tau`.
    pub fn new(mu: [f64; 3], h: [f64; 3], rank: usize, sigma: f64, tau: f64, peclet: Peclet) -> Transport {
        let d = |a: usize| {
            if a < rank {
                (mu[a] / (2.0 * h[a] * h[a])) as f32
            } else {
                0.0
            }
        };
        let pe = |a: usize| if a < rank { (h[a] / mu[a]) as f32 } else { 0.0 };
        let inv = |a: usize| if a < rank { (1.0 / h[a]) as f32 } else { 0.0 };
        Transport {
            inv_tau: (1.0 / tau) as f32,
            half_sigma: (0.5 * sigma) as f32,
            inv_h1: inv(0),
            inv_h2: inv(1),
            inv_h3: inv(2),
            d1: d(0),
            d2: d(1),
            d3: d(2),
            pe1: pe(0),
            pe2: pe(1),
            pe3: pe(2),
            floor: match peclet {
                Peclet::Clamp => 0.0,
                Peclet::Paper => -1e30,
            },
        }
    }
}

/// Scheme (13) (notes §2.3, step 1): upwind in `u+, v+`, swept forward in x and y.
#[sweep(order = forward)]
pub fn transport_forward(
    c: &Sweep<f32>,
    u: &Grid<f32>,
    v: &Grid<f32>,
    f: &Grid<f32>,
    mask: &Grid<u8>,
    k: &Transport,
) -> f32 {
    match mask.at(0, 0) {
        INTERIOR => {
            let a = 0.5 * (u.at(0, 0) + u.at(0, 0).abs());
            let b = 0.5 * (v.at(0, 0) + v.at(0, 0).abs());
            let d1 = k.d1 * (1.0 - a * k.pe1).max(k.floor);
            let d2 = k.d2 * (1.0 - b * k.pe2).max(k.floor);
            let ca = a * k.inv_h1 + d1;
            let cb = b * k.inv_h2 + d2;
            let rhs = (k.inv_tau - d1 - d2) * c.old(0, 0)
                + ca * c.new(-1, 0)
                + cb * c.new(0, -1)
                + d1 * c.old(1, 0)
                + d2 * c.old(0, 1)
                + 0.5 * f.at(0, 0);
            rhs / (k.inv_tau + k.half_sigma + ca + cb)
        }
        KEEP => c.old(0, 0),
        _ => {
            let m = mask.at(0, 0) as u32;
            let w = (m & 1) as f32;
            let e = ((m >> 1) & 1) as f32;
            let s = ((m >> 2) & 1) as f32;
            let n = ((m >> 3) & 1) as f32;
            (w * c.new(-1, 0) + e * c.old(1, 0) + s * c.new(0, -1) + n * c.old(0, 1)) / (w + e + s + n)
        }
    }
}

/// Scheme (14) (notes §2.3, step 2): upwind in `u−, v−`, swept backward in x and y.
#[sweep(order = backward)]
pub fn transport_backward(
    c: &Sweep<f32>,
    u: &Grid<f32>,
    v: &Grid<f32>,
    f: &Grid<f32>,
    mask: &Grid<u8>,
    k: &Transport,
) -> f32 {
    match mask.at(0, 0) {
        INTERIOR => {
            let a = 0.5 * (u.at(0, 0) - u.at(0, 0).abs());
            let b = 0.5 * (v.at(0, 0) - v.at(0, 0).abs());
            let g1 = k.d1 * (1.0 + a * k.pe1).max(k.floor);
            let g2 = k.d2 * (1.0 + b * k.pe2).max(k.floor);
            let ca = g1 - a * k.inv_h1;
            let cb = g2 - b * k.inv_h2;
            let rhs = (k.inv_tau - g1 - g2) * c.old(0, 0)
                + ca * c.new(1, 0)
                + cb * c.new(0, 1)
                + g1 * c.old(-1, 0)
                + g2 * c.old(0, -1)
                + 0.5 * f.at(0, 0);
            rhs / (k.inv_tau + k.half_sigma + ca + cb)
        }
        KEEP => c.old(0, 0),
        _ => {
            let m = mask.at(0, 0) as u32;
            let w = (m & 1) as f32;
            let e = ((m >> 1) & 1) as f32;
            let s = ((m >> 2) & 1) as f32;
            let n = ((m >> 3) & 1) as f32;
            (w * c.old(-1, 0) + e * c.new(1, 0) + s * c.old(0, -1) + n * c.new(0, 1)) / (w + e + s + n)
        }
    }
}

/// Scheme (13) in 3-D (the seed does not write it out; by analogy, `w+ φ_zbar` with R3).
#[sweep(order = forward)]
pub fn transport3_forward(
    c: &Sweep3<f32>,
    u: &Grid3<f32>,
    v: &Grid3<f32>,
    w: &Grid3<f32>,
    f: &Grid3<f32>,
    mask: &Grid3<u8>,
    k: &Transport,
) -> f32 {
    match mask.at(0, 0, 0) {
        INTERIOR => {
            let a = 0.5 * (u.at(0, 0, 0) + u.at(0, 0, 0).abs());
            let b = 0.5 * (v.at(0, 0, 0) + v.at(0, 0, 0).abs());
            let q = 0.5 * (w.at(0, 0, 0) + w.at(0, 0, 0).abs());
            let d1 = k.d1 * (1.0 - a * k.pe1).max(k.floor);
            let d2 = k.d2 * (1.0 - b * k.pe2).max(k.floor);
            let d3 = k.d3 * (1.0 - q * k.pe3).max(k.floor);
            let ca = a * k.inv_h1 + d1;
            let cb = b * k.inv_h2 + d2;
            let cq = q * k.inv_h3 + d3;
            let rhs = (k.inv_tau - d1 - d2 - d3) * c.old(0, 0, 0)
                + ca * c.new(-1, 0, 0)
                + cb * c.new(0, -1, 0)
                + cq * c.new(0, 0, -1)
                + d1 * c.old(1, 0, 0)
                + d2 * c.old(0, 1, 0)
                + d3 * c.old(0, 0, 1)
                + 0.5 * f.at(0, 0, 0);
            rhs / (k.inv_tau + k.half_sigma + ca + cb + cq)
        }
        KEEP => c.old(0, 0, 0),
        _ => {
            let m = mask.at(0, 0, 0) as u32;
            let bw = (m & 1) as f32;
            let be = ((m >> 1) & 1) as f32;
            let bs = ((m >> 2) & 1) as f32;
            let bn = ((m >> 3) & 1) as f32;
            let bb = ((m >> 4) & 1) as f32;
            let bt = ((m >> 5) & 1) as f32;
            (bw * c.new(-1, 0, 0)
                + be * c.old(1, 0, 0)
                + bs * c.new(0, -1, 0)
                + bn * c.old(0, 1, 0)
                + bb * c.new(0, 0, -1)
                + bt * c.old(0, 0, 1))
                / (bw + be + bs + bn + bb + bt)
        }
    }
}

/// Scheme (14) in 3-D.
#[sweep(order = backward)]
pub fn transport3_backward(
    c: &Sweep3<f32>,
    u: &Grid3<f32>,
    v: &Grid3<f32>,
    w: &Grid3<f32>,
    f: &Grid3<f32>,
    mask: &Grid3<u8>,
    k: &Transport,
) -> f32 {
    match mask.at(0, 0, 0) {
        INTERIOR => {
            let a = 0.5 * (u.at(0, 0, 0) - u.at(0, 0, 0).abs());
            let b = 0.5 * (v.at(0, 0, 0) - v.at(0, 0, 0).abs());
            let q = 0.5 * (w.at(0, 0, 0) - w.at(0, 0, 0).abs());
            let g1 = k.d1 * (1.0 + a * k.pe1).max(k.floor);
            let g2 = k.d2 * (1.0 + b * k.pe2).max(k.floor);
            let g3 = k.d3 * (1.0 + q * k.pe3).max(k.floor);
            let ca = g1 - a * k.inv_h1;
            let cb = g2 - b * k.inv_h2;
            let cq = g3 - q * k.inv_h3;
            let rhs = (k.inv_tau - g1 - g2 - g3) * c.old(0, 0, 0)
                + ca * c.new(1, 0, 0)
                + cb * c.new(0, 1, 0)
                + cq * c.new(0, 0, 1)
                + g1 * c.old(-1, 0, 0)
                + g2 * c.old(0, -1, 0)
                + g3 * c.old(0, 0, -1)
                + 0.5 * f.at(0, 0, 0);
            rhs / (k.inv_tau + k.half_sigma + ca + cb + cq)
        }
        KEEP => c.old(0, 0, 0),
        _ => {
            let m = mask.at(0, 0, 0) as u32;
            let bw = (m & 1) as f32;
            let be = ((m >> 1) & 1) as f32;
            let bs = ((m >> 2) & 1) as f32;
            let bn = ((m >> 3) & 1) as f32;
            let bb = ((m >> 4) & 1) as f32;
            let bt = ((m >> 5) & 1) as f32;
            (bw * c.old(-1, 0, 0)
                + be * c.new(1, 0, 0)
                + bs * c.old(0, -1, 0)
                + bn * c.new(0, 1, 0)
                + bb * c.old(0, 0, -1)
                + bt * c.new(0, 0, 1))
                / (bw + be + bs + bn + bb + bt)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The scene: region, openings, obstacles, and the masks built from them.

/// A side of the box.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Face {
    West,
    East,
    South,
    North,
    Bottom,
    Top,
}

impl Face {
    fn axis(self) -> usize {
        match self {
            Face::West | Face::East => 0,
            Face::South | Face::North => 1,
            Face::Bottom | Face::Top => 2,
        }
    }
    fn high(self) -> bool {
        matches!(self, Face::East | Face::North | Face::Top)
    }
}

/// The nodes of `face` whose coordinate along axis `along` lies in `[from, to]` (m).
#[derive(Clone, Copy, Debug)]
pub struct Opening {
    pub face: Face,
    pub along: usize,
    pub from: f64,
    pub to: f64,
    /// Inflow: the speed into the domain, m/s (`dp/dn = V_n = −speed`); unused for outflow.
    pub speed: f64,
}

impl Opening {
    /// The whole face.
    pub fn face(face: Face, speed: f64) -> Opening {
        Opening {
            face,
            along: 0,
            from: f64::NEG_INFINITY,
            to: f64::INFINITY,
            speed,
        }
    }
}

/// A stack: a constant point source.
#[derive(Clone, Copy, Debug)]
pub struct Stack {
    pub at: [f64; 3],
    /// g/s.
    pub rate: f64,
}

/// A salvo: an instantaneous release.
#[derive(Clone, Copy, Debug)]
pub struct Salvo {
    pub at: [f64; 3],
    /// kg.
    pub mass: f64,
    /// s.
    pub time: f64,
}

/// The problem as the seed states it: the box, where the air enters and leaves, obstacles
/// (walls inside), and the sources.
#[derive(Clone, Debug)]
pub struct Layout {
    pub rank: usize,
    /// Intervals per axis (`n[2] = 0` in 2-D).
    pub n: [usize; 3],
    /// Region, m.
    pub len: [f64; 3],
    pub inflow: Vec<Opening>,
    pub outflow: Vec<Opening>,
    /// Boxes `[[x0, x1], [y0, y1], [z0, z1]]`, m (z ignored in 2-D).
    pub obstacles: Vec<[[f64; 2]; 3]>,
    pub stacks: Vec<Stack>,
    pub salvos: Vec<Salvo>,
}

impl Layout {
    /// 36 km × 18 km: wind from the west and, over the western third, from the south; out
    /// through the east side; a 3 km × 6 km ridge.
    pub fn valley(n1: usize, n2: usize) -> Layout {
        Layout {
            rank: 2,
            n: [n1, n2, 0],
            len: [36_000.0, 18_000.0, 0.0],
            inflow: vec![
                Opening::face(Face::West, U0),
                Opening {
                    face: Face::South,
                    along: 0,
                    from: 0.0,
                    to: 12_000.0,
                    speed: V_SOUTH,
                },
            ],
            outflow: vec![Opening::face(Face::East, 0.0)],
            obstacles: vec![[[14_000.0, 17_000.0], [5_000.0, 11_000.0], [0.0, 0.0]]],
            stacks: vec![
                Stack {
                    at: [4_000.0, 7_000.0, 0.0],
                    rate: 20.0,
                },
                Stack {
                    at: [6_000.0, 13_000.0, 0.0],
                    rate: 10.0,
                },
                Stack {
                    at: [9_000.0, 3_000.0, 0.0],
                    rate: 15.0,
                },
            ],
            salvos: vec![
                Salvo {
                    at: [20_000.0, 13_000.0, 0.0],
                    mass: 50.0,
                    time: 600.0,
                },
                Salvo {
                    at: [24_000.0, 5_000.0, 0.0],
                    mass: 20.0,
                    time: 3_000.0,
                },
            ],
        }
    }

    /// 3.2 × 3.2 × 2.4 km: wind from the west, out through the east, ground, lid and sides
    /// walls; a 400 m × 800 m block 300 m tall on the ground.
    pub fn block(n: [usize; 3]) -> Layout {
        Layout {
            rank: 3,
            n,
            len: [3_200.0, 3_200.0, 2_400.0],
            inflow: vec![Opening::face(Face::West, U0)],
            outflow: vec![Opening::face(Face::East, 0.0)],
            obstacles: vec![[[1_200.0, 1_600.0], [1_200.0, 2_000.0], [0.0, 300.0]]],
            stacks: vec![
                Stack {
                    at: [600.0, 1_600.0, 150.0],
                    rate: 10.0,
                },
                Stack {
                    at: [400.0, 800.0, 60.0],
                    rate: 5.0,
                },
            ],
            salvos: vec![Salvo {
                at: [900.0, 2_400.0, 20.0],
                mass: 2.0,
                time: 60.0,
            }],
        }
    }

    /// A rectangle with uniform inflow `speed` on the west, outflow on the east, walls north
    /// and south, no obstacle: the potential is linear in x.
    pub fn channel(n1: usize, n2: usize, len: [f64; 2], speed: f64) -> Layout {
        Layout {
            rank: 2,
            n: [n1, n2, 0],
            len: [len[0], len[1], 0.0],
            inflow: vec![Opening::face(Face::West, speed)],
            outflow: vec![Opening::face(Face::East, 0.0)],
            obstacles: vec![],
            stacks: vec![],
            salvos: vec![],
        }
    }
}

/// The grids of a layout: node `i` of axis `a` (x = i·h) is array index `i + 1` (a ghost ring
/// that no sweep updates, so that the physical boundary is updated from the mask).
pub struct Scene {
    pub layout: Layout,
    pub rank: usize,
    pub h: [f64; 3],
    pub shape: Shape,
    pub mask_p: HostGrid<u8>,
    pub mask_c: HostGrid<u8>,
    /// `h·V_n` at inflow nodes, m²/s.
    pub g: HostGrid<f64>,
    /// Initial potential: uniform flow `p_s + U0 (x − l1)`, `p_s` on the outflow.
    pub p0: HostGrid<f64>,
    /// Obstacle nodes (for the pictures).
    pub solid: Vec<bool>,
}

impl Scene {
    pub fn new(layout: Layout) -> Result<Scene> {
        let rank = layout.rank;
        let n = layout.n;
        if !(2..=3).contains(&rank) || (0..rank).any(|a| n[a] < 4) {
            bail!("each axis needs at least 4 intervals, got {:?}", &n[..rank]);
        }
        let h: [f64; 3] = std::array::from_fn(|a| if a < rank { layout.len[a] / n[a] as f64 } else { 1.0 });
        let dims: [usize; 3] = std::array::from_fn(|a| if a < rank { n[a] + 3 } else { 1 });
        let shape = if rank == 2 {
            Shape::d2(dims[0], dims[1])
        } else {
            Shape::d3(dims[0], dims[1], dims[2])
        };
        let eps = 1e-9 * h[0].min(h[1]);
        let coord = |q: [usize; 3], a: usize| q[a] as f64 * h[a];
        let boundary = |q: [usize; 3]| (0..rank).any(|a| q[a] == 0 || q[a] == n[a]);
        let on = |o: &Opening, q: [usize; 3]| {
            let a = o.face.axis();
            a < rank
                && q[a] == if o.face.high() { n[a] } else { 0 }
                && (o.from - eps..=o.to + eps).contains(&coord(q, o.along))
        };
        let obstacle = |q: [usize; 3]| {
            layout
                .obstacles
                .iter()
                .any(|b| (0..rank).all(|a| (b[a][0] - eps..=b[a][1] + eps).contains(&coord(q, a))))
        };
        let fluid = |q: [usize; 3]| !boundary(q) && !obstacle(q);
        // Bits of the face neighbours that are fluid.
        let bits = |q: [usize; 3]| {
            let mut m = 0u8;
            for a in 0..rank {
                if q[a] > 0 {
                    let mut r = q;
                    r[a] -= 1;
                    if fluid(r) {
                        m |= 1 << (2 * a);
                    }
                }
                if q[a] < n[a] {
                    let mut r = q;
                    r[a] += 1;
                    if fluid(r) {
                        m |= 1 << (2 * a + 1);
                    }
                }
            }
            m
        };
        let mut mask_p = HostGrid::new(shape)?;
        let mut mask_c = HostGrid::new(shape)?;
        let mut g = HostGrid::new(shape)?;
        let mut p0 = HostGrid::from_fn(shape, |[x, _, _]| P_S + U0 * ((x as f64 - 1.0) * h[0] - layout.len[0]))?;
        let mut solid = vec![false; shape.len()];
        let nz = if rank == 3 { n[2] } else { 0 };
        for k in 0..=nz {
            for j in 0..=n[1] {
                for i in 0..=n[0] {
                    let q = [i, j, k];
                    let at = [i + 1, j + 1, if rank == 3 { k + 1 } else { 0 }];
                    let idx = shape.index(at);
                    solid[idx] = obstacle(q);
                    let (mp, mc) = if layout.outflow.iter().any(|o| on(o, q)) {
                        p0.set(at, P_S);
                        (KEEP, KEEP)
                    } else if fluid(q) {
                        (INTERIOR, INTERIOR)
                    } else {
                        if let Some(o) = layout.inflow.iter().find(|o| on(o, q)) {
                            g.set(at, -h[o.face.axis()] * o.speed);
                        }
                        let b = bits(q);
                        let mp = if b == 0 { KEEP } else { b };
                        // C = 0 on the sides; the ground and the lid (3-D) let nothing through.
                        let lateral = (0..rank.min(2)).any(|a| q[a] == 0 || q[a] == n[a]);
                        (mp, if lateral { KEEP } else { mp })
                    };
                    mask_p.set(at, mp);
                    mask_c.set(at, mc);
                }
            }
        }
        Ok(Scene {
            layout,
            rank,
            h,
            shape,
            mask_p,
            mask_c,
            g,
            p0,
            solid,
        })
    }

    /// Array index of the interior node nearest to the point `at` (m) (a point on or next to
    /// the boundary moves one node in), if it is a fluid node.
    pub fn node(&self, at: [f64; 3]) -> Option<[usize; 3]> {
        let mut p = [0usize; 3];
        for (a, p) in p.iter_mut().enumerate().take(self.rank) {
            let i = (at[a] / self.h[a]).round();
            if !(i >= 0.0 && i <= self.layout.n[a] as f64) {
                return None;
            }
            *p = (i as usize).clamp(1, self.layout.n[a] - 1) + 1;
        }
        (self.mask_c.get(p) == Some(INTERIOR)).then_some(p)
    }

    fn h_min(&self) -> f64 {
        self.h[..self.rank].iter().copied().fold(f64::INFINITY, f64::min)
    }

    fn l_max(&self) -> f64 {
        self.layout.len[..self.rank].iter().copied().fold(0.0, f64::max)
    }

    /// Volume one node stands for, m³ (2-D: times the mixing-layer height).
    fn node_volume(&self) -> f64 {
        if self.rank == 2 {
            self.h[0] * self.h[1] * MIXING_HEIGHT
        } else {
            self.h[0] * self.h[1] * self.h[2]
        }
    }

    /// The default pseudo-time step of the potential flow, m².
    pub fn tau_p(&self) -> f64 {
        TAU_P * self.h_min() * self.l_max()
    }
}

// ---------------------------------------------------------------------------------------------
// Drivers.

// Every driver takes a target `D`: one device, several (`--devices N`, the grids split along
// the last axis) or this MPI rank's part (`--ranks` under `mpirun`); the code is the same.

type Err = clforge::runtime::Error;
type PotentialSweep<D> = fn(
    &<D as SweepTarget>::SweepPlan,
    &mut GridOn<D, f64>,
    &GridOn<D, u8>,
    &GridOn<D, f64>,
    &Potential,
) -> Result<SweepEvents, Err>;

/// The two sweeps of one pseudo-time step, sized for a scene.
pub struct PotentialStepper<D: Target> {
    plans: [D::SweepPlan; 2],
    sweeps: [PotentialSweep<D>; 2],
}

impl<D: Target> PotentialStepper<D> {
    pub fn new(device: &D, rank: usize, config: &SweepConfig, shape: Shape) -> Result<PotentialStepper<D>> {
        Ok(if rank == 2 {
            PotentialStepper {
                plans: [
                    PotentialForward::plan(device, config, shape)?,
                    PotentialBackward::plan(device, config, shape)?,
                ],
                sweeps: [PotentialForward::sweep_plan, PotentialBackward::sweep_plan],
            }
        } else {
            PotentialStepper {
                plans: [
                    Potential3Forward::plan(device, config, shape)?,
                    Potential3Backward::plan(device, config, shape)?,
                ],
                sweeps: [Potential3Forward::sweep_plan, Potential3Backward::sweep_plan],
            }
        })
    }

    /// One pseudo-time step (forward then backward sweep); device nanoseconds.
    pub fn step(&self, p: &mut GridOn<D, f64>, mask: &GridOn<D, u8>, g: &GridOn<D, f64>, k: &Potential) -> Result<u64> {
        let mut ns = 0;
        for (plan, sweep) in self.plans.iter().zip(self.sweeps) {
            let ev = sweep(plan, p, mask, g, k)?;
            ev.wait()?;
            ns += ev.elapsed_ns()?;
        }
        Ok(ns)
    }

    /// The persistent schedule's stall check (nothing for the others).
    pub fn check(&self) -> Result<()> {
        for plan in &self.plans {
            plan.check()?;
        }
        Ok(())
    }
}

/// How to iterate the potential flow.
#[derive(Clone, Copy, Debug)]
pub struct PotentialOptions {
    /// Pseudo-time step τ_p, m².
    pub tau: f64,
    /// Stop when one step changes p by at most this much anywhere, m²/s.
    pub tol: f64,
    pub max_steps: usize,
    pub check_every: usize,
    pub progress: bool,
}

pub struct PotentialSolution<D: Target> {
    pub p: GridOn<D, f64>,
    pub host: HostGrid<f64>,
    pub steps: usize,
    /// max |Δp| of the last checked step, m²/s.
    pub change: f64,
    /// Contraction per step, from the last two checks.
    pub rho: Option<f64>,
    pub converged: bool,
    pub wall_s: f64,
    pub device_s: f64,
}

impl<D: Target> PotentialSolution<D> {
    /// `change · ρ/(1−ρ)`: the distance to the converged p if the error shrinks geometrically.
    pub fn error_estimate(&self) -> Option<f64> {
        self.rho.filter(|&r| r < 1.0).map(|r| self.change * r / (1.0 - r))
    }
}

fn max_diff(a: &HostGrid<f64>, b: &HostGrid<f64>) -> f64 {
    a.data().iter().zip(b.data()).fold(0.0, |m: f64, (x, y)| {
        let d = (x - y).abs();
        if d > m || d.is_nan() {
            d
        } else {
            m
        }
    })
}

/// Iterates the two-step scheme (10)–(11) from the scene's initial potential until the change
/// per step is below `o.tol` (checked every `o.check_every` steps) or `o.max_steps`.
pub fn solve_potential<D: Target>(
    device: &D,
    scene: &Scene,
    config: &SweepConfig,
    o: &PotentialOptions,
    start: Option<&HostGrid<f64>>,
) -> Result<PotentialSolution<D>> {
    if o.check_every == 0 || o.tau.is_nan() || o.tau <= 0.0 {
        bail!("the potential iteration needs check_every ≥ 1 and τ_p > 0");
    }
    let stepper = PotentialStepper::new(device, scene.rank, config, scene.shape)?;
    let k = Potential::new(scene.h, scene.rank, o.tau);
    let mask = device.upload(&scene.mask_p)?;
    let g = device.upload(&scene.g)?;
    let p0 = start.unwrap_or(&scene.p0);
    let mut p = device.upload(p0)?;
    let mut before = p0.clone();
    let mut after = p0.clone();
    // Progress as the decades of max |Δp| gained towards the tolerance.
    let mut progress = Progress::new("potential", 1000, o.progress);
    let mut first: Option<f64> = None;
    let start = Instant::now();
    let (mut steps, mut ns) = (0usize, 0u64);
    let mut change = f64::INFINITY;
    let mut last: Option<(usize, f64)> = None;
    let mut rho = None;
    while steps < o.max_steps {
        // Run up to the next check, then one more step measured between two downloads.
        let block = o.check_every.min(o.max_steps - steps);
        for _ in 1..block {
            ns += stepper.step(&mut p, &mask, &g, &k)?;
        }
        p.download(&mut before)?;
        ns += stepper.step(&mut p, &mask, &g, &k)?;
        p.download(&mut after)?;
        stepper.check()?;
        steps += block;
        change = max_diff(&after, &before);
        if !change.is_finite() {
            bail!("the potential iteration diverged after {steps} steps");
        }
        // Only from changes well above f64 rounding of p, which blurs the ratio.
        let rounding = 1e3 * f64::EPSILON * U0 * scene.l_max();
        if let Some((s0, c0)) = last {
            if change > rounding && change < c0 {
                rho = Some((change / c0).powf(1.0 / (steps - s0) as f64));
            }
        }
        last = Some((steps, change));
        let c0 = *first.get_or_insert(change);
        let frac = if c0 > o.tol && change < c0 {
            (c0 / change).ln() / (c0 / o.tol).ln()
        } else {
            0.0
        };
        progress.set((1000.0 * frac.clamp(0.0, 1.0)) as usize, || {
            format!("{steps} steps, max |Δp| {change:.2e} m²/s")
        });
        if change <= o.tol {
            break;
        }
    }
    progress.finish();
    Ok(PotentialSolution {
        p,
        host: after,
        steps,
        change,
        rho,
        converged: change <= o.tol,
        wall_s: start.elapsed().as_secs_f64(),
        device_s: ns as f64 * 1e-9,
    })
}

/// The layout at `n/2^k` intervals, coarsest first, ending with `layout` itself: halving while
/// every axis stays even and at least `min` intervals long.
pub fn levels(layout: &Layout, min: usize) -> Vec<Layout> {
    let mut out = vec![layout.clone()];
    loop {
        let l = &out[0];
        let r = l.rank;
        if (0..r).any(|a| l.n[a] % 2 != 0 || l.n[a] / 2 < min) {
            break;
        }
        let mut c = l.clone();
        for a in 0..r {
            c.n[a] /= 2;
        }
        out.insert(0, c);
    }
    out
}

/// Multilinear interpolation of a coarse potential (half the intervals) onto `fine`: the start
/// of the nested iteration. Dirichlet (KEEP) nodes take the fine scene's own values.
pub fn prolong(coarse: &Scene, pc: &HostGrid<f64>, fine: &Scene) -> Result<HostGrid<f64>> {
    let rank = fine.rank;
    let n = fine.layout.n;
    if (0..rank).any(|a| coarse.layout.n[a] * 2 != n[a]) {
        bail!("prolong needs a coarse grid of exactly half the intervals");
    }
    let mut out = HostGrid::from_fn(fine.shape, |q| {
        // Physical fine node, the ghost ring clamped onto the boundary.
        let i: [usize; 3] = std::array::from_fn(|a| if a < rank { q[a].clamp(1, n[a] + 1) - 1 } else { 0 });
        let mut sum = 0.0;
        let mut count = 0.0;
        for corner in 0..(1usize << rank) {
            let c: [usize; 3] = std::array::from_fn(|a| {
                if a >= rank {
                    0
                } else if i[a].is_multiple_of(2) || corner & (1 << a) == 0 {
                    i[a] / 2 + 1
                } else {
                    i[a] / 2 + 2
                }
            });
            sum += pc.get(c).unwrap_or(0.0);
            count += 1.0;
        }
        sum / count
    })?;
    for (k, v) in out.data_mut().iter_mut().enumerate() {
        if fine.mask_p.data()[k] == KEEP {
            *v = fine.p0.data()[k];
        }
    }
    Ok(out)
}

/// One level of the nested iteration.
pub struct Level<D: Target> {
    pub n: [usize; 3],
    pub solution: PotentialSolution<D>,
}

/// Nested iteration: the potential of each coarser level (halving down to `min` intervals),
/// converged to `tol · U0 · h` of its own h, starts the next; returns every level, finest last.
pub fn solve_potential_nested<D: Target>(
    device: &D,
    layout: &Layout,
    config: &SweepConfig,
    tol: f64,
    tau_p: f64,
    min: usize,
    o: &PotentialOptions,
) -> Result<(Scene, Vec<Level<D>>)> {
    let mut out: Vec<Level<D>> = Vec::new();
    let mut prev: Option<Scene> = None;
    for l in levels(layout, min) {
        let scene = Scene::new(l)?;
        let start = match (&prev, out.last()) {
            (Some(c), Some(level)) => Some(prolong(c, &level.solution.host, &scene)?),
            _ => None,
        };
        let lo = PotentialOptions {
            tau: tau_p * scene.h_min() * scene.l_max(),
            tol: tol * U0 * scene.h_min(),
            ..*o
        };
        let solution = solve_potential(device, &scene, config, &lo, start.as_ref())?;
        out.push(Level {
            n: scene.layout.n,
            solution,
        });
        prev = Some(scene);
    }
    let scene = prev.context("no level")?;
    Ok((scene, out))
}

/// `V = ∇p` (central differences) at interior nodes, one f32 grid per axis.
pub fn wind<D: Target>(device: &D, scene: &Scene, p: &GridOn<D, f64>) -> Result<Vec<GridOn<D, f32>>> {
    let k = Spacing {
        inv_2h1: 0.5 / scene.h[0],
        inv_2h2: 0.5 / scene.h[1],
        inv_2h3: 0.5 / scene.h[2],
    };
    let mask = device.upload(&scene.mask_p)?;
    let (config, shape) = (LaunchConfig::default(), scene.shape);
    let mut out = Vec::new();
    for a in 0..scene.rank {
        let mut v = device.zeros(shape)?;
        let ev = match (scene.rank, a) {
            (2, 0) => WindX::launch_plan(&WindX::plan(device, &config, shape)?, &mut v, p, &mask, &k)?,
            (2, _) => WindY::launch_plan(&WindY::plan(device, &config, shape)?, &mut v, p, &mask, &k)?,
            (_, 0) => Wind3X::launch_plan(&Wind3X::plan(device, &config, shape)?, &mut v, p, &mask, &k)?,
            (_, 1) => Wind3Y::launch_plan(&Wind3Y::plan(device, &config, shape)?, &mut v, p, &mask, &k)?,
            _ => Wind3Z::launch_plan(&Wind3Z::plan(device, &config, shape)?, &mut v, p, &mask, &k)?,
        };
        ev.wait()?;
        out.push(v);
    }
    Ok(out)
}

/// The two transport sweeps of one time step, sized for a shape.
pub struct TransportStepper<D: Target> {
    rank: usize,
    plans: [D::SweepPlan; 2],
}

impl<D: Target> TransportStepper<D> {
    pub fn new(device: &D, rank: usize, config: &SweepConfig, shape: Shape) -> Result<TransportStepper<D>> {
        let plans = if rank == 2 {
            [
                TransportForward::plan(device, config, shape)?,
                TransportBackward::plan(device, config, shape)?,
            ]
        } else {
            [
                Transport3Forward::plan(device, config, shape)?,
                Transport3Backward::plan(device, config, shape)?,
            ]
        };
        Ok(TransportStepper { rank, plans })
    }

    /// One time step: scheme (15) then (16); device nanoseconds.
    pub fn step(
        &self,
        c: &mut GridOn<D, f32>,
        wind: &[GridOn<D, f32>],
        f: &GridOn<D, f32>,
        mask: &GridOn<D, u8>,
        k: &Transport,
    ) -> Result<u64> {
        let [fw, bw] = &self.plans;
        let (a, b) = if self.rank == 2 {
            (
                TransportForward::sweep_plan(fw, c, &wind[0], &wind[1], f, mask, k)?,
                TransportBackward::sweep_plan(bw, c, &wind[0], &wind[1], f, mask, k)?,
            )
        } else {
            (
                Transport3Forward::sweep_plan(fw, c, &wind[0], &wind[1], &wind[2], f, mask, k)?,
                Transport3Backward::sweep_plan(bw, c, &wind[0], &wind[1], &wind[2], f, mask, k)?,
            )
        };
        b.wait()?;
        Ok(a.elapsed_ns()? + b.elapsed_ns()?)
    }

    pub fn check(&self) -> Result<()> {
        for plan in &self.plans {
            plan.check()?;
        }
        Ok(())
    }
}

/// One salvo on the grid: during the step that contains `time`, `add` is added to f at `index`.
#[derive(Clone, Copy, Debug)]
pub struct SalvoAt {
    pub time: f64,
    pub index: usize,
    pub add: f32,
}

pub struct TransportRun {
    pub c: HostGrid<f32>,
    pub wall_s: f64,
    pub device_s: f64,
}

/// `steps` steps of τ from `c0` with the source `f` and the salvos; C stays on the device.
#[allow(clippy::too_many_arguments)]
pub fn run_transport<D: Target>(
    device: &D,
    stepper: &TransportStepper<D>,
    wind: &[GridOn<D, f32>],
    mask: &HostGrid<u8>,
    c0: &HostGrid<f32>,
    f: &HostGrid<f32>,
    salvos: &[SalvoAt],
    k: &Transport,
    tau: f64,
    steps: usize,
    progress: bool,
) -> Result<TransportRun> {
    let mask = device.upload(mask)?;
    let df = device.upload(f)?;
    let mut df_salvo = device.zeros(f.shape())?;
    let mut c = device.upload(c0)?;
    let mut bar = Progress::new("transport", steps, progress);
    let start = Instant::now();
    let mut ns = 0;
    for n in 0..steps {
        let (t0, t1) = (n as f64 * tau, (n + 1) as f64 * tau);
        let now: Vec<&SalvoAt> = salvos.iter().filter(|s| s.time >= t0 && s.time < t1).collect();
        let source = if now.is_empty() {
            &df
        } else {
            let mut fs = f.clone();
            for s in now {
                fs.data_mut()[s.index] += s.add;
            }
            df_salvo.upload(&fs)?;
            &df_salvo
        };
        ns += stepper.step(&mut c, wind, source, &mask, k)?;
        if (n + 1) % 64 == 0 || n + 1 == steps {
            stepper.check()?;
            bar.set(n + 1, || format!("t = {:.0} s", t1));
        }
    }
    bar.finish();
    Ok(TransportRun {
        c: c.to_host()?,
        wall_s: start.elapsed().as_secs_f64(),
        device_s: ns as f64 * 1e-9,
    })
}

// ---------------------------------------------------------------------------------------------
// Progress: a bar on a terminal, a line every 10 % otherwise.

struct Progress {
    label: &'static str,
    total: usize,
    start: Instant,
    on: bool,
    tty: bool,
    last: Option<Instant>,
    next_line: usize,
}

impl Progress {
    fn new(label: &'static str, total: usize, on: bool) -> Progress {
        Progress {
            label,
            total: total.max(1),
            start: Instant::now(),
            on,
            tty: std::io::stderr().is_terminal(),
            last: None,
            next_line: 1,
        }
    }

    fn set(&mut self, done: usize, note: impl FnOnce() -> String) {
        if !self.on {
            return;
        }
        let frac = done as f64 / self.total as f64;
        let elapsed = self.start.elapsed().as_secs_f64();
        let eta = if frac > 0.0 { elapsed * (1.0 - frac) / frac } else { 0.0 };
        if self.tty {
            if self.last.is_some_and(|t| t.elapsed().as_millis() < 200) && done < self.total {
                return;
            }
            self.last = Some(Instant::now());
            let filled = (frac * 30.0).round() as usize;
            eprint!(
                "\r{:>9} [{}{}] {done}/{} {:.0} s, eta {:.0} s, {}   ",
                self.label,
                "#".repeat(filled.min(30)),
                "-".repeat(30 - filled.min(30)),
                self.total,
                elapsed,
                eta,
                note()
            );
            let _ = std::io::stderr().flush();
        } else if frac * 10.0 >= self.next_line as f64 {
            self.next_line = (frac * 10.0).floor() as usize + 1;
            eprintln!(
                "{}: {done}/{} ({:.0} %) {:.0} s, eta {:.0} s, {}",
                self.label,
                self.total,
                frac * 100.0,
                elapsed,
                eta,
                note()
            );
        }
    }

    fn finish(&self) {
        if self.on && self.tty && self.last.is_some() {
            eprintln!();
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The program.

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ScheduleArg {
    Serial,
    Wave,
    WaveLocal,
    Blocks,
    BlocksLocal,
    Persistent,
    PersistentLocal,
    PersistentBlocks,
    Strip,
}

impl From<ScheduleArg> for Schedule {
    fn from(s: ScheduleArg) -> Schedule {
        match s {
            ScheduleArg::Serial => Schedule::Serial,
            ScheduleArg::Wave => Schedule::Wave,
            ScheduleArg::WaveLocal => Schedule::WaveLocal,
            ScheduleArg::Blocks => Schedule::Blocks,
            ScheduleArg::BlocksLocal => Schedule::BlocksLocal,
            ScheduleArg::Persistent => Schedule::Persistent,
            ScheduleArg::PersistentLocal => Schedule::PersistentLocal,
            ScheduleArg::PersistentBlocks => Schedule::PersistentBlocks,
            ScheduleArg::Strip => Schedule::Strip,
        }
    }
}

/// Pollution transport by running-count splitting schemes (seed 001): potential-flow wind,
/// then convection–diffusion from stacks and salvos, on the default OpenCL device.
#[derive(Parser, Debug)]
#[command(version)]
struct Args {
    /// Intervals per axis, `N1xN2` (2-D, default 3600x1800: h = 10 m) or `N1xN2xN3` (3-D,
    /// default 320x320x240: h = 10 m).
    #[arg(long)]
    size: Option<String>,
    /// 2 or 3.
    #[arg(long, default_value_t = 2)]
    dim: usize,
    /// Transport time steps (default: the simulated time, 2 h in 2-D, 10 min in 3-D, over τ).
    #[arg(long)]
    steps: Option<usize>,
    /// Transport time step τ in s (default: min(0.5 h/U0, 1/Σ μ/(2h²))).
    #[arg(long)]
    tau: Option<f64>,
    /// How the sweeps' points are ordered on the device (docs/SWEEPS.md; `*-local` and
    /// `blocks*` exist only in 2-D or only in 3-D, the run says which).
    #[arg(long, value_enum, default_value_t = ScheduleArg::Wave)]
    schedule: ScheduleArg,
    /// Block edge L (default 16 in 2-D, 8 in 3-D).
    #[arg(long)]
    block: Option<usize>,
    /// Where the cell Péclet number exceeds 1: clamp (1 − R) at 0, or follow the seed.
    #[arg(long, value_enum, default_value_t = Peclet::Clamp)]
    peclet: Peclet,
    /// Potential flow: stop when one pseudo-step changes p by at most tol·U0·h_min anywhere
    /// (the wind is then within ~7·tol·U0 of the converged one, measured at 360x180).
    #[arg(long, default_value_t = 1e-4)]
    tol: f64,
    /// Potential flow: coarsest level of the nested iteration, in intervals on the shortest axis.
    #[arg(long, default_value_t = 32)]
    coarsest: usize,
    /// Potential flow: iterate on the given grid only, from uniform flow (no nested iteration).
    #[arg(long)]
    single_level: bool,
    /// Potential flow: give up after this many pseudo-steps per level.
    #[arg(long, default_value_t = 50_000)]
    max_iter: usize,
    /// Potential flow: pseudo-steps between convergence checks.
    #[arg(long, default_value_t = 50)]
    check_every: usize,
    /// Potential flow: τ_p as a multiple of h_min·l_max (default TAU_P).
    #[arg(long)]
    tau_p: Option<f64>,
    /// Output directory.
    #[arg(long, default_value = "out/pollution_transport")]
    out: PathBuf,
    /// No progress bars.
    #[arg(long)]
    quiet: bool,
    /// Split the grids along the last axis over this many devices (every GPU in turn, else
    /// the default device several times); the sweeps run slab after slab, bitwise equal to one
    /// device (docs/SWEEPS.md "Several devices").
    #[arg(long, default_value_t = 1)]
    devices: usize,
    /// One rank per device under `mpirun -np N`, the grids split along the last axis across
    /// the ranks; rank 0 prints and draws.
    #[cfg(feature = "mpi")]
    #[arg(long)]
    ranks: bool,
}

fn parse_size(s: &str) -> Result<Vec<usize>> {
    s.split(['x', 'X', '×'])
        .map(|p| {
            p.trim()
                .parse::<usize>()
                .with_context(|| format!("`{p}` in --size {s}"))
        })
        .collect()
}

fn main() -> Result<()> {
    let args = Args::parse();
    let layout = match (args.dim, args.size.as_deref().map(parse_size).transpose()?) {
        (2, None) => Layout::valley(3600, 1800),
        (2, Some(s)) if s.len() == 2 => Layout::valley(s[0], s[1]),
        (3, None) => Layout::block([320, 320, 240]),
        (3, Some(s)) if s.len() == 3 => Layout::block([s[0], s[1], s[2]]),
        (d @ (2 | 3), Some(s)) => bail!("--dim {d} needs --size with {d} numbers, got {}", s.len()),
        (d, _) => bail!("--dim must be 2 or 3, got {d}"),
    };
    let scene = Scene::new(layout)?;
    let device = Device::default().context("no OpenCL device (set CLFORGE_DEVICE to choose one)")?;
    #[cfg(feature = "mpi")]
    if args.ranks {
        let ranks = clforge::runtime::Ranks::init(device.clone())?;
        let leader = ranks.rank() == 0;
        if leader {
            println!("{} ranks, the grids split along the last axis", ranks.size());
        }
        return run(&ranks, &device, &args, &scene, leader);
    }
    if args.devices > 1 {
        let devices = Devices::spread(&device, args.devices)?;
        println!("split along the last axis over {} devices", args.devices);
        return run(&devices, &device, &args, &scene, true);
    }
    if args.devices == 0 {
        bail!("--devices must be at least 1");
    }
    run(&device, &device, &args, &scene, true)
}

/// The whole run on `target`; `device` names the machine, and only the `leader` prints and
/// draws (every rank computes the same host-side figures from the gathered grids).
fn run<D: Target>(target: &D, device: &Device, args: &Args, scene: &Scene, leader: bool) -> Result<()> {
    let rank = scene.rank;
    let info = device.info();
    macro_rules! say {
        ($($t:tt)*) => { if leader { println!($($t)*); } };
    }
    say!(
        "device: {} ({}, {:?}, {} compute units)",
        info.name,
        info.platform,
        info.kind,
        info.compute_units
    );
    let n = scene.layout.n;
    let nodes: usize = (0..rank).map(|a| n[a] + 1).product();
    say!(
        "{}-D, {} intervals = {} nodes ({} with the ghost ring), h = {} m, region {} km",
        rank,
        n[..rank].iter().map(|v| v.to_string()).collect::<Vec<_>>().join("×"),
        nodes,
        scene.shape,
        scene.h[..rank]
            .iter()
            .map(|v| format!("{v:.3}"))
            .collect::<Vec<_>>()
            .join(" × "),
        scene.layout.len[..rank]
            .iter()
            .map(|v| format!("{}", v / 1e3))
            .collect::<Vec<_>>()
            .join(" × ")
    );
    let config = match args.block {
        Some(b) => SweepConfig::with_block(args.schedule.into(), b),
        None => SweepConfig::new(args.schedule.into()),
    };
    let progress = !args.quiet && leader;

    // 1. Potential flow.
    let tau_p = args.tau_p.unwrap_or(TAU_P);
    self_check_potential(target, scene, &config, tau_p * scene.h_min() * scene.l_max(), leader)?;
    let o = PotentialOptions {
        tau: 0.0,
        tol: 0.0,
        max_steps: args.max_iter,
        check_every: args.check_every,
        progress,
    };
    let min = if args.single_level { usize::MAX } else { args.coarsest };
    say!(
        "potential flow: τ_p = {tau_p} h_min l_max, stop at max |Δp| ≤ {:e} U0 h, schedule {} (block {}), nested over {} level(s)",
        args.tol,
        config.schedule,
        config.block.map_or("default".into(), |b| b.to_string()),
        levels(&scene.layout, min).len()
    );
    let (_, solved) = solve_potential_nested(target, &scene.layout, &config, args.tol, tau_p, min, &o)?;
    for level in &solved {
        let sol = &level.solution;
        let uh = U0 * scene.layout.len[0] / level.n[0] as f64;
        say!(
            "  {:>11}: {} after {} pseudo-steps: max |Δp| = {:.3e} m²/s ({:.2e} U0 h){}; {:.1} s wall, {:.1} s device",
            level.n[..rank]
                .iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join("x"),
            if sol.converged { "converged" } else { "NOT converged" },
            sol.steps,
            sol.change,
            sol.change / uh,
            match (sol.rho, sol.error_estimate()) {
                (Some(r), Some(e)) => format!(
                    ", contraction {r:.6}/step, est. |p − p*| ≤ {e:.2e} ({:.1e} U0 h)",
                    e / uh
                ),
                _ => String::new(),
            },
            sol.wall_s,
            sol.device_s
        );
    }
    let sol = &solved.last().context("no level")?.solution;
    if !sol.converged {
        say!("  warning: the potential did not reach the tolerance; the wind is used as it is");
    }
    let wind_d = wind(target, scene, &sol.p)?;
    let wind_h: Vec<HostGrid<f32>> = wind_d.iter().map(|w| w.to_host()).collect::<Result<_, _>>()?;
    let speed = |i: usize| {
        wind_h
            .iter()
            .map(|w| f64::from(w.data()[i]).powi(2))
            .sum::<f64>()
            .sqrt()
    };
    let interior: Vec<usize> = (0..scene.shape.len())
        .filter(|&i| scene.mask_c.data()[i] == INTERIOR)
        .collect();
    let smax = interior.iter().map(|&i| speed(i)).fold(0.0, f64::max);
    let mean = interior.iter().map(|&i| speed(i)).sum::<f64>() / interior.len().max(1) as f64;
    let mu = [MU, MU, if rank == 3 { MU_VERTICAL } else { MU }];
    let above = interior
        .iter()
        .filter(|&&i| (0..rank).any(|a| f64::from(wind_h[a].data()[i]).abs() * scene.h[a] / mu[a] > 1.0))
        .count();
    say!(
        "  wind: mean {mean:.2} m/s, max {smax:.2} m/s; cell Péclet > 1 at {:.1} % of the interior ({})",
        100.0 * above as f64 / interior.len().max(1) as f64,
        match args.peclet {
            Peclet::Clamp => "(1 − R) clamped at 0 there: upwind",
            Peclet::Paper => "the seed's negative factor kept",
        }
    );

    // 2. Transport.
    let h_min = scene.h_min();
    let diffusion: f64 = (0..rank).map(|a| mu[a] / (2.0 * scene.h[a] * scene.h[a])).sum();
    let tau = args.tau.unwrap_or((COURANT * h_min / U0).min(1.0 / diffusion));
    let t_end = if rank == 2 { T_END_2D } else { T_END_3D };
    let steps = args.steps.unwrap_or((t_end / tau).round() as usize);
    let k = Transport::new(mu, scene.h, rank, SIGMA, tau, args.peclet);
    let volume = scene.node_volume();
    let mut f = HostGrid::<f32>::new(scene.shape)?;
    for s in &scene.layout.stacks {
        let p = scene
            .node(s.at)
            .with_context(|| format!("stack at {:?} m is not at an interior fluid node", s.at))?;
        let i = scene.shape.index(p);
        f.data_mut()[i] += (s.rate * 1e6 / volume) as f32;
    }
    let mut salvos = Vec::new();
    for s in &scene.layout.salvos {
        let p = scene
            .node(s.at)
            .with_context(|| format!("salvo at {:?} m is not at an interior fluid node", s.at))?;
        salvos.push(SalvoAt {
            time: s.time,
            index: scene.shape.index(p),
            add: (s.mass * 1e9 / (volume * tau)) as f32,
        });
    }
    say!(
        "transport: τ = {tau:.3} s ({steps} steps, {:.0} s), Courant U0τ/h = {:.2}, μτ/h² = {:.2}, μ = {:?} m²/s, σ = {SIGMA:e} 1/s, schedule {}",
        steps as f64 * tau,
        U0 * tau / h_min,
        MU * tau / (h_min * h_min),
        &mu[..rank],
        config.schedule
    );
    let stepper = TransportStepper::new(target, rank, &config, scene.shape)?;
    self_check_transport(target, scene, &stepper, &wind_d, &wind_h, &f, &k, leader)?;
    let c0 = HostGrid::new(scene.shape)?;
    let run = run_transport(
        target,
        &stepper,
        &wind_d,
        &scene.mask_c,
        &c0,
        &f,
        &salvos,
        &k,
        tau,
        steps,
        progress,
    )?;
    let c = &run.c;
    let cmax = c.data().iter().copied().fold(0.0f32, f32::max);
    let cmin = c.data().iter().copied().fold(0.0f32, f32::min);
    let t = steps as f64 * tau;
    let emitted: f64 = scene.layout.stacks.iter().map(|s| s.rate * 1e-3 * t).sum::<f64>()
        + scene
            .layout
            .salvos
            .iter()
            .filter(|s| s.time < t)
            .map(|s| s.mass)
            .sum::<f64>();
    let mass: f64 = c.data().iter().map(|&v| f64::from(v)).sum::<f64>() * volume * 1e-9;
    say!(
        "  {steps} steps in {:.1} s wall ({:.1} ms/step), {:.1} s device; max C = {cmax:.4e} µg/m³, min C = {cmin:.3e}; \
         mass in the air {mass:.1} kg of {emitted:.1} kg emitted (the rest decayed or left)",
        run.wall_s,
        run.wall_s * 1e3 / steps.max(1) as f64,
        run.device_s
    );
    if !cmax.is_finite() {
        bail!("the transport diverged (max C = {cmax})");
    }

    if !leader {
        return Ok(());
    }
    std::fs::create_dir_all(&args.out).with_context(|| format!("creating {}", args.out.display()))?;
    for (name, slice) in slices(scene, c, &wind_h)? {
        let path = args.out.join(name);
        plot(&path, &slice)?;
        say!("wrote {}", path.display());
    }
    Ok(())
}

/// One device step of each potential sweep against `apply_host`, bit for bit.
fn self_check_potential<D: Target>(
    device: &D,
    scene: &Scene,
    config: &SweepConfig,
    tau: f64,
    leader: bool,
) -> Result<()> {
    let k = Potential::new(scene.h, scene.rank, tau);
    // A perturbed start so that every branch computes something.
    let p = HostGrid::from_fn(scene.shape, |[x, y, z]| {
        scene.p0.get([x, y, z]).unwrap_or(0.0) + ((x * 7 + y * 13 + z * 5) % 17) as f64
    })?;
    let mut want = p.clone();
    if scene.rank == 2 {
        PotentialForward::apply_host(&mut want, &scene.mask_p, &scene.g, &k)?;
        PotentialBackward::apply_host(&mut want, &scene.mask_p, &scene.g, &k)?;
    } else {
        Potential3Forward::apply_host(&mut want, &scene.mask_p, &scene.g, &k)?;
        Potential3Backward::apply_host(&mut want, &scene.mask_p, &scene.g, &k)?;
    }
    let stepper = PotentialStepper::new(device, scene.rank, config, scene.shape)?;
    let mut dp = device.upload(&p)?;
    stepper.step(&mut dp, &device.upload(&scene.mask_p)?, &device.upload(&scene.g)?, &k)?;
    stepper.check()?;
    let got = dp.to_host()?;
    let differ = got
        .data()
        .iter()
        .zip(want.data())
        .filter(|(a, b)| a.to_bits() != b.to_bits())
        .count();
    if leader {
        println!(
            "self-check: one potential step on the device {} apply_host",
            if differ == 0 {
                "is bitwise equal to"
            } else {
                "DIFFERS from"
            }
        );
    }
    if differ > 0 {
        bail!("{differ} points of the device's potential step differ from the sequential sweep");
    }
    Ok(())
}

/// One device transport step against `apply_host`, bit for bit, on a bump at the first stack.
#[allow(clippy::too_many_arguments)]
fn self_check_transport<D: Target>(
    device: &D,
    scene: &Scene,
    stepper: &TransportStepper<D>,
    wind_d: &[GridOn<D, f32>],
    wind_h: &[HostGrid<f32>],
    f: &HostGrid<f32>,
    k: &Transport,
    leader: bool,
) -> Result<()> {
    let centre = scene.layout.stacks.first().map_or([0.0; 3], |s| s.at);
    let r = 0.05 * scene.l_max();
    let c = HostGrid::from_fn(scene.shape, |q| {
        let d2: f64 = (0..scene.rank)
            .map(|a| ((q[a] as f64 - 1.0) * scene.h[a] - centre[a]).powi(2))
            .sum();
        if scene.mask_c.get(q) == Some(KEEP) {
            0.0
        } else {
            (100.0 * (-d2 / (r * r)).exp()) as f32
        }
    })?;
    let mut want = c.clone();
    if scene.rank == 2 {
        TransportForward::apply_host(&mut want, &wind_h[0], &wind_h[1], f, &scene.mask_c, k)?;
        TransportBackward::apply_host(&mut want, &wind_h[0], &wind_h[1], f, &scene.mask_c, k)?;
    } else {
        Transport3Forward::apply_host(&mut want, &wind_h[0], &wind_h[1], &wind_h[2], f, &scene.mask_c, k)?;
        Transport3Backward::apply_host(&mut want, &wind_h[0], &wind_h[1], &wind_h[2], f, &scene.mask_c, k)?;
    }
    let mut dc = device.upload(&c)?;
    stepper.step(&mut dc, wind_d, &device.upload(f)?, &device.upload(&scene.mask_c)?, k)?;
    stepper.check()?;
    let got = dc.to_host()?;
    let differ = got
        .data()
        .iter()
        .zip(want.data())
        .filter(|(a, b)| a.to_bits() != b.to_bits())
        .count();
    if leader {
        println!(
            "self-check: one transport step on the device {} apply_host",
            if differ == 0 {
                "is bitwise equal to"
            } else {
                "DIFFERS from"
            }
        );
    }
    if differ > 0 {
        bail!("{differ} points of the device's transport step differ from the sequential sweep");
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Pictures.

/// A plane of nodes to draw: concentration, the two in-plane wind components, obstacles and
/// marks, with its physical size.
struct Slice {
    w: usize,
    h: usize,
    /// Physical size, m.
    size: [f64; 2],
    c: Vec<f32>,
    a: Vec<f32>,
    b: Vec<f32>,
    solid: Vec<bool>,
    /// (node x, node y, is a stack).
    marks: Vec<(usize, usize, bool)>,
}

/// The planes to draw: the whole 2-D field, or in 3-D the horizontal plane through the first
/// stack and the vertical x–z plane through it.
fn slices(scene: &Scene, c: &HostGrid<f32>, wind: &[HostGrid<f32>]) -> Result<Vec<(&'static str, Slice)>> {
    let n = scene.layout.n;
    let len = scene.layout.len;
    let marks_of = |axes: [usize; 2], fixed: Option<(usize, usize)>| {
        let mut m = Vec::new();
        let mut add = |at: [f64; 3], stack: bool| {
            if let Some(p) = scene.node(at) {
                if fixed.is_none_or(|(a, i)| p[a] == i) {
                    m.push((p[axes[0]] - 1, p[axes[1]] - 1, stack));
                }
            }
        };
        scene.layout.stacks.iter().for_each(|s| add(s.at, true));
        scene.layout.salvos.iter().for_each(|s| add(s.at, false));
        m
    };
    // Physical node (i, j) of the plane spanned by `axes` at array index `fixed` on the third.
    let plane = |axes: [usize; 2], fixed: Option<(usize, usize)>| {
        let (w, h) = (n[axes[0]] + 1, n[axes[1]] + 1);
        let index = |i: usize, j: usize| {
            let mut q = [0usize; 3];
            q[axes[0]] = i + 1;
            q[axes[1]] = j + 1;
            if let Some((a, v)) = fixed {
                q[a] = v;
            }
            scene.shape.index(q)
        };
        let pick = |g: &dyn Fn(usize) -> f32| {
            let mut out = Vec::with_capacity(w * h);
            for j in 0..h {
                for i in 0..w {
                    out.push(g(index(i, j)));
                }
            }
            out
        };
        Slice {
            w,
            h,
            size: [len[axes[0]], len[axes[1]]],
            c: pick(&|i| c.data()[i]),
            a: pick(&|i| wind[axes[0]].data()[i]),
            b: pick(&|i| wind[axes[1]].data()[i]),
            solid: pick(&|i| if scene.solid[i] { 1.0 } else { 0.0 })
                .iter()
                .map(|&v| v > 0.5)
                .collect(),
            marks: marks_of(axes, fixed),
        }
    };
    if scene.rank == 2 {
        return Ok(vec![("concentration.png", plane([0, 1], None))]);
    }
    let stack = scene.layout.stacks.first().context("the 3-D layout has no stack")?;
    let p = scene
        .node(stack.at)
        .context("the first stack is not at an interior node")?;
    Ok(vec![
        ("concentration_xy.png", plane([0, 1], Some((2, p[2])))),
        ("concentration_xz.png", plane([0, 2], Some((1, p[1])))),
    ])
}

/// log10 C over 6 decades on Viridis, wind speed in grey below, arrows, obstacles, marks.
fn plot(path: &Path, s: &Slice) -> Result<()> {
    // Drawn into a temporary file renamed over `path` once complete: a previous picture
    // survives any failure, and no partial picture is left.
    let mut drawn = None;
    clforge::runtime::files::replace_file_at(path, |tmp| {
        drawn = Some(plot_at(tmp, s).map_err(std::io::Error::other)?);
        Ok(())
    })
    .with_context(|| format!("writing {}", path.display()))?;
    drawn.ok_or_else(|| anyhow::anyhow!("{} was not drawn", path.display()))
}

fn plot_at(path: &Path, s: &Slice) -> Result<()> {
    use plotters::prelude::*;

    let width = 1600.0f64.min(4.0 * s.w as f64).max(400.0);
    let px_per_m = width / s.size[0];
    let (wpx, hpx) = (width.round() as u32, (s.size[1] * px_per_m).round().max(1.0) as u32);
    let root = BitMapBackend::new(path, (wpx, hpx)).into_drawing_area();
    let cmax = s.c.iter().copied().fold(0.0f32, f32::max).max(f32::MIN_POSITIVE);
    let decades = 6.0f32;
    let speed: Vec<f32> = s.a.iter().zip(&s.b).map(|(a, b)| a.hypot(*b)).collect();
    // Scale by the 99th percentile: the corners of obstacles and the ends of openings are
    // singular in potential flow, a few nodes there would shrink every arrow.
    let mut sorted: Vec<f32> = speed.iter().copied().filter(|v| v.is_finite() && *v > 0.0).collect();
    sorted.sort_by(f32::total_cmp);
    let smax = sorted.get(sorted.len() * 99 / 100).copied().unwrap_or(1.0).max(1e-6);
    // Node of a pixel (image row 0 is the top).
    let node = |px: u32, py: u32| {
        let i = ((px as f64 + 0.5) / wpx as f64 * (s.w - 1) as f64).round() as usize;
        let j = ((1.0 - (py as f64 + 0.5) / hpx as f64) * (s.h - 1) as f64).round() as usize;
        (i.min(s.w - 1), j.min(s.h - 1))
    };
    for py in 0..hpx {
        for px in 0..wpx {
            let (i, j) = node(px, py);
            let k = j * s.w + i;
            let colour = if s.solid[k] {
                RGBColor(70, 70, 70)
            } else {
                let t = ((s.c[k] / cmax).log10() + decades) / decades;
                if t > 0.0 {
                    ViridisRGB::get_color(t.min(1.0))
                } else {
                    let g = (250.0 - 70.0 * (speed[k] / smax).min(1.0)) as u8;
                    RGBColor(g, g, g)
                }
            };
            root.draw_pixel((px as i32, py as i32), &colour)?;
        }
    }
    // Arrows every ~40 px, length by speed.
    let spacing = 40.0;
    let to_px = |i: f64, j: f64| {
        (
            (i / (s.w - 1) as f64 * wpx as f64) as i32,
            ((1.0 - j / (s.h - 1) as f64) * hpx as f64) as i32,
        )
    };
    let style = ShapeStyle::from(&RGBColor(20, 20, 20)).stroke_width(1);
    let (cols, rows) = ((wpx as f64 / spacing) as usize, (hpx as f64 / spacing) as usize);
    for r in 0..rows {
        for q in 0..cols {
            let (x, y) = ((q as f64 + 0.5) * spacing, (r as f64 + 0.5) * spacing);
            let (i, j) = node(x as u32, y as u32);
            let k = j * s.w + i;
            if s.solid[k] || speed[k] <= 0.0 {
                continue;
            }
            let l = 0.9 * spacing * f64::from((speed[k] / smax).min(1.2));
            let (dx, dy) = (f64::from(s.a[k] / speed[k]) * l, -f64::from(s.b[k] / speed[k]) * l);
            let (x0, y0) = (x - dx / 2.0, y - dy / 2.0);
            let (x1, y1) = (x + dx / 2.0, y + dy / 2.0);
            let head = |angle: f64| {
                let (ux, uy) = (-dx / l, -dy / l);
                let (c, sn) = (angle.cos(), angle.sin());
                let hl = 0.3 * l.clamp(4.0, 12.0);
                (
                    (x1 + hl * (ux * c - uy * sn)) as i32,
                    (y1 + hl * (ux * sn + uy * c)) as i32,
                )
            };
            let tip = (x1 as i32, y1 as i32);
            root.draw(&PathElement::new(vec![(x0 as i32, y0 as i32), tip], style))?;
            root.draw(&PathElement::new(vec![head(0.45), tip, head(-0.45)], style))?;
        }
    }
    for &(i, j, stack) in &s.marks {
        let (x, y) = to_px(i as f64, j as f64);
        if stack {
            root.draw(&Circle::new((x, y), 5, ShapeStyle::from(&RED).filled()))?;
            root.draw(&Circle::new((x, y), 5, ShapeStyle::from(&WHITE).stroke_width(1)))?;
        } else {
            let st = ShapeStyle::from(&MAGENTA).stroke_width(3);
            root.draw(&PathElement::new(vec![(x - 6, y - 6), (x + 6, y + 6)], st))?;
            root.draw(&PathElement::new(vec![(x - 6, y + 6), (x + 6, y - 6)], st))?;
        }
    }
    root.present()?;
    Ok(())
}
