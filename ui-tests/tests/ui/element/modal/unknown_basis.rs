// An unknown basis name is refused at the name, with the two spaces listed.

#[clforge::element(dim = 3, operator = elasticity, basis = serendipity, order = 3)]
pub mod hex {
    pub fn material(_m: &f64) -> [[f64; 6]; 6] {
        [[1.0; 6]; 6]
    }
    pub fn density(_m: &f64) -> f64 {
        1.0
    }
}

fn main() {}
