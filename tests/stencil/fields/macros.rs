//! Stencils written by `macro_rules!`: `ty` and `expr` fragments arrive as invisible groups and
//! are accepted wherever a type or an expression is; a stencil of many inputs compiles without
//! lints in the user's crate (the generated launchers allow `too_many_arguments`). Each kernel
//! equals its Rust function bit for bit on input with NaN, ±inf and extremes.

use crate::common::*;

use clforge::prelude::*;

/// A weighted Jacobi sweep for any value type and weight expression.
macro_rules! relax {
    ($name:ident, $t:ty, $w:expr) => {
        #[clforge::stencil]
        fn $name(u: &Grid<$t>, rhs: &Grid<$t>) -> $t {
            let avg: $t = (u.at(1, 0) + u.at(-1, 0) + u.at(0, 1) + u.at(0, -1)) / (4.0 as $t);
            let w: $t = $w;
            (1.0 - w) * u.at(0, 0) + w * (avg + rhs.at(0, 0))
        }
    };
}
// `0.5 + 0.25` arrives as one group: its precedence is kept (`w * (0.5 + 0.25)`, not `w * 0.5 + 0.25`).
relax!(relax_f32, f32, 0.5 + 0.25);
relax!(relax_f64, f64, 2.0 / 3.0);

/// Eleven inputs and a point: a launcher of many arguments.
#[clforge::stencil]
fn many(
    a: &Grid<f32>,
    b: &Grid<f32>,
    c: &Grid<f32>,
    d: &Grid<f32>,
    e: &Grid<f32>,
    f: &Grid<f32>,
    g: &Grid<f32>,
    h: &Grid<f32>,
    k0: f32,
    k1: f32,
    k2: f32,
) -> f32 {
    k0 * (a.at(1, 0) + b.at(-1, 0) + c.at(0, 1) + d.at(0, -1))
        + k1 * (e.at(0, 0) - f.at(0, 0))
        + k2 * g.at(0, 0) * h.at(0, 0)
}

#[test]
fn stencils_from_macro_rules_equal_host() {
    let dev = device();
    for &shape in &shapes(2) {
        for config in configs(2) {
            let mut r = rng(90);
            let (u, rhs) = (wild_f32(shape, &mut r, -1.0, 1.0), wild_f32(shape, &mut r, -1.0, 1.0));
            let mut host = HostGrid::new(shape).unwrap();
            RelaxF32::apply_host(&mut host, &u, &rhs).unwrap();
            let mut out = DeviceGrid::new(&dev, shape).unwrap();
            RelaxF32::launch(&config, &mut out, &up(&u), &up(&rhs)).unwrap();
            same(&format!("f32 {shape} {config:?}"), &out.to_host().unwrap(), &host);
            let (u, rhs) = (wild_f64(shape, &mut r, -1.0, 1.0), wild_f64(shape, &mut r, -1.0, 1.0));
            let mut host = HostGrid::new(shape).unwrap();
            RelaxF64::apply_host(&mut host, &u, &rhs).unwrap();
            let mut out = DeviceGrid::new(&dev, shape).unwrap();
            RelaxF64::launch(&config, &mut out, &up(&u), &up(&rhs)).unwrap();
            same(&format!("f64 {shape} {config:?}"), &out.to_host().unwrap(), &host);
        }
    }
    // The weight kept its grouping: one point by hand.
    let shape = Shape::d2(3, 3);
    let u = HostGrid::from_fn(shape, |[x, y, _]| (x + 3 * y) as f32).unwrap();
    let rhs = HostGrid::from_fn(shape, |_| 1.0f32).unwrap();
    let mut host = HostGrid::new(shape).unwrap();
    RelaxF32::apply_host(&mut host, &u, &rhs).unwrap();
    let avg = (5.0 + 3.0 + 7.0 + 1.0) / 4.0;
    assert_eq!(host.data()[4], 0.25 * 4.0 + 0.75 * (avg + 1.0));
}

#[test]
fn a_stencil_of_many_inputs_equals_host() {
    let dev = device();
    let shape = Shape::d2(37, 21);
    let mut r = rng(91);
    let g: Vec<HostGrid<f32>> = (0..8).map(|_| wild_f32(shape, &mut r, -1.0, 1.0)).collect();
    let mut host = HostGrid::new(shape).unwrap();
    Many::apply_host(
        &mut host, &g[0], &g[1], &g[2], &g[3], &g[4], &g[5], &g[6], &g[7], 0.5, 0.25, 2.0,
    )
    .unwrap();
    let d: Vec<DeviceGrid<f32>> = g.iter().map(up).collect();
    for config in configs(2) {
        let mut out = DeviceGrid::new(&dev, shape).unwrap();
        Many::launch(
            &config, &mut out, &d[0], &d[1], &d[2], &d[3], &d[4], &d[5], &d[6], &d[7], 0.5, 0.25, 2.0,
        )
        .unwrap();
        same(&format!("{config:?}"), &out.to_host().unwrap(), &host);
    }
}
