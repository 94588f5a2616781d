//! The stencil kind: a point update read from neighbours, launched as the plain, tiled,
//! vector, steps or march variant; its spec, its plan on one device, on several devices and
//! across MPI ranks, and its autotuner.

pub(crate) mod plan;
#[cfg(feature = "mpi")]
pub(crate) mod ranks;
pub(crate) mod spec;
pub(crate) mod split;
pub mod tune;

pub use plan::StencilPlan;
#[cfg(feature = "mpi")]
pub use ranks::RankPlan;
pub use spec::{FoldSpec, LaunchConfig, StencilSpec, Tile, Variant, VariantSpec, DEFAULT_MARCH_Z, DEFAULT_STEPS};
pub use split::SplitPlan;

use crate::buffer::Scalar;
use crate::dist::{ArgOn, GridOn, Place};
use crate::error::Result;
use crate::grid::Shape;
use crate::program::Event;

/// Where a stencil runs: a [`Place`] that builds stencil plans. `Jacobi::plan(&target,
/// &config, shape)` takes any; `Jacobi::launch_plan(&plan, next, current, ..)` takes the grids
/// of the plan's target ([`GridOn`]).
pub trait StencilTarget: Place {
    /// A sized, built stencil launch on this target.
    type Plan: Launch<On = Self>;
    /// Builds and sizes a launch of `spec` for grids of `shape` (the generated `plan`).
    fn stencil_plan(&self, spec: StencilSpec, config: &LaunchConfig, shape: Shape) -> Result<Self::Plan>;
}

