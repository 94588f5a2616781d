//! Exact scaling by powers of two, so that numeric routines work on values of order one
//! whatever the scale of their input (norms and products of values near 1e-300 or 1e300 would
//! underflow or overflow).

/// `v · 2^e` in two exact steps, so that neither factor leaves f64's normal range (`e` may be
/// anywhere in ±2 100, which covers every ratio of two finite f64s).
pub(crate) fn times_pow2(v: f64, e: i32) -> f64 {
    let pow2 = |k: i32| f64::from_bits(((k + 1023) as u64) << 52);
    let half = e / 2;
    v * pow2(half) * pow2(e - half)
}

/// The `e` with `2^e ≤ max |v| < 2^(e+1)` over the finite non-zero entries; `None` when there
/// are none.
pub(crate) fn binary_exponent(v: &[f64]) -> Option<i32> {
    let max = v.iter().filter(|x| x.is_finite()).fold(0.0f64, |m, x| m.max(x.abs()));
    (max > 0.0).then(|| exponent(max))
}

/// `floor(log2 x)` of a finite positive `x`, from its bits (`log2` rounds up near powers of two).
fn exponent(x: f64) -> i32 {
    let bits = x.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    if biased == 0 {
        // Subnormal: x = mantissa · 2^-1074.
        let mantissa = bits & ((1 << 52) - 1);
        63 - mantissa.leading_zeros() as i32 - 1074
    } else {
        biased - 1023
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scaling_is_exact_across_the_range() {
        for v in [
            1.0,
            -3.5,
            f64::MIN_POSITIVE,
            5e-324,
            3e-320,
            f64::MAX,
            1e-300,
            1e300,
            2.0f64.powi(1000) * (1.0 - f64::EPSILON),
        ] {
            let e = binary_exponent(&[v]).unwrap();
            let unit = times_pow2(v, -e);
            assert!((1.0..2.0).contains(&unit.abs()), "{v:e} -> {unit}");
            assert_eq!(times_pow2(unit, e), v, "{v:e}");
        }
        assert_eq!(binary_exponent(&[0.0, f64::NAN, f64::INFINITY]), None);
    }
}
