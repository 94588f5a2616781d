//! The stencil's Rust side: the kernel type with its source, spec, typed launchers and the
//! host reference driver.

use super::{arg_tokens, boundary_tokens, checks, rt, scalar_ty, source, type_ident, ArgTokens};
use crate::ir::{Binding, Body, Program, Sources};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

pub fn expand(item: &syn::ItemFn, p: &Program, sources: &Sources) -> syn::Result<TokenStream> {
    let Body::Stencil(k) = &p.body else {
        return Err(crate::diag::internal(
            item.sig.ident.span(),
            "stencil expansion of another kind",
        ));
    };
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
    let (tx, ty, wy) = k.tile;
    let lanes = k.lanes;
    let narrow = match p.narrow() {
        Some(kn) => {
            let (kname, lanes) = (&kn.name, kn.lanes);
            quote!(::core::option::Option::Some((#kname, #lanes)))
        }
        None => quote!(::core::option::Option::None),
    };
    let uses_point = k.uses_point;
    // The runtime's `Variant` order: plain, tiled, vector, steps, march.
    let variants: Vec<TokenStream> = p
        .variants()
        .map(|kn| {
            let kname = &kn.name;
            let local = kn.local_bytes_per_point;
            let unavailable = match &kn.unavailable {
                Some(why) => quote!(::core::option::Option::Some(#why)),
                None => quote!(::core::option::Option::None),
            };
            quote!(#rt::VariantSpec { kernel: #kname, unavailable: #unavailable, local_bytes_per_point: #local })
        })
        .collect();
    // `StencilPlan` binds the output, the user's arguments in order, then the extents: the IR's
    // signature of every variant must say the same.
    let expected: Vec<Binding> = std::iter::once(Binding::Output)
        .chain((1..=k.more.len()).map(Binding::MoreOutput))
        .chain(
            (0..k.args.len())
                .filter(|&i| !matches!(k.args[i], crate::model::Arg::Point { .. }))
                .map(Binding::UserArg),
        )
        .chain((0..3).map(Binding::Extent))
        .chain(
            k.uses_point
                .then(|| (0..3).map(Binding::Origin).chain((0..3).map(Binding::WholeExtent)))
                .into_iter()
                .flatten(),
        )
        .chain(
            (k.out_reduce.is_some() || k.more.iter().any(|o| o.reduce.is_some()))
                .then(|| (0..6).map(Binding::ReduceBox))
                .into_iter()
                .flatten(),
        )
        .collect();
    if p.variants()
        .chain(p.narrow())
        .any(|kn| kn.params.iter().map(|q| &q.binding).ne(expected.iter()))
    {
        return Err(crate::diag::internal(
            item.sig.ident.span(),
            "a stencil kernel's signature differs from the plan's argument order",
        ));
    }
    let names: Vec<&String> = p.variants().map(|k| &k.name).collect();
    let [plain, tiled, vector, steps, march] = names[..] else {
        return Err(crate::diag::internal(
            item.sig.ident.span(),
            "a stencil has five variants",
        ));
    };

    // The generated functions' own parameters and locals resolve at the macro's definition
    // site: a user argument named `out`, `p`, `shape`, `config` or `plan` cannot meet them.
    let hygienic = |n: &str| syn::Ident::new(n, proc_macro2::Span::mixed_site());
    let (out, p_, shape, config, plan, device) = (
        hygienic("out"),
        hygienic("p"),
        hygienic("shape"),
        hygienic("config"),
        hygienic("plan"),
        hygienic("device"),
    );
    let cursor = format_ident!("Grid{}", k.rank);
    let ArgTokens {
        dev_params,
        host_params,
        launch_args,
        host_args,
        shape_checks,
    } = arg_tokens(
        &k.args,
        &shape,
        &|n| quote!(&#rt::#cursor::new(#n, #p_, #boundary)),
        None,
    );
    // The plan's launchers are generic over where the stencil runs (`runtime::Launch`: one
    // device's `StencilPlan`, several devices' `SplitPlan`): grids are the plan's grids.
    let target = syn::Ident::new("__ClforgePlan", proc_macro2::Span::mixed_site());
    let (gen_params, gen_args): (Vec<TokenStream>, Vec<TokenStream>) = k
        .args
        .iter()
        .map(|a| {
            let n = a.name();
            let label = n.to_string();
            let l = quote!(<#target as #rt::Launch>);
            match a {
                crate::model::Arg::Field(f) => {
                    let e = scalar_ty(f.elem);
                    match f.packed {
                        Some(bits) => {
                            let bits = proc_macro2::Literal::u32_unsuffixed(bits);
                            (
                                quote!(#n: &#rt::PackedGrid<#e, #bits>),
                                quote!(#l::packed_arg(#label, #n)),
                            )
                        }
                        None => (quote!(#n: &#l::Grid<#e>), quote!(#l::grid_arg(#label, #n))),
                    }
                }
                crate::model::Arg::Params { ty, .. } => (quote!(#n: &#ty), quote!(#l::params_arg(#n))),
                crate::model::Arg::Scalar { ty, .. } => {
                    let ty = scalar_ty(*ty);
                    (quote!(#n: #ty), quote!(#l::scalar_arg(#n)))
                }
                crate::model::Arg::Point { .. } => (quote!(), quote!()),
            }
        })
        .filter(|(p, _)| !p.is_empty())
        .unzip();

    // A system of fields: the output parameters are a tuple of grids (and reductions), one
    // per output; a single reduction output is not a tuple.
    let outs: Vec<(crate::model::Scalar, Option<crate::model::ReduceOp>)> =
        std::iter::once((k.out, k.out_reduce.as_ref().map(|r| r.op)))
            .chain(k.more.iter().map(|o| (o.ty, o.reduce.as_ref().map(|r| r.op))))
            .collect();
    let reduces = outs.iter().any(|(_, r)| r.is_some());
    let system = outs.len() > 1 || reduces;
    let l = quote!(<#target as #rt::Launch>);
    let n_outs = outs.len();
    let each: Vec<TokenStream> = (0..n_outs)
        .map(|i| {
            let i = syn::Index::from(i);
            if n_outs == 1 {
                quote!(#out)
            } else {
                quote!(#out.#i)
            }
        })
        .collect();
    let labels: Vec<String> = (0..n_outs).map(|i| format!("{name} output {i}")).collect();
    let tuple = |tys: Vec<TokenStream>| {
        if n_outs == 1 {
            quote!(#(#tys)*)
        } else {
            quote!((#(#tys),*))
        }
    };
    let red_ty = |t: crate::model::Scalar, op: crate::model::ReduceOp| {
        let (t, op) = (scalar_ty(t), format_ident!("{}", op.rust()));
        quote!(#rt::#op<#t>)
    };
    // The outputs' types: a grid (of the device, the plan's target or the host) or a
    // reduction (the device-side `Reduction`, or on the host the `Max<T>` itself).
    let out_types = |grid: &dyn Fn(TokenStream) -> TokenStream, host: bool| {
        tuple(
            outs.iter()
                .map(|&(t, r)| match r {
                    Some(op) if host => {
                        let r = red_ty(t, op);
                        quote!(&mut #r)
                    }
                    Some(op) => {
                        let r = red_ty(t, op);
                        quote!(&mut #rt::Reduction<#r>)
                    }
                    None => grid(scalar_ty(t)),
                })
                .collect(),
        )
    };
    let dev_out = out_types(&|t| quote!(&mut #rt::DeviceGrid<#t>), false);
    let plan_out = out_types(&|t| quote!(&mut #l::Grid<#t>), false);
    let host_out = out_types(&|t| quote!(&mut #rt::HostGrid<#t>), true);
    let dev_args: Vec<TokenStream> = outs
        .iter()
        .zip(&each)
        .zip(&labels)
        .map(|((&(_, r), o), label)| match r {
            Some(_) => quote!(#rt::StencilArg::reduction(#label, &*#o)),
            None => quote!(#rt::StencilArg::grid(#label, &*#o)),
        })
        .collect();
    let plan_args: Vec<TokenStream> = outs
        .iter()
        .zip(&each)
        .zip(&labels)
        .map(|((&(_, r), o), label)| match r {
            Some(_) => quote!(#l::reduction_arg(#label, &*#o)),
            None => quote!(#l::grid_arg(#label, &*#o)),
        })
        .collect();
    // Where the launch's shape and device come from: the first output grid, else the first
    // grid argument (a stencil that only reduces).
    let first_grid = outs
        .iter()
        .position(|(_, r)| r.is_none())
        .map(|i| each[i].clone())
        .or_else(|| {
            k.args.iter().find_map(|a| match a {
                crate::model::Arg::Field(f) => {
                    let n = &f.name;
                    Some(quote!(#n))
                }
                _ => None,
            })
        });
    let vals: Vec<syn::Ident> = (0..n_outs)
        .map(|i| syn::Ident::new(&format!("value_{i}"), proc_macro2::Span::mixed_site()))
        .collect();
    let (launch_body, launch_plan_body, enqueue_plan_body, host_shape, host_store) = if system {
        let grid_checks: Vec<TokenStream> = outs
            .iter()
            .zip(&each)
            .zip(&labels)
            .filter(|((o, _), _)| o.1.is_none())
            .map(|(((_, _), o), label)| quote!(#rt::check_shape(#label, #shape, #o.shape())?;))
            .collect();
        let inits: Vec<TokenStream> = outs
            .iter()
            .zip(&each)
            .filter(|(o, _)| o.1.is_some())
            .map(|(_, o)| quote!(*#o = #rt::Reduce::identity();))
            .collect();
        let stores: Vec<TokenStream> = outs
            .iter()
            .zip(&each)
            .zip(&vals)
            .map(|((&(_, r), o), v)| match r {
                Some(_) => quote!(*#o = #rt::Reduce::combine(*#o, #v);),
                None => quote!(#o.set(#p_, #v);),
            })
            .collect();
        let bind = if n_outs == 1 {
            quote!(let #(#vals)* = #fn_name(#(#host_args),*);)
        } else {
            quote!(let (#(#vals),*) = #fn_name(#(#host_args),*);)
        };
        (
            quote! {
                let #plan = #rt::StencilPlan::new(#first_grid.device(), Self::spec(), #config, #first_grid.shape())?;
                #plan.launch_outputs(&[#(#dev_args),*], &[#(#launch_args),*])
            },
            quote!(#rt::Launch::launch_outputs(#plan, &[#(#plan_args),*], &[#(#gen_args),*])),
            quote!(#rt::Launch::enqueue_outputs(#plan, &[#(#plan_args),*], &[#(#gen_args),*])),
            quote! {
                let #shape = #first_grid.shape();
                #(#grid_checks)*
                #(#inits)*
            },
            quote! {
                #bind
                #(#stores)*
            },
        )
    } else {
        (
            quote! {
                let #plan = #rt::StencilPlan::new(#out.device(), Self::spec(), #config, #out.shape())?;
                #plan.launch(#out, &[#(#launch_args),*])
            },
            quote!(#rt::Launch::launch_args(#plan, #out, &[#(#gen_args),*])),
            quote!(#rt::Launch::enqueue_args(#plan, #out, &[#(#gen_args),*])),
            quote!(let #shape = #out.shape();),
            quote!(#out.set(#p_, #fn_name(#(#host_args),*));),
        )
    };
    let out_doc = match (n_outs, reduces) {
        (1, false) => String::new(),
        (1, true) => "`out` is the reduction the launch writes; read it with `Reduction::value`; the host reference \
                      folds every point into it."
            .to_string(),
        (n, _) => format!(
            "`out` is a tuple of the {n} outputs (grids, and reductions read with `Reduction::value`), in the \
             order of the function's tuple."
        ),
    };
    let folds = p.folds().map(|(kn, _)| &kn.name);
    // The packed grids by their position among the launch's arguments (less `at: Point`).
    let packed: Vec<TokenStream> = k
        .args
        .iter()
        .filter(|a| !matches!(a, crate::model::Arg::Point { .. }))
        .enumerate()
        .filter_map(|(i, a)| match a {
            crate::model::Arg::Field(f) => f.packed.map(|bits| {
                let label = f.name.to_string();
                quote!(#rt::PackedArg { arg: #i, name: #label, bits: #bits })
            }),
            _ => None,
        })
        .collect();

    let doc = format!(
        "OpenCL kernels generated by clforge from [`{name}`]: `{plain}`, `{tiled}` and `{vector}`.\n\n\
         Read the generated code with [`{ty_name}::source`]; launch with [`{ty_name}::launch`]; the host reference is [`{ty_name}::apply_host`]."
    );
    Ok(quote! {
        #item

        #[doc = #doc]
        #[derive(Clone, Copy, Debug, Default)]
        #vis struct #ty_name;

        #[allow(dead_code)]
        impl #ty_name {
            /// Name of the stencil (the Rust function).
            pub const NAME: &'static str = #name;
            /// One point per work-item, global reads.
            pub const PLAIN: &'static str = #plain;
            /// Tile and halo staged in local memory (seed 002).
            pub const TILED: &'static str = #tiled;
            /// Several consecutive points along x per work-item, vector loads.
            pub const VECTOR: &'static str = #vector;
            /// Several iterations per launch in local memory (temporal blocking), when available.
            pub const STEPS: &'static str = #steps;
            /// A column of tiles walked along z with a ring of planes in local memory (2.5-D
            /// blocking), for 3-D stencils.
            pub const MARCH: &'static str = #march;

            #source_fn

            /// What the runtime needs to know to launch the kernels.
            pub fn spec() -> #rt::StencilSpec {
                #rt::StencilSpec {
                    name: #name,
                    rank: #rank,
                    halo: [#hx, #hy, #hz],
                    boundary: #boundary,
                    lanes: #lanes,
                    narrow: #narrow,
                    point: #uses_point,
                    folds: &[#(#folds),*],
                    variants: [#(#variants),*],
                    packed: &[#(#packed),*],
                    default_tile: #rt::Tile { x: #tx, y: #ty, rows: #wy },
                    origin: #origin,
                    source: Self::source(),
                }
            }

            /// Builds (once, cached) and sizes a launch of one variant for grids of `shape` on a
            /// `Device`, or on each slab of `Devices` (a `SplitPlan`).
            pub fn plan<__ClforgeTarget: #rt::Target>(#device: &__ClforgeTarget, #config: &#rt::LaunchConfig, #shape: #rt::Shape) -> #rt::Result<__ClforgeTarget::Plan> {
                #rt::Target::stencil_plan(#device, Self::spec(), #config, #shape)
            }

            /// Computes `out` from the inputs on the device of `out`; returns the profiling event.
            #[doc = #out_doc]
            pub fn launch(#config: &#rt::LaunchConfig, #out: #dev_out, #(#dev_params),*) -> #rt::Result<#rt::Event> {
                #launch_body
            }

            /// Like [`Self::launch`] with a prepared plan: no lookup on the hot path. The grids
            /// are the plan's: `DeviceGrid`s for a `StencilPlan`, `SplitGrid`s for a `SplitPlan`.
            pub fn launch_plan<#target: #rt::Launch>(#plan: &#target, #out: #plan_out, #(#gen_params),*) -> #rt::Result<#rt::Event> {
                #launch_plan_body
            }

            /// Like [`Self::launch_plan`] without a profiling event: the cheapest launch, for long
            /// batches of iterations (some drivers spend microseconds of host time per event).
            pub fn enqueue_plan<#target: #rt::Launch>(#plan: &#target, #out: #plan_out, #(#gen_params),*) -> #rt::Result<()> {
                #enqueue_plan_body
            }

            /// The host reference: calls the Rust function at every updated point.
            #[doc = #out_doc]
            pub fn apply_host(#out: #host_out, #(#host_params),*) -> #rt::Result<()> {
                #host_shape
                #(#shape_checks)*
                for #p_ in #rt::UpdateRegion::new(#shape, [#hx, #hy, #hz], #boundary).points() {
                    #host_store
                }
                Ok(())
            }
        }

        #checks
    })
}
