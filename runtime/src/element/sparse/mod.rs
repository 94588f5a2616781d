//! Global sparse matrices on the device: element matrices already in device memory are
//! assembled into one CSR matrix, Dirichlet conditions are imposed on it, and Jacobi-preconditioned
//! conjugate gradients solve it, all in `double`.
//!
//! # Layout
//!
//! - A [`DofMap`] holds, element after element, the global DOF of each of its `ne` local DOFs
//!   (`index[e·ne + I]`) and a sign `±1` (`sign[e·ne + I]`): hierarchical high-order modes flip
//!   with the orientation of their edge or face, so the element's `K_e` enters the global matrix
//!   as `S K_e S` with `S = diag(sign)`.
//! - Element matrices are symmetric, so only their lower triangle is stored, packed row by row:
//!   `K_e[I][J]` (`J ≤ I`) at `e·P + I(I+1)/2 + J` with `P = ne(ne+1)/2`
//!   ([`DofMap::packed`]).
//! - The global matrix is CSR: `row_ptr[n + 1]`, `cols[nnz]` sorted within each row, `values[nnz]`.
//!   Its pattern ([`pattern`]) is every pair of DOFs that share an element plus the whole diagonal,
//!   so it is symmetric, and computed once on the host.
//!
//! # Why colouring
//!
//! Two elements sharing a DOF add into the same rows. OpenCL 1.2 has no atomic add of `double`
//! (and emulating one with compare-and-swap is slow and makes the sums' order, so their rounding,
//! depend on the schedule). So the elements are coloured ([`colour`]) such that no two elements of
//! one colour share a DOF, and [`assemble`] launches one kernel per colour with one work-item per
//! (element, local row): within a launch no two work-items touch one row, so a plain `+=` is
//! race-free and the result is the same on every run.
//!
//! # Solving
//!
//! [`apply_dirichlet`] fixes DOFs symmetrically (the matrix stays symmetric positive definite) and
//! [`cg`] solves with conjugate gradients preconditioned by the diagonal: one row per work-item for
//! `A p`, dot products as work-group sums finished on the host. [`assemble_host`],
//! [`apply_dirichlet_host`] and [`cg_host`] are host references with the same semantics.
//!
//! ```
//! use clforge_runtime::fem::sparse::{self, CgOptions, DofMap};
//! use clforge_runtime::{Buffer, Device};
//!
//! // Three 2-node bars in a row, DOFs 0-1-2-3; each element matrix is [[1, -1], [-1, 1]],
//! // packed lower triangle [1, -1, 1].
//! let map = DofMap::new(4, 2, vec![0, 1, 1, 2, 2, 3], vec![1; 6])?;
//! let colours = sparse::colour(&map);
//! assert_eq!(colours, [vec![0, 2], vec![1]]);
//!
//! let dev = Device::default()?;
//! let ke = Buffer::from_slice(&dev, &[1.0, -1.0, 1.0].repeat(3))?;
//! let mut k = sparse::assemble(&dev, &ke, &map, &colours)?;
//! // u(0) = 0 and u(3) = 3 without load: u is linear.
//! let mut b = vec![0.0; 4];
//! sparse::apply_dirichlet(&mut k, &[0, 3], &[0.0, 3.0], &mut b)?;
//! let solution = sparse::cg(&k, &b, None, &CgOptions::default())?;
//! for (i, u) in solution.x.iter().enumerate() {
//!     assert!((u - i as f64).abs() < 1e-12, "{u}");
//! }
//! # Ok::<(), clforge_runtime::Error>(())
//! ```

use crate::buffer::Buffer;
use crate::device::Device;
use crate::error::{check_len, Error, Result};
use crate::launch::owned::Signatures;
use crate::program::{Arg, Program};

mod bicgstab;
mod cg;
mod gmres;
mod host;
mod map;
pub use bicgstab::bicgstab;
pub use cg::{cg, cg_host, CgOptions, CgReport};
pub use gmres::{gmres, GMRES_RESTART};
pub use host::{assemble_host, pattern, CsrPattern, HostCsr};
use map::ElementsByDof;
pub use map::{check_colours, colour, DofMap};

