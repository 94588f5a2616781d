//! Packed grids (`#[stencil(packed(cell = 2))]`): every variant equals the host function bit
//! for bit with masks stored 1, 2 or 4 bits per point, read at the point and at neighbours,
//! in 2-D and 3-D, with every boundary, on grids whose point count is no multiple of a word's
//! points; a value that does not fit is refused when packing, a grid bound packed where the
//! stencil reads it unpacked (or the other way round, or in other bits) is refused at launch,
//! and split targets refuse stencils with packed grids.

use crate::common::*;
use crate::kernels::{jacobi, jacobi_packed, packed3d};
use clforge::prelude::*;
use clforge::runtime::{KernelArg, Max, PackedGrid, Reduction, Sum};
use rand::rngs::SmallRng;
use rand::Rng;

pub mod stencils {
    use clforge::prelude::*;
    use clforge::runtime::{Max, Sum};

    /// Fixed edges, f32, cell kinds 0..=3 in 2 bits, read at the point and three neighbours.
    #[stencil(packed(cell = 2))]
    pub fn fixed2(u: &Grid<f32>, cell: &Grid<u8>, k: f32) -> f32 {
        match cell.at(0, 0) {
            1 => k * (u.at(1, 0) + u.at(-1, 0) + u.at(0, 1) + u.at(0, -1)),
            2 => u.at(-1, 0) + cell.at(1, 0) as f32,
            3 => {
                if cell.at(0, -1) == 3 {
                    u.at(0, 1)
                } else {
                    -u.at(0, 0)
                }
            }
            _ => u.at(0, 0) * (cell.at(-1, 1) as f32),
        }
    }

    /// Clamped edges, f64, the same kinds: clamped coordinates of packed reads.
    #[stencil(boundary = clamp, packed(cell = 2))]
    pub fn clamp2(u: &Grid<f64>, cell: &Grid<u8>) -> f64 {
        match cell.at(1, -1) {
            0 => u.at(0, 0),
            1 => 0.25 * (u.at(1, 0) + u.at(-1, 0) + u.at(0, 1) + u.at(0, -1)),
            2 => u.at(-2, 0) * cell.at(0, 0) as f64,
            _ => u.at(0, 0) - cell.at(-1, 0) as f64,
        }
    }

    /// Wrapped edges, two packed grids: a `u32` grid in 4 bits and a `u8` grid in 1 bit.
    #[stencil(boundary = periodic, packed(m = 4, b = 1))]
    pub fn periodic2(u: &Grid<f32>, m: &Grid<u32>, b: &Grid<u8>) -> f32 {
        let w = (m.at(0, 0) + m.at(2, -1)) as f32 * 0.0625;
        if b.at(0, 1) == 1 {
            u.at(0, 0) + w * (u.at(1, 0) - u.at(0, 0))
        } else {
            u.at(-1, -1) - w
        }
    }

    /// Fused reductions beside a packed mask.
    #[stencil(boundary = clamp, packed(cell = 2))]
    pub fn reduce2(u: &Grid<f32>, cell: &Grid<u8>) -> (f32, Max<f32>, Sum<u32>) {
        let next = if cell.at(0, 0) == 0 {
            u.at(0, 0)
        } else {
            0.5 * (u.at(1, 0) + u.at(0, -1))
        };
        (
            next,
            Max((next - u.at(0, 0)).abs()),
            Sum(cell.at(1, 1) as u32 + cell.at(0, 0) as u32),
        )
    }

    /// 3-D, fixed edges, a `u32` grid in 4 bits read at z neighbours, and a fused sum.
    #[stencil(packed(m = 4))]
    pub fn fixed3(u: &Grid3<f32>, m: &Grid3<u32>) -> (f32, Sum<u32>) {
        let k = m.at(0, 0, 0) + m.at(1, 0, -1);
        (
            u.at(0, 0, 0) * (k as f32) + u.at(0, 0, 1) - m.at(-1, 1, 1) as f32,
            Sum(m.at(0, 0, -1)),
        )
    }
}

