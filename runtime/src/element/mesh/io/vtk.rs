//! VTK unstructured grids (XML `.vtu` or legacy binary `.vtk`, through `vtkio`) with point and
//! cell fields, and `.pvd` collections that ParaView opens as one time series.

use crate::element::Real;
use std::path::{Path, PathBuf};

use vtkio::model::{
    Attribute, Attributes, ByteOrder, CellType, Cells, DataArray, DataSet, ElementType, IOBuffer,
    UnstructuredGridPiece, Version, VertexNumbers, Vtk,
};

use super::cell::CellKind;
use crate::element::mesh::UnstructuredMesh;
use crate::error::{Error, Result};

/// Where a field lives: one value per node or one per cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Location {
    /// One value (of `components` numbers) per node: VTK point data.
    Point,
    /// One value per cell: VTK cell data.
    Cell,
}

/// The numbers of a field, in the precision they were given.
#[derive(Clone, Debug, PartialEq)]
pub enum Values {
    /// Single precision.
    F32(Vec<f32>),
    /// Double precision.
    F64(Vec<f64>),
}

impl Values {
    fn len(&self) -> usize {
        match self {
            Values::F32(v) => v.len(),
            Values::F64(v) => v.len(),
        }
    }
}

/// A named point or cell array: `components` numbers per node or cell, interleaved.
///
/// ```
/// # use clforge_runtime::fem::io::{Field, Location};
/// // Two nodes of a 2-D displacement, padded to 3 components for VTK.
/// let u = Field::displacement(2, &[1.0f32, 2.0, 3.0, 4.0]).unwrap();
/// assert_eq!((u.location, u.components), (Location::Point, 3));
/// // 3-D stress in clforge's order (xx, yy, zz, yz, xz, xy) is written in ParaView's
/// // symmetric-tensor order (xx, yy, zz, xy, yz, xz).
/// let s = Field::stress(3, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
/// assert_eq!(s.values, clforge_runtime::fem::io::Values::F64(vec![1.0, 2.0, 3.0, 6.0, 4.0, 5.0]));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    /// The array's name in ParaView.
    pub name: String,
    /// Point or cell data.
    pub location: Location,
    /// Numbers per node or cell.
    pub components: usize,
    /// `components` numbers per node or cell.
    pub values: Values,
}

impl Field {
    /// A point array of `components` numbers per node.
    pub fn point<T: Real>(name: &str, components: usize, values: &[T]) -> Field {
        Self::new(name, Location::Point, components, values.to_vec())
    }

    /// A cell array of `components` numbers per cell.
    pub fn cell<T: Real>(name: &str, components: usize, values: &[T]) -> Field {
        Self::new(name, Location::Cell, components, values.to_vec())
    }

    fn new<T: Real>(name: &str, location: Location, components: usize, values: Vec<T>) -> Field {
        Field {
            name: name.to_string(),
            location,
            components,
            values: T::vtk_values(values),
        }
    }

    /// A point vector field of `dim` (2 or 3) interleaved components per node, written with 3
    /// (2-D vectors get a zero z) so that ParaView can warp and glyph by it.
    pub fn point_vectors<T: Real>(name: &str, dim: usize, values: &[T]) -> Result<Field> {
        check_components(name, dim, values.len())?;
        let mut padded = Vec::with_capacity(values.len() / dim * 3);
        for v in values.chunks_exact(dim) {
            padded.extend_from_slice(v);
            padded.resize(padded.len() + 3 - dim, T::default());
        }
        Ok(Self::new(name, Location::Point, 3, padded))
    }

    /// The node displacements `u` (`dim` components per node), as `displacement`.
    pub fn displacement<T: Real>(dim: usize, values: &[T]) -> Result<Field> {
        Self::point_vectors("displacement", dim, values)
    }

    /// The node velocities `v` (`dim` components per node), as `velocity`.
    pub fn velocity<T: Real>(dim: usize, values: &[T]) -> Result<Field> {
        Self::point_vectors("velocity", dim, values)
    }

