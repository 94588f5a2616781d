//! Element stiffness matrices formed on the device in f64 (seed 004), for any element of
//! `#[clforge::element]` (nodal or modal), and on the host's cores for a share of them.
//!
//! Every element `e` brings its geometry nodes' coordinates (`GEOMETRY_NODES × DIM`, the
//! vertices of a modal element, so distorted meshes are allowed) and its own material; `D` is
//! evaluated on the host by the element's `material` (times the thickness in 2-D) and uploaded,
//! so any material law works. The reference derivatives `∂N/∂ξ` at the Gauss points are
//! tabulated once from the element's generated `dshape`, the same function the host matrices
//! use. Output: for each element the lower triangle of `K_e` row by row (`K[I][J]`, `J ≤ I`, at
//! [`packed_index`]), kept on the device ([`Matrices`]) with a download path. With hierarchical
//! DOF ordering the packed matrix of order `p − 1` is a prefix of that of order `p`.
//!
//! Algorithms ([`Algorithm`]): the seed's I (one work-item per element) and II (one work-group
//! per element, a work-item per point, tree reduction in local memory; several elements per
//! group for low orders), and clforge's tiled kernel (each work-item keeps a tile of function
//! pairs in registers over all points; the group stages the mapped derivatives in local memory).
//!
//! ```no_run
//! # fn demo<E: clforge_runtime::fem::Element>(coords: &[f64], mats: &[E::Material]) -> clforge_runtime::Result<()> {
//! use clforge_runtime::{fem::forming::Forming, Device};
//! let dev = Device::default()?;
//! let forming = Forming::<E>::new(&dev)?;
//! let elements = forming.upload(coords, mats)?;
//! let (k, _event) = forming.form(&elements, forming.default_algorithm())?;
//! let first = k.matrix(0)?; // K_0 as a dense matrix, downloaded
//! # Ok(()) }
//! ```

pub mod hybrid;

use crate::buffer::Buffer;
use crate::device::Device;
use crate::element::matrices::jacobian;
use crate::element::matrices::Matrix;
use crate::element::spec::Element;
use crate::error::{Error, Result};
use crate::program::{Event, Program};
use clforge_abi::modal::{points_per_group, Mma, Staging, Tiling};
use std::marker::PhantomData;

/// Extra build options for the forming kernels, for probes that time a kernel with part of
/// its work switched off (`-D CLFORGE_PROBE_NO_PRODUCTS`, ...): its matrices are then wrong.
/// Never set in normal use.
pub const PROBE_ENV: &str = "CLFORGE_FORMING_PROBE";

/// Where `K[i][j]` (`j ≤ i`) of one element lies in its packed lower triangle.
pub const fn packed_index(i: usize, j: usize) -> usize {
    i * (i + 1) / 2 + j
}

/// Entries of a packed symmetric matrix of size `n`.
pub const fn packed_len(n: usize) -> usize {
    n * (n + 1) / 2
}

/// What [`Forming::tune`] found: the fastest candidate, and each candidate's median time in
/// seconds (`None` where the device refused it), in the order given.
#[derive(Clone, Debug, PartialEq)]
pub struct TunedAlgorithm {
    /// The candidate with the smallest median time.
    pub best: Algorithm,
    /// Every candidate with its median time in seconds, or `None` where the device refused it.
    pub times: Vec<(Algorithm, Option<f64>)>,
}

/// How the element matrices are formed on the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algorithm {
    /// Seed 004's algorithm I: one work-item per element, `K_e` accumulated in global memory.
    PerElement,
    /// Seed 004's algorithm II: a work-item per Gauss point, `elements` elements per work-group
    /// (1 for the seed's algorithm II, more for its warp variant at low orders); each 3×3 block
    /// is reduced over the points by a pairwise tree in local memory.
    PerPoint {
        /// Elements per work-group.
        elements: usize,
    },
    /// Register tiles of function pairs over all points, derivatives staged in local memory.
    Tiled(Tiling),
    /// Register tiles of function pairs over all points; derivatives and `w det J · D · B_b`
    /// staged in local memory once per group and point (`J⁻¹` and `w det J` from a pre-pass
    /// in global memory with `Staging::pre`).
    Staged(Staging),
    /// Elasticity in moment form as 8 x 8 x 4 f64 matrix products: tensor cores (`mma.sync`)
    /// on NVIDIA GPUs from sm_80, the same products per work-item on other devices; `J⁻¹`
    /// and `w det J` from the geometry pre-pass.
    Mma(Mma),
}

