//! Packed grids: a small-integer grid stored `BITS` bits per point in 32-bit words, for
//! stencils that declare it (`#[stencil(packed(cell = 2))]`, docs/SEMANTICS.md "Packed
//! grids"). Seed 002's cell kinds (0, 1, 2) cost a byte per point unpacked, 8 % of an f32
//! Jacobi sweep's traffic; packed in 2 bits they cost a quarter of a byte.
//!
//! Point `i` (the linear index, x fastest) is bits `(i % (32 / BITS)) * BITS ..` of word
//! `i / (32 / BITS)`; `BITS` divides 32, so no value straddles two words, and a kernel reads
//! it as `(cell[i >> S] >> ((i & M) * BITS)) & MASK` with `S = log2(32 / BITS)`,
//! `M = 32 / BITS - 1`. The pure packing, [`pack`] and [`unpack`], is the contract the
//! generated reads are tested against.

use std::marker::PhantomData;

use crate::buffer::{Buffer, Scalar};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::grid::{HostGrid, Shape};

pub use clforge_abi::PACKED_BITS;

mod sealed {
    pub trait Sealed {}
    impl Sealed for u8 {}
    impl Sealed for u32 {}
}

/// Grid element types that can be packed: the unsigned integer grids of the DSL (`u8`, `u32`).
pub trait Packable: Scalar + sealed::Sealed {
    /// The value as a word's bits.
    fn to_word(self) -> u32;
    /// The value from a word's bits (below 2^4, so it fits every packable type).
    fn from_word(w: u32) -> Self;
}

impl Packable for u8 {
    fn to_word(self) -> u32 {
        u32::from(self)
    }
    fn from_word(w: u32) -> u8 {
        w as u8
    }
}

impl Packable for u32 {
    fn to_word(self) -> u32 {
        self
    }
    fn from_word(w: u32) -> u32 {
        w
    }
}

/// The point (x, y, z) of linear index `i` in `shape`.
fn point_of(shape: Shape, i: usize) -> [usize; 3] {
    let [nx, ny, _] = shape.dims();
    let (nx, ny) = (nx.max(1), ny.max(1));
    [i % nx, (i / nx) % ny, i / (nx * ny)]
}

fn check_bits(bits: u32) -> Result<()> {
    if PACKED_BITS.contains(&bits) {
        Ok(())
    } else {
        Err(Error::InvalidConfig(format!(
            "a packed grid holds 1, 2 or 4 bits per point (powers of two dividing 32, so no value straddles \
             two words), not {bits}"
        )))
    }
}

/// The words of `host` packed `bits` bits per point; [`Error::PackedValue`] naming the first
/// point (in linear order) whose value does not fit.
///
/// ```
/// # use clforge_runtime::{HostGrid, Shape, grid::packed};
/// let cell = HostGrid::from_vec(Shape::d2(3, 1), vec![1u8, 2, 0]).unwrap();
/// assert_eq!(packed::pack(&cell, 2).unwrap(), vec![0b00_10_01]);
/// let bad = HostGrid::from_vec(Shape::d2(3, 1), vec![1u8, 4, 0]).unwrap();
/// assert!(packed::pack(&bad, 2).is_err());
/// ```
pub fn pack<T: Packable>(host: &HostGrid<T>, bits: u32) -> Result<Vec<u32>> {
    check_bits(bits)?;
    let per = (32 / bits) as usize;
    let mask = (1u32 << bits) - 1;
    let data = host.data();
    let mut words = crate::grid::try_filled(data.len().div_ceil(per), 0u32, || {
        format!("packed grid of shape {}", host.shape())
    })?;
    for (i, v) in data.iter().enumerate() {
        let w = v.to_word();
        if w > mask {
            return Err(Error::PackedValue {
                point: point_of(host.shape(), i),
                value: u64::from(w),
                bits,
            });
        }
        words[i / per] |= w << ((i % per) as u32 * bits);
    }
    Ok(words)
}

/// The grid of `shape` that [`pack`] packed into `words`.
pub fn unpack<T: Packable>(shape: Shape, words: &[u32], bits: u32) -> Result<HostGrid<T>> {
    check_bits(bits)?;
    let per = (32 / bits) as usize;
    let mask = (1u32 << bits) - 1;
    let len = shape.checked_len().ok_or_else(|| crate::grid::overflow(shape))?;
    if words.len() != len.div_ceil(per) {
        return Err(Error::LengthMismatch {
            what: format!("words of a {bits}-bit packed grid of shape {shape}"),
            expected: len.div_ceil(per),
            found: words.len(),
        });
    }
    let data = (0..len)
        .map(|i| T::from_word((words[i / per] >> ((i % per) as u32 * bits)) & mask))
        .collect();
    HostGrid::from_vec(shape, data)
}