/// OpenCL C of the assembly, Dirichlet and conjugate-gradient kernels.
pub const SPARSE_CL: &str = include_str!("sparse.cl");

/// The kernels' parameter lists, which the launches bind their named arguments to.
static SIGNATURES: std::sync::LazyLock<Signatures> =
    std::sync::LazyLock::new(|| Signatures::parse("the sparse solver's kernels", SPARSE_CL));

/// The largest size the kernels index: 31 bits, so their `uint` sums of two sizes never wrap.
const MAX_INDEX: usize = i32::MAX as usize;

/// The largest work-group of the reducing kernels (a power of two): 256 `double`s of `__local`
/// scratch, 2 KiB, well within the 32 KiB every OpenCL 1.2 device has.
const MAX_GROUP: usize = 256;

/// The kernels that sum over a work-group, whose work-group must be a power of two.
const REDUCING: [&str; 5] = [
    "sparse_spmv_dot",
    "sparse_cg_start",
    "sparse_cg_update",
    "sparse_dot2",
    "sparse_multidot",
];

/// The solver's name in [`Error::NotConverged`].
const CG: &str = "conjugate gradients";

/// `n` as a kernel's `uint` within [`MAX_INDEX`], or [`Error::TooLarge`] naming `what`.
fn index32(what: impl FnOnce() -> String, n: usize) -> Result<u32> {
    u32::try_from(n)
        .ok()
        .filter(|_| n <= MAX_INDEX)
        .ok_or_else(|| Error::TooLarge {
            what: what(),
            detail: format!("{n} exceeds the sparse kernels' 31-bit indices (at most {MAX_INDEX})"),
        })
}

/// A CSR matrix in device memory, with a host copy of its pattern.
#[derive(Debug)]
pub struct DeviceCsr {
    pattern: CsrPattern,
    row_ptr: Buffer<u32>,
    cols: Buffer<u32>,
    values: Buffer<f64>,
    program: Program,
}

/// The sparse program on `dev`, which must compute in `double`.
fn sparse_program(dev: &Device) -> Result<Program> {
    if !dev.info().fp64 {
        return Err(Error::InvalidConfig(format!(
            "the sparse assembly and solver compute in `double`, which device `{}` does not support \
             (no `cl_khr_fp64`); select another device",
            dev.info().name
        )));
    }
    dev.program("clforge sparse", SPARSE_CL, "")
}

impl DeviceCsr {
    /// A matrix of `pattern` with every value 0.
    pub fn zeros(dev: &Device, pattern: CsrPattern) -> Result<DeviceCsr> {
        let program = sparse_program(dev)?;
        Ok(DeviceCsr {
            row_ptr: Buffer::from_slice(dev, &pattern.row_ptr)?,
            cols: Buffer::from_slice(dev, &pattern.cols)?,
            values: Buffer::new(dev, pattern.nnz())?,
            pattern,
            program,
        })
    }

    /// A copy of `host` in `dev`'s memory.
    pub fn from_host(dev: &Device, host: &HostCsr) -> Result<DeviceCsr> {
        let mut csr = DeviceCsr::zeros(dev, host.pattern.clone())?;
        csr.values.write(&host.values)?;
        Ok(csr)
    }

    /// Number of rows (and columns).
    pub fn n(&self) -> usize {
        self.pattern.n
    }

    /// Number of stored entries.
    pub fn nnz(&self) -> usize {
        self.pattern.nnz()
    }

    /// The symbolic structure (the host copy).
    pub fn pattern(&self) -> &CsrPattern {
        &self.pattern
    }

    /// The row offsets on the device (`uint`, `n + 1`), for users' kernels.
    pub fn row_ptr(&self) -> &Buffer<u32> {
        &self.row_ptr
    }

