//! `#[derive(Params)]`: the struct's OpenCL declaration and its bytes in that layout.

use super::rt;
use crate::model::params::ParamsStruct;
use proc_macro2::TokenStream;
use quote::quote;

pub fn expand(p: &ParamsStruct) -> TokenStream {
    let rt = rt();
    let ident = &p.ident;
    let name = syn::ext::IdentExt::unraw(ident).to_string();
    let names: Vec<String> = p
        .fields
        .iter()
        .map(|(n, ..)| syn::ext::IdentExt::unraw(n).to_string())
        .collect();
    let fields: Vec<&syn::Ident> = p.fields.iter().map(|(n, ..)| n).collect();
    let tys: Vec<&syn::Type> = p.fields.iter().map(|(_, t, _)| t).collect();
    quote! {
        impl #rt::Params for #ident {
            const CL_NAME: &'static str = #name;
            fn cl_declaration(cl_name: &str) -> ::std::string::String {
                let mut decl = #rt::StructDecl::new(cl_name);
                #(decl.field::<#tys>(#names);)*
                decl.finish()
            }
            fn to_bytes(&self) -> ::std::vec::Vec<u8> {
                let mut bytes = #rt::StructBytes::default();
                #(bytes.put(self.#fields);)*
                bytes.finish()
            }
        }
    }
}
