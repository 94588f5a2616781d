// Groups marked by a bond kind the lattice does not have.
#[clforge::lattice(bonds = 2, group_kind = 2, group_axis = z)]
mod model {
    pub const NEIGHBOURS: [[[i32; 4]; 1]; 2] = [[[0, 0, 0, 1]], [[0, 0, 0, 0]]];
    pub fn energy(broken: u64, _groups: u64) -> f64 {
        broken as f64
    }
}

fn main() {}
