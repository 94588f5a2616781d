//! Gmsh MSH 4.1 files: reading (ASCII and binary, through `mshio`), the conversion into an
//! [`UnstructuredMesh`], and a short ASCII writer.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use super::cell::CellKind;
use crate::element::mesh::UnstructuredMesh;
use crate::error::{Error, Result};

/// A Gmsh model entity (point, curve, surface or volume) and the physical groups it belongs to.
#[derive(Clone, Debug, PartialEq)]
pub struct MshEntity {
    /// 0 point, 1 curve, 2 surface, 3 volume.
    pub dim: usize,
    /// Its tag among the entities of its dimension.
    pub tag: i32,
    /// The physical groups (of dimension `dim`) holding it.
    pub physical: Vec<i32>,
    /// Bounding box `[xmin, ymin, zmin, xmax, ymax, zmax]` (a point's position, twice).
    pub bbox: [f64; 6],
}

/// A physical group: elements of one dimension, named in `$PhysicalNames` or only numbered.
#[derive(Clone, Debug, PartialEq)]
pub struct PhysicalGroup {
    /// Dimension of its elements.
    pub dim: usize,
    /// Its tag (unique among the groups of its dimension).
    pub tag: i32,
    /// Its name, if `$PhysicalNames` gives one.
    pub name: Option<String>,
}

/// All cells of one kind, in file order.
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    /// The cell kind.
    pub kind: CellKind,
    /// `kind.nodes()` node indices (into [`MshMesh::coords`]) per cell, in Gmsh's local order.
    pub connectivity: Vec<u32>,
    /// Per cell: the tag of its entity (of dimension `kind.dim()`).
    pub entity: Vec<i32>,
    /// Per cell: the first physical group of its entity, 0 if none.
    pub physical: Vec<i32>,
}

impl Block {
    /// Number of cells.
    pub fn len(&self) -> usize {
        self.entity.len()
    }

    /// Whether the block holds no cell.
    pub fn is_empty(&self) -> bool {
        self.entity.is_empty()
    }

    /// Node indices of cell `e` (empty if there is none).
    pub fn cell(&self, e: usize) -> &[u32] {
        let n = self.kind.nodes();
        e.checked_mul(n)
            .and_then(|a| self.connectivity.get(a..a.checked_add(n)?))
            .unwrap_or(&[])
    }
}

/// A mesh read from a Gmsh `.msh` file: nodes renumbered densely, cells by kind, entities and
/// physical groups.
///
/// ```
/// # use clforge_runtime::fem::io::{read_msh, CellKind};
/// let msh = read_msh(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/meshes/plate.msh")).unwrap();
/// assert_eq!(msh.dim, 2);
/// let plate = msh.to_mesh(CellKind::Tri3).unwrap();
/// let left = plate.map_nodes(&msh.boundary_nodes("left").unwrap());
/// assert!(left.iter().all(|&n| plate.mesh.coords[n as usize][0] == 0.0));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct MshMesh {
    /// The highest cell dimension present (2 or 3).
    pub dim: usize,
    /// Node positions, numbered densely from 0 in file order.
    pub coords: Vec<[f64; 3]>,
    /// Gmsh's tag of each node (tags may be sparse).
    pub node_tags: Vec<u64>,
    /// One block per cell kind present, in [`CellKind`] order.
    pub blocks: Vec<Block>,
    /// The model entities of `$Entities`.
    pub entities: Vec<MshEntity>,
    /// Every physical group named in `$PhysicalNames` or used by an entity, by dimension and tag.
    pub groups: Vec<PhysicalGroup>,
}

/// The cells of one kind as an [`UnstructuredMesh`], with the nodes no cell uses dropped.
#[derive(Clone, Debug, PartialEq)]
pub struct ExtractedMesh {
    /// The mesh: nodes renumbered in ascending order of their index in the [`MshMesh`].
    pub mesh: UnstructuredMesh,
    /// The [`MshMesh`] node of each mesh node.
    pub msh_nodes: Vec<u32>,
    /// The physical group of each element (0 if none), as [`Block::physical`].
    pub physical: Vec<i32>,
    index: Vec<u32>,
}

impl ExtractedMesh {
    /// The mesh node of [`MshMesh`] node `msh_node`, if a cell of the mesh uses it.
    pub fn node(&self, msh_node: u32) -> Option<u32> {
        self.index.get(msh_node as usize).copied().filter(|&n| n != u32::MAX)
    }

    /// The mesh nodes of `msh_nodes` (a node set from [`MshMesh::boundary_nodes`]), dropping
    /// those no cell of the mesh uses.
    pub fn map_nodes(&self, msh_nodes: &[u32]) -> Vec<u32> {
        msh_nodes.iter().filter_map(|&n| self.node(n)).collect()
    }
}