    /// Element stresses in clforge's order, as the cell array `stress`: in 2-D three numbers
    /// per cell (σxx, σyy, τxy), kept as they are; in 3-D six, given as (σxx, σyy, σzz, τyz,
    /// τxz, τxy) and written in the order VTK and ParaView use for symmetric tensors (xx, yy,
    /// zz, xy, yz, xz), so that ParaView's component names and tensor filters are right.
    pub fn stress<T: Real>(dim: usize, values: &[T]) -> Result<Field> {
        let n = match dim {
            2 => 3,
            3 => 6,
            _ => {
                return Err(Error::InvalidConfig(format!(
                    "field `stress`: dimension must be 2 or 3, found {dim}"
                )))
            }
        };
        if !values.len().is_multiple_of(n) {
            return Err(Error::InvalidConfig(format!(
                "field `stress` of {} numbers is not {n} per cell",
                values.len()
            )));
        }
        let out = if dim == 3 {
            values
                .chunks_exact(6)
                .flat_map(|s| [s[0], s[1], s[2], s[5], s[3], s[4]])
                .collect()
        } else {
            values.to_vec()
        };
        Ok(Self::new("stress", Location::Cell, n, out))
    }
}

/// Dimension 2 or 3, and whole values of `dim` numbers.
fn check_components(name: &str, dim: usize, len: usize) -> Result<()> {
    if !(2..=3).contains(&dim) {
        return Err(Error::InvalidConfig(format!(
            "field `{name}`: dimension must be 2 or 3, found {dim}"
        )));
    }
    if !len.is_multiple_of(dim) {
        return Err(Error::InvalidConfig(format!(
            "field `{name}` of {len} numbers is not {dim} per value"
        )));
    }
    Ok(())
}

/// Writes `mesh`, whose elements are `kind` cells in Gmsh's (clforge's) node order, and
/// `fields` as a VTK XML unstructured grid (`.vtu`: base64-encoded binary arrays,
/// little-endian), which ParaView and VTK read. Nodes are written in double precision and
/// reordered into VTK's local order ([`CellKind::vtk_order`]); fields keep their precision.
///
/// Every field must hold one value per node (point data) or per element (cell data), and no
/// two fields of one location may share a name: [`Error::LengthMismatch`] and
/// [`Error::InvalidConfig`] otherwise.
///
/// ```
/// # use clforge_runtime::element::{io::{write_vtu, CellKind, Field}, mesh::UnstructuredMesh};
/// let mesh = UnstructuredMesh::new(vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], 3, vec![0, 1, 2]).unwrap();
/// let u = Field::displacement(2, &[0.0, 0.0, 0.1, 0.0, 0.0, 0.2]).unwrap();
/// let s = Field::stress(2, &[1.0, 2.0, 0.5]).unwrap();
/// let path = std::env::temp_dir().join("clforge-doc-triangle.vtu");
/// write_vtu(&path, &mesh, CellKind::Tri3, &[u, s]).unwrap();
/// ```
pub fn write_vtu(path: impl AsRef<Path>, mesh: &UnstructuredMesh, kind: CellKind, fields: &[Field]) -> Result<()> {
    let path = path.as_ref();
    if path.extension().and_then(|e| e.to_str()) != Some("vtu") {
        return Err(Error::InvalidConfig(format!(
            "VTK output {} must end in `.vtu` (an XML unstructured grid)",
            path.display()
        )));
    }
    // Formed in memory, then written through `replace_file`: a previous file survives any
    // failure, and a missing directory is an I/O error naming the path.
    let mut xml = Vec::new();
    grid(mesh, kind, fields)?
        .write_xml(&mut xml)
        .map_err(|e| Error::MeshFile {
            path: path.display().to_string(),
            detail: format!("forming the VTK file failed: {e}"),
        })?;
    crate::files::replace_file(path, |w| w.write_all(&xml)).map_err(|source| Error::Io {
        what: format!("writing VTK file {}", path.display()),
        source,
    })
}

