//! The element's structure, shared by all its kernels: sizes, the local nodes' places on a
//! structured node grid, and the shape functions' derivatives (exact polynomials).

use crate::model::element::Poly;

#[derive(Clone, Debug)]
pub struct ElementBody {
    /// Spatial dimension, nodes per element, DOFs per node.
    pub dim: usize,
    pub nodes: usize,
    pub dofs: usize,
    /// Node-grid steps per element edge (1 linear, 2 quadratic).
    pub order: usize,
    /// Structured-grid offsets of the local nodes, in node-grid steps.
    pub node_offsets: Vec<[usize; 3]>,
    /// Rows of `G_e`.
    pub strains: usize,
    /// `dshape[axis][node]`: derivatives of the shape functions.
    pub dshape: Vec<Vec<Poly>>,
    /// Lanes of the packed rows and chunks per row: each K_e row is `chunks` x `real<lanes>`.
    pub lanes: usize,
    pub chunks: usize,
}

impl ElementBody {
    /// DOFs per element.
    pub fn nd(&self) -> usize {
        self.nodes * self.dofs
    }
}
