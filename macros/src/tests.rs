//! Stage tests from `parse_quote!` input, without the compiler.

use crate::{lower, parse, render};

fn render(item: syn::ItemFn, attr: proc_macro2::TokenStream) -> String {
    let args: parse::attr::StencilArgs = syn::parse2(attr).expect("args");
    let model = parse::stencil::from_syn(&item, args.boundary, args.state.clone(), &args.packed).expect("parse");
    let program = lower::stencil::lower(&model).expect("lower");
    render::stencil::render(&program).expect("render")
}

fn error(item: syn::ItemFn) -> String {
    match parse::stencil::from_syn(&item, crate::model::Boundary::Fixed, None, &[])
        .and_then(|m| lower::stencil::lower(&m))
    {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn jacobi_lowers_to_select_chain() {
    let src = render(
        syn::parse_quote! {
            fn jacobi(psi: &Grid<f32>, w: &Grid<f32>, cell: &Grid<u8>, k: &Coeffs) -> f32 {
                match cell.at(0, 0) {
                    FLUID => k.a * (psi.at(1, 0) + psi.at(-1, 0)) + k.b * (psi.at(0, 1) + psi.at(0, -1)) + k.c * w.at(0, 0),
                    OUTFLOW => psi.at(-1, 0),
                    _ => psi.at(0, 0),
                }
            }
        },
        quote::quote!(),
    );
    assert!(src.contains("const uchar cell_1 = cell[c];"), "{src}");
    // A long select chain prints one branch per line.
    assert!(src.contains("out[c] = cell_1 == FLUID ? k->a * (psi[c + 1] + psi[c - 1]) + k->b * (psi[c + nx] + psi[c - nx]) + k->c * w[c]\n            : cell_1 == OUTFLOW ? psi[c - 1]\n            : psi[c];"), "{src}");
    assert!(src.contains("t_psi[t + 1]"), "{src}");
    assert!(src.contains("vload8(0, psi + c - nx)"), "{src}");
    assert!(!src.contains("t_w["), "w is read at offset 0 only: not staged\n{src}");
}

#[test]
fn literals_follow_rust_inference() {
    let src = render(
        syn::parse_quote! {
            fn f(u: &Grid1<f64>) -> f64 { let h = 0.5; h * (u.at(1) - 2.0 * u.at(0) + u.at(-1)) }
        },
        quote::quote!(boundary = periodic),
    );
    assert!(src.contains("const double h = 0.5;"), "{src}");
    assert!(src.contains("2.0 * u[c]"), "{src}");
    assert!(src.contains("const int x_p1 = WRAP(x + 1, nx);"), "{src}");
    assert!(src.contains("u[AT(x_p1, y, z)]"), "{src}");
}

#[test]
fn subtraction_keeps_needed_parentheses() {
    let src = render(
        syn::parse_quote! { fn f(u: &Grid1<f32>) -> f32 { u.at(0) - (u.at(1) - u.at(-1)) } },
        quote::quote!(),
    );
    assert!(src.contains("out[c] = u[c] - (u[c + 1] - u[c - 1]);"), "{src}");
}

#[test]
fn errors_name_the_construct() {
    assert!(
        error(syn::parse_quote! { fn f(u: &Grid<f32>) -> f32 { u.at(i, 0) } }).contains("integer literals, found `i`")
    );
    assert!(
        error(syn::parse_quote! { fn f(u: &Grid<f32>) -> f32 { foo(u.at(0, 0)) } }).contains("unknown function `foo`")
    );
    assert!(
        error(syn::parse_quote! { fn f(u: &Grid<f32>, v: &Grid3<f32>) -> f32 { u.at(0, 0) } })
            .contains("one dimension")
    );
}

/// The whole element pipeline with a user template: kernels declared in Rust get signatures
/// in the rendered source and typed launchers, the template is included so that cargo tracks
/// it, and the `extern "OpenCL"` block does not reach rustc.
#[test]
fn user_template_is_rendered_launched_and_tracked() {
    let module: syn::ItemMod = syn::parse_quote! {
        mod quad4 {
            pub const NODES: [[f64; 2]; 4] = [[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]];
            pub fn shape(r: f64, s: f64) -> [f64; 4] {
                [0.25 * (1.0 - r) * (1.0 - s), 0.25 * (1.0 + r) * (1.0 - s),
                 0.25 * (1.0 + r) * (1.0 + s), 0.25 * (1.0 - r) * (1.0 + s)]
            }
            pub fn material(k: &f64) -> [[f64; 2]; 2] { [[*k, 0.0], [0.0, *k]] }
            pub fn density(_k: &f64) -> f64 { 1.0 }
            extern "OpenCL" {
                fn strain_energy(k: &[f32], elem_nodes: &[i32], u: &[f32], energy: &mut [f32], volume: f32, count: i32);
            }
        }
    };
    let attr = quote::quote!(
        dim = 2,
        nodes = 4,
        operator = diffusion,
        quadrature = 2,
        template = "../examples/templates/strain_energy.cl.tera"
    );
    let out = crate::driver::run::<crate::kind::Element>(attr, quote::quote!(#module)).to_string();
    assert!(!out.contains("compile_error"), "{out}");
    assert!(out.contains("include_bytes"), "{out}");
    assert!(out.contains("strain_energy.cl.tera"), "{out}");
    assert!(out.contains("fn launch_strain_energy"), "{out}");
    assert!(out.contains("__global float* energy"), "{out}");
    assert!(!out.contains("extern \"OpenCL\""), "{out}");
}

/// Each stage of the stencil pipeline on its own, from `parse_quote!` input: what parse
/// records, what lower decides, what render prints, what expand generates.
#[test]
fn stencil_stages_one_by_one() {
    let item: syn::ItemFn = syn::parse_quote! {
        /// Mean of the neighbours along x.
        fn smooth(u: &Grid1<f32>, k: f32) -> f32 { k * (u.at(1) + u.at(-1)) }
    };
    // parse: the signature and the rank
    let model = parse::stencil::from_syn(&item, crate::model::Boundary::Periodic, None, &[]).expect("parse");
    assert_eq!(
        (model.name.to_string(), model.rank, model.args.len()),
        ("smooth".into(), 1, 2)
    );
    // lower: every kernel with its ABI in order (output, user arguments, extents): the five
    // variants, then the narrow vector build
    let program = lower::stencil::lower(&model).expect("lower");
    let names: Vec<&str> = program.kernels.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "smooth_plain",
            "smooth_tiled",
            "smooth_vec8",
            "smooth_steps",
            "smooth_march",
            "smooth_vec4"
        ]
    );
    let lanes: Vec<usize> = program.kernels.iter().map(|k| k.lanes).collect();
    assert_eq!(lanes, [1, 1, 8, 1, 1, 4]);
    let plain: Vec<&str> = program.kernels[0].params.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(&plain[..3], ["out", "u", "k"], "{plain:?}");
    // render: the signature printed from the IR
    let text = render::stencil::render(&program).expect("render");
    assert!(text.contains("__kernel"), "{text}");
    assert!(text.contains("smooth_plain("), "{text}");
    // expand: the kernel type and its source parts
    let out = crate::expand::stencil::expand(&item, &program, &render::sources(text, None))
        .expect("expand")
        .to_string();
    assert!(out.contains("struct Smooth"), "{out}");
    assert!(out.contains("smooth_plain"), "{out}");
}

/// The march variant (2.5-D blocking) exists in 3-D only: there it has the `MARCH_Z` tunable
/// and reads staged grids through one plane pointer per z offset read, a centre-only grid from
/// global memory; below 3-D it is marked unavailable and prints nothing.
#[test]
fn march_variant_is_generated_in_3d_only() {
    let lowered = |item: syn::ItemFn| {
        let model = parse::stencil::from_syn(&item, crate::model::Boundary::Clamp, None, &[]).expect("parse");
        lower::stencil::lower(&model).expect("lower")
    };
    let p3 = lowered(syn::parse_quote! {
        fn diag(u: &Grid3<f32>, k: &Grid3<f32>) -> f32 { k.at(0, 0, 0) * (u.at(1, 0, 1) - u.at(0, -1, -2)) }
    });
    let march = &p3.kernels[4];
    assert_eq!(
        (march.name.as_str(), march.unavailable.as_deref()),
        ("diag_march", None)
    );
    assert!(p3
        .tunables
        .iter()
        .any(|t| t.name == "MARCH_Z" && t.default == clforge_abi::DEFAULT_MARCH_Z));
    let src = render::stencil::render(&p3).expect("render");
    for line in [
        "__local const float* t_u_m2 = t_u + MARCH_SLOT(z - 2);",
        "__local const float* t_u_p1 = t_u + MARCH_SLOT(z + 1);",
        "k[c] * (t_u_p1[t + 1] - t_u_m2[t - TW])",
    ] {
        assert!(src.contains(line), "{line} not in\n{src}");
    }
    // the two z offsets read, no pointer for the others
    assert!(!src.contains("t_u_0 ") && !src.contains("t_k_"), "{src}");

    let p2 = lowered(syn::parse_quote! {
        fn flat(u: &Grid<f32>) -> f32 { u.at(1, 0) - u.at(0, -1) }
    });
    let why = p2.kernels[4].unavailable.as_deref().expect("no march in 2-D");
    assert!(why.contains("3-D") && why.contains("2-D"), "{why}");
    assert!(p2.tunables.iter().all(|t| t.name != "MARCH_Z"));
    let src = render::stencil::render(&p2).expect("render");
    assert!(!src.contains("MARCH") && !src.contains("flat_march"), "{src}");
}

/// Every identifier the stencil template prints is reserved (so no user name can meet it),
/// and every macro the element template defines is too: `clforge_abi::names` is complete.
#[test]
fn template_identifiers_are_reserved() {
    fn identifiers(path: &str) -> Vec<String> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../templates");
        let text = std::fs::read_to_string(dir.join(path)).expect("template");
        let mut out = String::new();
        let mut rest = text.as_str();
        // Drop Tera tags, C comments and strings: what is left is C code.
        let pairs = [
            ("{#", "#}"),
            ("{%", "%}"),
            ("{{", "}}"),
            ("/*", "*/"),
            ("//", "\n"),
            ("\"", "\""),
        ];
        while !rest.is_empty() {
            let next = pairs
                .iter()
                .filter_map(|(open, close)| rest.find(open).map(|i| (i, *open, *close)))
                .min_by_key(|(i, ..)| *i);
            match next {
                Some((i, open, close)) => {
                    out.push_str(&rest[..i]);
                    out.push(' ');
                    let after = &rest[i + open.len()..];
                    rest = after.find(close).map_or("", |j| &after[j + close.len()..]);
                }
                None => {
                    out.push_str(rest);
                    rest = "";
                }
            }
        }
        let mut ids: Vec<String> = out
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| w.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_'))
            .map(str::to_string)
            .collect();
        ids.sort();
        ids.dedup();
        ids
    }
    let stencil: Vec<String> = [
        "stencil/stencil.cl.tera",
        "sweep/sweep.cl.tera",
        "lattice/lattice.cl.tera",
        "lattice/packed.cl.tera",
        "common/components.cl.tera",
    ]
    .iter()
    .flat_map(|p| identifiers(p))
    .filter(|id| !clforge_abi::names::is_reserved(id))
    .collect();
    assert!(
        stencil.is_empty(),
        "stencil template names a user may also use: {stencil:?}"
    );
    let element: Vec<String> = identifiers("element/element.cl.tera")
        .into_iter()
        .filter(|id| {
            id.chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        })
        .filter(|id| !clforge_abi::names::is_reserved(id))
        .collect();
    assert!(element.is_empty(), "element macros a user may also use: {element:?}");
}

/// `packed(cell = 2)`: the kernels take 32-bit words and read each point's 2 bits with the
/// index the unpacked read would use; the tiled variant stages the values unpacked; a packed
/// grid of the output's type is never the iterated state.
#[test]
fn packed_grids_are_read_as_bits_of_words() {
    let src = render(
        syn::parse_quote! {
            fn masked(u: &Grid<u8>, cell: &Grid<u8>) -> u8 {
                if cell.at(0, 0) == 1 { u.at(1, 0) } else { cell.at(-1, 0) }
            }
        },
        quote::quote!(boundary = clamp, packed(cell = 2)),
    );
    assert!(src.contains("__global const uint* restrict cell"), "{src}");
    assert!(
        src.contains("(uchar)((cell[c >> 4] >> ((c & 15) * 2)) & 3u) == 1"),
        "{src}"
    );
    assert!(
        src.contains("(cell[AT(x_m1, y, z) >> 4] >> ((AT(x_m1, y, z) & 15) * 2)) & 3u"),
        "{src}"
    );
    assert!(src.contains("t_cell[i] = (uchar)((cell[AT(gx, gy, gz) >> 4]"), "{src}");
    assert!(src.contains("convert_uchar8(clforge_unpack8_b2(cell, c))"), "{src}");
    assert!(
        src.contains("uint8 clforge_unpack8_b2(__global const uint* clforge_w"),
        "{src}"
    );
    assert!(!src.contains("clforge_unpack8_b1("), "only the bits used get a helper");
    // `u` (u8, unpacked) is the state; `cell` is never a candidate.
    assert!(src.contains("s_a[i] = u[AT("), "{src}");
    let one = render(
        syn::parse_quote! {
            fn only(cell: &Grid<u8>) -> u8 { cell.at(1, 0) }
        },
        quote::quote!(packed(cell = 1)),
    );
    assert!(
        !one.contains("_steps("),
        "a packed grid is no state: no steps variant\n{one}"
    );
    assert!(
        one.contains("(uchar)((cell[(c + 1) >> 5] >> ((c + 1) & 31)) & 1u)"),
        "{one}"
    );
}

#[test]
fn packed_attribute_errors() {
    let args = |t: proc_macro2::TokenStream| match syn::parse2::<parse::attr::StencilArgs>(t) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    };
    assert!(args(quote::quote!(packed(cell = 3))).contains("1, 2 or 4 bits"));
    assert!(args(quote::quote!(packed(cell = 8))).contains("1, 2 or 4 bits"));
    assert!(args(quote::quote!(packed(cell = 2u8))).contains("1, 2 or 4 bits"));
    assert!(args(quote::quote!(packed(cell = 2, cell = 1))).contains("packed twice"));
    assert!(args(quote::quote!(packed(cell = 2), packed(cell = 1))).contains("packed twice"));
    assert!(args(quote::quote!(packed())).contains("name the grids"));
    assert!(args(quote::quote!(packed(cell = x))).contains("integer literal"));
    let model = |attr: proc_macro2::TokenStream| {
        let a: parse::attr::StencilArgs = syn::parse2(attr).expect("args");
        let item: syn::ItemFn = syn::parse_quote! {
            fn s(u: &Grid<f32>, w: &Grid<i32>, cell: &Grid<u8>, k: f32) -> f32 { u.at(0, 0) }
        };
        match parse::stencil::from_syn(&item, a.boundary, a.state.clone(), &a.packed) {
            Ok(_) => panic!("expected an error"),
            Err(e) => e.to_string(),
        }
    };
    assert!(model(quote::quote!(packed(x = 2))).contains("no argument `x`"));
    assert!(model(quote::quote!(packed(k = 2))).contains("`k` is not a grid"));
    assert!(model(quote::quote!(packed(u = 2))).contains("a grid of `f32`"));
    assert!(model(quote::quote!(packed(w = 2))).contains("a grid of `i32`"));
}

/// Two grids of the output's type: the steps variant's refusal suggests the one read at
/// neighbours (the iteration's state), not the first argument.
#[test]
fn ambiguous_state_suggests_the_grid_read_at_neighbours() {
    let args: parse::attr::StencilArgs = syn::parse2(quote::quote!()).expect("args");
    let item: syn::ItemFn = syn::parse_quote! {
        fn jacobi(rhs: &Grid<f32>, psi: &Grid<f32>) -> f32 {
            0.25 * (psi.at(1, 0) + psi.at(-1, 0) + psi.at(0, 1) + psi.at(0, -1)) - rhs.at(0, 0)
        }
    };
    let model = parse::stencil::from_syn(&item, args.boundary, args.state.clone(), &args.packed).expect("parse");
    let program = lower::stencil::lower(&model).expect("lower");
    let steps = program.variants().find(|k| k.variant == "steps").expect("steps");
    let why = steps.unavailable.as_deref().expect("ambiguous state");
    assert!(why.contains("state = psi") && !why.contains("state = rhs"), "{why}");
}
