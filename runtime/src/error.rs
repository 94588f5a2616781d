//! The runtime's error type.

use crate::grid::shape::Shape;

/// Everything that can go wrong while finding a device, building a program or
/// moving data and launching kernels.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No OpenCL platform (or no device on any platform) is installed.
    #[error("no OpenCL platform found; install an OpenCL runtime (`make run` installs PoCL)")]
    NoPlatform,

    /// No device matches the requested selector.
    #[error(
        "no OpenCL device matches `{wanted}`; available: {available}; select one with \
         `gpu`, `cpu`, an index or a name substring (e.g. via CLFORGE_DEVICE)"
    )]
    DeviceNotFound {
        /// The selector that matched nothing.
        wanted: String,
        /// The devices that exist, one `index: name (platform, kind)` each.
        available: String,
    },

    /// The OpenCL compiler rejected a program.
    #[error(
        "failed to build OpenCL program `{program}` (options `{options}`){}; fix the source \
         using the build log:\n{log}",
        rust_location.as_ref().map(|l| format!(" at {l}")).unwrap_or_default()
    )]
    Build {
        /// Name of the program, as given to [`Device::program`](crate::Device::program).
        program: String,
        /// The build options actually passed to the compiler.
        options: String,
        /// The full compiler log.
        log: String,
        /// The first `file.rs:LINE[:COL]` mentioned in the log, if any (generated
        /// sources carry `#line` directives pointing back at the Rust code).
        rust_location: Option<String>,
    },

    /// Two lengths that must agree do not.
    #[error("length mismatch for {what}: expected {expected}, found {found}; pass matching lengths")]
    LengthMismatch {
        /// What was being compared.
        what: String,
        /// The length required.
        expected: usize,
        /// The length given.
        found: usize,
    },

    /// The device could not allocate memory.
    #[error(
        "out of device memory allocating {what} ({bytes} bytes); use a smaller problem or a \
         device with more memory"
    )]
    OutOfMemory {
        /// What was being allocated.
        what: String,
        /// The size requested.
        bytes: usize,
    },

    /// A grid's shape differs from the output grid's.
    #[error("grid `{field}` has shape {found} but the output grid has shape {expected}; all grids of a stencil have one shape")]
    ShapeMismatch {
        /// The argument name in the stencil function.
        field: String,
        /// The output grid's shape.
        expected: Shape,
        /// The argument's shape.
        found: Shape,
    },

    /// A launch needs more of a device resource than the device has (checked before the
    /// program is built or the kernel launched: some drivers abort the process instead).
    #[error("{what} needs {needed} but the device allows at most {limit} ({limit_name}); {hint}")]
    DeviceLimit {
        /// What asked for too much (the work-group, the `__local` memory of a tile).
        what: String,
        /// How much it needs (work-items, bytes).
        needed: u64,
        /// How much the device allows.
        limit: u64,
        /// The OpenCL device query that states the limit.
        limit_name: &'static str,
        /// What to change.
        hint: String,
    },

    /// A size computed from caller-given sizes does not fit: a product overflows `usize`, or
    /// exceeds the 32-bit `int` indices of clforge's kernels.
    #[error("{what} is too large: {detail}")]
    TooLarge {
        /// What was being sized (a grid, a mesh, a launch).
        what: String,
        /// Which size overflows and what is allowed.
        detail: String,
    },

    /// A caller-supplied parameter is invalid.
    #[error("invalid configuration: {0}")]
    InvalidConfig(String),

    /// A value does not fit the bits per point of a packed grid
    /// ([`PackedGrid::from_host`](crate::PackedGrid::from_host)): the first such
    /// point in linear order (x fastest).
    #[error(
        "point ({}, {}, {}) holds {value}, which does not fit in {bits} bits: a packed grid holds values 0 to {}; \
         declare more bits (`packed(name = 4)`) or leave the grid unpacked",
        point[0], point[1], point[2], (1u64 << bits) - 1
    )]
    PackedValue {
        /// The point, (x, y, z).
        point: [usize; 3],
        /// Its value.
        value: u64,
        /// The bits per point.
        bits: u32,
    },

    /// A grid bound to a stencil argument is packed where the stencil reads it unpacked, or
    /// the other way round, or packed in other bits than the stencil declares.
    #[error("{}", packed_binding(stencil, grid, *declared, *bound))]
    PackedBinding {
        /// The stencil's name.
        stencil: String,
        /// The argument's name in the stencil function.
        grid: String,
        /// The bits per point the stencil declares (`packed(grid = bits)`), `None` if unpacked.
        declared: Option<u32>,
        /// The bits per point of the grid bound, `None` for an unpacked grid.
        bound: Option<u32>,
    },

    /// A stencil with a packed grid was planned on several devices or ranks: a packed grid's
    /// halo planes are words of several points, which the slab exchange does not split.
    #[error(
        "stencil `{stencil}` reads `{grid}` packed (`packed({grid} = ..)`), and packed grids are not split over \
         devices or ranks (their halo planes are words holding several points, which the slab exchange does not \
         split); launch it on one device, or declare the stencil without `packed` for split runs"
    )]
    PackedSplit {
        /// The stencil's name.
        stencil: String,
        /// The packed argument's name.
        grid: String,
    },

    /// Work across MPI ranks failed: on every rank, naming the rank that failed first.
    #[error("MPI rank {rank} of {size}: {detail}")]
    Ranks {
        /// The rank that reports (or, for a failure agreed on by all, the first that failed).
        rank: i32,
        /// The ranks in the job.
        size: i32,
        /// What went wrong and what to do.
        detail: String,
    },

    /// Reading or writing a file (a checkpoint) failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being read or written, with its path.
        what: String,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },

    /// A checkpoint is not one this build wrote, or was damaged.
    #[error("checkpoint rejected: {0}")]
    Checkpoint(String),

    /// A mesh or result file (Gmsh `.msh`, VTK) is malformed, truncated, or holds what clforge
    /// does not read: the file and, where known, the section and line are in `detail`.
    #[error("{path}: {detail}")]
    MeshFile {
        /// The file (or `MSH data` for bytes parsed from memory).
        path: String,
        /// What is wrong and where.
        detail: String,
    },

    /// Work-items appended more entries to a bounded work queue than it holds. The entries that
    /// fit are kept, the others were not stored: the queue's content is incomplete.
    #[error(
        "work queue `{name}` overflowed: {attempted} entries were appended but it holds {capacity}; \
         {lost} were not stored. Create it with a larger capacity (or compact it more often)"
    )]
    QueueOverflow {
        /// The queue's name.
        name: String,
        /// Its capacity in entries.
        capacity: usize,
        /// Entries the work-items tried to store in all.
        attempted: u64,
        /// Entries that did not fit.
        lost: u64,
    },

    /// An element's geometry maps the reference element onto an inverted or flat shape.
    #[error(
        "element `{element}` is inverted or degenerate: det J = {det:e} at local point {local:?}; \
         give its nodes in the order of the element's `NODES` (counter-clockwise in 2-D) and \
         keep its angles below 180°"
    )]
    DegenerateElement {
        /// The element type (`quad4`).
        element: &'static str,
        /// The determinant of the Jacobian found there.
        det: f64,
        /// The local coordinates where it was found (padded to three).
        local: [f64; 3],
    },

    /// A mesh does not hold elements of the model's element type: a structured mesh of another
    /// dimension or order (a 9-node quad on a linear node grid), an unstructured mesh of another
    /// number of nodes per element.
    #[error("a mesh of {mesh} cannot hold `{element}` elements, which need {needs}")]
    MeshMismatch {
        /// The element type (`quad9`).
        element: &'static str,
        /// What the mesh has.
        mesh: String,
        /// What the element needs.
        needs: String,
    },

    /// An element of a mesh maps the reference element onto an inverted or flat shape.
    #[error(
        "element {index} of the mesh (`{element}`) is inverted or degenerate: det J = {det:e} at local \
         point {local:?}; give its nodes in the order of the element's `NODES` (counter-clockwise in 2-D) \
         and keep its angles below 180°"
    )]
    InvertedElement {
        /// The element's index in the mesh.
        index: usize,
        /// The element type (`quad4`).
        element: &'static str,
        /// The determinant of the Jacobian found there.
        det: f64,
        /// The local coordinates where it was found (padded to three).
        local: [f64; 3],
    },

    /// A time step beyond the stability limit of explicit central differences, computed from
    /// the model's element matrices and masses (see `fem::stability`).
    #[error(
        "time step {dt:e} s violates the stability bound of explicit central differences: Δt ≤ {safety} · \
         Δt_crit = {dt_max:e} s, where Δt_crit = 4 / (α + sqrt(α² + 4 λ_max)) = {dt_critical:e} s for damping \
         α = {alpha:e} 1/s and λ_max = {lambda_max:e} 1/s², the largest eigenvalue of K_e x = λ M_e x over the \
         model's elements (reached at element {element}){note}; choose 0 < dt ≤ {dt_max:e}"
    )]
    UnstableTimeStep {
        /// The time step given.
        dt: f64,
        /// The largest time step accepted, `safety · dt_critical`.
        dt_max: f64,
        /// The limit of the scheme.
        dt_critical: f64,
        /// The fraction of `dt_critical` accepted.
        safety: f64,
        /// The largest generalized eigenvalue of the element matrices (1/s²).
        lambda_max: f64,
        /// The mass-proportional damping.
        alpha: f64,
        /// An element where `lambda_max` is reached.
        element: usize,
        /// Extra information (a user's wave speed, for comparison), or empty.
        note: String,
    },

    /// An iterative solver stopped before its relative residual reached the tolerance: at its
    /// iteration limit, or on a residual that is no longer finite.
    #[error(
        "{solver} did not converge: relative residual {residual:e} after {iterations} iterations \
         (limit {max_iter}), tolerance {tol:e}; raise the iteration limit, loosen the tolerance or \
         check that the matrix is not singular (conjugate gradients: symmetric positive definite; \
         BiCGStab may stall on strongly non-normal systems, where GMRES does not)"
    )]
    NotConverged {
        /// The solver (`conjugate gradients`, `BiCGStab`, `GMRES`).
        solver: &'static str,
        /// Iterations done.
        iterations: usize,
        /// The relative residual `‖r‖ / ‖b‖` reached.
        residual: f64,
        /// The tolerance asked for.
        tol: f64,
        /// The iteration limit.
        max_iter: usize,
    },

    /// A matrix that must be symmetric positive definite is found not to be: a diagonal entry
    /// or a curvature `p·Ap` that is not positive.
    #[error(
        "the matrix is not symmetric positive definite: {what} is {value:e}, not positive; fix \
         enough degrees of freedom (Dirichlet conditions) to remove rigid-body and constant modes, \
         and check the signs of the element matrices"
    )]
    NotPositiveDefinite {
        /// Which quantity was found not positive (`the diagonal entry A[3][3]`).
        what: String,
        /// Its value.
        value: f64,
    },

    /// An element's lumped (diagonal) mass cannot be formed: a total mass that is not positive
    /// and finite, shape functions that do not sum to one, a modal basis, or (in `Model::new`)
    /// an element whose nodal shares the element spec alone does not fix.
    #[error("no lumped mass for element `{element}`: {detail}")]
    LumpedMass {
        /// The element type (`quad8`).
        element: &'static str,
        /// What is wrong and what to do.
        detail: String,
    },

    /// A free DOF has no positive finite mass, so the explicit step cannot divide by it.
    #[error("DOF {dof} (node {node}) is free but has mass {mass}: {reason}")]
    MasslessDof {
        /// The global DOF.
        dof: usize,
        /// Its node.
        node: usize,
        /// The mass found there.
        mass: f64,
        /// Why, and what to do (`node 40 belongs to no element; ...`).
        reason: String,
    },

    /// Any other OpenCL failure.
    #[error("OpenCL call `{op}` failed: {message}")]
    Cl {
        /// The OpenCL call that failed.
        op: &'static str,
        /// What the driver reported.
        message: String,
    },
}

