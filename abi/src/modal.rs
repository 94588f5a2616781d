//! Hierarchical (modal) bases on the reference box `[-1, 1]^dim`: which tensor products of
//! the 1-D functions an element of order `p` holds, and in which order. The macro prints the
//! shape functions in this order and the runtime numbers the DOFs of a mesh by it, so the two
//! cannot disagree.
//!
//! A 1-D function is named by an index `k`: `0` is the vertex function at `-1` (`(1 - x) / 2`
//! for the built-in family), `1` the one at `+1`, and `k >= 2` the bubble of degree `k` (zero at
//! both ends). A mode is a tuple of such indices, one per axis (`[k_r, k_s, k_t]`, unused axes
//! 0). Its *entity* is the set of axes holding a bubble: none for a vertex mode, one for an
//! edge mode, two for a face mode, three for an interior mode; the other axes' indices (0 or 1)
//! say which vertex, edge or face.
//!
//! **Spaces.** [`Space::Trunk`] (serendipity, the seed's) holds the modes whose bubble degrees
//! sum to at most `p`; [`Space::Tensor`] (Q_p) those whose largest bubble degree is at most `p`.
//! The *level* of a mode is that sum (trunk) or maximum (tensor); vertex modes have level 1.
//!
//! **Order (hierarchical).** The vertices first, in the usual finite-element order (in 3-D the
//! bottom face counter-clockwise, then the top face above it); then level by level, `2..=p`:
//! edges before faces before the interior; entities of one kind by their bubble axes
//! (lexicographic: `r` before `s` before `t`, `{r,s}` before `{r,t}` before `{s,t}`), then by the
//! fixed axes' indices (binary, first fixed axis least significant); within an entity the
//! bubble-degree tuples lexicographically. So the modes of order `p - 1` are the first modes of
//! order `p`, and with the DOFs interleaved per mode the element matrix of order `p - 1` is the
//! leading block of that of order `p`.

/// Which tensor products an element of order `p` holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Space {
    /// Trunk (serendipity) space: bubble degrees sum to at most `p` (the seed's elements:
    /// 8, 20, 32, 50, 74, 105 hexahedron modes for `p = 1..6`).
    Trunk,
    /// Full tensor-product space Q_p: every bubble degree at most `p`.
    Tensor,
}

impl Space {
    /// The name written in `#[clforge::element(basis = ...)]`.
    pub const fn name(self) -> &'static str {
        match self {
            Space::Trunk => "trunk",
            Space::Tensor => "tensor",
        }
    }

    /// The space named `name`, if any.
    pub fn from_name(name: &str) -> Option<Space> {
        match name {
            "trunk" => Some(Space::Trunk),
            "tensor" => Some(Space::Tensor),
            _ => None,
        }
    }
}

/// Highest order a modal element may have.
pub const MAX_ORDER: usize = 8;

/// Gauss-Legendre points per direction used unless the element says otherwise:
/// `max(p + 1, ceil((3p - 2) / 2))`, so 2, 3, 4, 5, 7, 8 for `p = 1..6`. The seed's rule
/// (`n_G >= ((3p - 2) / 2)^d`, at least 2) gives 2 at `p = 2`, which integrates an affine
/// element's stiffness inexactly and leaves spurious zero-energy modes (8 points x 6 strains
/// cannot give the rank 54 of a 60-DOF element); `p + 1` points are exact on affine elements.
pub const fn default_quadrature(order: usize) -> usize {
    let seed = (3 * order).saturating_sub(2).div_ceil(2);
    let exact = order + 1;
    let n = if seed > exact { seed } else { exact };
    if n < 2 {
        2
    } else {
        n
    }
}

/// The level of a mode (see the module docs): 1 for a vertex mode.
pub const fn level(mode: [u8; 3], space: Space) -> usize {
    let mut level = 0;
    let mut axis = 0;
    while axis < 3 {
        let k = mode[axis] as usize;
        if k >= 2 {
            level = match space {
                Space::Trunk => level + k,
                Space::Tensor => {
                    if k > level {
                        k
                    } else {
                        level
                    }
                }
            };
        }
        axis += 1;
    }
    if level == 0 {
        1
    } else {
        level
    }
}

