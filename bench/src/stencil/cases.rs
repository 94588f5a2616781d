//! The benchmark problems: host data, device state and one-step launches for the Jacobi
//! iteration of seed 002 (f32, f64) and the 3-D heat step, plus the checks of every
//! kernel against the host reference on a small grid.

use anyhow::{bail, Result};
use clforge::runtime::{
    ConstBuffer, Device, DeviceGrid, Event, HostGrid, KernelArg, LaunchConfig, PackedGrid, Params, PingPong, Scalar,
    Shape, StencilPlan, StencilSpec,
};

use super::kernels::{
    Body, Coeffs, Coeffs64, Heat3d, Jacobi, JacobiComputed, JacobiComputedF64, JacobiF64, JacobiPacked,
    JacobiPackedF64, BODY, FLUID, OUTFLOW,
};
use crate::baselines::seed002::{self, SeedKernel, SeedShape};
use crate::options::describe;
use crate::real::Real;
use crate::report::Check;

type RtResult<T> = clforge::runtime::Result<T>;

/// A deterministic value in [0, 1) for a grid point (splitmix64 of its coordinates).
fn noise(x: usize, y: usize, z: usize, salt: u64) -> f32 {
    let mut h = (x as u64) ^ ((y as u64) << 21) ^ ((z as u64) << 42) ^ salt.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^= h >> 31;
    (h >> 40) as f32 / (1u64 << 24) as f32
}

/// The generated Jacobi kernel of one precision, as plain function pointers.
#[derive(Clone, Copy)]
pub struct JacobiKernel<T: Scalar, K> {
    pub spec: fn() -> StencilSpec,
    #[allow(clippy::type_complexity)]
    pub launch:
        fn(&StencilPlan, &mut DeviceGrid<T>, &DeviceGrid<T>, &DeviceGrid<T>, &DeviceGrid<u8>, &K) -> RtResult<Event>,
    #[allow(clippy::type_complexity)]
    pub host: fn(&mut HostGrid<T>, &HostGrid<T>, &HostGrid<T>, &HostGrid<u8>, &K) -> RtResult<()>,
    pub coeffs: fn([f32; 3]) -> K,
}

/// A Jacobi stencil that computes its cell kind from the point (no mask), beside the masked
/// one whose host reference it must equal.
pub struct ComputedKernel<T: Scalar, K> {
    pub masked: JacobiKernel<T, K>,
    pub spec: fn() -> StencilSpec,
    #[allow(clippy::type_complexity)]
    pub launch: fn(&StencilPlan, &mut DeviceGrid<T>, &DeviceGrid<T>, &DeviceGrid<T>, &Body, &K) -> RtResult<Event>,
}

pub fn computed_f32() -> ComputedKernel<f32, Coeffs> {
    ComputedKernel {
        masked: jacobi_f32(),
        spec: JacobiComputed::spec,
        launch: JacobiComputed::launch_plan,
    }
}

pub fn computed_f64() -> ComputedKernel<f64, Coeffs64> {
    ComputedKernel {
        masked: jacobi_f64(),
        spec: JacobiComputedF64::spec,
        launch: JacobiComputedF64::launch_plan,
    }
}

/// The cell mask packed 2 bits per point (`packed(cell = 2)`).
pub type PackedCells = PackedGrid<u8, 2>;

/// A Jacobi stencil that reads its cell kinds packed, beside the masked one whose host
/// reference it must equal (the same function).
#[derive(Clone, Copy)]
pub struct PackedKernel<T: Scalar, K> {
    pub masked: JacobiKernel<T, K>,
    pub spec: fn() -> StencilSpec,
    #[allow(clippy::type_complexity)]
    pub launch:
        fn(&StencilPlan, &mut DeviceGrid<T>, &DeviceGrid<T>, &DeviceGrid<T>, &PackedCells, &K) -> RtResult<Event>,
}

pub fn packed_f32() -> PackedKernel<f32, Coeffs> {
    PackedKernel {
        masked: jacobi_f32(),
        spec: JacobiPacked::spec,
        launch: JacobiPacked::launch_plan,
    }
}

pub fn packed_f64() -> PackedKernel<f64, Coeffs64> {
    PackedKernel {
        masked: jacobi_f64(),
        spec: JacobiPackedF64::spec,
        launch: JacobiPackedF64::launch_plan,
    }
}

