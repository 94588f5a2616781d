//! The element-matrix kernels' typed launch functions. The macro implements this trait for
//! every element type from the kernels' IR signatures (one method per kernel of
//! `templates/element/forming.cl.tera`, arguments in ABI order, f64), so the forming algorithms
//! never write an argument order and a changed kernel ABI fails to compile here.

use crate::buffer::Buffer;
use crate::element::At;
use crate::error::Result;
use crate::program::{Event, Local};

/// Launch functions of an element's forming kernels. `xe`: geometry-node coordinates per
/// element; `de`: material matrices per element; `dref`, `wq`: reference derivatives and
/// weights per quadrature point; `ke`: the packed matrices written; `m`: elements formed (the
/// last plus one, after a pre-pass); `bad`: the first degenerate element's index; `gj`: the
/// geometry pre-pass's `J⁻¹` and `w det J` per point of elements `e0..`.
#[allow(clippy::too_many_arguments, missing_docs)]
pub trait FormingKernels: Sync + std::fmt::Debug {
    /// Algorithm I: one work-item per element.
    fn ke_ai(
        &self,
        at: At<'_>,
        xe: &Buffer<f64>,
        de: &Buffer<f64>,
        dref: &Buffer<f64>,
        wq: &Buffer<f64>,
        ke: &mut Buffer<f64>,
        m: i32,
        bad: &mut Buffer<i32>,
    ) -> Result<Event>;
    /// Algorithm II: one work-item per quadrature point, `red` the group's reduction scratch.
    fn ke_aii(
        &self,
        at: At<'_>,
        xe: &Buffer<f64>,
        de: &Buffer<f64>,
        dref: &Buffer<f64>,
        wq: &Buffer<f64>,
        ke: &mut Buffer<f64>,
        m: i32,
        bad: &mut Buffer<i32>,
        red: Local,
    ) -> Result<Event>;
    /// One work-item per tile of `K_e`, points staged in chunks.
    fn ke_tiled(
        &self,
        at: At<'_>,
        xe: &Buffer<f64>,
        de: &Buffer<f64>,
        dref: &Buffer<f64>,
        wq: &Buffer<f64>,
        ke: &mut Buffer<f64>,
        m: i32,
        bad: &mut Buffer<i32>,
        lg: Local,
        lwd: Local,
        ljinv: Local,
    ) -> Result<Event>;
    /// The geometry pre-pass over elements `e0..e0 + n`.
    fn ke_geometry(
        &self,
        at: At<'_>,
        xe: &Buffer<f64>,
        dref: &Buffer<f64>,
        wq: &Buffer<f64>,
        gj: &mut Buffer<f64>,
        e0: i32,
        n: i32,
        bad: &mut Buffer<i32>,
    ) -> Result<Event>;
    /// Staged tiles; `gj`, `e0` are read only when built with the pre-pass (`SPRE`).
    fn ke_staged(
        &self,
        at: At<'_>,
        xe: &Buffer<f64>,
        de: &Buffer<f64>,
        dref: &Buffer<f64>,
        wq: &Buffer<f64>,
        ke: &mut Buffer<f64>,
        m: i32,
        bad: &mut Buffer<i32>,
        lg: Local,
        lh2: Local,
        lwd: Local,
        ljinv: Local,
        gj: &Buffer<f64>,
        e0: i32,
    ) -> Result<Event>;
    /// The tensor-core moment kernel after the pre-pass.
    fn ke_mma(
        &self,
        at: At<'_>,
        de: &Buffer<f64>,
        dref: &Buffer<f64>,
        ke: &mut Buffer<f64>,
        gj: &Buffer<f64>,
        e0: i32,
        ly: Local,
        lw: Local,
        lc: Local,
        ld: Local,
    ) -> Result<Event>;
}
