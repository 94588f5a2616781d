//! A `#[derive(Params)]` struct: scalars passed to kernels in constant memory.

use super::Scalar;

pub struct ParamsStruct {
    pub ident: syn::Ident,
    pub fields: Vec<(syn::Ident, syn::Type, Scalar)>,
}
