//! The generated OpenCL of every test stencil, sweep, lattice rule and element, pinned: a diff
//! here is a real change in the code users read. One `#[test]` per snapshot, named as its file
//! in `tests/snapshots/`; a snapshot holds the DSL input and the OpenCL output.
//!
//! This binary, unlike the kinds' (`tests/<kind>/main.rs`), has its root in `tests/` itself: the
//! generated code names its Rust source (`#line 20 "tests/kernels/jacobi.rs"`) by the path rustc
//! reaches the module by, and from a kind's folder that path would be
//! `tests/<kind>/../kernels/jacobi.rs`. The fixtures stay at the paths and lines pinned here.

mod elements;
mod kernels;
mod modal;
mod simplices;

use clforge::runtime::element::Element;
use std::path::Path;

/// Pins `text` as `tests/snapshots/{name}.snap`.
fn pinned(name: &'static str, text: &str) {
    insta::with_settings!({ omit_expression => true, prepend_module_to_snapshot => false }, {
        insta::assert_snapshot!(name, text);
    });
}

/// The fixture `tests/{dir}/{file}.rs` exactly as written, beside the OpenCL it generates.
macro_rules! dsl {
    ($dir:ident / $file:ident, $opencl:expr) => {
        format!(
            concat!(
                "=== DSL: tests/",
                stringify!($dir),
                "/",
                stringify!($file),
                ".rs ===\n{}\n=== OpenCL ===\n{}"
            ),
            include_str!(concat!(stringify!($dir), "/", stringify!($file), ".rs")),
            $opencl
        )
    };
}

/// One `#[test]` per snapshot, named as its file: `name => text` pins `text` as
/// `tests/snapshots/{name}.snap`. `SNAPSHOTS` lists them for [`every_snapshot_has_its_test`].
macro_rules! snapshots {
    ($($name:ident => $text:expr,)*) => {
        const SNAPSHOTS: &[&str] = &[$(stringify!($name)),*];
        $(
            #[test]
            fn $name() {
                pinned(stringify!($name), &$text);
            }
        )*
    };
}

snapshots! {
    // The stencils, sweep and lattice rules of tests/kernels/.
    jacobi => dsl!(kernels / jacobi, kernels::jacobi::Jacobi::source()),
    heat3d => dsl!(kernels / heat3d, kernels::heat3d::Heat3d::source()),
    gray_scott => dsl!(kernels / gray_scott, kernels::gray_scott::GrayScott::source()),
    heated => dsl!(kernels / heated, kernels::heated::Heated::source()),
    jacobi_checked => dsl!(kernels / jacobi_checked, kernels::jacobi_checked::JacobiChecked::source()),
    diffusion_f64 => dsl!(kernels / diffusion_f64, kernels::diffusion_f64::DiffusionF64::source()),
    advect_periodic => dsl!(kernels / advect_periodic, kernels::advect_periodic::AdvectPeriodic::source()),
    limiter_clamp => dsl!(kernels / limiter_clamp, kernels::limiter_clamp::LimiterClamp::source()),
    rust_semantics => dsl!(kernels / rust_semantics, kernels::rust_semantics::RustSemantics::source()),
    ising => dsl!(kernels / ising, kernels::ising::Ising::source()),
    ising_bits => dsl!(kernels / ising_bits, kernels::ising_bits::IsingBits::source()),
    jacobi_packed => dsl!(kernels / jacobi_packed, kernels::jacobi_packed::JacobiPacked::source()),
    packed3d => dsl!(kernels / packed3d, kernels::packed3d::Packed3d::source()),
    transport_sweep => dsl!(kernels / transport_sweep, kernels::transport_sweep::TransportForward::source()),
    d2q9_filter => dsl!(kernels / d2q9_filter, kernels::d2q9_filter::D2q9Filter::source()),
    // The nodal elements of tests/elements/.
    element_quad4 => dsl!(elements / quad4, elements::quad4::Quad4::SOURCE),
    element_quad9 => dsl!(elements / quad9, elements::quad9::Quad9::SOURCE),
    element_hex8 => dsl!(elements / hex8, elements::hex8::Hex8::SOURCE),
    element_quad4_heat => dsl!(elements / quad4_heat, elements::quad4_heat::Quad4Heat::SOURCE),
    // A user template family: only the part the user's template adds (the element family above
    // it is pinned by the other element snapshots).
    user_template_hex8_energy => user_template(),
    // The element-matrix kernels of modal trunk hexahedra at p = 1 and p = 3 (seed 004), and of
    // the nodal hex8 (sizes and the B products differ; the layout is the same).
    forming_hex_p1 => modal::HexP1::forming_source(),
    forming_hex_p3 => modal::HexP3::forming_source(),
    forming_hex8 => elements::hex8::Hex8::forming_source(),
    // A simplex element's kernels (tests/simplices/mod.rs, `tet4`, `cell = simplex`): the
    // explicit step's OpenCL and the element-matrix kernels with the collapsed rule's 18 points.
    element_tet4 => simplices::Tet4::SOURCE,
    forming_tet4 => simplices::Tet4::forming_source(),
}

