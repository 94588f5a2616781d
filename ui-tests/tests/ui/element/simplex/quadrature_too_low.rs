// One point per direction integrates degree 1 exactly; the linear triangle's mass matrix has degree 2.

#[clforge::element(dim = 2, nodes = 3, operator = plane_stress, cell = simplex, quadrature = 1)]
pub mod tri {
    pub const NODES: [[f64; 2]; 3] = [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]];
    pub fn shape(r: f64, s: f64) -> [f64; 3] { [1.0 - r - s, r, s] }
    pub fn material(_m: &f64) -> [[f64; 3]; 3] {
        [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    }
    pub fn density(_m: &f64) -> f64 {
        1.0
    }
}

fn main() {}