impl Algorithm {
    /// The kernel measured fastest for `E`'s size (H100, m = 10 000 trunk hexahedra,
    /// docs/ELEMENT-MATRICES.md): for elasticity from 16 functions (trunk p ≥ 2) the staged
    /// kernel in moment form (18 and 57 ms at p = 5, 6, against 41 and 115 ms with `B_aᵀ D B_b`
    /// after the pre-pass and 67 and 174 ms tiled); for other operators from 64 functions the
    /// staged kernel after the geometry pre-pass; else the tiled kernel; default shapes.
    pub fn default_for<E: Element>() -> Algorithm {
        let s = E::OPERATOR.strains(E::DIM);
        let elasticity = E::DOFS == E::DIM
            && matches!(
                E::OPERATOR,
                super::Operator::Elasticity | super::Operator::PlaneStress | super::Operator::PlaneStrain
            );
        if elasticity && E::NODES >= 16 {
            Algorithm::Staged(default_staging::<E>().with_moments(true, E::NODES, points::<E>(), E::DIM, E::DOFS, s))
        } else if E::NODES >= 64 {
            Algorithm::Staged(default_staging::<E>().with_pre(true, E::NODES, points::<E>(), E::DIM, E::DOFS, s))
        } else {
            Algorithm::Tiled(default_tiling::<E>())
        }
    }

    /// A short name for reports (`ai`, `aii`, `aii-x4`, `tiled-2x128x1x16`, `staged-4x2x128x1x4`).
    pub fn label(&self) -> String {
        match self {
            Algorithm::PerElement => "ai".into(),
            Algorithm::PerPoint { elements: 1 } => "aii".into(),
            Algorithm::PerPoint { elements } => format!("aii-x{elements}"),
            Algorithm::Tiled(t) => format!("tiled-{}x{}x{}x{}", t.ts, t.wt, t.epg, t.qc),
            Algorithm::Staged(t) => format!(
                "staged-{}x{}x{}x{}x{}{}",
                t.ta,
                t.tb,
                t.wt,
                t.epg,
                t.qc,
                if t.moments {
                    "-mom"
                } else if t.pre {
                    "-pre"
                } else {
                    ""
                }
            ),
            Algorithm::Mma(t) => format!(
                "mma-{}x{}x{}{}{}{}",
                t.spw,
                t.warps,
                t.qc,
                if t.rows > 1 {
                    format!("-r{}", t.rows)
                } else {
                    String::new()
                },
                if t.double_buffer { "-db" } else { "" },
                if t.tensor_contraction { "-tc" } else { "" }
            ),
        }
    }
}

/// Whether `E`'s operator has the moment form (elasticity with one DOF per axis).
fn has_moments<E: Element>() -> bool {
    E::DOFS == E::DIM
        && matches!(
            E::OPERATOR,
            super::Operator::Elasticity | super::Operator::PlaneStress | super::Operator::PlaneStrain
        )
}

/// The tensor-core moment kernel's default launch shape for `E` (`clforge_abi::modal::Mma::default_for`).
pub fn default_mma<E: Element>() -> Mma {
    Mma::default_for(E::NODES, E::DIM, E::OPERATOR.strains(E::DIM))
}

/// The moment kernels refuse other operators.
fn not_elasticity<E: Element>(what: &str) -> Error {
    Error::InvalidConfig(format!(
        "{what}: moments need an elasticity operator (dofs = dim); `{}` is {:?} with {} DOFs per node in {}-D",
        E::NAME,
        E::OPERATOR,
        E::DOFS,
        E::DIM
    ))
}

/// Points of `E`'s rule (`Cell::points`).
fn points<E: Element>() -> usize {
    E::CELL.points(E::DIM, E::QUADRATURE)
}

/// The tiled kernel's default launch shape for `E` (`clforge_abi::modal::Tiling::default_for`).
pub fn default_tiling<E: Element>() -> Tiling {
    Tiling::default_for(E::NODES, points::<E>(), E::DIM, E::OPERATOR.strains(E::DIM))
}