/// The template `examples/templates/strain_energy.cl.tera` beside the kernels it adds to
/// `hex8_energy`.
fn user_template() -> String {
    let source = elements::hex8_energy::Hex8Energy::SOURCE;
    let marker = "/* ---- kernels of the user template";
    let user = &source[source.find(marker).expect("the user part is marked")..];
    format!(
        "=== template: examples/templates/strain_energy.cl.tera ===\n{}\n=== OpenCL (user part) ===\n{user}",
        include_str!("../examples/templates/strain_energy.cl.tera")
    )
}

/// Every `.snap` in `tests/snapshots/` has its test above (a snapshot without one would be
/// checked by nothing), and every fixture of `tests/kernels/` and `tests/elements/` has its
/// snapshot.
#[test]
fn every_snapshot_has_its_test() {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let stems = |dir: &str, ext: &str| -> Vec<String> {
        let mut stems: Vec<String> = std::fs::read_dir(tests.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == ext))
            .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
            .filter(|s| s != "mod")
            .collect();
        stems.sort();
        stems
    };
    let mut pinned: Vec<String> = SNAPSHOTS.iter().map(|s| s.to_string()).collect();
    pinned.sort();
    assert_eq!(
        stems("snapshots", "snap"),
        pinned,
        "tests/snapshots/*.snap against the tests"
    );
    for kernel in stems("kernels", "rs") {
        assert!(
            SNAPSHOTS.contains(&kernel.as_str()),
            "tests/kernels/{kernel}.rs has no snapshot"
        );
    }
    for element in stems("elements", "rs") {
        assert!(
            [format!("element_{element}"), format!("user_template_{element}")]
                .iter()
                .any(|name| SNAPSHOTS.contains(&name.as_str())),
            "tests/elements/{element}.rs has no snapshot"
        );
    }
}

/// The `#line` directives pinned above bring an OpenCL build error back to the Rust line.
mod locations {
    use super::kernels::jacobi::Jacobi;
    use clforge::prelude::*;
    use clforge::runtime::Error;

    #[test]
    fn broken_generated_code_names_the_rust_line() {
        let device = Device::default().unwrap();
        // Corrupt the expression of the user's `match` (line 20 of tests/kernels/jacobi.rs), every
        // copy of it (the plain variant's branch-free run is compiled only with PTS > 1).
        let broken = Jacobi::source().replace("out[c] = cell_1 == FLUID ?", "out[c] = cell_1 == FLUID ?? ");
        assert_ne!(broken, Jacobi::source());
        match device.program("jacobi-broken", &broken, "") {
            Err(e @ Error::Build { .. }) => {
                let Error::Build { rust_location, log, .. } = &e else {
                    unreachable!()
                };
                let loc = rust_location.as_deref().unwrap_or("");
                assert!(
                    loc.starts_with("tests/kernels/jacobi.rs:20"),
                    "location {loc:?}, log:\n{log}"
                );
                assert!(e.to_string().contains("tests/kernels/jacobi.rs:20"));
            }
            other => panic!("expected a build error, got {other:?}"),
        }
    }
}
