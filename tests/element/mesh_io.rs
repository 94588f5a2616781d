//! Mesh and result files (Gmsh in, VTK out): the shipped Gmsh meshes read with the right
//! topology and groups, MSH round trips, malformed files refused without a panic, and VTK grids
//! and series read back with `vtkio` against VTK's own node-order definitions.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use clforge::runtime::element::io::{
    parse_msh, read_msh, write_msh, write_vtu, Block, CellKind, Field, MshEntity, MshMesh, PhysicalGroup, VtkSeries,
};
use clforge::runtime::element::mesh::UnstructuredMesh;
use clforge::runtime::Error;
use vtkio::model::{Attribute, CellType, DataSet, Piece, UnstructuredGridPiece};

mod vtk;

fn meshes() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/meshes")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("clforge-mesh-io-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn norm(a: [f64; 3]) -> f64 {
    dot(a, a).sqrt()
}

/// Nodes of the cells of `group`, from the blocks directly (not through `physical_nodes`).
fn nodes_of(msh: &MshMesh, group: &PhysicalGroup) -> HashSet<u32> {
    let mut out = HashSet::new();
    for (kind, cells) in msh.group_cells(group) {
        let block = msh.cells(kind).unwrap();
        for e in cells {
            out.extend(block.cell(e));
        }
    }
    out
}

#[test]
fn plate_is_a_valid_unstructured_triangulation() {
    let msh = read_msh(meshes().join("plate.msh")).unwrap();
    assert_eq!(msh.dim, 2);
    let tris = msh.cells(CellKind::Tri3).unwrap();
    let lines = msh.cells(CellKind::Line2).unwrap();
    assert!((2000..20_000).contains(&tris.len()), "{} triangles", tris.len());

    // Every triangle counter-clockwise, well shaped, and the areas tile the 2 x 1 plate.
    let mut area = 0.0;
    let mut min_angle = f64::INFINITY;
    for e in 0..tris.len() {
        let p: Vec<[f64; 3]> = tris.cell(e).iter().map(|&n| msh.coords[n as usize]).collect();
        let a = cross(sub(p[1], p[0]), sub(p[2], p[0]))[2] / 2.0;
        assert!(a > 0.0, "triangle {e} has signed area {a}");
        area += a;
        for k in 0..3 {
            let (u, v) = (sub(p[(k + 1) % 3], p[k]), sub(p[(k + 2) % 3], p[k]));
            min_angle = min_angle.min((dot(u, v) / (norm(u) * norm(v))).acos().to_degrees());
        }
    }
    assert!((area - 2.0).abs() < 1e-12, "area {area}");
    assert!(min_angle > 20.0, "smallest angle {min_angle}°");

    // Every node is a triangle vertex, and Euler's formula for a disc holds: T = 2V - B - 2
    // with B boundary edges, which are exactly the line elements of the four side groups.
    let used: HashSet<u32> = tris.connectivity.iter().copied().collect();
    assert_eq!(used.len(), msh.coords.len());
    assert_eq!(tris.len(), 2 * msh.coords.len() - lines.len() - 2);
    let mut edges: HashMap<(u32, u32), usize> = HashMap::new();
    for e in 0..tris.len() {
        let c = tris.cell(e);
        for k in 0..3 {
            let (a, b) = (c[k], c[(k + 1) % 3]);
            *edges.entry((a.min(b), a.max(b))).or_default() += 1;
        }
    }
    let boundary: HashSet<(u32, u32)> = edges.iter().filter(|(_, &n)| n == 1).map(|(&e, _)| e).collect();
    let line_edges: HashSet<(u32, u32)> = (0..lines.len())
        .map(|e| {
            let c = lines.cell(e);
            (c[0].min(c[1]), c[0].max(c[1]))
        })
        .collect();
    assert_eq!(boundary, line_edges);

    // Unstructured: node valences vary (a structured triangulation has one interior valence).
    let mut valence = vec![0usize; msh.coords.len()];
    for &(a, b) in edges.keys() {
        valence[a as usize] += 1;
        valence[b as usize] += 1;
    }
    let distinct: HashSet<usize> = valence.iter().copied().collect();
    assert!(distinct.len() >= 4, "valences {distinct:?}");

    // The groups: four named sides on the plane's edges, and the surface.
    let plate = msh.physical("plate").unwrap();
    assert_eq!(plate.dim, 2);
    let total: usize = msh.group_cells(plate).iter().map(|(_, c)| c.len()).sum();
    assert_eq!(total, tris.len());
    let sides: [(&str, usize, f64); 4] = [("left", 0, 0.0), ("right", 0, 2.0), ("bottom", 1, 0.0), ("top", 1, 1.0)];
    let mut on_sides = HashSet::new();
    for (name, axis, at) in sides {
        let group = msh.physical(name).unwrap_or_else(|| panic!("group {name}"));
        assert_eq!(group.dim, 1);
        let nodes = msh.boundary_nodes(name).unwrap();
        let cells: usize = msh.group_cells(group).iter().map(|(_, c)| c.len()).sum();
        assert_eq!(nodes.len(), cells + 1, "{name}: an open chain of {cells} lines");
        assert_eq!(nodes.iter().copied().collect::<HashSet<_>>(), nodes_of(&msh, group));
        for &n in &nodes {
            assert_eq!(msh.coords[n as usize][axis], at, "{name} node {n}");
        }
        on_sides.extend(nodes);
    }
    let expected: HashSet<u32> = (0..msh.coords.len() as u32)
        .filter(|&n| {
            let [x, y, _] = msh.coords[n as usize];
            x == 0.0 || x == 2.0 || y == 0.0 || y == 1.0
        })
        .collect();
    assert_eq!(on_sides, expected);
    assert!(msh.boundary_nodes("plate").is_err());
    let err = msh.boundary_nodes("inlet").unwrap_err().to_string();
    assert!(err.contains("`inlet`") && err.contains("`left`"), "{err}");
}

