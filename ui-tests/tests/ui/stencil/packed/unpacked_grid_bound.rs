// The typed launcher takes a `PackedGrid<u8, 2>` for a grid declared `packed(cell = 2)`: an
// unpacked `DeviceGrid<u8>` (or a grid packed in other bits) is a type error at the argument.
use clforge::prelude::*;
use clforge::runtime::PackedGrid;

#[stencil(packed(cell = 2))]
pub fn relax(u: &Grid<f32>, cell: &Grid<u8>) -> f32 {
    if cell.at(0, 0) == 1 { u.at(1, 0) } else { u.at(0, 0) }
}

fn run(device: &Device, u: &DeviceGrid<f32>, cell: &DeviceGrid<u8>, one: &PackedGrid<u8, 1>) -> Result<()> {
    let mut out = DeviceGrid::new(device, u.shape())?;
    Relax::launch(&LaunchConfig::default(), &mut out, u, cell)?;
    Relax::launch(&LaunchConfig::default(), &mut out, u, one)?;
    Ok(())
}

fn main() {}
