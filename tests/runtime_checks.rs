//! What the runtime refuses before it builds or launches anything: launch sizes beyond the
//! device's limits (issue 8, item 5), sizes that overflow, meshes that do not fit their element,
//! and time steps beyond the explicit stability bound.

mod common;
mod elements;
mod kernels;

use clforge::prelude::*;
use clforge::runtime::fem::schedule::{Blocking, Schedule};
use common::device;
use kernels::jacobi::Jacobi;

fn plan(config: LaunchConfig, shape: Shape) -> Result<StencilPlan> {
    Jacobi::plan(&device(), &config, shape)
}

fn work_group(variant: Variant, wg: [usize; 3]) -> LaunchConfig {
    LaunchConfig {
        variant,
        work_group: Some(wg),
        ..LaunchConfig::default()
    }
}

/// The limit an error names, or a failure showing what came instead.
fn limit_name(r: Result<StencilPlan>) -> &'static str {
    match r {
        Err(Error::DeviceLimit { limit_name, .. }) => limit_name,
        other => panic!("expected Error::DeviceLimit, got {other:?}"),
    }
}

#[test]
fn zero_work_group_component_is_an_error_not_a_division() {
    for variant in [Variant::Plain, Variant::Vector] {
        for wg in [[0, 4, 1], [32, 0, 1], [32, 4, 0]] {
            let err = plan(work_group(variant, wg), Shape::d2(64, 64)).unwrap_err();
            assert!(
                matches!(&err, Error::InvalidConfig(m) if m.contains("is 0") && m.contains("at least 1")),
                "{variant:?} {wg:?}: {err}"
            );
        }
    }
    // A 2-D stencil's work-group is one deep in z.
    let err = plan(work_group(Variant::Plain, [32, 4, 2]), Shape::d2(64, 64)).unwrap_err();
    assert!(
        matches!(&err, Error::InvalidConfig(m) if m.contains("beyond the rank")),
        "{err}"
    );
}

#[test]
fn work_groups_beyond_the_device_are_refused_before_launch() {
    let info = device().info().clone();
    let [ix, iy, _] = info.max_work_item_sizes;
    let shape = Shape::d2(64, 64);
    for variant in [Variant::Plain, Variant::Vector] {
        // Wider than one axis allows.
        let r = plan(work_group(variant, [ix + 1, 1, 1]), shape);
        assert_eq!(limit_name(r), "CL_DEVICE_MAX_WORK_ITEM_SIZES[0]");
        // Every axis allowed, but too many work-items together.
        let wide = ix.min(info.max_work_group_size);
        let tall = (info.max_work_group_size / wide + 1).min(iy);
        if wide * tall > info.max_work_group_size {
            let r = plan(work_group(variant, [wide, tall, 1]), shape);
            assert_eq!(limit_name(r), "CL_DEVICE_MAX_WORK_GROUP_SIZE");
        }
    }
    let t = Tile {
        x: ix + 1,
        y: 1,
        rows: 1,
    };
    assert_eq!(
        limit_name(plan(LaunchConfig::tiled(t), shape)),
        "CL_DEVICE_MAX_WORK_ITEM_SIZES[0]"
    );
}

#[test]
fn local_memory_is_what_the_kernels_declare() {
    // Tiled: one (x + 2) × (y + 2) array of each staged grid (the spec sums their element
    // sizes); steps: two (x + 2 steps) × (y + 2 steps) arrays of the iterated psi (f32). The
    // driver's own account of the built kernel must agree.
    let per_point = Jacobi::spec().variant(Variant::Tiled).local_bytes_per_point;
    assert!(per_point >= 4, "jacobi stages at least psi");
    let shape = Shape::d2(100, 70);
    for (x, y, rows) in [(32, 8, 4), (16, 16, 2), (8, 4, 4)] {
        let t = Tile { x, y, rows };
        let tiled = plan(LaunchConfig::tiled(t), shape).unwrap();
        assert_eq!(tiled.local_bytes(), ((x + 2) * (y + 2) * per_point) as u64, "{t:?}");
        assert_eq!(tiled.local_bytes(), tiled.kernel_local_bytes().unwrap(), "{t:?}");
        for steps in [1, 3] {
            let p = plan(LaunchConfig::steps(steps, t), shape).unwrap();
            assert_eq!(p.local_bytes(), ((x + 2 * steps) * (y + 2 * steps) * 8) as u64);
            assert_eq!(p.local_bytes(), p.kernel_local_bytes().unwrap(), "{t:?} {steps} steps");
        }
    }
    for v in [Variant::Plain, Variant::Vector] {
        assert_eq!(plan(LaunchConfig::variant(v), shape).unwrap().local_bytes(), 0);
    }
}

