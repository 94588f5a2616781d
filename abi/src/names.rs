//! Which identifiers a user's Rust name may keep in generated OpenCL C.
//!
//! A user name (argument, `let`, constant, params struct or member) is printed as written when it
//! is *safe*: not an OpenCL C keyword, type, builtin function or predefined macro, not a name the
//! templates use, and not starting with [`PREFIX`]. Any other name is printed as
//! `PREFIX + name`. That map is injective: a safe name never starts with the prefix, so it cannot
//! equal a prefixed one. Kernels allocate their own names after the user's (`fresh` names in
//! the macros), so the two sets cannot meet either. The macros (`#[stencil]`) and the runtime
//! (`#[derive(Params)]` declarations) both call [`cl_name`], so a member is spelled the same on
//! both sides. A test in the macros checks that every identifier the templates use is reserved.

/// Prefix of a user name that would not be safe as written: `local` is printed `rs_local`.
pub const PREFIX: &str = "rs_";

/// OpenCL C 1.2 keywords, types, qualifiers and the C99 keywords it keeps or reserves.
#[rustfmt::skip]
const KEYWORDS: &[&str] = &[
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum", "extern", "float",
    "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return", "short", "signed", "sizeof",
    "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while", "bool", "uchar",
    "ushort", "uint", "ulong", "half", "quad", "complex", "imaginary", "size_t", "ptrdiff_t", "intptr_t", "uintptr_t",
    "image2d_t", "image3d_t", "image2d_array_t", "image1d_t", "image1d_buffer_t", "image1d_array_t", "sampler_t",
    "event_t", "kernel", "global", "local", "constant", "private", "read_only", "write_only", "read_write", "true",
    "false", "NULL", "vec_step", "typeof", "asm", "defined", "pragma", "unroll", "line", "include", "define", "undef",
    "ifdef", "ifndef", "endif", "elif", "error", "uniform", "pipe", "generic", "main", "enable", "disable",
    "reqd_work_group_size", "work_group_size_hint", "vec_type_hint", "aligned", "packed", "endian", "nosvm",
];

/// OpenCL C builtin functions without a reserved prefix (see [`PREFIXES`]).
#[rustfmt::skip]
const BUILTINS: &[&str] = &[
    // math
    "acos", "acosh", "acospi", "asin", "asinh", "asinpi", "atan", "atan2", "atanh", "atanpi", "atan2pi", "cbrt", "ceil",
    "copysign", "cos", "cosh", "cospi", "erfc", "erf", "exp", "exp2", "exp10", "expm1", "fabs", "fdim", "floor", "fma",
    "fmax", "fmin", "fmod", "fract", "frexp", "hypot", "ilogb", "ldexp", "lgamma", "lgamma_r", "log", "log2", "log10",
    "log1p", "logb", "mad", "maxmag", "minmag", "modf", "nan", "nextafter", "pow", "pown", "powr", "remainder",
    "remquo", "rint", "rootn", "round", "rsqrt", "sin", "sincos", "sinh", "sinpi", "sqrt", "tan", "tanh", "tanpi",
    "tgamma", "trunc", // integer
    "abs", "abs_diff", "add_sat", "hadd", "rhadd", "clamp", "clz", "ctz", "mad_hi", "mad_sat", "max", "min", "mul_hi",
    "rotate", "sub_sat", "upsample", "popcount", "mad24", "mul24", // common, geometric
    "degrees", "mix", "radians", "step", "smoothstep", "sign", "cross", "dot", "distance", "length", "normalize",
    // relational
    "isequal", "isnotequal", "isgreater", "isgreaterequal", "isless", "islessequal", "islessgreater", "isfinite",
    "isinf", "isnan", "isnormal", "isordered", "isunordered", "signbit", "any", "all", "bitselect", "select",
    // synchronisation, copies, work-items, misc
    "barrier", "mem_fence", "read_mem_fence", "write_mem_fence", "wait_group_events", "prefetch", "printf",
    "shuffle", "shuffle2", "MAXFLOAT", "HUGE_VALF", "HUGE_VAL", "INFINITY", "NAN",
];