/// The staged kernel's default launch shape for `E` (`clforge_abi::modal::Staging::default_for`).
pub fn default_staging<E: Element>() -> Staging {
    Staging::default_for(E::NODES, points::<E>(), E::DIM, E::DOFS, E::OPERATOR.strains(E::DIM))
}

/// `dref[q][axis][f] = ∂N_f/∂ξ_axis` at the Gauss points and the weights `w_q`, points in the
/// order of [`crate::element::matrices::quadrature_points`] (first axis slowest). An element
/// whose operator reads values (`Operator::Full`) has no such tables: its refusal is here.
pub fn tables<E: Element>() -> Result<(Vec<f64>, Vec<f64>)> {
    if let super::Operator::Full { .. } = E::OPERATOR {
        return Err(Error::InvalidConfig(format!(
            "element `{}`'s stiffness form reads values (operator `full`): the forming kernels and their host \
             reference take gradient forms only; form its matrices on the host (`matrices::stiffness`, or per \
             element in `stepper::Model::per_element`)",
            E::NAME
        )));
    }
    let points = crate::element::matrices::quadrature_points::<E>()?;
    let mut dref = Vec::with_capacity(points.len() * E::DIM * E::NODES);
    let mut w = Vec::with_capacity(points.len());
    for (local, wq) in points {
        let d = E::dshape(local);
        if d.rows() != E::DIM || d.cols() != E::NODES {
            return Err(Error::InvalidConfig(format!(
                "`{}::dshape` returned {}×{}, expected {}×{}",
                E::NAME,
                d.rows(),
                d.cols(),
                E::DIM,
                E::NODES
            )));
        }
        dref.extend_from_slice(d.data());
        w.push(wq);
    }
    Ok((dref, w))
}

/// The magnitudes of a non-zero material entry that device forming takes: `2^-800..=2^800`
/// (about 1.5e-241 to 6.7e240). Beyond them the products with the geometry terms become
/// subnormal or overflow, and kernels that sum in different orders disagree by far more than
/// rounding; inside them every algorithm agrees with [`form_host`] to 1e-12.
pub const MATERIAL_RANGE: std::ops::RangeInclusive<f64> =
    f64::from_bits(((1023 - 800) as u64) << 52)..=f64::from_bits(((1023 + 800) as u64) << 52);

/// [`materials`] for the device kernels: every non-zero entry within [`MATERIAL_RANGE`].
pub(crate) fn device_materials<E: Element>(materials: &[E::Material]) -> Result<Vec<f64>> {
    let de = self::materials::<E>(materials)?;
    let s2 = E::OPERATOR.strains(E::DIM).pow(2);
    let outside = |v: &f64| *v != 0.0 && !MATERIAL_RANGE.contains(&v.abs());
    if let Some(i) = de.iter().position(outside) {
        return Err(Error::InvalidConfig(format!(
            "element {} of type `{}`: its material matrix (times the thickness) holds {:e}, outside the \
             {:e}..{:e} that device forming keeps to full precision (its products with the geometry \
             would leave f64's normal range); express the moduli in other units, or form on the host \
             (`form_host`)",
            i / s2,
            E::NAME,
            de[i],
            MATERIAL_RANGE.start(),
            MATERIAL_RANGE.end()
        )));
    }
    Ok(de)
}

/// `D` of every element (times the thickness in 2-D), `strains²` each, row-major.
pub(crate) fn materials<E: Element>(materials: &[E::Material]) -> Result<Vec<f64>> {
    let s = E::OPERATOR.strains(E::DIM);
    let mut out = Vec::with_capacity(materials.len() * s * s);
    for (e, m) in materials.iter().enumerate() {
        let d = E::material(m);
        crate::element::matrices::check_material::<E>(&d, Some(e))?;
        let t = if E::DIM == 2 { E::thickness(m) } else { 1.0 };
        if !(t > 0.0 && t.is_finite()) {
            return Err(Error::InvalidConfig(format!(
                "element {e} of type `{}` has thickness {t}; it must be positive and finite",
                E::NAME
            )));
        }
        if let Some(v) = d.data().iter().find(|v| !v.is_finite()) {
            return Err(Error::InvalidConfig(format!(
                "element {e} of type `{}`: its material matrix holds {v}; every entry must be finite",
                E::NAME
            )));
        }
        out.extend(d.data().iter().map(|v| v * t));
    }
    Ok(out)
}

