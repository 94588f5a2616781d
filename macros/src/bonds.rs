//! `#[clforge::lattice(bonds = K)]` on a module: a bond model of seed 003's shape declared in
//! Rust. The module holds the neighbourhood as data (`NEIGHBOURS`), the energy of the global
//! counters (`fn energy`) and, optionally, the acceptance of an energy difference (`fn accept`);
//! the attribute says how many bonds a site has and which groups the second counter counts.
//!
//! Unlike the other kinds this one generates no OpenCL from the user's code: the device schedule
//! (`templates/lattice/bonds.cl`, a work queue of live bonds) is the same for every model, the
//! table travels as data and the energy and acceptance run on the host, turned into integer
//! thresholds per launch (late-synchronised counters), so that host and device accept the same
//! draws. What the macro adds is the checking: a table literal is checked here, at its span
//! (kinds, offsets in −1..=1, equal rows, no bond its own neighbour), and the functions'
//! signatures are checked before rustc sees the generated glue.

use crate::expand::rt;
use proc_macro2::TokenStream;
use quote::quote;
use syn::parse::{Parse, ParseStream};
use syn::{Expr, Ident, Item, ItemFn, ItemMod, Token};

/// The attribute's arguments in module form.
struct Args {
    bonds: usize,
    /// (kind, axis) of the groups the energy's second counter counts.
    groups: Option<(usize, usize)>,
}

impl Parse for Args {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let mut bonds = None;
        let mut kind = None;
        let mut axis = None;
        let whole = input.span();
        while !input.is_empty() {
            let key: Ident = input.parse()?;
            input.parse::<Token![=]>()?;
            match key.to_string().as_str() {
                "bonds" | "group_kind" => {
                    let v: syn::LitInt = input.parse()?;
                    let n: usize = v.base10_parse()?;
                    let slot = if key == "bonds" { &mut bonds } else { &mut kind };
                    if slot.replace((n, v.span())).is_some() {
                        return Err(syn::Error::new_spanned(&key, format!("`{key}` is given twice")));
                    }
                }
                "group_axis" => {
                    let v: Ident = input.parse()?;
                    let a = match v.to_string().as_str() {
                        "x" => 0,
                        "y" => 1,
                        "z" => 2,
                        other => {
                            return Err(syn::Error::new_spanned(
                                &v,
                                format!("unknown axis `{other}`; expected `x`, `y` or `z`"),
                            ))
                        }
                    };
                    if axis.replace((a, v.span())).is_some() {
                        return Err(syn::Error::new_spanned(&key, "`group_axis` is given twice"));
                    }
                }
                other => {
                    return Err(syn::Error::new_spanned(
                        &key,
                        format!(
                            "unknown argument `{other}` of a bond model; expected `bonds = N`, and for groups \
                             `group_kind = K, group_axis = x | y | z`"
                        ),
                    ))
                }
            }
            if !input.is_empty() {
                input.parse::<Token![,]>()?;
            }
        }
        let Some((bonds, bspan)) = bonds else {
            return Err(syn::Error::new(
                whole,
                "a bond model needs `bonds = N`: how many bonds each site holds (seed 003: 3, to x + 1, y + 1 and z + 1)",
            ));
        };
        if bonds == 0 || bonds > 8 {
            return Err(syn::Error::new(bspan, format!("{bonds} bonds per site: give 1 to 8")));
        }
        let groups = match (kind, axis) {
            (None, None) => None,
            (Some((k, kspan)), Some((a, _))) => {
                if k >= bonds {
                    return Err(syn::Error::new(
                        kspan,
                        format!(
                            "group kind {k} on a lattice of {bonds} bonds per site: the kinds are 0 to {}",
                            bonds - 1
                        ),
                    ));
                }
                Some((k, a))
            }
            (Some((_, s)), None) | (None, Some((_, s))) => return Err(syn::Error::new(
                s,
                "groups need both `group_kind = K` (the bond kind that marks its line) and `group_axis = x | y | z`",
            )),
        };
        Ok(Args { bonds, groups })
    }
}

