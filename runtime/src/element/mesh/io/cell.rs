//! The cell kinds clforge reads from Gmsh and writes to VTK, with both formats' type numbers
//! and the node-order permutation between them.

/// A Lagrange cell kind, its nodes in Gmsh's local order (which clforge's nodal elements share:
/// `quad4`, `quad9` and `hex8` list their corners counter-clockwise, bottom face first, then
/// edge, face and interior nodes as Gmsh does).
///
/// ```
/// # use clforge_runtime::fem::io::CellKind;
/// assert_eq!(CellKind::from_gmsh(11), Some(CellKind::Tet10));
/// assert_eq!(CellKind::Tet10.nodes(), 10);
/// assert_eq!(CellKind::Tet10.vtk_type(), 24);
/// // VTK lists the tet10 edge nodes (1,3) and (2,3) the other way round.
/// assert_eq!(CellKind::Tet10.vtk_order(), [0, 1, 2, 3, 4, 5, 6, 7, 9, 8]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CellKind {
    /// 1-node point (Gmsh 15, VTK_VERTEX 1).
    Point1,
    /// 2-node line (Gmsh 1, VTK_LINE 3).
    Line2,
    /// 3-node line (Gmsh 8, VTK_QUADRATIC_EDGE 21).
    Line3,
    /// 3-node triangle (Gmsh 2, VTK_TRIANGLE 5).
    Tri3,
    /// 6-node triangle (Gmsh 9, VTK_QUADRATIC_TRIANGLE 22).
    Tri6,
    /// 4-node quadrilateral (Gmsh 3, VTK_QUAD 9).
    Quad4,
    /// 8-node serendipity quadrilateral (Gmsh 16, VTK_QUADRATIC_QUAD 23).
    Quad8,
    /// 9-node quadrilateral (Gmsh 10, VTK_BIQUADRATIC_QUAD 28).
    Quad9,
    /// 4-node tetrahedron (Gmsh 4, VTK_TETRA 10).
    Tet4,
    /// 10-node tetrahedron (Gmsh 11, VTK_QUADRATIC_TETRA 24).
    Tet10,
    /// 8-node hexahedron (Gmsh 5, VTK_HEXAHEDRON 12).
    Hex8,
    /// 20-node serendipity hexahedron (Gmsh 17, VTK_QUADRATIC_HEXAHEDRON 25).
    Hex20,
    /// 27-node hexahedron (Gmsh 12, VTK_TRIQUADRATIC_HEXAHEDRON 29).
    Hex27,
    /// 6-node prism (Gmsh 6, VTK_WEDGE 13).
    Prism6,
    /// 15-node prism (Gmsh 18, VTK_QUADRATIC_WEDGE 26).
    Prism15,
    /// 18-node prism (Gmsh 13, VTK_BIQUADRATIC_QUADRATIC_WEDGE 32).
    Prism18,
    /// 5-node pyramid (Gmsh 7, VTK_PYRAMID 14).
    Pyramid5,
    /// 13-node pyramid (Gmsh 19, VTK_QUADRATIC_PYRAMID 27).
    Pyramid13,
}

// VTK's local node j is Gmsh's local node ORDER[j]. Derived from both libraries' own reference
// elements (gmsh.model.mesh.getElementProperties against vtkCell::GetParametricCoords and the
// edge lists of vtkCell::GetEdge), docs/MESH-FILES.md. Gmsh numbers the edges of a hexahedron
// (0,1) (0,3) (0,4) (1,2) (1,5) (2,3) (2,6) (3,7) (4,5) (4,7) (5,6) (6,7); VTK goes round the
// bottom face, the top face, then up the vertical edges.
const TET10: [usize; 10] = [0, 1, 2, 3, 4, 5, 6, 7, 9, 8];
const HEX20: [usize; 20] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 11, 13, 9, 16, 18, 19, 17, 10, 12, 14, 15];
const HEX27: [usize; 27] = [
    0, 1, 2, 3, 4, 5, 6, 7, 8, 11, 13, 9, 16, 18, 19, 17, 10, 12, 14, 15, 22, 23, 21, 24, 20, 25, 26,
];
const PRISM15: [usize; 15] = [0, 1, 2, 3, 4, 5, 6, 9, 7, 12, 14, 13, 8, 10, 11];
const PRISM18: [usize; 18] = [0, 1, 2, 3, 4, 5, 6, 9, 7, 12, 14, 13, 8, 10, 11, 15, 17, 16];
const PYRAMID13: [usize; 13] = [0, 1, 2, 3, 4, 5, 8, 10, 6, 7, 9, 11, 12];
const IDENTITY: [usize; 27] = {
    let mut a = [0; 27];
    let mut i = 0;
    while i < 27 {
        a[i] = i;
        i += 1;
    }
    a
};

