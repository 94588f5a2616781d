//! Bit-packed site state: a `Lattice<bool>` rule's state on the device, 32 sites per `u32`
//! word (multi-spin coding). Each row `(y, z)` is split by the parity of x into two half-rows,
//! so that a word holds 32 sites of **one colour** (for the checkerboard and for the parity
//! classes alike): site `x = 2 i + p` of row `(y, z)` is bit `i % 32` of word
//! `((z ny + y) 2 + p) W + i / 32`, `W = ceil(ceil(nx / 2) / 32)` words per half-row. A
//! work-item updates one word in place; its neighbours of another parity along x are a shifted
//! 32-bit window of the other half-row (one funnel shift), those along y and z a word of another
//! row. Bits past the end of a half-row are padding: always clear, never updated.
//!
//! The stream key of a site in this layout is `(word << 5) | (i % 32)` ([`packed_site_key`]):
//! the 32 sites of a word take the words of 8 Philox blocks, four sites per block, exactly as
//! [`super::rng::site_draw`] reads a key.

use crate::buffer::Buffer;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::grid::{check_shape, HostGrid, Shape};

/// Words per half-row of a packed lattice `nx` sites wide: `ceil(ceil(nx / 2) / 32)`.
pub fn packed_words_per_row(nx: usize) -> usize {
    nx.div_ceil(2).div_ceil(32)
}

/// Number of words of a packed lattice of `shape`, or `None` when it overflows `usize`.
pub fn packed_len(shape: Shape) -> Option<usize> {
    let [nx, ny, nz] = shape.dims();
    packed_words_per_row(nx)
        .checked_mul(2)?
        .checked_mul(ny)?
        .checked_mul(nz)
}

/// The word and bit of site `p` on a packed lattice of extents `dims`.
pub fn packed_word_bit(p: [usize; 3], dims: [usize; 3]) -> (usize, u32) {
    let w = packed_words_per_row(dims[0]);
    let i = p[0] / 2;
    let row = (p[2] * dims[1] + p[1]) * 2 + (p[0] & 1);
    (row * w + i / 32, (i % 32) as u32)
}

/// The stream key of site `p` of a packed lattice (the device's: word `<< 5` | bit), for
/// [`super::rng::site_draw`]: the word's 32 sites are 8 stream groups of 4.
pub fn packed_site_key(p: [usize; 3], dims: [usize; 3]) -> u64 {
    let (word, bit) = packed_word_bit(p, dims);
    ((word as u64) << 5) | u64::from(bit)
}

fn too_large(shape: Shape) -> Error {
    Error::TooLarge {
        what: format!("bit-packed lattice of shape {shape}"),
        detail: "its word count overflows this machine's memory indexing".into(),
    }
}

/// Packs a host lattice of `bool` into the device layout (padding bits clear).
pub fn pack(grid: &HostGrid<bool>) -> Result<Vec<u32>> {
    let shape = grid.shape();
    let len = packed_len(shape).ok_or_else(|| too_large(shape))?;
    let mut words = crate::grid::try_filled(len, 0u32, || format!("bit-packed lattice of shape {shape}"))?;
    let dims = shape.dims();
    let mut at = 0;
    for z in 0..dims[2] {
        for y in 0..dims[1] {
            for x in 0..dims[0] {
                if grid.data().get(at).copied().unwrap_or(false) {
                    let (word, bit) = packed_word_bit([x, y, z], dims);
                    if let Some(w) = words.get_mut(word) {
                        *w |= 1 << bit;
                    }
                }
                at += 1;
            }
        }
    }
    Ok(words)
}

/// The word count is `shape`'s and every padding bit clear.
fn check_words(shape: Shape, words: &[u32]) -> Result<()> {
    let len = packed_len(shape).ok_or_else(|| too_large(shape))?;
    if words.len() != len {
        return Err(Error::LengthMismatch {
            what: format!("bit-packed lattice of shape {shape}"),
            expected: len,
            found: words.len(),
        });
    }
    let dims = shape.dims();
    let w = packed_words_per_row(dims[0]);
    // Padding: in each half-row of parity p the sites i >= ceil((nx - p) / 2).
    for (row, chunk) in words.chunks(w.max(1)).enumerate() {
        let sites = (dims[0] + 1 - (row & 1)) / 2;
        for (k, word) in chunk.iter().enumerate() {
            let used = sites.saturating_sub(32 * k).min(32);
            let pad = if used == 32 { 0 } else { word >> used };
            if pad != 0 {
                return Err(Error::InvalidConfig(format!(
                    "bit-packed lattice of shape {shape}: padding bits are set in word {} (half-row {row}), so \
                     these words are not a lattice of this shape",
                    row * w + k
                )));
            }
        }
    }
    Ok(())
}

/// Unpacks words in the device layout into a host lattice of `shape`: the word count must be
/// the layout's and every padding bit clear (else the words are not this shape's lattice).
pub fn unpack(shape: Shape, words: &[u32]) -> Result<HostGrid<bool>> {
    check_words(shape, words)?;
    let dims = shape.dims();
    HostGrid::from_fn(shape, |p| {
        let (word, bit) = packed_word_bit(p, dims);
        words.get(word).is_some_and(|w| (w >> bit) & 1 == 1)
    })
}