/// The vertices of the reference box in the usual order, as 1-D indices (0 at -1, 1 at +1).
pub const fn vertex(dim: usize, v: usize) -> [u8; 3] {
    // Counter-clockwise in the (r, s) plane, then the same above it.
    let (a, b) = match v % 4 {
        0 => (0, 0),
        1 => (1, 0),
        2 => (1, 1),
        _ => (0, 1),
    };
    match dim {
        1 => [(v % 2) as u8, 0, 0],
        2 => [a, b, 0],
        _ => [a, b, (v / 4) as u8],
    }
}

/// Calls `f` with every mode of the element, in the hierarchical order of the module docs.
/// `dim` is 1 to 3, `order` 1 to [`MAX_ORDER`]; other values give no modes.
pub fn for_each_mode(dim: usize, order: usize, space: Space, mut f: impl FnMut([u8; 3])) {
    if !(1..=3).contains(&dim) || !(1..=MAX_ORDER).contains(&order) {
        return;
    }
    for v in 0..(1usize << dim) {
        f(vertex(dim, v));
    }
    for lvl in 2..=order {
        for entity_dim in 1..=dim {
            // Axis sets of this size in ascending bit order, which is lexicographic.
            for set in 1u8..(1 << dim) {
                if set.count_ones() as usize != entity_dim {
                    continue;
                }
                for code in 0..(1usize << (dim - entity_dim)) {
                    // Bubble tuples over the set's axes, lexicographically (last axis fastest).
                    let mut degrees = [2u8; 3];
                    loop {
                        let mut mode = [0u8; 3];
                        let (mut bit, mut j) = (0, 0);
                        for (axis, m) in mode.iter_mut().enumerate().take(dim) {
                            if set & (1 << axis) != 0 {
                                *m = degrees[j];
                                j += 1;
                            } else {
                                *m = ((code >> bit) & 1) as u8;
                                bit += 1;
                            }
                        }
                        if level(mode, space) == lvl {
                            f(mode);
                        }
                        if !advance(&mut degrees[..entity_dim], order as u8) {
                            break;
                        }
                    }
                }
            }
        }
    }
}

/// The next tuple of degrees `2..=max`, last entry fastest; false after the last.
fn advance(degrees: &mut [u8], max: u8) -> bool {
    for i in (0..degrees.len()).rev() {
        if degrees[i] < max {
            degrees[i] += 1;
            for d in &mut degrees[i + 1..] {
                *d = 2;
            }
            return true;
        }
    }
    false
}

