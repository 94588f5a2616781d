//! 2-D Ising model, checkerboard Metropolis (the lattice kind's smallest rule): a spin flips
//! when the energy falls, else with probability exp(-β ΔE), compared as integers against the
//! thresholds `t4`, `t8` of ΔE = 4 and 8 (in units of J), so host and device accept alike.
use clforge::prelude::*;

/// One site of the checkerboard: neighbours at odd offsets only.
#[lattice(boundary = periodic)]
pub fn ising(s: &Lattice<i32>, rng: &Draws, t4: u32, t8: u32) -> i32 {
    let h = s.at(1, 0) + s.at(-1, 0) + s.at(0, 1) + s.at(0, -1);
    let de = 2 * s.at(0, 0) * h;
    let u = rng.draw(0);
    if de <= 0 || (de == 4 && u < t4) || (de == 8 && u < t8) {
        -s.at(0, 0)
    } else {
        s.at(0, 0)
    }
}