#[test]
fn box_is_a_valid_tetrahedral_mesh() {
    let msh = read_msh(meshes().join("box.msh")).unwrap();
    assert_eq!(msh.dim, 3);
    let tets = msh.cells(CellKind::Tet4).unwrap();
    let faces = msh.cells(CellKind::Tri3).unwrap();
    assert!((1000..20_000).contains(&tets.len()), "{} tetrahedra", tets.len());

    let mut volume = 0.0;
    for e in 0..tets.len() {
        let p: Vec<[f64; 3]> = tets.cell(e).iter().map(|&n| msh.coords[n as usize]).collect();
        let v = dot(sub(p[3], p[0]), cross(sub(p[1], p[0]), sub(p[2], p[0]))) / 6.0;
        assert!(v > 1e-7, "tetrahedron {e} has signed volume {v}");
        volume += v;
    }
    assert!((volume - 1.0).abs() < 1e-12, "volume {volume}");
    let used: HashSet<u32> = tets.connectivity.iter().copied().collect();
    assert_eq!(used.len(), msh.coords.len());

    // Euler characteristic of a ball: V - E + F - T = 1; the faces owned by one tetrahedron
    // are exactly the triangles of the six face groups.
    let mut edges = HashSet::new();
    let mut tri_faces: HashMap<[u32; 3], usize> = HashMap::new();
    for e in 0..tets.len() {
        let c = tets.cell(e);
        for i in 0..4 {
            for j in i + 1..4 {
                edges.insert((c[i].min(c[j]), c[i].max(c[j])));
            }
            let mut f: Vec<u32> = (0..4).filter(|&k| k != i).map(|k| c[k]).collect();
            f.sort_unstable();
            *tri_faces.entry([f[0], f[1], f[2]]).or_default() += 1;
        }
    }
    let chi = msh.coords.len() as i64 - edges.len() as i64 + tri_faces.len() as i64 - tets.len() as i64;
    assert_eq!(chi, 1);
    let outer: HashSet<[u32; 3]> = tri_faces.iter().filter(|(_, &n)| n == 1).map(|(&f, _)| f).collect();
    let listed: HashSet<[u32; 3]> = (0..faces.len())
        .map(|e| {
            let mut f = faces.cell(e).to_vec();
            f.sort_unstable();
            [f[0], f[1], f[2]]
        })
        .collect();
    assert_eq!(outer, listed);

    for (name, axis, at) in [
        ("xmin", 0, 0.0),
        ("xmax", 0, 1.0),
        ("ymin", 1, 0.0),
        ("ymax", 1, 1.0),
        ("zmin", 2, 0.0),
        ("zmax", 2, 1.0),
    ] {
        let nodes = msh.boundary_nodes(name).unwrap();
        assert!(nodes.len() > 20, "{name}");
        let on_plane = (0..msh.coords.len()).filter(|&n| msh.coords[n][axis] == at).count();
        assert_eq!(nodes.len(), on_plane, "{name}");
        assert!(nodes.iter().all(|&n| msh.coords[n as usize][axis] == at));
    }
    assert_eq!(msh.physical("box").unwrap().dim, 3);
}

