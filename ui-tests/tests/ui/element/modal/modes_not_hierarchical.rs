// The 1-D functions must be hierarchical: function 2 must vanish at both ends and function 3
// must have degree 3; each is refused at its own expression.

#[clforge::element(dim = 3, operator = elasticity, basis = tensor, order = 3)]
pub mod hex {
    pub fn modes(x: f64) -> [f64; 4] {
        [0.5 * (1.0 - x), 0.5 * (1.0 + x), 1.0 - x, x * (1.0 - x * x) * x]
    }
    pub fn material(_m: &f64) -> [[f64; 6]; 6] {
        [[1.0; 6]; 6]
    }
    pub fn density(_m: &f64) -> f64 {
        1.0
    }
}

fn main() {}
