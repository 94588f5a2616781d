//! A user template family named in an attribute (`template = "templates/energy.cl.tera"`) and
//! the kernels it defines, declared in the annotated module as
//! ```text
//! extern "OpenCL" {
//!     /// Strain energy of each element.
//!     fn strain_energy(k: &[f32], elem_nodes: &[i32], u: &[f32], energy: &mut [f32], count: i32);
//! }
//! ```
//! -> `model::family::UserFamily`. The declaration is the kernel's ABI: the template prints the
//! signature from it (`k.strain_energy.params`) and the generated launcher binds it in order.

use super::Errors;
use crate::model::family::{UserFamily, UserKernel, UserParam, UserParamKind};
use crate::model::Scalar;
use std::path::PathBuf;
use syn::ext::IdentExt;
use syn::spanned::Spanned;

/// The ABI string that marks a block of user kernels.
pub const ABI: &str = "OpenCL";

/// Names a user kernel or parameter may not take: OpenCL C keywords and types, and the names
/// the generated code or the launcher already uses.
const RESERVED: &[&str] = &[
    "at",
    "auto",
    "bool",
    "break",
    "case",
    "char",
    "const",
    "constant",
    "continue",
    "default",
    "do",
    "double",
    "else",
    "enum",
    "extern",
    "float",
    "for",
    "global",
    "goto",
    "half",
    "if",
    "image2d_t",
    "image3d_t",
    "inline",
    "int",
    "kernel",
    "local",
    "long",
    "private",
    "read_only",
    "real",
    "real8",
    "register",
    "restrict",
    "return",
    "sampler_t",
    "short",
    "signed",
    "sizeof",
    "static",
    "struct",
    "switch",
    "typedef",
    "uchar",
    "uint",
    "ulong",
    "union",
    "unsigned",
    "ushort",
    "void",
    "volatile",
    "while",
    "write_only",
];

/// Whether an item is an `extern "OpenCL" { ... }` block.
pub fn is_kernel_block(item: &syn::Item) -> bool {
    matches!(item, syn::Item::ForeignMod(m) if m.abi.name.as_ref().is_some_and(|n| n.value() == ABI))
}

/// Reads the template named by `lit`, relative to the crate being compiled.
pub fn read_template(lit: &syn::LitStr) -> syn::Result<(String, PathBuf, String)> {
    let shown = lit.value();
    let base = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_default();
    let path = base.join(&shown);
    // A device or a pipe (`/dev/zero`, `/dev/stdin`) would be read for ever.
    let text = match std::fs::metadata(&path) {
        Ok(m) if !m.is_file() => Err(std::io::Error::other("not a regular file")),
        _ => std::fs::read_to_string(&path),
    }
    .map_err(|e| {
        syn::Error::new(
            lit.span(),
            format!(
                "cannot read template `{shown}` ({}): {e}; the path is relative to the crate's Cargo.toml",
                path.display()
            ),
        )
    })?;
    // An absolute path, so that `include_bytes!` finds it from any module.
    let path = std::fs::canonicalize(&path).unwrap_or(path);
    Ok((shown, path, text))
}

