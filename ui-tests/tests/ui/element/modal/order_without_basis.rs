// `order` belongs to a modal element: without `basis` it is refused at `order`.

#[clforge::element(dim = 3, nodes = 8, operator = elasticity, quadrature = 2, order = 3)]
pub mod hex {
    pub fn material(_m: &f64) -> [[f64; 6]; 6] {
        [[1.0; 6]; 6]
    }
    pub fn density(_m: &f64) -> f64 {
        1.0
    }
}

fn main() {}
