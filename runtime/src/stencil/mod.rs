//! Launching generated stencils: device grids, ping-pong pairs, launch plans that size the
//! plain, tiled and vector variants, and the assembly of the generated source.

pub mod tune;

use std::sync::{Mutex, OnceLock};

use crate::buffer::{Buffer, ConstBuffer, Scalar};
use crate::device::{lock, Device};
use crate::error::{Error, Result};
use crate::host::{check_shape, Boundary, HostGrid, Params, Shape};
use crate::program::{Arg, Event, KernelRef, Program};

/// A grid in device memory.
#[derive(Debug)]
pub struct DeviceGrid<T: Scalar> {
    buffer: Buffer<T>,
    shape: Shape,
}

impl<T: Scalar> DeviceGrid<T> {
    /// A zero-filled grid on `device`.
    pub fn new(device: &Device, shape: Shape) -> Result<Self> {
        Ok(DeviceGrid {
            buffer: Buffer::new(device, shape.len())?,
            shape,
        })
    }
    /// A copy of a host grid on `device`.
    pub fn from_host(device: &Device, host: &HostGrid<T>) -> Result<Self> {
        Ok(DeviceGrid {
            buffer: Buffer::from_slice(device, host.data())?,
            shape: host.shape(),
        })
    }
    /// Overwrites the grid with a host grid of the same shape.
    pub fn upload(&mut self, host: &HostGrid<T>) -> Result<()> {
        check_shape("upload", self.shape, host.shape())?;
        self.buffer.write(host.data())
    }
    /// Reads the grid back into a new host grid.
    pub fn to_host(&self) -> Result<HostGrid<T>> {
        HostGrid::from_vec(self.shape, self.buffer.to_vec()?)
    }
    /// Reads the grid back into an existing host grid of the same shape.
    pub fn download(&self, host: &mut HostGrid<T>) -> Result<()> {
        check_shape("download", host.shape(), self.shape)?;
        self.buffer.read(host.data_mut())
    }
    /// Device-side copy from a grid of the same shape.
    pub fn copy_from(&mut self, other: &DeviceGrid<T>) -> Result<Event> {
        check_shape("copy source", self.shape, other.shape)?;
        self.buffer.copy_from(&other.buffer)
    }
    /// The shape.
    pub fn shape(&self) -> Shape {
        self.shape
    }
    /// The device the grid lives on.
    pub fn device(&self) -> &Device {
        self.buffer.device()
    }
    /// The underlying buffer, for hand-written kernels.
    pub fn buffer(&self) -> &Buffer<T> {
        &self.buffer
    }
}

/// Two device grids for iterating `next = f(current)` without copies: launch into
/// [`PingPong::split`]'s first element, then [`PingPong::swap`].
#[derive(Debug)]
pub struct PingPong<T: Scalar> {
    grids: [DeviceGrid<T>; 2],
    current: usize,
}

impl<T: Scalar> PingPong<T> {
    /// Both grids start as copies of `initial`, so boundary points a stencil never writes
    /// (a `fixed` boundary) keep their values in both.
    pub fn from_host(device: &Device, initial: &HostGrid<T>) -> Result<Self> {
        Ok(PingPong {
            grids: [
                DeviceGrid::from_host(device, initial)?,
                DeviceGrid::from_host(device, initial)?,
            ],
            current: 0,
        })
    }
    /// The current state.
    pub fn current(&self) -> &DeviceGrid<T> {
        &self.grids[self.current]
    }
    /// `(next, current)`: where to write the next state, and the current one to read.
    pub fn split(&mut self) -> (&mut DeviceGrid<T>, &DeviceGrid<T>) {
        let [a, b] = &mut self.grids;
        if self.current == 0 {
            (b, a)
        } else {
            (a, b)
        }
    }
    /// Makes the next state current.
    pub fn swap(&mut self) {
        self.current = 1 - self.current;
    }
}

/// Which generated kernel to launch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Variant {
    /// One point per work-item, neighbours from global memory (through the caches).
    #[default]
    Plain,
    /// Tile plus halo staged in local memory (seed 002's shared-memory kernel).
    Tiled,
    /// Several consecutive points along x per work-item with vector loads.
    Vector,
    /// Several iterations per launch: the state grid stays in local memory on a tile whose
    /// halo shrinks each step (temporal blocking). Writes the state after
    /// [`LaunchConfig::steps`] applications of the stencil. 2-D stencils with a fixed boundary.
    Steps,
}

