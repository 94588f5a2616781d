//! Whether a mesh fits an element type, and whether its elements are inverted, from the
//! [`ElementSpec`] alone (what a [`Model`](crate::element::problem::Model) and the steppers carry).
//!
//! The spec has no shape functions, but its node grid fixes them for the tensor-product
//! Lagrange elements the element attribute accepts: node `a` sits at local
//! `-1 + 2 · offset_a / order` on each axis, and a full `(order + 1)^dim` grid of nodes has
//! exactly one interpolating polynomial per node, the product of 1-D Lagrange polynomials.
//! Elements with fewer nodes (serendipity) are checked through the multilinear map of their
//! corners instead, which is exact for straight-sided elements.

use crate::element::matrices::gauss_legendre;
use crate::element::mesh::Mesh;
use crate::element::spec::ElementSpec;
use crate::error::{Error, Result};

/// The spec's own sizes agree and stay small enough to multiply: dimension 1 to 3, at least
/// one node, DOF, strain and order, one node offset per node within the node grid, and
/// `(nodes · dofs)²` (the entries of `K_e`) without overflow.
pub fn check_spec(spec: &ElementSpec) -> Result<()> {
    let bad = |detail: String| Err(Error::InvalidConfig(format!("element spec `{}`: {detail}", spec.name)));
    if !(1..=3).contains(&spec.dim) {
        return bad(format!("dimension {} must be 1, 2 or 3", spec.dim));
    }
    if spec.nodes == 0 || spec.dofs == 0 || spec.order == 0 || spec.strains == 0 {
        return bad(format!(
            "nodes ({}), dofs ({}), order ({}) and strains ({}) must all be at least 1",
            spec.nodes, spec.dofs, spec.order, spec.strains
        ));
    }
    if spec.node_offsets.is_empty() && spec.kernels.is_none() {
        return bad(format!(
            "a modal element ({} modes) has no nodes on a grid, so the explicit schedules cannot run it; \
             form its matrices with `fem::forming` and solve with `fem::sparse`",
            spec.nodes
        ));
    }
    if spec.node_offsets.len() != spec.nodes {
        return bad(format!(
            "{} node offsets for {} nodes; give one per node",
            spec.node_offsets.len(),
            spec.nodes
        ));
    }
    let outside = |o: &[usize; 3]| (0..3).any(|k| if k < spec.dim { o[k] > spec.order } else { o[k] != 0 });
    if let Some(a) = spec.node_offsets.iter().position(outside) {
        return bad(format!(
            "node {a} has offset {:?}, outside the node grid of order {} in {} dimensions",
            spec.node_offsets[a], spec.order, spec.dim
        ));
    }
    let nd = spec.nodes.checked_mul(spec.dofs);
    if nd.and_then(|nd| nd.checked_mul(nd)).is_none() {
        return bad("nodes · dofs squared overflows usize".into());
    }
    Ok(())
}