impl MshMesh {
    /// The block of `kind`, if the mesh has such cells.
    pub fn cells(&self, kind: CellKind) -> Option<&Block> {
        self.blocks.iter().find(|b| b.kind == kind)
    }

    /// The physical group named `name` (the first, if several dimensions use the name).
    pub fn physical(&self, name: &str) -> Option<&PhysicalGroup> {
        self.groups.iter().find(|g| g.name.as_deref() == Some(name))
    }

    /// The cells of `group`: per block holding some, the kind and the cells' indices in it.
    pub fn group_cells(&self, group: &PhysicalGroup) -> Vec<(CellKind, Vec<usize>)> {
        let member: HashMap<i32, bool> = self
            .entities
            .iter()
            .filter(|e| e.dim == group.dim)
            .map(|e| (e.tag, e.physical.contains(&group.tag)))
            .collect();
        self.blocks
            .iter()
            .filter(|b| b.kind.dim() == group.dim)
            .map(|b| {
                let cells = (0..b.len())
                    .filter(|&e| member.get(&b.entity[e]).copied().unwrap_or(false))
                    .collect::<Vec<_>>();
                (b.kind, cells)
            })
            .filter(|(_, cells)| !cells.is_empty())
            .collect()
    }

    /// Every node of the cells of the group named `name`, ascending.
    pub fn physical_nodes(&self, name: &str) -> Result<Vec<u32>> {
        let group = self.named(name)?;
        let mut nodes = Vec::new();
        for (kind, cells) in self.group_cells(group) {
            if let Some(block) = self.cells(kind) {
                nodes.extend(cells.iter().flat_map(|&e| block.cell(e)));
            }
        }
        nodes.sort_unstable();
        nodes.dedup();
        Ok(nodes)
    }

    /// The nodes of a boundary group: every node of the cells of the group named `name`, whose
    /// cells must be of lower dimension than the mesh (the lines of a 2-D mesh, the faces of a
    /// 3-D one). Map them into an extracted mesh with [`ExtractedMesh::map_nodes`].
    pub fn boundary_nodes(&self, name: &str) -> Result<Vec<u32>> {
        let group = self.named(name)?;
        if group.dim >= self.dim {
            return Err(Error::InvalidConfig(format!(
                "physical group `{name}` holds {}-D cells of a {}-D mesh, not a boundary; use \
                 `physical_nodes` for all its nodes",
                group.dim, self.dim
            )));
        }
        self.physical_nodes(name)
    }

    fn named(&self, name: &str) -> Result<&PhysicalGroup> {
        self.physical(name).ok_or_else(|| {
            let names = self.groups.iter().filter_map(|g| g.name.as_deref()).collect::<Vec<_>>();
            Error::InvalidConfig(format!(
                "the mesh has no physical group named `{name}`; it has {}",
                if names.is_empty() {
                    "none".to_string()
                } else {
                    format!("`{}`", names.join("`, `"))
                }
            ))
        })
    }

    /// The cells of `kind` as an unstructured mesh in Gmsh's node order, which clforge's
    /// elements use (`tri3`, `tri6`, `quad4`, `quad9`, `tet4`, `tet10`, `hex8`); nodes that no
    /// such cell uses are dropped.
    pub fn to_mesh(&self, kind: CellKind) -> Result<ExtractedMesh> {
        self.to_mesh_with(kind, &[])
    }

