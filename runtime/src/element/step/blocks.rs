//! Seed algorithm 4's per-block control words and crack masks.

use crate::element::mesh::{ElementMap, StructuredMesh};
use crate::element::schedule::Blocking;
use crate::error::{Error, Result};
use clforge_abi::element as abi;

/// Per-block control words `(has_cracks, mask index, material, 0)` and crack masks of seed
/// algorithm 4. Every element of a block must have the block's material.
pub(crate) fn block_control(b: Blocking, m: &StructuredMesh, map: &ElementMap) -> Result<(Vec<i32>, Vec<u32>)> {
    let nb = b.blocks(m);
    let words = b.mask_words();
    let mut control = Vec::with_capacity(nb.iter().fold(4, |a, &n| a.saturating_mul(n)));
    let mut masks = Vec::new();
    for bz in 0..nb[2] {
        for by in 0..nb[1] {
            for bx in 0..nb[0] {
                let mut material = None;
                let mut mask = vec![0u32; words];
                let mut cracked = false;
                for lx in 0..b.l_x {
                    for row in 0..b.rows() {
                        let (ex, ey) = (bx * b.l_x + lx, by * b.rows() + row);
                        if ex >= m.elements[0] || ey >= m.elements[1] {
                            continue;
                        }
                        let e = m.element_index([ex, ey, bz]);
                        let mat = map.material[e];
                        if *material.get_or_insert(mat) != mat {
                            return Err(Error::InvalidConfig(format!(
                                "block ({bx}, {by}, {bz}) of {} x {} elements mixes materials {} and {mat}; \
                                 `ForceSchedule::BlockedMaterial` keeps one material per block",
                                b.l_x,
                                b.rows(),
                                material.unwrap_or(mat)
                            )));
                        }
                        if map.dead[e] {
                            let (ly, w) = (row / b.wi_size, row % b.wi_size);
                            let bit = abi::crack_bit(lx, ly, w, b.l_y, b.wi_size);
                            mask[bit / abi::MASK_BITS] |= 1 << (bit % abi::MASK_BITS);
                            cracked = true;
                        }
                    }
                }
                let index = if cracked { masks.len() / words } else { 0 };
                if cracked {
                    masks.extend(mask);
                }
                control.extend([i32::from(cracked), index as i32, i32::from(material.unwrap_or(0)), 0]);
            }
        }
    }
    if masks.is_empty() {
        masks = vec![0; words];
    }
    Ok((control, masks))
}
