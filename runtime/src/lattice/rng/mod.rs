//! Philox4x32-10 (Salmon, Moraes, Dror, Shaw: "Parallel random numbers: as easy as 1, 2, 3",
//! SC'11), the lattice kind's random numbers. Counter-based: a draw is a pure function of
//! `(seed, step, site, draw)`, so no generator state is stored per site, any work-item can
//! compute any site's numbers, and a host replay of a device schedule is exact. Ten rounds pass
//! BigCrush (the paper); the output is checked against Random123's known-answer vectors.

const M0: u32 = 0xD251_1F53;
const M1: u32 = 0xCD9E_8D57;
const W0: u32 = 0x9E37_79B9;
const W1: u32 = 0xBB67_AE85;

/// The Philox4x32 block function with 10 rounds: four 32-bit outputs for a 128-bit counter and
/// a 64-bit key (`clforge_philox4x32_10` in [`super::PHILOX_CL`]).
pub fn philox4x32_10(mut c: [u32; 4], mut k: [u32; 2]) -> [u32; 4] {
    for i in 0..10 {
        if i > 0 {
            k[0] = k[0].wrapping_add(W0);
            k[1] = k[1].wrapping_add(W1);
        }
        let p0 = u64::from(M0) * u64::from(c[0]);
        let p1 = u64::from(M1) * u64::from(c[2]);
        c = [
            (p1 >> 32) as u32 ^ c[1] ^ k[0],
            p1 as u32,
            (p0 >> 32) as u32 ^ c[3] ^ k[1],
            p0 as u32,
        ];
    }
    c
}

/// Draw number `draw` of `site` at `step` of the stream `seed`: word `draw % 4` of the block
/// with counter `(site low, site high, step, draw / 4)` and key `(seed low, seed high)`
/// (`clforge_draw` on the device). Distinct `(step, site, draw)` never share a counter.
pub fn draw(seed: u64, step: u32, site: u64, draw: u32) -> u32 {
    let block = philox4x32_10(
        [site as u32, (site >> 32) as u32, step, draw >> 2],
        [seed as u32, (seed >> 32) as u32],
    );
    block[(draw & 3) as usize]
}

/// The stream key of lattice site `p` on a lattice of extents `dims`: along x the sites of one
/// parity, `i = x / 2`, are dealt to work-items as `i = g + j W` (`j = 0..3`,
/// `W = ceil(ceil(nx / 2) / 4)`); the four sites of `g` in a row share the group
/// `2 (g + W (y + ny z)) + x % 2`, and the key is `(group << 2) | j`.
pub fn site_key(p: [usize; 3], dims: [usize; 3]) -> u64 {
    let w = (dims[0].div_ceil(2).div_ceil(4)).max(1) as u64;
    let i = p[0] as u64 / 2;
    let (g, j) = (i % w, i / w);
    let group = 2 * (g + w * (p[1] as u64 + dims[1] as u64 * p[2] as u64)) + (p[0] as u64 & 1);
    (group << 2) | j
}

/// Draw `draw` of the lattice site with stream key `key` ([`site_key`]) at `step`: word
/// `key & 3` of the block with counter `(group low, group high, step, draw)` and key `(seed low,
/// seed high)`, `group = key >> 2` (word `key & 3` of `clforge_site_block` on the device). The four sites of a
/// group share a block, one word each; distinct `(step, site, draw)` never share a word.
pub fn site_draw(seed: u64, step: u32, key: u64, draw: u32) -> u32 {
    let group = key >> 2;
    let r = philox4x32_10(
        [group as u32, (group >> 32) as u32, step, draw],
        [seed as u32, (seed >> 32) as u32],
    );
    r[(key & 3) as usize]
}

/// The top 24 bits of `bits` as an `f32` in `[0, 1)`, exactly (`clforge_uniform_f32`): every
/// value is a multiple of 2^-24, and 1.0 is never reached.
pub fn uniform_f32(bits: u32) -> f32 {
    (bits >> 8) as f32 * (1.0 / 16_777_216.0)
}

