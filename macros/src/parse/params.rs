//! `#[derive(Params)]`: a struct of scalars passed to kernels in constant memory.

use crate::model::params::ParamsStruct;
use crate::model::Scalar;
use quote::ToTokens;

pub fn from_syn(input: &syn::DeriveInput) -> syn::Result<ParamsStruct> {
    if !input.generics.params.is_empty() {
        return Err(syn::Error::new_spanned(
            &input.generics,
            "`Params` structs cannot be generic",
        ));
    }
    let syn::Data::Struct(data) = &input.data else {
        return Err(syn::Error::new_spanned(
            &input.ident,
            "`Params` derives for structs with named scalar fields",
        ));
    };
    let syn::Fields::Named(named) = &data.fields else {
        // A unit struct has no field tokens to point at.
        let at = match &data.fields {
            syn::Fields::Unit => input.ident.to_token_stream(),
            other => other.to_token_stream(),
        };
        return Err(syn::Error::new_spanned(at, "`Params` needs named fields"));
    };
    let mut errors = crate::diag::Errors::default();
    let mut fields = Vec::new();
    for f in &named.named {
        let scalar = match &f.ty {
            syn::Type::Path(p) => p.path.get_ident().and_then(|i| Scalar::from_ident(&i.to_string())),
            _ => None,
        }
        .filter(|s| *s != Scalar::Bool);
        match (scalar, &f.ident) {
            // syn reads `_: f32` (unnamed fields, unstable); `self._` is no Rust.
            (_, Some(id)) if id == "_" => errors.spanned(id, "`Params` fields need names"),
            (Some(s), Some(id)) => fields.push((id.clone(), f.ty.clone(), s)),
            _ => errors.spanned(&f.ty, "`Params` fields are `f32`, `f64`, `i32`, `u32` or `u8`"),
        }
    }
    errors.finish()?;
    if fields.is_empty() {
        return Err(syn::Error::new_spanned(
            &input.ident,
            "a `Params` struct needs at least one field",
        ));
    }
    Ok(ParamsStruct {
        ident: input.ident.clone(),
        fields,
    })
}
