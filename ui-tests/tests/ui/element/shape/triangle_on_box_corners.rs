// A linear triangle written on three corners of the box: interpolating, a partition of unity,
// but integrated over the whole square it would be twice as stiff. Refused at `NODES`.

pub struct Elastic {
    pub e: f64,
    pub rho: f64,
}

#[clforge::element(dim = 2, nodes = 3, operator = plane_stress, quadrature = 2)]
pub mod tri3 {
    use super::Elastic;

    pub const NODES: [[f64; 2]; 3] = [[-1.0, -1.0], [1.0, -1.0], [-1.0, 1.0]];

    pub fn shape(r: f64, s: f64) -> [f64; 3] {
        [-0.5 * (r + s), 0.5 * (1.0 + r), 0.5 * (1.0 + s)]
    }

    pub fn material(m: &Elastic) -> [[f64; 3]; 3] {
        [[m.e, 0.0, 0.0], [0.0, m.e, 0.0], [0.0, 0.0, m.e / 2.0]]
    }

    pub fn density(m: &Elastic) -> f64 {
        m.rho
    }
}

fn main() {}