    /// As [`to_mesh`](Self::to_mesh), the local nodes permuted: element node `j` is Gmsh's
    /// local node `perm[j]` (an empty `perm` keeps Gmsh's order), for an element whose `NODES`
    /// differ from Gmsh's.
    pub fn to_mesh_with(&self, kind: CellKind, perm: &[usize]) -> Result<ExtractedMesh> {
        let npe = kind.nodes();
        let perm: Vec<usize> = if perm.is_empty() {
            (0..npe).collect()
        } else {
            perm.to_vec()
        };
        let mut seen = vec![false; npe];
        if perm.len() != npe || !perm.iter().all(|&p| p < npe && !std::mem::replace(&mut seen[p], true)) {
            return Err(Error::InvalidConfig(format!(
                "node permutation {perm:?} for `{kind}` must hold each of 0..{npe} once"
            )));
        }
        let block = self.cells(kind).ok_or_else(|| {
            let held = self
                .blocks
                .iter()
                .map(|b| format!("{} ({})", b.kind, b.len()))
                .collect::<Vec<_>>()
                .join(", ");
            Error::InvalidConfig(format!("the mesh has no `{kind}` cells; it has {held}"))
        })?;
        if block.connectivity.len() != block.len() * npe || block.physical.len() != block.len() {
            return Err(Error::LengthMismatch {
                what: format!(
                    "node indices of the `{kind}` block ({npe} per cell, {} cells)",
                    block.len()
                ),
                expected: block.len() * npe,
                found: block.connectivity.len(),
            });
        }
        let mut used = vec![false; self.coords.len()];
        for &n in &block.connectivity {
            if let Some(u) = used.get_mut(n as usize) {
                *u = true;
            }
        }
        let msh_nodes: Vec<u32> = (0..used.len() as u32).filter(|&n| used[n as usize]).collect();
        let mut index = vec![u32::MAX; self.coords.len()];
        for (new, &old) in msh_nodes.iter().enumerate() {
            index[old as usize] = new as u32;
        }
        let coords = msh_nodes.iter().map(|&n| self.coords[n as usize]).collect();
        let mut connectivity = Vec::with_capacity(block.connectivity.len());
        for cell in block.connectivity.chunks_exact(npe) {
            // An index past the nodes stays past them, so `UnstructuredMesh::new` refuses it.
            connectivity.extend(
                perm.iter()
                    .map(|&p| index.get(cell[p] as usize).copied().unwrap_or(u32::MAX)),
            );
        }
        let mesh = UnstructuredMesh::new(coords, npe, connectivity)?;
        Ok(ExtractedMesh {
            mesh,
            msh_nodes,
            physical: block.physical.clone(),
            index,
        })
    }
}

/// Reads a Gmsh MSH 4.1 file, ASCII or binary.
///
/// Every failure is an [`Error`]: [`Error::Io`] if the file cannot be read, [`Error::MeshFile`]
/// naming the file, the section and the line (byte, in a binary file) for a malformed or
/// truncated file, another version than 4.1, or a cell type clforge does not read.
pub fn read_msh(path: impl AsRef<Path>) -> Result<MshMesh> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(|source| Error::Io {
        what: format!("reading Gmsh mesh {}", path.display()),
        source,
    })?;
    parse(&bytes, &path.display().to_string())
}

/// [`read_msh`] of a file's bytes.
pub fn parse_msh(bytes: &[u8]) -> Result<MshMesh> {
    parse(bytes, "MSH data")
}

fn fail(origin: &str, detail: impl Into<String>) -> Error {
    Error::MeshFile {
        path: origin.to_string(),
        detail: detail.into(),
    }
}

/// Where byte `offset` is: a line in an ASCII file, a byte in a binary one.
fn position(bytes: &[u8], offset: usize, binary: bool) -> String {
    let offset = offset.min(bytes.len());
    if binary {
        format!("byte {offset}")
    } else {
        format!("line {}", 1 + bytes[..offset].iter().filter(|&&b| b == b'\n').count())
    }
}

struct Header {
    binary: bool,
    size_t: usize,
}

/// The `$MeshFormat` line, checked before `mshio` sees it: `mshio` panics on a data size it has
/// no parser for, and our message names the versions Gmsh can be asked to write.
fn header(bytes: &[u8], origin: &str) -> Result<Header> {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(256)]);
    let mut lines = text.trim_start().lines();
    if lines.next().map(str::trim_end) != Some("$MeshFormat") {
        return Err(fail(
            origin,
            "not a Gmsh mesh: the file must begin with `$MeshFormat` (line 1)",
        ));
    }
    let line = lines.next().unwrap_or("");
    let words: Vec<&str> = line.split_whitespace().collect();
    let [version, file_type, size] = words[..] else {
        return Err(fail(
            origin,
            format!("`$MeshFormat` (line 2) must read `4.1 <0 ascii | 1 binary> 8`, found `{line}`"),
        ));
    };
    if version != "4.1" {
        return Err(fail(
            origin,
            format!(
                "MSH version {version} (line 2) is not read; only 4.1 is: save with Gmsh's \
                 `Mesh.MshFileVersion = 4.1` or `gmsh -format msh41`"
            ),
        ));
    }
    let binary = match file_type {
        "0" => false,
        "1" => true,
        _ => {
            return Err(fail(
                origin,
                format!("`$MeshFormat` file type `{file_type}` (line 2) must be 0 (ASCII) or 1 (binary)"),
            ))
        }
    };
    let size_t = match size {
        "4" => 4,
        "8" => 8,
        _ => {
            return Err(fail(
                origin,
                format!("`$MeshFormat` data size `{size}` (line 2) must be 8 (or 4)"),
            ))
        }
    };
    Ok(Header { binary, size_t })
}

