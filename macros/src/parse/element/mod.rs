//! `#[element(dim = 2, nodes = 4, operator = plane_stress, quadrature = 2)] mod quad4 { ... }`
//! -> `model::element::Element`.
//!
//! The module must hold, as ordinary Rust:
//! ```text
//! pub const NODES: [[f64; 2]; 4] = [[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]];
//! pub fn shape(r: f64, s: f64) -> [f64; 4] { [0.25 * (1.0 - r) * (1.0 - s), ...] }
//! pub fn material(m: &Elastic) -> [[f64; 3]; 3] { ... }
//! pub fn density(m: &Elastic) -> f64 { m.rho }
//! pub fn thickness(m: &Elastic) -> f64 { m.h }   // optional, 2-D only
//! ```
//! Other items (helpers, `use`s, constants) are kept and ignored.

mod args;
mod form;
mod modal;
mod shape;

pub use args::ElementArgs;
pub use form::is_form_attr;

use crate::model::element::{Element, Operator, ShapeFn, KERNELS};
use crate::parse::{line_of, Errors};
use clforge_abi::modal::Space;
use proc_macro2::Span;
use syn::Ident;

pub fn from_syn(module: &syn::ItemMod, args: &ElementArgs) -> syn::Result<Element> {
    let mut errors = Errors::default();
    let Some((_, items)) = &module.content else {
        return Err(syn::Error::new_spanned(
            module.semi,
            "`#[clforge::element]` needs the module's items inline: `mod quad4 { ... }`",
        ));
    };
    let dim = args.dim.value;
    let forms = form::collect(items, dim, args.dofs.map_or(1, |d| d.value), &mut errors);
    let (operator, dofs) = operator(&module.ident, args, &forms, &mut errors);
    let space = args.basis.map(|b| b.value);
    let nodes = match (space, args.order, args.nodes) {
        (Some(space), Some(order), _) => clforge_abi::modal::count(dim, order.value, space),
        (_, _, Some(n)) => n.value,
        _ => 0,
    };
    let found = Items::collect(items, space, &mut errors);
    found.check_kind(args, space, nodes, &mut errors);
    let name = &module.ident;
    let modal = match (space, args.order) {
        (Some(space), Some(order)) => Some(modal::modal_basis(space, order.value, found.modes, &mut errors)),
        _ => None,
    };
    let geometry = match &modal {
        Some(_) => modal::geometry(name, dim),
        None => shape::geometry(name, found.shape, found.node_const, dim, nodes, &mut errors),
    };
    let material_ty = material(name, dim, operator, &found, &forms, &mut errors);
    if found.density.is_none() && !forms.mass_written && !forms.refused {
        errors.push(missing(
            name,
            "`pub fn density(m: &Material) -> f64`, or a `#[form(mass)]`, for its mass matrices",
        ));
    }
    if let (Some(f), Some(_)) = (found.density, &forms.mass) {
        errors.spanned(
            &f.sig.ident,
            "the density comes from the `#[form(mass)]`; remove `density`",
        );
    }
    let family = crate::parse::family::family(args.template.as_ref(), items, &KERNELS, &mut errors);
    errors.finish()?;
    let material_ty = material_ty.ok_or_else(|| missing(name, "a material type"))?;
    let Geometry {
        coords,
        shape_fns,
        shape_vis,
        local_nodes,
        nodes_tokens,
    } = geometry;
    Ok(Element {
        name: name.clone(),
        doc: crate::parse::doc_lines(&module.attrs),
        file: name.span().file(),
        line: line_of(module.mod_token.span),
        dim,
        nodes,
        dofs,
        operator,
        quadrature: args.quadrature.map_or_else(
            || clforge_abi::modal::default_quadrature(args.order.map_or(1, |o| o.value)),
            |q| q.value,
        ),
        coords,
        shape_vis,
        shape: shape_fns,
        local_nodes,
        nodes_tokens,
        material_ty,
        has_thickness: found.thickness.is_some(),
        family,
        modal,
        cell: args.cell.map_or(clforge_abi::Cell::Cube, |c| c.value),
        quadrature_span: args.quadrature.map_or_else(Span::call_site, |q| q.span),
        form_items: form::items(&forms, dim, dofs),
    })
}

/// The element's local coordinates, shape functions and nodes: the user's (nodal) or
/// generated (modal).
struct Geometry {
    coords: Vec<Ident>,
    shape_fns: Vec<ShapeFn>,
    shape_vis: syn::Visibility,
    local_nodes: Vec<[f64; 3]>,
    /// `NODES` as the host functions read it: the user's array, or the module's name.
    nodes_tokens: proc_macro2::TokenStream,
}

/// The module's items clforge reads, by name.
#[derive(Default)]
struct Items<'a> {
    shape: Option<&'a syn::ItemFn>,
    modes: Option<&'a syn::ItemFn>,
    material: Option<&'a syn::ItemFn>,
    density: Option<&'a syn::ItemFn>,
    thickness: Option<&'a syn::ItemFn>,
    node_const: Option<&'a syn::ItemConst>,
}

