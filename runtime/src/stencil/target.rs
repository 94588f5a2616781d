//! Where a stencil runs: one [`Device`] or several ([`Devices`]), behind the same generated
//! calls. `Jacobi::plan(&target, &config, shape)` takes either; `Jacobi::launch_plan(&plan,
//! next, current, ..)` takes the grids of the plan's target ([`DeviceGrid`] or [`SplitGrid`]);
//! [`PingPong::from_host`](super::PingPong::from_host) and [`Target::upload`] make them. A
//! program written against these traits runs unchanged on one device or on several.

use crate::buffer::Scalar;
use crate::device::Device;
use crate::error::Result;
use crate::host::{HostGrid, Params, Shape};
use crate::program::Event;
use crate::reduce::{Reduce, Reduction};
use crate::split::{Devices, SplitArg, SplitGrid, SplitPlan};

use super::{DeviceGrid, KernelScalar, LaunchConfig, Packable, PackedGrid, StencilArg, StencilPlan, StencilSpec};

/// A grid on target `D`: [`DeviceGrid`] on a [`Device`], [`SplitGrid`] on [`Devices`].
pub type GridOn<D, T> = <<D as Target>::Plan as Launch>::Grid<T>;

/// One device or several: what a stencil plan is built for and grids are uploaded to. Its
/// grids are its plans' ([`GridOn`]), so code generic over a target launches its own grids.
pub trait Target {
    /// A sized, built launch on this target.
    type Plan: Launch;
    /// Builds and sizes a launch of `spec` for grids of `shape` (the generated `plan`).
    fn stencil_plan(&self, spec: StencilSpec, config: &LaunchConfig, shape: Shape) -> Result<Self::Plan>;
    /// A copy of `host` on this target.
    fn upload<T: Scalar>(&self, host: &HostGrid<T>) -> Result<GridOn<Self, T>>;
    /// A zero-filled grid of `shape` on this target.
    fn zeros<T: Scalar>(&self, shape: Shape) -> Result<GridOn<Self, T>>;
}

/// What every target's grid can do.
pub trait TargetGrid<T: Scalar>: Sized {
    /// The shape of the whole grid.
    fn shape(&self) -> Shape;
    /// Reads the whole grid back (waits for the launches that write it).
    fn to_host(&self) -> Result<HostGrid<T>>;
    /// Overwrites the grid with a host grid of its shape.
    fn upload(&mut self, host: &HostGrid<T>) -> Result<()>;
    /// Reads the grid into a host grid of its shape.
    fn download(&self, host: &mut HostGrid<T>) -> Result<()>;
}