fn grid(mesh: &UnstructuredMesh, kind: CellKind, fields: &[Field]) -> Result<Vtk> {
    mesh.check()?;
    let npe = kind.nodes();
    if mesh.nodes_per_element != npe {
        return Err(Error::LengthMismatch {
            what: format!("nodes per element of a mesh of `{kind}` cells"),
            expected: npe,
            found: mesh.nodes_per_element,
        });
    }
    let (nodes, cells) = (mesh.node_count(), mesh.element_count());
    for (i, f) in fields.iter().enumerate() {
        let (count, per) = match f.location {
            Location::Point => (nodes, "node"),
            Location::Cell => (cells, "cell"),
        };
        if f.components == 0 || f.values.len() != f.components.saturating_mul(count) {
            return Err(Error::LengthMismatch {
                what: format!(
                    "field `{}` ({} numbers per {per}, {count} {per}s)",
                    f.name, f.components
                ),
                expected: f.components.max(1).saturating_mul(count),
                found: f.values.len(),
            });
        }
        if fields[..i].iter().any(|g| g.name == f.name && g.location == f.location) {
            return Err(Error::InvalidConfig(format!(
                "two {per} fields are named `{}`; ParaView would show only one",
                f.name
            )));
        }
    }
    let order = kind.vtk_order();
    let connectivity: Vec<u64> = mesh
        .connectivity
        .chunks_exact(npe)
        .flat_map(|c| order.iter().map(move |&j| u64::from(c[j])))
        .collect();
    let offsets: Vec<u64> = (1..=cells as u64).map(|c| c * npe as u64).collect();
    let cell_type = vtk_cell_type(kind);
    let points: Vec<f64> = mesh.coords.iter().flatten().copied().collect();
    let mut data = Attributes::new();
    for f in fields {
        let buffer: IOBuffer = match &f.values {
            Values::F32(v) => v.clone().into(),
            Values::F64(v) => v.clone().into(),
        };
        let elem = match f.components {
            1 => ElementType::Scalars {
                num_comp: 1,
                lookup_table: None,
            },
            3 if f.location == Location::Point => ElementType::Vectors,
            n => ElementType::Generic(n as u32),
        };
        let array = Attribute::DataArray(DataArray {
            name: f.name.clone(),
            elem,
            data: buffer,
        });
        match f.location {
            Location::Point => data.point.push(array),
            Location::Cell => data.cell.push(array),
        }
    }
    Ok(Vtk {
        version: Version::new_xml(1, 0),
        byte_order: ByteOrder::LittleEndian,
        title: format!("clforge {kind} mesh"),
        file_path: None,
        data: DataSet::inline(UnstructuredGridPiece {
            points: points.into(),
            cells: Cells {
                cell_verts: VertexNumbers::XML { connectivity, offsets },
                types: vec![cell_type; cells],
            },
            data,
        }),
    })
}

fn vtk_cell_type(kind: CellKind) -> CellType {
    use CellKind::*;
    match kind {
        Point1 => CellType::Vertex,
        Line2 => CellType::Line,
        Line3 => CellType::QuadraticEdge,
        Tri3 => CellType::Triangle,
        Tri6 => CellType::QuadraticTriangle,
        Quad4 => CellType::Quad,
        Quad8 => CellType::QuadraticQuad,
        Quad9 => CellType::BiquadraticQuad,
        Tet4 => CellType::Tetra,
        Tet10 => CellType::QuadraticTetra,
        Hex8 => CellType::Hexahedron,
        Hex20 => CellType::QuadraticHexahedron,
        Hex27 => CellType::TriquadraticHexahedron,
        Prism6 => CellType::Wedge,
        Prism15 => CellType::QuadraticWedge,
        Prism18 => CellType::BiquadraticQuadraticWedge,
        Pyramid5 => CellType::Pyramid,
        Pyramid13 => CellType::QuadraticPyramid,
    }
}

/// A time series: `stem_0000.vtu`, `stem_0001.vtu`, ... in `dir`, and `stem.pvd` listing them
/// with their times, which ParaView opens as one data set with a time axis.
///
/// The `.pvd` is rewritten (complete and synced before it replaces the previous one) after every
/// step, so a run stopped early still leaves a collection ParaView opens.
///
/// ```
/// # use clforge_runtime::element::{io::{CellKind, Field, VtkSeries}, mesh::UnstructuredMesh};
/// let mesh = UnstructuredMesh::new(vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], 3, vec![0, 1, 2]).unwrap();
/// let dir = std::env::temp_dir().join("clforge-doc-series");
/// let mut series = VtkSeries::new(&dir, "plate").unwrap();
/// for step in 0..3 {
///     let u = Field::displacement(2, &[0.0, 0.0, 0.1 * step as f64, 0.0, 0.0, 0.0]).unwrap();
///     series.write(step as f64 * 1e-3, &mesh, CellKind::Tri3, &[u]).unwrap();
/// }
/// assert!(dir.join("plate_0002.vtu").exists() && series.pvd().exists());
/// ```
///
/// One series at a time writes a given `.pvd` in a process: a second [`VtkSeries::new`] for the
/// same directory and stem is refused while the first is alive (it would overwrite the first
/// one's steps and collection), so a series is not `Clone`.
#[derive(Debug)]
pub struct VtkSeries {
    dir: PathBuf,
    stem: String,
    steps: Vec<(f64, String)>,
    /// The collection this series claimed in [`OPEN`], released on drop.
    claim: PathBuf,
}