    /// The columns on the device (`uint`, `nnz`).
    pub fn cols(&self) -> &Buffer<u32> {
        &self.cols
    }

    /// The values on the device (`double`, `nnz`).
    pub fn values(&self) -> &Buffer<f64> {
        &self.values
    }

    /// The device holding the matrix.
    pub fn device(&self) -> &Device {
        self.values.device()
    }

    /// Downloads the matrix (blocking until the commands queued before have finished).
    pub fn to_host(&self) -> Result<HostCsr> {
        Ok(HostCsr {
            pattern: self.pattern.clone(),
            values: self.values.to_vec()?,
        })
    }

    fn n32(&self) -> Result<u32> {
        index32(|| format!("a matrix of {} rows", self.n()), self.n())
    }

    /// The diagonal on the device.
    fn diagonal(&self) -> Result<Buffer<f64>> {
        let diag = Buffer::new(self.device(), self.n())?;
        let args = [
            ("row_ptr", Arg::buffer(&self.row_ptr)),
            ("cols", Arg::buffer(&self.cols)),
            ("values", Arg::buffer(&self.values)),
            ("diag", Arg::buffer(&diag)),
            ("n", Arg::u32(self.n32()?)),
        ];
        launch_rows(&self.program, "sparse_diagonal", self.n(), &args)?;
        Ok(diag)
    }
}

/// Assembles element matrices `ke` (on `dev`; packed lower triangles, see the module docs) over
/// `map` into a CSR matrix on `dev`: `sign_I · sign_J · K_e[I][J]` is added at
/// `(index_I, index_J)` for every `I, J`. One launch per colour of `colours` (as [`colour`]
/// makes them; [`check_colours`] is applied), one work-item per (element, local row).
///
/// Fails with [`Error::LengthMismatch`] unless `ke` has [`DofMap::ke_len`] entries, and with
/// [`Error::InvalidConfig`] when `ke` lives on another device or the colouring is not valid.
pub fn assemble(dev: &Device, ke: &Buffer<f64>, map: &DofMap, colours: &[Vec<u32>]) -> Result<DeviceCsr> {
    check_len("element matrices (`DofMap::ke_len`)", map.ke_len(), ke.len())?;
    if !ke.device().same_as(dev) {
        return Err(Error::InvalidConfig(
            "the element matrices `ke` live on another device than the one assembling".into(),
        ));
    }
    check_colours(map, colours)?;
    let csr = DeviceCsr::zeros(dev, pattern(map)?)?;
    let sizes = || format!("a dof map of {} entries", map.index.len());
    let ne = index32(sizes, map.per_element)?;
    let packed = index32(sizes, map.packed)?;
    let index = Buffer::from_slice(dev, &map.index)?;
    let sign: Vec<f64> = map.sign.iter().map(|&s| f64::from(s)).collect();
    let sign = Buffer::from_slice(dev, &sign)?;
    let order = Buffer::from_slice(dev, &colours.concat())?;
    let mut first = 0usize;
    for members in colours.iter().filter(|m| !m.is_empty()) {
        // `count · ne` is at most the entries of `index`, which fit 31 bits.
        let count = members.len();
        let args = [
            ("row_ptr", Arg::buffer(&csr.row_ptr)),
            ("cols", Arg::buffer(&csr.cols)),
            ("values", Arg::buffer(&csr.values)),
            ("ke", Arg::buffer(ke)),
            ("index", Arg::buffer(&index)),
            ("sign", Arg::buffer(&sign)),
            ("order", Arg::buffer(&order)),
            ("first", Arg::u32(index32(sizes, first)?)),
            ("count", Arg::u32(index32(sizes, count)?)),
            ("ne", Arg::u32(ne)),
            ("packed", Arg::u32(packed)),
        ];
        launch_rows(&csr.program, "sparse_assemble", count * map.per_element, &args)?;
        first += count;
    }
    dev.finish()?;
    Ok(csr)
}