/// Tile of the tiled variant: `x` by `y` points, walked by an `x` by `rows` work-group.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Tile {
    /// Points along x (= work-group width).
    pub x: usize,
    /// Points along y.
    pub y: usize,
    /// Work-items along y; each walks `y / rows` rows.
    pub rows: usize,
}

/// One generated variant of a stencil, as the macro decided it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VariantSpec {
    /// The kernel's OpenCL name.
    pub kernel: &'static str,
    /// Why the variant is not generated for this stencil, if it is not.
    pub unavailable: Option<&'static str>,
    /// Bytes of `__local` memory per point of the work-group's tile (0: none).
    pub local_bytes_per_point: usize,
}

/// What the runtime knows about one generated stencil (from the macro).
#[derive(Clone, Copy, Debug)]
pub struct StencilSpec {
    /// The Rust function's name.
    pub name: &'static str,
    /// Number of dimensions.
    pub rank: usize,
    /// Largest offset read along each axis.
    pub halo: [usize; 3],
    /// Boundary policy.
    pub boundary: Boundary,
    /// Points per work-item of the vector variant.
    pub lanes: usize,
    /// The variants in [`Variant`] order: plain, tiled, vector, steps.
    pub variants: [VariantSpec; 4],
    /// Tile used when the launch config names none.
    pub default_tile: Tile,
    /// `file.rs:line` of the Rust function.
    pub origin: &'static str,
    /// The generated OpenCL C.
    pub source: &'static str,
}

impl StencilSpec {
    /// The macro's facts about one variant.
    pub fn variant(&self, v: Variant) -> &VariantSpec {
        &self.variants[v as usize]
    }
}

/// How to launch: the variant and its tunables.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct LaunchConfig {
    /// Which kernel.
    pub variant: Variant,
    /// Tile of the tiled variant (default: the stencil's).
    pub tile: Option<Tile>,
    /// Work-group of the plain and vector variants (default: 32 x 4, 64 in 1-D).
    pub work_group: Option<[usize; 3]>,
    /// Iterations per launch of the [`Variant::Steps`] kernel (default 4).
    pub steps: Option<usize>,
}

impl LaunchConfig {
    /// The given variant with default tunables.
    pub fn variant(variant: Variant) -> LaunchConfig {
        LaunchConfig {
            variant,
            ..LaunchConfig::default()
        }
    }
    /// The tiled variant with this tile.
    pub fn tiled(tile: Tile) -> LaunchConfig {
        LaunchConfig {
            variant: Variant::Tiled,
            tile: Some(tile),
            ..LaunchConfig::default()
        }
    }
    /// `steps` iterations per launch on tiles of `tile` (temporal blocking).
    pub fn steps(steps: usize, tile: Tile) -> LaunchConfig {
        LaunchConfig {
            variant: Variant::Steps,
            tile: Some(tile),
            steps: Some(steps),
            work_group: None,
        }
    }
    /// Iterations one launch performs (1 except for [`Variant::Steps`]).
    pub fn iterations(&self) -> usize {
        match self.variant {
            Variant::Steps => self.steps.unwrap_or(DEFAULT_STEPS),
            _ => 1,
        }
    }
    /// This configuration with the defaults it leaves open filled in for `spec`: the tile of
    /// the tiled variant, the work-group of the others. Launches the same kernel the same way.
    pub fn effective(&self, spec: &StencilSpec) -> LaunchConfig {
        match self.variant {
            Variant::Tiled => LaunchConfig::tiled(self.tile.unwrap_or(spec.default_tile)),
            Variant::Steps => LaunchConfig::steps(self.iterations(), self.tile.unwrap_or(spec.default_tile)),
            v => LaunchConfig {
                variant: v,
                work_group: Some(self.work_group.unwrap_or(default_work_group(spec.rank))),
                ..LaunchConfig::default()
            },
        }
    }
}

/// Iterations per launch of the steps variant when the launch config names none.
pub const DEFAULT_STEPS: usize = 4;

/// Work-group of the plain and vector variants when the launch config names none.
fn default_work_group(rank: usize) -> [usize; 3] {
    match rank {
        1 => [64, 1, 1],
        _ => [32, 4, 1],
    }
}

fn round_up(n: usize, m: usize) -> usize {
    n.div_ceil(m) * m
}