/// The `.pvd` files (canonical paths) that live series are writing.
static OPEN: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

fn open_series() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    // The list is consistent whenever the lock is released: a panic elsewhere cannot tear it.
    OPEN.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Drop for VtkSeries {
    fn drop(&mut self) {
        open_series().retain(|p| *p != self.claim);
    }
}

impl VtkSeries {
    /// A series in `dir` (created if missing) of files named after `stem`, which must be a
    /// plain file name (no path separators).
    pub fn new(dir: impl AsRef<Path>, stem: &str) -> Result<VtkSeries> {
        let dir = dir.as_ref().to_path_buf();
        if stem.is_empty() || stem == "." || stem == ".." || stem.contains(['/', '\\']) {
            return Err(Error::InvalidConfig(format!(
                "series stem `{stem}` must be a plain file name without path separators"
            )));
        }
        std::fs::create_dir_all(&dir).map_err(|source| Error::Io {
            what: format!("creating output directory {}", dir.display()),
            source,
        })?;
        let canonical = dir.canonicalize().map_err(|source| Error::Io {
            what: format!("resolving output directory {}", dir.display()),
            source,
        })?;
        let claim = canonical.join(format!("{stem}.pvd"));
        let mut open = open_series();
        if open.contains(&claim) {
            return Err(Error::InvalidConfig(format!(
                "a VTK series writing {} is already open: a second one with stem `{stem}` would overwrite its \
                 steps; give this one another stem or directory, or drop the first",
                claim.display()
            )));
        }
        open.push(claim.clone());
        Ok(VtkSeries {
            dir,
            stem: stem.to_string(),
            steps: Vec::new(),
            claim,
        })
    }

    /// Writes the next step, at `time` (finite, after the previous step's), as
    /// [`write_vtu`] does, and rewrites the `.pvd`; returns the step's path.
    pub fn write(&mut self, time: f64, mesh: &UnstructuredMesh, kind: CellKind, fields: &[Field]) -> Result<PathBuf> {
        if !time.is_finite() || self.steps.last().is_some_and(|&(t, _)| time <= t) {
            return Err(Error::InvalidConfig(format!(
                "series time {time:e} must be finite and after the previous step's ({:e})",
                self.steps.last().map_or(f64::NEG_INFINITY, |s| s.0)
            )));
        }
        let name = format!("{}_{:04}.vtu", self.stem, self.steps.len());
        let path = self.dir.join(&name);
        write_vtu(&path, mesh, kind, fields)?;
        // The step joins the series only once its `.pvd` is written: after a failure the series
        // is as it was, and the same step may be written again.
        let mut steps = self.steps.clone();
        steps.push((time, name));
        self.write_pvd(&steps)?;
        self.steps = steps;
        Ok(path)
    }

    /// The collection file, `dir/stem.pvd`.
    pub fn pvd(&self) -> PathBuf {
        self.dir.join(format!("{}.pvd", self.stem))
    }

    /// The steps written: time and file name (relative to the directory).
    pub fn steps(&self) -> &[(f64, String)] {
        &self.steps
    }

    fn write_pvd(&self, steps: &[(f64, String)]) -> Result<()> {
        let mut xml = String::from(
            "<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n  <Collection>\n",
        );
        for (time, file) in steps {
            xml.push_str(&format!(
                "    <DataSet timestep=\"{time:?}\" group=\"\" part=\"0\" file=\"{}\"/>\n",
                escape(file)
            ));
        }
        xml.push_str("  </Collection>\n</VTKFile>\n");
        let path = self.pvd();
        crate::files::replace_file(&path, |w| w.write_all(xml.as_bytes())).map_err(|source| Error::Io {
            what: format!("writing VTK collection {}", path.display()),
            source,
        })
    }
}

/// XML attribute text.
fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}
