// The third axis of a 2-D gradient.

pub struct Heat {
    pub k: f64,
    pub c: f64,
}

#[clforge::element(dim = 2, nodes = 4, quadrature = 2)]
pub mod quad4 {
    use super::Heat;
    use clforge::runtime::element::form::*;

    pub const NODES: [[f64; 2]; 4] = [[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]];

    pub fn shape(r: f64, s: f64) -> [f64; 4] {
        [
            0.25 * (1.0 - r) * (1.0 - s),
            0.25 * (1.0 + r) * (1.0 - s),
            0.25 * (1.0 + r) * (1.0 + s),
            0.25 * (1.0 - r) * (1.0 + s),
        ]
    }

    #[form(stiffness)]
    pub fn conduction(u: &Field, v: &Field, _x: &Position, m: &Heat) -> f64 {
        m.k * u.grad()[2] * v.grad()[2]
    }
    #[form(mass)]
    pub fn capacity(u: &Field, v: &Field, _x: &Position, m: &Heat) -> f64 {
        m.c * u.value() * v.value()
    }

}

fn main() {}
