//! The kernel IR: what will be printed, for every kind. `lower` decides it; `emit` and
//! `render` print it; `expand` reads it (with the model and the rendered [`Sources`]) to write
//! the Rust side. No later stage decides anything about a kernel: its name, parameters, lanes,
//! role (a variant, the narrow vector build, a reduction's fold), whether a variant exists (and
//! why not), tunables and local memory are all here.
//!
//! A [`Program`] is what one annotated item generates: several kernels sharing one OpenCL
//! source. Each [`Kernel`] states its ABI once, as a [`Param`] list: the template prints the
//! signature from it, and the generated Rust launcher binds arguments in the same order.
//!
//! The kind-specific payload (a stencil's point update, an element's node structure) is
//! [`Body`]; sweeps and lattices add their variants there. The constructs they need already
//! have their places: in-place updates with a dependence direction ([`Dependence`]),
//! atomics ([`Access::Atomic`]), counter-based random streams ([`RandomStream`]), bit-packed
//! state ([`Ty::Packed`]) and work queues ([`WorkQueue`]).

pub mod element;
pub mod expr;
pub mod source;
pub mod stencil;
pub mod sweep;

pub use expr::{Expr, Let, Op};
pub use source::{Part, Sources};

use crate::model::Scalar;

/// Where the generated code came from: for `#line`, the header comment and error messages.
#[derive(Clone, Debug)]
pub struct Origin {
    /// The annotated item's name (`jacobi`, `quad4`).
    pub name: String,
    /// The user's file as rustc names it.
    pub file: String,
    /// 1-based line of the item.
    pub line: usize,
    /// The user's doc comment lines.
    pub doc: Vec<String>,
}

/// Everything one annotated item generates.
#[derive(Clone, Debug)]
pub struct Program {
    pub origin: Origin,
    /// The template family that lays the program out (`stencil`, `element`, or a user family).
    pub family: String,
    pub kernels: Vec<Kernel>,
    /// Preprocessor tunables with their defaults (`#ifndef TILE_X`): the runtime may override
    /// them with build options without re-running the macro.
    pub tunables: Vec<Tunable>,
    /// Contracts shared with the runtime, printed as `#define`s (values from `clforge_abi`).
    pub contracts: Vec<Define>,
    /// Whether any value is `double` (`cl_khr_fp64`).
    pub fp64: bool,
    /// What the source still needs at run time (params struct layouts, constants' values).
    pub completion: Completion,
    pub body: Body,
    /// A user template rendered after the family with the same view, adding kernels.
    pub extension: Option<Extension>,
}

impl Program {
    /// The kernels the runtime chooses between ([`Role::Variant`]), in the IR's order.
    pub fn variants(&self) -> impl Iterator<Item = &Kernel> {
        self.kernels.iter().filter(|k| k.role == Role::Variant)
    }

    /// The narrow build of the vector variant, if the program has one ([`Role::Narrow`]).
    pub fn narrow(&self) -> Option<&Kernel> {
        self.kernels.iter().find(|k| k.role == Role::Narrow)
    }

    /// The reductions' fold kernels with the outputs they fold, in the outputs' order.
    pub fn folds(&self) -> impl Iterator<Item = (&Kernel, &str)> {
        self.kernels.iter().filter_map(|k| match &k.role {
            Role::Fold { output } => Some((k, output.as_str())),
            _ => None,
        })
    }
}

/// A user's template file that adds kernels to a program (`template = "..."` in the attribute).
#[derive(Clone, Debug)]
pub struct Extension {
    /// The path as the user wrote it: the template's name in error messages.
    pub shown: String,
    /// The absolute path, included by the generated Rust so that cargo tracks the file.
    pub path: std::path::PathBuf,
    pub text: String,
    /// The attribute's string literal, where errors in the template are reported.
    pub span: proc_macro2::Span,
}

/// The kind-specific part of a program.
#[derive(Clone, Debug)]
pub enum Body {
    Stencil(Box<stencil::StencilBody>),
    Element(element::ElementBody),
    Sweep(Box<sweep::SweepBody>),
    Lattice(Box<sweep::LatticeBody>),
}