/// A sized, built launch of one variant for one grid shape; reuse it on the hot path.
#[derive(Clone, Debug)]
pub struct StencilPlan {
    program: Program,
    kernel: String,
    global: Vec<usize>,
    local: Vec<usize>,
    shape: Shape,
    variant: Variant,
    /// The kernel object, looked up by name on the first launch only.
    kernel_ref: OnceLock<KernelRef>,
    /// The last parameter block of each params argument and its device buffer, so that
    /// repeated launches with the same parameters neither hash them nor touch the
    /// device-wide constant cache.
    params: ParamsCache,
}

/// One `(bytes, buffer)` per params argument, in argument order.
#[derive(Debug, Default)]
struct ParamsCache(Mutex<Vec<(Vec<u8>, ConstBuffer)>>);

impl Clone for ParamsCache {
    fn clone(&self) -> Self {
        ParamsCache(Mutex::new(lock(&self.0).clone()))
    }
}

/// Arguments of a launch live on the stack up to this many (the output, the stencil's
/// arguments, `nx, ny, nz`).
const STACK_ARGS: usize = 16;

impl StencilPlan {
    /// Builds the program (cached per source and options) and sizes the launch.
    pub fn new(device: &Device, spec: StencilSpec, config: &LaunchConfig, shape: Shape) -> Result<StencilPlan> {
        let rank = spec.rank;
        if shape.rank() != rank {
            return Err(Error::InvalidConfig(format!(
                "stencil `{}` is {rank}-D but the grid has shape {shape}",
                spec.name
            )));
        }
        if shape.is_empty() || shape.len() > i32::MAX as usize {
            return Err(Error::InvalidConfig(format!(
                "grid of shape {shape} has {} points; clforge kernels index with 32-bit ints (1 ..= 2^31-1 points)",
                shape.len()
            )));
        }
        let dims = shape.dims();
        let default_wg = default_work_group(rank);
        let (kernel, global, local, options) = match config.variant {
            Variant::Plain | Variant::Vector => {
                let wg = config.work_group.unwrap_or(default_wg);
                let (name, nx) = if config.variant == Variant::Plain {
                    (spec.variant(Variant::Plain).kernel.to_string(), dims[0])
                } else {
                    (
                        spec.variant(Variant::Vector).kernel.to_string(),
                        dims[0].div_ceil(spec.lanes),
                    )
                };
                let g = [round_up(nx, wg[0]), round_up(dims[1], wg[1]), round_up(dims[2], wg[2])];
                (name, g, wg, String::new())
            }
            Variant::Tiled => {
                let t = config.tile.unwrap_or(spec.default_tile);
                if t.x == 0 || t.y == 0 || t.rows == 0 || (rank == 1 && (t.y != 1 || t.rows != 1)) {
                    return Err(Error::InvalidConfig(format!(
                        "tile {t:?} is empty or not 1-D shaped (1-D tiles have y = rows = 1)"
                    )));
                }
                let g = [round_up(dims[0], t.x), dims[1].div_ceil(t.y) * t.rows, dims[2]];
                let options = format!("-D TILE_X={} -D TILE_Y={} -D WG_Y={}", t.x, t.y, t.rows);
                let staged = (t.x + 2 * spec.halo[0]) * (t.y + 2 * spec.halo[1]) * (2 * spec.halo[2] + 1);
                check_local(device, &spec, Variant::Tiled, staged)?;
                let kernel = spec.variant(Variant::Tiled).kernel.to_string();
                (kernel, g, [t.x, t.rows, 1], options)
            }
            Variant::Steps => {
                if let Some(why) = spec.variant(Variant::Steps).unavailable {
                    return Err(Error::InvalidConfig(format!(
                        "stencil `{}` has no steps variant: {why}",
                        spec.name
                    )));
                }
                let t = config.tile.unwrap_or(spec.default_tile);
                let steps = config.iterations();
                if t.x == 0 || t.y == 0 || t.rows == 0 || steps == 0 {
                    return Err(Error::InvalidConfig(format!(
                        "tile {t:?} and steps {steps} must be positive"
                    )));
                }
                let g = [round_up(dims[0], t.x), dims[1].div_ceil(t.y) * t.rows, 1];
                let options = format!(
                    "-D TILE_X={} -D TILE_Y={} -D WG_Y={} -D STEPS={steps}",
                    t.x, t.y, t.rows
                );
                let region = (t.x + 2 * steps * spec.halo[0]) * (t.y + 2 * steps * spec.halo[1]);
                check_local(device, &spec, Variant::Steps, region)?;
                (
                    spec.variant(Variant::Steps).kernel.to_string(),
                    g,
                    [t.x, t.rows, 1],
                    options,
                )
            }
        };
        let program = device.program(spec.origin, spec.source, &options)?;
        Ok(StencilPlan {
            program,
            kernel,
            global: global[..rank].to_vec(),
            local: local[..rank].to_vec(),
            shape,
            variant: config.variant,
            kernel_ref: OnceLock::new(),
            params: ParamsCache::default(),
        })
    }

