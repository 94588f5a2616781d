//! OpenCL build failures come back as a typed error with the log and the Rust location.

mod kernels;

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
fn broken_generated_code_names_the_rust_line() {
    let device = Device::default().unwrap();
    // Corrupt the expression of the user's `match` (line 20 of tests/kernels/jacobi.rs), every
    // copy of it (the plain variant's branch-free run is compiled only with PTS > 1).
    let broken = Jacobi::source().replace("out[c] = cell_1 == FLUID ?", "out[c] = cell_1 == FLUID ?? ");
    assert_ne!(broken, Jacobi::source());
    match device.program("jacobi-broken", &broken, "") {
        Err(e @ Error::Build { .. }) => {
            let Error::Build { rust_location, log, .. } = &e else {
                unreachable!()
            };
            let loc = rust_location.as_deref().unwrap_or("");
            assert!(
                loc.starts_with("tests/kernels/jacobi.rs:20"),
                "location {loc:?}, log:\n{log}"
            );
            assert!(e.to_string().contains("tests/kernels/jacobi.rs:20"));
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
