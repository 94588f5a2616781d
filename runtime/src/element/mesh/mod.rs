//! Meshes for the explicit element stepping: structured grids of alike elements (seed 000) and
//! unstructured meshes given as node coordinates and element→node index arrays, plus the
//! per-element material and crack data of seed algorithm 4.

pub mod io;
pub mod modal;

use crate::element::spec::ElementSpec;
use crate::error::{Error, Result};

/// `nx × ny [× nz]` elements of one type on a regular node grid, nodes numbered x fastest.
///
/// ```
/// # use clforge_runtime::fem::mesh::StructuredMesh;
/// let m = StructuredMesh::new(2, 1, [3, 2, 1], [1.0, 1.0, 1.0]).unwrap();
/// assert_eq!(m.nodes(), [4, 3, 1]);
/// assert_eq!(m.node_index([1, 2, 0]), 9);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct StructuredMesh {
    /// Spatial dimension (2 or 3).
    pub dim: usize,
    /// Node-grid steps per element edge (1 linear, 2 quadratic).
    pub order: usize,
    /// Elements along x, y, z (z is 1 in 2-D).
    pub elements: [usize; 3],
    /// Element edge lengths along x, y, z.
    pub size: [f64; 3],
}

impl StructuredMesh {
    /// A grid of `elements` elements of edge lengths `size`; in 2-D `elements[2]` must be 1.
    /// The checks are [`StructuredMesh::check`]'s.
    pub fn new(dim: usize, order: usize, elements: [usize; 3], size: [f64; 3]) -> Result<Self> {
        let mesh = StructuredMesh {
            dim,
            order,
            elements,
            size,
        };
        mesh.check()?;
        Ok(mesh)
    }

    /// Dimension 2 or 3, order at least 1, at least one element per axis (one in z in 2-D),
    /// positive finite sizes, node and element counts that fit `usize` and node indices that
    /// fit the connectivity's `u32`. The fields are public, so models and steppers check a
    /// mesh again through this.
    pub fn check(&self) -> Result<()> {
        let (dim, order, elements, size) = (self.dim, self.order, self.elements, self.size);
        if !(2..=3).contains(&dim) || order == 0 {
            return Err(Error::InvalidConfig(format!(
                "a structured mesh needs dimension 2 or 3 and order >= 1, got dimension {dim}, order {order}"
            )));
        }
        if elements.contains(&0) || (dim == 2 && elements[2] != 1) {
            return Err(Error::InvalidConfig(format!(
                "structured mesh of {elements:?} elements: every count must be >= 1 and a 2-D mesh has 1 in z"
            )));
        }
        if size[..dim].iter().any(|&h| !(h.is_finite() && h > 0.0)) {
            return Err(Error::InvalidConfig(format!(
                "element size {size:?} must be positive and finite"
            )));
        }
        let too_large = |detail: String| Error::TooLarge {
            what: format!("structured mesh of {elements:?} elements of order {order}"),
            detail,
        };
        let mut nodes = 1usize;
        for &n in &elements[..dim] {
            nodes = order
                .checked_mul(n)
                .and_then(|n| n.checked_add(1))
                .and_then(|n| n.checked_mul(nodes))
                .ok_or_else(|| too_large("its node count overflows usize".into()))?;
        }
        if nodes - 1 > u32::MAX as usize {
            return Err(too_large(format!(
                "its {nodes} nodes pass the element→node arrays' 32-bit indices (at most 2^32 nodes)"
            )));
        }
        Ok(())
    }

    /// The mesh for elements of type `spec`.
    pub fn for_element(spec: &ElementSpec, elements: [usize; 3], size: [f64; 3]) -> Result<Self> {
        Self::new(spec.dim, spec.order, elements, size)
    }

    // The accessors below saturate rather than panic on a mesh whose public fields were set
    // to sizes `new` refuses; models and steppers check the mesh (`checked_counts`) first.

