// A Tera syntax error in the user's template: reported at the attribute with the template's file and line.
use clforge::prelude::*;

#[element(dim = 2, nodes = 4, operator = diffusion, quadrature = 2, template = "../../../../ui-tests/tests/ui/element/template/syntax_error.cl.tera")]
mod quad4 {
    pub const NODES: [[f64; 2]; 4] = [[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]];

    pub fn shape(r: f64, s: f64) -> [f64; 4] {
        [
            0.25 * (1.0 - r) * (1.0 - s),
            0.25 * (1.0 + r) * (1.0 - s),
            0.25 * (1.0 + r) * (1.0 + s),
            0.25 * (1.0 - r) * (1.0 + s),
        ]
    }

    pub fn material(k: &f64) -> [[f64; 2]; 2] {
        [[*k, 0.0], [0.0, *k]]
    }

    pub fn density(_k: &f64) -> f64 {
        1.0
    }

    extern "OpenCL" {
        fn flux(u: &[f32], out: &mut [f32], n: i32);
    }
}

fn main() {}
