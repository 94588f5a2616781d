//! Bad DSL input is a compile error at the offending token. The cases are
//! `tests/ui/<kind>/<part>/<case>.rs` (kinds `stencil`, `sweep`, `lattice`, `element`, and
//! `shared` for what every kind uses), one mistake per file, each beside its `.stderr`.
#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*/*/*.rs");
}
