// A triangle written on box corners would be integrated over the box (twice its area): refused, pointing to `cell = simplex`.

#[clforge::element(dim = 2, nodes = 3, operator = plane_stress, quadrature = 2)]
pub mod tri {
    pub const NODES: [[f64; 2]; 3] = [[-1.0, -1.0], [1.0, -1.0], [-1.0, 1.0]];
    pub fn shape(r: f64, s: f64) -> [f64; 3] { [-0.5 * (r + s), 0.5 * (1.0 + r), 0.5 * (1.0 + s)] }
    pub fn material(_m: &f64) -> [[f64; 3]; 3] {
        [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    }
    pub fn density(_m: &f64) -> f64 {
        1.0
    }
}

fn main() {}
