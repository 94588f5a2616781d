//! A user's template family: a `.cl.tera` file of the user's crate that adds kernels to an
//! item's program, and the kernels it defines, declared in Rust so that they get typed
//! launchers (`extern "OpenCL" { fn strain_energy(u: &[f32], energy: &mut [f32], n: i32); }`).

use crate::model::Scalar;
use proc_macro2::Span;
use std::path::PathBuf;
use syn::Ident;

/// The template file named in the attribute (`template = "templates/energy.cl.tera"`).
#[derive(Clone, Debug)]
pub struct UserFamily {
    /// The path as written, relative to the user's crate (`CARGO_MANIFEST_DIR`).
    pub shown: String,
    /// The absolute path, for `include_bytes!` (so that cargo rebuilds when the file changes).
    pub path: PathBuf,
    /// The file's text, read when the macro expanded.
    pub text: String,
    /// The string literal that named it: errors in the template are reported here.
    pub span: Span,
    /// The kernels the template defines, as declared in the `extern "OpenCL"` block.
    pub kernels: Vec<UserKernel>,
}

/// One kernel of a user family, as declared in Rust.
#[derive(Clone, Debug)]
pub struct UserKernel {
    pub name: Ident,
    pub doc: Vec<String>,
    pub params: Vec<UserParam>,
}

/// A parameter of a user kernel: `u: &[f32]` (read), `energy: &mut [f32]` (written), `n: i32`.
#[derive(Clone, Debug)]
pub struct UserParam {
    pub name: Ident,
    pub scalar: Scalar,
    pub kind: UserParamKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UserParamKind {
    /// `&[T]`: a buffer the kernel only reads.
    Read,
    /// `&mut [T]`: a buffer the kernel writes (and may read).
    Write,
    /// `T`: a value.
    Value,
}
