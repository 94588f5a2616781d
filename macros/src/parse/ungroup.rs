//! Tokens a `macro_rules!` fragment passes on (`$t:ty`, `$e:expr`) arrive wrapped in invisible
//! (`None`-delimited) groups, which syn keeps as `Type::Group` and `Expr::Group`. Every parser
//! here matches on the shapes underneath, so the item is read through this view first: a type
//! group becomes its type; an expression group becomes its expression where that is an atom
//! (a path, literal, call, field, index, method call or parenthesised expression) and a
//! parenthesised expression otherwise, which keeps the group's precedence (`w * $e` with
//! `$e = 0.5 + 0.25` is `w * (0.5 + 0.25)`).
//!
//! Only the parsers see this view: the item is emitted as written.

use syn::visit_mut::{self, VisitMut};
use syn::{Expr, Type};

/// `f` with the invisible groups of macro fragments removed.
pub fn item_fn(f: &syn::ItemFn) -> syn::ItemFn {
    let mut f = f.clone();
    Ungroup.visit_item_fn_mut(&mut f);
    f
}

/// `m` with the invisible groups of macro fragments removed.
pub fn item_mod(m: &syn::ItemMod) -> syn::ItemMod {
    let mut m = m.clone();
    Ungroup.visit_item_mod_mut(&mut m);
    m
}

struct Ungroup;

impl VisitMut for Ungroup {
    fn visit_type_mut(&mut self, t: &mut Type) {
        while let Type::Group(g) = t {
            *t = (*g.elem).clone();
        }
        visit_mut::visit_type_mut(self, t);
    }

    fn visit_expr_mut(&mut self, e: &mut Expr) {
        while let Expr::Group(g) = e {
            let inner = (*g.expr).clone();
            *e = if atom(&inner) {
                inner
            } else {
                Expr::Paren(syn::ExprParen {
                    attrs: g.attrs.clone(),
                    paren_token: syn::token::Paren(g.group_token.span),
                    expr: Box::new(inner),
                })
            };
        }
        visit_mut::visit_expr_mut(self, e);
    }
}

/// An expression that binds tighter than any operator around it.
fn atom(e: &Expr) -> bool {
    matches!(
        e,
        Expr::Path(_)
            | Expr::Lit(_)
            | Expr::Call(_)
            | Expr::MethodCall(_)
            | Expr::Field(_)
            | Expr::Index(_)
            | Expr::Paren(_)
            | Expr::Group(_)
            | Expr::Tuple(_)
            | Expr::Array(_)
            | Expr::Block(_)
    )
}
