//! Global numbering of the hierarchical modes ([`clforge_abi::modal`]) of a conforming mesh of
//! hexahedra (3-D) or quadrilaterals (2-D), with the orientation signs that make the field
//! continuous across elements, and a structured box mesh to try it on.
//!
//! # Input
//!
//! A mesh is `m` elements of `2^dim` global vertex ids each (`elements[e·2^dim + v]`), the
//! vertices in the element's `NODES` order: local vertex `v` sits at the reference box's corner
//! [`vertex`]`(dim, v)` (1-D indices, 0 at `-1`, 1 at `+1`). Any vertex order for which the
//! multilinear map is the element is allowed; neighbours may number a shared edge or face
//! differently.
//!
//! # Entities
//!
//! Every element mode belongs to an *entity*, given by the axes holding a bubble: a vertex (none),
//! an edge (one), a face (two, in 3-D) or the element's interior (all `dim` axes). Vertices, edges
//! and faces are shared by the elements that hold them and are identified by their sorted global
//! vertex ids; interiors belong to one element. Each entity gets one global mode per bubble-degree
//! tuple (in its own global frame, below), numbered in the order first met (elements in order,
//! modes in element order). Components are interleaved: global DOF = `global_mode ·
//! dofs_per_mode + c`, every component with the mode's sign.
//!
//! # Orientation
//!
//! The built-in bubbles `L_k` have parity `(-1)^k` (`L_k(-x) = (-1)^k L_k(x)`), so a mode seen
//! from a neighbour whose local axis runs the other way is the same function up to that sign:
//!
//! - **Vertex modes**: sign `+1`.
//! - **Edge modes** (bubble of degree `k` along local axis `a`): the element's local edge
//!   direction runs from its local vertex with index 0 on `a` to the one with index 1. Global
//!   direction: from the lower to the higher global vertex id. Sign `(-1)^k` when the local
//!   direction runs from the higher to the lower global id, else `+1`.
//! - **Face modes** (bubbles of degrees `(m, n)` along local axes `a < b`): the face's global
//!   frame has its lowest-id vertex as origin and, as first axis, the direction from the origin
//!   towards the lower-id of the origin's two neighbours on the face (the second axis towards the
//!   other neighbour). The local axis `a` is the global first axis, or the second (*swapped*); the
//!   element's mode `(m, n)` is the global mode `(m', n') = (m, n)`, or `(n, m)` when swapped. A
//!   global axis is *reflected* when the element's local coordinate along it decreases from the
//!   origin (the origin has index 1 on that local axis); the sign is `(-1)^{m'}` for a reflected
//!   first axis times `(-1)^{n'}` for a reflected second axis, the degree being the one along
//!   that axis.
//! - **Interior modes**: sign `+1`, one global mode per element mode.
//!
//! Both spaces ([`Space::Trunk`], [`Space::Tensor`]) hold `(n, m)` whenever they hold `(m, n)`,
//! so a face's modes are the same set in every element's frame. The 1-D bubbles must have parity
//! `(-1)^k`, as the built-in integrated Legendre functions do.
//!
//! ```
//! use clforge_abi::modal::Space;
//! use clforge_runtime::fem::modal_mesh::{box_mesh, dof_map};
//! // 2 × 1 quadrilaterals, p = 4: 6 vertices, 7 edges of 3 bubbles, 2 interiors of 1 (trunk).
//! let mesh = box_mesh(2, [2, 1, 1], [2.0, 1.0, 1.0], 0.0, 0)?;
//! let (map, numbering) = dof_map(2, 4, Space::Trunk, 2, &mesh.elements, mesh.vertices.len() / 2)?;
//! assert_eq!(numbering.modes(), 6 + 7 * 3 + 2);
//! assert_eq!(map.dofs(), 2 * numbering.modes());
//! # Ok::<(), clforge_runtime::Error>(())
//! ```

use std::collections::HashMap;

use clforge_abi::modal::{for_each_mode, vertex, Space};

use crate::element::sparse::DofMap;
use crate::error::{Error, Result};

