// `modes` of an order-3 element returns 4 functions: two vertex functions and a bubble per
// degree 2..=3.

#[clforge::element(dim = 3, operator = elasticity, basis = trunk, order = 3)]
pub mod hex {
    pub fn modes(x: f64) -> [f64; 3] {
        [0.5 * (1.0 - x), 0.5 * (1.0 + x), 1.0 - x * x]
    }
    pub fn material(_m: &f64) -> [[f64; 6]; 6] {
        [[1.0; 6]; 6]
    }
    pub fn density(_m: &f64) -> f64 {
        1.0
    }
}

fn main() {}