/// The user family of an item: the template named in the attribute and the kernels declared in
/// the module's `extern "OpenCL"` block. Each needs the other; `builtin` are the names the
/// item's own family already defines.
pub fn family(
    template: Option<&syn::LitStr>,
    items: &[syn::Item],
    builtin: &[&str],
    errors: &mut Errors,
) -> Option<UserFamily> {
    let blocks: Vec<&syn::ItemForeignMod> = items
        .iter()
        .filter_map(|i| match i {
            syn::Item::ForeignMod(m) if is_kernel_block(i) => Some(m),
            _ => None,
        })
        .collect();
    let Some(lit) = template else {
        for b in &blocks {
            errors.spanned(
                &b.abi,
                "`extern \"OpenCL\"` kernels are defined by a template: name it in the attribute, \
                 e.g. `template = \"templates/energy.cl.tera\"`",
            );
        }
        return None;
    };
    let (shown, path, text) = match read_template(lit) {
        Ok(t) => t,
        Err(e) => {
            errors.push(e);
            return None;
        }
    };
    let mut kernels: Vec<UserKernel> = Vec::new();
    for item in blocks.iter().flat_map(|b| &b.items) {
        match item {
            syn::ForeignItem::Fn(f) => {
                if let Some(k) = kernel(f, errors) {
                    let name = k.name.unraw().to_string();
                    if builtin.contains(&name.as_str()) {
                        errors.spanned(
                            &k.name,
                            format!("`{name}` is a kernel of the built-in family already; choose another name"),
                        );
                    } else if kernels.iter().any(|o| o.name.unraw() == k.name.unraw()) {
                        errors.spanned(&k.name, format!("kernel `{name}` is declared twice"));
                    } else {
                        kernels.push(k);
                    }
                }
            }
            other => errors.spanned(
                other,
                "only kernel declarations go in `extern \"OpenCL\"`: `fn name(u: &[f32], out: &mut [f32], n: i32);`",
            ),
        }
    }
    if kernels.is_empty() && blocks.is_empty() {
        errors.spanned(
            lit,
            format!(
                "template `{shown}` adds kernels that need declarations: add \
                 `extern \"OpenCL\" {{ fn my_kernel(u: &[f32], out: &mut [f32], n: i32); }}` to the module"
            ),
        );
    }
    Some(UserFamily {
        shown,
        path,
        text,
        span: lit.span(),
        kernels,
    })
}

fn reserved(name: &syn::Ident, what: &str, errors: &mut Errors) -> bool {
    // `r#int` is `int` in OpenCL too.
    let s = name.unraw().to_string();
    let bad = RESERVED.contains(&s.as_str()) || s.starts_with("__") || s.starts_with("get_");
    if bad {
        errors.spanned(
            name,
            format!("`{s}` cannot name a {what}: it is reserved in OpenCL C or by the generated code"),
        );
    }
    bad
}

fn kernel(f: &syn::ForeignItemFn, errors: &mut Errors) -> Option<UserKernel> {
    let sig = &f.sig;
    let mut ok = !reserved(&sig.ident, "kernel", errors);
    if !sig.generics.params.is_empty() {
        errors.spanned(&sig.generics, "OpenCL kernels cannot be generic");
        ok = false;
    }
    if let syn::ReturnType::Type(_, ty) = &sig.output {
        errors.spanned(
            ty,
            "kernels return nothing; write results through a `&mut [T]` parameter",
        );
        ok = false;
    }
    if let Some(v) = &sig.variadic {
        errors.spanned(v, "kernels take a fixed parameter list");
        ok = false;
    }
    let mut params: Vec<UserParam> = Vec::new();
    for input in &sig.inputs {
        let syn::FnArg::Typed(pt) = input else {
            errors.spanned(input, "kernels are free functions; `self` is not allowed");
            ok = false;
            continue;
        };
        let name = match &*pt.pat {
            syn::Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() && p.mutability.is_none() => &p.ident,
            other => {
                errors.spanned(other, "kernel parameters are plain names, e.g. `u: &[f32]`");
                ok = false;
                continue;
            }
        };
        if reserved(name, "kernel parameter", errors) {
            ok = false;
            continue;
        }
        if params.iter().any(|p| p.name.unraw() == name.unraw()) {
            errors.spanned(name, format!("parameter `{name}` is declared twice"));
            ok = false;
            continue;
        }
        match param_type(&pt.ty) {
            Ok((scalar, kind)) => params.push(UserParam {
                name: name.clone(),
                scalar,
                kind,
            }),
            Err(msg) => {
                errors.push(syn::Error::new(pt.ty.span(), msg));
                ok = false;
            }
        }
    }
    ok.then(|| UserKernel {
        name: sig.ident.clone(),
        doc: super::doc_lines(&f.attrs),
        params,
    })
}