/// The entity a global mode belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Entity {
    /// A vertex (its global id).
    Vertex(u32),
    /// An edge (its two global vertex ids, ascending).
    Edge([u32; 2]),
    /// A face of a hexahedron (its four global vertex ids, ascending).
    Face([u32; 4]),
    /// The interior of an element (its index).
    Interior(u32),
}

/// The global modes of a mesh: per element and local mode the global mode and its sign, and the
/// entity of every global mode.
#[derive(Clone, Debug)]
pub struct ModalNumbering {
    dim: usize,
    per_element: usize,
    dofs_per_mode: usize,
    index: Vec<u32>,
    sign: Vec<i8>,
    entities: Vec<Entity>,
}

impl ModalNumbering {
    /// Number of global modes.
    pub fn modes(&self) -> usize {
        self.entities.len()
    }

    /// Modes per element.
    pub fn per_element(&self) -> usize {
        self.per_element
    }

    /// DOFs per mode (components).
    pub fn dofs_per_mode(&self) -> usize {
        self.dofs_per_mode
    }

    /// The global modes of element `e`, in element mode order (empty past the last element).
    pub fn element_modes(&self, e: usize) -> &[u32] {
        self.index.chunks_exact(self.per_element).nth(e).unwrap_or_default()
    }

    /// The signs of element `e`'s modes (empty past the last element).
    pub fn element_signs(&self, e: usize) -> &[i8] {
        self.sign.chunks_exact(self.per_element).nth(e).unwrap_or_default()
    }

    /// The entity of global mode `mode`.
    pub fn entity(&self, mode: usize) -> Option<Entity> {
        self.entities.get(mode).copied()
    }

    /// How many global modes belong to vertices, edges, faces and interiors.
    pub fn counts(&self) -> [usize; 4] {
        let mut n = [0; 4];
        for e in &self.entities {
            n[match e {
                Entity::Vertex(_) => 0,
                Entity::Edge(_) => 1,
                Entity::Face(_) => 2,
                Entity::Interior(_) => 3,
            }] += 1;
        }
        n
    }

    /// The global DOFs (ascending) of every mode on the mesh's boundary: the boundary is the
    /// element sides (faces in 3-D, edges in 2-D) that belong to one element only; a vertex,
    /// edge or face mode is on it when its entity is a vertex, an edge or a face of a boundary
    /// side. `elements` is the connectivity given to [`dof_map`].
    pub fn boundary_dofs(&self, elements: &[u32]) -> Vec<u32> {
        let sides = boundary_sides(self.dim, elements);
        let mut on = std::collections::HashSet::new();
        for side in &sides {
            for &v in side {
                on.insert(Entity::Vertex(v));
            }
            match side.len() {
                2 => {
                    on.insert(Entity::Edge([side[0].min(side[1]), side[0].max(side[1])]));
                }
                4 => {
                    // `side` is in face order (a cycle): its edges are consecutive pairs.
                    for i in 0..4 {
                        let (a, b) = (side[i], side[(i + 1) % 4]);
                        on.insert(Entity::Edge([a.min(b), a.max(b)]));
                    }
                    let mut f = [side[0], side[1], side[2], side[3]];
                    f.sort_unstable();
                    on.insert(Entity::Face(f));
                }
                _ => {}
            }
        }
        let mut dofs = Vec::new();
        for (mode, e) in self.entities.iter().enumerate() {
            if on.contains(e) {
                for c in 0..self.dofs_per_mode {
                    dofs.push((mode * self.dofs_per_mode + c) as u32);
                }
            }
        }
        dofs
    }
}

/// The local vertex at 1-D indices `idx` (inverse of [`vertex`]).
fn local_vertex(dim: usize, idx: [u8; 3]) -> usize {
    (0..1usize << dim).find(|&v| vertex(dim, v) == idx).unwrap_or(0)
}