#[test]
fn binary_and_ascii_files_read_alike() {
    let ascii = read_msh(meshes().join("box.msh")).unwrap();
    let mut binary = read_msh(meshes().join("box_binary.msh")).unwrap();
    // Gmsh writes ASCII coordinates with 16 significant digits, one short of exact.
    assert_eq!(ascii.coords.len(), binary.coords.len());
    for (a, b) in ascii.coords.iter().zip(&binary.coords) {
        for k in 0..3 {
            assert!((a[k] - b[k]).abs() <= 1e-15 * a[k].abs().max(1.0), "{a:?} vs {b:?}");
        }
    }
    binary.coords.clone_from(&ascii.coords);
    assert!(
        ascii == binary,
        "the binary file differs in more than coordinate rounding"
    );
}

#[test]
fn msh_round_trips() {
    let dir = scratch("round-trip");
    for name in ["plate.msh", "box.msh"] {
        let msh = read_msh(meshes().join(name)).unwrap();
        let path = dir.join(name);
        write_msh(&path, &msh).unwrap();
        let again = read_msh(&path).unwrap();
        assert_eq!(again, msh, "{name}");
    }

    // Sparse tags out of order, two entities of one kind interleaved, a group without a name.
    let msh = MshMesh {
        dim: 2,
        coords: vec![
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [1.0, 1.0, 0.0],
            [0.0, 1.0, 0.0],
            [0.5, 0.5, 1e-300],
        ],
        node_tags: vec![40, 7, 1000, 3, 8],
        blocks: vec![
            Block {
                kind: CellKind::Line2,
                connectivity: vec![0, 1, 3, 0],
                entity: vec![1, 4],
                physical: vec![10, 0],
            },
            Block {
                kind: CellKind::Tri3,
                connectivity: vec![0, 1, 4, 1, 2, 4, 2, 3, 4, 3, 0, 4],
                entity: vec![1, 2, 1, 2],
                physical: vec![20, 21, 20, 21],
            },
        ],
        entities: vec![],
        groups: vec![
            PhysicalGroup {
                dim: 1,
                tag: 10,
                name: Some("bottom side".into()),
            },
            PhysicalGroup {
                dim: 2,
                tag: 20,
                name: Some("a".into()),
            },
            PhysicalGroup {
                dim: 2,
                tag: 21,
                name: None,
            },
        ],
    };
    let path = dir.join("sparse.msh");
    write_msh(&path, &msh).unwrap();
    let back = read_msh(&path).unwrap();
    assert_eq!(back.coords, msh.coords);
    assert_eq!(back.node_tags, msh.node_tags);
    assert_eq!(back.blocks, msh.blocks);
    assert_eq!(back.groups, msh.groups);
    assert_eq!(back.physical_nodes("bottom side").unwrap(), vec![0, 1]);
    let a = back.physical("a").unwrap();
    assert_eq!(back.group_cells(a), vec![(CellKind::Tri3, vec![0, 2])]);
    // The entities it made up now exist, each with its group.
    let made: Vec<&MshEntity> = back.entities.iter().filter(|e| e.dim == 2).collect();
    assert_eq!(
        made.iter().map(|e| (e.tag, e.physical.clone())).collect::<Vec<_>>(),
        vec![(1, vec![20]), (2, vec![21])]
    );
    // Writing what was read changes nothing more.
    write_msh(&path, &back).unwrap();
    assert_eq!(read_msh(&path).unwrap(), back);
}

