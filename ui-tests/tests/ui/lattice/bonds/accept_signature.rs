// The acceptance maps an energy difference to a probability: fn accept(du: f64) -> f64.
#[clforge::lattice(bonds = 1)]
mod model {
    pub const NEIGHBOURS: [[[i32; 4]; 1]; 1] = [[[1, 0, 0, 0]]];
    pub fn energy(broken: u64, _groups: u64) -> f64 {
        broken as f64
    }
    pub fn accept(du: f64) -> bool {
        du < 0.0
    }
}

fn main() {}
