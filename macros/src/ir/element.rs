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
    /// The element-matrix kernels' structure (every element has them).
    pub forming: Forming,
}

/// What the element-matrix kernels (`templates/element/forming.cl.tera`) are built from.
#[derive(Clone, Debug)]
pub struct Forming {
    /// `Some("trunk, order 5")` for a modal element; `None` for a nodal one.
    pub modal: Option<String>,
    pub dim: usize,
    /// Shape functions, and how many of them (the first) carry the geometry.
    pub nf: usize,
    pub ng: usize,
    pub dofs: usize,
    pub strains: usize,
    /// The reference cell, and the rule's size on it: Gauss-Legendre points per direction on a
    /// box, the `n` of the collapsed rule (degree `2n - 1`) on a simplex.
    pub cell: clforge_abi::Cell,
    pub nq1: usize,
    /// The non-zeros of `B` for one function: (strain row, DOF component, derivative axis).
    pub b: Vec<(usize, usize, usize)>,
}

impl Forming {
    /// Whether the device kernels can form it: `B` reads gradients only (an operator over
    /// values, `Operator::Full`, is formed on the host).
    pub fn on_device(&self) -> bool {
        self.b.iter().all(|&(_, _, axis)| axis < self.dim)
    }

    /// Points of the rule.
    pub fn nq(&self) -> usize {
        self.cell.points(self.dim, self.nq1)
    }

    /// The rule in words, for the generated file's header.
    pub fn rule(&self) -> String {
        match self.cell {
            clforge_abi::Cell::Cube => format!("{}^{} = {} Gauss-Legendre points", self.nq1, self.dim, self.nq()),
            clforge_abi::Cell::Simplex => format!(
                "{} points of the collapsed simplex rule exact to degree {}",
                self.nq(),
                2 * self.nq1 - 1
            ),
        }
    }
}

impl ElementBody {
    /// DOFs per element.
    pub fn nd(&self) -> usize {
        self.nodes * self.dofs
    }
}
