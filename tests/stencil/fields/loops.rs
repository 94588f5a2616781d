//! Loops over constant ranges, constant tables and helper functions declared in the body:
//! unrolled, folded and inlined by the macro, checked against the function as written (Rust's
//! own loops) bit for bit, on wild input, in every variant.

use crate::common::*;
use crate::kernels::d2q9_filter::D2q9Filter;

use clforge::prelude::*;

/// A 5 × 5 binomial blur: nested loops over a 2-D offset range and a table indexed by both,
/// `..=` ranges, a constant bound and index arithmetic.
#[clforge::stencil]
fn binomial5(u: &Grid<f64>) -> f64 {
    const R: isize = 2;
    const B: [f64; 5] = [1.0, 4.0, 6.0, 4.0, 1.0];
    let mut s = 0.0;
    for j in -R..=R {
        let mut row = 0.0;
        for i in -R..R + 1 {
            row += B[(i + R) as usize] * u.at(i, j);
        }
        s += B[(j + R) as usize] * row;
    }
    s / 256.0
}

/// Helpers calling helpers, a loop whose body shadows an outer name, and a plain `=` update.
#[clforge::stencil(boundary = periodic)]
#[allow(clippy::assign_op_pattern)] // the plain `x = x + ..` form is what is tested
fn nested_helpers(u: &Grid1<f32>, a: f32) -> f32 {
    fn sq(x: f32) -> f32 {
        x * x
    }
    fn diff2(l: f32, c: f32, r: f32) -> f32 {
        sq(l - c) + sq(r - c)
    }
    let v = u.at(0);
    let mut acc = v;
    for k in 1..4 {
        let v = u.at(k) - u.at(-k);
        acc = acc + a * v / (k as f32);
    }
    acc + diff2(u.at(-1), v, u.at(1))
}

/// Offsets computed from the loop index, and the index as a value.
#[clforge::stencil]
fn shifted(u: &Grid1<f64>) -> f64 {
    let mut s = 0.0;
    for k in 0..3 {
        s += u.at(2 * k - 2) * (k + 1) as f64;
    }
    s
}

#[test]
fn unrolled_loops_tables_and_helpers_equal_host_in_every_variant() {
    let dev = device();
    for (n, &shape) in shapes(2).iter().enumerate() {
        let mut r = rng(100 + n as u64);
        let u = wild_f32(shape, &mut r, -1.0, 1.0);
        let mut host = HostGrid::new(shape).unwrap();
        D2q9Filter::apply_host(&mut host, &u, 0.3).unwrap();
        let v = wild_f64(shape, &mut r, -1.0, 1.0);
        let mut hostv = HostGrid::new(shape).unwrap();
        Binomial5::apply_host(&mut hostv, &v).unwrap();
        for config in configs(2) {
            let mut out = DeviceGrid::new(&dev, shape).unwrap();
            D2q9Filter::launch(&config, &mut out, &up(&u), 0.3).unwrap();
            same(&format!("d2q9 {shape} {config:?}"), &out.to_host().unwrap(), &host);
            let mut outv = DeviceGrid::new(&dev, shape).unwrap();
            Binomial5::launch(&config, &mut outv, &up(&v)).unwrap();
            same(
                &format!("binomial {shape} {config:?}"),
                &outv.to_host().unwrap(),
                &hostv,
            );
        }
    }
    for (n, &shape) in shapes(1).iter().enumerate() {
        let mut r = rng(120 + n as u64);
        let u = wild_f32(shape, &mut r, -1.0, 1.0);
        let mut host = HostGrid::new(shape).unwrap();
        NestedHelpers::apply_host(&mut host, &u, 0.7).unwrap();
        for config in configs(1) {
            let mut out = DeviceGrid::new(&dev, shape).unwrap();
            NestedHelpers::launch(&config, &mut out, &up(&u), 0.7).unwrap();
            same(&format!("helpers {shape} {config:?}"), &out.to_host().unwrap(), &host);
        }
    }
    for &shape in &shapes(1) {
        let v = wild_f64(shape, &mut rng(130), -1.0, 1.0);
        let mut host = HostGrid::new(shape).unwrap();
        Shifted::apply_host(&mut host, &v).unwrap();
        for config in configs(1) {
            let mut out = DeviceGrid::new(&dev, shape).unwrap();
            Shifted::launch(&config, &mut out, &up(&v)).unwrap();
            same(&format!("shifted {shape} {config:?}"), &out.to_host().unwrap(), &host);
        }
    }
    assert_eq!(Shifted::spec().halo[0], 2);
    // The unrolled reads set the halo: the blur reaches two points out, the filter one.
    assert_eq!(Binomial5::spec().halo[0], 2);
    assert_eq!(D2q9Filter::spec().halo[0], 1);
}
