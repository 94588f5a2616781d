// A stencil written by `macro_rules!` with an unsupported value type in a `ty` fragment: the
// refusal is the one a written-out type gets, at the type.

use clforge::prelude::*;

macro_rules! smooth {
    ($name:ident, $t:ty) => {
        #[clforge::stencil]
        fn $name(u: &Grid<$t>) -> $t {
            u.at(1, 0) + u.at(-1, 0)
        }
    };
}

smooth!(smooth_i64, i64);

fn main() {}
