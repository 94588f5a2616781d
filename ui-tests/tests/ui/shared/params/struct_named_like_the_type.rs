// A params struct named like the type the attribute generates for the function (`Bruss` for
// `fn bruss`): the two would collide; the error says so at the struct's name.
use clforge::prelude::*;

#[derive(Clone, Copy, Debug, Params)]
pub struct Bruss {
    pub a: f32,
}

#[clforge::stencil]
pub fn bruss(u: &Grid<f32>, k: &Bruss) -> f32 {
    u.at(0, 0) * k.a
}

fn main() {}