/// Prefixes of builtin functions, types and macros (`convert_int8_sat`, `vload8`, `CLK_*`, ...).
#[rustfmt::skip]
const PREFIXES: &[&str] = &[
    "convert_", "as_", "vload", "vstore", "atomic_", "atom_", "get_", "native_", "half_", "fast_", "async_",
    "read_image", "write_image", "__", "cl_", "CL_", "CLK_", "FLT_", "DBL_", "HALF_", "M_", "FP_", "CHAR_", "SCHAR_",
    "UCHAR_", "SHRT_", "USHRT_", "INT_", "UINT_", "LONG_", "ULONG_", "ENDIAN_", "OPENCL_", "PRIu", "PRId",
    // the runtime's build options (`-D CLFORGE_REAL_DOUBLE`)
    "CLFORGE_",
];

/// Scalar type names that take a vector width (`float8`, `int16`, `double4x4`).
#[rustfmt::skip]
const VECTOR_BASES: &[&str] = &[
    "char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "float", "double", "half", "bool", "quad",
    "real",
];

/// Identifiers the templates and emitters of clforge print themselves: the stencil kernels'
/// variables, the generated macros, and the element programs' file-scope names.
#[rustfmt::skip]
const GENERATED: &[&str] = &[
    // stencil kernels
    "AT", "WRAP", "UPDATED",
    "INTERIOR", "LOAD", "TW", "TH", "TWH", "SW", "SH", "SD", "SWH", "OUTSIDE", "HX", "HY", "HZ", "UX", "UY", "UZ", "TILE_X",
    "TILE_Y", "TILE_Z", "PTS", "STEP_POINTS", "STEP_ITEMS", "STEP_SLOTS", "TILE_TY", "TILE_TZ", "LOAD_Z", "WRAP_Z", "CLAMP_Z", "IN_STEP",
    "WG_Y", "TD", "STEPS", "MARCH_Z", "MARCH_PLANES", "MARCH_SLOT", "MARCH_PER", "IN_REDUCED", "IN_REDUCED_YZ", "RED_ITEMS", "RED_P2", "FOLD_ITEMS", "LANES", "EXTENSION", "OFF", "ON", "RESET", "OPENCL", "FP_CONTRACT",
    // element programs: macros and file-scope names
    "real", "DIM", "DOFS", "NODES", "ND", "NV", "ORDER", "STRAINS", "GRID_DIMS", "NODE0", "L_X", "L_Y", "WI_SIZE",
    "MASK_WORDS", "CRACK_BIT", "DEAD_MATERIAL", "sum_v8", "GATHER_ROWS", "GATHER_ASSEMBLED",
    "VEC_ALIGNED", "GATHER_STEPS", "GS_TX", "GS_TY", "GS_TZ", "GS_ITEMS", "GS_HZ", "GS_W", "GS_H", "GS_D", "GS_WH", "GS_N",
];

/// The stencil kernels' local variables (not macros: a struct member may have these names).
#[rustfmt::skip]
const LOCALS: &[&str] = &[
    "x", "y", "z", "c", "t", "i", "n", "v", "row", "nx", "ny", "nz", "nxy", "out", "x0", "y0", "z0", "lx", "ly", "lz",
    "gx", "gy", "gz", "tx", "ty", "tz", "ox", "oy", "oz", "gnx", "gny", "gnz", "rx0", "ry0", "rz0", "rx1", "ry1", "rz1", "step", "s_cur", "s_next", "s_a", "s_b", "s_tmp", "y_first", "z_first", "z_end",
];

/// Generated names made of a stem and a number: `x_p1`, `y_m2` (wrapped coordinates), and the
/// sweep kernels' names (`sw_` and `SW_` prefixes).
fn generated_pattern(name: &str) -> bool {
    // The sweep kernels' own names: `sw_diag`, `SW_L`, ...
    if name.starts_with("sw_") || name.starts_with("SW_") || name.starts_with("clforge_") {
        return true;
    }
    ["x_p", "x_m", "y_p", "y_m", "z_p", "z_m"].iter().any(|p| {
        name.strip_prefix(p)
            .is_some_and(|rest| !rest.is_empty() && rest.bytes().all(|c| c.is_ascii_digit()))
    })
}