use stencils::*;

/// A float's bits, every NaN alike (the device may return another NaN payload).
trait Bits: Copy {
    fn bits(self) -> u64;
}
impl Bits for f32 {
    fn bits(self) -> u64 {
        if self.is_nan() {
            u64::MAX
        } else {
            u64::from(self.to_bits())
        }
    }
}
impl Bits for f64 {
    fn bits(self) -> u64 {
        if self.is_nan() {
            u64::MAX
        } else {
            self.to_bits()
        }
    }
}
impl Bits for u32 {
    fn bits(self) -> u64 {
        u64::from(self)
    }
}

fn bits<T: Bits + Default>(g: &HostGrid<T>) -> Vec<u64> {
    g.data().iter().map(|v| v.bits()).collect()
}

/// Random values in (-1, 1) with NaN, ±inf, the extremes, a subnormal and -0 spread over the
/// grid.
fn field_f32(shape: Shape, r: &mut SmallRng) -> HostGrid<f32> {
    let mut u = random_f32(shape, r, -1.0, 1.0);
    let special = [
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::MAX,
        -f32::MAX,
        f32::MIN_POSITIVE,
        1e-40,
        -0.0,
    ];
    for (j, v) in special.iter().enumerate() {
        if shape.len() > 2 * special.len() {
            u.data_mut()[(j * 37 + 5) % shape.len()] = *v;
        }
    }
    u
}

fn field_f64(shape: Shape, r: &mut SmallRng) -> HostGrid<f64> {
    let mut u = random_f64(shape, r, -1.0, 1.0);
    let special = [
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::MAX,
        -f64::MAX,
        f64::MIN_POSITIVE,
        1e-310,
        -0.0,
    ];
    for (j, v) in special.iter().enumerate() {
        if shape.len() > 2 * special.len() {
            u.data_mut()[(j * 41 + 3) % shape.len()] = *v;
        }
    }
    u
}

/// A mask over the whole range `0 .. 2^bits`.
fn mask<T: Copy + Default>(shape: Shape, r: &mut SmallRng, bits: u32, of: impl Fn(u32) -> T) -> HostGrid<T> {
    HostGrid::from_fn(shape, |_| of(r.random_range(0..1u32 << bits))).expect("a mask")
}

/// The parity configurations plus, for a stencil with a state, two temporally blocked ones.
fn variants(rank: usize, steps: bool) -> Vec<LaunchConfig> {
    let mut c = configs(rank);
    if steps {
        let (big, small) = if rank == 3 {
            (Tile { x: 8, y: 4, rows: 2 }, Tile { x: 4, y: 2, rows: 1 })
        } else {
            (Tile { x: 8, y: 8, rows: 2 }, Tile { x: 16, y: 4, rows: 4 })
        };
        c.push(LaunchConfig::steps(2, big));
        c.push(LaunchConfig::steps(3, small));
    }
    c
}

/// Runs `case` (device bits, host bits) for every shape of `rank` and every variant, and
/// asserts they are equal.
fn check(
    name: &str,
    rank: usize,
    steps: bool,
    mut case: impl FnMut(Shape, &mut SmallRng, &LaunchConfig) -> clforge::runtime::Result<(Vec<u64>, Vec<u64>)>,
) {
    for (i, &shape) in shapes(rank).iter().enumerate() {
        for config in variants(rank, steps) {
            let mut r = rng(4000 + i as u64);
            let (dev, host) = case(shape, &mut r, &config).unwrap_or_else(|e| panic!("{name} {shape} {config:?}: {e}"));
            let first = (0..dev.len()).find(|&j| dev[j] != host[j]);
            assert_eq!(
                first,
                None,
                "{name} on {shape} with {config:?}: device {:x?} vs host {:x?} at the first difference",
                first.map(|j| dev[j]),
                first.map(|j| host[j])
            );
        }
    }
}

