//! The element kernels' typed launch functions, as the runtime's schedules call them. The
//! macro implements this trait for every element type from the kernels' IR signatures (one
//! method per kernel, arguments in ABI order), so a changed kernel ABI fails to compile here
//! instead of launching with misplaced arguments. `real` buffers and values are `R`: the kernels
//! are built for `f32` or `f64` ([`Real`]), and the macro implements the trait for both.

use crate::buffer::Buffer;
use crate::element::step::real::Real;
use crate::error::Result;
use crate::program::{Event, Program};

/// Where a launch goes: the built program and the work sizes.
#[derive(Clone, Copy, Debug)]
pub struct At<'a> {
    /// The element's program, built for the schedule's options.
    pub program: &'a Program,
    /// Global work size.
    pub global: &'a [usize],
    /// Work-group size, if the kernel needs one.
    pub local: Option<&'a [usize]>,
}

/// Launch functions of the element family's kernels (`templates/element/`), in precision `R`.
#[allow(clippy::too_many_arguments, missing_docs)]
pub trait ElementKernels<R: Real>: Sync + std::fmt::Debug {
    fn coloured(
        &self,
        at: At<'_>,
        k: &Buffer<R>,
        elem_nodes: &Buffer<i32>,
        u: &Buffer<R>,
        f: &mut Buffer<R>,
        nx: i32,
        ny: i32,
        nz: i32,
        sx: i32,
        sy: i32,
        sz: i32,
    ) -> Result<Event>;
    fn unstructured(
        &self,
        at: At<'_>,
        k: &Buffer<R>,
        elem_nodes: &Buffer<i32>,
        u: &Buffer<R>,
        f: &mut Buffer<R>,
        first: i32,
        count: i32,
    ) -> Result<Event>;
    /// As `unstructured` with `k` holding one `K_e` per element, in colour order.
    fn unstructured_pe(
        &self,
        at: At<'_>,
        k: &Buffer<R>,
        elem_nodes: &Buffer<i32>,
        u: &Buffer<R>,
        f: &mut Buffer<R>,
        first: i32,
        count: i32,
    ) -> Result<Event>;
    fn computed(
        &self,
        at: At<'_>,
        k: &Buffer<R>,
        u: &Buffer<R>,
        f: &mut Buffer<R>,
        nx: i32,
        ny: i32,
        nz: i32,
        sx: i32,
        sy: i32,
        sz: i32,
    ) -> Result<Event>;
    fn blocked(
        &self,
        at: At<'_>,
        k: &Buffer<R>,
        u: &Buffer<R>,
        f: &mut Buffer<R>,
        nx: i32,
        ny: i32,
        nz: i32,
        sx: i32,
        sy: i32,
        sz: i32,
    ) -> Result<Event>;
    fn blocked_mat(
        &self,
        at: At<'_>,
        control: &Buffer<i32>,
        masks: &Buffer<u32>,
        kg: &Buffer<R>,
        u: &Buffer<R>,
        f: &mut Buffer<R>,
        nx: i32,
        ny: i32,
        nz: i32,
        sx: i32,
        sy: i32,
        sz: i32,
    ) -> Result<Event>;
    fn gather(
        &self,
        at: At<'_>,
        k: &Buffer<R>,
        minv: &Buffer<R>,
        damp: &Buffer<R>,
        u_in: &Buffer<R>,
        u_out: &mut Buffer<R>,
        v: &mut Buffer<R>,
        dt: R,
        nx: i32,
        ny: i32,
        nz: i32,
    ) -> Result<Event>;
    /// As `gather` with M⁻¹ and the damping looked up by the node's class: `mass_tab` holds
    /// per class `DOFS` inverse masses then `DOFS` damping factors, `fixed` one bit per DOF.
    fn gather_derived(
        &self,
        at: At<'_>,
        k: &Buffer<R>,
        mass_tab: &Buffer<R>,
        fixed: &Buffer<u32>,
        u_in: &Buffer<R>,
        u_out: &mut Buffer<R>,
        v: &mut Buffer<R>,
        dt: R,
        nx: i32,
        ny: i32,
        nz: i32,
    ) -> Result<Event>;
    /// `GATHER_STEPS` steps of `gather_derived` in one launch (built with `-D GATHER_STEPS=n`):
    /// from `u_in`, `v_in` to `u_out`, `v_out`.
    fn gather_steps(
        &self,
        at: At<'_>,
        k: &Buffer<R>,
        mass_tab: &Buffer<R>,
        fixed: &Buffer<u32>,
        u_in: &Buffer<R>,
        u_out: &mut Buffer<R>,
        v_in: &Buffer<R>,
        v_out: &mut Buffer<R>,
        dt: R,
        nx: i32,
        ny: i32,
        nz: i32,
    ) -> Result<Event>;
    /// As `gather` with `ke` holding one `K_e` per element, in element order.
    fn gather_pe(
        &self,
        at: At<'_>,
        ke: &Buffer<R>,
        minv: &Buffer<R>,
        damp: &Buffer<R>,
        u_in: &Buffer<R>,
        u_out: &mut Buffer<R>,
        v: &mut Buffer<R>,
        dt: R,
        nx: i32,
        ny: i32,
        nz: i32,
    ) -> Result<Event>;
    /// The gather on any mesh: `ke` one `K_e` per element (element order, rows unpadded),
    /// `node_first`/`node_slots` each node's slots `e · NODES + a` of its live elements; DOFs
    /// `first..n` (global size `n − first`).
    fn gather_unstructured(
        &self,
        at: At<'_>,
        ke: &Buffer<R>,
        elem_nodes: &Buffer<i32>,
        node_first: &Buffer<i32>,
        node_slots: &Buffer<i32>,
        minv: &Buffer<R>,
        damp: &Buffer<R>,
        u: &Buffer<R>,
        u_out: &mut Buffer<R>,
        v: &mut Buffer<R>,
        dt: R,
        first: i32,
        n: i32,
    ) -> Result<Event>;
    fn stress(
        &self,
        at: At<'_>,
        g: &Buffer<R>,
        emat: &Buffer<u8>,
        u: &Buffer<R>,
        stress: &mut Buffer<R>,
        nx: i32,
        ny: i32,
        nz: i32,
    ) -> Result<Event>;
    fn stress_unstructured(
        &self,
        at: At<'_>,
        g: &Buffer<R>,
        emat: &Buffer<u8>,
        elem_nodes: &Buffer<i32>,
        u: &Buffer<R>,
        stress: &mut Buffer<R>,
        ne: i32,
    ) -> Result<Event>;
    /// As `stress_unstructured` with `g` holding one `G_e` per element, in element order.
    fn stress_unstructured_pe(
        &self,
        at: At<'_>,
        g: &Buffer<R>,
        emat: &Buffer<u8>,
        elem_nodes: &Buffer<i32>,
        u: &Buffer<R>,
        stress: &mut Buffer<R>,
        ne: i32,
    ) -> Result<Event>;
    fn integrate(
        &self,
        at: At<'_>,
        minv: &Buffer<R>,
        damp: &Buffer<R>,
        u: &mut Buffer<R>,
        v: &mut Buffer<R>,
        f: &mut Buffer<R>,
        dt: R,
        n: i32,
    ) -> Result<Event>;
    fn load(&self, at: At<'_>, idx: &Buffer<i32>, w: &Buffer<R>, s: R, f: &mut Buffer<R>, n: i32) -> Result<Event>;
    fn kick(
        &self,
        at: At<'_>,
        idx: &Buffer<i32>,
        w: &Buffer<R>,
        s: R,
        minv: &Buffer<R>,
        u: &mut Buffer<R>,
        v: &mut Buffer<R>,
        dt: R,
        n: i32,
    ) -> Result<Event>;
}

/// An element's kernels in both precisions: what [`ElementSpec::kernels`](crate::element::ElementSpec)
/// holds. [`Real::kernels`] picks one.
pub trait DeviceKernels: ElementKernels<f32> + ElementKernels<f64> {}

impl<T: ElementKernels<f32> + ElementKernels<f64>> DeviceKernels for T {}
