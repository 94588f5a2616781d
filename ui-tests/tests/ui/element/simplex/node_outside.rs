// Every node must lie in the unit simplex: (1, 1) is outside the triangle.

#[clforge::element(dim = 2, nodes = 4, operator = plane_stress, cell = simplex, quadrature = 3)]
pub mod tri {
    pub const NODES: [[f64; 2]; 4] = [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]];
    pub fn shape(r: f64, s: f64) -> [f64; 4] { [1.0 - r - s + r * s, r - r * s, s - r * s, r * s] }
    pub fn material(_m: &f64) -> [[f64; 3]; 3] {
        [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    }
    pub fn density(_m: &f64) -> f64 {
        1.0
    }
}

fn main() {}
