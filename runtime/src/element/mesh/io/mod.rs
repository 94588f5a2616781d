//! Mesh and result files: Gmsh meshes in (MSH 4.1, ASCII or binary), VTK unstructured grids
//! and ParaView time series out. docs/MESH-FILES.md.
//!
//! ```no_run
//! # use clforge_runtime::fem::io::{read_msh, CellKind, Field, VtkSeries};
//! # fn main() -> clforge_runtime::Result<()> {
//! let msh = read_msh("examples/meshes/plate.msh")?;
//! let plate = msh.to_mesh(CellKind::Tri3)?;
//! let fixed = plate.map_nodes(&msh.boundary_nodes("left")?);
//! let mut series = VtkSeries::new("out", "plate")?;
//! let u = vec![0.0f32; 2 * plate.mesh.node_count()];
//! series.write(0.0, &plate.mesh, CellKind::Tri3, &[Field::displacement(2, &u)?])?;
//! # let _ = fixed; Ok(()) }
//! ```

mod cell;
mod msh;
mod vtk;

pub use cell::CellKind;
pub use msh::{parse_msh, read_msh, write_msh, Block, ExtractedMesh, MshEntity, MshMesh, PhysicalGroup};
pub use vtk::{write_vtu, Field, Location, Values, VtkSeries};