    /// Nodes along x, y, z.
    pub fn nodes(&self) -> [usize; 3] {
        std::array::from_fn(|k| {
            if k < self.dim {
                self.order.saturating_mul(self.elements[k]).saturating_add(1)
            } else {
                1
            }
        })
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.nodes().iter().fold(1, |a, &n| a.saturating_mul(n))
    }

    /// Number of elements.
    pub fn element_count(&self) -> usize {
        self.elements.iter().fold(1, |a, &n| a.saturating_mul(n))
    }

    /// Index of node `(ix, iy, iz)`.
    pub fn node_index(&self, i: [usize; 3]) -> usize {
        let n = self.nodes();
        i[0].saturating_add(n[0].saturating_mul(i[1].saturating_add(n[1].saturating_mul(i[2]))))
    }

    /// Position of node `i`.
    pub fn node_position(&self, node: usize) -> [f64; 3] {
        let [nx, ny, _] = self.nodes().map(|n| n.max(1));
        let i = [node % nx, (node / nx) % ny, node / nx / ny];
        std::array::from_fn(|k| i[k] as f64 * self.size[k] / self.order as f64)
    }

    /// Index of element `(ex, ey, ez)`.
    pub fn element_index(&self, e: [usize; 3]) -> usize {
        let [nx, ny, _] = self.elements;
        e[0].saturating_add(nx.saturating_mul(e[1].saturating_add(ny.saturating_mul(e[2]))))
    }

    /// Coordinates of element `e`.
    pub fn element_coords(&self, e: usize) -> [usize; 3] {
        let [nx, ny, _] = self.elements.map(|n| n.max(1));
        [e % nx, (e / nx) % ny, e / nx / ny]
    }

    /// Node indices of element `e` in the local order of `offsets` (the element's node offsets).
    pub fn element_nodes(&self, offsets: &[[usize; 3]], e: usize) -> Vec<usize> {
        let c = self.element_coords(e);
        offsets
            .iter()
            .map(|o| {
                self.node_index(std::array::from_fn(|k| {
                    self.order.saturating_mul(c[k]).saturating_add(o[k])
                }))
            })
            .collect()
    }

    /// Element→node index array, `offsets.len()` entries per element.
    pub fn connectivity(&self, offsets: &[[usize; 3]]) -> Vec<u32> {
        (0..self.element_count())
            .flat_map(|e| self.element_nodes(offsets, e))
            .map(|n| u32::try_from(n).unwrap_or(u32::MAX))
            .collect()
    }

    /// The shortest distance between nodes (Δx of seed 000 eq. 3.3.2).
    pub fn min_spacing(&self) -> f64 {
        self.size
            .iter()
            .take(self.dim)
            .fold(f64::INFINITY, |a, &h| a.min(h / self.order as f64))
    }
}

/// Node coordinates and element→node index arrays.
#[derive(Clone, Debug, PartialEq)]
pub struct UnstructuredMesh {
    /// Node positions.
    pub coords: Vec<[f64; 3]>,
    /// Nodes per element.
    pub nodes_per_element: usize,
    /// `nodes_per_element` node indices per element.
    pub connectivity: Vec<u32>,
}

impl UnstructuredMesh {
    /// Checks that every index names a node and the array holds whole elements.
    pub fn new(coords: Vec<[f64; 3]>, nodes_per_element: usize, connectivity: Vec<u32>) -> Result<Self> {
        let mesh = UnstructuredMesh {
            coords,
            nodes_per_element,
            connectivity,
        };
        mesh.check()?;
        Ok(mesh)
    }

