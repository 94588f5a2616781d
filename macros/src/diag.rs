//! Diagnostics shared by every stage: the error collector, clforge's own failures and the
//! bound on how deep an item may nest.

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

    /// Adds every error of `other`.
    pub fn extend(&mut self, other: Errors) {
        if let Some(e) = other.0 {
            self.push(e);
        }
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

/// How deep an item's tokens may nest, as [`nesting`] counts them. syn and every stage after it
/// recurse once per level of the syntax tree, up to 8 KiB of stack per level in a debug build of
/// this crate (as cargo builds proc macros): unbounded, a deep item overflows the 8 MiB stack of
/// rustc's thread and crashes the compiler instead of getting an error. At the bound an item
/// needs at most about 2 MiB (measured on the fuzzer's deep inputs, macros/src/fuzz.rs); the
/// repository's deepest item counts 35.
pub const MAX_NESTING: usize = 256;

/// Keywords that open a level of syntax by themselves (`x as f32 as f32`, `if`, `&mut`, `dyn`).
const NESTING_KEYWORDS: &[&str] = &[
    "as", "async", "await", "become", "box", "break", "const", "continue", "do", "dyn", "else", "for", "gen", "if",
    "impl", "in", "loop", "match", "move", "mut", "raw", "ref", "return", "static", "try", "unsafe", "where", "while",
    "yield",
];

/// Keywords and the `#` of an attribute that start an item or a statement after a `{...}`.
const ITEM_START: &[&str] = &[
    "pub",
    "fn",
    "const",
    "static",
    "struct",
    "enum",
    "union",
    "type",
    "trait",
    "impl",
    "mod",
    "use",
    "extern",
    "unsafe",
    "async",
    "let",
    "macro_rules",
];

/// Rejects tokens that nest deeper than [`MAX_NESTING`]. Each level of syntax has a bracket, a
/// punctuation or one of [`NESTING_KEYWORDS`] of its own, so the depth of a token is at most the
/// number of those on the way to it: every enclosing group and, in each group, those before it
/// that it may nest in. What follows a `;`, a `=>`, a `,` (outside `<...>` and `|...|`, which
/// nest without brackets) or an item after a `{...}` starts afresh: it cannot nest in what
/// precedes.
pub fn nesting(tokens: &proc_macro2::TokenStream) -> syn::Result<()> {
    depth(tokens, MAX_NESTING).map(|_| ()).map_err(|at| {
        syn::Error::new(
            at,
            format!(
                "this item nests too deeply for clforge: more than {MAX_NESTING} levels of expressions, types \
                 or brackets; name parts of it with `let`"
            ),
        )
    })
}

/// The depth of tokens as [`nesting`] counts it, or the first token deeper than `limit`.
pub fn depth(tokens: &proc_macro2::TokenStream, limit: usize) -> Result<usize, proc_macro2::Span> {
    use proc_macro2::{Delimiter, Spacing, TokenTree};
    struct Level {
        rest: proc_macro2::token_stream::IntoIter,
        /// The depth of the group itself.
        base: usize,
        /// Counted tokens since the last fresh start.
        run: usize,
        /// A `<` or `|` since then: a `,` may separate generic arguments or closure parameters.
        open: bool,
        after_brace: bool,
        after_joint_eq: bool,
    }
    let level = |rest, base| Level {
        rest,
        base,
        run: 0,
        open: false,
        after_brace: false,
        after_joint_eq: false,
    };
    let mut stack = vec![level(tokens.clone().into_iter(), 0)];
    let mut deepest = 0;
    while let Some(l) = stack.last_mut() {
        let Some(t) = l.rest.next() else {
            stack.pop();
            continue;
        };
        let (fresh, counted) = match &t {
            TokenTree::Punct(p) => {
                let c = p.as_char();
                let arrow = c == '>' && l.after_joint_eq;
                let attribute = c == '#' && l.after_brace;
                l.open |= c == '<' || c == '|';
                (c == ';' || arrow || attribute || (c == ',' && !l.open), true)
            }
            TokenTree::Ident(id) => {
                let word = id.to_string();
                let item = l.after_brace && ITEM_START.contains(&word.as_str());
                (item, NESTING_KEYWORDS.contains(&word.as_str()))
            }
            TokenTree::Group(_) => (false, true),
            TokenTree::Literal(_) => (false, false),
        };
        if fresh {
            l.run = 0;
            l.open = false;
        }
        if counted {
            l.run += 1;
        }
        l.after_brace = matches!(&t, TokenTree::Group(g) if g.delimiter() == Delimiter::Brace);
        l.after_joint_eq = matches!(&t, TokenTree::Punct(p) if p.as_char() == '=' && p.spacing() == Spacing::Joint);
        let depth = l.base + l.run;
        if depth > limit {
            return Err(t.span());
        }
        deepest = deepest.max(depth);
        if let TokenTree::Group(g) = &t {
            stack.push(level(g.stream().into_iter(), depth));
        }
    }
    Ok(deepest)
}