/// A grid of `T` (`u8`, `u32`) in device memory, `BITS` bits per point (1, 2 or 4), for a
/// stencil argument declared `packed(name = BITS)`. The typed launchers take it where the
/// stencil takes that grid; the host reference still takes the [`HostGrid`].
///
/// ```no_run
/// # use clforge_runtime::{Device, HostGrid, PackedGrid, Shape};
/// let device = Device::default()?;
/// let cell = HostGrid::from_fn(Shape::d2(64, 64), |[x, _, _]| (x % 3) as u8)?;
/// let packed = PackedGrid::<u8, 2>::from_host(&device, &cell)?; // 2 bits per point
/// assert_eq!(packed.to_host()?, cell);
/// # Ok::<(), clforge_runtime::Error>(())
/// ```
#[derive(Debug)]
pub struct PackedGrid<T: Packable, const BITS: u32> {
    words: Buffer<u32>,
    shape: Shape,
    _elem: PhantomData<T>,
}

impl<T: Packable, const BITS: u32> PackedGrid<T, BITS> {
    /// The bits per point.
    pub const BITS: u32 = BITS;

    /// `host` packed on `device`; [`Error::PackedValue`] naming the first point whose value
    /// is `2^BITS` or more (nothing is uploaded then).
    pub fn from_host(device: &Device, host: &HostGrid<T>) -> Result<Self> {
        let words = pack(host, BITS)?;
        Ok(PackedGrid {
            words: Buffer::from_slice(device, &words)?,
            shape: host.shape(),
            _elem: PhantomData,
        })
    }
    /// Overwrites the grid with `host` (same shape, every value below `2^BITS`).
    pub fn upload(&mut self, host: &HostGrid<T>) -> Result<()> {
        crate::check_shape("upload", self.shape, host.shape())?;
        self.words.write(&pack(host, BITS)?)
    }
    /// The grid read back and unpacked.
    pub fn to_host(&self) -> Result<HostGrid<T>> {
        unpack(self.shape, &self.words.to_vec()?, BITS)
    }
    /// The shape (of the points, not of the words).
    pub fn shape(&self) -> Shape {
        self.shape
    }
    /// The device the grid lives on.
    pub fn device(&self) -> &Device {
        self.words.device()
    }
    /// The packed words, for hand-written kernels.
    pub fn words(&self) -> &Buffer<u32> {
        &self.words
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packing_round_trips_and_leaves_no_value_across_words() {
        for bits in PACKED_BITS {
            // 37 x 3 points: not a multiple of any word's points.
            let shape = Shape::d2(37, 3);
            let max = (1u32 << bits) - 1;
            let host = HostGrid::from_fn(shape, |[x, y, _]| ((x * 7 + y * 3) as u32 % (max + 1)) as u8).unwrap();
            let words = pack(&host, bits).unwrap();
            assert_eq!(words.len(), (37 * 3usize).div_ceil((32 / bits) as usize));
            for (i, v) in host.data().iter().enumerate() {
                let per = 32 / bits as usize;
                let got = (words[i >> per.trailing_zeros()] >> ((i & (per - 1)) as u32 * bits)) & max;
                assert_eq!(got, u32::from(*v), "bits {bits}, point {i}");
            }
            assert_eq!(unpack::<u8>(shape, &words, bits).unwrap(), host);
        }
    }

    #[test]
    fn out_of_range_values_are_refused_with_their_point() {
        let shape = Shape::d3(4, 3, 2);
        let mut host = HostGrid::<u32>::from_fn(shape, |_| 1).unwrap();
        host.data_mut()[shape.index([2, 1, 1])] = 4;
        host.data_mut()[shape.index([3, 2, 1])] = 9;
        match pack(&host, 2) {
            Err(Error::PackedValue { point, value, bits }) => {
                assert_eq!((point, value, bits), ([2, 1, 1], 4, 2));
            }
            other => panic!("expected PackedValue, got {other:?}"),
        }
        let msg = pack(&host, 2).unwrap_err().to_string();
        assert!(
            msg.contains("(2, 1, 1)") && msg.contains('4') && msg.contains("2 bits"),
            "{msg}"
        );
        assert!(pack(&host, 4).is_ok(), "9 fits in 4 bits");
        assert!(matches!(pack(&host, 3), Err(Error::InvalidConfig(_))));
        let u8s = HostGrid::<u8>::from_fn(shape, |_| 255).unwrap();
        assert!(matches!(pack(&u8s, 4), Err(Error::PackedValue { value: 255, .. })));
    }
}