/// Checks the coordinate array: `m · GEOMETRY_NODES · DIM` finite numbers for `m` materials.
pub(crate) fn check_coords<E: Element>(coords: &[f64], m: usize) -> Result<()> {
    let per = E::GEOMETRY_NODES * E::DIM;
    let expected = m.checked_mul(per).ok_or_else(|| Error::TooLarge {
        what: format!("coordinates of {m} `{}` elements", E::NAME),
        detail: "the count overflows usize".into(),
    })?;
    if coords.len() != expected {
        return Err(Error::LengthMismatch {
            what: format!(
                "node coordinates of {m} `{}` elements ({} nodes × {} axes each, one material per element)",
                E::NAME,
                E::GEOMETRY_NODES,
                E::DIM
            ),
            expected,
            found: coords.len(),
        });
    }
    if let Some(i) = coords.iter().position(|v| !v.is_finite()) {
        return Err(Error::InvalidConfig(format!(
            "coordinate {} of node {} of element {} is {}; coordinates must be finite",
            i % E::DIM,
            (i / E::DIM) % E::GEOMETRY_NODES,
            i / per,
            coords[i]
        )));
    }
    Ok(())
}

/// The element-matrix kernels of `E`, built for one device, with their reference tables.
#[derive(Debug)]
pub struct Forming<E: Element> {
    pub(crate) dev: Device,
    /// The generated launchers of `E`'s forming kernels.
    pub(crate) kernels: &'static dyn FormingKernels,
    pub(crate) dref: Buffer<f64>,
    pub(crate) w: Buffer<f64>,
    /// The most bytes the staged kernel's geometry pre-pass writes per batch of elements.
    pub(crate) geometry_batch_bytes: usize,
    /// Whether the device takes `mma.sync` f64 ([`Forming::tensor_cores`]), probed once.
    pub(crate) dmma: std::sync::OnceLock<bool>,
    /// Whether the 16 × 8 × 4 f64 product builds here ([`Forming::tensor_cores16`]).
    pub(crate) dmma16: std::sync::OnceLock<bool>,
    pub(crate) _element: PhantomData<fn() -> E>,
}

/// The elements' inputs on the device: coordinates and material matrices.
#[derive(Debug)]
pub struct Elements {
    pub(crate) xe: Buffer<f64>,
    pub(crate) de: Buffer<f64>,
    pub(crate) m: usize,
}

impl Elements {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.m
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.m == 0
    }
}

/// Packed element matrices on the device: element `e`'s lower triangle at `e · packed_len(ne)`.
#[derive(Debug)]
pub struct Matrices {
    /// The packed matrices.
    pub ke: Buffer<f64>,
    pub(crate) m: usize,
    pub(crate) ne: usize,
}

impl Matrices {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.m
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.m == 0
    }

    /// DOFs per element (`K_e` is `ne × ne`).
    pub fn ne(&self) -> usize {
        self.ne
    }

    /// All packed matrices, downloaded.
    pub fn to_host(&self) -> Result<Vec<f64>> {
        self.ke.to_vec()
    }

    /// `K_e` of element `e` as a dense symmetric matrix, downloaded.
    pub fn matrix(&self, e: usize) -> Result<Matrix> {
        if e >= self.m {
            return Err(Error::InvalidConfig(format!(
                "element {e} of {} formed matrices",
                self.m
            )));
        }
        let all = self.ke.to_vec()?;
        let p = packed_len(self.ne);
        Ok(unpack(&all[e * p..(e + 1) * p], self.ne))
    }
}

/// A packed lower triangle of size `n` as a dense symmetric matrix.
pub fn unpack(packed: &[f64], n: usize) -> Matrix {
    Matrix::from_fn(n, n, |i, j| {
        let (i, j) = if j <= i { (i, j) } else { (j, i) };
        packed.get(packed_index(i, j)).copied().unwrap_or(f64::NAN)
    })
}