pub fn jacobi_f32() -> JacobiKernel<f32, Coeffs> {
    JacobiKernel {
        spec: Jacobi::spec,
        launch: Jacobi::launch_plan,
        host: Jacobi::apply_host,
        coeffs: |[a, b, c]| Coeffs { a, b, c },
    }
}

pub fn jacobi_f64() -> JacobiKernel<f64, Coeffs64> {
    JacobiKernel {
        spec: JacobiF64::spec,
        launch: JacobiF64::launch_plan,
        host: JacobiF64::apply_host,
        coeffs: |[a, b, c]| Coeffs64 {
            a: a.into(),
            b: b.into(),
            c: c.into(),
        },
    }
}

/// Jacobi weights: `a = b = 1/4` as for `h_x = h_y`; `c` large enough that a wrong ω
/// read shows in the checks.
const COEFFS: [f32; 3] = [0.25, 0.25, -0.05];

/// Seed 002's problem on a grid of `shape` (Fig. 1): a channel with a square body in the
/// middle; walls and inlet fixed, the right column outflow.
pub struct JacobiHost<T: Scalar> {
    pub shape: Shape,
    /// Body square `[x1, y1, x2, y2]`, inclusive (the seed's `square_s`).
    pub body: [usize; 4],
    pub psi: HostGrid<T>,
    pub w: HostGrid<T>,
    pub cell: HostGrid<u8>,
}

impl<T: Real> JacobiHost<T> {
    pub fn new(shape: Shape) -> RtResult<JacobiHost<T>> {
        let [nx, ny, _] = shape.dims();
        let side = (ny / 6).max(2);
        let (x1, y1) = (nx / 2 - side / 2, ny / 2 - side / 2);
        let body = [x1, y1, x1 + side - 1, y1 + side - 1];
        let in_body = |x: usize, y: usize| (body[0]..=body[2]).contains(&x) && (body[1]..=body[3]).contains(&y);
        let cell = HostGrid::from_fn(shape, |[x, y, _]| {
            if y == 0 || y == ny - 1 || x == 0 || in_body(x, y) {
                BODY
            } else if x == nx - 1 {
                OUTFLOW
            } else {
                FLUID
            }
        })?;
        let h = 1.0 / (ny - 1) as f32;
        let psi = HostGrid::from_fn(shape, |[x, y, _]| {
            T::from(if in_body(x, y) {
                0.5
            } else {
                y as f32 * h + 0.01 * noise(x, y, 0, 1)
            })
        })?;
        let w = HostGrid::from_fn(shape, |[x, y, _]| T::from(2.0 * noise(x, y, 0, 2) - 1.0))?;
        Ok(JacobiHost {
            shape,
            body,
            psi,
            w,
            cell,
        })
    }
}

/// Seed 002's Jacobi iteration on one device: ψ ping-pong, ω, cell mask, weights.
pub struct JacobiCase<T: Scalar, K> {
    pub shape: Shape,
    pub body: [usize; 4],
    pub psi: PingPong<T>,
    pub w: DeviceGrid<T>,
    pub cell: DeviceGrid<u8>,
    pub k: K,
    pub coeffs: [f32; 3],
    pub kernel: JacobiKernel<T, K>,
}

impl<T: Real, K> JacobiCase<T, K> {
    pub fn new(dev: &Device, kernel: JacobiKernel<T, K>, host: &JacobiHost<T>) -> Result<Self> {
        Ok(JacobiCase {
            shape: host.shape,
            body: host.body,
            psi: PingPong::from_host(dev, &host.psi)?,
            w: DeviceGrid::from_host(dev, &host.w)?,
            cell: DeviceGrid::from_host(dev, &host.cell)?,
            k: (kernel.coeffs)(COEFFS),
            coeffs: COEFFS,
            kernel,
        })
    }

    /// One iteration with a clforge plan: next = jacobi(current), then swap.
    pub fn step(&mut self, plan: &StencilPlan) -> RtResult<Event> {
        let (next, cur) = self.psi.split();
        let ev = (self.kernel.launch)(plan, next, cur, &self.w, &self.cell, &self.k)?;
        self.psi.swap();
        Ok(ev)
    }

