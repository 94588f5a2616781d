// `packed(s = 2)` packs the state (`state = s`) that the steps variant replaces with the
// output at each step: a packed grid is read-only.
use clforge::prelude::*;

#[stencil(state = s, packed(s = 2))]
pub fn automaton(s: &Grid<u8>, other: &Grid<u8>) -> u8 {
    if s.at(1, 0) == 1 { 1 } else { other.at(0, 0) }
}

fn main() {}