/// One `__kernel` function.
#[derive(Clone, Debug)]
pub struct Kernel {
    /// The OpenCL name, `<item>_<variant>` (`jacobi_plain`).
    pub name: String,
    /// The variant's key (`plain`, `tiled`, `vec8`, `steps`, `coloured`, ...).
    pub variant: String,
    /// Parameters in ABI order.
    pub params: Vec<Param>,
    /// Points per work-item along x: 1 for scalar code, the vector width of a vector kernel
    /// (`float8` in `<name>_vec8`). The printer writes the kernel's vector types from it.
    pub lanes: usize,
    /// What the runtime does with the kernel.
    pub role: Role,
    /// `Some(reason)` when the variant is not generated for this item.
    pub unavailable: Option<String>,
    /// Bytes of `__local` memory per point of the work-group's tile (0 when none); the runtime
    /// checks the device's limit with it before launching.
    pub local_bytes_per_point: usize,
    /// In-place update whose reads of already-updated neighbours fix a schedule (sweeps).
    pub dependence: Option<Dependence>,
    // The places lattices fill in; no kind sets them yet.
    /// Per-work-item random numbers (lattices).
    #[allow(dead_code)]
    pub random: Option<RandomStream>,
    /// Items taken from a compacted queue instead of the whole index space (lattices).
    #[allow(dead_code)]
    pub queue: Option<WorkQueue>,
    /// Defined by the user's template (`Program::extension`), not by the kind's family.
    pub user: bool,
    /// The user's doc comment lines (user kernels), for the launcher's documentation.
    pub doc: Vec<String>,
}

impl Kernel {
    pub fn new(origin: &Origin, variant: &str, params: Vec<Param>) -> Kernel {
        Kernel {
            name: format!("{}_{variant}", origin.name),
            variant: variant.to_string(),
            params,
            lanes: 1,
            role: Role::Variant,
            unavailable: None,
            local_bytes_per_point: 0,
            dependence: None,
            random: None,
            queue: None,
            user: false,
            doc: Vec::new(),
        }
    }
}

/// What the runtime does with a kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Role {
    /// One of the program's variants or schedules: listed in the runtime's spec and chosen
    /// between there ([`Program::variants`]).
    Variant,
    /// A narrower build of the vector variant (`<name>_vec4`, for GPUs): compiled in its place
    /// where the runtime asks for it (`CLFORGE_VEC4`), with the same signature.
    Narrow,
    /// The fold of reduction output `output`'s work-group partials into one value, launched
    /// after the variant that wrote them (`<name>_fold_<output>`).
    Fold { output: String },
    /// An element-matrix kernel of an element's second program (`Sources::forming`, f64),
    /// launched by the runtime's forming algorithms through their own typed launchers.
    Forming,
}

/// One kernel parameter.
#[derive(Clone, Debug)]
pub struct Param {
    /// The OpenCL name (hygienic: never collides with the kernel's own variables).
    pub name: String,
    pub ty: Ty,
    pub access: Access,
    /// What the generated Rust launcher takes for it.
    pub binding: Binding,
    /// No other parameter aliases it (`restrict`).
    pub restrict: bool,
}

impl Param {
    pub fn new(name: &str, ty: Ty, access: Access, binding: Binding) -> Param {
        Param {
            name: name.to_string(),
            ty,
            access,
            binding,
            restrict: false,
        }
    }

    /// Declares that no other parameter aliases this one.
    pub fn restrict(mut self) -> Param {
        self.restrict = true;
        self
    }
}

/// How a kernel reads or writes a parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
    /// Read and written by the same work-item (`f[n0] -= ...`).
    ReadWrite,
    /// Updated with atomic operations by several work-items (sweep flags, lattice counters).
    Atomic,
    /// Read and written by several work-groups that order their accesses through flags
    /// (a persistent sweep's field): volatile loads and stores, never served from a stale cache.
    Volatile,
}

/// OpenCL type of a parameter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ty {
    /// `__global T*`, `lanes` > 1 for vector types (`real8`).
    Global { elem: Elem, lanes: usize },
    /// `__constant T*`.
    Constant { elem: Elem, lanes: usize },
    /// `__constant const S*`: a `#[derive(Params)]` struct, declared at run time.
    Struct(String),
    /// A value passed by copy.
    Value(Elem),
    /// Bit-packed values: `bits` bits per site in `word`-sized words (a lattice's state, a
    /// stencil's `packed(name = bits)` grid).
    Packed { word: Scalar, bits: usize },
    /// `__local T*`: work-group scratch, sized by the launch in bytes.
    Local { elem: Elem, lanes: usize },
}

