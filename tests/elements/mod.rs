//! The elements the tests pin and check: one file each, so that a snapshot can show the DSL
//! input exactly as written beside the OpenCL it generates.
#![allow(dead_code)]

pub mod hex8;
pub mod hex8_energy;
pub mod quad4;
pub mod quad4_heat;
pub mod quad9;

/// (file, DSL text, generated OpenCL) of every test element.
pub fn all() -> Vec<(&'static str, &'static str, &'static str)> {
    vec![
        ("quad4", include_str!("quad4.rs"), quad4::Quad4::SOURCE),
        ("quad9", include_str!("quad9.rs"), quad9::Quad9::SOURCE),
        ("hex8", include_str!("hex8.rs"), hex8::Hex8::SOURCE),
        (
            "quad4_heat",
            include_str!("quad4_heat.rs"),
            quad4_heat::Quad4Heat::SOURCE,
        ),
    ]
}