/// `f` applied `n` times to `u` on the host (the steps variant's reference).
fn iterate<T: Copy + Default>(
    u: &HostGrid<T>,
    n: usize,
    mut f: impl FnMut(&mut HostGrid<T>, &HostGrid<T>) -> clforge::runtime::Result<()>,
) -> clforge::runtime::Result<HostGrid<T>> {
    let mut cur = u.clone();
    for _ in 0..n {
        let mut next = cur.clone();
        f(&mut next, &cur)?;
        cur = next;
    }
    Ok(cur)
}

fn packed<T: clforge::runtime::Packable, const B: u32>(g: &HostGrid<T>) -> PackedGrid<T, B> {
    PackedGrid::from_host(&device(), g).expect("a mask that fits")
}

#[test]
fn fixed_2d_f32_equals_host() {
    check("fixed2", 2, true, |shape, r, config| {
        let u = field_f32(shape, r);
        let cell = mask(shape, r, 2, |v| v as u8);
        let host = iterate(&u, config.iterations(), |n, c| Fixed2::apply_host(n, c, &cell, 0.25))?;
        let mut out = up(&u);
        Fixed2::launch(config, &mut out, &up(&u), &packed(&cell), 0.25)?;
        Ok((bits(&out.to_host()?), bits(&host)))
    });
}

#[test]
fn clamp_2d_f64_equals_host() {
    check("clamp2", 2, true, |shape, r, config| {
        let u = field_f64(shape, r);
        let cell = mask(shape, r, 2, |v| v as u8);
        let host = iterate(&u, config.iterations(), |n, c| Clamp2::apply_host(n, c, &cell))?;
        let mut out = up(&u);
        Clamp2::launch(config, &mut out, &up(&u), &packed(&cell))?;
        Ok((bits(&out.to_host()?), bits(&host)))
    });
}

#[test]
fn periodic_2d_two_packed_grids_equal_host() {
    check("periodic2", 2, true, |shape, r, config| {
        let u = field_f32(shape, r);
        let m = mask(shape, r, 4, |v| v);
        let b = mask(shape, r, 1, |v| v as u8);
        let host = iterate(&u, config.iterations(), |n, c| Periodic2::apply_host(n, c, &m, &b))?;
        let mut out = up(&u);
        Periodic2::launch(config, &mut out, &up(&u), &packed(&m), &packed(&b))?;
        Ok((bits(&out.to_host()?), bits(&host)))
    });
}

#[test]
fn reductions_beside_a_packed_mask_equal_host() {
    let dev = device();
    check("reduce2", 2, false, |shape, r, config| {
        let u = field_f32(shape, r);
        let cell = mask(shape, r, 2, |v| v as u8);
        let mut host = HostGrid::new(shape)?;
        let (mut hmax, mut hsum) = (Max(0.0f32), Sum(0u32));
        Reduce2::apply_host((&mut host, &mut hmax, &mut hsum), &u, &cell)?;
        let mut out = DeviceGrid::new(&dev, shape)?;
        let (mut dmax, mut dsum) = (Reduction::new(), Reduction::new());
        Reduce2::launch(config, (&mut out, &mut dmax, &mut dsum), &up(&u), &packed(&cell))?;
        let mut d = bits(&out.to_host()?);
        let mut h = bits(&host);
        d.extend([dmax.value()?.bits(), u64::from(dsum.value()?)]);
        h.extend([hmax.0.bits(), u64::from(hsum.0)]);
        Ok((d, h))
    });
}

