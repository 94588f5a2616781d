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

use super::{line_of, Errors};
use crate::model::element::{integrated_legendre, Element, Modal, Operator, Poly, ShapeFn, KERNELS};
use clforge_abi::modal::Space;
use proc_macro2::Span;
use quote::ToTokens;
use std::collections::HashMap;
use syn::parse::{Parse, ParseStream};
use syn::{Ident, Token};

/// Highest number of Gauss points per direction the host quadrature provides.
pub const MAX_QUADRATURE: usize = clforge_abi::MAX_QUADRATURE;

/// A value of the attribute with the span of the token that gave it.
#[derive(Clone, Copy)]
pub struct At<T> {
    pub value: T,
    pub span: Span,
}

/// Arguments of `#[element(...)]`.
pub struct ElementArgs {
    pub dim: At<usize>,
    /// Required for a nodal element, refused for a modal one.
    pub nodes: Option<At<usize>>,
    pub dofs: Option<At<usize>>,
    pub operator: At<Operator>,
    /// Required for a nodal element; a modal one defaults to `clforge_abi::modal::default_quadrature`.
    pub quadrature: Option<At<usize>>,
    /// A hierarchical basis: `basis = trunk` or `tensor` ...
    pub basis: Option<At<Space>>,
    /// ... and its order, `order = 1..=8`.
    pub order: Option<At<usize>>,
    /// A user template family adding kernels (`template = "templates/energy.cl.tera"`).
    pub template: Option<syn::LitStr>,
    /// The reference cell, `cell = cube` (the default) or `cell = simplex`.
    pub cell: Option<At<clforge_abi::Cell>>,
}

const KEYS: &str = "`dim`, `nodes`, `dofs`, `operator`, `quadrature`, `cell`, `basis`, `order` or `template`";