/// `mshio`'s error, as one line: what, where, and the sections it was in.
fn describe(error: &mshio::MshParserError<&[u8]>, bytes: &[u8], binary: bool) -> String {
    use mshio::error::MshParserErrorKind as Kind;
    let trace = error.filtered_backtrace();
    // Only nom's own errors (an unterminated section, say): their position is all there is.
    let Some((rest, _)) = trace.first().or(error.backtrace.first()) else {
        return "the file could not be parsed".to_string();
    };
    let offset = bytes.len().saturating_sub(rest.len());
    // Innermost first: the first kind that is not a context says what went wrong.
    let kind = trace.iter().map(|(_, k)| k).find(|k| k.context().is_none());
    let contexts: Vec<&str> = trace.iter().rev().filter_map(|(_, k)| k.context()).collect();
    let mut supported = String::new();
    let what = match kind {
        Some(Kind::UnknownElement) => {
            let number = contexts.iter().find_map(|c| c.strip_prefix("value ")).unwrap_or("?");
            supported = format!("; clforge reads {}", CellKind::names());
            format!("unknown Gmsh element type {number}")
        }
        Some(k) if !k.is_nom_error() => k.to_string().trim_end_matches('.').to_string(),
        _ => "unexpected text".to_string(),
    };
    let end = if rest.is_empty() {
        " (the file ends there: truncated?)"
    } else {
        ""
    };
    let mut msg = format!("{what} at {}{end}", position(bytes, offset, binary));
    if !contexts.is_empty() {
        let _ = write!(msg, ", in {}", contexts.join(" > "));
    } else if let Some(section) = enclosing_section(bytes, offset).filter(|_| !binary) {
        let _ = write!(msg, ", in the section opened by `{section}`");
    }
    msg + &supported
}

/// The last `$Section` line at or before `offset`, for errors that carry no context.
fn enclosing_section(bytes: &[u8], offset: usize) -> Option<String> {
    let head = &bytes[..offset.min(bytes.len())];
    let mut end = head.len();
    loop {
        let start = head[..end].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let line = String::from_utf8_lossy(&head[start..end]);
        let line = line.trim();
        if line.starts_with('$') && !line.starts_with("$End") {
            return Some(line.to_string());
        }
        if start == 0 {
            return None;
        }
        end = start - 1;
    }
}

fn parse(bytes: &[u8], origin: &str) -> Result<MshMesh> {
    let head = header(bytes, origin)?;
    // `mshio` still has `unimplemented!`s and, in debug builds, overflowing counts on empty
    // sections: a panic in it must come back as an error, never take the caller down.
    let parsed =
        std::panic::catch_unwind(|| mshio::parse_msh_bytes(bytes).map_err(|e| describe(&e, bytes, head.binary)))
            .map_err(|_| {
                fail(
                    origin,
                    "the MSH parser stopped on a malformed file (see the message above)",
                )
            })?
            .map_err(|detail| fail(origin, detail))?;

    let names = physical_names(bytes, origin, head.binary)?;
    let entities = entities(&parsed);
    let (coords, node_tags) = nodes(&parsed, bytes, &head, origin)?;
    let blocks = elements(&parsed, &node_tags, &entities, origin)?;

    let dim = blocks.iter().map(|b| b.kind.dim()).max().unwrap_or(0);
    if blocks.is_empty() {
        return Err(fail(
            origin,
            "the file holds no elements (no `$Elements` section, or an empty one)",
        ));
    }
    if dim < 2 {
        return Err(fail(
            origin,
            format!("the file holds only {dim}-D cells; clforge reads 2-D and 3-D meshes"),
        ));
    }

    let mut groups: Vec<PhysicalGroup> = names
        .iter()
        .map(|(dim, tag, name)| PhysicalGroup {
            dim: *dim,
            tag: *tag,
            name: Some(name.clone()),
        })
        .collect();
    for e in &entities {
        for &tag in &e.physical {
            if !groups.iter().any(|g| g.dim == e.dim && g.tag == tag) {
                groups.push(PhysicalGroup {
                    dim: e.dim,
                    tag,
                    name: None,
                });
            }
        }
    }
    groups.sort_by_key(|g| (g.dim, g.tag));
    Ok(MshMesh {
        dim,
        coords,
        node_tags,
        blocks,
        entities,
        groups,
    })
}