/// An integer literal, possibly negated, as i64.
fn int(e: &Expr) -> syn::Result<i64> {
    match e {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i), ..
        }) => i.base10_parse(),
        Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Neg(_),
            expr,
            ..
        }) => int(expr).map(|v| -v),
        Expr::Group(g) => int(&g.expr),
        Expr::Paren(p) => int(&p.expr),
        other => Err(syn::Error::new_spanned(other, "expected an integer literal")),
    }
}

fn elems(e: &Expr) -> Option<Vec<&Expr>> {
    match e {
        Expr::Array(a) => Some(a.elems.iter().collect()),
        Expr::Group(g) => elems(&g.expr),
        _ => None,
    }
}

/// Checks a table written as an array literal `[[[dx, dy, dz, kind]; n]; bonds]`.
fn check_table(e: &Expr, bonds: usize) -> syn::Result<()> {
    let Some(rows) = elems(e) else {
        // A path or a call: checked when the table is built (NeighbourTable::new).
        return Ok(());
    };
    if rows.len() != bonds {
        return Err(syn::Error::new_spanned(
            e,
            format!(
                "the table has {} rows but the lattice has {bonds} bonds per site: row `kind` lists the \
                 neighbours of a bond of that kind",
                rows.len()
            ),
        ));
    }
    let mut per_kind = None;
    for (kind, row) in rows.iter().enumerate() {
        let Some(entries) = elems(row) else {
            return Err(syn::Error::new_spanned(
                row,
                "a row of the table is an array of neighbours `[dx, dy, dz, kind]`",
            ));
        };
        if entries.is_empty() || entries.len() > 64 {
            return Err(syn::Error::new_spanned(
                row,
                format!("bond kind {kind} has {} neighbours: give 1 to 64", entries.len()),
            ));
        }
        match per_kind {
            None => per_kind = Some(entries.len()),
            Some(n) if n != entries.len() => {
                return Err(syn::Error::new_spanned(
                    row,
                    format!(
                        "bond kind {kind} has {} neighbours but kind 0 has {n}: every kind needs the same number \
                         (a proposal picks one of them uniformly)",
                        entries.len()
                    ),
                ))
            }
            Some(_) => {}
        }
        for (j, n) in entries.iter().enumerate() {
            let parts = elems(n).filter(|p| p.len() == 4).ok_or_else(|| {
                syn::Error::new_spanned(
                    n,
                    "a neighbour is `[dx, dy, dz, kind]`: the bond of `kind` at the site (dx, dy, dz) away",
                )
            })?;
            let v = parts.iter().map(|p| int(p)).collect::<syn::Result<Vec<i64>>>()?;
            if let Some(d) = (0..3).find(|&d| v[d].abs() > 1) {
                return Err(syn::Error::new_spanned(
                    parts[d],
                    format!(
                        "neighbour {j} of bond kind {kind} is {} sites away along {}: offsets are -1, 0 or 1 (the \
                         schedule keeps live bonds one site inside the faces, so that every neighbour exists)",
                        v[d],
                        ["x", "y", "z"][d]
                    ),
                ));
            }
            if v[3] < 0 || v[3] as usize >= bonds {
                return Err(syn::Error::new_spanned(
                    parts[3],
                    format!(
                        "neighbour {j} of bond kind {kind} has kind {}: the kinds are 0 to {}",
                        v[3],
                        bonds - 1
                    ),
                ));
            }
            if v == [0, 0, 0, kind as i64] {
                return Err(syn::Error::new_spanned(
                    n,
                    format!("neighbour {j} of bond kind {kind} is the bond itself"),
                ));
            }
        }
    }
    Ok(())
}

/// Whether `ty` is the path `name` (`u64`, `f64`), or a reference to anything (`&P`).
fn is(ty: &syn::Type, name: &str) -> bool {
    matches!(ty, syn::Type::Path(p) if p.qself.is_none() && p.path.is_ident(name))
}

/// The types of a function's arguments, or the error at a receiver.
fn arg_types(f: &ItemFn) -> syn::Result<Vec<&syn::Type>> {
    f.sig
        .inputs
        .iter()
        .map(|a| match a {
            syn::FnArg::Typed(t) => Ok(&*t.ty),
            syn::FnArg::Receiver(r) => Err(syn::Error::new_spanned(r, "a free function, without `self`")),
        })
        .collect()
}

