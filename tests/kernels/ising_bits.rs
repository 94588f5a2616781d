//! 2-D Ising model on bit-packed spins (`Lattice<bool>`, true = up): multi-spin coding, 32
//! spins of one colour per word. `a` aligned neighbours give ΔE = 4a − 8.
use clforge::prelude::*;

#[lattice]
pub fn ising_bits(s: &Lattice<bool>, rng: &Draws, t4: u32, t8: u32) -> bool {
    let me = s.at(0, 0);
    let a =
        (s.at(1, 0) == me) as u32 + (s.at(-1, 0) == me) as u32 + (s.at(0, 1) == me) as u32 + (s.at(0, -1) == me) as u32;
    let u = rng.draw(0);
    if a <= 2 || (a == 3 && u < t4) || (a == 4 && u < t8) {
        !me
    } else {
        me
    }
}