/// How many modes an element has (`for_each_mode`'s count).
pub fn count(dim: usize, order: usize, space: Space) -> usize {
    let mut n = 0;
    for_each_mode(dim, order, space, |_| n += 1);
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trunk_hexahedra_have_the_seeds_sizes() {
        let ne: [usize; 6] = core::array::from_fn(|i| 3 * count(3, i + 1, Space::Trunk));
        assert_eq!(ne, [24, 60, 96, 150, 222, 315]);
        // Formula of the seed notes: 8 + 12(p-1) + 3(p-2)(p-3) + (p-3)(p-4)(p-5)/6.
        for p in 1..=MAX_ORDER {
            let faces = if p >= 4 { 3 * (p - 2) * (p - 3) } else { 0 };
            let interior = if p >= 6 { (p - 3) * (p - 4) * (p - 5) / 6 } else { 0 };
            assert_eq!(
                count(3, p, Space::Trunk),
                8 + 12 * (p - 1) + faces + interior,
                "p = {p}"
            );
            assert_eq!(count(3, p, Space::Tensor), (p + 1).pow(3), "p = {p}");
            assert_eq!(count(2, p, Space::Tensor), (p + 1).pow(2), "p = {p}");
            assert_eq!(count(1, p, Space::Trunk), p + 1, "p = {p}");
        }
    }

    #[test]
    fn order_is_hierarchical_and_modes_are_distinct() {
        for space in [Space::Trunk, Space::Tensor] {
            for dim in 1..=3 {
                for p in 2..=MAX_ORDER {
                    let mut low = [[0u8; 3]; 1024];
                    let mut n = 0;
                    for_each_mode(dim, p - 1, space, |m| {
                        low[n] = m;
                        n += 1;
                    });
                    let mut i = 0;
                    let mut all = [[0u8; 3]; 1024];
                    for_each_mode(dim, p, space, |m| {
                        if i < n {
                            assert_eq!(m, low[i], "dim {dim}, p {p}, mode {i}");
                        }
                        assert!(level(m, space) <= p);
                        all[i] = m;
                        i += 1;
                    });
                    for a in 0..i {
                        for b in 0..a {
                            assert_ne!(all[a], all[b], "mode {a} repeats mode {b}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn default_quadrature_is_exact_and_follows_the_seed_above_p_2() {
        let n: [usize; 6] = core::array::from_fn(|i| default_quadrature(i + 1));
        assert_eq!(n, [2, 3, 4, 5, 7, 8]);
        assert!((1..=MAX_ORDER).all(|p| default_quadrature(p) <= crate::MAX_QUADRATURE));
    }
}

/// Launch shape of the tiled element-matrix kernel (`ke_tiled`), for an element of `nf` shape
/// functions, `nq` points, `dim` axes and a `strains`² material matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tiling {
    /// Functions per tile side (`TS`): each work-item owns `TS x TS` function pairs.
    pub ts: usize,
    /// Work-items per element slice (`WT`, local dimension 0).
    pub wt: usize,
    /// Elements per work-group (`EPG`, local dimension 1).
    pub epg: usize,
    /// Points staged in local memory at a time (`QC`, at most `wt`).
    pub qc: usize,
}

/// Local memory the tiled kernel may use (NVIDIA's and PoCL's limit is 48 KiB or more).
pub const TILED_LOCAL_BYTES: usize = 40 * 1024;

impl Tiling {
    /// Tiles (pairs of function tiles `A >= B`) of one element.
    pub const fn tiles(&self, nf: usize) -> usize {
        let ntf = nf.div_ceil(self.ts);
        ntf * (ntf + 1) / 2
    }

    /// Bytes of local memory a work-group needs.
    pub const fn local_bytes(&self, nf: usize, dim: usize, strains: usize) -> usize {
        8 * self.epg * self.qc * (dim * nf + strains * strains + dim * dim)
    }

    /// The default for an element: tiles of 2 functions, groups of about 128 work-items (whole
    /// elements per group while an element has fewer tiles), as many points per chunk as fit.
    pub const fn default_for(nf: usize, nq: usize, dim: usize, strains: usize) -> Tiling {
        let ts = 2;
        let ntf = nf.div_ceil(ts);
        let tiles = ntf * (ntf + 1) / 2;
        let (wt, epg) = if tiles >= 96 {
            (128, 1)
        } else {
            // Round the element's tiles up to a multiple of 8, fill about 128 work-items.
            let wt = tiles.div_ceil(8) * 8;
            let epg = 128 / wt;
            (wt, if epg == 0 { 1 } else { epg })
        };
        let per_point = 8 * epg * (dim * nf + strains * strains + dim * dim);
        let mut qc = TILED_LOCAL_BYTES / per_point;
        if qc > wt {
            qc = wt;
        }
        if qc > nq {
            qc = nq;
        }
        if qc == 0 {
            qc = 1;
        }
        Tiling { ts, wt, epg, qc }
    }
}

/// Work-items per element of algorithm II: the points rounded up to a power of two.
pub const fn points_per_group(nq: usize) -> usize {
    nq.next_power_of_two()
}

/// The non-zeros of the strain-displacement matrix `B` for one shape function, as
/// (strain row, DOF component, derivative axis): plane elasticity (ε_xx, ε_yy, γ_xy) for
/// `dofs = 2, strains = 3`; 3-D (ε_xx, ε_yy, ε_zz, γ_yz, γ_xz, γ_xy) for `dofs = 3, strains = 6`;
/// the gradient for `dofs = 1` (diffusion). Empty for any other combination.
pub const fn b_nonzeros(dim: usize, dofs: usize, strains: usize) -> &'static [(usize, usize, usize)] {
    match (dim, dofs, strains) {
        (2, 2, 3) => &[(0, 0, 0), (1, 1, 1), (2, 0, 1), (2, 1, 0)],
        (3, 3, 6) => &[
            (0, 0, 0),
            (1, 1, 1),
            (2, 2, 2),
            (3, 1, 2),
            (3, 2, 1),
            (4, 0, 2),
            (4, 2, 0),
            (5, 0, 1),
            (5, 1, 0),
        ],
        (1, 1, 1) => &[(0, 0, 0)],
        (2, 1, 2) => &[(0, 0, 0), (1, 0, 1)],
        (3, 1, 3) => &[(0, 0, 0), (1, 0, 1), (2, 0, 2)],
        _ => &[],
    }
}

/// The non-zeros of `B` for any operator: [`b_nonzeros`]'s tables; otherwise, when
/// `strains = dofs · dim`, the full gradient (strain `c · dim + k` is `∂u_c/∂x_k`); when
/// `strains = dofs · (dim + 1)`, the values and then the full gradient (strain `c` is `u_c`,
/// written with the axis `dim`; strain `dofs + c · dim + k` is `∂u_c/∂x_k`). Empty for any other
/// combination.
pub fn b_entries(dim: usize, dofs: usize, strains: usize) -> impl Iterator<Item = (usize, usize, usize)> + Clone {
    let table = b_nonzeros(dim, dofs, strains);
    let gradient = table.is_empty() && strains == dofs * dim;
    let full = table.is_empty() && dim > 0 && strains == dofs * (dim + 1);
    let values = if full { dofs } else { 0 };
    let grads = if gradient || full { dofs * dim } else { 0 };
    table
        .iter()
        .copied()
        .chain((0..values).map(move |c| (c, c, dim)))
        .chain((0..grads).map(move |t| (values + t, t / dim, t % dim)))
}

/// Bytes the geometry pre-pass (`ke_geometry`) writes per element: `J⁻¹` and `w det J` at each
/// of `nq` points, read by the staged kernel with `Staging::pre` and by the tensor-core kernel.
pub const fn geometry_bytes(nq: usize, dim: usize) -> usize {
    8 * nq * (dim * dim + 1)
}

/// Local memory the staged kernel may use: under the 48 KiB a work-group gets on NVIDIA (PoCL
/// has more), so two groups of 128 work-items share a multiprocessor.
pub const STAGED_LOCAL_BYTES: usize = 46 * 1024;

/// Launch shape of the staged element-matrix kernel (`ke_staged`): each work-item owns a
/// `ta x tb` tile of function pairs (rows `a`, columns `b`) for all points; the work-group
/// stages the mapped derivatives of every function and `H_b = w det J · D · B_b` of the
/// functions its tiles need, `qc` points at a time, so each `H_b` is formed once per group and
/// point instead of once per tile. Tiles are numbered column by column (`B` outer, `A` from
/// the diagonal down), so a slice of `wt` consecutive tiles needs a short run of columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Staging {
    /// Rows (functions `a`) per tile.
    pub ta: usize,
    /// Columns (functions `b`) per tile.
    pub tb: usize,
    /// Work-items per element slice (local dimension 0).
    pub wt: usize,
    /// Elements per work-group (local dimension 1).
    pub epg: usize,
    /// Points staged in local memory at a time.
    pub qc: usize,
    /// `J⁻¹` and `w det J` of every point from a pre-pass (`ke_geometry`, global memory,
    /// `dim² + 1` doubles per element and point) instead of computed per chunk by the group.
    pub pre: bool,
    /// Moments (needs `pre`; operators whose `B` is linear in the gradient with `dofs = dim`,
    /// i.e. elasticity): each pair accumulates `M_ab[k][l] = Σ_q w|J| ∂_k N_a ∂_l N_b`
    /// (`dim²` multiply-adds per point instead of `B_aᵀ (D B_b)`'s `dofs² · dim`) and forms
    /// `K_ab[i][j] = Σ_kl C[i][j][k][l] M_ab[k][l]` once, `C` from the element's constant `D`.
    /// Nothing but the mapped derivatives and `w|J|` is staged per point.
    pub moments: bool,
}

impl Staging {
    /// First row tile of column tile `col` (the tile holding the diagonal).
    const fn first_row(&self, col: usize) -> usize {
        col * self.tb / self.ta
    }

    /// Tiles of one element: pairs of row tile `A` and column tile `B` holding some `a >= b`.
    pub const fn tiles(&self, nf: usize) -> usize {
        let (nta, ntb) = (nf.div_ceil(self.ta), nf.div_ceil(self.tb));
        let mut n = 0;
        let mut col = 0;
        while col < ntb {
            n += nta - self.first_row(col);
            col += 1;
        }
        n
    }

    /// The most functions `b` whose `H_b` one slice of `wt` tiles needs (`NBS`, a multiple of
    /// `tb`).
    pub const fn span(&self, nf: usize) -> usize {
        let (nta, ntb) = (nf.div_ceil(self.ta), nf.div_ceil(self.tb));
        let tiles = self.tiles(nf);
        let mut most = 0;
        let mut start = 0;
        while start < tiles {
            let end = if start + self.wt < tiles {
                start + self.wt
            } else {
                tiles
            } - 1;
            // Columns of the first and last tile of the slice.
            let (mut col, mut seen, mut first, mut last) = (0, 0, usize::MAX, 0);
            while col < ntb {
                let next = seen + nta - self.first_row(col);
                if first == usize::MAX && start < next {
                    first = col;
                }
                if end < next {
                    last = col;
                    break;
                }
                seen = next;
                col += 1;
            }
            let cols = last - first + 1;
            if cols > most {
                most = cols;
            }
            start += self.wt;
        }
        most * self.tb
    }

    /// Bytes of local memory a work-group needs.
    pub const fn local_bytes(&self, nf: usize, dim: usize, dofs: usize, strains: usize) -> usize {
        8 * self.epg * (self.qc * self.per_point(nf, dim, dofs, strains) + self.local_fixed(strains))
    }

    /// Bytes of global memory the pre-pass writes per element (none without it).
    pub const fn geometry_bytes(&self, nq: usize, dim: usize) -> usize {
        if self.pre {
            geometry_bytes(nq, dim)
        } else {
            0
        }
    }

    /// Doubles staged per point and element (`w det J · D` and `J⁻¹` only without the
    /// pre-pass; with it `D` is staged once per element, [`Staging::local_fixed`]).
    const fn per_point(&self, nf: usize, dim: usize, dofs: usize, strains: usize) -> usize {
        if self.moments {
            return dim * nf.div_ceil(self.ta) * self.ta + 1;
        }
        let geometry = if self.pre { 0 } else { strains * strains + dim * dim };
        dim * nf.div_ceil(self.ta) * self.ta + self.span(nf) * strains * dofs + geometry
    }

    /// Doubles staged once per element (`D` with the pre-pass; and `C` with moments, `dofs² ·
    /// dim²`, at most 81).
    const fn local_fixed(&self, strains: usize) -> usize {
        if self.moments {
            strains * strains + 81
        } else if self.pre {
            strains * strains
        } else {
            0
        }
    }

    /// The default for an element: 4 x 2 tiles (2 x 2 for fewer than 16 functions), slices of
    /// 128 work-items (whole elements per group while an element has fewer tiles), as many
    /// points per chunk as fit in [`STAGED_LOCAL_BYTES`] (at most one per work-item).
    pub const fn default_for(nf: usize, nq: usize, dim: usize, dofs: usize, strains: usize) -> Staging {
        Staging::sized(if nf >= 16 { 4 } else { 2 }, 2, 128, nf, nq, dim, dofs, strains)
    }

    /// The same shape with the geometry pre-pass on or off, its chunk of points resized to
    /// the local memory that frees or takes.
    pub const fn with_pre(self, pre: bool, nf: usize, nq: usize, dim: usize, dofs: usize, strains: usize) -> Staging {
        let mut s = self;
        s.pre = pre;
        if !pre {
            s.moments = false;
        }
        s.qc = s.chunk(nf, nq, dim, dofs, strains);
        s
    }

    /// This shape with moments (and so the pre-pass) on or off, the chunk resized to fit.
    pub const fn with_moments(
        self,
        on: bool,
        nf: usize,
        nq: usize,
        dim: usize,
        dofs: usize,
        strains: usize,
    ) -> Staging {
        let mut s = self;
        s.moments = on;
        if on {
            s.pre = true;
        }
        s.qc = s.chunk(nf, nq, dim, dofs, strains);
        s
    }

    /// As many points per chunk as fit in [`STAGED_LOCAL_BYTES`], at most `nq` and one per
    /// work-item, at least one.
    const fn chunk(&self, nf: usize, nq: usize, dim: usize, dofs: usize, strains: usize) -> usize {
        let fixed = 8 * self.epg * self.local_fixed(strains);
        let per = 8 * self.epg * self.per_point(nf, dim, dofs, strains);
        let mut qc = if fixed < STAGED_LOCAL_BYTES {
            (STAGED_LOCAL_BYTES - fixed) / per
        } else {
            0
        };
        if qc > nq {
            qc = nq;
        }
        if qc > self.wt {
            qc = self.wt;
        }
        if qc == 0 {
            1
        } else {
            qc
        }
    }

    /// `ta x tb` tiles in groups of about `group` work-items, as many points per chunk as fit.
    #[allow(clippy::too_many_arguments)] // the element's five sizes beside the three chosen ones
    pub const fn sized(
        ta: usize,
        tb: usize,
        group: usize,
        nf: usize,
        nq: usize,
        dim: usize,
        dofs: usize,
        strains: usize,
    ) -> Staging {
        let mut s = Staging {
            ta,
            tb,
            wt: group,
            epg: 1,
            qc: 1,
            pre: false,
            moments: false,
        };
        let tiles = s.tiles(nf);
        if tiles < group {
            s.wt = tiles.div_ceil(8) * 8;
            s.epg = group / s.wt;
            if s.epg == 0 {
                s.epg = 1;
            }
        }
        s.qc = s.chunk(nf, nq, dim, dofs, strains);
        s
    }
}

#[cfg(test)]
mod staging_tests {
    use super::*;

    /// Column-major tiles with some `a >= b`, counted and spanned the long way.
    #[test]
    fn moments_stage_only_derivatives_and_weights() {
        // p = 5 trunk hexahedron: 222 functions, 3-D elasticity.
        let s = Staging::sized(4, 2, 128, 222, 343, 3, 3, 6);
        let m = s.with_moments(true, 222, 343, 3, 3, 6);
        assert!(m.pre && m.moments);
        assert_eq!(m.local_bytes(222, 3, 3, 6), 8 * (m.qc * (3 * 224 + 1) + 36 + 81));
        assert!(m.local_bytes(222, 3, 3, 6) <= STAGED_LOCAL_BYTES);
        // Without the h_b staging, a chunk holds more points than the pre-pass kernel's.
        assert!(m.qc > s.with_pre(true, 222, 343, 3, 3, 6).qc);
        // Turning the pre-pass off turns moments off.
        assert!(!m.with_pre(false, 222, 343, 3, 3, 6).moments);
    }

    #[test]
    fn tiles_and_span_match_a_direct_count() {
        for nf in [4usize, 8, 20, 32, 50, 74, 105] {
            for (ta, tb, wt) in [(4, 2, 128), (2, 2, 64), (3, 3, 32), (4, 1, 16), (2, 4, 8)] {
                let s = Staging {
                    ta,
                    tb,
                    wt,
                    epg: 1,
                    qc: 1,
                    pre: false,
                    moments: false,
                };
                // The column of each tile, in order.
                let mut cols = [0usize; 4096];
                let mut n = 0;
                for col in 0..nf.div_ceil(tb) {
                    for row in 0..nf.div_ceil(ta) {
                        if row * ta + ta > col * tb {
                            cols[n] = col;
                            n += 1;
                        }
                    }
                }
                assert_eq!(s.tiles(nf), n, "nf {nf}, {ta}x{tb}");
                let span = cols[..n].chunks(wt).map(|c| c[c.len() - 1] - c[0] + 1).max().unwrap();
                assert_eq!(s.span(nf), span * tb, "nf {nf}, {ta}x{tb}x{wt}");
            }
        }
    }
}

/// Launch shape of the tensor-core moment kernel (`ke_mma`, elasticity after the geometry
/// pre-pass): the moments of all function pairs are one product `(Y W) Yᵀ` per element, run
/// as 8 x 8 x 4 f64 matrix products (`mma.sync` on NVIDIA from sm_80, the same entries per
/// work-item elsewhere). The lower triangle is cut into superblocks of `dim x dim` products
/// (8 x 8 function pairs); a warp owns a tile of `rows` block rows by a run of up to `spw`
/// superblocks for all points, `warps` warps per work-group, `qc` points staged at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mma {
    /// Superblocks per warp along a block row (a run).
    pub spw: usize,
    /// Block rows per warp: each column fragment then feeds `rows · dim` products (a register
    /// tile of `rows × spw` superblocks; more accumulators per work-item).
    pub rows: usize,
    /// Warps (32 work-items) per work-group.
    pub warps: usize,
    /// Points staged in local memory at a time (a multiple of 4).
    pub qc: usize,
    /// Two chunk buffers: the next chunk is staged while this one's products run, one barrier
    /// per chunk instead of two (twice the chunk's local memory).
    pub double_buffer: bool,
    /// The contraction of the moments with `C` as 16 × 8 × 4 tensor products (where the
    /// device takes them; elsewhere ignored) instead of multiply-adds per pair.
    pub tensor_contraction: bool,
}

impl Mma {
    /// Chunk buffers in local memory (1, or 2 with [`Mma::double_buffer`]).
    pub const fn buffers(&self) -> usize {
        if self.double_buffer {
            2
        } else {
            1
        }
    }

    /// Superblock rows of `nf` functions (8 functions each).
    pub const fn blocks(nf: usize) -> usize {
        nf.div_ceil(8)
    }

    /// Tiles of the lower triangle: the `rows` block rows from `I` hold
    /// `ceil(min(I + rows, blocks) / spw)`, up to the diagonal of their last row.
    pub const fn runs(&self, nf: usize) -> usize {
        // (0 rows or superblocks per run are refused at launch; counted here as 1 each)
        let rows = if self.rows == 0 { 1 } else { self.rows };
        let spw = if self.spw == 0 { 1 } else { self.spw };
        let blocks = Mma::blocks(nf);
        let mut n = 0;
        let mut i = 0;
        while i < blocks {
            let end = if i + rows < blocks { i + rows } else { blocks };
            n += end.div_ceil(spw);
            i += rows;
        }
        n
    }

    /// Work-groups per element.
    pub const fn slices(&self, nf: usize) -> usize {
        self.runs(nf).div_ceil(self.warps)
    }

    /// Row stride of the staged chunk: the first from `qc` that is 4 or 12 modulo 16, so the
    /// four rows a half-warp's fragment reads fall in different banks.
    pub const fn stride(&self) -> usize {
        let mut s = self.qc;
        while s % 16 != 4 && s % 16 != 12 {
            s += 1;
        }
        s
    }

    /// Doubles of the staging buffer `ly`: the chunk (or two), or each warp's superblock at the
    /// end.
    pub const fn staged_doubles(&self, nf: usize, dim: usize) -> usize {
        let chunk = self.buffers() * Mma::blocks(nf) * 8 * dim * self.stride();
        let out = self.warps * 64 * dim * dim;
        if chunk > out {
            chunk
        } else {
            out
        }
    }

    /// Doubles of `lw`: the chunk's `w det J`, then its `J⁻¹` and `w det J` from the pre-pass
    /// (per buffer).
    pub const fn point_doubles(&self, dim: usize) -> usize {
        self.buffers() * self.qc * (dim * dim + 2)
    }

    /// Bytes of local memory a work-group needs (`C` at most 81 doubles).
    pub const fn local_bytes(&self, nf: usize, dim: usize, strains: usize) -> usize {
        8 * (self.staged_doubles(nf, dim) + self.point_doubles(dim) + 81 + strains * strains)
    }

    /// The default (each choice the fastest measured on the H100, docs/ELEMENT-MATRICES.md):
    /// - from 32 functions in an even number of block rows, register tiles of 2 block rows by
    ///   runs of 2 superblocks (each column fragment feeds 6 products in 3-D), with the
    ///   contraction with `C` on tensor cores (trunk p = 3, 5, 6 against one-row runs: 1.05 →
    ///   0.76, 11.43 → 8.89, 31.89 → 27.39 ms); 4 warps per group where the tiles are that few
    ///   (p = 3: 3 tiles);
    /// - otherwise (odd block rows would leave the last tile half idle) runs of 2 superblocks
    ///   (3 from 64 functions) of one block row, 8 warps per group, the contraction on tensor
    ///   cores from 40 to 99 functions (trunk p = 4: 2.85 → 2.69 ms);
    /// - the largest multiple of 4 points (at most 16) whose chunk fits in
    ///   [`STAGED_LOCAL_BYTES`] and whose point quads divide the warps, so that each work-item
    ///   stages at one point and reads its `J⁻¹` once per chunk (p = 6: 8 points, 32.1 ms,
    ///   against 12 points, 37.2 ms).
    pub const fn default_for(nf: usize, dim: usize, strains: usize) -> Mma {
        let tiles = nf >= 32 && Mma::blocks(nf).is_multiple_of(2);
        let mut m = Mma {
            spw: if nf >= 64 && !tiles { 3 } else { 2 },
            rows: if tiles { 2 } else { 1 },
            warps: 8,
            qc: 16,
            double_buffer: false,
            // one block row: measured faster on the H100 at 50 and 74 functions (trunk p = 4:
            // 2.85 → 2.69 ms, p = 5: 12.2 → 11.6 ms), slower at 32 and 105 (p = 3, 6); with
            // tiles faster at each
            tensor_contraction: tiles || (nf >= 40 && nf < 100),
        };
        if tiles && m.runs(nf) <= 4 {
            m.warps = 4;
        }
        while m.qc > 4 && (m.local_bytes(nf, dim, strains) > STAGED_LOCAL_BYTES || !m.warps.is_multiple_of(m.qc / 4)) {
            m.qc -= 4;
        }
        m
    }
}

#[cfg(test)]
mod mma_tests {
    extern crate std;
    use super::Mma;
    use std::{vec, vec::Vec};

    fn shape(spw: usize, rows: usize, warps: usize) -> Mma {
        Mma {
            spw,
            rows,
            warps,
            qc: 8,
            double_buffer: false,
            tensor_contraction: false,
        }
    }

    /// The tiles in the kernel's order (`clforge_mma_run`): rows from `I` in steps of `rows`,
    /// runs from column 0 in steps of `spw` while a column is at most the tile's last real row.
    fn tiles(t: &Mma, nf: usize) -> Vec<(usize, usize)> {
        let b = Mma::blocks(nf);
        let mut v = Vec::new();
        for i in (0..b).step_by(t.rows) {
            let last = (i + t.rows).min(b) - 1;
            for j in (0..=last).step_by(t.spw) {
                v.push((i, j));
            }
        }
        v
    }

    #[test]
    fn tiles_cover_the_lower_triangle_once_and_are_counted() {
        for nf in [8usize, 20, 32, 50, 74, 105, 130] {
            let b = Mma::blocks(nf);
            for (spw, rows) in [(1, 1), (2, 1), (3, 1), (2, 2), (1, 2), (1, 3), (3, 2), (2, 3)] {
                let t = shape(spw, rows, 8);
                let list = tiles(&t, nf);
                assert_eq!(t.runs(nf), list.len(), "nf {nf}, {spw}x r{rows}");
                assert_eq!(t.slices(nf), list.len().div_ceil(8));
                let mut seen = vec![0u32; b * b];
                for &(i, j) in &list {
                    let mut real = 0;
                    for r in i..(i + rows).min(b) {
                        for c in j..(j + spw).min(r + 1) {
                            seen[r * b + c] += 1;
                            real += 1;
                        }
                    }
                    assert!(real > 0, "nf {nf}, {spw}x r{rows}: tile ({i}, {j}) holds no superblock");
                }
                for r in 0..b {
                    for c in 0..b {
                        assert_eq!(
                            seen[r * b + c],
                            u32::from(c <= r),
                            "nf {nf}, {spw}x r{rows}: ({r}, {c})"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn the_default_tiles_even_block_rows_from_32_functions() {
        // trunk p = 3, 4, 5, 6 in 3-D elasticity (6 strains)
        let d = |nf| Mma::default_for(nf, 3, 6);
        assert_eq!((d(32).rows, d(32).spw, d(32).warps, d(32).qc), (2, 2, 4, 16));
        assert!(d(32).tensor_contraction);
        assert_eq!((d(50).rows, d(50).spw, d(50).warps), (1, 2, 8));
        assert!(d(50).tensor_contraction);
        assert!(!d(20).tensor_contraction);
        assert_eq!((d(74).rows, d(74).spw, d(74).warps, d(74).qc), (2, 2, 8, 16));
        assert_eq!(d(74).slices(74), 2);
        assert_eq!((d(105).rows, d(105).spw, d(105).qc), (2, 2, 8));
        for nf in [20usize, 32, 50, 74, 105] {
            assert!(d(nf).local_bytes(nf, 3, 6) <= super::STAGED_LOCAL_BYTES, "nf {nf}");
        }
        // zero rows or runs count as 1 (refused at launch), never a loop without end
        assert_eq!(shape(2, 0, 8).runs(74), shape(2, 1, 8).runs(74));
        assert_eq!(shape(0, 1, 8).runs(74), shape(1, 1, 8).runs(74));
    }
}