fn vector_type(name: &str) -> bool {
    VECTOR_BASES.iter().any(|b| {
        name.strip_prefix(b)
            .is_some_and(|rest| !rest.is_empty() && rest.bytes().all(|c| c.is_ascii_digit() || c == b'x'))
    })
}

/// The name is an OpenCL C keyword, builtin, reserved pattern or a name clforge generates.
pub fn is_reserved(name: &str) -> bool {
    is_reserved_member(name) || LOCALS.contains(&name) || generated_pattern(name)
}

/// The name may not be a struct member: a keyword, type, builtin or macro (a kernel's local
/// variables do not meet members, which live in the struct's namespace).
fn is_reserved_member(name: &str) -> bool {
    KEYWORDS.contains(&name)
        || BUILTINS.contains(&name)
        || GENERATED.contains(&name)
        || PREFIXES.iter().any(|p| name.starts_with(p))
        || vector_type(name)
}

/// The user's name may be printed as written.
pub fn is_safe(name: &str) -> bool {
    !is_reserved(name) && !name.starts_with(PREFIX) && !name.is_empty()
}

/// Writes the OpenCL spelling of a params struct member `name`: like [`cl_name`], but a
/// kernel's local variable names (`c`, `x`) are safe as members.
pub fn cl_member_name(name: &str, out: &mut impl core::fmt::Write) -> core::fmt::Result {
    let name = name.strip_prefix("r#").unwrap_or(name);
    if !is_reserved_member(name) && !name.starts_with(PREFIX) && !name.is_empty() {
        out.write_str(name)
    } else {
        out.write_str(PREFIX)?;
        out.write_str(name)
    }
}

/// Writes the OpenCL spelling of the user's `name` (without `r#`) to `out`: the name, or the
/// name behind [`PREFIX`].
pub fn cl_name(name: &str, out: &mut impl core::fmt::Write) -> core::fmt::Result {
    let name = name.strip_prefix("r#").unwrap_or(name);
    if is_safe(name) {
        out.write_str(name)
    } else {
        out.write_str(PREFIX)?;
        out.write_str(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Buf([u8; 64], usize);
    impl core::fmt::Write for Buf {
        fn write_str(&mut self, s: &str) -> core::fmt::Result {
            let end = self.1 + s.len();
            self.0
                .get_mut(self.1..end)
                .ok_or(core::fmt::Error)?
                .copy_from_slice(s.as_bytes());
            self.1 = end;
            Ok(())
        }
    }
    fn spell(n: &str) -> Buf {
        let mut b = Buf([0; 64], 0);
        cl_name(n, &mut b).unwrap();
        b
    }
    fn text(b: &Buf) -> &str {
        core::str::from_utf8(&b.0[..b.1]).unwrap()
    }

    #[test]
    fn unsafe_names_are_prefixed_and_the_map_is_injective() {
        let names = [
            "psi",
            "local",
            "rs_local",
            "rs_rs_local",
            "HX",
            "float8",
            "double4x4",
            "floor",
            "convert_x",
            "r#yield",
            "yield",
            "x",
            "x_p1",
            "x_max",
            "t_psi",
            "u",
            "gain_K",
            "int",
            "integer",
            "K",
        ];
        for n in names {
            let b = spell(n);
            let t = text(&b);
            assert!(is_safe(t) || t.starts_with(PREFIX), "{n} -> {t}");
            assert!(!is_reserved(t), "{n} -> {t} is reserved");
        }
        for (i, a) in names.iter().enumerate() {
            for b in &names[i + 1..] {
                let (sa, sb) = (spell(a), spell(b));
                if a.trim_start_matches("r#") != b.trim_start_matches("r#") {
                    assert_ne!(text(&sa), text(&sb), "{a} and {b}");
                }
            }
        }
        assert_eq!(text(&spell("psi")), "psi");
        assert_eq!(text(&spell("local")), "rs_local");
        assert_eq!(text(&spell("integer")), "integer");
        assert_eq!(text(&spell("r#yield")), "yield");
        assert_eq!(text(&spell("x_p1")), "rs_x_p1");
        assert_eq!(text(&spell("x_max")), "x_max");
        assert_eq!(text(&spell("real8")), "rs_real8");
    }
}