    /// The checks of [`UnstructuredMesh::new`]: whole elements, every index names a node, every
    /// coordinate finite. The fields are public, so models and steppers check again.
    pub fn check(&self) -> Result<()> {
        let (npe, conn) = (self.nodes_per_element, &self.connectivity);
        if npe == 0 || !conn.len().is_multiple_of(npe) || conn.is_empty() {
            return Err(Error::InvalidConfig(format!(
                "element→node array of {} entries does not hold whole elements of {npe} nodes",
                conn.len()
            )));
        }
        if let Some((i, bad)) = conn.iter().enumerate().find(|&(_, &n)| n as usize >= self.coords.len()) {
            return Err(Error::InvalidConfig(format!(
                "element {} names node {bad}, but the mesh has {} nodes",
                i / npe,
                self.coords.len()
            )));
        }
        if let Some(n) = self.coords.iter().position(|p| p.iter().any(|v| !v.is_finite())) {
            return Err(Error::InvalidConfig(format!(
                "node {n} is at {:?}; coordinates must be finite",
                self.coords[n]
            )));
        }
        Ok(())
    }

    /// A structured mesh of elements with node `offsets` written as an unstructured one,
    /// without orphan nodes: grid nodes that no element uses (the element centres of an
    /// order-2 grid under 8-node serendipity quads) are dropped and the others keep the grid's
    /// order. Where the elements use every grid node (quad4, quad9, hex8) the numbering is the
    /// grid's; [`UnstructuredMesh::compact`] gives the map from grid nodes to mesh nodes.
    ///
    /// ```
    /// # use clforge_runtime::fem::mesh::{StructuredMesh, UnstructuredMesh};
    /// // Corners and mid-sides of an order-2 grid (an 8-node serendipity quad): 2 × 1 elements
    /// // use 13 of the grid's 15 nodes.
    /// let quad8 = [[0, 0, 0], [2, 0, 0], [2, 2, 0], [0, 2, 0], [1, 0, 0], [2, 1, 0], [1, 2, 0], [0, 1, 0]];
    /// let grid = StructuredMesh::new(2, 2, [2, 1, 1], [1.0; 3]).unwrap();
    /// let mesh = UnstructuredMesh::from_structured(&grid, &quad8).unwrap();
    /// assert_eq!((grid.node_count(), mesh.node_count()), (15, 13));
    /// ```
    pub fn from_structured(m: &StructuredMesh, offsets: &[[usize; 3]]) -> Result<Self> {
        let coords = (0..m.node_count()).map(|n| m.node_position(n)).collect();
        Ok(Self::new(coords, offsets.len(), m.connectivity(offsets))?.compact()?.0)
    }

    /// This mesh without the nodes that belong to no element, the others renumbered in their
    /// order, and for each old node its new index (`None` where it was dropped).
    ///
    /// ```
    /// # use clforge_runtime::fem::mesh::UnstructuredMesh;
    /// let coords = vec![[0.0, 0.0, 0.0], [9.0, 9.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0]];
    /// let mesh = UnstructuredMesh::new(coords, 4, vec![0, 2, 3, 4]).unwrap();
    /// let (compact, map) = mesh.compact().unwrap();
    /// assert_eq!(compact.connectivity, [0, 1, 2, 3]);
    /// assert_eq!(map, [Some(0), None, Some(1), Some(2), Some(3)]);
    /// ```
    pub fn compact(&self) -> Result<(Self, Vec<Option<u32>>)> {
        self.check()?;
        let mut used = vec![false; self.node_count()];
        for &n in &self.connectivity {
            used[n as usize] = true;
        }
        let mut next = 0u32;
        let map: Vec<Option<u32>> = used
            .iter()
            .map(|&u| {
                u.then(|| {
                    next += 1;
                    next - 1
                })
            })
            .collect();
        let coords = self
            .coords
            .iter()
            .zip(&used)
            .filter(|(_, &u)| u)
            .map(|(p, _)| *p)
            .collect();
        // Every index names a used node, so every map entry read here is `Some`.
        let connectivity = self.connectivity.iter().filter_map(|&n| map[n as usize]).collect();
        let mesh = Self::new(coords, self.nodes_per_element, connectivity)?;
        Ok((mesh, map))
    }