/// The mesh holds elements of `spec`: a structured mesh has the element's dimension and order
/// (a 9-node quadratic quad needs a node grid of order 2), an unstructured one `spec.nodes`
/// nodes per element; both pass their own checks. [`Error::MeshMismatch`] otherwise.
///
/// ```
/// # use clforge_runtime::fem::{geometry::check_mesh, mesh::{Mesh, StructuredMesh}, ElementSpec};
/// # use clforge_runtime::Error;
/// let quad9 = ElementSpec {
///     name: "quad9", dim: 2, cell: clforge_runtime::fem::Cell::Cube, nodes: 9, dofs: 2, order: 2, strains: 3, source: "", kernels: None,
///     node_offsets: &[[0, 0, 0], [2, 0, 0], [2, 2, 0], [0, 2, 0], [1, 0, 0], [2, 1, 0], [1, 2, 0], [0, 1, 0], [1, 1, 0]],
/// };
/// let linear = StructuredMesh::new(2, 1, [4, 4, 1], [1.0; 3]).unwrap();
/// let err = check_mesh(&quad9, &Mesh::Structured(linear)).unwrap_err();
/// assert!(matches!(err, Error::MeshMismatch { element: "quad9", .. }), "{err}");
/// ```
pub fn check_mesh(spec: &ElementSpec, mesh: &Mesh) -> Result<()> {
    check_spec(spec)?;
    let mismatch = |mesh: String, needs: String| {
        Err(Error::MeshMismatch {
            element: spec.name,
            mesh,
            needs,
        })
    };
    match mesh {
        Mesh::Structured(m) => {
            m.check()?;
            if spec.cell == crate::element::Cell::Simplex {
                return mismatch(
                    format!("a structured {}-D grid", m.dim),
                    "an unstructured mesh: a simplex element has no place on a box grid \
                     (`Mesh::Unstructured`, e.g. read from a Gmsh file with `fem::io`)"
                        .into(),
                );
            }
            if m.dim != spec.dim || m.order != spec.order {
                return mismatch(
                    format!("dimension {} and order {}", m.dim, m.order),
                    format!(
                        "a {}-D node grid of order {} (build it with `StructuredMesh::for_element`)",
                        spec.dim, spec.order
                    ),
                );
            }
        }
        Mesh::Unstructured(m) => {
            m.check()?;
            if m.nodes_per_element != spec.nodes {
                return mismatch(
                    format!("{} nodes per element", m.nodes_per_element),
                    format!("{} nodes per element, in the order of its `NODES`", spec.nodes),
                );
            }
        }
    }
    Ok(())
}

/// Refuses a mesh with an inverted or degenerate element: `det J ≤ 0` (relative to the size
/// of `J`) at any Gauss point (`order + 1` per axis) or node, the error naming the element.
/// Structured meshes map every element onto a box of positive sizes and pass without work.
pub fn check_orientation(spec: &ElementSpec, mesh: &Mesh) -> Result<()> {
    check_mesh(spec, mesh)?;
    let Mesh::Unstructured(m) = mesh else {
        return Ok(());
    };
    let Some(map) = ReferenceMap::new(spec)? else {
        return Ok(());
    };
    for e in 0..m.element_count() {
        let coords = mesh.element_coords(spec.node_offsets, e);
        map.check(&coords).map_err(|(det, local)| Error::InvertedElement {
            index: e,
            element: spec.name,
            det,
            local,
        })?;
    }
    Ok(())
}

/// The map from the reference element to an element's nodes, as far as the spec fixes it.
struct ReferenceMap {
    dim: usize,
    /// The nodes the map interpolates (all, or the corners) and their grid offsets.
    nodes: Vec<(usize, [usize; 3])>,
    /// Local points where `det J` must be positive, with `dN/dξ` there (`dim` rows).
    points: Vec<([f64; 3], Vec<[f64; 3]>)>,
}

impl ReferenceMap {
    /// The Lagrange map of a full node grid, else the multilinear map of the corners; `None`
    /// when the spec has neither (no check is possible without its shape functions).
    fn new(spec: &ElementSpec) -> Result<Option<ReferenceMap>> {
        let (dim, order) = (spec.dim, spec.order);
        let offsets = spec.node_offsets;
        let full = order
            .checked_add(1)
            .and_then(|n| n.checked_pow(dim as u32))
            .is_some_and(|n| n == spec.nodes)
            && distinct(offsets);
        let (nodes, interp): (Vec<(usize, [usize; 3])>, usize) = if full {
            (offsets.iter().copied().enumerate().collect(), order)
        } else {
            let corners: Vec<(usize, [usize; 3])> = offsets
                .iter()
                .copied()
                .enumerate()
                .filter(|(_, o)| o[..dim].iter().all(|&v| v == 0 || v == order))
                .map(|(a, o)| (a, o.map(|v| v / order)))
                .collect();
            if corners.len() != 1 << dim || !distinct(&corners.iter().map(|c| c.1).collect::<Vec<_>>()) {
                return Ok(None);
            }
            (corners, 1)
        };
        let local = |o: [usize; 3], steps: usize| -> [f64; 3] {
            std::array::from_fn(|k| {
                if k < dim {
                    -1.0 + 2.0 * o[k] as f64 / steps as f64
                } else {
                    0.0
                }
            })
        };
        // Gauss points of order + 1 per axis (at most the quadrature the matrices accept),
        // then every node of the spec.
        let rule = gauss_legendre((order + 1).min(crate::element::matrices::MAX_QUADRATURE))?;
        let mut at: Vec<[f64; 3]> = vec![[0.0; 3]];
        for axis in 0..dim {
            at = at
                .into_iter()
                .flat_map(|p| {
                    rule.iter().map(move |&(x, _)| {
                        let mut q = p;
                        q[axis] = x;
                        q
                    })
                })
                .collect();
        }
        at.extend(offsets.iter().map(|&o| local(o, order)));
        let points = at
            .into_iter()
            .map(|p| {
                let d = nodes
                    .iter()
                    .map(|&(_, o)| lagrange_gradient(o, interp, dim, p))
                    .collect();
                (p, d)
            })
            .collect();
        Ok(Some(ReferenceMap { dim, nodes, points }))
    }