fn returns_f64(f: &ItemFn) -> bool {
    matches!(&f.sig.output, syn::ReturnType::Type(_, t) if is(t, "f64"))
}

/// `fn energy(broken: u64, groups: u64) -> f64` or `fn energy(p: &P, broken: u64, groups: u64) -> f64`:
/// the parameter type, if any.
fn check_energy(f: &ItemFn) -> syn::Result<Option<syn::Type>> {
    let tys = arg_types(f)?;
    let counters = |t: &[&syn::Type]| t.len() == 2 && is(t[0], "u64") && is(t[1], "u64");
    let ok = returns_f64(f) && f.sig.generics.params.is_empty() && f.sig.asyncness.is_none();
    let params = match tys.as_slice() {
        [a, b] if ok && counters(&[a, b]) => None,
        [syn::Type::Reference(r), a, b] if ok && r.mutability.is_none() && counters(&[a, b]) => Some((*r.elem).clone()),
        _ => {
            return Err(syn::Error::new_spanned(
                &f.sig,
                "the energy is `fn energy(broken: u64, groups: u64) -> f64`, or with parameters \
                 `fn energy(p: &P, broken: u64, groups: u64) -> f64`: the energy (units of k_B T) of a state \
                 with `broken` broken bonds and `groups` marked groups",
            ))
        }
    };
    Ok(params)
}

/// `fn accept(du: f64) -> f64`.
fn check_accept(f: &ItemFn) -> syn::Result<()> {
    let tys = arg_types(f)?;
    if tys.len() == 1 && is(tys[0], "f64") && returns_f64(f) && f.sig.generics.params.is_empty() {
        Ok(())
    } else {
        Err(syn::Error::new_spanned(
            &f.sig,
            "the acceptance is `fn accept(du: f64) -> f64`: the probability of accepting a move that changes the \
             energy by `du` (e.g. Metropolis `if du <= 0.0 { 1.0 } else { (-du).exp() }`)",
        ))
    }
}

