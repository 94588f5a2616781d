//! Diagnostics shared by every stage: the error collector and clforge's own failures.

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

/// A failure of clforge itself (a template that does not render, an IR that does not match its
/// kind): reported at the item, asking for a report, with the whole cause.
pub fn internal(span: proc_macro2::Span, what: impl std::fmt::Display) -> syn::Error {
    syn::Error::new(span, format!("clforge internal error (please report): {what}"))
}
