//! OpenCL build failures come back as a typed error with the log, and bad shapes and tiles
//! as errors, not panics. The Rust location in a build error is checked beside the snapshots
//! (`tests/snapshots.rs`): it is the fixture's path as the snapshots pin it.

use crate::kernels;

use clforge::prelude::*;
use clforge::runtime::Error;
use kernels::jacobi::*;

#[test]
fn invalid_build_option_is_a_typed_error() {
    let device = Device::default().unwrap();
    match device.program("jacobi", Jacobi::source(), "-cl-no-such-option") {
        Err(Error::Build { options, log, .. }) => {
            assert!(options.contains("-cl-no-such-option"));
            assert!(!log.is_empty());
        }
        other => panic!("expected a build error, got {other:?}"),
    }
}

#[test]
fn wrong_grid_shape_is_an_error_not_a_panic() {
    let device = Device::default().unwrap();
    let a = HostGrid::<f32>::new(Shape::d2(8, 8)).unwrap();
    let b = HostGrid::<f32>::new(Shape::d2(8, 9)).unwrap();
    let cell = HostGrid::<u8>::new(Shape::d2(8, 8)).unwrap();
    let k = Coeffs {
        a: 0.25,
        b: 0.25,
        c: 0.0,
    };
    let mut out = DeviceGrid::from_host(&device, &a).unwrap();
    let err = Jacobi::launch(
        &LaunchConfig::default(),
        &mut out,
        &DeviceGrid::from_host(&device, &a).unwrap(),
        &DeviceGrid::from_host(&device, &b).unwrap(),
        &DeviceGrid::from_host(&device, &cell).unwrap(),
        &k,
    )
    .unwrap_err();
    assert!(
        matches!(&err, Error::ShapeMismatch { field, .. } if field == "w"),
        "{err}"
    );
    assert!(err.to_string().contains("8x9"));
    let mut host = a.clone();
    assert!(Jacobi::apply_host(&mut host, &a, &b, &cell, &k).is_err());
}

#[test]
fn tile_too_large_for_the_device_is_an_error() {
    let device = Device::default().unwrap();
    let config = LaunchConfig::tiled(Tile {
        x: 4096,
        y: 4096,
        rows: 4096,
    });
    assert!(Jacobi::plan(&device, &config, Shape::d2(64, 64))
        .and_then(|p| {
            let g = HostGrid::<f32>::new(Shape::d2(64, 64))?;
            let c = HostGrid::<u8>::new(Shape::d2(64, 64))?;
            let mut out = DeviceGrid::from_host(&device, &g)?;
            let (a, w, cell) = (
                DeviceGrid::from_host(&device, &g)?,
                DeviceGrid::from_host(&device, &g)?,
                DeviceGrid::from_host(&device, &c)?,
            );
            Jacobi::launch_plan(&p, &mut out, &a, &w, &cell, &Coeffs { a: 0.0, b: 0.0, c: 0.0 })
        })
        .is_err());
}
