//! What rendering hands on to `expand`: every OpenCL source a program has, already cut at the
//! places the runtime completes with Rust values. The driver makes them; `expand` only quotes
//! them, so it never renders and never reads generated text.

/// The OpenCL sources of one program.
#[derive(Clone, Debug)]
pub struct Sources {
    /// The program's source as rendered (an element's `SOURCE`).
    pub text: String,
    /// `text` cut at its completion markers, in order.
    pub parts: Vec<Part>,
    /// A second program rendered beside the first from the same IR: an element's forming
    /// kernels (element matrices, f64), built and launched on their own.
    pub forming: Option<String>,
}

/// A piece of a source: text as rendered, or a place the runtime fills in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Part {
    Text(String),
    /// The params structs' declarations.
    Params,
    /// The constants' `#define`s.
    Constants,
    /// A `#line` back to the generated text after what the runtime inserted.
    LineHere,
}
