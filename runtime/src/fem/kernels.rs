//! The element kernels' typed launch functions, as the runtime's schedules call them. The
//! macro implements this trait for every element type from the kernels' IR signatures (one
//! method per kernel, arguments in ABI order), so a changed kernel ABI fails to compile here
//! instead of launching with misplaced arguments. `real` buffers are `f32`.

use crate::buffer::Buffer;
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

/// Launch functions of the element family's kernels (`templates/element/`).
#[allow(clippy::too_many_arguments, missing_docs)]
pub trait ElementKernels: Sync + std::fmt::Debug {
    fn coloured(
        &self,
        at: At<'_>,
        k: &Buffer<f32>,
        elem_nodes: &Buffer<i32>,
        u: &Buffer<f32>,
        f: &mut Buffer<f32>,
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
        k: &Buffer<f32>,
        elem_nodes: &Buffer<i32>,
        u: &Buffer<f32>,
        f: &mut Buffer<f32>,
        first: i32,
        count: i32,
    ) -> Result<Event>;
    /// As `unstructured` with `k` holding one `K_e` per element, in colour order.
    fn unstructured_pe(
        &self,
        at: At<'_>,
        k: &Buffer<f32>,
        elem_nodes: &Buffer<i32>,
        u: &Buffer<f32>,
        f: &mut Buffer<f32>,
        first: i32,
        count: i32,
    ) -> Result<Event>;
    fn computed(
        &self,
        at: At<'_>,
        k: &Buffer<f32>,
        u: &Buffer<f32>,
        f: &mut Buffer<f32>,
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
        k: &Buffer<f32>,
        u: &Buffer<f32>,
        f: &mut Buffer<f32>,
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
        kg: &Buffer<f32>,
        u: &Buffer<f32>,
        f: &mut Buffer<f32>,
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
        k: &Buffer<f32>,
        minv: &Buffer<f32>,
        damp: &Buffer<f32>,
        u_in: &Buffer<f32>,
        u_out: &mut Buffer<f32>,
        v: &mut Buffer<f32>,
        dt: f32,
        nx: i32,
        ny: i32,
        nz: i32,
    ) -> Result<Event>;
    fn stress(
        &self,
        at: At<'_>,
        g: &Buffer<f32>,
        emat: &Buffer<u8>,
        u: &Buffer<f32>,
        stress: &mut Buffer<f32>,
        nx: i32,
        ny: i32,
        nz: i32,
    ) -> Result<Event>;
    fn stress_unstructured(
        &self,
        at: At<'_>,
        g: &Buffer<f32>,
        emat: &Buffer<u8>,
        elem_nodes: &Buffer<i32>,
        u: &Buffer<f32>,
        stress: &mut Buffer<f32>,
        ne: i32,
    ) -> Result<Event>;
    /// As `stress_unstructured` with `g` holding one `G_e` per element, in element order.
    fn stress_unstructured_pe(
        &self,
        at: At<'_>,
        g: &Buffer<f32>,
        emat: &Buffer<u8>,
        elem_nodes: &Buffer<i32>,
        u: &Buffer<f32>,
        stress: &mut Buffer<f32>,
        ne: i32,
    ) -> Result<Event>;
    fn integrate(
        &self,
        at: At<'_>,
        minv: &Buffer<f32>,
        damp: &Buffer<f32>,
        u: &mut Buffer<f32>,
        v: &mut Buffer<f32>,
        f: &mut Buffer<f32>,
        dt: f32,
        n: i32,
    ) -> Result<Event>;
    fn load(
        &self,
        at: At<'_>,
        idx: &Buffer<i32>,
        w: &Buffer<f32>,
        s: f32,
        f: &mut Buffer<f32>,
        n: i32,
    ) -> Result<Event>;
    fn kick(
        &self,
        at: At<'_>,
        idx: &Buffer<i32>,
        w: &Buffer<f32>,
        s: f32,
        minv: &Buffer<f32>,
        u: &mut Buffer<f32>,
        v: &mut Buffer<f32>,
        dt: f32,
        n: i32,
    ) -> Result<Event>;
}
