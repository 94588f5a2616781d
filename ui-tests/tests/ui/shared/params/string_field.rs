// A `Params` derive with a `String` field: params fields are scalars.
#[derive(clforge::Params)]
pub struct Coeffs {
    pub a: f32,
    pub name: String,
}

fn main() {}
