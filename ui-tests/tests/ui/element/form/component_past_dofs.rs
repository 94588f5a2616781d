// Component 2 of a field with two.

pub struct Heat {
    pub k: f64,
    pub c: f64,
}

#[clforge::element(dim = 2, nodes = 4, dofs = 2, quadrature = 2)]
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
        m.k * dot(u.grad_of(2), v.grad_of(0))
    }
    #[form(mass)]
    pub fn inertia(u: &Field, v: &Field, _x: &Position, m: &Heat) -> f64 {
        m.c * dot(u.vector(), v.vector())
    }

}

fn main() {}
