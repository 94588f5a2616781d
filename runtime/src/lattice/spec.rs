//! Running a `#[clforge::lattice]` rule: a sublattice schedule whose colouring the macro derives
//! from the rule's reads. With every read of the state at an odd offset (`|dx| + |dy| + |dz|`
//! odd) two colours suffice, the checkerboard `(x + y + z) % 2`; with every read having an odd
//! component (the 8 neighbours of a square, seed 003's 12 bond neighbours) the `2^rank` parity
//! classes `(x % 2) + 2 (y % 2) + 4 (z % 2)`. Either way the sites of one colour read only sites of
//! other colours and their own value: they update at once, in place, and the result does not
//! depend on their order. A step updates the colours in order; each site's random numbers are
//! `rng::site_draw(seed, step, site_key, k)` (Philox4x32-10, one block per four sites), the same on the host and the device, so the host
//! reference ([`host_sites`] in the generated `apply_host`) is bit for bit the device's result.

use crate::buffer::Scalar;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::grid::{Boundary, DeviceGrid, Shape, UpdateRegion};

/// What the runtime knows about one generated lattice rule (from the macro).
#[derive(Clone, Copy, Debug)]
pub struct LatticeSpec {
    /// The Rust function's name.
    pub name: &'static str,
    /// Number of dimensions.
    pub rank: usize,
    /// Largest offset read along each axis.
    pub halo: [usize; 3],
    /// Boundary policy of the reads.
    pub boundary: Boundary,
    /// The kernel's OpenCL name (one launch per colour).
    pub kernel: &'static str,
    /// Where each of the kernel's parameters comes from, in its parameter order.
    pub params: &'static [clforge_abi::Bind],
    /// Colours: 2 (the checkerboard `(x + y + z) % 2`) or `2^rank` (the parity classes
    /// `(x % 2) + 2 (y % 2) + 4 (z % 2)`).
    pub colours: usize,
    /// Whether the state is bit-packed (`Lattice<bool>`: 32 sites of one colour per word, one
    /// word per work-item, see [`super::DeviceBits`]).
    pub packed: bool,
    /// `file.rs:line` of the Rust function.
    pub origin: &'static str,
    /// The generated OpenCL C.
    pub source: &'static str,
}

impl LatticeSpec {
    /// The extents a launch and the host reference both accept: a periodic lattice needs even
    /// extents (an odd ring puts two sites of one colour side by side).
    pub fn check_extents(&self, shape: Shape) -> Result<()> {
        let dims = shape.dims();
        if self.boundary == Boundary::Periodic {
            if let Some(a) = (0..self.rank.min(3)).find(|&a| dims[a] % 2 == 1 && dims[a] > 1) {
                return Err(Error::InvalidConfig(format!(
                    "lattice rule `{}` is periodic, so its extents must be even for the checkerboard: along \
                     axis {a} the shape {shape} has {} sites, and the first and last (neighbours across the \
                     boundary) would have the same colour",
                    self.name, dims[a]
                )));
            }
        }
        Ok(())
    }
}

/// The random numbers of one site at one step, as the rule sees them: `rng.draw(k)` is the
/// `k`-th 32-bit draw, `rng.uniform(k)` the same draw as an `f32` in `[0, 1)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Draws {
    seed: u64,
    step: u32,
    site: u64,
}

impl Draws {
    /// The stream of the site with stream key `site` ([`super::rng::site_key`], what
    /// [`host_sites`] yields) at `step` of the run `seed`.
    pub fn new(seed: u64, step: u32, site: u64) -> Draws {
        Draws { seed, step, site }
    }
    /// The `k`-th 32-bit draw of this site at this step ([`super::rng::site_draw`]).
    pub fn draw(&self, k: u32) -> u32 {
        super::rng::site_draw(self.seed, self.step, self.site, k)
    }
    /// Draw `k` as an `f32` in `[0, 1)` ([`super::rng::uniform_f32`]): exact on both sides.
    pub fn uniform(&self, k: u32) -> f32 {
        super::rng::uniform_f32(self.draw(k))
    }
}

/// The colour of site `p` among `colours` (see [`LatticeSpec::colours`]).
pub fn colour_of(p: [usize; 3], colours: usize) -> usize {
    if colours == 2 {
        (p[0] + p[1] + p[2]) % 2
    } else {
        (p[0] % 2) + 2 * (p[1] % 2) + 4 * (p[2] % 2)
    }
}

/// The sites of `colour` that `spec`'s rule updates on `shape`, with their stream keys
/// ([`super::rng::site_key`], or [`super::packed_site_key`] for a bit-packed state): what the
/// generated `apply_host` visits, colour by colour.
pub fn host_sites(spec: &LatticeSpec, shape: Shape, colour: usize) -> impl Iterator<Item = ([usize; 3], u64)> {
    let (colours, packed) = (spec.colours, spec.packed);
    UpdateRegion::new(shape, spec.halo, spec.boundary)
        .into_points()
        .filter(move |&p| colour_of(p, colours) == colour)
        .map(move |p| {
            let key = if packed {
                crate::grid::bits::packed_site_key(p, shape.dims())
            } else {
                super::rng::site_key(p, shape.dims())
            };
            (p, key)
        })
}

/// The state of a lattice rule on the device: a grid of its element type, or bit-packed sites
/// ([`super::DeviceBits`]) for `Lattice<bool>`.
pub trait LatticeState {
    /// The lattice's shape.
    fn shape(&self) -> Shape;
    /// Whether the sites are bit-packed.
    fn packed(&self) -> bool;
    /// The device the state lives on.
    fn device(&self) -> &Device;
}

impl<T: Scalar> LatticeState for DeviceGrid<T> {
    fn shape(&self) -> Shape {
        DeviceGrid::shape(self)
    }
    fn packed(&self) -> bool {
        false
    }
    fn device(&self) -> &Device {
        DeviceGrid::device(self)
    }
}

impl LatticeState for super::DeviceBits {
    fn shape(&self) -> Shape {
        super::DeviceBits::shape(self)
    }
    fn packed(&self) -> bool {
        true
    }
    fn device(&self) -> &Device {
        super::DeviceBits::device(self)
    }
}

/// The state of a 1-D lattice rule as the rule sees it: `s.at(-1)`. On the host it is read in
/// place while the sites of the other colour wait; the macro checks that it is.
pub type Lattice1<'a, T> = crate::grid::Grid1<'a, T>;
/// The state of a 2-D lattice rule: `s.at(1, 0)`.
pub type Lattice2<'a, T> = crate::grid::Grid2<'a, T>;
/// The state of a 3-D lattice rule: `s.at(0, 0, -1)`.
pub type Lattice3<'a, T> = crate::grid::Grid3<'a, T>;
/// `Lattice<T>` is the 2-D state, the common case.
pub type Lattice<'a, T> = Lattice2<'a, T>;
