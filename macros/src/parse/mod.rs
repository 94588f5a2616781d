//! STAGE Rust syntax -> model, one module per kind (`stencil.rs`, `sweep.rs`, `lattice.rs`,
//! `element.rs`) plus the shared pieces: `attr.rs` (attribute arguments), `update.rs` (a
//! point-update function's signature), `body.rs` (the body language), `params.rs`
//! (`#[derive(Params)]`). Errors are `syn::Error`s spanning the smallest wrong token; several
//! are collected and reported together (`crate::diag::Errors`).

pub use crate::diag::Errors;

/// `e` without its parentheses and invisible groups.
pub fn strip_parens(e: &syn::Expr) -> &syn::Expr {
    match e {
        syn::Expr::Paren(p) => strip_parens(&p.expr),
        syn::Expr::Group(g) => strip_parens(&g.expr),
        other => other,
    }
}

/// The value of an integer literal, possibly negated and parenthesised (`-1`, `(2)`).
pub fn int_literal(e: &syn::Expr) -> Option<i64> {
    match strip_parens(e) {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i), ..
        }) => i.base10_parse().ok(),
        syn::Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Neg(_),
            expr,
            ..
        }) => int_literal(expr).map(|v: i64| -v),
        _ => None,
    }
}

/// What the parsers of a function kind read: the item without macro fragments' groups, its
/// loops unrolled, tables folded and helpers inlined (the item itself is emitted as written).
pub fn view(item: &syn::ItemFn) -> syn::Result<syn::ItemFn> {
    unroll::item_fn(&ungroup::item_fn(item))
}

pub mod attr;
pub mod body;
pub mod element;
pub mod family;
pub mod lattice;
pub mod params;
pub mod stencil;
pub mod sweep;
pub mod ungroup;
pub mod unroll;
pub mod update;

/// 1-based line of a span in the user's file (0 outside a compiler session without locations).
pub fn line_of(span: proc_macro2::Span) -> usize {
    span.start().line
}

/// Readable Rust text of tokens, for comments in generated code: `psi . at (1 , 0)` -> `psi.at(1, 0)`.
pub fn rust_text(tokens: &impl quote::ToTokens) -> String {
    let raw = tokens
        .to_token_stream()
        .to_string()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace("*/", "* /");
    let mut out = String::with_capacity(raw.len());
    let chars: Vec<char> = raw.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if c == ' ' {
            let prev = out.chars().last().unwrap_or(' ');
            let next = chars.get(i + 1).copied().unwrap_or(' ');
            let glue_next =
                matches!(next, '.' | ',' | ')' | ']' | ';') || (next == '(' && (prev.is_alphanumeric() || prev == '_'));
            let glue_prev = matches!(prev, '.' | '(' | '[' | '!')
                || (prev == '-' && out.ends_with("(-"))
                || (prev == '-' && out.ends_with(", -"));
            if glue_next || glue_prev {
                continue;
            }
        }
        out.push(c);
    }
    out
}

/// The doc comment lines of an item, as written (`/// text` -> ` text`).
pub fn doc_lines(attrs: &[syn::Attribute]) -> Vec<String> {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s), ..
                }) => Some(s.value().trim_end().to_string()),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_text_reads_like_source() {
        let e: syn::Expr = syn::parse_quote!(k.a * (psi.at(1, 0) + psi.at(-1, 0)) + w.at(0, 0).abs());
        assert_eq!(rust_text(&e), "k.a * (psi.at(1, 0) + psi.at(-1, 0)) + w.at(0, 0).abs()");
    }
}
