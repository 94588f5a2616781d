//! Where grids live and kernels run: one [`Device`], several ([`Devices`](crate::Devices)) or
//! MPI ranks (`Ranks`, feature `mpi`). A [`Place`] knows grids and launch arguments only; each
//! kind adds its plans on top (`StencilTarget`, `SweepTarget`, `LatticeTarget`), so a program
//! written against these traits runs unchanged on one device, several or many ranks.

use crate::buffer::Scalar;
use crate::device::Device;
use crate::error::Result;
use crate::grid::{DeviceGrid, HostGrid, Packable, PackedGrid, Shape, TargetGrid};
use crate::launch::{KernelArg, KernelScalar, Reduce, Reduction};
use crate::params::Params;

/// A grid on target `D`: [`DeviceGrid`] on a [`Device`], [`SplitGrid`](crate::SplitGrid) on
/// [`Devices`](crate::Devices), `RankGrid` on `Ranks`.
pub type GridOn<D, T> = <D as Place>::Grid<T>;

/// One launch argument on target `D`.
pub type ArgOn<'a, D> = <D as Place>::Arg<'a>;

/// One device or several: what grids are uploaded to and what every kind's plans are built
/// for. The generated launchers make their arguments through the constructors here, in the
/// kernel's parameter order.
pub trait Place {
    /// The grids of this target.
    type Grid<T: Scalar>: TargetGrid<T>;
    /// One argument of a launch on this target.
    type Arg<'a>;
    /// A copy of `host` on this target.
    fn upload<T: Scalar>(&self, host: &HostGrid<T>) -> Result<Self::Grid<T>>;
    /// A zero-filled grid of `shape` on this target.
    fn zeros<T: Scalar>(&self, shape: Shape) -> Result<Self::Grid<T>>;
    /// A grid argument named as in the user's function.
    fn grid_arg<'a, T: Scalar>(name: &'a str, grid: &'a Self::Grid<T>) -> Self::Arg<'a>;
    /// A grid read packed (`packed(name = BITS)`): one device's [`PackedGrid`] on every
    /// target. Split targets refuse kernels with packed grids when planning
    /// ([`Error::PackedSplit`](crate::Error::PackedSplit)), so only one device launches one.
    fn packed_arg<'a, T: Packable, const BITS: u32>(name: &'a str, grid: &'a PackedGrid<T, BITS>) -> Self::Arg<'a>;
    /// A params-struct argument.
    fn params_arg<'a, P: Params>(p: &P) -> Self::Arg<'a>;
    /// A scalar passed by value.
    fn scalar_arg<'a, S: KernelScalar>(v: S) -> Self::Arg<'a>;
    /// A reduction output.
    fn reduction_arg<'a, R: Reduce>(name: &'a str, r: &'a Reduction<R>) -> Self::Arg<'a>;
}

impl Place for Device {
    type Grid<T: Scalar> = DeviceGrid<T>;
    type Arg<'a> = KernelArg<'a>;
    fn upload<T: Scalar>(&self, host: &HostGrid<T>) -> Result<DeviceGrid<T>> {
        DeviceGrid::from_host(self, host)
    }
    fn zeros<T: Scalar>(&self, shape: Shape) -> Result<DeviceGrid<T>> {
        DeviceGrid::new(self, shape)
    }
    fn grid_arg<'a, T: Scalar>(name: &'a str, grid: &'a DeviceGrid<T>) -> KernelArg<'a> {
        KernelArg::grid(name, grid)
    }
    fn packed_arg<'a, T: Packable, const BITS: u32>(name: &'a str, grid: &'a PackedGrid<T, BITS>) -> KernelArg<'a> {
        KernelArg::packed(name, grid)
    }
    fn params_arg<'a, P: Params>(p: &P) -> KernelArg<'a> {
        KernelArg::params(p)
    }
    fn scalar_arg<'a, S: KernelScalar>(v: S) -> KernelArg<'a> {
        KernelArg::scalar(v)
    }
    fn reduction_arg<'a, R: Reduce>(name: &'a str, r: &'a Reduction<R>) -> KernelArg<'a> {
        KernelArg::reduction(name, r)
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
