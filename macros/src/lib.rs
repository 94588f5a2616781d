//! Procedural macros of clforge. Every attribute runs the same pipeline (`driver.rs`):
//! parse (syn -> model) -> lower (model -> IR) -> emit + render (IR -> OpenCL) -> expand (Rust).
//! A kind plugs in through `kind::Kind`; docs/ARCHITECTURE.md walks the stages.

mod bonds;
mod diag;
mod driver;
mod emit;
mod expand;
mod ir;
mod kind;
mod lower;
mod model;
mod parse;
mod render;

use proc_macro::TokenStream;

/// Turns a point-update function into OpenCL stencil kernels; the function stays callable.
///
/// `#[stencil]` or `#[stencil(boundary = fixed | periodic | clamp)]`. See the crate `clforge`.
#[proc_macro_attribute]
pub fn stencil(attr: TokenStream, item: TokenStream) -> TokenStream {
    driver::run::<kind::Stencil>(attr.into(), item.into()).into()
}

/// Turns an in-place directional point update into OpenCL wavefront schedules; the function
/// stays callable and `apply_host` runs the sequential sweep.
///
/// `#[sweep]`, `#[sweep(order = forward | backward | (forward, backward, ..), boundary = fixed | clamp)]`.
/// The swept field is an argument `c: &Sweep<f32>` read with `c.new(dx, ..)` (updated, behind
/// the point) and `c.old(dx, ..)` (not yet updated: ahead, or the point itself). See the crate `clforge`.
#[proc_macro_attribute]
pub fn sweep(attr: TokenStream, item: TokenStream) -> TokenStream {
    driver::run::<kind::Sweep>(attr.into(), item.into()).into()
}

/// Turns a stochastic site update into an OpenCL checkerboard kernel; the function stays
/// callable and `apply_host` runs the same two colours on the host with the same random numbers.
///
/// On a module, `#[lattice(bonds = 3, group_kind = 2, group_axis = z)]` declares a bond model
/// of seed 003's shape (docs/LATTICE.md): `const NEIGHBOURS` (the table, checked here when it is
/// a literal), `fn energy(broken: u64, groups: u64) -> f64` (or with a first `p: &P`) and
/// optionally `fn accept(du: f64) -> f64`; it generates `model()` and `Rule` in the module.
///
/// `#[lattice]` or `#[lattice(boundary = periodic | fixed | clamp)]` (default `periodic`). The
/// state is an argument `s: &Lattice<i32>` (`Lattice1`, `Lattice3`) read with `s.at(dx, ..)` at
/// the site itself or at odd offsets; an argument `rng: &Draws` gives `rng.draw(k)` (`u32`) and
/// `rng.uniform(k)` (`f32` in [0, 1)), Philox4x32-10 keyed by (seed, step, site, k).
#[proc_macro_attribute]
pub fn lattice(attr: TokenStream, item: TokenStream) -> TokenStream {
    let item: proc_macro2::TokenStream = item.into();
    if let Some(m) = bonds::as_module(&item) {
        return bonds::run(attr.into(), item, &m).into();
    }
    driver::run::<kind::Lattice>(attr.into(), item).into()
}

/// Declares a finite element on a module holding its shape functions, local nodes and
/// material law; generates `dshape` in the module and the element type beside it.
///
/// `#[element(dim = 2, nodes = 4, operator = plane_stress, quadrature = 2)]`, optionally
/// `dofs = 2` (checked against the operator). See the crate `clforge` and docs/DESIGN-NOTES.md.
#[proc_macro_attribute]
pub fn element(attr: TokenStream, item: TokenStream) -> TokenStream {
    driver::run::<kind::Element>(attr.into(), item.into()).into()
}

/// Makes a struct of scalars usable as stencil parameters (passed in constant memory).
#[proc_macro_derive(Params)]
pub fn derive_params(input: TokenStream) -> TokenStream {
    driver::derive_params(input.into()).into()
}

#[cfg(test)]
mod fuzz;
#[cfg(test)]
mod tests;