const TYPES: &str =
    "`&[T]` (read), `&mut [T]` (written) with T one of f32, i32, u32, u8, or a value `f32`, `i32`, `u32`";

fn scalar_of(ty: &syn::Type) -> Option<Scalar> {
    match ty {
        syn::Type::Path(p) if p.qself.is_none() => p.path.get_ident().and_then(|i| Scalar::from_ident(&i.to_string())),
        _ => None,
    }
}

fn param_type(ty: &syn::Type) -> Result<(Scalar, UserParamKind), String> {
    let unsupported = |what: &str| format!("{what}; kernel parameters are {TYPES}");
    match ty {
        syn::Type::Reference(r) => {
            let syn::Type::Slice(s) = &*r.elem else {
                return Err(unsupported("a buffer is a slice"));
            };
            match scalar_of(&s.elem) {
                Some(sc @ (Scalar::F32 | Scalar::I32 | Scalar::U32 | Scalar::U8)) => Ok((
                    sc,
                    if r.mutability.is_some() {
                        UserParamKind::Write
                    } else {
                        UserParamKind::Read
                    },
                )),
                Some(Scalar::F64) => Err(unsupported(
                    "`f64` buffers need `cl_khr_fp64`, which this family does not enable",
                )),
                _ => Err(unsupported("unsupported buffer element")),
            }
        }
        _ => match scalar_of(ty) {
            Some(sc @ (Scalar::F32 | Scalar::I32 | Scalar::U32)) => Ok((sc, UserParamKind::Value)),
            Some(_) => Err(unsupported("unsupported value type")),
            None => Err(unsupported("unsupported type")),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameter_types_map_to_access() {
        let t = |s: &str| param_type(&syn::parse_str::<syn::Type>(s).unwrap());
        assert_eq!(t("&[f32]"), Ok((Scalar::F32, UserParamKind::Read)));
        assert_eq!(t("&mut [i32]"), Ok((Scalar::I32, UserParamKind::Write)));
        assert_eq!(t("u32"), Ok((Scalar::U32, UserParamKind::Value)));
        assert!(t("&[f64]").unwrap_err().contains("cl_khr_fp64"));
        assert!(t("Vec<f32>").is_err());
        assert!(t("&f32").is_err());
    }

    #[test]
    fn kernels_are_checked() {
        let items: Vec<syn::Item> = vec![syn::parse_quote! {
            extern "OpenCL" {
                fn energy(u: &[f32], out: &mut [f32], n: i32);
                fn coloured(u: &[f32]);
                fn bad(int: f32) -> f32;
            }
        }];
        let mut errors = Errors::default();
        let lit: syn::LitStr = syn::parse_quote!("Cargo.toml");
        let fam = family(Some(&lit), &items, &["coloured"], &mut errors).unwrap();
        assert_eq!(fam.kernels.len(), 1);
        assert_eq!(fam.kernels[0].params.len(), 3);
        let msg = errors
            .finish()
            .unwrap_err()
            .into_iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>();
        assert!(msg.iter().any(|m| m.contains("built-in family")), "{msg:?}");
        assert!(msg.iter().any(|m| m.contains("`int` cannot name")), "{msg:?}");
        assert!(msg.iter().any(|m| m.contains("return nothing")), "{msg:?}");
    }

    #[test]
    fn kernels_need_a_template() {
        let items: Vec<syn::Item> = vec![syn::parse_quote!(
            extern "OpenCL" {
                fn energy(u: &[f32]);
            }
        )];
        let mut errors = Errors::default();
        assert!(family(None, &items, &[], &mut errors).is_none());
        assert!(errors
            .finish()
            .unwrap_err()
            .to_string()
            .contains("defined by a template"));
    }
}
