//! `#[form]` items of an element module: bilinear and linear forms written as Rust functions of
//! the trial and test basis at a quadrature point (`runtime::element::form`'s `Field`).
//!
//! The functions stay ordinary Rust (the host reference that integrates them); this file reads
//! their bodies to refuse at the offending token what is not a form: a term not linear in the
//! trial or the test function (by degree: a product of two trial factors, a constant added to a
//! bilinear term, a non-linear function of a field), an unknown accessor, a component past
//! `dofs`, an index past `dim`. It also decides how the stiffness form reaches the device: over
//! the smallest set of strains that carries it (the gradient of a scalar; Voigt strains when it
//! reads only `sym_grad` and `div`; the full gradient otherwise), its coefficients evaluated per
//! material by the runtime.

mod scan;

use crate::model::element::Operator;
use crate::parse::Errors;
use proc_macro2::Span;
use scan::{Acc, Deg, Scan};
use std::collections::HashMap;
use syn::Ident;

/// What a form is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// `#[form(stiffness)]`: the element's operator, on the host and the device.
    Stiffness,
    /// `#[form(mass)]`: `ρ u·v`, the element's density.
    Mass,
    /// `#[form(load)]` or `#[form]` with three arguments: a linear form, host only.
    Load,
    /// `#[form]` with four arguments: a bilinear form checked and integrated on the host.
    Plain,
}

/// The forms of one element module, checked.
#[derive(Default)]
pub struct Forms {
    /// The stiffness form's function and the operator it lowers to.
    pub stiffness: Option<(Ident, Operator)>,
    /// The mass form's function.
    pub mass: Option<Ident>,
    /// The material type the forms take (`m: &T`).
    pub material_ty: Option<syn::Type>,
    /// Where the first `#[form(stiffness)]` was written.
    pub stiffness_span: Option<Span>,
    /// Whether a `#[form(mass)]` was written (refused or not).
    pub mass_written: bool,
    /// Whether a `#[form]` was refused (its error says why; no error about what it would give).
    pub refused: bool,
}

/// Whether `attrs` hold a `#[form]` attribute.
pub fn is_form_attr(a: &syn::Attribute) -> bool {
    a.path().is_ident("form")
}

