// The energy takes the counters as u64 and returns f64.
#[clforge::lattice(bonds = 1)]
mod model {
    pub const NEIGHBOURS: [[[i32; 4]; 1]; 1] = [[[1, 0, 0, 0]]];
    pub fn energy(broken: f32) -> f64 {
        broken as f64
    }
}

fn main() {}
