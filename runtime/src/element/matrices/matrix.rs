//! A small dense row-major matrix: element matrices are at most a few dozen rows, so a
//! `Vec<f64>` and plain loops are all they need (no linear-algebra dependency).

use std::fmt;
use std::ops::{Index, IndexMut};

/// A dense `rows × cols` matrix of `f64`, row-major. Like slices and `vec!`, indexing out of
/// range and sizes whose product overflows panic: the sizes are an element's (a few dozen).
///
/// ```
/// use clforge_runtime::element::Matrix;
/// let a = Matrix::from_rows(&[[1.0, 2.0], [3.0, 4.0]]);
/// assert_eq!(a[(1, 0)], 3.0);
/// assert_eq!(a.transpose()[(1, 0)], 2.0);
/// assert_eq!(a.mul(&a).map(|p| p[(0, 0)]), Some(7.0));
/// ```
#[derive(Clone, PartialEq)]
pub struct Matrix {
    rows: usize,
    cols: usize,
    data: Vec<f64>,
}

impl Matrix {
    /// Entry `(i, j)`, or `None` out of range (as `slice::get`).
    pub fn get(&self, i: usize, j: usize) -> Option<f64> {
        (i < self.rows && j < self.cols).then(|| self.data[i * self.cols + j])
    }

    /// Panics as a slice does on an index out of range: `(0, 4)` of a 3×3 matrix would
    /// otherwise land on another entry of the flat storage.
    fn check(&self, i: usize, j: usize) {
        assert!(
            i < self.rows && j < self.cols,
            "index ({i}, {j}) out of range for a {}x{} matrix",
            self.rows,
            self.cols
        );
    }

    /// A matrix of zeros.
    pub fn zeros(rows: usize, cols: usize) -> Matrix {
        Matrix {
            rows,
            cols,
            data: vec![0.0; rows * cols],
        }
    }

    /// The identity matrix of size `n`.
    pub fn identity(n: usize) -> Matrix {
        let mut m = Matrix::zeros(n, n);
        for i in 0..n {
            m[(i, i)] = 1.0;
        }
        m
    }

    /// A matrix from fixed-size rows (what the element DSL's functions return).
    pub fn from_rows<const C: usize>(rows: &[[f64; C]]) -> Matrix {
        Matrix {
            rows: rows.len(),
            cols: C,
            data: rows.iter().flatten().copied().collect(),
        }
    }

    /// A matrix from a function of (row, column).
    pub fn from_fn(rows: usize, cols: usize, mut f: impl FnMut(usize, usize) -> f64) -> Matrix {
        let mut m = Matrix::zeros(rows, cols);
        for i in 0..rows {
            for j in 0..cols {
                m[(i, j)] = f(i, j);
            }
        }
        m
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Number of columns.
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// The entries, row after row.
    pub fn data(&self) -> &[f64] {
        &self.data
    }

    /// One row (empty if there is no row `i`).
    pub fn row(&self, i: usize) -> &[f64] {
        let start = i.saturating_mul(self.cols);
        self.data.get(start..start.saturating_add(self.cols)).unwrap_or(&[])
    }

    /// The transpose.
    pub fn transpose(&self) -> Matrix {
        Matrix::from_fn(self.cols, self.rows, |i, j| self[(j, i)])
    }

    /// The product `self · other`, or `None` if the inner sizes differ.
    pub fn mul(&self, other: &Matrix) -> Option<Matrix> {
        if self.cols != other.rows {
            return None;
        }
        let mut out = Matrix::zeros(self.rows, other.cols);
        for i in 0..self.rows {
            for k in 0..self.cols {
                let a = self[(i, k)];
                if a == 0.0 {
                    continue;
                }
                for j in 0..other.cols {
                    out.data[i * other.cols + j] += a * other.data[k * other.cols + j];
                }
            }
        }
        Some(out)
    }

    /// The product with a vector, or `None` if its length is not `cols`.
    pub fn mul_vec(&self, v: &[f64]) -> Option<Vec<f64>> {
        (v.len() == self.cols).then(|| {
            (0..self.rows)
                .map(|i| self.row(i).iter().zip(v).map(|(a, b)| a * b).sum())
                .collect()
        })
    }

    /// Adds `factor · other` in place; `false` (and nothing changed) if the shapes differ.
    pub fn add_scaled(&mut self, other: &Matrix, factor: f64) -> bool {
        if (self.rows, self.cols) != (other.rows, other.cols) {
            return false;
        }
        for (a, b) in self.data.iter_mut().zip(&other.data) {
            *a += factor * b;
        }
        true
    }

    /// Largest absolute entry (0 for an empty matrix).
    pub fn max_abs(&self) -> f64 {
        self.data.iter().fold(0.0, |m, v| m.max(v.abs()))
    }
}

impl Index<(usize, usize)> for Matrix {
    type Output = f64;
    fn index(&self, (i, j): (usize, usize)) -> &f64 {
        self.check(i, j);
        &self.data[i * self.cols + j]
    }
}

impl IndexMut<(usize, usize)> for Matrix {
    fn index_mut(&mut self, (i, j): (usize, usize)) -> &mut f64 {
        self.check(i, j);
        &mut self.data[i * self.cols + j]
    }
}

impl fmt::Debug for Matrix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "Matrix {}x{} [", self.rows, self.cols)?;
        for i in 0..self.rows {
            let row: Vec<String> = self.row(i).iter().map(|v| format!("{v:12.5e}")).collect();
            writeln!(f, "  {}", row.join(" "))?;
        }
        write!(f, "]")
    }
}

#[cfg(test)]
mod tests {
    use super::Matrix;

    #[test]
    fn get_is_none_out_of_range() {
        let a = Matrix::from_rows(&[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]);
        assert_eq!(a.get(1, 2), Some(6.0));
        assert_eq!((a.get(0, 3), a.get(3, 0), a.get(0, 4)), (None, None, None));
    }

    /// `(0, 4)` of a 3×3 matrix is inside its flat storage (entry `(1, 1)`): it must panic as a
    /// slice index out of range does, not read another entry.
    #[test]
    #[should_panic(expected = "index (0, 4) out of range for a 3x3 matrix")]
    fn a_column_past_the_end_panics_like_a_slice() {
        let a = Matrix::from_rows(&[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]);
        let _ = a[(0, 4)];
    }

    #[test]
    #[should_panic(expected = "out of range")]
    fn writing_past_the_end_panics_like_a_slice() {
        let mut a = Matrix::from_rows(&[[1.0, 2.0], [3.0, 4.0]]);
        a[(1, 2)] = 0.0;
    }
}
