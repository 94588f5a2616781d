//! Rust syntax -> model, one module per kind. Errors are `syn::Error`s spanning the
//! smallest wrong token; several are collected and reported together.

pub mod args;
pub mod element;
pub mod expr;
pub mod params;
pub mod stencil;

/// Collects errors so that a user sees all of them in one build (serde's `Ctxt`).
#[derive(Default)]
pub struct Errors(Option<syn::Error>);

impl Errors {
    pub fn push(&mut self, e: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(e),
            None => self.0 = Some(e),
        }
    }

    pub fn spanned(&mut self, tokens: impl quote::ToTokens, msg: impl std::fmt::Display) {
        self.push(syn::Error::new_spanned(tokens, msg));
    }

    pub fn finish(self) -> syn::Result<()> {
        self.0.map_or(Ok(()), Err)
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_text_reads_like_source() {
        let e: syn::Expr = syn::parse_quote!(k.a * (psi.at(1, 0) + psi.at(-1, 0)) + w.at(0, 0).abs());
        assert_eq!(rust_text(&e), "k.a * (psi.at(1, 0) + psi.at(-1, 0)) + w.at(0, 0).abs()");
    }
}