impl Parse for ElementArgs {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let mut ints: HashMap<String, At<usize>> = HashMap::new();
        let mut operator = None;
        let mut basis = None;
        let mut cell: Option<At<clforge_abi::Cell>> = None;
        let mut template: Option<syn::LitStr> = None;
        while !input.is_empty() {
            let key: Ident = input.parse()?;
            input.parse::<Token![=]>()?;
            let name = key.to_string();
            if ints.contains_key(&name)
                || (name == "operator" && operator.is_some())
                || (name == "basis" && basis.is_some())
                || (name == "cell" && cell.is_some())
                || (name == "template" && template.is_some())
            {
                return Err(syn::Error::new_spanned(&key, format!("`{name}` is given twice")));
            }
            match name.as_str() {
                "template" => {
                    template = Some(input.parse().map_err(|e| {
                        syn::Error::new(
                            e.span(),
                            "`template` is a path relative to the crate, e.g. `template = \"templates/energy.cl.tera\"`",
                        )
                    })?);
                }
                "operator" => {
                    let value: Ident = input.parse()?;
                    let op = Operator::from_name(&value.to_string()).ok_or_else(|| {
                        syn::Error::new_spanned(
                            &value,
                            format!("unknown operator `{value}`; expected {}", Operator::NAMES),
                        )
                    })?;
                    operator = Some(At {
                        value: op,
                        span: value.span(),
                    });
                }
                "cell" => {
                    let value: Ident = input.parse().map_err(|e| {
                        syn::Error::new(e.span(), "`cell` is `cube` or `simplex`, e.g. `cell = simplex`")
                    })?;
                    let c = match value.to_string().as_str() {
                        "cube" => clforge_abi::Cell::Cube,
                        "simplex" => clforge_abi::Cell::Simplex,
                        other => {
                            return Err(syn::Error::new_spanned(
                                &value,
                                format!(
                                    "unknown cell `{other}`; expected `cube` (the box [-1, 1]^dim, tensor Gauss rules) \
                                     or `simplex` (the unit triangle or tetrahedron, collapsed Gauss rules)"
                                ),
                            ))
                        }
                    };
                    cell = Some(At {
                        value: c,
                        span: value.span(),
                    });
                }
                "basis" => {
                    let value: Ident = input.parse().map_err(|e| {
                        syn::Error::new(e.span(), "`basis` is `trunk` or `tensor`, e.g. `basis = trunk`")
                    })?;
                    let space = Space::from_name(&value.to_string()).ok_or_else(|| {
                        syn::Error::new_spanned(
                            &value,
                            format!(
                                "unknown basis `{value}`; expected `trunk` (serendipity: bubble degrees sum to at most `order`) \
                                 or `tensor` (each bubble degree at most `order`)"
                            ),
                        )
                    })?;
                    basis = Some(At {
                        value: space,
                        span: value.span(),
                    });
                }
                "dim" | "nodes" | "dofs" | "quadrature" | "order" => {
                    let lit: syn::LitInt = input.parse().map_err(|e| {
                        syn::Error::new(
                            e.span(),
                            format!("`{name}` must be an integer literal, e.g. `{name} = 2`"),
                        )
                    })?;
                    let value: usize = lit.base10_parse()?;
                    let (lo, hi) = match name.as_str() {
                        "dim" => (1, 3),
                        "quadrature" => (1, MAX_QUADRATURE),
                        "order" => (1, clforge_abi::modal::MAX_ORDER),
                        _ => (1, 64),
                    };
                    if !(lo..=hi).contains(&value) {
                        return Err(syn::Error::new_spanned(
                            &lit,
                            format!("`{name}` must be {lo} to {hi}, found {value}"),
                        ));
                    }
                    ints.insert(
                        name,
                        At {
                            value,
                            span: lit.span(),
                        },
                    );
                }
                other => {
                    return Err(syn::Error::new_spanned(
                        &key,
                        format!("unknown element argument `{other}`; expected {KEYS}"),
                    ))
                }
            }
            if !input.is_empty() {
                input.parse::<Token![,]>()?;
            }
        }
        let missing = |what: &str, example: &str| {
            syn::Error::new(
                Span::call_site(),
                format!("`#[clforge::element]` needs `{what}`, e.g. `#[clforge::element({example})]`"),
            )
        };
        const EXAMPLE: &str = "dim = 2, nodes = 4, operator = plane_stress, quadrature = 2";
        const MODAL: &str = "dim = 3, operator = elasticity, basis = trunk, order = 5";
        let example = if basis.is_some() { MODAL } else { EXAMPLE };
        let order = ints.get("order").copied();
        match (&basis, order) {
            (None, Some(o)) => {
                return Err(syn::Error::new(
                    o.span,
                    "`order` belongs to a modal element: add `basis = trunk` (or `tensor`), or remove `order`",
                ))
            }
            (Some(_), None) => return Err(missing("order", MODAL)),
            _ => {}
        }
        if let (Some(_), Some(c)) = (&basis, cell.filter(|c| c.value == clforge_abi::Cell::Simplex)) {
            return Err(syn::Error::new(
                c.span,
                "hierarchical bases are built on the box only; declare a simplex element with `nodes` and `shape`",
            ));
        }
        if let (Some(_), Some(n)) = (&basis, ints.get("nodes")) {
            return Err(syn::Error::new(
                n.span,
                "a modal element's size follows from `basis` and `order`; remove `nodes`",
            ));
        }
        Ok(ElementArgs {
            dim: *ints.get("dim").ok_or_else(|| missing("dim", example))?,
            nodes: match basis {
                Some(_) => None,
                None => Some(*ints.get("nodes").ok_or_else(|| missing("nodes", EXAMPLE))?),
            },
            dofs: ints.get("dofs").copied(),
            operator: operator.ok_or_else(|| missing("operator", example))?,
            quadrature: match basis {
                Some(_) => ints.get("quadrature").copied(),
                None => Some(*ints.get("quadrature").ok_or_else(|| missing("quadrature", EXAMPLE))?),
            },
            basis,
            order,
            template,
            cell,
        })
    }
}