/// A built launch: the generated `launch_plan`/`enqueue_plan` call these with the arguments
/// in the stencil function's order.
pub trait Launch {
    /// The grids this launch reads and writes.
    type Grid<T: Scalar>: TargetGrid<T>;
    /// One argument of the launch.
    type Arg<'a>;
    /// A grid argument named as in the stencil function.
    fn grid_arg<'a, T: Scalar>(name: &'a str, grid: &'a Self::Grid<T>) -> Self::Arg<'a>;
    /// A grid the stencil reads packed (`packed(name = BITS)`): one device's [`PackedGrid`]
    /// on every target. Split targets refuse stencils with packed grids when planning
    /// ([`Error::PackedSplit`](crate::Error::PackedSplit)), so only a [`StencilPlan`] launches
    /// one.
    fn packed_arg<'a, T: Packable, const BITS: u32>(name: &'a str, grid: &'a PackedGrid<T, BITS>) -> Self::Arg<'a>;
    /// A params-struct argument.
    fn params_arg<'a, P: Params>(p: &P) -> Self::Arg<'a>;
    /// A scalar passed by value.
    fn scalar_arg<'a, S: KernelScalar>(v: S) -> Self::Arg<'a>;
    /// A reduction output.
    fn reduction_arg<'a, R: Reduce>(name: &'a str, r: &'a Reduction<R>) -> Self::Arg<'a>;
    /// Launches, returning a profiling event.
    fn launch_args<T: Scalar>(&self, out: &mut Self::Grid<T>, args: &[Self::Arg<'_>]) -> Result<Event>;
    /// Launches without an event.
    fn enqueue_args<T: Scalar>(&self, out: &mut Self::Grid<T>, args: &[Self::Arg<'_>]) -> Result<()>;
    /// Launches a stencil with several outputs (`outs`, made by [`Launch::grid_arg`] from
    /// the output grids, which the generated code borrows mutably), returning an event.
    fn launch_outputs(&self, outs: &[Self::Arg<'_>], args: &[Self::Arg<'_>]) -> Result<Event>;
    /// [`Launch::launch_outputs`] without an event.
    fn enqueue_outputs(&self, outs: &[Self::Arg<'_>], args: &[Self::Arg<'_>]) -> Result<()>;
}

impl Target for Device {
    type Plan = StencilPlan;
    fn stencil_plan(&self, spec: StencilSpec, config: &LaunchConfig, shape: Shape) -> Result<StencilPlan> {
        StencilPlan::new(self, spec, config, shape)
    }
    fn upload<T: Scalar>(&self, host: &HostGrid<T>) -> Result<DeviceGrid<T>> {
        DeviceGrid::from_host(self, host)
    }
    fn zeros<T: Scalar>(&self, shape: Shape) -> Result<DeviceGrid<T>> {
        DeviceGrid::new(self, shape)
    }
}

impl<T: Scalar> TargetGrid<T> for DeviceGrid<T> {
    fn shape(&self) -> Shape {
        DeviceGrid::shape(self)
    }
    fn to_host(&self) -> Result<HostGrid<T>> {
        DeviceGrid::to_host(self)
    }
    fn upload(&mut self, host: &HostGrid<T>) -> Result<()> {
        DeviceGrid::upload(self, host)
    }
    fn download(&self, host: &mut HostGrid<T>) -> Result<()> {
        DeviceGrid::download(self, host)
    }
}

impl Launch for StencilPlan {
    type Grid<T: Scalar> = DeviceGrid<T>;
    type Arg<'a> = StencilArg<'a>;
    fn grid_arg<'a, T: Scalar>(name: &'a str, grid: &'a DeviceGrid<T>) -> StencilArg<'a> {
        StencilArg::grid(name, grid)
    }
    fn packed_arg<'a, T: Packable, const BITS: u32>(name: &'a str, grid: &'a PackedGrid<T, BITS>) -> StencilArg<'a> {
        StencilArg::packed(name, grid)
    }
    fn params_arg<'a, P: Params>(p: &P) -> StencilArg<'a> {
        StencilArg::params(p)
    }
    fn scalar_arg<'a, S: KernelScalar>(v: S) -> StencilArg<'a> {
        StencilArg::scalar(v)
    }
    fn reduction_arg<'a, R: Reduce>(name: &'a str, r: &'a Reduction<R>) -> StencilArg<'a> {
        StencilArg::reduction(name, r)
    }
    fn launch_args<T: Scalar>(&self, out: &mut DeviceGrid<T>, args: &[StencilArg<'_>]) -> Result<Event> {
        self.launch(out, args)
    }
    fn enqueue_args<T: Scalar>(&self, out: &mut DeviceGrid<T>, args: &[StencilArg<'_>]) -> Result<()> {
        self.enqueue(out, args)
    }
    fn launch_outputs(&self, outs: &[StencilArg<'_>], args: &[StencilArg<'_>]) -> Result<Event> {
        StencilPlan::launch_outputs(self, outs, args)
    }
    fn enqueue_outputs(&self, outs: &[StencilArg<'_>], args: &[StencilArg<'_>]) -> Result<()> {
        StencilPlan::enqueue_outputs(self, outs, args)
    }
}

impl Target for Devices {
    type Plan = SplitPlan;
    fn stencil_plan(&self, spec: StencilSpec, config: &LaunchConfig, shape: Shape) -> Result<SplitPlan> {
        SplitPlan::new(self, spec, config, shape)
    }
    fn upload<T: Scalar>(&self, host: &HostGrid<T>) -> Result<SplitGrid<T>> {
        SplitGrid::from_host(self, host)
    }
    fn zeros<T: Scalar>(&self, shape: Shape) -> Result<SplitGrid<T>> {
        SplitGrid::new(self, shape)
    }
}

impl<T: Scalar> TargetGrid<T> for SplitGrid<T> {
    fn shape(&self) -> Shape {
        SplitGrid::shape(self)
    }
    fn to_host(&self) -> Result<HostGrid<T>> {
        SplitGrid::to_host(self)
    }
    fn upload(&mut self, host: &HostGrid<T>) -> Result<()> {
        SplitGrid::upload(self, host)
    }
    fn download(&self, host: &mut HostGrid<T>) -> Result<()> {
        SplitGrid::download(self, host)
    }
}

impl Launch for SplitPlan {
    type Grid<T: Scalar> = SplitGrid<T>;
    type Arg<'a> = SplitArg<'a>;
    fn grid_arg<'a, T: Scalar>(name: &'a str, grid: &'a SplitGrid<T>) -> SplitArg<'a> {
        SplitArg::grid(name, grid)
    }
    fn packed_arg<'a, T: Packable, const BITS: u32>(name: &'a str, _: &'a PackedGrid<T, BITS>) -> SplitArg<'a> {
        SplitArg::packed(name)
    }
    fn params_arg<'a, P: Params>(p: &P) -> SplitArg<'a> {
        SplitArg::params(p)
    }
    fn scalar_arg<'a, S: KernelScalar>(v: S) -> SplitArg<'a> {
        SplitArg::scalar(v)
    }
    fn reduction_arg<'a, R: Reduce>(name: &'a str, r: &'a Reduction<R>) -> SplitArg<'a> {
        SplitArg::reduction(name, r)
    }
    fn launch_args<T: Scalar>(&self, out: &mut SplitGrid<T>, args: &[SplitArg<'_>]) -> Result<Event> {
        self.launch(out, args)
    }
    fn enqueue_args<T: Scalar>(&self, out: &mut SplitGrid<T>, args: &[SplitArg<'_>]) -> Result<()> {
        self.launch(out, args).map(drop)
    }
    fn launch_outputs(&self, outs: &[SplitArg<'_>], args: &[SplitArg<'_>]) -> Result<Event> {
        SplitPlan::launch_outputs(self, outs, args)
    }
    fn enqueue_outputs(&self, outs: &[SplitArg<'_>], args: &[SplitArg<'_>]) -> Result<()> {
        SplitPlan::launch_outputs(self, outs, args).map(drop)
    }
}
