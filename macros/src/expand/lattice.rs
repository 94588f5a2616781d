//! The lattice rule's Rust side: the kernel type with its source, spec, plan, the device step
//! (colour 0, then colour 1) and the host reference (the same two colours, site by site, with
//! the same random numbers).

use super::{arg_tokens, boundary_tokens, checks, rt, scalar_ty, source, type_ident, ArgTokens};
use crate::ir::{Binding, Body, Program, Sources};
use crate::model::lattice::Lattice;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

pub fn expand(item: &syn::ItemFn, model: &Lattice, p: &Program, sources: &Sources) -> syn::Result<TokenStream> {
    let Body::Lattice(l) = &p.body else {
        return Err(crate::diag::internal(
            item.sig.ident.span(),
            "lattice expansion of another kind",
        ));
    };
    let k = &l.body;
    let rt = rt();
    let vis = &item.vis;
    let fn_name = &item.sig.ident;
    let name = &p.origin.name;
    let ty_name = type_ident(fn_name)?;
    let source_fn = source::source_fn(name, &sources.parts, &p.completion);
    let checks = checks::assumed_types(&k.args, &p.completion);
    let boundary = boundary_tokens(k.boundary);
    let rank = k.rank;
    let [hx, hy, hz] = k.access.halo;
    let origin = format!("{}:{}", p.origin.file, p.origin.line);
    // `LatticePlan::run` binds the user's arguments in order, then the extents, then the
    // stream and the colour: the kernel's signature must start that way.
    let expected: Vec<Binding> = (0..k.args.len())
        .map(Binding::UserArg)
        .chain((0..3).map(Binding::Extent))
        .collect();
    let Some(kernel) = p.kernels.first() else {
        return Err(crate::diag::internal(
            item.sig.ident.span(),
            "a lattice rule without its kernel",
        ));
    };
    // seed (2 words), step, colour; an unpacked rule also its place in a split lattice (4).
    let named = if l.packed { 4 } else { 8 };
    if kernel.params.len() != expected.len() + named
        || kernel.params.iter().zip(&expected).any(|(q, e)| q.binding != *e)
    {
        return Err(crate::diag::internal(
            item.sig.ident.span(),
            "the lattice kernel's signature differs from the plan's argument order",
        ));
    }
    let kname = &kernel.name;
    let l_state = l.state;
    let colours = l.colours;
    let packed = l.packed;

    let hygienic = |n: &str| syn::Ident::new(n, proc_macro2::Span::mixed_site());
    let (p_, site, shape, plan, device, value, seed, step, colour) = (
        hygienic("p"),
        hygienic("site"),
        hygienic("shape"),
        hygienic("plan"),
        hygienic("device"),
        hygienic("value"),
        hygienic("seed"),
        hygienic("step"),
        hygienic("colour"),
    );
    let grid = format_ident!("Grid{}", rank);
    let state = k.args[l.state].name();
    let state_ty = scalar_ty(k.out);
    let ArgTokens {
        dev_params,
        host_params,
        launch_args,
        mut host_args,
        shape_checks,
    } = arg_tokens(
        &k.args,
        &shape,
        &|n| quote!(&#rt::#grid::new(#n, #p_, #boundary)),
        Some((l.state, &|n| quote!(&#rt::#grid::new(&*#n, #p_, #boundary)))),
    );
    // The random stream goes where the signature has it.
    if let Some(at) = model.draws {
        let draws = quote!(&#rt::lattice::Draws::new(#seed, #step, #site));
        host_args.insert(at.min(host_args.len()), draws);
    }
    let arg_names: Vec<&syn::Ident> = k.args.iter().map(|a| a.name()).collect();
    // An unpacked rule runs on a `Device` or split over `Devices` through the same calls
    // (`runtime::lattice::LatticeTarget`/`LatticeLaunch`); a bit-packed one on one device.
    let (plan_fns, step_plan_fn) = if packed {
        (
            quote! {
                /// Builds (once, cached) and sizes the rule for grids of `shape`.
                pub fn plan(#device: &#rt::Device, #shape: #rt::Shape) -> #rt::Result<#rt::lattice::LatticePlan> {
                    #rt::lattice::LatticePlan::new(#device, Self::spec(), #shape)
                }
            },
            quote! {
                /// Like [`Self::step`] with a prepared plan: no build or sizing on the hot path.
                #[allow(clippy::too_many_arguments)]
                pub fn step_plan(#plan: &#rt::lattice::LatticePlan, #seed: u64, #step: u32, #(#dev_params),*) -> #rt::Result<#rt::lattice::StepEvents> {
                    #plan.run(&*#state, &[#(#launch_args),*], #seed, #step)
                }
            },
        )
    } else {
        let target = syn::Ident::new("__ClforgePlan", proc_macro2::Span::mixed_site());
        let l = quote!(<<#target as #rt::lattice::LatticeLaunch>::Like as #rt::Launch>);
        let (gen_params, gen_args) = super::target_args(&k.args, l_state, &l);
        (
            quote! {
                /// Builds (once, cached) and sizes the rule for lattices of `shape` on a `Device`, or
                /// on each slab of `Devices` (a `SplitLatticePlan`).
                pub fn plan<__ClforgeTarget: #rt::lattice::LatticeTarget>(#device: &__ClforgeTarget, #shape: #rt::Shape) -> #rt::Result<__ClforgeTarget::Plan> {
                    #rt::lattice::LatticeTarget::lattice_plan(#device, Self::spec(), #shape)
                }
            },
            quote! {
                /// Like [`Self::step`] with a prepared plan: no build or sizing on the hot path. The
                /// grids are the plan's: `DeviceGrid`s for a `LatticePlan`, `SplitGrid`s for a
                /// `SplitLatticePlan`.
                #[allow(clippy::too_many_arguments)]
                pub fn step_plan<#target: #rt::lattice::LatticeLaunch>(#plan: &#target, #seed: u64, #step: u32, #(#gen_params),*) -> #rt::Result<#rt::lattice::StepEvents> {
                    #rt::lattice::LatticeLaunch::run_step(#plan, &*#state, &[#(#gen_args),*], #seed, #step)
                }
            },
        )
    };
    let doc = format!(
        "OpenCL checkerboard kernel generated by clforge from the lattice rule [`{name}`].\n\n\
         Read the generated code with [`{ty_name}::source`]; run a step with [`{ty_name}::step`]; the host \
         reference (the same two colours, site by site, with the same random numbers) is \
         [`{ty_name}::apply_host`]."
    );
    Ok(quote! {
        #item

        #[doc = #doc]
        #[derive(Clone, Copy, Debug, Default)]
        #vis struct #ty_name;

        #[allow(dead_code)]
        impl #ty_name {
            /// Name of the rule (the Rust function).
            pub const NAME: &'static str = #name;

            #source_fn

            /// What the runtime needs to know to run the rule.
            pub fn spec() -> #rt::lattice::LatticeSpec {
                #rt::lattice::LatticeSpec {
                    name: #name,
                    rank: #rank,
                    halo: [#hx, #hy, #hz],
                    boundary: #boundary,
                    kernel: #kname,
                    colours: #colours,
                    packed: #packed,
                    origin: #origin,
                    source: Self::source(),
                }
            }

            #plan_fns

            /// Step `step` of the run `seed` on the device, in place: one launch per colour, in order.
            /// Returns the two launches' events (their device time: `elapsed_ns()`).
            #[allow(clippy::too_many_arguments)]
            pub fn step(#seed: u64, #step: u32, #(#dev_params),*) -> #rt::Result<#rt::lattice::StepEvents> {
                let #plan = Self::plan(#state.device(), #state.shape())?;
                Self::step_plan(&#plan, #seed, #step, #(#arg_names),*)
            }

            #step_plan_fn

            /// The host reference: step `step` of the run `seed`, colour by colour, calling
            /// the Rust function at every updated site with that site's random stream.
            #[allow(clippy::too_many_arguments)]
            pub fn apply_host(#seed: u64, #step: u32, #(#host_params),*) -> #rt::Result<()> {
                let #shape = #state.shape();
                if #shape.rank() != #rank {
                    return Err(#rt::Error::InvalidConfig(format!(
                        "lattice rule `{}` is {}-D but the grid has shape {}; pass a {}-D shape",
                        #name, #rank, #shape, #rank
                    )));
                }
                #(#shape_checks)*
                for #colour in 0..#colours {
                    for (#p_, #site) in #rt::lattice::host_sites(&Self::spec(), #shape, #colour) {
                        let #value: #state_ty = #fn_name(#(#host_args),*);
                        #state.set(#p_, #value);
                    }
                }
                Ok(())
            }
        }

        #checks
    })
}