/// `$PhysicalNames`, which `mshio` skips: `count` then `dim tag "name"` lines, ASCII in binary
/// files too.
fn physical_names(bytes: &[u8], origin: &str, binary: bool) -> Result<Vec<(usize, i32, String)>> {
    let Some(start) = section(bytes, b"$PhysicalNames") else {
        return Ok(Vec::new());
    };
    let body = &bytes[start..];
    let end = find(body, b"$EndPhysicalNames").ok_or_else(|| {
        fail(
            origin,
            format!(
                "`$PhysicalNames` at {} has no `$EndPhysicalNames` (truncated?)",
                position(bytes, start, binary)
            ),
        )
    })?;
    let text = String::from_utf8_lossy(&body[..end]);
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let first_line = 1 + bytes[..start].iter().filter(|&&b| b == b'\n').count();
    let bad = |what: String| {
        fail(
            origin,
            format!("`$PhysicalNames` (from line {first_line}): {what}; lines read `dim tag \"name\"`"),
        )
    };
    let count: usize = lines
        .next()
        .and_then(|l| l.parse().ok())
        .ok_or_else(|| bad("the first line must be the number of names".into()))?;
    let mut names = Vec::new();
    for line in lines {
        let mut parts = line.splitn(3, char::is_whitespace);
        let (Some(dim), Some(tag), Some(name)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(bad(format!("`{line}` is not a name")));
        };
        let name = name.trim();
        let (Ok(dim), Ok(tag), Some(name)) = (
            dim.parse::<usize>(),
            tag.parse::<i32>(),
            name.strip_prefix('"').and_then(|n| n.strip_suffix('"')),
        ) else {
            return Err(bad(format!("`{line}` is not a name")));
        };
        if dim > 3 {
            return Err(bad(format!("`{line}` has dimension {dim}, more than 3")));
        }
        names.push((dim, tag, name.to_string()));
    }
    if names.len() != count {
        return Err(bad(format!("{count} names announced, {} found", names.len())));
    }
    Ok(names)
}

/// The offset just past the line `tag` (a whole line, at a line start).
fn section(bytes: &[u8], tag: &[u8]) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = find(&bytes[from..], tag) {
        let at = from + i;
        let after = at + tag.len();
        let line_start = at == 0 || bytes[at - 1] == b'\n';
        let rest = &bytes[after..];
        let eol = if rest.starts_with(b"\r\n") {
            Some(2)
        } else if rest.starts_with(b"\n") {
            Some(1)
        } else {
            None
        };
        if let (true, Some(eol)) = (line_start, eol) {
            return Some(after + eol);
        }
        from = after;
    }
    None
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

type Msh = mshio::MshFile<u64, i32, f64>;

fn entities(msh: &Msh) -> Vec<MshEntity> {
    let Some(e) = &msh.data.entities else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for p in &e.points {
        out.push(MshEntity {
            dim: 0,
            tag: p.tag,
            physical: p.physical_tags.clone(),
            bbox: [p.x, p.y, p.z, p.x, p.y, p.z],
        });
    }
    macro_rules! push {
        ($list:expr, $dim:expr) => {
            for c in $list {
                out.push(MshEntity {
                    dim: $dim,
                    tag: c.tag,
                    physical: c.physical_tags.clone(),
                    bbox: [c.min_x, c.min_y, c.min_z, c.max_x, c.max_y, c.max_z],
                });
            }
        };
    }
    push!(&e.curves, 1);
    push!(&e.surfaces, 2);
    push!(&e.volumes, 3);
    out
}

fn nodes(msh: &Msh, bytes: &[u8], head: &Header, origin: &str) -> Result<(Vec<[f64; 3]>, Vec<u64>)> {
    let Some(nodes) = &msh.data.nodes else {
        return Err(fail(origin, "the file has no `$Nodes` section"));
    };
    let count: usize = nodes.node_blocks.iter().map(|b| b.nodes.len()).sum();
    if nodes.num_nodes != count as u64 {
        return Err(fail(
            origin,
            format!(
                "`$Nodes` announces {} nodes but its blocks hold {count}",
                nodes.num_nodes
            ),
        ));
    }
    if count > u32::MAX as usize {
        return Err(Error::TooLarge {
            what: format!("Gmsh mesh {origin}"),
            detail: format!("its {count} nodes pass the 32-bit node indices of clforge's meshes"),
        });
    }
    // `mshio` keeps the tags only when they are sparse; contiguous tags may still come in any
    // order, so they are read again from the file.
    let mut tags: Vec<u64> = Vec::with_capacity(count);
    let maps: Option<Vec<_>> = nodes.node_blocks.iter().map(|b| b.node_tags.as_ref()).collect();
    if let Some(maps) = maps {
        for (block, map) in nodes.node_blocks.iter().zip(maps) {
            let mut in_block = vec![0u64; block.nodes.len()];
            for (&tag, &i) in map {
                if let Some(slot) = in_block.get_mut(i) {
                    *slot = tag;
                }
            }
            if map.len() != block.nodes.len() {
                return Err(fail(
                    origin,
                    format!(
                        "`$Nodes` block of entity ({}, {}) repeats a node tag",
                        block.entity_dim, block.entity_tag
                    ),
                ));
            }
            tags.extend(in_block);
        }
    } else {
        tags = scan_node_tags(bytes, head)
            .filter(|t| t.len() == count)
            .ok_or_else(|| fail(origin, "the node tags of `$Nodes` could not be read"))?;
    }
    let mut coords = Vec::with_capacity(count);
    for block in &nodes.node_blocks {
        coords.extend(block.nodes.iter().map(|n| [n.x, n.y, n.z]));
    }
    if let Some(i) = coords.iter().position(|p| p.iter().any(|v| !v.is_finite())) {
        return Err(fail(
            origin,
            format!("node tag {} is at {:?}; coordinates must be finite", tags[i], coords[i]),
        ));
    }
    let mut seen = HashMap::with_capacity(count);
    for (i, &t) in tags.iter().enumerate() {
        if seen.insert(t, i).is_some() {
            return Err(fail(origin, format!("node tag {t} appears twice in `$Nodes`")));
        }
    }
    Ok((coords, tags))
}