    /// [`JacobiCase::step`] without an event ([`StencilPlan::enqueue`]); the generated
    /// `launch_plan` always asks for one, so the arguments are spelled out here.
    pub fn step_without_event(&mut self, plan: &StencilPlan) -> RtResult<()>
    where
        K: Params,
    {
        let (next, cur) = self.psi.split();
        let args = [
            KernelArg::grid("psi", cur),
            KernelArg::grid("w", &self.w),
            KernelArg::grid("cell", &self.cell),
            KernelArg::params(&self.k),
        ];
        plan.enqueue(next, &args)?;
        self.psi.swap();
        Ok(())
    }

    /// One iteration with a seed 002 kernel.
    /// `consts` from [`seed002::Seed::constants`] for this case and `shape`.
    pub fn seed_step(
        &mut self,
        seed: &seed002::Seed,
        kernel: SeedKernel,
        shape: SeedShape,
        consts: &ConstBuffer,
    ) -> Result<Event> {
        let (next, cur) = self.psi.split();
        let ev = seed.launch::<T>(
            kernel,
            shape,
            self.shape,
            next.buffer(),
            cur.buffer(),
            self.w.buffer(),
            consts,
        )?;
        self.psi.swap();
        Ok(ev)
    }

    pub fn plan(&self, dev: &Device, config: &LaunchConfig) -> RtResult<StencilPlan> {
        StencilPlan::new(dev, (self.kernel.spec)(), config, self.shape)
    }
}

/// Seed 002's Jacobi iteration on one device with the cell mask packed 2 bits per point.
pub struct PackedCase<T: Scalar, K> {
    pub shape: Shape,
    pub psi: PingPong<T>,
    pub w: DeviceGrid<T>,
    pub cell: PackedCells,
    pub k: K,
    pub kernel: PackedKernel<T, K>,
}

impl<T: Real, K> PackedCase<T, K> {
    pub fn new(dev: &Device, kernel: PackedKernel<T, K>, host: &JacobiHost<T>) -> Result<Self> {
        Ok(PackedCase {
            shape: host.shape,
            psi: PingPong::from_host(dev, &host.psi)?,
            w: DeviceGrid::from_host(dev, &host.w)?,
            cell: PackedGrid::from_host(dev, &host.cell)?,
            k: (kernel.masked.coeffs)(COEFFS),
            kernel,
        })
    }
}

impl<T: Real, K> StencilCase for PackedCase<T, K> {
    fn plan(&self, dev: &Device, config: &LaunchConfig) -> RtResult<StencilPlan> {
        StencilPlan::new(dev, (self.kernel.spec)(), config, self.shape)
    }

    fn step(&mut self, plan: &StencilPlan) -> RtResult<Event> {
        let (next, cur) = self.psi.split();
        let ev = (self.kernel.launch)(plan, next, cur, &self.w, &self.cell, &self.k)?;
        self.psi.swap();
        Ok(ev)
    }
}

/// Checks one launch configuration of the packed-mask Jacobi against the masked stencil's
/// host reference on a small grid.
pub fn check_packed<T: Real, K>(dev: &Device, kernel: PackedKernel<T, K>, config: &LaunchConfig) -> Result<Check>
where
    PackedKernel<T, K>: Copy,
{
    let shape = Shape::d2(CHECK_SHAPE_2D.0, CHECK_SHAPE_2D.1);
    let host = JacobiHost::<T>::new(shape)?;
    let case = PackedCase::new(dev, kernel, &host)?;
    let mut want = HostGrid::new(shape)?;
    (kernel.masked.host)(&mut want, &host.psi, &host.w, &host.cell, &case.k)?;
    let mut out = DeviceGrid::from_host(dev, &HostGrid::from_vec(shape, vec![T::from(-7.0); shape.len()])?)?;
    let plan = case.plan(dev, config)?;
    (kernel.launch)(&plan, &mut out, case.psi.current(), &case.w, &case.cell, &case.k)?.wait()?;
    let config = describe(config, &(kernel.spec)());
    let what = format!("`{}` ({config})", plan.kernel());
    let check = checked(&what, plan.kernel(), config, shape, &out.to_host()?, &want)?;
    if !check.exact {
        bail!("{what} differs from the masked host reference; the packed mask must give its bits exactly");
    }
    Ok(check)
}

/// The check of `kernel` in `config` (`what` names both in errors): `got` compared with the
/// host reference `want` by [`compare`].
fn checked<T: Real>(
    what: &str,
    kernel: &str,
    config: String,
    shape: Shape,
    got: &HostGrid<T>,
    want: &HostGrid<T>,
) -> Result<Check> {
    let (max_rel_err, exact) = compare(what, got, want)?;
    Ok(Check {
        kernel: kernel.to_owned(),
        config,
        shape: shape.to_string(),
        max_rel_err,
        exact,
    })
}