    /// Number of elements (0 if `nodes_per_element` is 0).
    pub fn element_count(&self) -> usize {
        self.connectivity.len().checked_div(self.nodes_per_element).unwrap_or(0)
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.coords.len()
    }

    /// Node indices of element `e` (empty if there is no element `e`).
    pub fn element_nodes(&self, e: usize) -> &[u32] {
        let npe = self.nodes_per_element;
        e.checked_mul(npe)
            .and_then(|a| self.connectivity.get(a..a.checked_add(npe)?))
            .unwrap_or(&[])
    }

    /// The shortest distance between two nodes of one element (Δx of seed 000 eq. 3.3.2).
    pub fn min_spacing(&self) -> f64 {
        let mut best = f64::INFINITY;
        for e in 0..self.element_count() {
            let n = self.element_nodes(e);
            for (i, &a) in n.iter().enumerate() {
                for &b in &n[i + 1..] {
                    let (Some(p), Some(q)) = (self.coords.get(a as usize), self.coords.get(b as usize)) else {
                        continue;
                    };
                    let d = (0..3).map(|k| (p[k] - q[k]).powi(2)).sum::<f64>().sqrt();
                    if d > 0.0 {
                        best = best.min(d);
                    }
                }
            }
        }
        best
    }

    /// Greedy colouring: elements in order take the lowest colour not used by an element that
    /// shares a node, so elements of one colour can scatter forces without races; then one pass
    /// of iterated greedy (Culberson): the elements again, the last colour class first, which
    /// never needs more colours and on large meshes removes the first pass's tail of tiny
    /// classes (56³ Kuhn tetrahedra: 32 colours down to 1 element → 30 of ~35 000 each), each of
    /// which would cost a launch. Returns the colour of each element and the number of colours
    /// (at most 64).
    pub fn greedy_colours(&self) -> Result<(Vec<u32>, usize)> {
        self.check()?;
        let ne = self.element_count();
        let first = self.greedy(0..ne)?;
        let mut order: Vec<usize> = (0..ne).collect();
        order.sort_by_key(|&e| std::cmp::Reverse(first[e]));
        let second = self.greedy(order.into_iter())?;
        let count = |c: &[u32]| c.iter().max().map_or(0, |&m| m as usize + 1);
        Ok(if count(&second) <= count(&first) {
            let n = count(&second);
            (second, n)
        } else {
            let n = count(&first);
            (first, n)
        })
    }

    /// Elements in `order` take the lowest colour free at their nodes.
    fn greedy(&self, order: impl Iterator<Item = usize>) -> Result<Vec<u32>> {
        let mut used = vec![0u64; self.node_count()];
        let mut colours = vec![0u32; self.element_count()];
        for e in order {
            let taken = self.element_nodes(e).iter().fold(0u64, |m, &n| m | used[n as usize]);
            let c = (!taken).trailing_zeros();
            if c >= 64 {
                return Err(Error::InvalidConfig(format!(
                    "element {e} touches elements of 64 colours; greedy colouring supports at most 64"
                )));
            }
            for &n in self.element_nodes(e) {
                used[n as usize] |= 1 << c;
            }
            colours[e] = c;
        }
        Ok(colours)
    }
}

/// A mesh of either kind.
#[derive(Clone, Debug, PartialEq)]
pub enum Mesh {
    /// A regular grid.
    Structured(StructuredMesh),
    /// Node coordinates and element→node arrays.
    Unstructured(UnstructuredMesh),
}