impl CellKind {
    /// Every kind, in order.
    pub const ALL: [CellKind; 18] = [
        CellKind::Point1,
        CellKind::Line2,
        CellKind::Line3,
        CellKind::Tri3,
        CellKind::Tri6,
        CellKind::Quad4,
        CellKind::Quad8,
        CellKind::Quad9,
        CellKind::Tet4,
        CellKind::Tet10,
        CellKind::Hex8,
        CellKind::Hex20,
        CellKind::Hex27,
        CellKind::Prism6,
        CellKind::Prism15,
        CellKind::Prism18,
        CellKind::Pyramid5,
        CellKind::Pyramid13,
    ];

    /// The kind of Gmsh element type `ty` (the number in `$Elements`), if clforge reads it.
    pub fn from_gmsh(ty: i32) -> Option<CellKind> {
        CellKind::ALL.into_iter().find(|k| k.gmsh_type() == ty)
    }

    /// Gmsh's element type number.
    pub fn gmsh_type(self) -> i32 {
        use CellKind::*;
        match self {
            Point1 => 15,
            Line2 => 1,
            Line3 => 8,
            Tri3 => 2,
            Tri6 => 9,
            Quad4 => 3,
            Quad8 => 16,
            Quad9 => 10,
            Tet4 => 4,
            Tet10 => 11,
            Hex8 => 5,
            Hex20 => 17,
            Hex27 => 12,
            Prism6 => 6,
            Prism15 => 18,
            Prism18 => 13,
            Pyramid5 => 7,
            Pyramid13 => 19,
        }
    }

    /// VTK's cell type number (`VTK_TETRA` = 10, ...).
    pub fn vtk_type(self) -> u8 {
        use CellKind::*;
        match self {
            Point1 => 1,
            Line2 => 3,
            Line3 => 21,
            Tri3 => 5,
            Tri6 => 22,
            Quad4 => 9,
            Quad8 => 23,
            Quad9 => 28,
            Tet4 => 10,
            Tet10 => 24,
            Hex8 => 12,
            Hex20 => 25,
            Hex27 => 29,
            Prism6 => 13,
            Prism15 => 26,
            Prism18 => 32,
            Pyramid5 => 14,
            Pyramid13 => 27,
        }
    }

    /// Nodes per cell.
    pub fn nodes(self) -> usize {
        use CellKind::*;
        match self {
            Point1 => 1,
            Line2 => 2,
            Line3 => 3,
            Tri3 => 3,
            Tri6 => 6,
            Quad4 => 4,
            Quad8 => 8,
            Quad9 => 9,
            Tet4 => 4,
            Tet10 => 10,
            Hex8 => 8,
            Hex20 => 20,
            Hex27 => 27,
            Prism6 => 6,
            Prism15 => 15,
            Prism18 => 18,
            Pyramid5 => 5,
            Pyramid13 => 13,
        }
    }

    /// The cell's own dimension (0 points, 1 lines, 2 faces, 3 solids).
    pub fn dim(self) -> usize {
        use CellKind::*;
        match self {
            Point1 => 0,
            Line2 | Line3 => 1,
            Tri3 | Tri6 | Quad4 | Quad8 | Quad9 => 2,
            _ => 3,
        }
    }

    /// Lower-case name, as clforge's element modules are named (`tet10`).
    pub fn name(self) -> &'static str {
        use CellKind::*;
        match self {
            Point1 => "point1",
            Line2 => "line2",
            Line3 => "line3",
            Tri3 => "tri3",
            Tri6 => "tri6",
            Quad4 => "quad4",
            Quad8 => "quad8",
            Quad9 => "quad9",
            Tet4 => "tet4",
            Tet10 => "tet10",
            Hex8 => "hex8",
            Hex20 => "hex20",
            Hex27 => "hex27",
            Prism6 => "prism6",
            Prism15 => "prism15",
            Prism18 => "prism18",
            Pyramid5 => "pyramid5",
            Pyramid13 => "pyramid13",
        }
    }

    /// VTK's local node order: VTK's node `j` is Gmsh's (and clforge's) node `vtk_order()[j]`.
    /// The identity except for the quadratic tetrahedron, hexahedra, prisms and pyramid.
    pub fn vtk_order(self) -> &'static [usize] {
        use CellKind::*;
        match self {
            Tet10 => &TET10,
            Hex20 => &HEX20,
            Hex27 => &HEX27,
            Prism15 => &PRISM15,
            Prism18 => &PRISM18,
            Pyramid13 => &PYRAMID13,
            k => &IDENTITY[..k.nodes()],
        }
    }

    /// The names of every kind, for messages.
    pub(crate) fn names() -> String {
        CellKind::ALL
            .iter()
            .map(|k| format!("{} ({})", k.name(), k.gmsh_type()))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl std::fmt::Display for CellKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_unique_and_orders_are_permutations() {
        for (i, a) in CellKind::ALL.iter().enumerate() {
            for b in &CellKind::ALL[i + 1..] {
                assert_ne!(a.gmsh_type(), b.gmsh_type());
                assert_ne!(a.vtk_type(), b.vtk_type());
            }
            assert_eq!(CellKind::from_gmsh(a.gmsh_type()), Some(*a));
            let mut order = a.vtk_order().to_vec();
            order.sort_unstable();
            assert_eq!(order, (0..a.nodes()).collect::<Vec<_>>(), "{a}");
        }
    }
}