/// A built stencil launch: the generated `launch_plan`/`enqueue_plan` call these with the
/// arguments in the stencil function's order, made by [`Launch::On`]'s constructors.
pub trait Launch {
    /// The target the launch runs on (its grids and arguments).
    type On: Place;
    /// Launches, returning a profiling event.
    fn launch_args<T: Scalar>(&self, out: &mut GridOn<Self::On, T>, args: &[ArgOn<'_, Self::On>]) -> Result<Event>;
    /// Launches without an event.
    fn enqueue_args<T: Scalar>(&self, out: &mut GridOn<Self::On, T>, args: &[ArgOn<'_, Self::On>]) -> Result<()>;
    /// Launches a stencil with several outputs (`outs`, made by [`Place::grid_arg`] from the
    /// output grids, which the generated code borrows mutably), returning an event.
    fn launch_outputs(&self, outs: &[ArgOn<'_, Self::On>], args: &[ArgOn<'_, Self::On>]) -> Result<Event>;
    /// [`Launch::launch_outputs`] without an event.
    fn enqueue_outputs(&self, outs: &[ArgOn<'_, Self::On>], args: &[ArgOn<'_, Self::On>]) -> Result<()>;
}

#[cfg(test)]
mod tests {
    use super::plan::size_launch;
    use super::*;
    use crate::device::Device;
    use crate::error::Error;
    use crate::grid::{Boundary, DeviceGrid, HostGrid};
    use crate::launch::{Bind, KernelArg};
    use crate::params::{Params, StructBytes, StructDecl};

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

    /// `out, u, s, t, c, nx, ny, nz`.
    const SCALE_BINDS: &[Bind] = &[
        Bind::Out(0),
        Bind::Arg(0),
        Bind::Arg(1),
        Bind::Arg(2),
        Bind::Arg(3),
        Bind::Extent(0),
        Bind::Extent(1),
        Bind::Extent(2),
    ];

    fn spec() -> StencilSpec {
        StencilSpec {
            name: "scale",
            rank: 1,
            halo: [0; 3],
            boundary: Boundary::Clamp,
            lanes: 8,
            narrow: None,
            point: false,
            folds: &[],
            packed: &[],
            variants: [
                VariantSpec {
                    kernel: "scale_plain",
                    unavailable: None,
                    local_bytes_per_point: 0,
                    params: SCALE_BINDS,
                },
                VariantSpec {
                    kernel: "scale_tiled",
                    unavailable: None,
                    local_bytes_per_point: 4,
                    params: SCALE_BINDS,
                },
                VariantSpec {
                    kernel: "scale_vec8",
                    unavailable: None,
                    local_bytes_per_point: 0,
                    params: SCALE_BINDS,
                },
                VariantSpec {
                    kernel: "scale_steps",
                    unavailable: Some("the test stencil is 1-D"),
                    local_bytes_per_point: 8,
                    params: SCALE_BINDS,
                },
                VariantSpec {
                    kernel: "scale_march",
                    unavailable: None,
                    local_bytes_per_point: 4,
                    params: SCALE_BINDS,
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
        let u = DeviceGrid::from_host(&dev, &HostGrid::from_fn(shape, |[x, _, _]| x as f32).unwrap()).unwrap();
        let mut out = DeviceGrid::<f32>::new(&dev, shape).unwrap();
        let plan = StencilPlan::new(&dev, spec(), &LaunchConfig::default(), shape).unwrap();
        let run = |plan: &StencilPlan, out: &mut DeviceGrid<f32>, s: Scale, t: Scale, c: f32| {
            let args = [
                KernelArg::grid("u", &u),
                KernelArg::params(&s),
                KernelArg::params(&t),
                KernelArg::scalar(c),
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
            KernelArg::grid("u", &u),
            KernelArg::params(&Scale { a: 1.5, b: 0 }),
            KernelArg::params(&Scale { a: 0.0, b: 2 }),
            KernelArg::scalar(0.0f32),
        ];
        plan.enqueue(&mut out, &args).unwrap();
        dev.finish().unwrap();
        let want: Vec<f32> = (0..100).map(|x| 1.5 * x as f32 + 2.0).collect();
        assert_eq!(out.to_host().unwrap().data(), &want[..]);
        let copy = plan.clone();
        run(&copy, &mut out, Scale { a: 5.0, b: 2 }, Scale { a: 3.0, b: 0 }, 1.0);
        run(&plan, &mut out, Scale { a: -1.0, b: 7 }, Scale { a: 3.0, b: 0 }, 1.0);

        let small = DeviceGrid::<f32>::new(&dev, Shape::d1(50)).unwrap();
        let args = [KernelArg::grid("u", &small), KernelArg::params(&Scale { a: 1.0, b: 0 })];
        assert!(matches!(plan.launch(&mut out, &args), Err(Error::ShapeMismatch { .. })));
        let args = [KernelArg::grid("u", &u)];
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
    fn missing_kernel_fails_at_plan_with_the_names_available() {
        let dev = Device::default().unwrap();
        let shape = Shape::d1(64);
        // The plan reads the built kernel's limits, so a missing kernel fails before any launch.
        let err = StencilPlan::new(&dev, spec(), &LaunchConfig::variant(Variant::Vector), shape).unwrap_err();
        assert!(
            matches!(&err, Error::InvalidConfig(m) if m.contains("scale_vec8") && m.contains("scale_plain")),
            "{err}"
        );
    }

    /// A launch that names no tile gets one that fits the device's `__local` memory; a tile
    /// the caller names is kept, and one that does not fit is an error (long difftest run on
    /// the H100: 3-D stencils with a z halo of 3 and `f64` grids overflowed 48 KiB at 32 x 8).
    #[test]
    fn default_tile_shrinks_to_the_devices_local_memory() {
        let mut s = spec();
        s.rank = 3;
        s.halo = [1, 1, 3];
        s.default_tile = Tile { x: 32, y: 8, rows: 4 };
        s.variants[1].local_bytes_per_point = 24;
        let mut info = Device::default().unwrap().info().clone();
        info.local_mem_bytes = 49152;
        info.max_work_group_size = info.max_work_group_size.max(128);
        info.max_work_item_sizes = [1024, 1024, 64];
        let shape = Shape::d3(50, 40, 30);
        let tiled = LaunchConfig::variant(Variant::Tiled);
        // 34 * 10 * 7 points * 24 B = 57120 B > 49152 B; 32 x 4 needs 34 * 6 * 7 * 24 = 34272 B.
        assert_eq!(s.tile_on(&info, Variant::Tiled, 1), Tile { x: 32, y: 4, rows: 4 });
        let sized = size_launch(&s, &info, &tiled, shape).unwrap();
        assert_eq!(sized.local, [32, 4, 1]);
        assert_eq!(sized.local_bytes, 34272);
        let named = LaunchConfig::tiled(s.default_tile);
        let err = size_launch(&s, &info, &named, shape).unwrap_err().to_string();
        assert!(err.contains("57120") && err.contains("choose a smaller tile"), "{err}");
        // Nothing fits: the default stays and the launch says how much it lacks.
        info.local_mem_bytes = 64;
        assert_eq!(s.tile_on(&info, Variant::Tiled, 1), s.default_tile);
        let err = size_launch(&s, &info, &tiled, shape).unwrap_err().to_string();
        assert!(err.contains("CL_DEVICE_LOCAL_MEM_SIZE"), "{err}");
    }

    /// The march variant's launch: a work-group per `x` by `y` column and per `march` planes
    /// (the last clipped), its ring of `2 HZ + 2` planes per staged grid in local memory, the
    /// depth a build option; a default tile shrinks to fit, a named one that does not fit, a
    /// grid below 3-D and a march of 0 planes are errors.
    #[test]
    fn march_launch_geometry_and_local_memory() {
        let mut s = spec();
        s.rank = 3;
        s.halo = [1, 1, 2];
        s.default_tile = Tile { x: 32, y: 8, rows: 4 };
        let mut info = Device::default().unwrap().info().clone();
        info.local_mem_bytes = 49152;
        info.max_work_group_size = info.max_work_group_size.max(128);
        info.max_work_item_sizes = [1024, 1024, 64];
        let shape = Shape::d3(50, 40, 30);
        let sized = size_launch(&s, &info, &LaunchConfig::march(Tile { x: 16, y: 8, rows: 2 }, 8), shape).unwrap();
        assert_eq!((sized.global, sized.local), ([64, 10, 4], [16, 2, 1]));
        assert_eq!(sized.options, "-D TILE_X=16 -D TILE_Y=8 -D WG_Y=2 -D MARCH_Z=8");
        // (16 + 2) x (8 + 2) points x 6 planes x 4 B
        assert_eq!(sized.local_bytes, 18 * 10 * 6 * 4);
        let march = LaunchConfig::variant(Variant::March);
        assert_eq!(
            march.effective(&s),
            LaunchConfig::march(s.default_tile, DEFAULT_MARCH_Z)
        );
        let sized = size_launch(&s, &info, &march, shape).unwrap();
        assert_eq!(sized.global[2], 30usize.div_ceil(DEFAULT_MARCH_Z));
        assert!(sized.options.ends_with(&format!("-D MARCH_Z={DEFAULT_MARCH_Z}")));
        // 34 x 10 x 6 points x 32 B = 65280 B > 49152 B; 32 x 4 needs 34 * 6 * 6 * 32 = 39168 B.
        s.variants[4].local_bytes_per_point = 32;
        assert_eq!(s.tile_on(&info, Variant::March, 1), Tile { x: 32, y: 4, rows: 4 });
        assert_eq!(size_launch(&s, &info, &march, shape).unwrap().local_bytes, 39168);
        let named = LaunchConfig::march(s.default_tile, 4);
        let err = size_launch(&s, &info, &named, shape).unwrap_err();
        assert!(
            matches!(&err, Error::DeviceLimit { needed: 65280, .. }) && err.to_string().contains("ring of 6 planes"),
            "{err}"
        );
        let err = size_launch(&s, &info, &LaunchConfig::march(s.default_tile, 0), shape).unwrap_err();
        assert!(err.to_string().contains("0 planes"), "{err}");
        let err = size_launch(&spec(), &info, &march, Shape::d1(100)).unwrap_err();
        assert!(
            matches!(&err, Error::InvalidConfig(m) if m.contains("3-D stencils only")),
            "{err}"
        );
        assert_eq!(
            Variant::ALL.map(|v| Variant::from_name(v.name())),
            Variant::ALL.map(Some)
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
