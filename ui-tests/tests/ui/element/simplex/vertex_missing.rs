// A simplex element needs a node at every vertex of the unit triangle: (0, 1) is missing.

#[clforge::element(dim = 2, nodes = 3, operator = plane_stress, cell = simplex, quadrature = 2)]
pub mod tri {
    pub const NODES: [[f64; 2]; 3] = [[0.0, 0.0], [1.0, 0.0], [0.5, 0.5]];
    pub fn shape(r: f64, s: f64) -> [f64; 3] { [1.0 - r - s, r - s, 2.0 * s] }
    pub fn material(_m: &f64) -> [[f64; 3]; 3] {
        [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    }
    pub fn density(_m: &f64) -> f64 {
        1.0
    }
}

fn main() {}
