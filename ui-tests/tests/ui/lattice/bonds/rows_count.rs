// Two rows of neighbours for three bonds per site.
#[clforge::lattice(bonds = 3)]
mod model {
    pub const NEIGHBOURS: [[[i32; 4]; 1]; 2] = [[[0, 0, 0, 1]], [[0, 0, 0, 0]]];
    pub fn energy(broken: u64, _groups: u64) -> f64 {
        broken as f64
    }
}

fn main() {}