/// Which dimensions an operator accepts, and why not otherwise.
fn check_operator(args: &ElementArgs, errors: &mut Errors) -> usize {
    let (op, dim) = (args.operator.value, args.dim.value);
    let dim_ok = match op {
        Operator::PlaneStress | Operator::PlaneStrain => dim == 2,
        Operator::Elasticity => dim == 3,
        Operator::Diffusion => true,
    };
    if !dim_ok {
        let hint = match op {
            Operator::Elasticity => "in 2-D use `plane_stress` or `plane_strain`",
            _ => "use `elasticity` in 3-D",
        };
        errors.push(syn::Error::new(
            args.operator.span,
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

pub fn from_syn(module: &syn::ItemMod, args: &ElementArgs) -> syn::Result<Element> {
    let mut errors = Errors::default();
    let Some((_, items)) = &module.content else {
        return Err(syn::Error::new_spanned(
            module.semi,
            "`#[clforge::element]` needs the module's items inline: `mod quad4 { ... }`",
        ));
    };
    let dofs = check_operator(args, &mut errors);
    let dim = args.dim.value;
    let space = args.basis.map(|b| b.value);
    let nodes = match (space, args.order, args.nodes) {
        (Some(space), Some(order), _) => clforge_abi::modal::count(dim, order.value, space),
        (_, _, Some(n)) => n.value,
        _ => 0,
    };

    let mut shape = None;
    let mut modes = None;
    let mut material = None;
    let mut density = None;
    let mut thickness = None;
    let mut node_const = None;
    for item in items {
        match item {
            syn::Item::Fn(f) => match f.sig.ident.to_string().as_str() {
                "shape" => shape = Some(f),
                "material" => material = Some(f),
                "density" => density = Some(f),
                "thickness" => thickness = Some(f),
                "modes" => modes = Some(f),
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
            syn::Item::Const(c) if c.ident == "NODES" => node_const = Some(c),
            _ => {}
        }
    }
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
    let name = &module.ident;
    let missing = |what: &str| syn::Error::new_spanned(name, format!("element `{name}` needs {what}"));
    let modal = match (space, args.order) {
        (Some(space), Some(order)) => Some(modal_basis(space, order.value, modes, &mut errors)),
        _ => None,
    };

    // shape(r, s) -> [f64; nodes]
    let mut coords = Vec::new();
    let mut shape_fns = Vec::new();
    let mut shape_vis = syn::Visibility::Inherited;
    let mut local_nodes = Vec::new();
    let mut nodes_tokens = name.to_token_stream();
    if let Some(m) = &modal {
        // The generated `shape` and `NODES` (the vertices) are public, like the user's would be.
        shape_vis = syn::parse_quote!(pub);
        coords = ["r", "s", "t"][..dim]
            .iter()
            .map(|c| Ident::new(c, name.span()))
            .collect();
        local_nodes = (0..1usize << dim)
            .map(|v| clforge_abi::modal::vertex(dim, v).map(|k| if k == 0 { -1.0 } else { 1.0 }))
            .map(|mut p| {
                p[dim..].fill(0.0);
                p
            })
            .collect();
        let _ = m;
    } else {
        match shape {
            None => errors.push(missing(&format!(
                "`pub fn shape({}) -> [f64; {nodes}]`, the shape functions in local coordinates",
                ["r: f64", "s: f64", "t: f64"][..dim].join(", ")
            ))),
            Some(f) => {
                require_pub(&f.vis, &f.sig.ident, &mut errors);
                shape_vis = f.vis.clone();
                if let Some(g) = f.sig.generics.params.first() {
                    errors.spanned(g, "`shape` cannot be generic");
                }
                if f.sig.inputs.len() != dim {
                    let msg = format!(
                        "`shape` of a {dim}-D element takes {dim} local coordinate{}, found {}: `fn shape({})`",
                        if dim == 1 { "" } else { "s" },
                        f.sig.inputs.len(),
                        ["r: f64", "s: f64", "t: f64"][..dim].join(", ")
                    );
                    if f.sig.inputs.is_empty() {
                        errors.push(syn::Error::new(f.sig.paren_token.span.join(), msg));
                    } else {
                        errors.spanned(&f.sig.inputs, msg);
                    }
                }
                for input in &f.sig.inputs {
                    match input {
                        syn::FnArg::Typed(pt) => match (&*pt.pat, is_f64(&pt.ty)) {
                            (syn::Pat::Ident(p), true) if p.by_ref.is_none() && p.subpat.is_none() => {
                                coords.push(p.ident.clone())
                            }
                            (syn::Pat::Ident(_), false) => errors.spanned(&pt.ty, "local coordinates are `f64`"),
                            (other, _) => errors.spanned(other, "local coordinates must be plain names, e.g. `r: f64`"),
                        },
                        other => errors.spanned(other, "`shape` is a free function; `self` is not allowed"),
                    }
                }
                match &f.sig.output {
                    syn::ReturnType::Type(_, ty) => match array_of(ty) {
                        Some((elem, n, span)) if is_f64(elem) => {
                            if n != nodes {
                                errors.push(syn::Error::new(
                                span,
                                format!("`shape` returns one value per node: `[f64; {nodes}]` for `nodes = {nodes}`, found {n}"),
                            ));
                            }
                        }
                        _ => errors.spanned(ty, format!("`shape` returns one value per node: `[f64; {nodes}]`")),
                    },
                    syn::ReturnType::Default => {
                        errors.spanned(&f.sig.ident, format!("`shape` returns `[f64; {nodes}]`"))
                    }
                }
                if coords.len() == dim {
                    let mut sp = ShapeParser {
                        coords: &coords,
                        lets: HashMap::new(),
                        errors: &mut errors,
                    };
                    shape_fns = sp.body(&f.block, nodes);
                }
            }
        }

        // NODES: [[f64; dim]; nodes]
        match node_const {
            None => errors.push(missing(&format!(
                "`pub const NODES: [[f64; {dim}]; {nodes}]`, the local coordinates of its nodes in [-1, 1]"
            ))),
            Some(c) => {
                require_pub(&c.vis, &c.ident, &mut errors);
                nodes_tokens = c.expr.to_token_stream();
                if let Some((_, n, span)) = array_of(&c.ty) {
                    if n != nodes {
                        errors.push(syn::Error::new(
                            span,
                            format!("`NODES` has one entry per node: {nodes} for `nodes = {nodes}`, found {n}"),
                        ));
                    }
                }
                match &*c.expr {
                    syn::Expr::Array(rows) if rows.elems.len() == nodes => {
                        for row in &rows.elems {
                            if let Some(p) = node_row(row, dim, &mut errors) {
                                local_nodes.push(p);
                            }
                        }
                    }
                    syn::Expr::Array(rows) => errors.spanned(
                        rows,
                        format!(
                            "`NODES` has one entry per node: {nodes} for `nodes = {nodes}`, found {}",
                            rows.elems.len()
                        ),
                    ),
                    other => errors.spanned(other, "`NODES` must be an array literal of local coordinates"),
                }
            }
        }
    }

    let mut material_ty = None;
    match material {
        None => errors.push(missing(&format!(
            "`pub fn material(m: &Material) -> [[f64; {0}]; {0}]`, the matrix `D` of operator `{1}`",
            args.operator.value.strains(dim),
            args.operator.value.name()
        ))),
        Some(f) => {
            require_pub(&f.vis, &f.sig.ident, &mut errors);
            material_ty = material_arg(f, &mut errors);
            let strains = args.operator.value.strains(dim);
            let want = format!("[[f64; {strains}]; {strains}]");
            match &f.sig.output {
                syn::ReturnType::Type(_, ty) => {
                    match array_of(ty).and_then(|(row, n, span)| Some((array_of(row)?, n, span))) {
                        Some(((elem, cols, cspan), rows, rspan)) if is_f64(elem) => {
                            let msg = format!(
                                "operator `{}` has {strains} strains: `material` returns `{want}`",
                                args.operator.value.name()
                            );
                            match (rows == strains, cols == strains) {
                                (true, true) => {}
                                (false, true) => errors.push(syn::Error::new(rspan, msg)),
                                (true, false) => errors.push(syn::Error::new(cspan, msg)),
                                (false, false) => errors.spanned(ty, msg),
                            }
                        }
                        _ => errors.spanned(ty, format!("`material` returns the matrix `D`: `{want}`")),
                    }
                }
                syn::ReturnType::Default => errors.spanned(&f.sig.ident, format!("`material` returns `{want}`")),
            }
        }
    }
    for (f, what) in [(density, "density"), (thickness, "thickness")] {
        let Some(f) = f else { continue };
        require_pub(&f.vis, &f.sig.ident, &mut errors);
        if what == "thickness" && dim != 2 {
            errors.spanned(
                &f.sig.ident,
                format!("`thickness` belongs to 2-D elements; this one is {dim}-D"),
            );
        }
        if let Some(ty) = material_arg(f, &mut errors) {
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
    if density.is_none() {
        errors.push(missing("`pub fn density(m: &Material) -> f64` for its mass matrices"));
    }
    let family = super::family::family(args.template.as_ref(), items, &KERNELS, &mut errors);
    errors.finish()?;
    let material_ty = material_ty.ok_or_else(|| missing("a material type"))?;

    Ok(Element {
        name: name.clone(),
        doc: super::doc_lines(&module.attrs),
        file: name.span().file(),
        line: line_of(module.mod_token.span),
        dim,
        nodes,
        dofs,
        operator: args.operator.value,
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
        has_thickness: thickness.is_some(),
        family,
        modal,
        cell: args.cell.map_or(clforge_abi::Cell::Cube, |c| c.value),
        quadrature_span: args.quadrature.map_or_else(Span::call_site, |q| q.span),
    })
}

/// The 1-D functions of a modal element: the user's `modes(x: f64) -> [f64; order + 1]`,
/// checked to be hierarchical (vertex functions `(1 ∓ x)/2`, then bubbles of degree `k` that
/// vanish at both ends), or the built-in integrated Legendre family.
fn modal_basis(space: Space, order: usize, modes: Option<&syn::ItemFn>, errors: &mut Errors) -> Modal {
    let Some(f) = modes else {
        return Modal {
            space,
            order,
            modes: integrated_legendre(order),
            user_modes: false,
        };
    };
    let n = order + 1;
    require_pub(&f.vis, &f.sig.ident, errors);
    let mut coord = Vec::new();
    match (f.sig.inputs.len(), f.sig.inputs.first()) {
        (1, Some(syn::FnArg::Typed(pt))) => match (&*pt.pat, is_f64(&pt.ty)) {
            (syn::Pat::Ident(p), true) if p.by_ref.is_none() && p.subpat.is_none() => coord.push(p.ident.clone()),
            _ => errors.spanned(pt, "`modes` takes one local coordinate: `fn modes(x: f64)`"),
        },
        _ => errors.spanned(&f.sig, "`modes` takes one local coordinate: `fn modes(x: f64)`"),
    }
    let mut len_ok = false;
    match &f.sig.output {
        syn::ReturnType::Type(_, ty) => match array_of(ty) {
            Some((elem, len, span)) if is_f64(elem) => {
                len_ok = len == n;
                if len != n {
                    errors.push(syn::Error::new(
                        span,
                        format!("`modes` returns two vertex functions and one bubble per degree 2..={order}: `[f64; {n}]`, found {len}"),
                    ));
                }
            }
            _ => errors.spanned(ty, format!("`modes` returns `[f64; {n}]`")),
        },
        syn::ReturnType::Default => errors.spanned(&f.sig.ident, format!("`modes` returns `[f64; {n}]`")),
    }
    let mut polys = Vec::new();
    if coord.len() == 1 && len_ok {
        let mut sp = ShapeParser {
            coords: &coord,
            lets: HashMap::new(),
            errors,
        };
        let fns = sp.body(&f.block, n);
        if fns.len() == n {
            for (k, m) in fns.iter().enumerate() {
                check_mode(k, m, errors);
            }
            polys = fns.into_iter().map(|m| m.poly).collect();
        }
    }
    Modal {
        space,
        order,
        modes: polys,
        user_modes: true,
    }
}

/// Function `k` of `modes` is the hierarchical 1-D function it stands for.
fn check_mode(k: usize, m: &ShapeFn, errors: &mut Errors) {
    const TOL: f64 = 1e-12;
    let (lo, hi) = (m.poly.eval([-1.0, 0.0, 0.0]), m.poly.eval([1.0, 0.0, 0.0]));
    let degree = m.poly.degree() as usize;
    let problem = match k {
        0 if (lo - 1.0).abs() > TOL || hi.abs() > TOL || degree != 1 => {
            Some(format!("is 1 at x = -1, 0 at x = 1 and linear: `(1.0 - x) / 2.0`; this one is {lo} and {hi} there, of degree {degree}"))
        }
        1 if lo.abs() > TOL || (hi - 1.0).abs() > TOL || degree != 1 => {
            Some(format!("is 0 at x = -1, 1 at x = 1 and linear: `(1.0 + x) / 2.0`; this one is {lo} and {hi} there, of degree {degree}"))
        }
        k if k >= 2 && (lo.abs() > TOL || hi.abs() > TOL || degree != k) => Some(format!(
            "is the bubble of degree {k}: zero at x = ±1 and of degree exactly {k} (e.g. an integrated Legendre polynomial); \
             this one is {lo} and {hi} there, of degree {degree}"
        )),
        _ => None,
    };
    if let Some(p) = problem {
        errors.spanned(&m.tokens, format!("function {k} of `modes` {p}"));
    }
}

/// A numeric literal, possibly negated.
fn number(e: &syn::Expr) -> Option<f64> {
    match e {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Float(f),
            ..
        }) => f.base10_parse().ok(),
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i), ..
        }) => i.base10_parse::<f64>().ok(),
        syn::Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Neg(_),
            expr,
            ..
        }) => number(expr).map(|v| -v),
        syn::Expr::Paren(p) => number(&p.expr),
        _ => None,
    }
}

