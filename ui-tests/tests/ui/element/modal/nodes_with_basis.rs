// A modal element's size follows from its basis and order: `nodes` is refused.

#[clforge::element(dim = 3, nodes = 32, operator = elasticity, basis = trunk, order = 3)]
pub mod hex {
    pub fn material(_m: &f64) -> [[f64; 6]; 6] {
        [[1.0; 6]; 6]
    }
    pub fn density(_m: &f64) -> f64 {
        1.0
    }
}

fn main() {}