impl Mesh {
    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        match self {
            Mesh::Structured(m) => m.node_count(),
            Mesh::Unstructured(m) => m.node_count(),
        }
    }

    /// Number of elements.
    pub fn element_count(&self) -> usize {
        match self {
            Mesh::Structured(m) => m.element_count(),
            Mesh::Unstructured(m) => m.element_count(),
        }
    }

    /// Node positions of element `e`, in the element's local node order.
    pub fn element_coords(&self, offsets: &[[usize; 3]], e: usize) -> Vec<[f64; 3]> {
        match self {
            Mesh::Structured(m) => m
                .element_nodes(offsets, e)
                .into_iter()
                .map(|n| m.node_position(n))
                .collect(),
            Mesh::Unstructured(m) => m
                .element_nodes(e)
                .iter()
                .filter_map(|&n| m.coords.get(n as usize).copied())
                .collect(),
        }
    }

    /// Element→node index array.
    pub fn connectivity(&self, offsets: &[[usize; 3]]) -> Vec<u32> {
        match self {
            Mesh::Structured(m) => m.connectivity(offsets),
            Mesh::Unstructured(m) => m.connectivity.clone(),
        }
    }

    /// The shortest node distance.
    pub fn min_spacing(&self) -> f64 {
        match self {
            Mesh::Structured(m) => m.min_spacing(),
            Mesh::Unstructured(m) => m.min_spacing(),
        }
    }

    /// The nodes that belong to no element of node `offsets`, ascending: on a structured grid
    /// the nodes its elements leave out (the centre of every element of an order-2 grid under
    /// 8-node serendipity quads); on an unstructured mesh the nodes its connectivity never
    /// names (indices past the node count are ignored: the mesh's check reports them).
    ///
    /// ```
    /// # use clforge_runtime::fem::mesh::{Mesh, StructuredMesh};
    /// let quad8 = [[0, 0, 0], [2, 0, 0], [2, 2, 0], [0, 2, 0], [1, 0, 0], [2, 1, 0], [1, 2, 0], [0, 1, 0]];
    /// let grid = Mesh::Structured(StructuredMesh::new(2, 2, [2, 1, 1], [1.0; 3]).unwrap());
    /// assert_eq!(grid.unused_nodes(&quad8), [6, 8]);
    /// ```
    pub fn unused_nodes(&self, offsets: &[[usize; 3]]) -> Vec<usize> {
        let mut used = vec![false; self.node_count()];
        for n in self.connectivity(offsets) {
            if let Some(u) = used.get_mut(n as usize) {
                *u = true;
            }
        }
        used.iter().enumerate().filter(|(_, &u)| !u).map(|(n, _)| n).collect()
    }
}

/// Material index and crack state of every element (seed algorithm 4). Dead (cracked)
/// elements carry no force and report zero stress.
#[derive(Clone, Debug, PartialEq)]
pub struct ElementMap {
    /// Material of each element: an index into the stepper's matrices (at most 254).
    pub material: Vec<u8>,
    /// Whether each element is cracked.
    pub dead: Vec<bool>,
}

impl ElementMap {
    /// `elements` intact elements of material 0; [`Error::TooLarge`] if the host cannot hold
    /// them.
    pub fn uniform(elements: usize) -> Result<Self> {
        let what = || format!("element map of {elements} elements");
        Ok(ElementMap {
            material: crate::grid::try_filled(elements, 0, what)?,
            dead: crate::grid::try_filled(elements, false, what)?,
        })
    }

    /// Whether every element is intact material 0 (all elements alike).
    pub fn is_uniform(&self) -> bool {
        self.material.iter().all(|&m| m == 0) && !self.dead.iter().any(|&d| d)
    }

    /// Marks elements `[x0, x1) × [y0, y1) × [z0, z1)` of a structured mesh as cracked.
    pub fn crack_box(&mut self, mesh: &StructuredMesh, lo: [usize; 3], hi: [usize; 3]) {
        for (e, dead) in self.dead.iter_mut().enumerate().take(mesh.element_count()) {
            let c = mesh.element_coords(e);
            if (0..3).all(|k| c[k] >= lo[k] && c[k] < hi[k]) {
                *dead = true;
            }
        }
    }
}