fn node_row(row: &syn::Expr, dim: usize, errors: &mut Errors) -> Option<[f64; 3]> {
    let syn::Expr::Array(a) = row else {
        errors.spanned(
            row,
            format!("each entry of `NODES` is `[{}]`", ["r", "s", "t"][..dim].join(", ")),
        );
        return None;
    };
    if a.elems.len() != dim {
        errors.spanned(
            a,
            format!(
                "a node of a {dim}-D element has {dim} local coordinates, found {}",
                a.elems.len()
            ),
        );
        return None;
    }
    let mut p = [0.0; 3];
    for (i, e) in a.elems.iter().enumerate() {
        match number(e) {
            Some(v) if (-1.0..=1.0).contains(&v) => p[i] = v,
            Some(_) => {
                errors.spanned(e, "local node coordinates lie in [-1, 1]");
                return None;
            }
            None => {
                errors.spanned(e, "local node coordinates must be numeric literals, e.g. `-1.0`");
                return None;
            }
        }
    }
    Some(p)
}

/// Highest total degree of a shape function (Lagrange elements of order 8 stay below): it bounds
/// the work of the exact arithmetic, the size of the generated `dshape` and the exponents, which
/// chained `powi`s would otherwise overflow.
pub const MAX_DEGREE: u32 = 24;