/// The sides (faces of a hexahedron in 3-D, edges in 2-D, vertices in 1-D) that belong to one
/// element only, each as its global vertex ids in cyclic order.
fn boundary_sides(dim: usize, elements: &[u32]) -> Vec<Vec<u32>> {
    let nv = 1usize << dim;
    let mut count: HashMap<Vec<u32>, (usize, Vec<u32>)> = HashMap::new();
    for el in elements.chunks_exact(nv) {
        for axis in 0..dim {
            for f in 0..2u8 {
                // The side's vertices in cyclic order: walk its (up to two) free axes.
                let free: Vec<usize> = (0..dim).filter(|&a| a != axis).collect();
                let corners: &[(u8, u8)] = match free.len() {
                    0 => &[(0, 0)],
                    1 => &[(0, 0), (1, 0)],
                    _ => &[(0, 0), (1, 0), (1, 1), (0, 1)],
                };
                let side: Vec<u32> = corners
                    .iter()
                    .map(|&(i, j)| {
                        let mut idx = [0u8; 3];
                        idx[axis] = f;
                        if let Some(&a) = free.first() {
                            idx[a] = i;
                        }
                        if let Some(&b) = free.get(1) {
                            idx[b] = j;
                        }
                        el[local_vertex(dim, idx)]
                    })
                    .collect();
                let mut key = side.clone();
                key.sort_unstable();
                count.entry(key).or_insert((0, side)).0 += 1;
            }
        }
    }
    let mut sides: Vec<Vec<u32>> = count.into_values().filter(|(n, _)| *n == 1).map(|(_, s)| s).collect();
    sides.sort();
    sides
}

/// The key of an entity slot: the entity and the bubble degrees in its global frame.
type Slot = (Entity, [u8; 3]);