fn to_i32(v: usize, what: &str) -> Result<i32> {
    i32::try_from(v).map_err(|_| Error::TooLarge {
        what: what.to_string(),
        detail: format!("{v} exceeds the kernels' 32-bit index {}", i32::MAX),
    })
}

impl<E: Element> Forming<E> {
    /// Uploads `E`'s reference tables and checks that it has generated kernels.
    pub fn new(dev: &Device) -> Result<Forming<E>> {
        // First: an element the kernels cannot form is refused with the reason.
        let (dref, w) = tables::<E>()?;
        let kernels = match E::forming_kernels() {
            Some(k) if !E::forming_source().is_empty() => k,
            _ => {
                return Err(Error::InvalidConfig(format!(
                    "element `{}` has no generated element-matrix kernels; declare it with `#[clforge::element]`",
                    E::NAME
                )))
            }
        };
        Ok(Forming {
            dev: dev.clone(),
            kernels,
            dref: Buffer::from_slice(dev, &dref)?,
            w: Buffer::from_slice(dev, &w)?,
            // Half the device's largest allocation, so the batch's buffer always fits beside K_e.
            geometry_batch_bytes: usize::try_from(dev.info().max_alloc_bytes / 2).unwrap_or(usize::MAX),
            dmma: std::sync::OnceLock::new(),
            dmma16: std::sync::OnceLock::new(),
            _element: PhantomData,
        })
    }

    /// Caps the geometry pre-pass's buffer (`Staging::pre`): elements are formed in batches
    /// whose `J⁻¹` and `w det J` fit in `bytes` (at least one element per batch).
    pub fn with_geometry_batch_bytes(mut self, bytes: usize) -> Forming<E> {
        self.geometry_batch_bytes = bytes;
        self
    }

    /// The device the kernels run on.
    pub fn device(&self) -> &Device {
        &self.dev
    }

    /// Uploads `m` elements: `coords` holds `GEOMETRY_NODES × DIM` numbers per element (in the
    /// order of the element's `NODES`), `materials` one material per element.
    pub fn upload(&self, coords: &[f64], materials: &[E::Material]) -> Result<Elements> {
        check_coords::<E>(coords, materials.len())?;
        let de = device_materials::<E>(materials)?;
        self.upload_checked(coords, &de)
    }

    /// Uploads checked coordinates and material matrices (from [`materials`]).
    pub(crate) fn upload_checked(&self, coords: &[f64], de: &[f64]) -> Result<Elements> {
        let s = E::OPERATOR.strains(E::DIM);
        let m = de.len() / (s * s);
        Ok(Elements {
            xe: Buffer::from_slice(&self.dev, if coords.is_empty() { &[0.0] } else { coords })?,
            de: Buffer::from_slice(&self.dev, if de.is_empty() { &[0.0] } else { de })?,
            m,
        })
    }

    pub(crate) fn program(&self, algo: Algorithm) -> Result<Program> {
        let options = match algo {
            Algorithm::PerElement => String::new(),
            Algorithm::PerPoint { elements } => format!("-D AEPG={elements} -D QP={}", points_per_group(points::<E>())),
            Algorithm::Tiled(t) => format!("-D TS={} -D WT={} -D EPG={} -D QC={}", t.ts, t.wt, t.epg, t.qc),
            Algorithm::Staged(t) => format!(
                "-D TA={} -D TB={} -D SWT={} -D SEPG={} -D SQC={} -D NBS={} -D SPRE={} -D SMOM={}",
                t.ta,
                t.tb,
                t.wt,
                t.epg,
                t.qc,
                t.span(E::NODES),
                u8::from(t.pre || t.moments),
                u8::from(t.moments)
            ),
            Algorithm::Mma(t) => format!(
                "-D MSPW={} -D MRW={} -D MW={} -D MQC={} -D MQS={} -D MDB={} -D MTC={}",
                t.spw,
                t.rows,
                t.warps,
                t.qc,
                t.stride(),
                u8::from(t.double_buffer),
                u8::from(t.tensor_contraction)
            ),
        };
        let options = format!("-D NQ={} {options}", points::<E>());
        let options = if matches!(algo, Algorithm::Mma(_)) && self.tensor_cores() {
            let wide = if self.tensor_cores16() {
                " -D CLFORGE_DMMA16=1"
            } else {
                ""
            };
            format!("{options} -D CLFORGE_DMMA=1{wide}")
        } else {
            options
        };
        // Extra build options for probing the kernels' costs (defines that make them skip work,
        // so their results are wrong): a measurement aid, see docs/ELEMENT-MATRICES.md.
        let options = match std::env::var(PROBE_ENV) {
            Ok(extra) if !extra.trim().is_empty() => format!("{options} {extra}"),
            _ => options,
        };
        self.dev.program(E::NAME, E::forming_source(), &options)
    }