/// Rust expressions of `shape` -> exact polynomials.
struct ShapeParser<'a> {
    coords: &'a [Ident],
    lets: HashMap<String, Poly>,
    errors: &'a mut Errors,
}

fn too_high(degree: u32) -> String {
    format!("this gives degree {degree} in the coordinates; shape functions have degree {MAX_DEGREE} at most")
}

const ALLOWED: &str = "shape functions are polynomials: use literals, the coordinates, `let` names, `+`, `-`, `*`, \
                       `/` by a constant and `.powi(n)` with a literal `n`";

impl ShapeParser<'_> {
    fn body(&mut self, block: &syn::Block, nodes: usize) -> Vec<ShapeFn> {
        let n = block.stmts.len();
        for (i, stmt) in block.stmts.iter().enumerate() {
            match stmt {
                syn::Stmt::Local(local) => {
                    let (syn::Pat::Ident(p), Some(init)) = (&local.pat, &local.init) else {
                        self.errors.spanned(
                            &local.pat,
                            "`let` in `shape` binds one name to a value: `let a = 1.0 - r;`",
                        );
                        continue;
                    };
                    if let Ok(v) = self.poly(&init.expr) {
                        self.lets.insert(p.ident.to_string(), v);
                    }
                }
                syn::Stmt::Expr(syn::Expr::Array(arr), None) if i + 1 == n => {
                    if arr.elems.len() != nodes {
                        self.errors.spanned(
                            arr,
                            format!(
                                "`shape` returns one value per node: {nodes} for `nodes = {nodes}`, found {}",
                                arr.elems.len()
                            ),
                        );
                    }
                    return arr
                        .elems
                        .iter()
                        .filter_map(|e| {
                            let poly = self.poly(e).ok()?;
                            // Also the derivatives' (exponent times coefficient) must stay finite.
                            if !poly.0.values().all(|c| (c * f64::from(MAX_DEGREE)).is_finite()) {
                                self.errors
                                    .spanned(e, "this shape function's coefficients overflow `f64`");
                                return None;
                            }
                            Some(ShapeFn {
                                poly,
                                tokens: e.to_token_stream(),
                            })
                        })
                        .collect();
                }
                syn::Stmt::Expr(e, None) if i + 1 == n => self.errors.spanned(
                    e,
                    "`shape` ends with an array literal of the shape functions: `[n0, n1, ...]`",
                ),
                other => self.errors.spanned(
                    other,
                    "`shape` holds `let` statements and a final array of shape functions",
                ),
            }
        }
        if !matches!(block.stmts.last(), Some(syn::Stmt::Expr(_, None))) {
            self.errors.push(syn::Error::new(
                block.brace_token.span.close(),
                "`shape` ends with an array literal of the shape functions: `[n0, n1, ...]`",
            ));
        }
        Vec::new()
    }

    /// Errors are recorded here; `Err(())` only tells the caller that one was.
    fn poly(&mut self, e: &syn::Expr) -> Result<Poly, ()> {
        let err = |this: &mut Self, tokens: &dyn quote::ToTokens, msg: String| {
            this.errors.spanned(tokens, msg);
            Err(())
        };
        match e {
            syn::Expr::Lit(_) => match number(e) {
                Some(v) => Ok(Poly::constant(v)),
                None => err(
                    self,
                    e,
                    format!("only numeric literals may appear in `shape`; {ALLOWED}"),
                ),
            },
            syn::Expr::Paren(p) => self.poly(&p.expr),
            syn::Expr::Group(g) => self.poly(&g.expr),
            syn::Expr::Path(p) => {
                let Some(id) = p.path.get_ident() else {
                    return err(
                        self,
                        p,
                        format!("`shape` cannot read `{}`; {ALLOWED}", crate::parse::rust_text(p)),
                    );
                };
                if let Some(axis) = self.coords.iter().position(|c| c == id) {
                    return Ok(Poly::var(axis));
                }
                match self.lets.get(&id.to_string()) {
                    Some(v) => Ok(v.clone()),
                    None => err(self, id, format!("`shape` cannot read `{id}`; {ALLOWED}")),
                }
            }
            syn::Expr::Unary(u) => match u.op {
                syn::UnOp::Neg(_) => Ok(self.poly(&u.expr)?.scale(-1.0)),
                _ => err(self, u, format!("this operator is not allowed in `shape`; {ALLOWED}")),
            },
            syn::Expr::Binary(b) => {
                let (l, r) = (self.poly(&b.left), self.poly(&b.right));
                let (l, r) = (l?, r?);
                match b.op {
                    syn::BinOp::Add(_) => Ok(l.add(&r)),
                    syn::BinOp::Sub(_) => Ok(l.sub(&r)),
                    syn::BinOp::Mul(_) if l.degree() + r.degree() > MAX_DEGREE => {
                        err(self, &b.op, too_high(l.degree() + r.degree()))
                    }
                    syn::BinOp::Mul(_) => Ok(l.mul(&r)),
                    syn::BinOp::Div(_) => match r.as_constant() {
                        Some(c) if c != 0.0 => Ok(l.scale(1.0 / c)),
                        Some(_) => err(self, &b.right, "division by zero in `shape`".to_string()),
                        None => err(
                            self,
                            &b.right,
                            format!(
                                "`shape` divides by `{}`, which depends on the coordinates: not a polynomial; {ALLOWED}",
                                crate::parse::rust_text(&b.right)
                            ),
                        ),
                    },
                    _ => err(self, &b.op, format!("operator `{}` is not allowed in `shape`; {ALLOWED}", crate::parse::rust_text(&b.op))),
                }
            }
            syn::Expr::MethodCall(m) => {
                let base = self.poly(&m.receiver);
                if m.method != "powi" {
                    let what = if ["sin", "cos", "tan", "exp", "ln", "sqrt", "powf", "abs", "atan", "tanh"]
                        .contains(&m.method.to_string().as_str())
                    {
                        "is not a polynomial"
                    } else {
                        "is not allowed"
                    };
                    return err(self, &m.method, format!("`{}` {what} in `shape`; {ALLOWED}", m.method));
                }
                let exponent = match (m.args.len(), m.args.first()) {
                    (
                        1,
                        Some(syn::Expr::Lit(syn::ExprLit {
                            lit: syn::Lit::Int(n), ..
                        })),
                    ) => n.base10_parse::<u32>().ok(),
                    _ => None,
                };
                // `.powi()` has no argument tokens to point at.
                let at: &dyn ToTokens = if m.args.is_empty() { &m.method } else { &m.args };
                match exponent {
                    Some(n) if n <= 16 => {
                        let base = base?;
                        if base.degree() * n > MAX_DEGREE {
                            err(self, &m.method, too_high(base.degree() * n))
                        } else {
                            Ok(base.powi(n))
                        }
                    }
                    _ => err(
                        self,
                        at,
                        "`powi` in `shape` takes a literal exponent from 0 to 16, e.g. `.powi(2)`".to_string(),
                    ),
                }
            }
            syn::Expr::Call(c) => err(self, &c.func, format!("calls are not allowed in `shape`; {ALLOWED}")),
            other => err(
                self,
                other,
                format!("this expression is not allowed in `shape`; {ALLOWED}"),
            ),
        }
    }
}
