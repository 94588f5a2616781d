//! The params structs' ABI: a struct of scalars passed to kernels in constant memory, its
//! OpenCL declaration and its bytes as OpenCL C lays them out.

use crate::buffer::Scalar;

/// A struct of scalars passed to kernels in constant memory; `#[derive(Params)]` implements it.
pub trait Params {
    /// The struct's Rust name.
    const CL_NAME: &'static str;
    /// `typedef struct { float a; ... } cl_name;`: the struct under the name a kernel program
    /// gives it (two structs of one name from two modules get two names), its fields spelled
    /// by [`clforge_abi::names::cl_member_name`] as the kernels read them.
    fn cl_declaration(cl_name: &str) -> String;
    /// The bytes of the struct laid out as OpenCL C lays out the declaration.
    fn to_bytes(&self) -> Vec<u8>;
}

/// Builds the OpenCL declaration of a params struct.
#[derive(Debug)]
pub struct StructDecl {
    name: String,
    body: String,
}

impl StructDecl {
    /// Starts the declaration of `name`.
    pub fn new(name: &str) -> StructDecl {
        StructDecl {
            name: name.to_string(),
            body: String::new(),
        }
    }
    /// Adds a field: the Rust name, printed as the kernels print its uses (`half` is `rs_half`).
    pub fn field<T: Scalar>(&mut self, name: &str) {
        let mut cl = String::new();
        // Writing to a `String` cannot fail.
        let _ = clforge_abi::names::cl_member_name(name, &mut cl);
        self.body.push_str(&format!("    {} {cl};\n", T::CL_NAME));
    }
    /// The finished `typedef`.
    pub fn finish(self) -> String {
        format!("typedef struct {{\n{}}} {};\n", self.body, self.name)
    }
}

/// Lays out a params struct's bytes with C's rules: each scalar aligned to its size,
/// the whole padded to the largest alignment.
#[derive(Debug, Default)]
pub struct StructBytes {
    bytes: Vec<u8>,
    align: usize,
}

impl StructBytes {
    /// Appends a field.
    pub fn put<T: Scalar>(&mut self, v: T) {
        let size = std::mem::size_of::<T>();
        self.pad(size);
        self.align = self.align.max(size);
        v.put_bytes(&mut self.bytes);
    }
    fn pad(&mut self, align: usize) {
        while align > 0 && !self.bytes.len().is_multiple_of(align) {
            self.bytes.push(0);
        }
    }
    /// The finished bytes.
    pub fn finish(mut self) -> Vec<u8> {
        let a = self.align;
        self.pad(a);
        self.bytes
    }
}
