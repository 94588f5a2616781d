//! OpenCL failures injected through the `cl` layer (`runtime::fault`) at a program's build, a
//! kernel's enqueue and a buffer's read-back: each is an `Error::Cl` naming the call, leaves
//! nothing half-done (no cached failed build, an output the kernel never touched), and the
//! same call succeeds when retried.

use crate::common;
use crate::kernels::heated::Heated;
use clforge::prelude::*;
use clforge::runtime::fault::{self, Site};
use clforge::runtime::{Buffer, Error};

const PROBE: &str = "__kernel void probe(__global float* x) { x[get_global_id(0)] += 1.0f; }";

#[test]
fn a_failed_build_is_not_cached_and_a_retry_builds() {
    let dev = common::device();
    {
        let armed = fault::fail_nth(Site::Build, 0);
        match dev.program("fault probe", PROBE, "-D FAULT_PROBE=1") {
            Err(Error::Cl {
                op: "clBuildProgram",
                message,
            }) => assert!(message.contains("injected"), "{message}"),
            other => panic!("expected an injected build failure, got {other:?}"),
        }
        assert!(armed.fired());
    }
    let p = dev.program("fault probe", PROBE, "-D FAULT_PROBE=1").unwrap();
    let x = Buffer::from_slice(&dev, &[1.0f32, 2.0]).unwrap();
    p.launch("probe", &[2], None, &[clforge::runtime::Arg::buffer(&x)])
        .unwrap();
    assert_eq!(x.to_vec().unwrap(), [2.0, 3.0]);
}

#[test]
fn a_failed_launch_leaves_its_output_and_a_retry_matches_the_host() {
    let dev = common::device();
    let shape = Shape::d2(21, 13);
    let mut r = common::rng(61);
    let u = common::random_f32(shape, &mut r, -1.0, 1.0);
    let mut want = HostGrid::new(shape).unwrap();
    Heated::apply_host(&mut want, &u, 0.2).unwrap();
    let du = dev.upload(&u).unwrap();
    let before = HostGrid::from_fn(shape, |[x, y, _]| (x + 100 * y) as f32).unwrap();
    let mut out = dev.upload(&before).unwrap();
    let config = LaunchConfig::variant(Variant::Plain);
    // The first enqueue, then the second (a variant with a second kernel would fail there).
    for n in [0, 1] {
        let armed = fault::fail_nth(Site::Enqueue, n);
        let result = Heated::launch(&config, &mut out, &du, 0.2);
        if armed.fired() {
            match result {
                Err(Error::Cl {
                    op: "clEnqueueNDRangeKernel",
                    message,
                }) => {
                    assert!(message.contains("heated"), "{message}")
                }
                other => panic!("expected an injected enqueue failure, got {other:?}"),
            }
            assert_eq!(
                out.to_host().unwrap().data(),
                before.data(),
                "a failed launch wrote its output"
            );
        } else {
            // One kernel per launch: the second enqueue is the next launch's.
            result.unwrap();
            out.upload(&before).unwrap();
        }
    }
    Heated::launch(&config, &mut out, &du, 0.2).unwrap();
    assert_eq!(out.to_host().unwrap().data(), want.data());
}

#[test]
fn a_failed_read_back_is_an_error_and_a_retry_reads_the_data() {
    let dev = common::device();
    let shape = Shape::d2(9, 7);
    let host = HostGrid::from_fn(shape, |[x, y, _]| (x + 10 * y) as f32 * 0.5).unwrap();
    let grid = dev.upload(&host).unwrap();
    {
        let armed = fault::fail_nth(Site::Read, 0);
        assert!(matches!(
            grid.to_host(),
            Err(Error::Cl {
                op: "clEnqueueReadBuffer",
                ..
            })
        ));
        assert!(armed.fired());
    }
    assert_eq!(grid.to_host().unwrap().data(), host.data());
    // Armed for a later call, a fault that never comes does not fire; dropping disarms it.
    let armed = fault::fail_nth(Site::Read, 5);
    assert_eq!(grid.to_host().unwrap().data(), host.data());
    assert!(!armed.fired());
    drop(armed);
    for _ in 0..6 {
        grid.to_host().unwrap();
    }
}