/// The fixed DOFs as a per-DOF flag and value; checks lengths and indices.
fn dirichlet_values(n: usize, fixed: &[u32], values: &[f64], rhs: usize) -> Result<(Vec<u8>, Vec<f64>)> {
    check_len("Dirichlet values (one per fixed DOF)", fixed.len(), values.len())?;
    check_len("right-hand side (one per DOF)", n, rhs)?;
    let mut mask = vec![0u8; n];
    let mut g = vec![0.0; n];
    for (&i, &v) in fixed.iter().zip(values) {
        let i = i as usize;
        if i >= n {
            return Err(Error::InvalidConfig(format!(
                "fixed DOF {i} is out of range: the matrix has {n} DOFs"
            )));
        }
        if !v.is_finite() {
            return Err(Error::InvalidConfig(format!(
                "fixed DOF {i} has the non-finite value {v}"
            )));
        }
        if mask[i] != 0 && g[i] != v {
            return Err(Error::InvalidConfig(format!(
                "DOF {i} is fixed twice, to {} and to {v}; fix each DOF to one value",
                g[i]
            )));
        }
        mask[i] = 1;
        g[i] = v;
    }
    Ok((mask, g))
}

/// [`Error::NotPositiveDefinite`] at the first row of `rows` whose diagonal entry is not positive.
fn check_diagonal(diag: &[f64], rows: impl IntoIterator<Item = usize>, role: &str) -> Result<()> {
    for r in rows {
        let d = diag.get(r).copied().unwrap_or(0.0);
        if !(d > 0.0 && d.is_finite()) {
            return Err(Error::NotPositiveDefinite {
                what: format!("the diagonal entry A[{r}][{r}]{role}"),
                value: d,
            });
        }
    }
    Ok(())
}

/// Imposes `u[fixed[k]] = values[k]` on `A u = b`, keeping `A` symmetric: for every free `j`,
/// `b_j -= A_ji g_i` over the fixed `i`; for fixed `i`, `b_i = A_ii g_i`; the rows and columns of
/// fixed DOFs are zeroed except their diagonal, which is kept. Done on the device; `rhs` is
/// uploaded and overwritten with the result.
///
/// Fails with [`Error::LengthMismatch`] unless `values` matches `fixed` and `rhs` has `n` entries,
/// [`Error::InvalidConfig`] for a DOF out of range, a non-finite value or one DOF fixed to two
/// values, and [`Error::NotPositiveDefinite`] when a fixed DOF's diagonal is not positive; the
/// matrix and `rhs` are then unchanged.
pub fn apply_dirichlet(csr: &mut DeviceCsr, fixed: &[u32], values: &[f64], rhs: &mut [f64]) -> Result<()> {
    let (mask, g) = dirichlet_values(csr.n(), fixed, values, rhs.len())?;
    if fixed.is_empty() {
        return Ok(());
    }
    let diag = csr.diagonal()?.to_vec()?;
    check_diagonal(&diag, fixed.iter().map(|&i| i as usize), " of a fixed DOF")?;
    let dev = csr.device().clone();
    let mask = Buffer::from_slice(&dev, &mask)?;
    let g = Buffer::from_slice(&dev, &g)?;
    let b = Buffer::from_slice(&dev, rhs)?;
    let args = [
        ("row_ptr", Arg::buffer(&csr.row_ptr)),
        ("cols", Arg::buffer(&csr.cols)),
        ("values", Arg::buffer(&csr.values)),
        ("fixed", Arg::buffer(&mask)),
        ("g", Arg::buffer(&g)),
        ("b", Arg::buffer(&b)),
        ("n", Arg::u32(csr.n32()?)),
    ];
    launch_rows(&csr.program, "sparse_dirichlet", csr.n(), &args)?;
    b.read(rhs)
}

