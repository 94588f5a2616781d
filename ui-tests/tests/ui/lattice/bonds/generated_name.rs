// `model` is generated in a bond model's module.
#[clforge::lattice(bonds = 1)]
mod m {
    pub const NEIGHBOURS: [[[i32; 4]; 1]; 1] = [[[1, 0, 0, 0]]];
    pub fn energy(broken: u64, _groups: u64) -> f64 {
        broken as f64
    }
    pub fn model() {}
}

fn main() {}