/// Numbers the modes of a conforming mesh of order `order` in `space` (see the module docs) and
/// returns the element → global DOF map with `dofs_per_mode` components per mode, and the
/// numbering. `elements` holds `2^dim` global vertex ids per element, each below `vertices`.
///
/// Fails with [`Error::InvalidConfig`] for a `dim` other than 1 to 3, an order outside
/// `1..=MAX_ORDER`, no components, a connectivity that is not whole elements, a vertex id not
/// below `vertices`, or an element naming one vertex twice (and as [`DofMap::new`] does).
pub fn dof_map(
    dim: usize,
    order: usize,
    space: Space,
    dofs_per_mode: usize,
    elements: &[u32],
    vertices: usize,
) -> Result<(DofMap, ModalNumbering)> {
    let bad = |msg: String| Err(Error::InvalidConfig(msg));
    if !(1..=3).contains(&dim) {
        return bad(format!("a modal mesh has dimension 1 to 3, not {dim}"));
    }
    if !(1..=clforge_abi::modal::MAX_ORDER).contains(&order) {
        return bad(format!(
            "a modal mesh has order 1 to {}, not {order}",
            clforge_abi::modal::MAX_ORDER
        ));
    }
    if dofs_per_mode == 0 {
        return bad("a modal mesh needs at least one DOF per mode".into());
    }
    let nv = 1usize << dim;
    if elements.is_empty() || !elements.len().is_multiple_of(nv) {
        return bad(format!(
            "modal mesh connectivity has {} entries, not a positive number of elements of {nv} vertices",
            elements.len()
        ));
    }
    for (e, el) in elements.chunks_exact(nv).enumerate() {
        for (i, &v) in el.iter().enumerate() {
            if v as usize >= vertices {
                return bad(format!(
                    "vertex {i} of element {e} is {v}, but there are {vertices} vertices"
                ));
            }
            if el[..i].contains(&v) {
                return bad(format!("element {e} names vertex {v} twice"));
            }
        }
    }
    let mut modes = Vec::new();
    for_each_mode(dim, order, space, |m| modes.push(m));
    let per_element = modes.len();
    let m = elements.len() / nv;

    let mut slots: HashMap<Slot, u32> = HashMap::new();
    let mut entities: Vec<Entity> = Vec::new();
    let mut index = Vec::with_capacity(m * per_element);
    let mut sign = Vec::with_capacity(m * per_element);
    for (e, el) in elements.chunks_exact(nv).enumerate() {
        let g = |idx: [u8; 3]| el[local_vertex(dim, idx)];
        for mode in &modes {
            let bubbles: Vec<usize> = (0..dim).filter(|&a| mode[a] >= 2).collect();
            let (slot, s): (Slot, i8) = match bubbles.len() {
                0 => ((Entity::Vertex(g(*mode)), [0; 3]), 1),
                n if n == dim => ((Entity::Interior(e as u32), *mode), 1),
                1 => {
                    let a = bubbles[0];
                    let k = mode[a];
                    let (mut i0, mut i1) = (*mode, *mode);
                    i0[a] = 0;
                    i1[a] = 1;
                    let (g0, g1) = (g(i0), g(i1));
                    let s = if g0 > g1 && k % 2 == 1 { -1 } else { 1 };
                    ((Entity::Edge([g0.min(g1), g0.max(g1)]), [k, 0, 0]), s)
                }
                _ => {
                    let (a, b) = (bubbles[0], bubbles[1]);
                    let corner = |i: u8, j: u8| {
                        let mut idx = *mode;
                        idx[a] = i;
                        idx[b] = j;
                        g(idx)
                    };
                    // Origin: the lowest-id vertex, at local indices (i0, j0) on (a, b).
                    let (i0, j0) = [(0, 0), (1, 0), (0, 1), (1, 1)]
                        .into_iter()
                        .min_by_key(|&(i, j)| corner(i, j))
                        .unwrap_or((0, 0));
                    let along_a = corner(1 - i0, j0);
                    let along_b = corner(i0, 1 - j0);
                    let swapped = along_b < along_a;
                    let (m_deg, n_deg) = (mode[a], mode[b]);
                    // Reflected local axes: the origin has index 1 on them.
                    let mut s = 1i8;
                    if i0 == 1 && m_deg % 2 == 1 {
                        s = -s;
                    }
                    if j0 == 1 && n_deg % 2 == 1 {
                        s = -s;
                    }
                    let global = if swapped { [n_deg, m_deg, 0] } else { [m_deg, n_deg, 0] };
                    let mut f = [corner(0, 0), corner(1, 0), corner(0, 1), corner(1, 1)];
                    f.sort_unstable();
                    ((Entity::Face(f), global), s)
                }
            };
            let next = entities.len() as u32;
            let id = *slots.entry(slot).or_insert(next);
            if id == next {
                entities.push(slot.0);
            }
            index.push(id);
            sign.push(s);
        }
    }
    let modes_total = entities.len();
    let mut dof_index = Vec::with_capacity(index.len() * dofs_per_mode);
    let mut dof_sign = Vec::with_capacity(index.len() * dofs_per_mode);
    for (&id, &s) in index.iter().zip(&sign) {
        for c in 0..dofs_per_mode {
            let d = (id as usize)
                .checked_mul(dofs_per_mode)
                .and_then(|d| d.checked_add(c))
                .and_then(|d| u32::try_from(d).ok())
                .ok_or_else(|| Error::TooLarge {
                    what: format!("a modal mesh of {modes_total} modes × {dofs_per_mode} DOFs"),
                    detail: "the DOFs exceed 32-bit indices".into(),
                })?;
            dof_index.push(d);
            dof_sign.push(s);
        }
    }
    let map = DofMap::new(
        modes_total * dofs_per_mode,
        per_element * dofs_per_mode,
        dof_index,
        dof_sign,
    )?;
    Ok((
        map,
        ModalNumbering {
            dim,
            per_element,
            dofs_per_mode,
            index,
            sign,
            entities,
        },
    ))
}

/// A structured box mesh from [`box_mesh`].
#[derive(Clone, Debug)]
pub struct BoxMesh {
    /// Vertex coordinates, `dim` per vertex; vertex `(i, j, k)` is `i + (n0+1)(j + (n1+1)k)`.
    pub vertices: Vec<f64>,
    /// `2^dim` vertex ids per element, in the element's `NODES` order ([`vertex`]).
    pub elements: Vec<u32>,
    /// The elements' vertex coordinates, `2^dim · dim` per element in the same order (the
    /// input of `Forming::upload` and of the host matrices).
    pub coords: Vec<f64>,
    /// Whether each vertex lies on the box's boundary.
    pub boundary: Vec<bool>,
}