#[test]
fn fixed_3d_with_a_sum_equals_host() {
    let dev = device();
    check("fixed3", 3, false, |shape, r, config| {
        let u = field_f32(shape, r);
        let m = mask(shape, r, 4, |v| v);
        let mut host = u.clone();
        let mut hsum = Sum(0u32);
        Fixed3::apply_host((&mut host, &mut hsum), &u, &m)?;
        let mut out = DeviceGrid::from_host(&dev, &u)?;
        let mut dsum = Reduction::new();
        Fixed3::launch(config, (&mut out, &mut dsum), &up(&u), &packed(&m))?;
        let (mut d, mut h) = (bits(&out.to_host()?), bits(&host));
        d.push(u64::from(dsum.value()?));
        h.push(u64::from(hsum.0));
        Ok((d, h))
    });
}

#[test]
fn periodic_3d_f64_one_bit_equals_host() {
    use packed3d::*;
    check("packed3d", 3, true, |shape, r, config| {
        let u = field_f64(shape, r);
        let wall = mask(shape, r, 1, |v| v as u8);
        let host = iterate(&u, config.iterations(), |n, c| Packed3d::apply_host(n, c, &wall, 0.125))?;
        let mut out = up(&u);
        Packed3d::launch(config, &mut out, &up(&u), &packed(&wall), 0.125)?;
        Ok((bits(&out.to_host()?), bits(&host)))
    });
}

/// The packed Jacobi computes what the unpacked one computes, bit for bit.
#[test]
fn packed_jacobi_equals_the_unpacked_one() {
    use jacobi::*;
    use jacobi_packed::JacobiPacked;
    let k = Coeffs {
        a: 0.3,
        b: 0.2,
        c: -0.01,
    };
    check("jacobi_packed", 2, true, |shape, r, config| {
        let psi = field_f32(shape, r);
        let w = random_f32(shape, r, -1.0, 1.0);
        let cell = HostGrid::from_fn(shape, |_| [FLUID, OUTFLOW, BODY, 3][r.random_range(0..4)])?;
        let (mut a, mut b) = (up(&psi), up(&psi));
        Jacobi::launch(config, &mut a, &up(&psi), &up(&w), &up(&cell), &k)?;
        JacobiPacked::launch(config, &mut b, &up(&psi), &up(&w), &packed(&cell), &k)?;
        Ok((bits(&b.to_host()?), bits(&a.to_host()?)))
    });
}

/// A value that does not fit the bits is refused, naming its point, before anything is
/// uploaded; the largest that fits is kept.
#[test]
fn values_that_do_not_fit_are_refused() {
    let dev = device();
    let shape = Shape::d3(5, 4, 3);
    let mut cell = HostGrid::from_fn(shape, |[x, y, z]| ((x + y + z) % 4) as u8).unwrap();
    let ok = PackedGrid::<u8, 2>::from_host(&dev, &cell).unwrap();
    assert_eq!(ok.to_host().unwrap(), cell);
    cell.data_mut()[shape.index([3, 2, 1])] = 4;
    match PackedGrid::<u8, 2>::from_host(&dev, &cell) {
        Err(Error::PackedValue { point, value, bits }) => assert_eq!((point, value, bits), ([3, 2, 1], 4, 2)),
        other => panic!("expected PackedValue, got {other:?}"),
    }
    let wide = HostGrid::from_fn(Shape::d2(9, 9), |[x, _, _]| if x == 7 { 2u32 } else { 1 }).unwrap();
    assert!(matches!(
        PackedGrid::<u32, 1>::from_host(&dev, &wide),
        Err(Error::PackedValue {
            point: [7, 0, 0],
            value: 2,
            bits: 1
        })
    ));
    assert!(matches!(
        PackedGrid::<u8, 3>::from_host(&dev, &cell),
        Err(Error::InvalidConfig(_))
    ));
}

