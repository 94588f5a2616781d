//! Probes how the default OpenCL device's compiler treats the idioms two long-run divergences
//! on NVIDIA's OpenCL came down to (docs/DIFFTEST.md, "Vendor compilers"): a wrapping `abs`
//! of `i32::MIN` followed by `%`, and a constant `f32` expression whose exact sum is a tie.
//! Each line prints what the device computed next to what Rust computes.
//!
//! ```sh
//! cargo run --release -p clforge-difftest --example vendor_probe
//! ```

use anyhow::Result;
use clforge::runtime::{Arg, Buffer, Device};

const SOURCE: &str = r#"
int helper_abs(int x) {
    const uint m = as_uint(x >> 31);
    return as_int((as_uint(x) ^ m) - m);
}
__kernel void ints(__global int* out, __global const int* in) {
    const int x = in[0], d = in[1];
    out[0] = helper_abs(x) % d;
    out[1] = as_int(abs(x)) % d;
    out[2] = (x < 0 ? as_int(0u - as_uint(x)) : x) % d;
    out[3] = helper_abs(x);
    out[4] = helper_abs(x) / d;
    out[5] = helper_abs(x) < 0 ? 1 : 0;
}
int sel_abs(int x) { return x < 0 ? as_int(0u - as_uint(x)) : x; }
int min_abs(int x) { return x == INT_MIN ? x : helper_abs(x); }
int mul_abs(int x) { return as_int(as_uint(x) * as_uint((x >> 31) | 1)); }
#define CTX(ABS) ABS(as_int(as_uint(as_int(-as_uint(y))) << (as_int(as_uint(x) - as_uint(x)) & 31)))
#define REM(num) (den == -1 ? 0 : (num) % (den == 0 || den == -1 ? 1 : den))
__kernel void ints_ctx(__global int* out, __global const int* in, const float s0) {
    const int y = in[0], x = in[2];
    const int den = as_int(as_uint(((isnan(s0) ? 0 : convert_int_sat(s0)) ^ as_int(as_uint(as_int(as_uint(x) << 12) >> 20) - as_uint(255))) & 255) + as_uint(1));
    { const int num = CTX(helper_abs); out[0] = REM(num); }
    { const int num = CTX(sel_abs); out[1] = REM(num); }
    { const int num = CTX(min_abs); out[2] = REM(num); }
    { const int num = CTX(mul_abs); out[3] = REM(num); }
}
__kernel void float_folds(__global float* out) {
    const float e = 1.1920929e-7f;
    out[0] = e + -fmin(3.0f, 4.0f);
    out[1] = e + -fmax(3.0f, -1.0f);
    out[2] = e + -fabs(-3.0f);
    out[3] = e + -sqrt(9.0f);
    out[4] = e + -copysign(3.0f, 1.0f);
    out[5] = e + -floor(3.5f);
    out[6] = e + -clamp(3.0f, 0.0f, 4.0f);
    out[7] = e + -fma(1.0f, 3.0f, 0.0f);
    out[8] = e + -(3.0f < 4.0f ? 3.0f : 4.0f);
    out[9] = e + -ceil(2.5f);
}
__kernel void floats(__global float* out, __global const float* in) {
    const float e = in[0], t = in[1], m = in[2];
    out[0] = ceil(1.1920929e-7f + -fmin(3.0f, 3.4028235e38f));
    out[1] = 1.1920929e-7f + -fmin(3.0f, 3.4028235e38f);
    out[2] = ceil(1.1920929e-7f + -3.0f);
    out[3] = 1.1920929e-7f + -3.0f;
    out[4] = ceil(e + -fmin(t, m));
    out[5] = e + -fmin(t, m);
    out[6] = 1.1920929e-7f + -t;
    out[7] = ceil(0x1p-23f + -0x1.8p+1f);
}
"#;

/// Runs `s104980_plain` from the OpenCL file `path` (the difftest's `cl/s104980.cl`) at the
/// point that diverged, with the `abs` helper as generated and in other spellings.
fn stencil_104980(dev: &Device, path: &str) -> Result<()> {
    let source = std::fs::read_to_string(path)?;
    let helper = "return as_int((as_uint(clforge_x) ^ clforge_m) - clforge_m);\n}";
    let spellings = [
        ("as generated", helper.to_string()),
        (
            "select",
            "return clforge_x < 0 ? as_int(0u - as_uint(clforge_x)) : clforge_x; (void)clforge_m;\n}".into(),
        ),
        (
            "INT_MIN first",
            "return clforge_x == INT_MIN ? clforge_x : as_int((as_uint(clforge_x) ^ clforge_m) - clforge_m);\n}".into(),
        ),
        (
            "times sign",
            "return as_int(as_uint(clforge_x) * (clforge_m | 1u));\n}".into(),
        ),
    ];
    let mut input = vec![7i32; 37];
    input[32] = 1025344100;
    input[33] = i32::MIN;
    let input = Buffer::from_slice(dev, &input)?;
    for (name, body) in spellings {
        let src = source.replacen(helper, &body, 1);
        let prog = dev.program("s104980", &src, "-cl-std=CL1.2 -cl-fp32-correctly-rounded-divide-sqrt")?;
        let out = Buffer::<i32>::new(dev, 37)?;
        let args = [
            Arg::buffer(&out),
            Arg::buffer(&input),
            Arg::f32(-3.0650177),
            Arg::i32(37),
            Arg::i32(1),
            Arg::i32(1),
        ];
        prog.launch("s104980_plain", &[64], Some(&[64]), &args)?;
        let g = out.to_vec()?[32];
        println!(
            "{:>24}: device {g:>12} rust {:>12} {}",
            format!("s104980 abs {name}"),
            -8,
            if g == -8 { "" } else { "DIFFERS" }
        );
    }
    Ok(())
}

