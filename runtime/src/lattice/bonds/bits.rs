//! Bit-packed lattice state on the host: 32 bits per `u32` word, bit `i` in word `i / 32` at
//! position `i % 32`, the layout `clforge_bit_get` / `clforge_bit_set` use on the device (seed
//! 003 packs 3 bond bits per grain and 1 column bit this way: 1.5·10⁹ bonds in 179 MB).

use crate::error::{Error, Result};

/// `len` bits packed into `u32` words.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PackedBits {
    len: u64,
    words: Vec<u32>,
}

impl PackedBits {
    /// `len` bits, all clear. Fails when the words do not fit this machine's memory indexing.
    pub fn new(len: u64) -> Result<PackedBits> {
        let words = usize::try_from(len.div_ceil(32)).map_err(|_| Error::TooLarge {
            what: format!("{len} packed bits"),
            detail: "more words than this machine can index".into(),
        })?;
        Ok(PackedBits {
            len,
            words: vec![0; words],
        })
    }

    /// Bits read back from the device: `words` must hold exactly `len.div_ceil(32)` words, and
    /// the bits past `len` in the last word must be clear.
    pub fn from_words(len: u64, words: Vec<u32>) -> Result<PackedBits> {
        if words.len() as u64 != len.div_ceil(32) {
            return Err(Error::InvalidConfig(format!(
                "{len} packed bits take {} words, not {}",
                len.div_ceil(32),
                words.len()
            )));
        }
        let tail = (len % 32) as u32;
        if tail != 0 && words.last().is_some_and(|w| w >> tail != 0) {
            return Err(Error::InvalidConfig(format!(
                "bits past the last of {len} are set in the last word: the words are not {len} packed bits"
            )));
        }
        Ok(PackedBits { len, words })
    }

    /// Number of bits.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether there are no bits.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The words, for upload.
    pub fn words(&self) -> &[u32] {
        &self.words
    }

    /// Bit `i`; `None` past the end.
    pub fn get(&self, i: u64) -> Option<bool> {
        (i < self.len).then(|| (self.words[(i / 32) as usize] >> (i % 32)) & 1 == 1)
    }

    /// Sets bit `i` to `value` and returns its old value; an error past the end.
    pub fn set(&mut self, i: u64, value: bool) -> Result<bool> {
        if i >= self.len {
            return Err(Error::InvalidConfig(format!("bit {i} of {} packed bits", self.len)));
        }
        let (w, mask) = ((i / 32) as usize, 1u32 << (i % 32));
        let old = self.words[w] & mask != 0;
        if value {
            self.words[w] |= mask;
        } else {
            self.words[w] &= !mask;
        }
        Ok(old)
    }

    /// Number of set bits.
    pub fn count_ones(&self) -> u64 {
        self.words.iter().map(|w| u64::from(w.count_ones())).sum()
    }

    /// Indices of the set bits, in order.
    pub fn ones(&self) -> impl Iterator<Item = u64> + '_ {
        self.words.iter().enumerate().flat_map(|(w, &bits)| {
            let mut rest = bits;
            std::iter::from_fn(move || {
                (rest != 0).then(|| {
                    let b = rest.trailing_zeros();
                    rest &= rest - 1;
                    w as u64 * 32 + u64::from(b)
                })
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{rngs::SmallRng, Rng, SeedableRng};

    /// Random sets and clears against a `Vec<bool>`, on lengths around word boundaries.
    #[test]
    fn pack_unpack_round_trips() {
        let mut r = SmallRng::seed_from_u64(3);
        for len in [0u64, 1, 31, 32, 33, 64, 65, 1000] {
            let mut bits = PackedBits::new(len).unwrap();
            let mut plain = vec![false; len as usize];
            for _ in 0..4 * len {
                let i = r.random_range(0..len);
                let v = r.random_bool(0.6);
                assert_eq!(bits.set(i, v).unwrap(), plain[i as usize]);
                plain[i as usize] = v;
            }
            for (i, &v) in plain.iter().enumerate() {
                assert_eq!(bits.get(i as u64), Some(v));
            }
            assert_eq!(bits.get(len), None);
            assert!(bits.set(len, true).is_err());
            assert_eq!(bits.count_ones(), plain.iter().filter(|&&v| v).count() as u64);
            let ones: Vec<u64> = bits.ones().collect();
            let want: Vec<u64> = (0..len).filter(|&i| plain[i as usize]).collect();
            assert_eq!(ones, want);
            assert_eq!(PackedBits::from_words(len, bits.words().to_vec()).unwrap(), bits);
        }
        assert!(PackedBits::from_words(33, vec![0]).is_err());
        assert!(PackedBits::from_words(33, vec![0, 2]).is_err(), "bit 33 set");
        assert!(PackedBits::from_words(33, vec![0, 1]).is_ok());
    }
}
