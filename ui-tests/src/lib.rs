//! Nothing here: the package holds the DSL's compile-error UI tests (`tests/ui.rs`).