    /// The kernel for `E` on this device: [`Algorithm::Mma`] for elasticity from 32 functions
    /// (trunk p ≥ 3) where it runs on tensor cores (measured faster than the staged moment
    /// kernel at p = 3, 4 and 6 on the H100, equal at p = 5), else [`Algorithm::default_for`].
    pub fn default_algorithm(&self) -> Algorithm {
        if has_moments::<E>() && E::NODES >= 32 && self.tensor_cores() {
            Algorithm::Mma(default_mma::<E>())
        } else {
            Algorithm::default_for::<E>()
        }
    }

    /// The kernels [`Forming::tune`] tries for `E` on this device: the default, the staged and
    /// tiled kernels' default shapes, and for elasticity in moment form (from 16 functions)
    /// the tensor-core kernel in the shapes measured fastest on the H100 at some order
    /// (docs/ELEMENT-MATRICES.md), with and without the contraction on tensor cores where the
    /// device has them. Shapes past the device's local memory are left out.
    pub fn candidates(&self) -> Vec<Algorithm> {
        let s = E::OPERATOR.strains(E::DIM);
        let mut v = vec![
            self.default_algorithm(),
            Algorithm::default_for::<E>(),
            Algorithm::Tiled(default_tiling::<E>()),
        ];
        if has_moments::<E>() && E::NODES >= 16 {
            let local = usize::try_from(self.dev.info().local_mem_bytes).unwrap_or(usize::MAX);
            let tc = if self.tensor_cores16() {
                &[false, true][..]
            } else {
                &[false][..]
            };
            for (spw, rows, warps, qc) in [
                (2, 1, 8, 8),
                (2, 1, 8, 12),
                (2, 1, 8, 16),
                (3, 1, 8, 8),
                (3, 1, 8, 16),
                (2, 1, 10, 16),
                (1, 1, 8, 16),
                (2, 1, 4, 16),
                (2, 2, 8, 16),
                (2, 2, 8, 8),
                (2, 2, 4, 16),
            ] {
                for &tensor_contraction in tc {
                    let t = Mma {
                        spw,
                        rows,
                        warps,
                        qc,
                        double_buffer: false,
                        tensor_contraction,
                    };
                    if t.local_bytes(E::NODES, E::DIM, s) <= local {
                        v.push(Algorithm::Mma(t));
                    }
                }
            }
        }
        let mut out: Vec<Algorithm> = Vec::new();
        for a in v {
            if !out.contains(&a) {
                out.push(a);
            }
        }
        out
    }

    /// Times each of `candidates` forming `elements` (the median of `reps` profiled runs,
    /// after one untimed run), and returns the fastest with every candidate's time in seconds
    /// ([`TunedAlgorithm`]), `None` for one the device refused (a shape past its registers, local memory or
    /// work-group size: such a candidate is left out, not an error). The matrices are formed
    /// into a scratch buffer; nothing of `self` or `elements` changes. Errors: no elements, no
    /// candidates, `reps` 0, or every candidate refused (the first refusal is returned).
    pub fn tune(&self, elements: &Elements, candidates: &[Algorithm], reps: usize) -> Result<TunedAlgorithm> {
        if elements.m == 0 || candidates.is_empty() || reps == 0 {
            return Err(Error::InvalidConfig(format!(
                "tuning `{}`'s element-matrix kernels needs elements ({}), candidates ({}) and \
                 repetitions ({reps})",
                E::NAME,
                elements.m,
                candidates.len()
            )));
        }
        let ne = E::NODES * E::DOFS;
        let mut ke = Buffer::<f64>::new(&self.dev, elements.m.saturating_mul(packed_len(ne)).max(1))?;
        let mut times = Vec::with_capacity(candidates.len());
        let mut first_error: Option<Error> = None;
        let mut best: Option<(Algorithm, f64)> = None;
        for &a in candidates {
            let timed = Event::median_ns(reps, || self.form_into(elements, a, &mut ke)).map(|ns| ns as f64 / 1e9);
            match timed {
                Ok(t) => {
                    if best.is_none_or(|(_, b)| t < b) {
                        best = Some((a, t));
                    }
                    times.push((a, Some(t)));
                }
                Err(e) => {
                    first_error.get_or_insert(e);
                    times.push((a, None));
                }
            }
        }
        match best {
            Some((best, _)) => Ok(TunedAlgorithm { best, times }),
            None => Err(first_error.unwrap_or_else(|| Error::InvalidConfig("no candidate ran".into()))),
        }
    }