/// Contiguous node tags listed out of order: `mshio` drops such tags, the reader must not
/// assume file order.
#[test]
fn contiguous_tags_in_any_order_are_kept() {
    let text = "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n2 4 1 4\n2 1 0 2\n3\n1\n1 1 0\n0 0 0\n2 1 0 2\n4\n2\n0 1 0\n1 0 0\n$EndNodes\n$Elements\n1 2 1 2\n2 1 2 2\n1 1 2 3\n2 1 3 4\n$EndElements\n";
    let msh = parse_msh(text.as_bytes()).unwrap();
    assert_eq!(msh.node_tags, vec![3, 1, 4, 2]);
    let tris = msh.cells(CellKind::Tri3).unwrap();
    let at = |tag: u64| msh.coords[msh.node_tags.iter().position(|&t| t == tag).unwrap()];
    for (e, tags) in [[1u64, 2, 3], [1, 3, 4]].iter().enumerate() {
        let p: Vec<[f64; 3]> = tris.cell(e).iter().map(|&n| msh.coords[n as usize]).collect();
        assert_eq!(p, tags.iter().map(|&t| at(t)).collect::<Vec<_>>());
    }
    assert_eq!(at(1), [0.0, 0.0, 0.0]);
    assert_eq!(at(2), [1.0, 0.0, 0.0]);
    assert_eq!(at(3), [1.0, 1.0, 0.0]);
    assert_eq!(at(4), [0.0, 1.0, 0.0]);
    // No groups, no entities: nothing named, and asking says so.
    assert!(msh.groups.is_empty());
    assert!(msh.boundary_nodes("left").unwrap_err().to_string().contains("none"));
}

/// Three nodes and one element block (`dim entity type count` and its lines).
fn tiny(block: &str) -> String {
    format!(
        "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n1 3 1 3\n2 1 0 3\n1\n2\n3\n0 0 0\n1 0 0\n0 1 0\n$EndNodes\n$Elements\n1 1 1 1\n{block}$EndElements\n"
    )
}

fn mesh_file_error(bytes: &[u8]) -> String {
    match parse_msh(bytes) {
        Err(e @ Error::MeshFile { .. }) => e.to_string(),
        Err(other) => panic!("expected a mesh-file error, got {other:?}"),
        Ok(_) => panic!(
            "a malformed file was accepted:\n{}",
            String::from_utf8_lossy(&bytes[..bytes.len().min(400)])
        ),
    }
}

#[test]
fn malformed_files_are_errors() {
    let plate = std::fs::read(meshes().join("plate.msh")).unwrap();
    let text = String::from_utf8(plate.clone()).unwrap();
    let cases: Vec<(&str, String, &str)> = vec![
        ("empty", String::new(), "$MeshFormat"),
        ("not a mesh", "hello\n".into(), "$MeshFormat"),
        ("version 2.2", text.replacen("4.1 0 8", "2.2 0 8", 1), "version 2.2"),
        ("file type", text.replacen("4.1 0 8", "4.1 2 8", 1), "file type"),
        ("data size", text.replacen("4.1 0 8", "4.1 0 7", 1), "data size"),
        ("bad coordinate", text.replacen("\n0 0 0\n", "\n0 zero 0\n", 1), "line "),
        ("unknown to clforge", tiny("2 1 21 1\n1 1 2 3 1 2 3 1 2 3 1\n"), "type 21"),
        ("unknown to anyone", text.replacen("\n2 1 2 ", "\n2 1 200 ", 1), "type 200"),
        ("missing node", text.replacen("\n1 1 5 \n", "\n1 1 99999 \n", 1), "node tag 99999"),
        ("names unterminated", text.replacen("$EndPhysicalNames", "$EndPhysicalName", 1), "PhysicalNames"),
        ("name count", text.replacen("$PhysicalNames\n5\n", "$PhysicalNames\n6\n", 1), "6 names announced"),
        ("empty sections", "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n0 0 1 1\n$EndNodes\n$Elements\n0 0 1 1\n$EndElements\n".into(), "MSH data"),
        ("lines only", "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n1 2 1 2\n1 1 0 2\n1\n2\n0 0 0\n1 0 0\n$EndNodes\n$Elements\n1 1 1 1\n1 1 1 1\n1 1 2\n$EndElements\n".into(), "1-D"),
    ];
    assert!(parse_msh(tiny("2 1 2 1\n1 1 2 3\n").as_bytes()).is_ok());
    for (what, bytes, needle) in &cases {
        assert_ne!(bytes.as_bytes(), &plate[..], "{what}: the edit did not apply");
        let msg = mesh_file_error(bytes.as_bytes());
        assert!(msg.contains(needle), "{what}: {msg}");
        assert!(msg.len() < 2000, "{what}: a message of {} bytes", msg.len());
    }
    // The bad coordinate is reported at its line.
    let line = 1 + text[..text.find("\n0 0 0\n").unwrap() + 1].matches('\n').count();
    let msg = mesh_file_error(text.replacen("\n0 0 0\n", "\n0 zero 0\n", 1).as_bytes());
    assert!(msg.contains(&format!("line {line}")), "{msg}");

    // Truncated anywhere: an error each time, never a panic; a named file is named.
    let dir = scratch("truncated");
    for cut in (0..37).map(|k| k * (plate.len() - 20) / 37) {
        let msg = mesh_file_error(&plate[..cut]);
        assert!(!msg.is_empty());
    }
    let binary = std::fs::read(meshes().join("box_binary.msh")).unwrap();
    for cut in (0..37).map(|k| k * (binary.len() - 20) / 37) {
        mesh_file_error(&binary[..cut]);
    }
    let path = dir.join("cut.msh");
    std::fs::write(&path, &plate[..plate.len() / 2]).unwrap();
    let msg = read_msh(&path).unwrap_err().to_string();
    assert!(msg.contains("cut.msh"), "{msg}");
    assert!(matches!(read_msh(dir.join("absent.msh")), Err(Error::Io { .. })));
}