/// The 32-bit threshold that accepts a draw with probability `p` by `draw < threshold`: an
/// integer comparison, so host and device accept the same draws whatever their floating point.
/// `p` is clamped to `[0, 1]` (NaN gives 0); `p = 1` accepts every draw but `u32::MAX`
/// (probability 1 − 2^-32): use [`accepts`] for an exact certain acceptance.
pub fn threshold(p: f64) -> u32 {
    if p.is_nan() || p <= 0.0 {
        0
    } else if p >= 1.0 {
        u32::MAX
    } else {
        (p * 4_294_967_296.0) as u32
    }
}

/// Whether `bits` is accepted with probability `p`: `p >= 1` always, else `bits < threshold(p)`.
pub fn accepts(bits: u32, p: f64) -> bool {
    p >= 1.0 || bits < threshold(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random123's `kat_vectors`, the three `philox4x32 10` lines.
    #[test]
    fn known_answers() {
        let kat = [
            ([0; 4], [0; 2], [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]),
            (
                [u32::MAX; 4],
                [u32::MAX; 2],
                [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd],
            ),
            (
                [0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344],
                [0xa4093822, 0x299f31d0],
                [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1],
            ),
        ];
        for (c, k, want) in kat {
            assert_eq!(philox4x32_10(c, k), want, "counter {c:08x?} key {k:08x?}");
        }
    }

    #[test]
    fn draws_are_distinct_words_of_blocks() {
        let b = philox4x32_10([7, 0, 3, 1], [11, 0]);
        assert_eq!(
            [
                draw(11, 3, 7, 4),
                draw(11, 3, 7, 5),
                draw(11, 3, 7, 6),
                draw(11, 3, 7, 7)
            ],
            b
        );
        assert_ne!(draw(11, 3, 7, 0), draw(11, 3, 8, 0));
        assert_ne!(draw(11, 3, 7, 0), draw(11, 4, 7, 0));
        assert_ne!(draw(11, 3, 7, 0), draw(12, 3, 7, 0));
        assert_ne!(draw(0, 0, 1 << 32, 0), draw(0, 0, 0, 0), "the site's high word counts");
    }

    #[test]
    fn uniform_and_threshold_bounds() {
        assert_eq!(uniform_f32(0), 0.0);
        assert!(uniform_f32(u32::MAX) < 1.0);
        assert_eq!(uniform_f32(u32::MAX), 1.0 - f32::EPSILON / 2.0);
        assert_eq!(threshold(0.5), 1 << 31);
        assert_eq!(threshold(f64::NAN), 0);
        assert_eq!(threshold(-1.0), 0);
        assert!(accepts(u32::MAX, 1.0) && !accepts(0, 0.0) && accepts(0, 1e-9) == (threshold(1e-9) > 0));
        // The mean of many uniforms is 1/2 within a few standard errors (1 / sqrt(12 n)).
        let n = 1 << 16;
        let mean = (0..n).map(|i| f64::from(uniform_f32(draw(5, 0, i, 0)))).sum::<f64>() / n as f64;
        assert!((mean - 0.5).abs() < 5.0 / (12.0 * n as f64).sqrt(), "mean {mean}");
    }

    #[test]
    fn site_keys_are_distinct_and_share_blocks_by_group() {
        for dims in [[16usize, 6, 1], [13, 5, 3], [1, 1, 1], [9, 1, 1], [2, 2, 1]] {
            let mut seen = std::collections::HashSet::new();
            let w = dims[0].div_ceil(2).div_ceil(4);
            for z in 0..dims[2] {
                for y in 0..dims[1] {
                    for x in 0..dims[0] {
                        let k = site_key([x, y, z], dims);
                        assert!(seen.insert(k), "{dims:?}: ({x}, {y}, {z}) repeats key {k}");
                        // Work-item g = (x / 2) % W takes sites j = (x / 2) / W: one word each.
                        assert_eq!(k & 3, ((x / 2) / w) as u64);
                        assert_eq!((k >> 2) & 1, (x & 1) as u64);
                    }
                }
            }
        }
        // 16 wide: W = 2; x = 2 (g + 2 j) + parity. Sites x = 0 and x = 4 share g = 0, words 0, 1.
        let a = site_draw(9, 4, site_key([0, 3, 0], [16, 8, 1]), 0);
        let b = site_draw(9, 4, site_key([4, 3, 0], [16, 8, 1]), 0);
        let block = philox4x32_10([(2 * (2 * 3)) as u32, 0, 4, 0], [9, 0]);
        assert_eq!((a, b), (block[0], block[1]));
    }
}