/// Compares a device result with the reference; fails with the first bad point.
fn compare<T: Real>(what: &str, got: &HostGrid<T>, want: &HostGrid<T>) -> Result<(f64, bool)> {
    let (mut worst, mut exact) = (0.0f64, true);
    let [nx, ny, _] = want.shape().dims();
    for (i, (&g, &w)) in got.data().iter().zip(want.data()).enumerate() {
        let (g, w): (f64, f64) = (g.into(), w.into());
        exact &= g.to_bits() == w.to_bits();
        let err = (g - w).abs() / w.abs().max(1.0);
        if err.is_nan() || err > T::TOL {
            let (x, y, z) = (i % nx, (i / nx) % ny, i / (nx * ny));
            bail!(
                "{what} is wrong at ({x}, {y}, {z}): got {g}, the host reference gives {w} \
                 (relative error {err:.2e} > {:.1e}); refusing to benchmark a wrong kernel",
                T::TOL
            );
        }
        worst = worst.max(err);
    }
    Ok((worst, exact))
}

/// Small grids of the checks: odd sizes so that partial tiles and vector row ends run.
pub const CHECK_SHAPE_2D: (usize, usize) = (101, 67);
/// Seed 002's kernels need whole tiles: multiples of 32 (3 x 2 tiles of 32x32).
pub const CHECK_SHAPE_SEED: (usize, usize) = (96, 64);
pub const CHECK_SHAPE_3D: (usize, usize, usize) = (37, 29, 23);

/// Checks one clforge launch configuration of a Jacobi kernel on a small grid.
pub fn check_jacobi<T: Real, K>(dev: &Device, kernel: JacobiKernel<T, K>, config: &LaunchConfig) -> Result<Check> {
    let shape = Shape::d2(CHECK_SHAPE_2D.0, CHECK_SHAPE_2D.1);
    let host = JacobiHost::<T>::new(shape)?;
    let case = JacobiCase::new(dev, kernel, &host)?;
    let mut want = HostGrid::new(shape)?;
    (case.kernel.host)(&mut want, &host.psi, &host.w, &host.cell, &case.k)?;
    // A sentinel in the output shows points the kernel fails to write.
    let mut out = DeviceGrid::from_host(dev, &HostGrid::from_vec(shape, vec![T::from(-7.0); shape.len()])?)?;
    let plan = case.plan(dev, config)?;
    (case.kernel.launch)(&plan, &mut out, case.psi.current(), &case.w, &case.cell, &case.k)?.wait()?;
    let config = describe(config, &(case.kernel.spec)());
    let what = format!("`{}` ({config})", plan.kernel());
    checked(&what, plan.kernel(), config, shape, &out.to_host()?, &want)
}

/// Checks a seed 002 kernel against the host reference of [`Jacobi`].
pub fn check_seed<T: Real, K>(
    dev: &Device,
    seed: &seed002::Seed,
    kernel: JacobiKernel<T, K>,
    which: SeedKernel,
    shape_seed: SeedShape,
) -> Result<Check> {
    let shape = Shape::d2(CHECK_SHAPE_SEED.0, CHECK_SHAPE_SEED.1);
    let host = JacobiHost::<T>::new(shape)?;
    let mut case = JacobiCase::new(dev, kernel, &host)?;
    let mut want = host.psi.clone();
    (case.kernel.host)(&mut want, &host.psi, &host.w, &host.cell, &case.k)?;
    let consts = seed.constants::<T>(shape, shape_seed, case.body, case.coeffs)?;
    case.seed_step(seed, which, shape_seed, &consts)?.wait()?;
    let what = format!("seed 002 `{}` ({})", which.name(), shape_seed);
    checked(
        &what,
        which.name(),
        shape_seed.to_string(),
        shape,
        &case.psi.current().to_host()?,
        &want,
    )
}

/// The 3-D heat step on one device.
pub struct HeatCase {
    pub shape: Shape,
    pub u: PingPong<f32>,
    pub r: f32,
}

pub fn heat_initial(shape: Shape) -> RtResult<HostGrid<f32>> {
    HostGrid::from_fn(shape, |[x, y, z]| noise(x, y, z, 3))
}