/// The node tags of `$Nodes` in file order, read past `mshio` (which drops contiguous tags).
/// Runs only on a section `mshio` has parsed, so the layout is known to be sound.
fn scan_node_tags(bytes: &[u8], head: &Header) -> Option<Vec<u64>> {
    let start = section(bytes, b"$Nodes")?;
    let mut tags = Vec::new();
    if head.binary {
        let little = {
            // The `$MeshFormat` line is followed by the integer 1 in the file's byte order.
            let at = section(bytes, b"$MeshFormat")?;
            let line_end = at + bytes[at..].iter().position(|&b| b == b'\n')? + 1;
            bytes.get(line_end..line_end + 4)? == 1i32.to_le_bytes()
        };
        let mut at = start;
        let mut take = |n: usize| -> Option<&[u8]> {
            let s = bytes.get(at..at.checked_add(n)?)?;
            at += n;
            Some(s)
        };
        let size = head.size_t;
        let mut word = |n: usize| -> Option<u64> {
            let s = take(n)?;
            let mut v = [0u8; 8];
            if little {
                v[..n].copy_from_slice(s);
                Some(u64::from_le_bytes(v))
            } else {
                v[8 - n..].copy_from_slice(s);
                Some(u64::from_be_bytes(v))
            }
        };
        let blocks = word(size)?;
        for _ in 0..3 {
            word(size)?;
        }
        for _ in 0..blocks {
            for _ in 0..3 {
                word(4)?;
            }
            let n = word(size)?;
            for _ in 0..n {
                tags.push(word(size)?);
            }
            for _ in 0..n.checked_mul(3)? {
                word(8)?;
            }
        }
    } else {
        let end = start + find(&bytes[start..], b"$EndNodes")?;
        let text = std::str::from_utf8(&bytes[start..end]).ok()?;
        let mut words = text.split_ascii_whitespace();
        let blocks: u64 = words.next()?.parse().ok()?;
        words.nth(2)?;
        for _ in 0..blocks {
            // entityDim entityTag parametric numNodesInBlock
            let n: u64 = words.nth(3)?.parse().ok()?;
            for _ in 0..n {
                tags.push(words.next()?.parse().ok()?);
            }
            for _ in 0..n.checked_mul(3)? {
                words.next()?;
            }
        }
    }
    Some(tags)
}

fn elements(msh: &Msh, node_tags: &[u64], entities: &[MshEntity], origin: &str) -> Result<Vec<Block>> {
    let Some(elements) = &msh.data.elements else {
        return Ok(Vec::new());
    };
    let index: HashMap<u64, u32> = node_tags.iter().enumerate().map(|(i, &t)| (t, i as u32)).collect();
    let first_physical: HashMap<(usize, i32), i32> = entities
        .iter()
        .map(|e| ((e.dim, e.tag), e.physical.first().copied().unwrap_or(0)))
        .collect();
    let mut blocks: Vec<Block> = Vec::new();
    for (b, block) in elements.element_blocks.iter().enumerate() {
        let ty = block.element_type as i32;
        let kind = CellKind::from_gmsh(ty).ok_or_else(|| {
            fail(
                origin,
                format!(
                    "`$Elements` block {} (entity {}, {}) holds Gmsh element type {ty} ({:?}), which \
                     clforge does not read; it reads {}",
                    b + 1,
                    block.entity_dim,
                    block.entity_tag,
                    block.element_type,
                    CellKind::names()
                ),
            )
        })?;
        if block.entity_dim != kind.dim() as i32 {
            return Err(fail(
                origin,
                format!(
                    "`$Elements` block {} holds {}-D `{kind}` cells on an entity of dimension {}",
                    b + 1,
                    kind.dim(),
                    block.entity_dim
                ),
            ));
        }
        let physical = first_physical
            .get(&(kind.dim(), block.entity_tag))
            .copied()
            .unwrap_or(0);
        let at = match blocks.iter().position(|x| x.kind == kind) {
            Some(at) => at,
            None => {
                blocks.push(Block {
                    kind,
                    connectivity: Vec::new(),
                    entity: Vec::new(),
                    physical: Vec::new(),
                });
                blocks.len() - 1
            }
        };
        let out = &mut blocks[at];
        for element in &block.elements {
            for &tag in &element.nodes {
                let n = index.get(&tag).ok_or_else(|| {
                    fail(
                        origin,
                        format!(
                            "element {} names node tag {tag}, which `$Nodes` does not define",
                            element.element_tag
                        ),
                    )
                })?;
                out.connectivity.push(*n);
            }
            out.entity.push(block.entity_tag);
            out.physical.push(physical);
        }
    }
    blocks.sort_by_key(|b| b.kind);
    Ok(blocks)
}

