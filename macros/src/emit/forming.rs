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

/// `(c)[((i DOFS + j) DIM + k) DIM + l] = Σ D[s][t]` over `B`'s non-zeros `(s, i, k)` and
/// `(t, j, l)`: the material tensor the moment form contracts, `K_ab[i][j] = Σ_kl
/// C[i][j][k][l] M_ab[k][l]` with `M_ab[k][l] = Σ_q w|J| ∂_k N_a ∂_l N_b` (valid because every
/// entry of `B` is one gradient component).
pub fn c_lines(f: &Forming) -> Vec<String> {
    let mut out = Vec::new();
    for i in 0..f.dofs {
        for j in 0..f.dofs {
            for k in 0..f.dim {
                for l in 0..f.dim {
                    let terms: Vec<String> =
                        f.b.iter()
                            .filter(|&&(_, c, a)| c == i && a == k)
                            .flat_map(|&(s, _, _)| {
                                f.b.iter()
                                    .filter(move |&&(_, c, a)| c == j && a == l)
                                    .map(move |&(t, _, _)| format!("(d)[{}]", s * f.strains + t))
                            })
                            .collect();
                    let rhs = if terms.is_empty() {
                        "0.0".to_string()
                    } else {
                        terms.join(" + ")
                    };
                    out.push(format!("(c)[{}] = {rhs};", ((i * f.dofs + j) * f.dim + k) * f.dim + l));
                }
            }
        }
    }
    out
}
