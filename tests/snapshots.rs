//! The generated OpenCL of every test stencil, pinned: a diff here is a real change in the
//! code users read. Each snapshot holds the DSL input and the OpenCL output.

mod elements;
mod kernels;
mod modal;
mod simplices;

#[test]
fn generated_opencl_is_pinned() {
    for (name, dsl, opencl) in kernels::all() {
        let text = format!("=== DSL: tests/kernels/{name}.rs ===\n{dsl}\n=== OpenCL ===\n{opencl}");
        insta::with_settings!({ omit_expression => true, prepend_module_to_snapshot => false }, {
            insta::assert_snapshot!(name, text);
        });
    }
}

#[test]
fn generated_element_opencl_is_pinned() {
    for (name, dsl, opencl) in elements::all() {
        let text = format!("=== DSL: tests/elements/{name}.rs ===\n{dsl}\n=== OpenCL ===\n{opencl}");
        insta::with_settings!({ omit_expression => true, prepend_module_to_snapshot => false }, {
            insta::assert_snapshot!(format!("element_{name}"), text);
        });
    }
}

/// A user template family: only the part the user's template adds (the element family above it
/// is pinned by the other element snapshots).
#[test]
fn user_template_opencl_is_pinned() {
    let source = elements::hex8_energy::Hex8Energy::SOURCE;
    let marker = "/* ---- kernels of the user template";
    let user = &source[source.find(marker).expect("the user part is marked")..];
    let text = format!(
        "=== template: examples/templates/strain_energy.cl.tera ===\n{}\n=== OpenCL (user part) ===\n{user}",
        include_str!("../examples/templates/strain_energy.cl.tera")
    );
    insta::with_settings!({ omit_expression => true, prepend_module_to_snapshot => false }, {
        insta::assert_snapshot!("user_template_hex8_energy", text);
    });
}

/// The element-matrix kernels of modal trunk hexahedra at p = 1 and p = 3 (seed 004), and of
/// the nodal hex8 (sizes and the B products differ; the layout is the same).
#[test]
fn generated_forming_opencl_is_pinned() {
    use clforge::runtime::element::Element;
    let cases = [
        ("forming_hex_p1", modal::HexP1::forming_source()),
        ("forming_hex_p3", modal::HexP3::forming_source()),
        ("forming_hex8", elements::hex8::Hex8::forming_source()),
    ];
    for (name, text) in cases {
        insta::with_settings!({ omit_expression => true, prepend_module_to_snapshot => false }, {
            insta::assert_snapshot!(name, text);
        });
    }
}

/// A simplex element's kernels (tests/simplices/mod.rs, `tet4`, `cell = simplex`): the explicit
/// step's OpenCL and the element-matrix kernels with the collapsed rule's 18 points.
#[test]
fn generated_simplex_opencl_is_pinned() {
    use clforge::runtime::element::Element;
    let cases = [
        ("element_tet4", simplices::Tet4::SOURCE),
        ("forming_tet4", simplices::Tet4::forming_source()),
    ];
    for (name, text) in cases {
        insta::with_settings!({ omit_expression => true, prepend_module_to_snapshot => false }, {
            insta::assert_snapshot!(name, text);
        });
    }
}
