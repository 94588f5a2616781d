// Orders 1 to 8 are accepted.

#[clforge::element(dim = 3, operator = elasticity, basis = trunk, order = 9)]
pub mod hex {
    pub fn material(_m: &f64) -> [[f64; 6]; 6] {
        [[1.0; 6]; 6]
    }
    pub fn density(_m: &f64) -> f64 {
        1.0
    }
}

fn main() {}
