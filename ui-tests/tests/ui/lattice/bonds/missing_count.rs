// A bond model must say how many bonds a site holds.
#[clforge::lattice(group_axis = z)]
mod model {
    pub const NEIGHBOURS: [[[i32; 4]; 1]; 1] = [[[1, 0, 0, 0]]];
    pub fn energy(broken: u64, _groups: u64) -> f64 {
        broken as f64
    }
}

fn main() {}