/// Writes `mesh` as an ASCII MSH 4.1 file that [`read_msh`] (and Gmsh) read back: the same
/// node tags, cells in the same order, entities with their physical groups, and
/// `$PhysicalNames`. A cell whose entity is missing from [`MshMesh::entities`] gets a new
/// entity holding its [`Block::physical`] group. Coordinates are written exactly (shortest
/// round-trip decimal).
pub fn write_msh(path: impl AsRef<Path>, mesh: &MshMesh) -> Result<()> {
    let path = path.as_ref();
    let text = msh_text(mesh)?;
    // Replaced only by a complete, synced file: a previous mesh survives any failure.
    crate::files::replace_file(path, |w| std::io::Write::write_all(w, text.as_bytes())).map_err(|source| Error::Io {
        what: format!("writing Gmsh mesh {}", path.display()),
        source,
    })
}

fn msh_text(mesh: &MshMesh) -> Result<String> {
    let n = mesh.coords.len();
    let invalid = |what: String| Error::InvalidConfig(format!("cannot write the MSH mesh: {what}"));
    if n == 0 || mesh.blocks.iter().all(Block::is_empty) {
        return Err(invalid("it has no nodes or no cells".into()));
    }
    if let Some(i) = mesh.coords.iter().position(|p| p.iter().any(|v| !v.is_finite())) {
        return Err(invalid(format!("node {i} is at {:?}", mesh.coords[i])));
    }
    let tags: Vec<u64> = if mesh.node_tags.is_empty() {
        (1..=n as u64).collect()
    } else if mesh.node_tags.len() == n {
        mesh.node_tags.clone()
    } else {
        return Err(Error::LengthMismatch {
            what: "node tags of the MSH mesh (one per node, or none)".into(),
            expected: n,
            found: mesh.node_tags.len(),
        });
    };
    let mut seen = std::collections::HashSet::with_capacity(n);
    if let Some(t) = tags.iter().find(|&&t| t == 0 || !seen.insert(t)) {
        return Err(invalid(format!("node tag {t} is 0 or repeated")));
    }
    for b in &mesh.blocks {
        let cells = b.len();
        if b.connectivity.len() != cells * b.kind.nodes() || b.physical.len() != cells {
            return Err(Error::LengthMismatch {
                what: format!(
                    "node indices of the `{}` block ({} per cell, {cells} cells)",
                    b.kind,
                    b.kind.nodes()
                ),
                expected: cells * b.kind.nodes(),
                found: b.connectivity.len(),
            });
        }
        if let Some(&bad) = b.connectivity.iter().find(|&&i| i as usize >= n) {
            return Err(invalid(format!("a `{}` cell names node {bad} of {n}", b.kind)));
        }
    }

    // Entities: the listed ones, then one per (dimension, tag) only the cells name.
    let mut entities = mesh.entities.clone();
    for b in &mesh.blocks {
        let dim = b.kind.dim();
        for e in 0..b.len() {
            let tag = b.entity[e];
            if !entities.iter().any(|x| x.dim == dim && x.tag == tag) {
                let physical = if b.physical[e] == 0 {
                    vec![]
                } else {
                    vec![b.physical[e]]
                };
                entities.push(MshEntity {
                    dim,
                    tag,
                    physical,
                    bbox: bbox(&mesh.coords),
                });
            }
        }
    }
    entities.sort_by_key(|e| e.dim);

    let mut s = String::with_capacity(64 * n);
    s.push_str("$MeshFormat\n4.1 0 8\n$EndMeshFormat\n");
    let named: Vec<&PhysicalGroup> = mesh.groups.iter().filter(|g| g.name.is_some()).collect();
    if !named.is_empty() {
        let _ = writeln!(s, "$PhysicalNames\n{}", named.len());
        for g in named {
            let name = g.name.as_deref().unwrap_or_default();
            if name.contains(['"', '\n', '\r']) {
                return Err(invalid(format!("physical name {name:?} holds a quote or a line break")));
            }
            let _ = writeln!(s, "{} {} \"{name}\"", g.dim, g.tag);
        }
        s.push_str("$EndPhysicalNames\n");
    }
    s.push_str("$Entities\n");
    let counts: Vec<usize> = (0..4).map(|d| entities.iter().filter(|e| e.dim == d).count()).collect();
    let _ = writeln!(s, "{} {} {} {}", counts[0], counts[1], counts[2], counts[3]);
    for e in &entities {
        let physical: String = e.physical.iter().map(|p| format!(" {p}")).collect();
        let _ = write!(s, "{}", e.tag);
        let coords = if e.dim == 0 { &e.bbox[..3] } else { &e.bbox[..] };
        for v in coords {
            let _ = write!(s, " {v:?}");
        }
        let _ = write!(s, " {}{physical}", e.physical.len());
        // No bounding entities: the mesh does not need the model's topology.
        s.push_str(if e.dim == 0 { "\n" } else { " 0\n" });
    }
    s.push_str("$EndEntities\n");

    // All nodes in one block, on the first entity of the mesh's dimension.
    let top = mesh.blocks.iter().map(|b| b.kind.dim()).max().unwrap_or(0);
    let host = entities.iter().find(|e| e.dim == top).map_or(1, |e| e.tag);
    let (lo, hi) = (
        tags.iter().min().copied().unwrap_or(1),
        tags.iter().max().copied().unwrap_or(1),
    );
    let _ = writeln!(s, "$Nodes\n1 {n} {lo} {hi}\n{top} {host} 0 {n}");
    for t in &tags {
        let _ = writeln!(s, "{t}");
    }
    for p in &mesh.coords {
        let _ = writeln!(s, "{:?} {:?} {:?}", p[0], p[1], p[2]);
    }
    s.push_str("$EndNodes\n");

    // One element block per run of cells of one kind on one entity, so order is kept.
    let mut runs = Vec::new();
    for b in &mesh.blocks {
        let mut start = 0;
        for e in 1..=b.len() {
            if e == b.len() || b.entity[e] != b.entity[start] {
                runs.push((b, start, e));
                start = e;
            }
        }
    }
    let total: usize = mesh.blocks.iter().map(Block::len).sum();
    let _ = writeln!(s, "$Elements\n{} {total} 1 {total}", runs.len());
    let mut tag = 0usize;
    for (b, start, end) in runs {
        let _ = writeln!(
            s,
            "{} {} {} {}",
            b.kind.dim(),
            b.entity[start],
            b.kind.gmsh_type(),
            end - start
        );
        for e in start..end {
            tag += 1;
            let _ = write!(s, "{tag}");
            for &node in b.cell(e) {
                let _ = write!(s, " {}", tags[node as usize]);
            }
            s.push('\n');
        }
    }
    s.push_str("$EndElements\n");
    Ok(s)
}

