// `dofs = 3` with `operator = plane_stress`: plane elasticity has 2 DOFs per node.

pub struct Elastic {
    pub e: f64,
    pub rho: f64,
}

#[clforge::element(dim = 2, nodes = 4, dofs = 3, operator = plane_stress, quadrature = 2)]
pub mod quad4 {
    use super::Elastic;

    pub const NODES: [[f64; 2]; 4] = [[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]];

    pub fn shape(r: f64, s: f64) -> [f64; 4] {
        [
            0.25 * (1.0 - r) * (1.0 - s),
            0.25 * (1.0 + r) * (1.0 - s),
            0.25 * (1.0 + r) * (1.0 + s),
            0.25 * (1.0 - r) * (1.0 + s),
        ]
    }

    pub fn material(m: &Elastic) -> [[f64; 3]; 3] {
        [[m.e, 0.0, 0.0], [0.0, m.e, 0.0], [0.0, 0.0, m.e / 2.0]]
    }

    pub fn density(m: &Elastic) -> f64 {
        m.rho
    }
}

fn main() {}
