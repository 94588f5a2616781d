//! VTK files: grids and series written by clforge read back with `vtkio`, against VTK's own
//! node-order definitions of higher-order cells.

use super::*;

/// The single inline piece of an unstructured grid read by `vtkio`.
fn read_grid(path: &Path) -> UnstructuredGridPiece {
    let vtk = vtkio::Vtk::import(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let DataSet::UnstructuredGrid { pieces, .. } = vtk.data else {
        panic!("not an unstructured grid")
    };
    assert_eq!(pieces.len(), 1);
    match pieces.into_iter().next().unwrap() {
        Piece::Inline(p) => *p,
        _ => panic!("piece not inline"),
    }
}

fn cells_of(piece: &UnstructuredGridPiece) -> (Vec<Vec<u64>>, Vec<CellType>) {
    let (conn, offsets) = piece.cells.cell_verts.clone().into_xml();
    let mut cells = Vec::new();
    let mut start = 0;
    for &end in &offsets {
        cells.push(conn[start as usize..end as usize].to_vec());
        start = end;
    }
    (cells, piece.cells.types.clone())
}

fn array(attributes: &[Attribute], name: &str) -> (usize, Vec<f64>) {
    for a in attributes {
        match a {
            Attribute::DataArray(d) if d.name == name => {
                return (d.num_comp(), d.data.cast_into::<f64>().unwrap());
            }
            Attribute::Field { data_array, .. } => {
                if let Some(f) = data_array.iter().find(|f| f.name == name) {
                    return (f.num_comp(), f.data.cast_into::<f64>().unwrap());
                }
            }
            _ => {}
        }
    }
    panic!("no array `{name}`")
}

#[test]
fn triangle_grid_reads_back() {
    let msh = read_msh(meshes().join("plate.msh")).unwrap();
    let plate = msh.to_mesh(CellKind::Tri3).unwrap().mesh;
    let (n, m) = (plate.node_count(), plate.element_count());
    let u: Vec<f32> = (0..2 * n).map(|i| (i as f32 * 0.37).sin()).collect();
    let v: Vec<f64> = (0..2 * n).map(|i| (i as f64 * 0.11).cos()).collect();
    let temperature: Vec<f64> = (0..n).map(|i| i as f64 / 7.0).collect();
    let stress: Vec<f64> = (0..3 * m).map(|i| i as f64 * 1e3 - 5.0).collect();
    let material: Vec<f32> = (0..m).map(|e| (e % 3) as f32).collect();
    let fields = [
        Field::displacement(2, &u).unwrap(),
        Field::velocity(2, &v).unwrap(),
        Field::point("temperature", 1, &temperature),
        Field::stress(2, &stress).unwrap(),
        Field::cell("material", 1, &material),
    ];
    let dir = scratch("tri");
    for file in ["plate.vtu"] {
        let path = dir.join(file);
        write_vtu(&path, &plate, CellKind::Tri3, &fields).unwrap();
        let grid = read_grid(&path);
        let points = grid.points.cast_into::<f64>().unwrap();
        assert_eq!(
            points,
            plate.coords.iter().flatten().copied().collect::<Vec<_>>(),
            "{file}"
        );
        let (cells, types) = cells_of(&grid);
        assert_eq!(cells.len(), m);
        assert!(types.iter().all(|&t| t == CellType::Triangle));
        for (e, c) in cells.iter().enumerate() {
            assert_eq!(c, &plate.element_nodes(e).iter().map(|&i| i as u64).collect::<Vec<_>>());
        }
        let (k, d) = array(&grid.data.point, "displacement");
        assert_eq!(k, 3);
        for i in 0..n {
            assert_eq!(
                d[3 * i..3 * i + 3],
                [u[2 * i] as f64, u[2 * i + 1] as f64, 0.0],
                "{file}"
            );
        }
        let (k, d) = array(&grid.data.point, "velocity");
        assert_eq!(k, 3);
        for i in 0..n {
            assert_eq!(d[3 * i..3 * i + 3], [v[2 * i], v[2 * i + 1], 0.0]);
        }
        assert_eq!(array(&grid.data.point, "temperature"), (1, temperature.clone()));
        assert_eq!(array(&grid.data.cell, "stress"), (3, stress.clone()));
        let (k, d) = array(&grid.data.cell, "material");
        assert_eq!((k, d), (1, material.iter().map(|&x| x as f64).collect()));
    }
}

/// VTK's quadratic and higher cells: each node after the corners, defined as the mean of some
/// corners, in VTK's own numbering (VTK's parametric coordinates and `GetEdge` lists; the
/// triquadratic hexahedron's faces are x = 0, x = 1, y = 0, y = 1, z = 0, z = 1).
fn vtk_definition(kind: CellKind) -> Vec<(usize, Vec<usize>)> {
    let d: &[(usize, &[usize])] = match kind {
        CellKind::Tri6 => &[(3, &[0, 1]), (4, &[1, 2]), (5, &[2, 0])],
        CellKind::Quad9 => &[
            (4, &[0, 1]),
            (5, &[1, 2]),
            (6, &[2, 3]),
            (7, &[3, 0]),
            (8, &[0, 1, 2, 3]),
        ],
        CellKind::Tet10 => &[
            (4, &[0, 1]),
            (5, &[1, 2]),
            (6, &[0, 2]),
            (7, &[0, 3]),
            (8, &[1, 3]),
            (9, &[2, 3]),
        ],
        CellKind::Hex27 => &[
            (8, &[0, 1]),
            (9, &[1, 2]),
            (10, &[2, 3]),
            (11, &[3, 0]),
            (12, &[4, 5]),
            (13, &[5, 6]),
            (14, &[6, 7]),
            (15, &[7, 4]),
            (16, &[0, 4]),
            (17, &[1, 5]),
            (18, &[2, 6]),
            (19, &[3, 7]),
            (20, &[0, 3, 7, 4]),
            (21, &[1, 2, 6, 5]),
            (22, &[0, 1, 5, 4]),
            (23, &[3, 2, 6, 7]),
            (24, &[0, 1, 2, 3]),
            (25, &[4, 5, 6, 7]),
            (26, &[0, 1, 2, 3, 4, 5, 6, 7]),
        ],
        CellKind::Prism18 => &[
            (6, &[0, 1]),
            (7, &[1, 2]),
            (8, &[2, 0]),
            (9, &[3, 4]),
            (10, &[4, 5]),
            (11, &[5, 3]),
            (12, &[0, 3]),
            (13, &[1, 4]),
            (14, &[2, 5]),
            (15, &[0, 1, 4, 3]),
            (16, &[1, 2, 5, 4]),
            (17, &[2, 0, 3, 5]),
        ],
        CellKind::Pyramid13 => &[
            (5, &[0, 1]),
            (6, &[1, 2]),
            (7, &[2, 3]),
            (8, &[3, 0]),
            (9, &[0, 4]),
            (10, &[1, 4]),
            (11, &[2, 4]),
            (12, &[3, 4]),
        ],
        _ => &[],
    };
    d.iter().map(|(i, c)| (*i, c.to_vec())).collect()
}

/// The same for Gmsh's numbering (Gmsh reference manual, "Node ordering"; checked against
/// `gmsh.model.mesh.getElementProperties`).
fn gmsh_definition(kind: CellKind) -> Vec<(usize, Vec<usize>)> {
    let d: &[(usize, &[usize])] = match kind {
        CellKind::Tri6 => &[(3, &[0, 1]), (4, &[1, 2]), (5, &[2, 0])],
        CellKind::Quad9 => &[
            (4, &[0, 1]),
            (5, &[1, 2]),
            (6, &[2, 3]),
            (7, &[3, 0]),
            (8, &[0, 1, 2, 3]),
        ],
        CellKind::Tet10 => &[
            (4, &[0, 1]),
            (5, &[1, 2]),
            (6, &[0, 2]),
            (7, &[0, 3]),
            (8, &[2, 3]),
            (9, &[1, 3]),
        ],
        CellKind::Hex27 => &[
            (8, &[0, 1]),
            (9, &[0, 3]),
            (10, &[0, 4]),
            (11, &[1, 2]),
            (12, &[1, 5]),
            (13, &[2, 3]),
            (14, &[2, 6]),
            (15, &[3, 7]),
            (16, &[4, 5]),
            (17, &[4, 7]),
            (18, &[5, 6]),
            (19, &[6, 7]),
            (20, &[0, 1, 2, 3]),
            (21, &[0, 1, 5, 4]),
            (22, &[0, 3, 7, 4]),
            (23, &[1, 2, 6, 5]),
            (24, &[2, 3, 7, 6]),
            (25, &[4, 5, 6, 7]),
            (26, &[0, 1, 2, 3, 4, 5, 6, 7]),
        ],
        CellKind::Prism18 => &[
            (6, &[0, 1]),
            (7, &[0, 2]),
            (8, &[0, 3]),
            (9, &[1, 2]),
            (10, &[1, 4]),
            (11, &[2, 5]),
            (12, &[3, 4]),
            (13, &[3, 5]),
            (14, &[4, 5]),
            (15, &[0, 1, 4, 3]),
            (16, &[0, 2, 5, 3]),
            (17, &[1, 2, 5, 4]),
        ],
        CellKind::Pyramid13 => &[
            (5, &[0, 1]),
            (6, &[0, 3]),
            (7, &[0, 4]),
            (8, &[1, 2]),
            (9, &[1, 4]),
            (10, &[2, 3]),
            (11, &[2, 4]),
            (12, &[3, 4]),
        ],
        _ => &[],
    };
    d.iter().map(|(i, c)| (*i, c.to_vec())).collect()
}

fn mean(points: &[[f64; 3]], of: &[usize]) -> [f64; 3] {
    let mut m = [0.0; 3];
    for &i in of {
        for k in 0..3 {
            m[k] += points[i][k] / of.len() as f64;
        }
    }
    m
}

/// One cell of `kind` built in Gmsh's order (from `corners`, truncated to `nodes`), then the
/// VTK file read back must hold the nodes where VTK's definition puts them.
fn check_vtk_order(kind: CellKind, full: CellKind, corners: &[[f64; 3]]) {
    let n = kind.nodes();
    let mut gmsh: Vec<[f64; 3]> = corners.to_vec();
    for (i, of) in gmsh_definition(full) {
        assert_eq!(i, gmsh.len());
        gmsh.push(mean(corners, &of));
    }
    gmsh.truncate(n);
    let mesh = UnstructuredMesh::new(gmsh.clone(), n, (0..n as u32).collect()).unwrap();
    let path = scratch(&format!("order-{kind}")).join("cell.vtu");
    write_vtu(&path, &mesh, kind, &[Field::cell("id", 1, &[7.0f64])]).unwrap();
    let grid = read_grid(&path);
    let (cells, types) = cells_of(&grid);
    assert_eq!(types[0] as u8, kind.vtk_type());
    let points = grid.points.cast_into::<f64>().unwrap();
    let at = |j: usize| {
        let p = cells[0][j] as usize;
        [points[3 * p], points[3 * p + 1], points[3 * p + 2]]
    };
    for (j, corner) in corners.iter().enumerate() {
        assert_eq!(at(j), *corner, "{kind}: corner {j}");
    }
    for (j, of) in vtk_definition(full).into_iter().filter(|(j, _)| *j < n) {
        let want = mean(corners, &of);
        let got = at(j);
        assert!(
            norm(sub(got, want)) < 1e-12,
            "{kind}: VTK node {j} at {got:?}, VTK puts it at {want:?}"
        );
    }
}

#[test]
fn vtk_node_orders_of_higher_order_cells() {
    // Distorted corners: every mean of a different corner set lands somewhere else.
    let hex = [
        [0.0, 0.0, 0.0],
        [1.1, 0.1, 0.0],
        [1.3, 1.2, 0.1],
        [-0.1, 0.9, 0.2],
        [0.1, -0.2, 1.0],
        [1.0, 0.0, 1.3],
        [1.2, 1.1, 1.1],
        [0.2, 1.0, 0.9],
    ];
    check_vtk_order(CellKind::Hex20, CellKind::Hex27, &hex);
    check_vtk_order(CellKind::Hex27, CellKind::Hex27, &hex);
    let prism = [hex[0], hex[1], hex[3], hex[4], hex[5], hex[7]];
    check_vtk_order(CellKind::Prism15, CellKind::Prism18, &prism);
    check_vtk_order(CellKind::Prism18, CellKind::Prism18, &prism);
    check_vtk_order(
        CellKind::Pyramid13,
        CellKind::Pyramid13,
        &[hex[0], hex[1], hex[2], hex[3], [0.5, 0.4, 1.2]],
    );
    check_vtk_order(CellKind::Tet10, CellKind::Tet10, &[hex[0], hex[1], hex[3], hex[4]]);
    check_vtk_order(CellKind::Quad8, CellKind::Quad9, &hex[..4]);
    check_vtk_order(CellKind::Quad9, CellKind::Quad9, &hex[..4]);
    check_vtk_order(CellKind::Tri6, CellKind::Tri6, &hex[..3]);
}

#[test]
fn tet10_grid_reads_back() {
    // The box's tetrahedra made quadratic: one node per edge, in Gmsh's tet10 order.
    let msh = read_msh(meshes().join("box.msh")).unwrap();
    let tet4 = msh.to_mesh(CellKind::Tet4).unwrap().mesh;
    let mut coords = tet4.coords.clone();
    let mut mid: HashMap<(u32, u32), u32> = HashMap::new();
    let mut connectivity = Vec::new();
    for c in tet4.connectivity.chunks(4) {
        connectivity.extend_from_slice(c);
        for (a, b) in [(0, 1), (1, 2), (0, 2), (0, 3), (2, 3), (1, 3)] {
            let key = (c[a].min(c[b]), c[a].max(c[b]));
            let n = *mid.entry(key).or_insert_with(|| {
                coords.push(mean(&tet4.coords, &[c[a] as usize, c[b] as usize]));
                coords.len() as u32 - 1
            });
            connectivity.push(n);
        }
    }
    let mesh = UnstructuredMesh::new(coords, 10, connectivity).unwrap();
    let (n, m) = (mesh.node_count(), mesh.element_count());
    let u: Vec<f64> = mesh.coords.iter().flat_map(|p| [p[0] * p[1], p[2], -p[0]]).collect();
    // 3-D stress in clforge's order (xx, yy, zz, yz, xz, xy): xx = 6e + 1, ..., xy = 6e + 6.
    let stress: Vec<f32> = (0..6 * m).map(|i| (i + 1) as f32).collect();
    let path = scratch("tet10").join("box.vtu");
    write_vtu(
        &path,
        &mesh,
        CellKind::Tet10,
        &[Field::displacement(3, &u).unwrap(), Field::stress(3, &stress).unwrap()],
    )
    .unwrap();

    let grid = read_grid(&path);
    let points = grid.points.cast_into::<f64>().unwrap();
    assert_eq!(points.len(), 3 * n);
    let (cells, types) = cells_of(&grid);
    assert_eq!(cells.len(), m);
    assert!(types.iter().all(|&t| t == CellType::QuadraticTetra));
    let p = |i: u64| {
        [
            points[3 * i as usize],
            points[3 * i as usize + 1],
            points[3 * i as usize + 2],
        ]
    };
    for (e, c) in cells.iter().enumerate() {
        // Corners as given, positive volume, edge nodes where VTK's tet10 has them.
        assert_eq!(
            &c[..4],
            &mesh.element_nodes(e)[..4].iter().map(|&i| i as u64).collect::<Vec<_>>()[..]
        );
        let corners: Vec<[f64; 3]> = c[..4].iter().map(|&i| p(i)).collect();
        assert!(
            dot(
                sub(corners[3], corners[0]),
                cross(sub(corners[1], corners[0]), sub(corners[2], corners[0]))
            ) > 0.0
        );
        for (j, of) in vtk_definition(CellKind::Tet10) {
            assert!(norm(sub(p(c[j]), mean(&corners, &of))) < 1e-15, "cell {e} node {j}");
        }
    }
    let (k, d) = array(&grid.data.point, "displacement");
    assert_eq!((k, d), (3, u));
    let (k, s) = array(&grid.data.cell, "stress");
    assert_eq!(k, 6);
    for e in 0..m {
        let b = 6.0 * e as f64;
        assert_eq!(
            s[6 * e..6 * e + 6],
            [b + 1.0, b + 2.0, b + 3.0, b + 6.0, b + 4.0, b + 5.0],
            "cell {e}"
        );
    }
}

#[test]
fn series_writes_a_collection_of_every_step() {
    let msh = read_msh(meshes().join("plate.msh")).unwrap();
    let plate = msh.to_mesh(CellKind::Tri3).unwrap().mesh;
    let n = plate.node_count();
    let dir = scratch("series").join("out");
    let mut series = VtkSeries::new(&dir, "plate").unwrap();
    let times = [0.0, 2.5e-4, 5e-4, 1e-3];
    for (s, &t) in times.iter().enumerate() {
        let u: Vec<f32> = (0..2 * n).map(|i| (s * i) as f32 * 1e-3).collect();
        let path = series
            .write(t, &plate, CellKind::Tri3, &[Field::displacement(2, &u).unwrap()])
            .unwrap();
        assert_eq!(path, dir.join(format!("plate_{s:04}.vtu")));
    }
    assert!(
        series.write(1e-3, &plate, CellKind::Tri3, &[]).is_err(),
        "time must advance"
    );
    assert!(series.write(f64::NAN, &plate, CellKind::Tri3, &[]).is_err());
    assert_eq!(series.steps().len(), times.len());

    let pvd = std::fs::read_to_string(series.pvd()).unwrap();
    assert!(
        pvd.starts_with("<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\""),
        "{pvd}"
    );
    assert!(pvd.trim_end().ends_with("</Collection>\n</VTKFile>"), "{pvd}");
    let entries: Vec<(f64, String)> = pvd
        .lines()
        .filter(|l| l.trim_start().starts_with("<DataSet "))
        .map(|l| {
            let attr = |name: &str| {
                let start = l.find(&format!("{name}=\"")).unwrap() + name.len() + 2;
                l[start..start + l[start..].find('"').unwrap()].to_string()
            };
            (attr("timestep").parse().unwrap(), attr("file"))
        })
        .collect();
    assert_eq!(entries.len(), times.len());
    for (s, (t, file)) in entries.iter().enumerate() {
        assert_eq!(*t, times[s]);
        assert_eq!(file, &format!("plate_{s:04}.vtu"));
        let (_, d) = array(&read_grid(&dir.join(file)).data.point, "displacement");
        assert_eq!(d[3], ((s * 2) as f32 * 1e-3) as f64, "step {s}");
    }
    assert!(!dir.join(".plate.pvd.tmp").exists());
    assert!(VtkSeries::new(&dir, "a/b").is_err());
    assert!(VtkSeries::new(&dir, "").is_err());

    // A second series of the same collection (also by another spelling of the directory) is
    // refused while the first lives, and leaves the first one's collection as it was.
    let before = std::fs::read(series.pvd()).unwrap();
    let again = dir.join("..").join("out");
    match VtkSeries::new(&again, "plate") {
        Err(Error::InvalidConfig(msg)) => assert!(msg.contains("already open") && msg.contains("stem"), "{msg}"),
        other => panic!("second series: {other:?}"),
    }
    assert_eq!(std::fs::read(series.pvd()).unwrap(), before);
    let other = VtkSeries::new(&dir, "plate-b").unwrap();
    drop(series);
    drop(other);
    assert!(
        VtkSeries::new(&dir, "plate").is_ok(),
        "a dropped series releases its collection"
    );
}

#[test]
fn vtk_inputs_are_checked() {
    let mesh = UnstructuredMesh::new(vec![[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], 3, vec![0, 1, 2]).unwrap();
    let dir = scratch("checks");
    let path = dir.join("t.vtu");
    let short = Field::point("p", 1, &[1.0f64, 2.0]);
    assert!(matches!(
        write_vtu(&path, &mesh, CellKind::Tri3, &[short]),
        Err(Error::LengthMismatch {
            expected: 3,
            found: 2,
            ..
        })
    ));
    let per_node = Field::cell("c", 1, &[1.0f32, 2.0, 3.0]);
    assert!(matches!(
        write_vtu(&path, &mesh, CellKind::Tri3, &[per_node]),
        Err(Error::LengthMismatch {
            expected: 1,
            found: 3,
            ..
        })
    ));
    let twice = [Field::cell("c", 1, &[1.0f32]), Field::cell("c", 1, &[2.0f32])];
    assert!(matches!(
        write_vtu(&path, &mesh, CellKind::Tri3, &twice),
        Err(Error::InvalidConfig(_))
    ));
    assert!(matches!(
        write_vtu(&path, &mesh, CellKind::Tet4, &[]),
        Err(Error::LengthMismatch {
            expected: 4,
            found: 3,
            ..
        })
    ));
    assert!(matches!(
        write_vtu(dir.join("t.txt"), &mesh, CellKind::Tri3, &[]),
        Err(Error::InvalidConfig(_))
    ));
    assert!(Field::displacement(2, &[1.0f64, 2.0, 3.0]).is_err());
    assert!(Field::displacement(4, &[1.0f64; 8]).is_err());
    assert!(Field::stress(3, &[1.0f64; 3]).is_err());
    assert!(Field::stress(1, &[1.0f64; 3]).is_err());
    assert!(!path.exists(), "nothing is written for a refused call");
    write_vtu(&path, &mesh, CellKind::Tri3, &[]).unwrap();
    assert!(path.exists());
}

/// A missing directory is an I/O error naming the file (not an XML error), nothing is created,
/// and a refused rewrite leaves the previous file whole.
#[test]
fn vtk_writes_fail_with_the_path_and_keep_the_previous_file() {
    let mesh = UnstructuredMesh::new(vec![[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], 3, vec![0, 1, 2]).unwrap();
    let dir = scratch("atomic");
    let missing = dir.join("no-such-dir").join("t.vtu");
    match write_vtu(&missing, &mesh, CellKind::Tri3, &[]) {
        Err(Error::Io { what, .. }) => assert!(what.contains("no-such-dir"), "{what}"),
        other => panic!("expected an I/O error naming the path, got {other:?}"),
    }
    assert!(!dir.join("no-such-dir").exists());
    let path = dir.join("t.vtu");
    write_vtu(&path, &mesh, CellKind::Tri3, &[Field::cell("id", 1, &[7.0f64])]).unwrap();
    let before = std::fs::read(&path).unwrap();
    let short = Field::point("p", 1, &[1.0f64, 2.0]);
    assert!(write_vtu(&path, &mesh, CellKind::Tri3, &[short]).is_err());
    assert_eq!(std::fs::read(&path).unwrap(), before);
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
}

/// A failed `.pvd` write leaves the series as it was: the same step at the same time may be
/// written again once the cause is gone, and the collection then lists every step once.
#[test]
fn a_failed_collection_write_can_be_retried_at_the_same_time() {
    let mesh = UnstructuredMesh::new(vec![[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], 3, vec![0, 1, 2]).unwrap();
    let dir = scratch("pvd-retry");
    let mut series = VtkSeries::new(&dir, "s").unwrap();
    series.write(0.0, &mesh, CellKind::Tri3, &[]).unwrap();
    // A directory where the collection goes: renaming the new `.pvd` over it fails.
    std::fs::remove_file(series.pvd()).unwrap();
    std::fs::create_dir(series.pvd()).unwrap();
    assert!(matches!(
        series.write(1.0, &mesh, CellKind::Tri3, &[]),
        Err(Error::Io { .. })
    ));
    assert_eq!(series.steps().len(), 1);
    std::fs::remove_dir(series.pvd()).unwrap();
    series.write(1.0, &mesh, CellKind::Tri3, &[]).unwrap();
    assert_eq!(series.steps().len(), 2);
    let pvd = std::fs::read_to_string(series.pvd()).unwrap();
    assert_eq!(pvd.matches("<DataSet ").count(), 2, "{pvd}");
}
