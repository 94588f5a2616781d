//! The element-matrix kernels' unrolled lines: `h = w det J · D · B_b` and `k_ab = B_aᵀ h` for
//! one function pair, printed from the operator's non-zeros of `B` (no multiplications by zero).

use crate::ir::element::Forming;

/// `(h)[s DOFS + c] = Σ_t (wd)[s S + t] · B_b[t][c]`, one line per entry of `h`.
pub fn h_lines(f: &Forming) -> Vec<String> {
    let mut out = Vec::new();
    for s in 0..f.strains {
        for c in 0..f.dofs {
            let terms: Vec<String> =
                f.b.iter()
                    .filter(|&&(_, comp, _)| comp == c)
                    .map(|&(t, _, axis)| format!("(wd)[{}] * (g{axis})", s * f.strains + t))
                    .collect();
            let rhs = if terms.is_empty() {
                "0.0".to_string()
            } else {
                terms.join(" + ")
            };
            out.push(format!("(h)[{}] = {rhs};", s * f.dofs + c));
        }
    }
    out
}

/// `(kb)[i DOFS + j] OP Σ_s B_a[s][i] · (h)[s DOFS + j]`, one line per entry of the block.
pub fn kb_lines(f: &Forming) -> Vec<String> {
    let mut out = Vec::new();
    for i in 0..f.dofs {
        for j in 0..f.dofs {
            let terms: Vec<String> =
                f.b.iter()
                    .filter(|&&(_, comp, _)| comp == i)
                    .map(|&(s, _, axis)| format!("(g{axis}) * (h)[{}]", s * f.dofs + j))
                    .collect();
            let rhs = if terms.is_empty() {
                "0.0".to_string()
            } else {
                terms.join(" + ")
            };
            out.push(format!("(kb)[{}] OP {rhs};", i * f.dofs + j));
        }
    }
    out
}
