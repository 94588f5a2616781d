//! A grid in device memory.

use crate::buffer::{Buffer, Scalar};
use crate::device::Device;
use crate::error::Result;
use crate::grid::{check_shape, HostGrid, Shape};
use crate::program::Event;

/// A grid in device memory.
#[derive(Debug)]
pub struct DeviceGrid<T: Scalar> {
    pub(crate) buffer: Buffer<T>,
    pub(crate) shape: Shape,
}

impl<T: Scalar> DeviceGrid<T> {
    /// A zero-filled grid on `device`.
    pub fn new(device: &Device, shape: Shape) -> Result<Self> {
        let len = shape.checked_len().ok_or_else(|| crate::grid::overflow(shape))?;
        Ok(DeviceGrid {
            buffer: Buffer::new(device, len)?,
            shape,
        })
    }
    /// A copy of a host grid on `device`.
    pub fn from_host(device: &Device, host: &HostGrid<T>) -> Result<Self> {
        Ok(DeviceGrid {
            buffer: Buffer::from_slice(device, host.data())?,
            shape: host.shape(),
        })
    }
    /// Overwrites the grid with a host grid of the same shape.
    pub fn upload(&mut self, host: &HostGrid<T>) -> Result<()> {
        check_shape("upload", self.shape, host.shape())?;
        self.buffer.write(host.data())
    }
    /// Reads the grid back into a new host grid.
    pub fn to_host(&self) -> Result<HostGrid<T>> {
        HostGrid::from_vec(self.shape, self.buffer.to_vec()?)
    }
    /// Reads the grid back into an existing host grid of the same shape.
    pub fn download(&self, host: &mut HostGrid<T>) -> Result<()> {
        check_shape("download", host.shape(), self.shape)?;
        self.buffer.read(host.data_mut())
    }
    /// Device-side copy from a grid of the same shape.
    pub fn copy_from(&mut self, other: &DeviceGrid<T>) -> Result<Event> {
        check_shape("copy source", self.shape, other.shape)?;
        self.buffer.copy_from(&other.buffer)
    }
    /// The shape.
    pub fn shape(&self) -> Shape {
        self.shape
    }
    /// The device the grid lives on.
    pub fn device(&self) -> &Device {
        self.buffer.device()
    }
    /// The underlying buffer, for hand-written kernels.
    pub fn buffer(&self) -> &Buffer<T> {
        &self.buffer
    }
}
