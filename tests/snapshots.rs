//! The generated OpenCL of every test stencil, pinned: a diff here is a real change in the
//! code users read. Each snapshot holds the DSL input and the OpenCL output.

mod elements;
mod kernels;

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