/// Through the untyped launch (`KernelArg`, as the benchmark binds grids), a grid bound
/// unpacked where the stencil reads it packed, packed where it reads it unpacked, or packed
/// in other bits, is refused with the grid's name; bound as declared it runs.
#[test]
fn wrong_kind_bindings_are_refused() {
    use jacobi::*;
    use jacobi_packed::JacobiPacked;
    let dev = device();
    let shape = Shape::d2(40, 9);
    let mut r = rng(7);
    let psi = random_f32(shape, &mut r, -1.0, 1.0);
    let cell = HostGrid::from_fn(shape, |_| [FLUID, OUTFLOW, BODY][r.random_range(0..3)]).unwrap();
    let k = Coeffs { a: 0.3, b: 0.2, c: 0.1 };
    let (dpsi, dcell) = (up(&psi), up(&cell));
    let (two, one) = (
        PackedGrid::<u8, 2>::from_host(&dev, &cell).unwrap(),
        PackedGrid::<u8, 1>::from_host(&dev, &HostGrid::from_fn(shape, |_| 1u8).unwrap()).unwrap(),
    );
    let config = LaunchConfig::default();
    let packed_plan = StencilPlan::new(&dev, JacobiPacked::spec(), &config, shape).unwrap();
    let plain_plan = StencilPlan::new(&dev, Jacobi::spec(), &config, shape).unwrap();
    let mut out = up(&psi);
    fn bind<'a>(psi: &'a DeviceGrid<f32>, cell: KernelArg<'a>, k: &jacobi::Coeffs) -> Vec<KernelArg<'a>> {
        vec![
            KernelArg::grid("psi", psi),
            KernelArg::grid("w", psi),
            cell,
            KernelArg::params(k),
        ]
    }
    let bind = |cell| bind(&dpsi, cell, &k);
    let refused = |e: clforge::runtime::Result<_>, declared, bound| match e {
        Err(Error::PackedBinding {
            grid,
            declared: d,
            bound: b,
            ..
        }) => {
            assert_eq!((grid.as_str(), d, b), ("cell", declared, bound));
        }
        other => panic!("expected PackedBinding, got {other:?}"),
    };
    refused(
        packed_plan
            .launch(&mut out, &bind(KernelArg::grid("cell", &dcell)))
            .map(drop),
        Some(2),
        None,
    );
    refused(
        packed_plan
            .launch(&mut out, &bind(KernelArg::packed("cell", &one)))
            .map(drop),
        Some(2),
        Some(1),
    );
    refused(
        plain_plan
            .launch(&mut out, &bind(KernelArg::packed("cell", &two)))
            .map(drop),
        None,
        Some(2),
    );
    let msg = packed_plan
        .launch(&mut out, &bind(KernelArg::grid("cell", &dcell)))
        .unwrap_err()
        .to_string();
    assert!(msg.contains("`cell`") && msg.contains("PackedGrid<_, 2>"), "{msg}");
    // As declared: the typed launcher's result.
    packed_plan
        .launch(&mut out, &bind(KernelArg::packed("cell", &two)))
        .unwrap();
    let mut typed = up(&psi);
    JacobiPacked::launch(&config, &mut typed, &dpsi, &dpsi, &two, &k).unwrap();
    assert_eq!(bits(&out.to_host().unwrap()), bits(&typed.to_host().unwrap()));
}

/// Split targets refuse a stencil with a packed grid when planning, naming the grid.
#[test]
fn split_plans_refuse_packed_grids() {
    let dev = device();
    let devices = Devices::new(vec![dev.clone(), dev]).unwrap();
    let shape = Shape::d2(64, 64);
    match jacobi_packed::JacobiPacked::plan(&devices, &LaunchConfig::default(), shape) {
        Err(Error::PackedSplit { stencil, grid }) => {
            assert_eq!((stencil.as_str(), grid.as_str()), ("jacobi_packed", "cell"))
        }
        other => panic!("expected PackedSplit, got {other:?}"),
    }
    assert!(matches!(
        packed3d::Packed3d::plan(&devices, &LaunchConfig::default(), Shape::d3(8, 8, 8)),
        Err(Error::PackedSplit { .. })
    ));
}
