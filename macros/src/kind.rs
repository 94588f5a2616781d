//! How a kind of physics plugs into the pipeline: one implementation per attribute. Adding a
//! kind means a `parse/<kind>.rs`, `model/<kind>.rs`, `lower/<kind>.rs`, `render/<kind>.rs`,
//! `templates/<kind>/`, `expand/<kind>.rs` and one `impl Kind` here (docs/ARCHITECTURE.md).

use crate::ir::{Program, Sources};
use crate::{expand, lower, model, parse, render};
use proc_macro2::{Span, TokenStream};

pub trait Kind {
    /// The Rust item the attribute annotates (`syn::ItemFn`, `syn::ItemMod`).
    type Item: syn::parse::Parse;
    /// The attribute's arguments.
    type Args: syn::parse::Parse;
    /// What the user declared, validated.
    type Model;

    /// The error for an attribute placed on the wrong kind of item.
    fn wrong_item(item: &TokenStream) -> syn::Error;
    /// The user's item as emitted beside an error, so that the IDE keeps working: as written,
    /// less anything only the macro understands.
    fn as_written(item: TokenStream) -> TokenStream {
        item
    }
    /// Where clforge's own failures for this item are reported.
    fn span(item: &Self::Item) -> Span;
    /// [syn] -> [model]
    fn parse(args: &Self::Args, item: &Self::Item) -> syn::Result<Self::Model>;
    /// [model] -> [ir::Program]
    fn lower(model: &Self::Model) -> syn::Result<Program>;
    /// [ir::Program] -> OpenCL sources
    fn render(program: &Program) -> Result<Sources, render::Failure>;
    /// [model, ir::Program, sources] -> Rust
    fn expand(item: &Self::Item, model: &Self::Model, program: &Program, sources: &Sources)
        -> syn::Result<TokenStream>;
}

/// `#[clforge::stencil]` on a point-update function.
pub struct Stencil;

impl Kind for Stencil {
    type Item = syn::ItemFn;
    type Args = parse::attr::StencilArgs;
    type Model = model::Stencil;

    fn wrong_item(item: &TokenStream) -> syn::Error {
        syn::Error::new_spanned(
            item,
            "`#[clforge::stencil]` goes on a function: `fn jacobi(psi: &Grid<f32>, ...) -> f32`",
        )
    }
    fn span(item: &syn::ItemFn) -> Span {
        item.sig.ident.span()
    }
    fn parse(args: &Self::Args, item: &syn::ItemFn) -> syn::Result<model::Stencil> {
        parse::stencil::from_syn(&parse::view(item)?, args.boundary, args.state.clone(), &args.packed)
    }
    fn lower(model: &model::Stencil) -> syn::Result<Program> {
        lower::stencil::lower(model)
    }
    fn render(program: &Program) -> Result<Sources, render::Failure> {
        Ok(render::sources(render::stencil::render(program)?, None))
    }
    fn expand(
        item: &syn::ItemFn,
        _: &model::Stencil,
        program: &Program,
        sources: &Sources,
    ) -> syn::Result<TokenStream> {
        expand::stencil::expand(item, program, sources)
    }
}

/// `#[clforge::element]` on a module declaring an element's shape functions and material.
pub struct Element;

impl Kind for Element {
    type Item = syn::ItemMod;
    type Args = parse::element::ElementArgs;
    type Model = model::element::Element;

    fn wrong_item(item: &TokenStream) -> syn::Error {
        syn::Error::new_spanned(item, "`#[clforge::element]` goes on a module: `pub mod quad4 { ... }`")
    }
    fn span(item: &syn::ItemMod) -> Span {
        item.ident.span()
    }
    fn as_written(item: TokenStream) -> TokenStream {
        match syn::parse2::<syn::ItemMod>(item.clone()) {
            Ok(m) => expand::element::without_kernel_blocks(m),
            Err(_) => item,
        }
    }
    fn parse(args: &Self::Args, item: &syn::ItemMod) -> syn::Result<Self::Model> {
        parse::element::from_syn(&parse::ungroup::item_mod(item), args)
    }
    fn lower(model: &Self::Model) -> syn::Result<Program> {
        lower::element::lower(model).map(lower::per_element::with_kernels)
    }
    fn render(program: &Program) -> Result<Sources, render::Failure> {
        render::element::render_sources(program)
    }
    fn expand(
        item: &syn::ItemMod,
        model: &Self::Model,
        program: &Program,
        sources: &Sources,
    ) -> syn::Result<TokenStream> {
        expand::element::expand(item, model, program, sources)
    }
}

/// `#[clforge::sweep]` on an in-place directional point update.
pub struct Sweep;

impl Kind for Sweep {
    type Item = syn::ItemFn;
    type Args = parse::attr::SweepArgs;
    type Model = model::sweep::Sweep;

    fn wrong_item(item: &TokenStream) -> syn::Error {
        syn::Error::new_spanned(
            item,
            "`#[clforge::sweep]` goes on a function: `fn forward(c: &Sweep<f32>, ...) -> f32`",
        )
    }
    fn span(item: &syn::ItemFn) -> Span {
        item.sig.ident.span()
    }
    fn parse(args: &Self::Args, item: &syn::ItemFn) -> syn::Result<Self::Model> {
        let (stencil, state, reads) = parse::sweep::from_syn(&parse::view(item)?, args.boundary)?;
        Ok(model::sweep::Sweep {
            stencil,
            state,
            order: args.order.clone(),
            reads,
        })
    }
    fn lower(model: &Self::Model) -> syn::Result<Program> {
        lower::sweep::lower(model)
    }
    fn render(program: &Program) -> Result<Sources, render::Failure> {
        Ok(render::sources(render::sweep::render(program)?, None))
    }
    fn expand(item: &syn::ItemFn, _: &Self::Model, program: &Program, sources: &Sources) -> syn::Result<TokenStream> {
        expand::sweep::expand(item, program, sources)
    }
}

/// `#[clforge::lattice]` on a stochastic site update run on a checkerboard.
pub struct Lattice;

impl Kind for Lattice {
    type Item = syn::ItemFn;
    type Args = parse::attr::LatticeArgs;
    type Model = model::lattice::Lattice;

    fn wrong_item(item: &TokenStream) -> syn::Error {
        syn::Error::new_spanned(
            item,
            "`#[clforge::lattice]` goes on a function (a site rule: `fn ising(s: &Lattice<i32>, rng: &Draws, ...) -> i32`) \
             or on a module (a bond model: `#[lattice(bonds = 3)] mod fracture { const NEIGHBOURS: ...; fn energy(..) }`)",
        )
    }
    fn span(item: &syn::ItemFn) -> Span {
        item.sig.ident.span()
    }
    fn parse(args: &Self::Args, item: &syn::ItemFn) -> syn::Result<Self::Model> {
        parse::lattice::from_syn(&parse::view(item)?, args.boundary)
    }
    fn lower(model: &Self::Model) -> syn::Result<Program> {
        lower::lattice::lower(model)
    }
    fn render(program: &Program) -> Result<Sources, render::Failure> {
        Ok(render::sources(render::lattice::render(program)?, None))
    }
    fn expand(
        item: &syn::ItemFn,
        model: &Self::Model,
        program: &Program,
        sources: &Sources,
    ) -> syn::Result<TokenStream> {
        expand::lattice::expand(item, model, program, sources)
    }
}
