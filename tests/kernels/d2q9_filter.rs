use clforge::prelude::*;

/// A D2Q9-weighted isotropic filter: a loop over a velocity table, a weight table, a mutable
/// accumulator and a helper.
#[clforge::stencil]
pub fn d2q9_filter(u: &Grid<f32>, k: f32) -> f32 {
    const C: [[isize; 2]; 9] = [
        [0, 0],
        [1, 0],
        [0, 1],
        [-1, 0],
        [0, -1],
        [1, 1],
        [-1, 1],
        [-1, -1],
        [1, -1],
    ];
    const W: [f32; 9] = [
        4.0 / 9.0,
        1.0 / 9.0,
        1.0 / 9.0,
        1.0 / 9.0,
        1.0 / 9.0,
        1.0 / 36.0,
        1.0 / 36.0,
        1.0 / 36.0,
        1.0 / 36.0,
    ];
    fn blend(a: f32, b: f32, t: f32) -> f32 {
        a + t * (b - a)
    }
    let mut mean = 0.0;
    let mut energy = 0.0;
    for q in 0..9 {
        let v = u.at(C[q][0], C[q][1]);
        mean += W[q] * v;
        energy += W[q] * v * v;
    }
    blend(u.at(0, 0), mean, k) + 0.0 * energy
}
