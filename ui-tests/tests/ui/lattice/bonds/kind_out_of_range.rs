// A neighbour of kind 3 on a lattice of 3 bonds per site (kinds 0, 1, 2).
#[clforge::lattice(bonds = 3)]
mod model {
    pub const NEIGHBOURS: [[[i32; 4]; 1]; 3] = [[[0, 0, 0, 1]], [[0, 0, 0, 3]], [[0, 0, 0, 0]]];
    pub fn energy(broken: u64, _groups: u64) -> f64 {
        broken as f64
    }
}

fn main() {}
