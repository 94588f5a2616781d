//! The stencils the tests pin and check: one file each, so that a snapshot can show the
//! DSL input exactly as written beside the OpenCL it generates.
#![allow(dead_code)]

pub mod advect_periodic;
pub mod diffusion_f64;
pub mod gray_scott;
pub mod heat3d;
pub mod heated;
pub mod ising;
pub mod ising_bits;
pub mod jacobi;
pub mod jacobi_checked;
pub mod jacobi_packed;
pub mod limiter_clamp;
pub mod packed3d;
pub mod rust_semantics;
pub mod transport_sweep;

/// (file, DSL text, generated OpenCL) of every test stencil.
pub fn all() -> Vec<(&'static str, &'static str, &'static str)> {
    vec![
        ("jacobi", include_str!("jacobi.rs"), jacobi::Jacobi::source()),
        ("heat3d", include_str!("heat3d.rs"), heat3d::Heat3d::source()),
        (
            "gray_scott",
            include_str!("gray_scott.rs"),
            gray_scott::GrayScott::source(),
        ),
        ("heated", include_str!("heated.rs"), heated::Heated::source()),
        (
            "jacobi_checked",
            include_str!("jacobi_checked.rs"),
            jacobi_checked::JacobiChecked::source(),
        ),
        (
            "diffusion_f64",
            include_str!("diffusion_f64.rs"),
            diffusion_f64::DiffusionF64::source(),
        ),
        (
            "advect_periodic",
            include_str!("advect_periodic.rs"),
            advect_periodic::AdvectPeriodic::source(),
        ),
        (
            "limiter_clamp",
            include_str!("limiter_clamp.rs"),
            limiter_clamp::LimiterClamp::source(),
        ),
        (
            "rust_semantics",
            include_str!("rust_semantics.rs"),
            rust_semantics::RustSemantics::source(),
        ),
        ("ising", include_str!("ising.rs"), ising::Ising::source()),
        (
            "ising_bits",
            include_str!("ising_bits.rs"),
            ising_bits::IsingBits::source(),
        ),
        (
            "jacobi_packed",
            include_str!("jacobi_packed.rs"),
            jacobi_packed::JacobiPacked::source(),
        ),
        ("packed3d", include_str!("packed3d.rs"), packed3d::Packed3d::source()),
        (
            "transport_sweep",
            include_str!("transport_sweep.rs"),
            transport_sweep::TransportForward::source(),
        ),
    ]
}
