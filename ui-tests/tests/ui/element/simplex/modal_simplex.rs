// Hierarchical bases are built on the box only.

#[clforge::element(dim = 3, operator = elasticity, cell = simplex, basis = trunk, order = 2)]
pub mod tet {
    pub fn material(_m: &f64) -> [[f64; 6]; 6] {
        [[1.0; 6]; 6]
    }
    pub fn density(_m: &f64) -> f64 {
        1.0
    }
}

fn main() {}