    /// `Err((det J, local point))` at the first point where the element is not positively
    /// oriented; `coords` are the element's nodes in the spec's order.
    fn check(&self, coords: &[[f64; 3]]) -> std::result::Result<(), (f64, [f64; 3])> {
        let dim = self.dim;
        for (p, grads) in &self.points {
            // J[a][b] = Σ_i ∂N_i/∂ξ_a · x_i,b
            let mut j = [[0.0f64; 3]; 3];
            for (&(node, _), g) in self.nodes.iter().zip(grads) {
                let Some(x) = coords.get(node) else {
                    return Err((f64::NAN, *p));
                };
                for a in 0..dim {
                    for b in 0..dim {
                        j[a][b] += g[a] * x[b];
                    }
                }
            }
            let det = match dim {
                1 => j[0][0],
                2 => j[0][0] * j[1][1] - j[0][1] * j[1][0],
                _ => {
                    j[0][0] * (j[1][1] * j[2][2] - j[1][2] * j[2][1])
                        - j[0][1] * (j[1][0] * j[2][2] - j[1][2] * j[2][0])
                        + j[0][2] * (j[1][0] * j[2][1] - j[1][1] * j[2][0])
                }
            };
            // Relative to the size of J, as `matrices::jacobian` judges it.
            let scale = j.iter().flatten().fold(0.0f64, |m, v| m.max(v.abs())).powi(dim as i32);
            if det.is_nan() || det <= 1e-12 * scale {
                return Err((det, *p));
            }
        }
        Ok(())
    }
}

fn distinct(offsets: &[[usize; 3]]) -> bool {
    let mut sorted = offsets.to_vec();
    sorted.sort_unstable();
    sorted.windows(2).all(|w| w[0] != w[1])
}

/// `∂N/∂ξ_k` of the tensor Lagrange polynomial of the grid node at `offset` (grid of `steps`
/// intervals per axis on [-1, 1]) at local point `p`, for `k < dim`.
fn lagrange_gradient(offset: [usize; 3], steps: usize, dim: usize, p: [f64; 3]) -> [f64; 3] {
    let nodes: Vec<f64> = (0..=steps).map(|j| -1.0 + 2.0 * j as f64 / steps as f64).collect();
    // The 1-D polynomial through `nodes` that is 1 at node i and 0 at the others, and its slope.
    let value = |i: usize, x: f64| -> f64 {
        (0..=steps)
            .filter(|&m| m != i)
            .map(|m| (x - nodes[m]) / (nodes[i] - nodes[m]))
            .product()
    };
    let slope = |i: usize, x: f64| -> f64 {
        (0..=steps)
            .filter(|&m| m != i)
            .map(|m| {
                (0..=steps)
                    .filter(|&q| q != i && q != m)
                    .map(|q| (x - nodes[q]) / (nodes[i] - nodes[q]))
                    .product::<f64>()
                    / (nodes[i] - nodes[m])
            })
            .sum()
    };
    std::array::from_fn(|k| {
        if k >= dim {
            return 0.0;
        }
        (0..dim)
            .map(|a| {
                if a == k {
                    slope(offset[a], p[a])
                } else {
                    value(offset[a], p[a])
                }
            })
            .product()
    })
}
