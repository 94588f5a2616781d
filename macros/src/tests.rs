//! Stage tests from `parse_quote!` input, without the compiler.

use crate::{lower, parse, render};

fn render(item: syn::ItemFn, attr: proc_macro2::TokenStream) -> String {
    let args: parse::attr::StencilArgs = syn::parse2(attr).expect("args");
    let model = parse::stencil::from_syn(&item, args.boundary).expect("parse");
    let program = lower::stencil::lower(&model).expect("lower");
    render::stencil::render(&program).expect("render")
}

fn error(item: syn::ItemFn) -> String {
    match parse::stencil::from_syn(&item, crate::model::Boundary::Fixed).and_then(|m| lower::stencil::lower(&m)) {
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
    assert!(src.contains("out[c] = cell_1 == FLUID ? k->a * (psi[c + 1] + psi[c - 1]) + k->b * (psi[c + nx] + psi[c - nx]) + k->c * w[c]\n        : cell_1 == OUTFLOW ? psi[c - 1]\n        : psi[c];"), "{src}");
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