#[test]
fn huge_tiles_and_steps_are_errors_not_aborts() {
    let have = device().info().local_mem_bytes;
    let shape = Shape::d2(64, 64);
    let t = Tile { x: 32, y: 32, rows: 4 };
    // The steps kernel keeps two copies of its region: find the step count at which one copy
    // still fits but two do not, so that a check counting one buffer would let it through.
    let region = |s: usize| ((32 + 2 * s) * (32 + 2 * s) * 4) as u64;
    let s = (1..).find(|&s| 2 * region(s) > have).unwrap();
    assert!(region(s) <= have, "no step count separates one buffer from two");
    assert_eq!(
        limit_name(plan(LaunchConfig::steps(s, t), shape)),
        "CL_DEVICE_LOCAL_MEM_SIZE"
    );
    plan(LaunchConfig::steps(s - 1, t), shape).unwrap();
    for steps in [1 << 20, usize::MAX / 2, usize::MAX] {
        assert_eq!(
            limit_name(plan(LaunchConfig::steps(steps, t), shape)),
            "CL_DEVICE_LOCAL_MEM_SIZE"
        );
    }
    let tall = Tile {
        x: 32,
        y: 1 << 24,
        rows: 1,
    };
    assert_eq!(
        limit_name(plan(LaunchConfig::tiled(tall), shape)),
        "CL_DEVICE_LOCAL_MEM_SIZE"
    );
    for huge in [
        Tile {
            x: usize::MAX,
            y: usize::MAX,
            rows: usize::MAX,
        },
        Tile {
            x: 1,
            y: usize::MAX,
            rows: 1,
        },
    ] {
        for config in [LaunchConfig::tiled(huge), LaunchConfig::steps(2, huge)] {
            assert!(plan(config, shape).is_err());
        }
    }
    let empty = Tile { x: 32, y: 0, rows: 4 };
    assert!(matches!(
        plan(LaunchConfig::tiled(empty), shape),
        Err(Error::InvalidConfig(_))
    ));
    assert!(matches!(
        plan(LaunchConfig::steps(0, t), shape),
        Err(Error::InvalidConfig(_))
    ));
}

#[test]
fn grids_beyond_32_bit_indices_are_refused() {
    let max = i32::MAX as usize;
    for shape in [Shape::d2(usize::MAX, 2), Shape::d2(max, 2), Shape::d2(1 << 16, 1 << 16)] {
        let err = plan(LaunchConfig::default(), shape).unwrap_err();
        assert!(matches!(err, Error::TooLarge { .. }), "{shape}: {err}");
    }
    let err = plan(LaunchConfig::default(), Shape::d2(0, 5)).unwrap_err();
    assert!(matches!(err, Error::InvalidConfig(_)), "{err}");
    // 2^31 - 1 points fit, but rounding x up to whole work-groups passes the last `int`.
    let err = plan(work_group(Variant::Plain, [64, 1, 1]), Shape::d2(max, 1)).unwrap_err();
    assert!(
        matches!(&err, Error::TooLarge { detail, .. } if detail.contains("axis 0")),
        "{err}"
    );
}

#[test]
fn element_blockings_beyond_the_device_are_refused() {
    use clforge::runtime::fem::mesh::{Mesh, StructuredMesh};
    use clforge::runtime::fem::stepper::{Model, Stepper, StepperConfig};
    use clforge::runtime::fem::Element;
    use elements::quad4::{Plate, Quad4};
    let plate = Plate {
        e: 1.0,
        nu: 0.3,
        rho: 1.0,
        thickness: 1.0,
    };
    let sm = StructuredMesh::for_element(&Quad4::spec(), [8, 8, 1], [1.0; 3]).unwrap();
    let model = Model::of::<Quad4>(Mesh::Structured(sm), &plate).unwrap();
    let info = device().info().clone();
    let run = |b: Blocking| {
        let config = StepperConfig {
            schedule: Schedule::BlockedMaterial(b),
            dt: 0.01,
            alpha: 0.0,
            c_max: 0.0,
        };
        Stepper::new(&device(), &model, &config)
    };
    let expect = |b: Blocking, limit: &str| match run(b) {
        Err(Error::DeviceLimit { limit_name, .. }) => assert_eq!(limit_name, limit, "{b:?}"),
        other => panic!("{b:?}: expected Error::DeviceLimit, got {other:?}"),
    };
    let [ix, _, _] = info.max_work_item_sizes;
    expect(
        Blocking {
            l_x: ix + 1,
            l_y: 1,
            wi_size: 1,
        },
        "CL_DEVICE_MAX_WORK_ITEM_SIZES[0]",
    );
    // A crack mask of more bits than local memory holds.
    expect(
        Blocking {
            l_x: 1,
            l_y: 1,
            wi_size: 64 * info.local_mem_bytes as usize,
        },
        "CL_DEVICE_LOCAL_MEM_SIZE",
    );
    for b in [
        Blocking {
            l_x: usize::MAX,
            l_y: usize::MAX,
            wi_size: 2,
        },
        Blocking {
            l_x: 0,
            l_y: 4,
            wi_size: 2,
        },
    ] {
        assert!(run(b).is_err(), "{b:?}");
    }
    run(Blocking {
        l_x: 4,
        l_y: 2,
        wi_size: 2,
    })
    .unwrap();
}
