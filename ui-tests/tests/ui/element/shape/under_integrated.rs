// A bilinear quad with one Gauss point: its stiffness would have hourglass modes; the error
// says so at `quadrature` and asks for two points.
use clforge::prelude::*;

pub struct Steel {
    pub e: f64,
}

#[element(dim = 2, nodes = 4, operator = plane_stress, quadrature = 1)]
pub mod quad4 {
    use super::Steel;

    pub const NODES: [[f64; 2]; 4] = [[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]];

    pub fn shape(r: f64, s: f64) -> [f64; 4] {
        let a = 1.0 - r;
        [a * (1.0 - s) / 4.0, (1.0 + r) * (1.0 - s) / 4.0, (1.0 + r) * (1.0 + s) / 4.0, a * (1.0 + s) / 4.0]
    }

    pub fn material(m: &Steel) -> [[f64; 3]; 3] {
        [[m.e, 0.0, 0.0], [0.0, m.e, 0.0], [0.0, 0.0, m.e]]
    }

    pub fn density(_m: &Steel) -> f64 {
        1.0
    }
}

fn main() {}