/// Result type of this crate.
pub type Result<T> = std::result::Result<T, Error>;

/// [`Error::LengthMismatch`] naming `what` unless `found == expected`.
pub(crate) fn check_len(what: &str, expected: usize, found: usize) -> Result<()> {
    if expected == found {
        Ok(())
    } else {
        Err(Error::LengthMismatch {
            what: what.into(),
            expected,
            found,
        })
    }
}

/// The message of [`Error::PackedBinding`].
fn packed_binding(stencil: &str, grid: &str, declared: Option<u32>, bound: Option<u32>) -> String {
    match (declared, bound) {
        (Some(d), None) => format!(
            "stencil `{stencil}` reads `{grid}` packed in {d} bits per point but an unpacked grid was bound; \
             bind a `PackedGrid<_, {d}>` (`KernelArg::packed`)"
        ),
        (None, Some(b)) => format!(
            "stencil `{stencil}` reads `{grid}` unpacked but a grid packed in {b} bits per point was bound; bind \
             a `DeviceGrid` (`KernelArg::grid`), or declare `packed({grid} = {b})`"
        ),
        (Some(d), Some(b)) => format!(
            "stencil `{stencil}` reads `{grid}` packed in {d} bits per point but the grid bound has {b}; pack it \
             as a `PackedGrid<_, {d}>`"
        ),
        (None, None) => format!("stencil `{stencil}`: argument `{grid}` is bound as declared"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_message_names_everything() {
        let err = Error::Build {
            program: "heat".into(),
            options: "-cl-std=CL1.2".into(),
            log: "src/heat.rs:3:1: error: oops".into(),
            rust_location: Some("src/heat.rs:3:1".into()),
        };
        let msg = err.to_string();
        for part in ["heat", "-cl-std=CL1.2", " at src/heat.rs:3:1", "error: oops"] {
            assert!(msg.contains(part), "{part:?} missing from {msg:?}");
        }
    }
}
