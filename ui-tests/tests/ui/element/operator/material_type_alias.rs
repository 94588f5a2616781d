// `material` returns `D` through a type alias: the attribute reads the size from the written
// array, and says so at the alias. (`let a: f64` in `shape` is fine.)
use clforge::prelude::*;

pub struct Steel {
    pub e: f64,
}

pub type Stiffness = [[f64; 3]; 3];

#[element(dim = 2, nodes = 4, operator = plane_stress, quadrature = 2)]
pub mod quad4 {
    use super::{Steel, Stiffness};

    pub const NODES: [[f64; 2]; 4] = [[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]];

    pub fn shape(r: f64, s: f64) -> [f64; 4] {
        let a: f64 = 1.0 - r;
        [a * (1.0 - s) / 4.0, (1.0 + r) * (1.0 - s) / 4.0, (1.0 + r) * (1.0 + s) / 4.0, a * (1.0 + s) / 4.0]
    }

    pub fn material(m: &Steel) -> Stiffness {
        [[m.e, 0.0, 0.0], [0.0, m.e, 0.0], [0.0, 0.0, m.e]]
    }

    pub fn density(_m: &Steel) -> f64 {
        1.0
    }
}

fn main() {}