fn expand(args: &Args, m: &ItemMod) -> syn::Result<TokenStream> {
    let Some((_, items)) = &m.content else {
        return Err(syn::Error::new_spanned(
            m,
            "a bond model is a module with a body: `mod fracture { const NEIGHBOURS: ... ; fn energy(..) -> f64 { .. } }`",
        ));
    };
    let mut table = None;
    let mut energy = None;
    let mut accept = None;
    for item in items {
        let own = match item {
            Item::Const(c) => Some(&c.ident),
            Item::Fn(f) => Some(&f.sig.ident),
            Item::Struct(x) => Some(&x.ident),
            Item::Enum(x) => Some(&x.ident),
            Item::Type(x) => Some(&x.ident),
            Item::Static(x) => Some(&x.ident),
            Item::Mod(x) => Some(&x.ident),
            _ => None,
        };
        if let Some(id) = own.filter(|id| ["BONDS", "model", "Rule"].iter().any(|g| *id == g)) {
            return Err(syn::Error::new_spanned(
                id,
                format!("`{id}` is generated in a bond model's module (`BONDS`, `model()`, `Rule`): rename this item"),
            ));
        }
        match item {
            Item::Const(c) if c.ident == "NEIGHBOURS" => table = Some(c),
            Item::Fn(f) if f.sig.ident == "energy" => energy = Some(f),
            Item::Fn(f) if f.sig.ident == "accept" => accept = Some(f),
            _ => {}
        }
    }
    let name = &m.ident;
    let table = table.ok_or_else(|| {
        syn::Error::new_spanned(
            name,
            format!(
                "bond model `{name}` has no `const NEIGHBOURS: [[[i32; 4]; N]; {}]`: row `kind` lists the bonds \
                 `[dx, dy, dz, kind]` a broken bond of that kind can break next",
                args.bonds
            ),
        )
    })?;
    check_table(&table.expr, args.bonds)?;
    let energy = energy.ok_or_else(|| {
        syn::Error::new_spanned(
            name,
            format!("bond model `{name}` has no `fn energy(broken: u64, groups: u64) -> f64` (optionally with a first parameter `p: &P`)"),
        )
    })?;
    let params = check_energy(energy)?;
    if let Some(a) = accept {
        check_accept(a)?;
    }

    let rt = rt();
    let bonds = args.bonds;
    let groups = match args.groups {
        Some((kind, axis)) => {
            quote!(::core::option::Option::Some(#rt::lattice::bonds::Groups { kind: #kind, axis: #axis }))
        }
        None => quote!(::core::option::Option::None),
    };
    let acceptance = if accept.is_some() {
        quote!(::core::option::Option::Some(accept(du)))
    } else {
        quote!({
            let _ = du;
            ::core::option::Option::None
        })
    };
    let (rule, energy_call) = match &params {
        Some(p) => (
            quote! {
                /// The model's energy and acceptance with its parameters: pass it to
                /// `BondRun::run`, `serial_reference` or `replay`.
                #[derive(Clone, Copy, Debug)]
                pub struct Rule<'a>(pub &'a #p);
            },
            quote!(energy(self.0, broken, groups)),
        ),
        None => (
            quote! {
                /// The model's energy and acceptance: pass it to `BondRun::run`,
                /// `serial_reference` or `replay`.
                #[derive(Clone, Copy, Debug, Default)]
                pub struct Rule;
            },
            quote!(energy(broken, groups)),
        ),
    };
    let lifetime = params.as_ref().map(|_| quote!(<'_>));
    let (vis, mod_token, unsafety) = (&m.vis, &m.mod_token, &m.unsafety);
    // Inner attributes (`#![allow(..)]`) go back inside the module, outer ones before it.
    let (inner, attrs): (Vec<_>, Vec<_>) = m
        .attrs
        .iter()
        .partition(|a| matches!(a.style, syn::AttrStyle::Inner(_)));
    let dynamics_doc = if accept.is_some() {
        "its own acceptance (`accept`)"
    } else {
        "Metropolis, min(1, e^-du)"
    };
    let model_doc = format!(
        "The bond model declared by this module: {bonds} bonds per site, the `NEIGHBOURS` table, {}, {dynamics_doc}. \
         An error only where the table is not a literal (a literal is checked at compile time).",
        match args.groups {
            Some((k, a)) => format!("groups along {} marked by bond kind {k}", ["x", "y", "z"][a]),
            None => "no groups".into(),
        }
    );
    Ok(quote! {
        #(#attrs)*
        #vis #unsafety #mod_token #name {
            #(#inner)*
            #(#items)*

            /// Bonds per site (the attribute's `bonds`).
            pub const BONDS: usize = #bonds;

            #[doc = #model_doc]
            pub fn model() -> #rt::Result<#rt::lattice::bonds::BondModel> {
                let rows: ::std::vec::Vec<#rt::lattice::bonds::Neighbour> =
                    NEIGHBOURS.iter().flat_map(|row| row.iter().copied()).collect();
                ::core::result::Result::Ok(#rt::lattice::bonds::BondModel {
                    table: #rt::lattice::bonds::NeighbourTable::new(BONDS, rows)?,
                    groups: #groups,
                    dynamics: #rt::lattice::bonds::Dynamics::Metropolis,
                })
            }

            #rule

            impl #rt::lattice::bonds::BondEnergy for Rule #lifetime {
                fn energy(&self, broken: u64, groups: u64) -> f64 {
                    #energy_call
                }
                fn acceptance(&self, du: f64) -> ::core::option::Option<f64> {
                    #acceptance
                }
            }
        }
    })
}

/// The module form of `#[clforge::lattice]`; the item goes back unchanged beside an error.
pub fn run(attr: TokenStream, item: TokenStream, m: &ItemMod) -> TokenStream {
    crate::diag::nesting(&attr)
        .and_then(|()| syn::parse2::<Args>(attr))
        .and_then(|args| expand(&args, m))
        .unwrap_or_else(|e| crate::expand::error_with_item(item, e))
}

/// The attribute's item as a module, if it is one (then it is a bond model).
pub fn as_module(item: &TokenStream) -> Option<ItemMod> {
    crate::diag::nesting(item).ok()?;
    syn::parse2::<ItemMod>(item.clone()).ok()
}