impl<'a> Items<'a> {
    fn collect(items: &'a [syn::Item], space: Option<Space>, errors: &mut Errors) -> Items<'a> {
        let mut found = Items::default();
        for item in items {
            match item {
                syn::Item::Fn(f) => match f.sig.ident.to_string().as_str() {
                    "shape" => found.shape = Some(f),
                    "material" => found.material = Some(f),
                    "density" => found.density = Some(f),
                    "thickness" => found.thickness = Some(f),
                    "modes" => found.modes = Some(f),
                    "dshape" | "dmodes" => errors.spanned(
                        &f.sig.ident,
                        format!(
                            "`{}` is generated from `{}`; remove this function",
                            f.sig.ident,
                            if space.is_some() { "modes" } else { "shape" }
                        ),
                    ),
                    _ => {}
                },
                syn::Item::Const(c) if c.ident == "NODES" => found.node_const = Some(c),
                _ => {}
            }
        }
        found
    }

    /// A modal element declares `modes`, a nodal one `shape` and `NODES`.
    fn check_kind(&self, args: &ElementArgs, space: Option<Space>, nodes: usize, errors: &mut Errors) {
        let (shape, node_const, modes) = (self.shape, self.node_const, self.modes);
        if let Some(space) = space {
            let order = args.order.map_or(1, |o| o.value);
            if let Some(f) = shape {
                errors.spanned(
                &f.sig.ident,
                format!(
                    "a modal element builds its {nodes} shape functions from the 1-D `modes` ({} space, order {order}); \
                     remove `shape` (or declare a nodal element with `nodes = ...` and no `basis`)",
                    space.name()
                ),
            );
            }
            if let Some(c) = node_const {
                errors.spanned(
                    &c.ident,
                    "a modal element's geometry nodes are its vertices, generated as `NODES`; remove this constant",
                );
            }
        } else if let Some(f) = modes {
            errors.spanned(
            &f.sig.ident,
            "`modes` declares the 1-D functions of a modal element: add `basis = trunk, order = ...` to the attribute",
        );
        }
    }
}

/// The error for a missing part of element `name`.
fn missing(name: &Ident, what: &str) -> syn::Error {
    syn::Error::new_spanned(name, format!("element `{name}` needs {what}"))
}

/// `material`, `density` and `thickness`: their signatures; the material type.
fn material(
    name: &Ident,
    dim: usize,
    op: Operator,
    found: &Items,
    forms: &form::Forms,
    errors: &mut Errors,
) -> Option<syn::Type> {
    let (material, density, thickness) = (found.material, found.density, found.thickness);
    let mut material_ty = forms.material_ty.clone();
    match material {
        Some(f) if forms.stiffness_span.is_some() => {
            errors.spanned(
                &f.sig.ident,
                "`D` comes from the `#[form(stiffness)]`; remove `material`",
            );
        }
        None if forms.stiffness_span.is_some() || forms.refused => {}
        None => errors.push(missing(
            name,
            &format!(
                "`pub fn material(m: &Material) -> [[f64; {0}]; {0}]`, the matrix `D` of operator `{1}`",
                op.strains(dim),
                op.name()
            ),
        )),
        Some(f) => {
            require_pub(&f.vis, &f.sig.ident, errors);
            material_ty = material_arg(f, errors);
            let strains = op.strains(dim);
            let want = format!("[[f64; {strains}]; {strains}]");
            match &f.sig.output {
                syn::ReturnType::Type(_, ty) => {
                    match array_of(ty).and_then(|(row, n, span)| Some((array_of(row)?, n, span))) {
                        Some(((elem, cols, cspan), rows, rspan)) if is_f64(elem) => {
                            let msg = format!(
                                "operator `{}` has {strains} strains: `material` returns `{want}`",
                                op.name()
                            );
                            match (rows == strains, cols == strains) {
                                (true, true) => {}
                                (false, true) => errors.push(syn::Error::new(rspan, msg)),
                                (true, false) => errors.push(syn::Error::new(cspan, msg)),
                                (false, false) => errors.spanned(ty, msg),
                            }
                        }
                        _ => match &**ty {
                            // A name (an alias, a struct): the attribute reads the size from the
                            // written array and cannot see through it.
                            syn::Type::Path(p) => errors.spanned(
                                ty,
                                format!(
                                    "write `material`'s return type as the array `{want}`: #[element] reads `D`'s \
                                     size from it and cannot see what `{}` is",
                                    quote::quote!(#p)
                                ),
                            ),
                            _ => errors.spanned(
                                ty,
                                format!("`material` returns the matrix `D` as an array of `f64` rows: `{want}`"),
                            ),
                        },
                    }
                }
                syn::ReturnType::Default => errors.spanned(&f.sig.ident, format!("`material` returns `{want}`")),
            }
        }
    }
    for (f, what) in [(density, "density"), (thickness, "thickness")] {
        let Some(f) = f else { continue };
        require_pub(&f.vis, &f.sig.ident, errors);
        if what == "thickness" && dim != 2 {
            errors.spanned(
                &f.sig.ident,
                format!("`thickness` belongs to 2-D elements; this one is {dim}-D"),
            );
        }
        if let Some(ty) = material_arg(f, errors) {
            if let Some(m) = &material_ty {
                if !same_type(&ty, m) {
                    errors.spanned(&ty, format!("`{what}` takes the same material type as `material`"));
                }
            }
        }
        match &f.sig.output {
            syn::ReturnType::Type(_, ty) if is_f64(ty) => {}
            syn::ReturnType::Type(_, ty) => errors.spanned(ty, format!("`{what}` returns `f64`")),
            syn::ReturnType::Default => errors.spanned(&f.sig.ident, format!("`{what}` returns `f64`")),
        }
    }
    material_ty
}

/// The element's operator and DOFs per node: the stiffness form's, or the attribute's.
fn operator(name: &Ident, args: &ElementArgs, forms: &form::Forms, errors: &mut Errors) -> (Operator, usize) {
    let dofs = args.dofs.map_or(1, |d| d.value);
    match (&forms.stiffness, args.operator, forms.stiffness_span) {
        (_, Some(op), Some(_)) => {
            errors.push(syn::Error::new(
                op.span,
                "the physics is the `#[form(stiffness)]`; remove `operator` (or the form)",
            ));
            (op.value, dofs)
        }
        (Some((_, op)), None, _) => (*op, dofs),
        // The form was refused; its errors say why.
        (None, None, Some(_)) => (Operator::Gradient(dofs), dofs),
        (_, Some(op), None) => (op.value, check_operator(args, op.value, op.span, errors)),
        (None, None, None) if forms.refused => (Operator::Gradient(dofs), dofs),
        (None, None, None) => {
            errors.push(syn::Error::new(
                name.span(),
                format!(
                    "`#[clforge::element]` needs its physics: `operator = ...` ({}) with `material`, or a \
                     `#[form(stiffness)] pub fn ...(u: &Field, v: &Field, x: &Position, m: &Material) -> f64`",
                    Operator::NAMES
                ),
            ));
            (Operator::Gradient(dofs), dofs)
        }
    }
}

/// Which dimensions an operator accepts, and why not otherwise.
fn check_operator(args: &ElementArgs, op: Operator, span: Span, errors: &mut Errors) -> usize {
    let dim = args.dim.value;
    let dim_ok = match op {
        Operator::PlaneStress | Operator::PlaneStrain => dim == 2,
        Operator::Elasticity => dim == 3,
        Operator::Diffusion | Operator::Gradient(_) | Operator::Full(_) => true,
    };
    if !dim_ok {
        let hint = match op {
            Operator::Elasticity => "in 2-D use `plane_stress` or `plane_strain`",
            _ => "use `elasticity` in 3-D",
        };
        errors.push(syn::Error::new(
            span,
            format!("operator `{}` does not exist in {dim}-D; {hint}", op.name()),
        ));
    }
    let needed = op.dofs(dim);
    if let Some(dofs) = args.dofs {
        if dofs.value != needed && dim_ok {
            errors.push(syn::Error::new(
                dofs.span,
                format!(
                    "operator `{}` in {dim}-D has {needed} DOF{} per node, found `dofs = {}`; write `dofs = {needed}` or leave it out",
                    op.name(),
                    if needed == 1 { "" } else { "s" },
                    dofs.value
                ),
            ));
        }
    }
    needed
}

fn is_f64(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Path(p) if p.qself.is_none() && p.path.is_ident("f64"))
}

/// `[T; N]` -> (T, N and the span of N) when N is an integer literal.
fn array_of(ty: &syn::Type) -> Option<(&syn::Type, usize, Span)> {
    let syn::Type::Array(a) = ty else { return None };
    match &a.len {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(n), ..
        }) => Some((&a.elem, n.base10_parse().ok()?, n.span())),
        _ => None,
    }
}

