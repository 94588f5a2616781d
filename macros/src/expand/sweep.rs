//! The sweep's Rust side: the kernel type with its source, spec, plans, the device sweep and
//! the host reference (the sequential sweep, in place).

use super::{checks, rt, scalar_ty, source, type_ident};
use crate::ir::{Binding, Body, Program};
use crate::model::{Arg, Boundary};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

pub fn expand(item: &syn::ItemFn, p: &Program, text: &str) -> syn::Result<TokenStream> {
    let Body::Sweep(sw) = &p.body else {
        return Err(crate::diag::internal(
            item.sig.ident.span(),
            "sweep expansion of another kind",
        ));
    };
    let k = &sw.body;
    let rt = rt();
    let vis = &item.vis;
    let fn_name = &item.sig.ident;
    let name = &p.origin.name;
    let ty_name = type_ident(fn_name)?;
    let source_fn = source::source_fn(name, text, &p.completion);
    let checks = checks::assumed_types(&k.args, &p.completion);
    let boundary = match k.boundary {
        Boundary::Fixed => quote!(#rt::Boundary::Fixed),
        Boundary::Periodic => quote!(#rt::Boundary::Periodic),
        Boundary::Clamp => quote!(#rt::Boundary::Clamp),
    };
    let rank = k.rank;
    let [hx, hy, hz] = k.access.halo;
    let [fx, fy, fz] = sw.forward;
    let origin = format!("{}:{}", p.origin.file, p.origin.line);
    let value_bytes = k.out.bytes();
    let local_bytes = p.kernels.get(2).map_or(0, |kn| kn.local_bytes_per_point);
    // `SweepPlan::run` binds the user's arguments in order, then the extents, then the
    // schedule's own parameters: every kernel's signature must start that way.
    let expected: Vec<Binding> = (0..k.args.len())
        .map(Binding::UserArg)
        .chain((0..3).map(Binding::Extent))
        .collect();
    if p.kernels.len() != 8
        || p.kernels
            .iter()
            .any(|kn| kn.params.len() < expected.len() || kn.params.iter().zip(&expected).any(|(q, e)| q.binding != *e))
    {
        return Err(crate::diag::internal(
            item.sig.ident.span(),
            "a sweep kernel's signature differs from the plan's argument order",
        ));
    }
    let schedules: Vec<TokenStream> = p
        .kernels
        .iter()
        .map(|kn| {
            let kname = &kn.name;
            let unavailable = match &kn.unavailable {
                Some(why) => quote!(::core::option::Option::Some(#why)),
                None => quote!(::core::option::Option::None),
            };
            quote!(#rt::ScheduleSpec { kernel: #kname, unavailable: #unavailable })
        })
        .collect();

    let hygienic = |n: &str| syn::Ident::new(n, proc_macro2::Span::mixed_site());
    let (p_, shape, config, plan, device, value, scratch, events) = (
        hygienic("p"),
        hygienic("shape"),
        hygienic("config"),
        hygienic("plan"),
        hygienic("device"),
        hygienic("value"),
        hygienic("scratch"),
        hygienic("events"),
    );
    let info = hygienic("info");
    let grid = format_ident!("Grid{}", rank);
    let cursor = format_ident!("Sweep{}", rank);
    let state = k.args[sw.state].name();
    let state_ty = scalar_ty(k.out);
    let mut dev_params = Vec::new();
    let mut host_params = Vec::new();
    let mut launch_args = Vec::new();
    let mut host_args = Vec::new();
    let mut shape_checks = Vec::new();
    for (i, a) in k.args.iter().enumerate() {
        let n = a.name();
        let label = n.to_string();
        match a {
            Arg::Field(f) if i == sw.state => {
                let e = scalar_ty(f.elem);
                dev_params.push(quote!(#n: &mut #rt::DeviceGrid<#e>));
                host_params.push(quote!(#n: &mut #rt::HostGrid<#e>));
                launch_args.push(quote!(#rt::StencilArg::grid(#label, &*#n)));
                host_args.push(quote!(&#rt::#cursor::cursor(#n, #p_, #boundary)));
            }
            Arg::Field(f) => {
                let e = scalar_ty(f.elem);
                dev_params.push(quote!(#n: &#rt::DeviceGrid<#e>));
                host_params.push(quote!(#n: &#rt::HostGrid<#e>));
                launch_args.push(quote!(#rt::StencilArg::grid(#label, #n)));
                shape_checks.push(quote!(#rt::check_shape(#label, #shape, #n.shape())?;));
                host_args.push(quote!(&#rt::#grid::new(#n, #p_, #boundary)));
            }
            Arg::Params { ty, .. } => {
                dev_params.push(quote!(#n: &#ty));
                host_params.push(quote!(#n: &#ty));
                launch_args.push(quote!(#rt::StencilArg::params(#n)));
                host_args.push(quote!(#n));
            }
            Arg::Scalar { ty, .. } => {
                let t = scalar_ty(*ty);
                dev_params.push(quote!(#n: #t));
                host_params.push(quote!(#n: #t));
                launch_args.push(quote!(#rt::StencilArg::scalar(#n)));
                host_args.push(quote!(#n));
            }
        }
    }
    let arg_names: Vec<&syn::Ident> = k.args.iter().map(|a| a.name()).collect();
    let doc = format!(
        "OpenCL schedules generated by clforge from the sweep [`{name}`].\n\n\
         Read the generated code with [`{ty_name}::source`]; run it with [`{ty_name}::sweep`]; the host \
         reference (the sequential sweep, in place) is [`{ty_name}::apply_host`]."
    );
    Ok(quote! {
        #item

        #[doc = #doc]
        #[derive(Clone, Copy, Debug, Default)]
        #vis struct #ty_name;

        #[allow(dead_code)]
        impl #ty_name {
            /// Name of the sweep (the Rust function).
            pub const NAME: &'static str = #name;

            #source_fn

            /// What the runtime needs to know to run the schedules.
            pub fn spec() -> #rt::SweepSpec {
                #rt::SweepSpec {
                    name: #name,
                    rank: #rank,
                    halo: [#hx, #hy, #hz],
                    boundary: #boundary,
                    forward: [#fx, #fy, #fz],
                    schedules: [#(#schedules),*],
                    value_bytes: #value_bytes,
                    local_bytes_per_point: #local_bytes,
                    origin: #origin,
                    source: Self::source(),
                }
            }

            /// Builds (once, cached) and sizes a schedule for grids of `shape`.
            pub fn plan(#device: &#rt::Device, #config: &#rt::SweepConfig, #shape: #rt::Shape) -> #rt::Result<#rt::SweepPlan> {
                #rt::SweepPlan::new(#device, Self::spec(), #config, #shape)
            }

            /// One sweep on the device of the swept field, in place; returns its device time.
            #[allow(clippy::too_many_arguments)]
            pub fn sweep(#config: &#rt::SweepConfig, #(#dev_params),*) -> #rt::Result<#rt::SweepEvents> {
                let #plan = Self::plan(#state.device(), #config, #state.shape())?;
                Self::sweep_plan(&#plan, #(#arg_names),*)
            }

            /// Like [`Self::sweep`] with a prepared plan: no build or sizing on the hot path.
            #[allow(clippy::too_many_arguments)]
            pub fn sweep_plan(#plan: &#rt::SweepPlan, #(#dev_params),*) -> #rt::Result<#rt::SweepEvents> {
                #plan.run(&*#state, &[#(#launch_args),*])
            }

            /// Measures every schedule at several block edges on a scratch copy of the swept field
            /// (the field itself is not changed), fits the performance model (seed 001, eqs. 17-21,
            /// corrected) and returns what it chose beside the fastest measured.
            #[allow(clippy::too_many_arguments)]
            pub fn tune(#(#dev_params),*) -> #rt::Result<#rt::sweep::model::Tuning> {
                let #device = #state.device().clone();
                let #shape = #state.shape();
                let mut #scratch = #rt::DeviceGrid::new(&#device, #shape)?;
                #scratch.copy_from(&*#state)?;
                let #state = &mut #scratch;
                let #info = #device.info().clone();
                #rt::sweep::model::tune(&#info, &Self::spec(), #shape, |#config| {
                    let #plan = Self::plan(&#device, #config, #shape)?;
                    let #events = Self::sweep_plan(&#plan, #(#arg_names),*)?;
                    #plan.check()?;
                    #events.elapsed_ns()
                })
            }

            /// The host reference: the sequential sweep, in place, calling the Rust function at
            /// every updated point in the sweep's order.
            #[allow(clippy::too_many_arguments)]
            pub fn apply_host(#(#host_params),*) -> #rt::Result<()> {
                let #shape = #state.shape();
                #(#shape_checks)*
                for #p_ in #rt::sweep::host_order(#shape, [#hx, #hy, #hz], #boundary, [#fx, #fy, #fz]) {
                    let #value: #state_ty = #fn_name(#(#host_args),*);
                    #state.set(#p_, #value);
                }
                Ok(())
            }
        }

        #checks
    })
}