/// An element type in a signature: a DSL scalar, the element family's `real`, or `int4`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elem {
    Scalar(Scalar),
    /// The element family's floating-point type (`typedef float real`).
    Real,
    /// `int4` control words (blocked schedules).
    Int4,
}

impl Elem {
    /// The OpenCL spelling, `lanes` wide.
    pub fn cl(self, lanes: usize) -> String {
        let base = match self {
            Elem::Scalar(s) => s.cl(),
            Elem::Real => "real",
            Elem::Int4 => return "int4".into(),
        };
        if lanes > 1 {
            format!("{base}{lanes}")
        } else {
            base.to_string()
        }
    }
}

/// What a generated launcher takes for a parameter, and how it binds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Binding {
    /// The user's argument number `i` of the annotated function.
    UserArg(usize),
    /// The output grid of a stencil.
    Output,
    /// Output `i` (from 1) of a stencil with several outputs.
    MoreOutput(usize),
    /// A grid dimension (`nx`, `ny`, `nz`) filled in by the plan.
    Extent(usize),
    /// Where the launched grid starts in the whole grid along an axis (0 on one device).
    Origin(usize),
    /// The whole grid's extent along an axis (the launched grid's on one device).
    WholeExtent(usize),
    /// The box whose points a reduction counts: its low corner (0..3), then its high (3..6).
    ReduceBox(usize),
    /// A named run-time argument of the kernel's launcher (element schedules: `u`, `colour`).
    Named,
}

/// A preprocessor tunable with its default.
#[derive(Clone, Debug)]
pub struct Tunable {
    pub name: String,
    pub default: usize,
    pub doc: String,
}

/// A `#define NAME value` with a comment saying what it means.
#[derive(Clone, Debug)]
pub struct Define {
    pub name: String,
    pub value: String,
    pub doc: String,
}

/// The run-time completion of the source: the attribute cannot see a params struct's fields
/// or a constant's value, so the generated Rust supplies them when the source is first used.
#[derive(Clone, Debug, Default)]
pub struct Completion {
    /// Params struct types, in order of first use, with their OpenCL names.
    pub params: Vec<(syn::Path, String)>,
    /// Constants: OpenCL name, Rust path, the type the generated code assumes.
    pub consts: Vec<ConstUse>,
    /// Params members used, with the type the generated code assumes (checked in Rust).
    pub members: Vec<MemberUse>,
}

/// A named constant the body uses: emitted as `#define` with the Rust value at run time.
#[derive(Clone, Debug)]
pub struct ConstUse {
    pub cl_name: String,
    /// The path as written, `gain::K`.
    pub rust: String,
    pub path: syn::Path,
    pub ty: Scalar,
    pub span: proc_macro2::Span,
    /// Used only as `path as ty`: the value is the Rust cast's (exact Rust semantics), and Rust
    /// checks the cast instead of the constant's type.
    pub cast: bool,
}

/// A params member the body uses, with the type the generated code assumes (checked in Rust).
#[derive(Clone, Debug)]
pub struct MemberUse {
    pub arg: usize,
    pub member: syn::Ident,
    pub ty: Scalar,
    /// Read as its own (unseen) type and cast to `ty` in C: Rust checks that the cast means
    /// the same there (`assume::CastsTo`), not that the member is `ty`.
    pub cast: bool,
}

/// A sweep's in-place dependence: the update reads values already written behind it, so
/// points run in this direction per axis (wavefronts across blocks).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dependence {
    /// `true` where the axis runs towards increasing indices.
    pub forward: [bool; 3],
}

/// A counter-based random stream (Philox-like): the key is the seed, the counter the work-item
/// and step, so that every variant draws the same numbers as the host reference.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RandomStream {
    pub name: String,
    pub draws_per_item: usize,
}

/// A work queue: indices of active items compacted between launches, with a counter the
/// runtime refreshes (seed 003's stale global counters).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkQueue {
    pub items: String,
    pub counter: String,
}
