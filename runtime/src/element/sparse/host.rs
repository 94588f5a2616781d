//! CSR matrices on the host: the symbolic pattern of a DOF map, the values, and assembly of
//! packed element matrices.

use super::*;

/// The symbolic structure of a CSR matrix: for each of `n` rows, its columns in increasing order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CsrPattern {
    pub(super) n: usize,
    pub(super) row_ptr: Vec<u32>,
    pub(super) cols: Vec<u32>,
}

impl CsrPattern {
    /// A square pattern from its row pointers (`n + 1`, from 0, non-decreasing) and each row's
    /// columns (below `n`, strictly increasing). [`Error::InvalidConfig`] says which rule fails;
    /// [`Error::TooLarge`] beyond the kernels' 31-bit indices.
    pub fn new(row_ptr: Vec<u32>, cols: Vec<u32>) -> Result<CsrPattern> {
        let n = row_ptr
            .len()
            .checked_sub(1)
            .ok_or_else(|| Error::InvalidConfig("a CSR pattern has n + 1 row pointers; none were given".into()))?;
        index32(|| "a CSR pattern's entries".into(), cols.len())?;
        if row_ptr[0] != 0 || row_ptr[n] as usize != cols.len() {
            return Err(Error::InvalidConfig(format!(
                "row pointers run from {} to {}; they must run from 0 to the {} columns given",
                row_ptr[0],
                row_ptr[n],
                cols.len()
            )));
        }
        for r in 0..n {
            let (lo, hi) = (row_ptr[r] as usize, row_ptr[r + 1] as usize);
            if lo > hi {
                return Err(Error::InvalidConfig(format!(
                    "row pointers decrease at row {r} ({lo} > {hi})"
                )));
            }
            let row = &cols[lo..hi];
            if let Some(k) = row.windows(2).position(|w| w[0] >= w[1]) {
                return Err(Error::InvalidConfig(format!(
                    "row {r}'s columns must increase strictly; {} is followed by {}",
                    row[k],
                    row[k + 1]
                )));
            }
            if let Some(&c) = row.iter().find(|&&c| c as usize >= n) {
                return Err(Error::InvalidConfig(format!(
                    "row {r} has column {c}, past the {n} columns"
                )));
            }
        }
        Ok(CsrPattern { n, row_ptr, cols })
    }

    /// Number of rows (and columns).
    pub fn n(&self) -> usize {
        self.n
    }

    /// Number of stored entries.
    pub fn nnz(&self) -> usize {
        self.cols.len()
    }

    /// Row `r`'s entries are `row_ptr[r]..row_ptr[r + 1]` (`n + 1` offsets).
    pub fn row_ptr(&self) -> &[u32] {
        &self.row_ptr
    }

    /// The column of each entry, increasing within each row.
    pub fn cols(&self) -> &[u32] {
        &self.cols
    }

    /// The entries of row `r` (empty past the last row).
    pub fn row(&self, r: usize) -> std::ops::Range<usize> {
        match (self.row_ptr.get(r), self.row_ptr.get(r + 1)) {
            (Some(&lo), Some(&hi)) => lo as usize..hi as usize,
            _ => 0..0,
        }
    }

    /// The entry holding `(row, col)`, if the pattern has one.
    pub fn find(&self, row: usize, col: usize) -> Option<usize> {
        let range = self.row(row);
        let start = range.start;
        let col = u32::try_from(col).ok()?;
        self.cols[range].binary_search(&col).ok().map(|k| start + k)
    }
}

/// The CSR pattern of the matrix assembled over `map`: `(i, j)` for every two DOFs of one element
/// (both orders, so the pattern is symmetric) and every diagonal `(i, i)`, columns sorted. Fails
/// with [`Error::TooLarge`] when its entries exceed the kernels' 31-bit indices.
pub fn pattern(map: &DofMap) -> Result<CsrPattern> {
    let n = map.dofs;
    let by_dof = ElementsByDof::new(map);
    let mut row_ptr = Vec::with_capacity(n + 1);
    row_ptr.push(0u32);
    let mut cols: Vec<u32> = Vec::new();
    // `mark[c] == r`: column c is already in row r.
    let mut mark = vec![usize::MAX; n];
    let mut row: Vec<u32> = Vec::new();
    for (r, r32) in (0..n).zip(0u32..) {
        row.clear();
        row.push(r32);
        mark[r] = r;
        for &e in by_dof.of(r) {
            for &c in map.element_dofs(e as usize) {
                if mark[c as usize] != r {
                    mark[c as usize] = r;
                    row.push(c);
                }
            }
        }
        row.sort_unstable();
        cols.extend_from_slice(&row);
        row_ptr.push(index32(|| format!("the CSR pattern of {n} DOFs"), cols.len())?);
    }
    Ok(CsrPattern { n, row_ptr, cols })
}