fn require_pub(vis: &syn::Visibility, ident: &Ident, errors: &mut Errors) {
    if matches!(vis, syn::Visibility::Inherited) {
        errors.spanned(
            ident,
            format!("`{ident}` must be `pub` (or `pub(crate)`, ...): the element type beside the module calls it"),
        );
    }
}

/// `fn f(m: &T)`: the `T`, or an error at the argument.
fn material_arg(f: &syn::ItemFn, errors: &mut Errors) -> Option<syn::Type> {
    let name = &f.sig.ident;
    if f.sig.inputs.len() != 1 {
        errors.spanned(
            &f.sig.inputs,
            format!("`{name}` takes the material parameters only: `fn {name}(m: &Material)`"),
        );
        return None;
    }
    match f.sig.inputs.first() {
        Some(syn::FnArg::Typed(pt)) => match &*pt.ty {
            syn::Type::Reference(r) if r.mutability.is_none() => Some((*r.elem).clone()),
            other => {
                errors.spanned(
                    other,
                    format!("`{name}` takes the material parameters by shared reference: `m: &Material`"),
                );
                None
            }
        },
        other => {
            errors.spanned(other, format!("`{name}` is a free function; `self` is not allowed"));
            None
        }
    }
}

fn same_type(a: &syn::Type, b: &syn::Type) -> bool {
    quote::quote!(#a).to_string() == quote::quote!(#b).to_string()
}
