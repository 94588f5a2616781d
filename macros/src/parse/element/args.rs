//! `#[element(...)]`'s arguments.

use crate::model::element::Operator;
use clforge_abi::modal::Space;
use proc_macro2::Span;
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
    /// A built-in operator; absent when the module has a `#[form(stiffness)]`.
    pub operator: Option<At<Operator>>,
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
                "template" => template = Some(parse_template(input)?),
                "operator" => operator = Some(parse_operator(input)?),
                "cell" => cell = Some(parse_cell(input)?),
                "basis" => basis = Some(parse_basis(input)?),
                "dim" | "nodes" | "dofs" | "quadrature" | "order" => {
                    let value = parse_int(input, &name)?;
                    ints.insert(name, value);
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
        finish(ints, operator, basis, cell, template)
    }
}

/// `template = "..."`.
fn parse_template(input: ParseStream) -> syn::Result<syn::LitStr> {
    input.parse().map_err(|e| {
        syn::Error::new(
            e.span(),
            "`template` is a path relative to the crate, e.g. `template = \"templates/energy.cl.tera\"`",
        )
    })
}

/// `operator = plane_stress`, ...
fn parse_operator(input: ParseStream) -> syn::Result<At<Operator>> {
    let value: Ident = input.parse()?;
    let op = Operator::from_name(&value.to_string()).ok_or_else(|| {
        syn::Error::new_spanned(
            &value,
            format!("unknown operator `{value}`; expected {}", Operator::NAMES),
        )
    })?;
    Ok(At {
        value: op,
        span: value.span(),
    })
}

/// `cell = cube` or `cell = simplex`.
fn parse_cell(input: ParseStream) -> syn::Result<At<clforge_abi::Cell>> {
    let value: Ident = input
        .parse()
        .map_err(|e| syn::Error::new(e.span(), "`cell` is `cube` or `simplex`, e.g. `cell = simplex`"))?;
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
    Ok(At {
        value: c,
        span: value.span(),
    })
}

/// `basis = trunk` or `basis = tensor`.
fn parse_basis(input: ParseStream) -> syn::Result<At<Space>> {
    let value: Ident = input
        .parse()
        .map_err(|e| syn::Error::new(e.span(), "`basis` is `trunk` or `tensor`, e.g. `basis = trunk`"))?;
    let space = Space::from_name(&value.to_string()).ok_or_else(|| {
        syn::Error::new_spanned(
            &value,
            format!(
                "unknown basis `{value}`; expected `trunk` (serendipity: bubble degrees sum to at most `order`) \
                     or `tensor` (each bubble degree at most `order`)"
            ),
        )
    })?;
    Ok(At {
        value: space,
        span: value.span(),
    })
}

/// The integer of key `name`, within its bounds.
fn parse_int(input: ParseStream, name: &str) -> syn::Result<At<usize>> {
    let lit: syn::LitInt = input.parse().map_err(|e| {
        syn::Error::new(
            e.span(),
            format!("`{name}` must be an integer literal, e.g. `{name} = 2`"),
        )
    })?;
    let value: usize = lit.base10_parse()?;
    let (lo, hi) = match name {
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
    Ok(At {
        value,
        span: lit.span(),
    })
}

/// The arguments together: what a nodal and a modal element require and refuse.
fn finish(
    ints: HashMap<String, At<usize>>,
    operator: Option<At<Operator>>,
    basis: Option<At<Space>>,
    cell: Option<At<clforge_abi::Cell>>,
    template: Option<syn::LitStr>,
) -> syn::Result<ElementArgs> {
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
        operator,
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