/// splitmix64: a deterministic stream for the vertex displacements.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A box `[0, lengths[0]] × …` of `n[0] × n[1] (× n[2])` elements in `dim` = 2 or 3 dimensions
/// (entries past `dim` are ignored). Every interior vertex is moved along each axis by a uniform
/// random fraction in `[-distort, distort]` of the element size (deterministic from `seed`);
/// `distort < 0.25` keeps every element convex. Elements run `x` fastest; the local vertex
/// order is the reference box's ([`vertex`]).
///
/// Fails with [`Error::InvalidConfig`] for a `dim` other than 2 or 3, no elements along an axis,
/// a non-positive or non-finite length, or a `distort` outside `[0, 0.5)`.
pub fn box_mesh(dim: usize, n: [usize; 3], lengths: [f64; 3], distort: f64, seed: u64) -> Result<BoxMesh> {
    let bad = |msg: String| Err(Error::InvalidConfig(msg));
    if !(2..=3).contains(&dim) {
        return bad(format!("a box mesh has dimension 2 or 3, not {dim}"));
    }
    if (0..dim).any(|a| n[a] == 0) {
        return bad(format!("a box mesh needs at least one element per axis, got {n:?}"));
    }
    if (0..dim).any(|a| !(lengths[a].is_finite() && lengths[a] > 0.0)) {
        return bad(format!("a box mesh needs positive finite lengths, got {lengths:?}"));
    }
    if !(0.0..0.5).contains(&distort) {
        return bad(format!("box mesh distortion {distort} is outside [0, 0.5)"));
    }
    let np: [usize; 3] = core::array::from_fn(|a| if a < dim { n[a] + 1 } else { 1 });
    let count = np[0] * np[1] * np[2];
    if u32::try_from(count).is_err() {
        return Err(Error::TooLarge {
            what: format!("a box mesh of {count} vertices"),
            detail: "vertex ids are 32-bit".into(),
        });
    }
    let id = |i: usize, j: usize, k: usize| (i + np[0] * (j + np[1] * k)) as u32;
    let mut state = seed;
    let mut vertices = Vec::with_capacity(count * dim);
    let mut boundary = Vec::with_capacity(count);
    for k in 0..np[2] {
        for j in 0..np[1] {
            for i in 0..np[0] {
                let ijk = [i, j, k];
                let on = (0..dim).any(|a| ijk[a] == 0 || ijk[a] == n[a]);
                boundary.push(on);
                for a in 0..dim {
                    let h = lengths[a] / n[a] as f64;
                    let mut x = ijk[a] as f64 * h;
                    if !on && distort > 0.0 {
                        let u = (splitmix(&mut state) >> 11) as f64 / (1u64 << 53) as f64;
                        x += (2.0 * u - 1.0) * distort * h;
                    }
                    vertices.push(x);
                }
            }
        }
    }
    let nv = 1usize << dim;
    let ne: [usize; 3] = core::array::from_fn(|a| if a < dim { n[a] } else { 1 });
    let mut elements = Vec::with_capacity(ne[0] * ne[1] * ne[2] * nv);
    for k in 0..ne[2] {
        for j in 0..ne[1] {
            for i in 0..ne[0] {
                for v in 0..nv {
                    let o = vertex(dim, v);
                    elements.push(id(i + o[0] as usize, j + o[1] as usize, k + o[2] as usize));
                }
            }
        }
    }
    let coords = elements
        .iter()
        .flat_map(|&v| vertices[v as usize * dim..(v as usize + 1) * dim].iter().copied())
        .collect();
    Ok(BoxMesh {
        vertices,
        elements,
        coords,
        boundary,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The built-in 1-D functions: vertex functions, then `L_k = (P_k - P_{k-2}) / sqrt(2(2k-1))`.
    fn phi(k: u8, x: f64) -> f64 {
        match k {
            0 => 0.5 * (1.0 - x),
            1 => 0.5 * (1.0 + x),
            _ => {
                let k = k as usize;
                let mut p = vec![1.0, x];
                for j in 2..=k {
                    let jf = j as f64;
                    p.push(((2.0 * jf - 1.0) * x * p[j - 1] - (jf - 1.0) * p[j - 2]) / jf);
                }
                (p[k] - p[k - 2]) / (2.0 * (2.0 * k as f64 - 1.0)).sqrt()
            }
        }
    }

    fn mode_value(dim: usize, mode: [u8; 3], x: [f64; 3]) -> f64 {
        (0..dim).map(|a| phi(mode[a], x[a])).product()
    }

    #[test]
    fn entity_counts_on_a_box_follow_the_formula() {
        let mesh = box_mesh(3, [2, 2, 2], [1.0; 3], 0.1, 7).unwrap();
        let nverts = mesh.vertices.len() / 3;
        // 27 vertices, 54 edges, 36 faces, 8 elements.
        for p in 1..=5usize {
            let (map, num) = dof_map(3, p, Space::Trunk, 3, &mesh.elements, nverts).unwrap();
            let faces = (p.saturating_sub(2) * p.saturating_sub(3)) / 2;
            let interior = p.saturating_sub(3) * p.saturating_sub(4) * p.saturating_sub(5) / 6;
            let expect = [27, 54 * (p - 1), 36 * faces, 8 * interior];
            assert_eq!(num.counts(), expect, "trunk p = {p}");
            assert_eq!(num.modes(), expect.iter().sum::<usize>());
            assert_eq!(map.dofs(), 3 * num.modes());
            assert_eq!(map.per_element(), 3 * clforge_abi::modal::count(3, p, Space::Trunk));

            let (_, num) = dof_map(3, p, Space::Tensor, 1, &mesh.elements, nverts).unwrap();
            let expect = [27, 54 * (p - 1), 36 * (p - 1).pow(2), 8 * (p - 1).pow(3)];
            assert_eq!(num.counts(), expect, "tensor p = {p}");
        }
        // 2-D: 3 × 2 quads have 12 vertices, 17 edges, 6 interiors.
        let quads = box_mesh(2, [3, 2, 0], [1.0; 3], 0.0, 0).unwrap();
        let (_, num) = dof_map(2, 4, Space::Tensor, 2, &quads.elements, 12).unwrap();
        assert_eq!(num.counts(), [12, 17 * 3, 0, 6 * 9]);
    }

    #[test]
    fn boundary_dofs_of_a_box_are_its_surface_modes() {
        let mesh = box_mesh(3, [2, 2, 2], [1.0; 3], 0.0, 0).unwrap();
        for p in 1..=5usize {
            let (_, num) = dof_map(3, p, Space::Trunk, 3, &mesh.elements, 27).unwrap();
            let b = num.boundary_dofs(&mesh.elements);
            // Surface: 26 vertices, 48 edges (the 6 interior edges meet at the centre), 24 faces.
            let faces = (p.saturating_sub(2) * p.saturating_sub(3)) / 2;
            assert_eq!(b.len(), 3 * (26 + 48 * (p - 1) + 24 * faces), "p = {p}");
            assert!(b.windows(2).all(|w| w[0] < w[1]));
            // Exactly the flagged vertices' modes among the vertex modes.
            for mode in 0..num.modes() {
                if let Some(Entity::Vertex(v)) = num.entity(mode) {
                    assert_eq!(b.contains(&(3 * mode as u32)), mesh.boundary[v as usize]);
                }
            }
        }
    }

    #[test]
    fn misuse_is_refused() {
        assert!(dof_map(4, 2, Space::Trunk, 1, &[0; 16], 16).is_err());
        assert!(dof_map(3, 0, Space::Trunk, 1, &[0, 1, 2, 3, 4, 5, 6, 7], 8).is_err());
        assert!(dof_map(3, 2, Space::Trunk, 0, &[0, 1, 2, 3, 4, 5, 6, 7], 8).is_err());
        assert!(dof_map(3, 2, Space::Trunk, 1, &[0, 1, 2, 3, 4, 5, 6], 8).is_err());
        assert!(dof_map(3, 2, Space::Trunk, 1, &[0, 1, 2, 3, 4, 5, 6, 8], 8).is_err());
        assert!(dof_map(3, 2, Space::Trunk, 1, &[0, 1, 2, 3, 4, 5, 6, 6], 8).is_err());
        assert!(box_mesh(1, [2, 2, 2], [1.0; 3], 0.0, 0).is_err());
        assert!(box_mesh(3, [2, 0, 2], [1.0; 3], 0.0, 0).is_err());
        assert!(box_mesh(3, [2, 2, 2], [1.0, -1.0, 1.0], 0.0, 0).is_err());
        assert!(box_mesh(3, [2, 2, 2], [1.0; 3], 0.5, 0).is_err());
    }

    /// The 48 symmetries of the cube as (axis permutation, reflections): local index `idx` of
    /// the new numbering is the old vertex at `old[perm[a]] = idx[a] ^ flip[a]`.
    fn symmetries() -> Vec<([usize; 3], [u8; 3])> {
        let perms = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]];
        let mut all = Vec::new();
        for perm in perms {
            for f in 0..8u8 {
                all.push((perm, [f & 1, (f >> 1) & 1, (f >> 2) & 1]));
            }
        }
        all
    }

    /// u_h at local point `x` of element `e` from global mode values `u`.
    fn evaluate(num: &ModalNumbering, modes: &[[u8; 3]], e: usize, u: &[f64], x: [f64; 3]) -> f64 {
        let ids = num.element_modes(e);
        let signs = num.element_signs(e);
        modes
            .iter()
            .enumerate()
            .map(|(i, &m)| mode_value(3, m, x) * signs[i] as f64 * u[ids[i] as usize])
            .sum()
    }

    /// The trilinear map of a hexahedron with vertex coordinates `xs` (element order).
    fn map(xs: &[[f64; 3]], x: [f64; 3]) -> [f64; 3] {
        let mut out = [0.0; 3];
        for (v, p) in xs.iter().enumerate() {
            let n = mode_value(3, vertex(3, v), x);
            for a in 0..3 {
                out[a] += n * p[a];
            }
        }
        out
    }

    #[test]
    fn field_is_continuous_across_a_face_of_a_renumbered_neighbour() {
        // Two unit cubes side by side along x; 12 vertices, ids shuffled per case.
        let grid = |i: usize, j: usize, k: usize| i + 3 * (j + 2 * k);
        let pos = |g: usize| [(g % 3) as f64, ((g / 3) % 2) as f64, (g / 6) as f64];
        let mut state = 99u64;
        let mut rand = move || (splitmix(&mut state) >> 11) as f64 / (1u64 << 53) as f64;
        let mut worst: f64 = 0.0;
        for (space, p) in [(Space::Trunk, 5), (Space::Tensor, 4)] {
            let mut modes = Vec::new();
            for_each_mode(3, p, space, |m| modes.push(m));
            for (case, (perm, flip)) in symmetries().into_iter().enumerate() {
                // A random relabelling of the global vertex ids.
                let mut label: Vec<u32> = (0..12).collect();
                for i in (1..12).rev() {
                    let j = (rand() * (i + 1) as f64) as usize % (i + 1);
                    label.swap(i, j);
                }
                let standard = |i0: usize| -> Vec<usize> {
                    (0..8)
                        .map(|v| {
                            let o = vertex(3, v);
                            grid(i0 + o[0] as usize, o[1] as usize, o[2] as usize)
                        })
                        .collect()
                };
                let a = standard(0);
                let b_std = standard(1);
                // Element B renumbered by the symmetry.
                let b: Vec<usize> = (0..8)
                    .map(|v| {
                        let idx = vertex(3, v);
                        let mut old = [0u8; 3];
                        for ax in 0..3 {
                            old[perm[ax]] = idx[ax] ^ flip[ax];
                        }
                        b_std[local_vertex(3, old)]
                    })
                    .collect();
                let elements: Vec<u32> = a.iter().chain(&b).map(|&g| label[g]).collect();
                let (_, num) = dof_map(3, p, space, 1, &elements, 12).unwrap();
                let u: Vec<f64> = (0..num.modes()).map(|_| 2.0 * rand() - 1.0).collect();
                let xs_b: Vec<[f64; 3]> = b.iter().map(|&g| pos(g)).collect();
                // B's local face on x = 1: the axis and index whose 4 vertices have x = 1.
                let (axis, side) = (0..3)
                    .flat_map(|ax| [(ax, 0u8), (ax, 1u8)])
                    .find(|&(ax, s)| (0..8).all(|v| vertex(3, v)[ax] != s || xs_b[v][0] == 1.0))
                    .unwrap();
                for _ in 0..6 {
                    let mut xb = [2.0 * rand() - 1.0, 2.0 * rand() - 1.0, 2.0 * rand() - 1.0];
                    xb[axis] = if side == 0 { -1.0 } else { 1.0 };
                    let phys = map(&xs_b, xb);
                    assert!((phys[0] - 1.0).abs() < 1e-14);
                    let xa = [2.0 * phys[0] - 1.0, 2.0 * phys[1] - 1.0, 2.0 * phys[2] - 1.0];
                    let ua = evaluate(&num, &modes, 0, &u, xa);
                    let ub = evaluate(&num, &modes, 1, &u, xb);
                    let diff = (ua - ub).abs();
                    worst = worst.max(diff);
                    assert!(
                        diff < 1e-12,
                        "{space:?} p = {p}, symmetry {case} ({perm:?}, {flip:?}): {ua} vs {ub}"
                    );
                }
            }
        }
        assert!(worst < 1e-12);
    }

    #[test]
    fn field_is_continuous_across_edges_of_renumbered_quads() {
        // Two unit squares side by side; the second renumbered by each of the 8 symmetries.
        let mut state = 5u64;
        let mut rand = move || (splitmix(&mut state) >> 11) as f64 / (1u64 << 53) as f64;
        let mut modes = Vec::new();
        for_each_mode(2, 5, Space::Tensor, |m| modes.push(m));
        let grid = |i: usize, j: usize| (i + 3 * j) as u32;
        for swap in [false, true] {
            for flip in 0..4u8 {
                let f = [flip & 1, flip >> 1];
                let a: Vec<u32> = (0..4)
                    .map(|v| grid(vertex(2, v)[0] as usize, vertex(2, v)[1] as usize))
                    .collect();
                let b_idx: Vec<[u8; 2]> = (0..4)
                    .map(|v| {
                        let idx = vertex(2, v);
                        let (x, y) = (idx[0] ^ f[0], idx[1] ^ f[1]);
                        if swap {
                            [y, x]
                        } else {
                            [x, y]
                        }
                    })
                    .collect();
                let b: Vec<u32> = b_idx.iter().map(|o| grid(1 + o[0] as usize, o[1] as usize)).collect();
                let elements: Vec<u32> = a.iter().chain(&b).copied().collect();
                let (_, num) = dof_map(2, 5, Space::Tensor, 1, &elements, 6).unwrap();
                let u: Vec<f64> = (0..num.modes()).map(|_| 2.0 * rand() - 1.0).collect();
                let eval = |e: usize, x: [f64; 3]| -> f64 {
                    let ids = num.element_modes(e);
                    let s = num.element_signs(e);
                    (0..modes.len())
                        .map(|i| mode_value(2, modes[i], x) * s[i] as f64 * u[ids[i] as usize])
                        .sum()
                };
                for _ in 0..5 {
                    let y = rand();
                    let xa = [1.0, 2.0 * y - 1.0, 0.0];
                    // B's local point of physical (1, y): invert its bilinear (affine) map.
                    let phys_b = |x: [f64; 3]| -> [f64; 2] {
                        let mut out = [0.0; 2];
                        for (v, o) in b_idx.iter().enumerate() {
                            let n = mode_value(2, vertex(2, v), x);
                            out[0] += n * (1.0 + o[0] as f64);
                            out[1] += n * o[1] as f64;
                        }
                        out
                    };
                    let mut xb = [0.0, 0.0, 0.0];
                    // Affine: solve from the centre and the two unit steps.
                    let c = phys_b([0.0; 3]);
                    let dr = phys_b([1.0, 0.0, 0.0]);
                    let ds = phys_b([0.0, 1.0, 0.0]);
                    let (j00, j01, j10, j11) = (dr[0] - c[0], ds[0] - c[0], dr[1] - c[1], ds[1] - c[1]);
                    let det = j00 * j11 - j01 * j10;
                    let (rx, ry) = (1.0 - c[0], y - c[1]);
                    xb[0] = (j11 * rx - j01 * ry) / det;
                    xb[1] = (j00 * ry - j10 * rx) / det;
                    let (ua, ub) = (eval(0, xa), eval(1, xb));
                    assert!((ua - ub).abs() < 1e-12, "swap {swap}, flip {f:?}: {ua} vs {ub}");
                }
            }
        }
    }
}