/// [`apply_dirichlet`] on the host, with the same arithmetic in the same order.
pub fn apply_dirichlet_host(a: &mut HostCsr, fixed: &[u32], values: &[f64], rhs: &mut [f64]) -> Result<()> {
    let (mask, g) = dirichlet_values(a.n(), fixed, values, rhs.len())?;
    if fixed.is_empty() {
        return Ok(());
    }
    check_diagonal(&a.diagonal(), fixed.iter().map(|&i| i as usize), " of a fixed DOF")?;
    for (r, b) in rhs.iter_mut().enumerate() {
        let range = a.pattern.row(r);
        let cols = &a.pattern.cols[range.clone()];
        let vals = &mut a.values[range];
        if mask[r] != 0 {
            let mut d = 0.0;
            for (&c, v) in cols.iter().zip(vals.iter_mut()) {
                if c as usize == r {
                    d = *v;
                } else {
                    *v = 0.0;
                }
            }
            *b = d * g[r];
        } else {
            for (&c, v) in cols.iter().zip(vals.iter_mut()) {
                if mask[c as usize] != 0 {
                    *b -= *v * g[c as usize];
                    *v = 0.0;
                }
            }
        }
    }
    Ok(())
}

/// Launches `kernel` of the sparse program over `n` items in whole work-groups of up to 128
/// (the kernels skip items from `n`): left to the driver, a row count with awkward factors can
/// get work-groups of a few work-items (docs/PERFORMANCE.md, 2026-11-27).
fn launch_rows(program: &Program, kernel: &str, n: usize, named: &[(&str, Arg<'_>)]) -> Result<()> {
    let args = SIGNATURES.bind(kernel, named)?;
    let limit = program.kernel_limits(kernel)?.work_group_size;
    let group = 1usize << limit.clamp(1, 128).ilog2();
    let global = n.div_ceil(group) * group;
    index32(|| format!("{n} work-items of `{kernel}`"), global)?;
    program.launch(kernel, &[global], Some(&[group]), &args)?;
    Ok(())
}

/// The launch geometry the solvers' vector kernels share over one matrix: whole power-of-two
/// work-groups (the reductions' [`reduction_group`]) covering its rows.
struct Rows<'a> {
    csr: &'a DeviceCsr,
    n: u32,
    /// Work-items: `groups · group ≥ n`.
    global: usize,
    group: usize,
}

impl<'a> Rows<'a> {
    fn new(csr: &'a DeviceCsr) -> Result<Rows<'a>> {
        let n = csr.n();
        let group = reduction_group(&csr.program, csr.device())?;
        let global = n.div_ceil(group) * group;
        // The padded work-items must fit the kernels' indices too.
        index32(|| format!("a matrix of {n} rows"), global)?;
        Ok(Rows {
            csr,
            n: csr.n32()?,
            global,
            group,
        })
    }

    /// Work-groups launched.
    fn groups(&self) -> usize {
        self.global / self.group
    }

    /// A reduction's `__local` scratch: one `double` per work-item of a group.
    fn scratch(&self) -> Arg<'static> {
        Arg::local(self.group * size_of::<f64>())
    }

    /// A vector of `n` entries on the device: `x0`, or zeros.
    fn start(&self, x0: Option<&[f64]>) -> Result<Buffer<f64>> {
        let dev = self.csr.device();
        Ok(match x0 {
            Some(x0) => Buffer::from_slice(dev, x0)?,
            None => Buffer::new(dev, self.csr.n())?,
        })
    }

    fn launch(&self, kernel: &str, named: &[(&str, Arg<'_>)]) -> Result<()> {
        let args = SIGNATURES.bind(kernel, named)?;
        self.csr
            .program
            .launch(kernel, &[self.global], Some(&[self.group]), &args)?;
        Ok(())
    }

    /// `out = A input` (BiCGStab's and GMRES's product).
    fn spmv(&self, input: &Buffer<f64>, out: &Buffer<f64>) -> Result<()> {
        let csr = self.csr;
        self.launch(
            "sparse_spmv",
            &[
                ("row_ptr", Arg::buffer(&csr.row_ptr)),
                ("cols", Arg::buffer(&csr.cols)),
                ("values", Arg::buffer(&csr.values)),
                ("p", Arg::buffer(input)),
                ("q", Arg::buffer(out)),
                ("n", Arg::u32(self.n)),
            ],
        )
    }

    /// `(a·b, c·d)`, the work-groups' parts in `partial` (at least two per group) summed here.
    fn dot2(&self, partial: &Buffer<f64>, [a, b, c, d]: [&Buffer<f64>; 4]) -> Result<(f64, f64)> {
        self.launch(
            "sparse_dot2",
            &[
                ("a", Arg::buffer(a)),
                ("b", Arg::buffer(b)),
                ("c", Arg::buffer(c)),
                ("d", Arg::buffer(d)),
                ("partial", Arg::buffer(partial)),
                ("scratch", self.scratch()),
                ("n", Arg::u32(self.n)),
            ],
        )?;
        let parts = partial.to_vec()?;
        Ok(parts
            .chunks_exact(2)
            .take(self.groups())
            .fold((0.0, 0.0), |(a, b), pair| (a + pair[0], b + pair[1])))
    }
}

/// The work-group of the reducing kernels: the largest power of two within [`MAX_GROUP`], the
/// device's limits and each reducing kernel's own limit.
fn reduction_group(program: &Program, dev: &Device) -> Result<usize> {
    let info = dev.info();
    let mut limit = MAX_GROUP.min(info.max_work_group_size).min(info.max_work_item_sizes[0]);
    for kernel in REDUCING {
        limit = limit.min(program.kernel_limits(kernel)?.work_group_size);
    }
    let Some(log) = limit.checked_ilog2() else {
        return Err(Error::DeviceLimit {
            what: "the conjugate-gradient reductions".into(),
            needed: 1,
            limit: 0,
            limit_name: "CL_KERNEL_WORK_GROUP_SIZE",
            hint: "select another device".into(),
        });
    };
    Ok(1 << log)
}

#[cfg(test)]
mod tests {
    use super::cg::zero_solution;
    use super::*;
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};
    use std::collections::BTreeSet;

    fn random_map(rng: &mut SmallRng, dofs: usize, ne: usize, elements: usize) -> DofMap {
        let mut index = Vec::new();
        let mut sign = Vec::new();
        for _ in 0..elements {
            let mut chosen = BTreeSet::new();
            while chosen.len() < ne {
                chosen.insert(rng.random_range(0..dofs as u32));
            }
            let mut local: Vec<u32> = chosen.into_iter().collect();
            // Shuffle so that local order is not sorted.
            for i in (1..local.len()).rev() {
                local.swap(i, rng.random_range(0..=i));
            }
            index.extend(local);
            sign.extend((0..ne).map(|_| if rng.random_bool(0.5) { 1i8 } else { -1 }));
        }
        DofMap::new(dofs, ne, index, sign).unwrap()
    }

    #[test]
    fn dof_map_rejects_bad_input() {
        let invalid = |r: Result<DofMap>, part: &str| match r {
            Err(Error::InvalidConfig(m)) => assert!(m.contains(part), "{m:?} lacks {part:?}"),
            other => panic!("expected InvalidConfig({part}), got {other:?}"),
        };
        invalid(DofMap::new(4, 0, vec![], vec![]), "per_element");
        invalid(DofMap::new(0, 2, vec![0, 1], vec![1, 1]), "dofs");
        invalid(DofMap::new(4, 2, vec![], vec![]), "at least one element");
        invalid(DofMap::new(4, 2, vec![0, 1, 2], vec![1; 3]), "whole number");
        invalid(DofMap::new(4, 2, vec![0, 1, 2, 4], vec![1; 4]), "global DOF 4");
        invalid(DofMap::new(4, 2, vec![0, 1, 2, 2], vec![1; 4]), "twice");
        invalid(DofMap::new(4, 2, vec![0, 1, 2, 3], vec![1, 1, 0, 1]), "sign 0");
        invalid(DofMap::new(4, 2, vec![0, 1, 2, 3], vec![1, 1, 2, 1]), "sign 2");
        match DofMap::new(4, 2, vec![0, 1, 2, 3], vec![1; 3]) {
            Err(Error::LengthMismatch {
                expected: 4, found: 3, ..
            }) => {}
            other => panic!("expected LengthMismatch, got {other:?}"),
        }
        match DofMap::new(usize::MAX, 1, vec![0], vec![1]) {
            Err(Error::TooLarge { .. }) => {}
            other => panic!("expected TooLarge, got {other:?}"),
        }
        // The same DOF in two elements is fine; the same DOF twice in one is not.
        let map = DofMap::new(3, 2, vec![0, 1, 1, 2], vec![1, -1, 1, 1]).unwrap();
        assert_eq!((map.elements(), map.per_element(), map.dofs()), (2, 2, 3));
        assert_eq!((map.packed(), map.ke_len()), (3, 6));
        assert_eq!(map.element_dofs(1), [1, 2]);
        assert_eq!(map.element_signs(0), [1, -1]);
        assert!(map.element_dofs(2).is_empty());
    }

    #[test]
    fn colouring_is_valid_on_random_maps() {
        let mut rng = SmallRng::seed_from_u64(7);
        for case in 0..60 {
            let dofs = rng.random_range(1..80);
            let ne = rng.random_range(1..=dofs.min(9));
            let elements = rng.random_range(1..120);
            let map = random_map(&mut rng, dofs, ne, elements);
            let colours = colour(&map);
            check_colours(&map, &colours).unwrap();
            // Independently: every element once, no shared DOF within a colour.
            let mut all: Vec<u32> = colours.concat();
            all.sort_unstable();
            assert_eq!(all, (0..elements as u32).collect::<Vec<_>>(), "case {case}");
            for members in &colours {
                assert!(!members.is_empty());
                let mut used = BTreeSet::new();
                for &e in members {
                    for &d in map.element_dofs(e as usize) {
                        assert!(used.insert(d), "case {case}: DOF {d} twice in one colour");
                    }
                }
            }
            // Greedy: each element of colour c > 0 meets every lower colour.
            for (c, members) in colours.iter().enumerate() {
                for &e in members {
                    let mine: BTreeSet<u32> = map.element_dofs(e as usize).iter().copied().collect();
                    for lower in &colours[..c] {
                        assert!(lower
                            .iter()
                            .any(|&f| map.element_dofs(f as usize).iter().any(|d| mine.contains(d))));
                    }
                }
            }
        }
    }

    #[test]
    fn check_colours_rejects_bad_colourings() {
        let map = DofMap::new(4, 2, vec![0, 1, 1, 2, 2, 3], vec![1; 6]).unwrap();
        let invalid = |colours: &[Vec<u32>], part: &str| match check_colours(&map, colours) {
            Err(Error::InvalidConfig(m)) => assert!(m.contains(part), "{m:?} lacks {part:?}"),
            other => panic!("expected InvalidConfig({part}), got {other:?}"),
        };
        invalid(&[vec![0, 1], vec![2]], "share global DOF 1");
        invalid(&[vec![0, 2], vec![1, 0]], "twice");
        invalid(&[vec![0, 2]], "element 1 is in no colour");
        invalid(&[vec![0, 2], vec![1, 3]], "holds element 3");
        check_colours(&map, &[vec![0], vec![2], vec![], vec![1]]).unwrap();
    }

    #[test]
    fn pattern_is_the_set_of_pairs() {
        let mut rng = SmallRng::seed_from_u64(11);
        for _ in 0..40 {
            let dofs = rng.random_range(1..60);
            let ne = rng.random_range(1..=dofs.min(7));
            let elements = rng.random_range(1..50);
            let map = random_map(&mut rng, dofs, ne, elements);
            let mut want = BTreeSet::new();
            for d in 0..dofs as u32 {
                want.insert((d, d));
            }
            for e in 0..map.elements() {
                for &i in map.element_dofs(e) {
                    for &j in map.element_dofs(e) {
                        want.insert((i, j));
                    }
                }
            }
            let p = pattern(&map).unwrap();
            assert_eq!(p.n(), dofs);
            assert_eq!(p.row_ptr().len(), dofs + 1);
            let mut got = BTreeSet::new();
            for r in 0..dofs {
                let cols = &p.cols()[p.row(r)];
                assert!(cols.windows(2).all(|w| w[0] < w[1]), "row {r} not strictly increasing");
                got.extend(cols.iter().map(|&c| (r as u32, c)));
            }
            assert_eq!(got, want);
            assert_eq!(p.nnz(), want.len());
        }
    }

    #[test]
    fn host_assembly_matches_dense_and_mul() {
        let mut rng = SmallRng::seed_from_u64(3);
        let map = random_map(&mut rng, 12, 4, 9);
        let ke: Vec<f64> = (0..map.ke_len()).map(|_| rng.random_range(-1.0..1.0)).collect();
        let a = assemble_host(&ke, &map).unwrap();
        let n = map.dofs();
        let mut dense = vec![0.0; n * n];
        for e in 0..map.elements() {
            let (d, s) = (map.element_dofs(e), map.element_signs(e));
            for i in 0..4 {
                for j in 0..4 {
                    let (hi, lo) = (i.max(j), i.min(j));
                    let k = ke[e * map.packed() + hi * (hi + 1) / 2 + lo];
                    dense[d[i] as usize * n + d[j] as usize] += f64::from(s[i] * s[j]) * k;
                }
            }
        }
        for r in 0..n {
            for c in 0..n {
                assert!((a.get(r, c) - dense[r * n + c]).abs() <= 1e-14, "({r}, {c})");
            }
        }
        let x: Vec<f64> = (0..n).map(|i| i as f64 - 3.5).collect();
        let y = a.mul(&x).unwrap();
        for r in 0..n {
            let want: f64 = (0..n).map(|c| dense[r * n + c] * x[c]).sum();
            assert!((y[r] - want).abs() <= 1e-12, "row {r}");
        }
        assert!(matches!(a.mul(&x[1..]), Err(Error::LengthMismatch { .. })));
        assert!(matches!(
            assemble_host(&ke[1..], &map),
            Err(Error::LengthMismatch { .. })
        ));
    }

    #[test]
    fn host_cg_checks_its_input() {
        let map = DofMap::new(3, 2, vec![0, 1, 1, 2], vec![1; 4]).unwrap();
        // Two springs in series, the first end grounded by a third term on its diagonal.
        let a = assemble_host(&[2.0, -1.0, 1.0, 1.0, -1.0, 1.0], &map).unwrap();
        let opts = CgOptions::default();
        let sol = cg_host(&a, &[0.0, 0.0, 1.0], None, &opts).unwrap();
        for (got, want) in sol.x.iter().zip([1.0, 2.0, 3.0]) {
            assert!((got - want).abs() < 1e-12, "{:?}", sol.x);
        }
        assert!(sol.residual <= opts.tol);
        assert_eq!(cg_host(&a, &[0.0; 3], None, &opts).unwrap(), zero_solution(3));
        assert!(matches!(
            cg_host(&a, &[1.0; 2], None, &opts),
            Err(Error::LengthMismatch { .. })
        ));
        let bad_tol = CgOptions { tol: 0.0, ..opts };
        assert!(matches!(
            cg_host(&a, &[1.0; 3], None, &bad_tol),
            Err(Error::InvalidConfig(_))
        ));
        // Without the ground the matrix is singular with a constant null space; b = (0, 0, 1)
        // is not in its range.
        let floating = assemble_host(&[1.0, -1.0, 1.0, 1.0, -1.0, 1.0], &map).unwrap();
        let e = cg_host(&floating, &[0.0, 0.0, 1.0], None, &opts).unwrap_err();
        assert!(
            matches!(e, Error::NotConverged { .. } | Error::NotPositiveDefinite { .. }),
            "{e}"
        );
    }
}