    /// Whether [`Algorithm::Mma`] runs on tensor cores here: an NVIDIA device whose compiler
    /// takes `mma.sync` f64 (sm_80 and later); elsewhere it computes the same products per
    /// work-item.
    pub fn tensor_cores(&self) -> bool {
        const PROBE: &str = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void clforge_dmma_probe(__global double* x) {
    double d0, d1;
    asm volatile(\"mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%4,%5};\"
                 : \"=d\"(d0), \"=d\"(d1) : \"d\"(x[0]), \"d\"(x[1]), \"d\"(x[2]), \"d\"(x[3]));
    x[get_local_id(0)] = d0 + d1;
}";
        self.dev.info().vendor.to_ascii_uppercase().contains("NVIDIA")
            && self.builds(&self.dmma, "clforge_dmma_probe", PROBE)
    }

    /// Whether the tensor cores here also take the 16 × 8 × 4 f64 product (sm_90 and later),
    /// which the H100 runs at twice the rate of 8 × 8 × 4 (66.6 against 33.4 TFLOP/s measured,
    /// `scripts/probes/dmma_shapes.cu`); [`Algorithm::Mma`] then uses it for pairs of row blocks.
    pub fn tensor_cores16(&self) -> bool {
        const PROBE: &str = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void clforge_dmma16_probe(__global double* x) {
    double d0, d1, d2, d3;
    asm volatile(\"mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%8,%9,%10};\"
                 : \"=d\"(d0), \"=d\"(d1), \"=d\"(d2), \"=d\"(d3)
                 : \"d\"(x[0]), \"d\"(x[1]), \"d\"(x[2]), \"d\"(x[3]), \"d\"(x[4]), \"d\"(x[5]), \"d\"(x[6]));
    x[get_local_id(0)] = d0 + d1 + d2 + d3;
}";
        self.tensor_cores() && self.builds(&self.dmma16, "clforge_dmma16_probe", PROBE)
    }

    /// Whether `source` builds on this device, asked once and kept in `cell` (the tensor-core
    /// probes: a compiler that does not take the instruction refuses the build).
    fn builds(&self, cell: &std::sync::OnceLock<bool>, name: &str, source: &str) -> bool {
        *cell.get_or_init(|| self.dev.program(name, source, "").is_ok())
    }

    /// Forms every element's `K_e` with `algo`, into a new device buffer. Returns the matrices
    /// and the kernel's event (for its device time). [`Error::DegenerateElement`] names the
    /// first element whose `det J` is not positive at some Gauss point.
    pub fn form(&self, elements: &Elements, algo: Algorithm) -> Result<(Matrices, Event)> {
        let ne = E::NODES * E::DOFS;
        let len = elements.m.checked_mul(packed_len(ne)).ok_or_else(|| Error::TooLarge {
            what: format!("packed matrices of {} `{}` elements", elements.m, E::NAME),
            detail: "the count overflows usize".into(),
        })?;
        let mut ke = Buffer::<f64>::new(&self.dev, len.max(1))?;
        let event = self.form_into(elements, algo, &mut ke)?;
        Ok((Matrices { ke, m: elements.m, ne }, event))
    }
}

mod host;
pub mod kernels;
mod launch;

pub use host::form_host;
pub(crate) use host::form_host_checked;
pub use kernels::FormingKernels;