fn main() -> Result<()> {
    let dev = Device::default()?;
    println!("device: {:?}", dev.info().name);
    if let Some(path) = std::env::args().nth(1) {
        return stencil_104980(&dev, &path);
    }
    let prog = dev.program("vendor probe", SOURCE, "-cl-std=CL1.2")?;
    let (x, d) = (i32::MIN, 127);
    let input = Buffer::from_slice(&dev, &[x, d])?;
    let out = Buffer::<i32>::new(&dev, 6)?;
    prog.launch("ints", &[1], None, &[Arg::buffer(&out), Arg::buffer(&input)])?;
    let got = out.to_vec()?;
    let a = x.wrapping_abs();
    let want = [
        a.wrapping_rem(d),
        a.wrapping_rem(d),
        a.wrapping_rem(d),
        a,
        a.wrapping_div(d),
        (a < 0) as i32,
    ];
    let names = [
        "helper abs % d",
        "abs() % d",
        "select abs % d",
        "helper abs",
        "helper abs / d",
        "helper abs < 0",
    ];
    for ((n, g), w) in names.iter().zip(&got).zip(&want) {
        println!(
            "{n:>24}: device {g:>12} rust {w:>12} {}",
            if g == w { "" } else { "DIFFERS" }
        );
    }
    let input = Buffer::from_slice(&dev, &[x, d, 1025344100])?;
    let out = Buffer::<i32>::new(&dev, 4)?;
    let s0 = -3.0650177f32;
    prog.launch(
        "ints_ctx",
        &[1],
        None,
        &[Arg::buffer(&out), Arg::buffer(&input), Arg::f32(s0)],
    )?;
    for (n, g) in ["helper", "select", "INT_MIN first", "times sign"]
        .iter()
        .zip(out.to_vec()?)
    {
        let w = -8; // i32::MIN.wrapping_abs() % 127, as in stencil 104980
        println!(
            "{:>24}: device {g:>12} rust {w:>12} {}",
            format!("{n} abs % d in context"),
            if g == w { "" } else { "DIFFERS" }
        );
    }
    let out = Buffer::<f32>::new(&dev, 10)?;
    prog.launch("float_folds", &[1], None, &[Arg::buffer(&out)])?;
    let w = f32::EPSILON + -3.0;
    let names = [
        "fmin", "fmax", "fabs", "sqrt", "copysign", "floor", "clamp", "fma", "?:", "ceil",
    ];
    for (n, g) in names.iter().zip(out.to_vec()?) {
        let mark = if g.to_bits() == w.to_bits() { "" } else { "DIFFERS" };
        println!(
            "{:>24}: device {g:>12e} rust {w:>12e} {mark}",
            format!("eps + -{n}(..) folded")
        );
    }
    let (e, t, m) = (f32::EPSILON, 3.0f32, f32::MAX);
    let input = Buffer::from_slice(&dev, &[e, t, m])?;
    let out = Buffer::<f32>::new(&dev, 8)?;
    prog.launch("floats", &[1], None, &[Arg::buffer(&out), Arg::buffer(&input)])?;
    let got = out.to_vec()?;
    let s = e + -t.min(m);
    let want = [
        s.ceil(),
        s,
        (e + -3.0f32).ceil(),
        e + -3.0,
        s.ceil(),
        s,
        e + -t,
        s.ceil(),
    ];
    let names = [
        "ceil(const sum)",
        "const sum",
        "ceil(const sum, no fmin)",
        "const sum, no fmin",
        "ceil(runtime sum)",
        "runtime sum",
        "const + runtime",
        "ceil(hex const sum)",
    ];
    for ((n, g), w) in names.iter().zip(&got).zip(&want) {
        let mark = if g.to_bits() == w.to_bits() { "" } else { "DIFFERS" };
        println!("{n:>24}: device {g:>12e} rust {w:>12e} {mark}");
    }
    Ok(())
}