/// Reads and checks every `#[form]` function of the module.
pub fn collect(items: &[syn::Item], dim: usize, dofs: usize, errors: &mut Errors) -> Forms {
    let mut forms = Forms::default();
    let fns: HashMap<String, &syn::ItemFn> = items
        .iter()
        .filter_map(|i| match i {
            syn::Item::Fn(f) => Some((f.sig.ident.to_string(), f)),
            _ => None,
        })
        .collect();
    for item in items {
        let syn::Item::Fn(f) = item else { continue };
        let Some(attr) = f.attrs.iter().find(|a| is_form_attr(a)) else {
            continue;
        };
        let Some(role) = role(attr, f, errors) else {
            forms.refused = true;
            continue;
        };
        forms.mass_written |= role == Role::Mass;
        if dofs > 3 {
            errors.spanned(
                attr,
                format!("forms hold fields of up to 3 components; this element has dofs = {dofs}"),
            );
            forms.refused = true;
            continue;
        }
        if role == Role::Stiffness {
            if forms.stiffness_span.is_some() {
                errors.spanned(attr, "an element has one stiffness form; add the terms into it");
                continue;
            }
            forms.stiffness_span = Some(f.sig.ident.span());
        }
        let Some(sig) = signature(f, role, errors) else {
            forms.refused = true;
            continue;
        };
        if let Some(ty) = &sig.material {
            match &forms.material_ty {
                Some(t) if quote::quote!(#t).to_string() != quote::quote!(#ty).to_string() => errors.spanned(
                    ty,
                    format!(
                        "every form of an element takes the same material type; another takes `{}`",
                        quote::quote!(#t)
                    ),
                ),
                Some(_) => {}
                None => forms.material_ty = Some(ty.clone()),
            }
        }
        let mut scan = Scan::new(
            sig.trial.clone(),
            sig.test.clone(),
            sig.position.clone(),
            (dim, dofs),
            &fns,
        );
        let deg = scan.block(&f.block);
        errors.extend(std::mem::take(&mut scan.errors));
        let Some(deg) = deg else {
            forms.refused = true;
            continue;
        };
        let want = if sig.trial.is_some() {
            Deg::D(1, 1)
        } else {
            Deg::D(0, 1)
        };
        if deg != want {
            errors.spanned(&f.sig.ident, whole_degree(&sig, deg));
            forms.refused = true;
            continue;
        }
        match role {
            Role::Stiffness => match stiffness_operator(&scan.uses, scan.position_use, dim, dofs, errors) {
                Some(op) => forms.stiffness = Some((f.sig.ident.clone(), op)),
                None => forms.refused = true,
            },
            Role::Mass => {
                if forms.mass.is_some() {
                    errors.spanned(attr, "an element has one mass form; add the terms into it");
                    continue;
                }
                if check_mass(&scan, dofs, errors) {
                    forms.mass = Some(f.sig.ident.clone());
                } else {
                    forms.refused = true;
                }
            }
            Role::Load | Role::Plain => {}
        }
    }
    forms
}

fn role(attr: &syn::Attribute, f: &syn::ItemFn, errors: &mut Errors) -> Option<Role> {
    let plain = if f.sig.inputs.len() == 3 {
        Role::Load
    } else {
        Role::Plain
    };
    match &attr.meta {
        syn::Meta::Path(_) => Some(plain),
        syn::Meta::List(list) => match list.parse_args::<Ident>() {
            Ok(id) if id == "stiffness" => Some(Role::Stiffness),
            Ok(id) if id == "mass" => Some(Role::Mass),
            Ok(id) if id == "load" => Some(Role::Load),
            Ok(id) => {
                errors.spanned(
                    &id,
                    format!("unknown form role `{id}`; expected `stiffness`, `mass` or `load` (or `#[form]` for a form the host integrates)"),
                );
                None
            }
            Err(e) => {
                errors.push(syn::Error::new(
                    e.span(),
                    "write a form's role as `#[form(stiffness)]`, `#[form(mass)]` or `#[form(load)]`",
                ));
                None
            }
        },
        syn::Meta::NameValue(nv) => {
            errors.spanned(
                nv,
                "write a form's role as `#[form(stiffness)]`, `#[form(mass)]` or `#[form(load)]`",
            );
            None
        }
    }
}

/// A form's parameters: trial (bilinear only), test, position and the material type.
struct Signature {
    trial: Option<String>,
    test: String,
    position: Option<String>,
    material: Option<syn::Type>,
}

fn signature(f: &syn::ItemFn, role: Role, errors: &mut Errors) -> Option<Signature> {
    let bilinear = matches!(role, Role::Stiffness | Role::Mass | Role::Plain);
    let want = if bilinear {
        "`fn name(u: &Field, v: &Field, x: &Position, m: &Material) -> f64`"
    } else {
        "`fn name(v: &Field, x: &Position, m: &Material) -> f64`"
    };
    let n = if bilinear { 4 } else { 3 };
    if f.sig.inputs.len() != n {
        let what = if bilinear { "a bilinear form" } else { "a linear form" };
        errors.spanned(&f.sig.inputs, format!("{what} takes {n} arguments: {want}"));
        return None;
    }
    if matches!(f.vis, syn::Visibility::Inherited) {
        errors.spanned(
            &f.sig.ident,
            format!(
                "form `{}` must be `pub`: the element type beside the module calls it",
                f.sig.ident
            ),
        );
    }
    match &f.sig.output {
        syn::ReturnType::Type(_, ty) if matches!(&**ty, syn::Type::Path(p) if p.path.is_ident("f64")) => {}
        _ => errors.spanned(
            &f.sig.output,
            format!("a form returns its value at the point as `f64`: {want}"),
        ),
    }
    let mut names = Vec::new();
    let mut material = None;
    for (i, arg) in f.sig.inputs.iter().enumerate() {
        let syn::FnArg::Typed(pt) = arg else {
            errors.spanned(arg, format!("a form is a free function: {want}"));
            return None;
        };
        let name = match &*pt.pat {
            syn::Pat::Ident(id) => id.ident.to_string(),
            syn::Pat::Wild(_) => "_".to_string(),
            other => {
                errors.spanned(other, "name the argument (`u`, `v`, `x`, `m`, or `_x` when unused)");
                return None;
            }
        };
        let syn::Type::Reference(r) = &*pt.ty else {
            errors.spanned(
                &pt.ty,
                format!("a form takes its arguments by shared reference: {want}"),
            );
            return None;
        };
        if i == n - 1 {
            material = Some((*r.elem).clone());
        }
        names.push(name);
    }
    let (trial, rest) = if bilinear {
        (Some(names[0].clone()), &names[1..])
    } else {
        (None, &names[..])
    };
    Some(Signature {
        trial,
        test: rest[0].clone(),
        position: Some(rest[1].clone()).filter(|p| p != "_"),
        material,
    })
}

/// Why a form's body has the wrong degree as a whole.
fn whole_degree(sig: &Signature, deg: Deg) -> String {
    let v = &sig.test;
    match (&sig.trial, deg) {
        (_, Deg::Zero) => "this form is identically zero".to_string(),
        (Some(u), Deg::D(du, dv)) => format!(
            "a bilinear form is linear in the trial function `{u}` and in the test function `{v}`; this one is {}",
            scan::describe(Deg::D(du, dv), u, v)
        ),
        (None, Deg::D(_, dv)) => format!(
            "a linear form is linear in the test function `{v}`; this one {}",
            if dv == 0 {
                format!("does not depend on `{v}`")
            } else {
                "is not".into()
            }
        ),
    }
}

/// The operator carrying a stiffness form: the fewest strains the accessors it reads need.
fn stiffness_operator(
    uses: &[(Acc, Span)],
    position: Option<Span>,
    dim: usize,
    dofs: usize,
    errors: &mut Errors,
) -> Option<Operator> {
    if let Some(span) = position {
        errors.push(syn::Error::new(
            span,
            "a stiffness form's coefficients are constant on each element: read them from the material (give each \
             element its own material for variable coefficients), not from the point `x`",
        ));
        return None;
    }
    // Values (reaction, Helmholtz-like terms): values and the full gradient, formed on the host.
    if uses
        .iter()
        .any(|(a, _)| matches!(a, Acc::Value | Acc::Comp | Acc::Vector))
    {
        return Some(Operator::Full(dofs));
    }
    let voigt = uses.iter().all(|(a, _)| matches!(a, Acc::SymGrad | Acc::Div));
    Some(match (dofs, dim) {
        (1, _) => Operator::Diffusion,
        (2, 2) if voigt => Operator::PlaneStrain,
        (3, 3) if voigt => Operator::Elasticity,
        _ => Operator::Gradient(dofs),
    })
}

/// A mass form is `ρ u·v`: values only, and for several components one `dot(u.vector(), v.vector())`.
fn check_mass(scan: &Scan, dofs: usize, errors: &mut Errors) -> bool {
    let mut ok = true;
    if let Some(span) = scan.position_use {
        errors.push(syn::Error::new(
            span,
            "a mass form's density is constant on each element: read it from the material, not from the point `x`",
        ));
        ok = false;
    }
    let wrong = scan.uses.iter().find(|(acc, _)| match acc {
        Acc::Value => false,
        Acc::Vector => !scan.mass_dot,
        _ => true,
    });
    if let Some((_, span)) = wrong {
        let want = if dofs == 1 {
            "`rho * u.value() * v.value()`"
        } else {
            "`rho * dot(u.vector(), v.vector())`"
        };
        errors.push(syn::Error::new(
            *span,
            format!("a mass form is a density times `u·v` ({want}): clforge lumps it as a scalar density per element"),
        ));
        ok = false;
    }
    ok
}

/// The module's `material` (the stiffness form's coefficients over its strains) and `density`
/// (the mass form's), evaluated by the runtime per material.
pub fn items(forms: &Forms, dim: usize, dofs: usize) -> proc_macro2::TokenStream {
    let form = quote::quote!(::clforge::runtime::element::form);
    let Some(ty) = &forms.material_ty else {
        return quote::quote!();
    };
    let mut out = quote::quote!();
    if let Some((f, op)) = &forms.stiffness {
        let s = op.strains(dim);
        let op_tokens = op.tokens();
        let doc = format!(
            " `D` of [`{f}`] over the {s} strains of operator `{}`: the form evaluated on unit strains (generated by clforge).",
            op.name()
        );
        out.extend(quote::quote! {
            #[doc = #doc]
            pub fn material(m: &#ty) -> [[f64; #s]; #s] {
                #form::coefficients::<#s, #ty>(#op_tokens, #dim, #dofs, m, #f)
            }
        });
    }
    if let Some(f) = &forms.mass {
        let doc = format!(" The density of [`{f}`]: the form on unit values (generated by clforge).");
        out.extend(quote::quote! {
            #[doc = #doc]
            pub fn density(m: &#ty) -> f64 {
                #form::density::<#ty>(#dim, #dofs, m, #f)
            }
        });
    }
    out
}