    /// Global work size.
    pub fn global(&self) -> &[usize] {
        &self.global
    }
    /// Work-group size.
    pub fn local(&self) -> &[usize] {
        &self.local
    }
    /// The variant.
    pub fn variant(&self) -> Variant {
        self.variant
    }
    /// The kernel name.
    pub fn kernel(&self) -> &str {
        &self.kernel
    }

    /// Enqueues the kernel writing `out` from `args` (in the stencil function's order).
    pub fn launch<T: Scalar>(&self, out: &mut DeviceGrid<T>, args: &[StencilArg<'_>]) -> Result<Event> {
        self.submit(out, args, true)?.ok_or_else(|| Error::Cl {
            op: "clEnqueueNDRangeKernel",
            message: format!("kernel `{}` returned no event", self.kernel),
        })
    }

    /// Like [`StencilPlan::launch`], but asks the driver for no event: for long runs of
    /// launches that are waited for together ([`Device::finish`], or a read of the result).
    /// Events are not free: NVIDIA's OpenCL (driver 580, H100, profiling queue) took
    /// 14.8 µs of host time per launch with an event and 6.6 µs without, which bounds
    /// iterations on small grids.
    pub fn enqueue<T: Scalar>(&self, out: &mut DeviceGrid<T>, args: &[StencilArg<'_>]) -> Result<()> {
        self.submit(out, args, false).map(drop)
    }

    fn submit<T: Scalar>(
        &self,
        out: &mut DeviceGrid<T>,
        args: &[StencilArg<'_>],
        event: bool,
    ) -> Result<Option<Event>> {
        check_shape("out", self.shape, out.shape)?;
        for a in args {
            if let ArgKind::Grid { name, shape, .. } = &a.0 {
                check_shape(name, self.shape, *shape)?;
            }
        }
        let device = out.device();
        // Upload a params block only when it differs from this plan's last one.
        let mut params = lock(&self.params.0);
        let mut slot = 0;
        for a in args {
            if let ArgKind::Params(bytes) = &a.0 {
                let same = params
                    .get(slot)
                    .is_some_and(|(b, c)| b == bytes && c.device_index() == device.info().index);
                if !same {
                    let entry = (bytes.clone(), device.constant_bytes(bytes)?);
                    match params.get_mut(slot) {
                        Some(old) => *old = entry,
                        None => params.push(entry),
                    }
                }
                slot += 1;
            }
        }
        let [nx, ny, nz] = self.shape.dims().map(|d| d as i32);
        let count = args.len() + 4;
        let mut stack = [Arg::i32(0); STACK_ARGS];
        let mut heap = Vec::new();
        let cl_args: &mut [Arg<'_>] = if count <= STACK_ARGS {
            &mut stack[..count]
        } else {
            heap.resize(count, Arg::i32(0));
            &mut heap
        };
        cl_args[0] = Arg::buffer(&out.buffer);
        let mut slot = 0;
        for (a, cl) in args.iter().zip(&mut cl_args[1..]) {
            *cl = match &a.0 {
                ArgKind::Grid { arg, .. } | ArgKind::Scalar(arg) => *arg,
                ArgKind::Params(_) => {
                    slot += 1;
                    Arg::constant(&params[slot - 1].1)
                }
            };
        }
        cl_args[count - 3..].copy_from_slice(&[Arg::i32(nx), Arg::i32(ny), Arg::i32(nz)]);
        let kernel = match self.kernel_ref.get() {
            Some(k) => k,
            None => {
                let k = self.program.kernel_ref(&self.kernel)?;
                self.kernel_ref.get_or_init(|| k)
            }
        };
        self.program
            .launch_kernel(kernel, &self.kernel, &self.global, Some(&self.local), cl_args, event)
    }
}

/// Refuses a launch whose `__local` memory (`points` of the variant's tile) exceeds the device's:
/// some OpenCL implementations abort the process instead of failing the launch.
fn check_local(device: &Device, spec: &StencilSpec, variant: Variant, points: usize) -> Result<()> {
    let need = points.saturating_mul(spec.variant(variant).local_bytes_per_point) as u64;
    let have = device.info().local_mem_bytes;
    if need > have {
        return Err(Error::InvalidConfig(format!(
            "the {variant:?} variant of stencil `{}` needs {need} bytes of local memory for this tile \
             but the device has {have}: choose a smaller tile{}",
            spec.name,
            if variant == Variant::Steps {
                " or fewer steps"
            } else {
                ""
            }
        )));
    }
    Ok(())
}

/// One argument of a generated stencil launch (built by the generated code).
#[derive(Debug)]
pub struct StencilArg<'a>(ArgKind<'a>);

#[derive(Debug)]
enum ArgKind<'a> {
    Grid { name: &'a str, shape: Shape, arg: Arg<'a> },
    Params(Vec<u8>),
    Scalar(Arg<'a>),
}

/// Scalars a stencil may take by value.
pub trait KernelScalar: Copy {
    /// As a kernel argument.
    fn kernel_arg(self) -> Arg<'static>;
}

macro_rules! kernel_scalars {
    ($($t:ty => $f:ident),*) => {$(
        impl KernelScalar for $t {
            fn kernel_arg(self) -> Arg<'static> {
                Arg::$f(self)
            }
        }
    )*};
}
kernel_scalars!(f32 => f32, f64 => f64, i32 => i32, u32 => u32);

impl<'a> StencilArg<'a> {
    /// A grid argument named as in the stencil function.
    pub fn grid<T: Scalar>(name: &'a str, grid: &'a DeviceGrid<T>) -> StencilArg<'a> {
        StencilArg(ArgKind::Grid {
            name,
            shape: grid.shape,
            arg: Arg::buffer(&grid.buffer),
        })
    }
    /// A params struct, passed in constant memory.
    pub fn params<P: Params>(p: &P) -> StencilArg<'a> {
        StencilArg(ArgKind::Params(p.to_bytes()))
    }
    /// A scalar passed by value.
    pub fn scalar<T: KernelScalar>(v: T) -> StencilArg<'a> {
        StencilArg(ArgKind::Scalar(v.kernel_arg()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::{StructBytes, StructDecl};

    struct Scale {
        a: f32,
        b: i32,
    }

    impl Params for Scale {
        const CL_NAME: &'static str = "Scale";
        fn cl_declaration(cl_name: &str) -> String {
            let mut d = StructDecl::new(cl_name);
            d.field::<f32>("a");
            d.field::<i32>("b");
            d.finish()
        }
        fn to_bytes(&self) -> Vec<u8> {
            let mut b = StructBytes::default();
            b.put(self.a);
            b.put(self.b);
            b.finish()
        }
    }

    const SOURCE: &str = "typedef struct { float a; int b; } Scale;
__kernel void scale_plain(__global float* out, __global const float* u, __constant Scale* s, __constant Scale* t,
                          const float c, const int nx, const int ny, const int nz) {
    const int x = get_global_id(0);
    if (x < nx) out[x] = s->a * u[x] + s->b + t->a * c + t->b;
}";

    fn spec() -> StencilSpec {
        StencilSpec {
            name: "scale",
            rank: 1,
            halo: [0; 3],
            boundary: Boundary::Clamp,
            lanes: 8,
            variants: [
                VariantSpec {
                    kernel: "scale_plain",
                    unavailable: None,
                    local_bytes_per_point: 0,
                },
                VariantSpec {
                    kernel: "scale_tiled",
                    unavailable: None,
                    local_bytes_per_point: 4,
                },
                VariantSpec {
                    kernel: "scale_vec8",
                    unavailable: None,
                    local_bytes_per_point: 0,
                },
                VariantSpec {
                    kernel: "scale_steps",
                    unavailable: Some("the test stencil is 1-D"),
                    local_bytes_per_point: 8,
                },
            ],
            default_tile: Tile { x: 64, y: 1, rows: 1 },
            origin: "stencil.rs",
            source: SOURCE,
        }
    }

    #[test]
    fn plans_follow_changing_params_and_clone() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<StencilPlan>();
        let dev = Device::default().unwrap();
        let shape = Shape::d1(100);
        let u = DeviceGrid::from_host(&dev, &HostGrid::from_fn(shape, |[x, _, _]| x as f32)).unwrap();
        let mut out = DeviceGrid::<f32>::new(&dev, shape).unwrap();
        let plan = StencilPlan::new(&dev, spec(), &LaunchConfig::default(), shape).unwrap();
        let run = |plan: &StencilPlan, out: &mut DeviceGrid<f32>, s: Scale, t: Scale, c: f32| {
            let args = [
                StencilArg::grid("u", &u),
                StencilArg::params(&s),
                StencilArg::params(&t),
                StencilArg::scalar(c),
            ];
            plan.launch(out, &args).unwrap().wait().unwrap();
            let want: Vec<f32> = (0..100)
                .map(|x| s.a * x as f32 + s.b as f32 + t.a * c + t.b as f32)
                .collect();
            assert_eq!(out.to_host().unwrap().data(), &want[..]);
        };
        run(&plan, &mut out, Scale { a: 2.0, b: 1 }, Scale { a: 0.5, b: -3 }, 4.0);
        run(&plan, &mut out, Scale { a: 2.0, b: 1 }, Scale { a: 0.5, b: -3 }, 8.0);
        run(&plan, &mut out, Scale { a: -1.0, b: 7 }, Scale { a: 0.5, b: -3 }, 8.0);
        run(&plan, &mut out, Scale { a: -1.0, b: 7 }, Scale { a: 3.0, b: 0 }, 1.0);
        let args = [
            StencilArg::grid("u", &u),
            StencilArg::params(&Scale { a: 1.5, b: 0 }),
            StencilArg::params(&Scale { a: 0.0, b: 2 }),
            StencilArg::scalar(0.0f32),
        ];
        plan.enqueue(&mut out, &args).unwrap();
        dev.finish().unwrap();
        let want: Vec<f32> = (0..100).map(|x| 1.5 * x as f32 + 2.0).collect();
        assert_eq!(out.to_host().unwrap().data(), &want[..]);
        let copy = plan.clone();
        run(&copy, &mut out, Scale { a: 5.0, b: 2 }, Scale { a: 3.0, b: 0 }, 1.0);
        run(&plan, &mut out, Scale { a: -1.0, b: 7 }, Scale { a: 3.0, b: 0 }, 1.0);

        let small = DeviceGrid::<f32>::new(&dev, Shape::d1(50)).unwrap();
        let args = [
            StencilArg::grid("u", &small),
            StencilArg::params(&Scale { a: 1.0, b: 0 }),
        ];
        assert!(matches!(plan.launch(&mut out, &args), Err(Error::ShapeMismatch { .. })));
        let args = [StencilArg::grid("u", &u)];
        assert!(matches!(
            plan.launch(&mut out, &args),
            Err(Error::LengthMismatch {
                expected: 8,
                found: 5,
                ..
            })
        ));
    }

    #[test]
    fn missing_kernel_fails_at_launch_with_the_names_available() {
        let dev = Device::default().unwrap();
        let shape = Shape::d1(64);
        let plan = StencilPlan::new(&dev, spec(), &LaunchConfig::variant(Variant::Vector), shape).unwrap();
        let u = DeviceGrid::<f32>::new(&dev, shape).unwrap();
        let mut out = DeviceGrid::<f32>::new(&dev, shape).unwrap();
        let err = plan.launch(&mut out, &[StencilArg::grid("u", &u)]).unwrap_err();
        assert!(
            matches!(&err, Error::InvalidConfig(m) if m.contains("scale_vec8") && m.contains("scale_plain")),
            "{err}"
        );
    }

    #[test]
    fn effective_config_fills_defaults() {
        let s = spec();
        assert_eq!(LaunchConfig::default().effective(&s).work_group, Some([64, 1, 1]));
        let tiled = LaunchConfig::variant(Variant::Tiled).effective(&s);
        assert_eq!(tiled, LaunchConfig::tiled(s.default_tile));
        let wg = LaunchConfig {
            work_group: Some([128, 1, 1]),
            ..LaunchConfig::default()
        };
        assert_eq!(wg.effective(&s), wg);
    }
}