#[test]
fn cells_of_one_kind_become_a_mesh_without_orphans() {
    let msh = read_msh(meshes().join("plate.msh")).unwrap();
    let tri = msh.to_mesh(CellKind::Tri3).unwrap();
    assert_eq!(tri.mesh.node_count(), msh.coords.len());
    assert_eq!(tri.mesh.connectivity, msh.cells(CellKind::Tri3).unwrap().connectivity);

    // The boundary lines alone: only boundary nodes remain, each used, in ascending order.
    let lines = msh.to_mesh(CellKind::Line2).unwrap();
    let block = msh.cells(CellKind::Line2).unwrap();
    let used: HashSet<u32> = lines.mesh.connectivity.iter().copied().collect();
    assert_eq!(used.len(), lines.mesh.node_count());
    assert!(lines.mesh.node_count() < msh.coords.len());
    assert!(lines.msh_nodes.windows(2).all(|w| w[0] < w[1]));
    for (e, cell) in lines.mesh.connectivity.chunks(2).enumerate() {
        let original = block.cell(e);
        for k in 0..2 {
            assert_eq!(lines.mesh.coords[cell[k] as usize], msh.coords[original[k] as usize]);
            assert_eq!(lines.node(original[k]), Some(cell[k]));
        }
    }
    assert_eq!(lines.physical, block.physical);
    let left = lines.map_nodes(&msh.boundary_nodes("left").unwrap());
    assert!(left.iter().all(|&n| lines.mesh.coords[n as usize][0] == 0.0));
    let interior = (0..msh.coords.len() as u32).find(|&n| {
        let [x, y, _] = msh.coords[n as usize];
        x > 0.0 && x < 2.0 && y > 0.0 && y < 1.0
    });
    assert_eq!(lines.node(interior.unwrap()), None);

    // A permutation reorders every element's nodes; a non-permutation is refused.
    let flipped = msh.to_mesh_with(CellKind::Tri3, &[0, 2, 1]).unwrap();
    for (a, b) in tri.mesh.connectivity.chunks(3).zip(flipped.mesh.connectivity.chunks(3)) {
        assert_eq!([a[0], a[2], a[1]], [b[0], b[1], b[2]]);
    }
    assert!(matches!(
        msh.to_mesh_with(CellKind::Tri3, &[0, 1, 1]),
        Err(Error::InvalidConfig(_))
    ));
    assert!(matches!(
        msh.to_mesh_with(CellKind::Tri3, &[0, 1]),
        Err(Error::InvalidConfig(_))
    ));
    let err = msh.to_mesh(CellKind::Hex8).unwrap_err().to_string();
    assert!(err.contains("hex8") && err.contains("tri3"), "{err}");
}
