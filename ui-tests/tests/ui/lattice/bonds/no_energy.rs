// A bond model without its energy.
#[clforge::lattice(bonds = 1)]
mod model {
    pub const NEIGHBOURS: [[[i32; 4]; 1]; 1] = [[[1, 0, 0, 0]]];
}

fn main() {}