impl HeatCase {
    pub fn new(dev: &Device, initial: &HostGrid<f32>) -> Result<HeatCase> {
        Ok(HeatCase {
            shape: initial.shape(),
            u: PingPong::from_host(dev, initial)?,
            r: 0.1,
        })
    }

    pub fn step(&mut self, plan: &StencilPlan) -> RtResult<Event> {
        let (next, cur) = self.u.split();
        let ev = Heat3d::launch_plan(plan, next, cur, self.r)?;
        self.u.swap();
        Ok(ev)
    }

    pub fn plan(&self, dev: &Device, config: &LaunchConfig) -> RtResult<StencilPlan> {
        Heat3d::plan(dev, config, self.shape)
    }
}

/// A benchmark problem stepped by a clforge plan, as [`super::time_and_tune`] times it.
pub trait StencilCase {
    fn plan(&self, dev: &Device, config: &LaunchConfig) -> RtResult<StencilPlan>;
    /// One step: next = kernel(current), then swap.
    fn step(&mut self, plan: &StencilPlan) -> RtResult<Event>;
}

impl<T: Real, K> StencilCase for JacobiCase<T, K> {
    fn plan(&self, dev: &Device, config: &LaunchConfig) -> RtResult<StencilPlan> {
        JacobiCase::plan(self, dev, config)
    }

    fn step(&mut self, plan: &StencilPlan) -> RtResult<Event> {
        JacobiCase::step(self, plan)
    }
}

impl StencilCase for HeatCase {
    fn plan(&self, dev: &Device, config: &LaunchConfig) -> RtResult<StencilPlan> {
        HeatCase::plan(self, dev, config)
    }

    fn step(&mut self, plan: &StencilPlan) -> RtResult<Event> {
        HeatCase::step(self, plan)
    }
}

/// Checks one launch configuration of the heat step on a small grid.
pub fn check_heat(dev: &Device, config: &LaunchConfig) -> Result<Check> {
    let (nx, ny, nz) = CHECK_SHAPE_3D;
    let shape = Shape::d3(nx, ny, nz);
    let initial = heat_initial(shape)?;
    let mut case = HeatCase::new(dev, &initial)?;
    let mut want = initial.clone();
    Heat3d::apply_host(&mut want, &initial, case.r)?;
    let plan = case.plan(dev, config)?;
    case.step(&plan)?.wait()?;
    let config = describe(config, &Heat3d::spec());
    let what = format!("`{}` ({config})", plan.kernel());
    checked(&what, plan.kernel(), config, shape, &case.u.current().to_host()?, &want)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn noise_is_spread_and_deterministic() {
        let v: Vec<f32> = (0..1000).map(|i| noise(i, 7, 0, 1)).collect();
        assert!(v.iter().all(|x| (0.0..1.0).contains(x)));
        let mean = v.iter().sum::<f32>() / 1000.0;
        assert!((mean - 0.5).abs() < 0.05, "{mean}");
        assert_eq!(noise(3, 4, 5, 6), noise(3, 4, 5, 6));
        assert_ne!(noise(3, 4, 5, 6), noise(4, 3, 5, 6));
    }

    #[test]
    fn mask_has_every_cell_kind() {
        let h = JacobiHost::<f32>::new(Shape::d2(96, 64)).unwrap();
        let count = |k: u8| h.cell.data().iter().filter(|&&c| c == k).count();
        assert_eq!(count(OUTFLOW), 62);
        // Walls, inlet (between the walls), a 10x10 body.
        assert_eq!(count(BODY), 2 * 96 + 62 + 100);
        assert_eq!(count(FLUID), 96 * 64 - count(BODY) - 62);
        assert_eq!(h.cell.get([h.body[0], h.body[1], 0]), Some(BODY));
        assert_eq!(h.cell.get([h.body[0] - 1, h.body[1], 0]), Some(FLUID));
    }

    #[test]
    fn generated_kernels_match_the_host_on_the_default_device() {
        let dev = Device::default().unwrap();
        for config in [
            LaunchConfig::default(),
            LaunchConfig::variant(clforge::runtime::Variant::Vector),
        ] {
            check_jacobi(&dev, jacobi_f32(), &config).unwrap();
            check_packed(&dev, packed_f32(), &config).unwrap();
            check_heat(&dev, &config).unwrap();
        }
    }
}