/// A `Lattice<bool>` rule's state on the device, 32 sites per word (see the module).
#[derive(Debug)]
pub struct DeviceBits {
    buffer: Buffer<u32>,
    shape: Shape,
}

impl DeviceBits {
    /// A lattice of `shape` on `device`, every site `false`.
    pub fn new(device: &Device, shape: Shape) -> Result<DeviceBits> {
        let len = packed_len(shape).ok_or_else(|| too_large(shape))?;
        Ok(DeviceBits {
            buffer: Buffer::new(device, len)?,
            shape,
        })
    }
    /// A packed copy of a host lattice on `device`.
    pub fn from_host(device: &Device, host: &HostGrid<bool>) -> Result<DeviceBits> {
        Ok(DeviceBits {
            buffer: Buffer::from_slice(device, &pack(host)?)?,
            shape: host.shape(),
        })
    }
    /// Overwrites the lattice with a host lattice of the same shape.
    pub fn upload(&mut self, host: &HostGrid<bool>) -> Result<()> {
        check_shape("upload", self.shape, host.shape())?;
        self.buffer.write(&pack(host)?)
    }
    /// A lattice from words already in the device layout (a checkpoint, or a generator that
    /// writes words): the count must be the layout's and padding bits clear, as for [`unpack`].
    pub fn from_words(device: &Device, shape: Shape, words: &[u32]) -> Result<DeviceBits> {
        check_words(shape, words)?;
        Ok(DeviceBits {
            buffer: Buffer::from_slice(device, words)?,
            shape,
        })
    }
    /// The words in the device layout (for a checkpoint: [`DeviceBits::from_words`] restores).
    pub fn to_words(&self) -> Result<Vec<u32>> {
        self.buffer.to_vec()
    }
    /// Reads the lattice back, unpacked.
    pub fn to_host(&self) -> Result<HostGrid<bool>> {
        unpack(self.shape, &self.buffer.to_vec()?)
    }
    /// The number of sites that are `true` (reads the words back).
    pub fn count_ones(&self) -> Result<u64> {
        Ok(self.buffer.to_vec()?.iter().map(|w| u64::from(w.count_ones())).sum())
    }
    /// The shape.
    pub fn shape(&self) -> Shape {
        self.shape
    }
    /// The device the lattice lives on.
    pub fn device(&self) -> &Device {
        self.buffer.device()
    }
    /// The packed words, for hand-written kernels (layout: the module's).
    pub fn words(&self) -> &Buffer<u32> {
        &self.buffer
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{rngs::SmallRng, Rng, SeedableRng};

    /// Pack and unpack are inverse on random lattices of odd, even, narrow and wide extents,
    /// and every site has its own word bit (no two sites share one).
    #[test]
    fn pack_unpack_round_trips() {
        let mut r = SmallRng::seed_from_u64(3);
        for shape in [
            Shape::d1(1),
            Shape::d1(63),
            Shape::d1(64),
            Shape::d1(65),
            Shape::d2(2, 2),
            Shape::d2(129, 3),
            Shape::d2(130, 5),
            Shape::d3(7, 3, 5),
            Shape::d3(64, 2, 2),
        ] {
            let grid = HostGrid::from_fn(shape, |_| r.random()).unwrap();
            let words = pack(&grid).unwrap();
            assert_eq!(words.len(), packed_len(shape).unwrap());
            let ones: u32 = words.iter().map(|w| w.count_ones()).sum();
            assert_eq!(ones as usize, grid.data().iter().filter(|b| **b).count(), "{shape}");
            assert_eq!(unpack(shape, &words).unwrap(), grid, "{shape}");
            let mut seen = std::collections::HashSet::new();
            let dims = shape.dims();
            for z in 0..dims[2] {
                for y in 0..dims[1] {
                    for x in 0..dims[0] {
                        assert!(seen.insert(packed_word_bit([x, y, z], dims)), "{shape} ({x}, {y}, {z})");
                        assert!(seen.len() <= 32 * words.len());
                        let key = packed_site_key([x, y, z], dims);
                        assert_eq!(key & 31, (x as u64 / 2) % 32);
                    }
                }
            }
        }
    }

    /// Wrong lengths and set padding bits are typed errors, not a wrong lattice.
    #[test]
    fn bad_words_are_errors() {
        let shape = Shape::d2(66, 2); // 33 sites per half-row: 2 words, 31 padding bits
        let mut words = pack(&HostGrid::from_fn(shape, |p| p[0] % 3 == 0).unwrap()).unwrap();
        assert!(matches!(unpack(shape, &words[1..]), Err(Error::LengthMismatch { .. })));
        words[1] |= 1 << 1;
        let err = unpack(shape, &words).unwrap_err().to_string();
        assert!(err.contains("padding"), "{err}");
    }
}
