//! Rust's typing rules as far as the generated code needs them: the default float type of a
//! body and literal spelling. Inference of each expression is in `body.rs` (`natural`/`coerce`).

use crate::model::{Arg, Scalar};

/// The type an unsuffixed float literal takes when nothing else decides it: the output's type
/// if float, else the first float grid's, else `f32`.
pub fn default_float(args: &[Arg], out: Scalar) -> Scalar {
    if out.is_float() {
        out
    } else {
        args.iter()
            .find_map(|a| match a {
                Arg::Field(f) if f.elem.is_float() => Some(f.elem),
                _ => None,
            })
            .unwrap_or(Scalar::F32)
    }
}

/// A float literal in OpenCL C: always with a dot or exponent, `f` suffix for `float`.
pub fn float_lit(digits: &str, ty: Scalar) -> String {
    let mut s = digits.to_string();
    if !s.contains(['.', 'e', 'E']) {
        s.push_str(".0");
    }
    if ty == Scalar::F32 {
        s.push('f');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_literals_keep_their_digits() {
        assert_eq!(float_lit("1", Scalar::F32), "1.0f");
        assert_eq!(float_lit("2.5e-3", Scalar::F64), "2.5e-3");
        assert_eq!(float_lit("0.25", Scalar::F64), "0.25");
    }
}