fn bbox(coords: &[[f64; 3]]) -> [f64; 6] {
    let mut b = [
        f64::INFINITY,
        f64::INFINITY,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NEG_INFINITY,
        f64::NEG_INFINITY,
    ];
    for p in coords {
        for k in 0..3 {
            b[k] = b[k].min(p[k]);
            b[k + 3] = b[k + 3].max(p[k]);
        }
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Empty `$Nodes` and `$Elements` sections: `mshio` computes `count - 1` on them, which
    /// panics in a debug build; the reader must answer with an error in every build.
    #[test]
    fn empty_sections_are_an_error() {
        let text =
            "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n0 0 1 1\n$EndNodes\n$Elements\n0 0 1 1\n$EndElements\n";
        let err = parse_msh(text.as_bytes()).unwrap_err();
        assert!(matches!(err, Error::MeshFile { .. }), "{err}");
    }

    #[test]
    fn sections_are_found_at_line_starts() {
        let bytes = b"x$Nodes\n$NodesX\n$Nodes\r\nrest";
        assert_eq!(section(bytes, b"$Nodes"), Some(24));
        assert_eq!(enclosing_section(b"$A\n1\n$B\n2\n3", 10).as_deref(), Some("$B"));
        assert_eq!(enclosing_section(b"$A\n1\n$EndA\n2", 12).as_deref(), Some("$A"));
    }
}