/// A CSR matrix on the host: a [`CsrPattern`] and a value per entry.
#[derive(Clone, Debug, PartialEq)]
pub struct HostCsr {
    pub(super) pattern: CsrPattern,
    pub(super) values: Vec<f64>,
}

impl HostCsr {
    /// A matrix of `pattern` holding `values`, one per entry.
    pub fn new(pattern: CsrPattern, values: Vec<f64>) -> Result<HostCsr> {
        if values.len() != pattern.nnz() {
            return Err(Error::LengthMismatch {
                what: "CSR values (one per entry of the pattern)".into(),
                expected: pattern.nnz(),
                found: values.len(),
            });
        }
        Ok(HostCsr { pattern, values })
    }

    /// Number of rows (and columns).
    pub fn n(&self) -> usize {
        self.pattern.n
    }

    /// Number of stored entries.
    pub fn nnz(&self) -> usize {
        self.pattern.nnz()
    }

    /// The symbolic structure.
    pub fn pattern(&self) -> &CsrPattern {
        &self.pattern
    }

    /// Row offsets, see [`CsrPattern::row_ptr`].
    pub fn row_ptr(&self) -> &[u32] {
        &self.pattern.row_ptr
    }

    /// Column of each entry, see [`CsrPattern::cols`].
    pub fn cols(&self) -> &[u32] {
        &self.pattern.cols
    }

    /// The value of each entry.
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// `A[row][col]`: the stored value, or 0 outside the pattern.
    pub fn get(&self, row: usize, col: usize) -> f64 {
        self.pattern.find(row, col).map_or(0.0, |k| self.values[k])
    }

    /// The diagonal (0 where the pattern has no diagonal entry).
    pub fn diagonal(&self) -> Vec<f64> {
        (0..self.n()).map(|r| self.get(r, r)).collect()
    }

    /// `A x`; [`Error::LengthMismatch`] unless `x` has `n` entries.
    pub fn mul(&self, x: &[f64]) -> Result<Vec<f64>> {
        check_len("the vector multiplied", self.n(), x.len())?;
        let mut y = vec![0.0; self.n()];
        self.mul_into(x, &mut y);
        Ok(y)
    }

    /// `y = A x` for `x` and `y` of `n` entries (the caller checks).
    pub(super) fn mul_into(&self, x: &[f64], y: &mut [f64]) {
        for (r, yr) in y.iter_mut().enumerate() {
            let range = self.pattern.row(r);
            *yr = self.pattern.cols[range.clone()]
                .iter()
                .zip(&self.values[range])
                .map(|(&c, &v)| v * x[c as usize])
                .sum();
        }
    }
}

/// The matrix assembled over `map` from element matrices `ke` (packed lower triangles, see the
/// module docs) on the host, element after element: the reference of [`assemble`].
pub fn assemble_host(ke: &[f64], map: &DofMap) -> Result<HostCsr> {
    check_len("element matrices (`DofMap::ke_len`)", map.ke_len(), ke.len())?;
    let pattern = pattern(map)?;
    let mut values = vec![0.0; pattern.nnz()];
    let ne = map.per_element;
    for ((k, dofs), signs) in ke
        .chunks_exact(map.packed)
        .zip(map.index.chunks_exact(ne))
        .zip(map.sign.chunks_exact(ne))
    {
        for (i, (&di, &si)) in dofs.iter().zip(signs).enumerate() {
            for (j, (&dj, &sj)) in dofs.iter().zip(signs).enumerate() {
                let (a, b) = (i.max(j), i.min(j));
                if let Some(at) = pattern.find(di as usize, dj as usize) {
                    values[at] += f64::from(si) * f64::from(sj) * k[a * (a + 1) / 2 + b];
                }
            }
        }
    }
    Ok(HostCsr { pattern, values })
}
