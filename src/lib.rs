//! # clforge
//!
//! Physics as annotated Rust, lowered to readable, unrolled OpenCL C.
//!
//! ```
//! use clforge::prelude::*;
//!
//! /// Smooths a field: the mean of the four neighbours.
//! #[clforge::stencil]
//! pub fn smooth(u: &Grid<f32>) -> f32 {
//!     0.25 * (u.at(1, 0) + u.at(-1, 0) + u.at(0, 1) + u.at(0, -1))
//! }
//!
//! // The host function runs as written ...
//! let u = HostGrid::from_fn(Shape::d2(8, 8), |[x, y, _]| (x * y) as f32).unwrap();
//! let mut host = HostGrid::new(u.shape()).unwrap();
//! Smooth::apply_host(&mut host, &u).unwrap();
//! // ... and the generated kernel computes the same on the default OpenCL device.
//! let device = Device::default().unwrap();
//! let mut out = DeviceGrid::from_host(&device, &host).unwrap();
//! Smooth::launch(&LaunchConfig::default(), &mut out, &DeviceGrid::from_host(&device, &u).unwrap()).unwrap();
//! assert_eq!(out.to_host().unwrap(), host);
//! assert!(Smooth::source().contains("smooth_plain"));
//! ```

pub use clforge_macros::{element, lattice, stencil, sweep, Params};
/// The runtime: devices, grids, launches.
pub use clforge_runtime as runtime;

/// Everything a physics file needs.
pub mod prelude {
    pub use clforge_macros::{element, lattice, stencil, sweep, Params};
    pub use clforge_runtime::lattice::{Draws, Lattice, Lattice1, Lattice2, Lattice3, LatticePlan};
    pub use clforge_runtime::{
        Boundary, Device, DeviceGrid, Devices, Error, Grid, Grid1, Grid2, Grid3, HostGrid, Launch, LaunchConfig,
        Levels, Past, PingPong, Place, Point, Result, Schedule, Shape, SplitGrid, StencilPlan, StencilTarget, Sweep,
        Sweep1, Sweep2, Sweep3, SweepConfig, SweepLaunch, SweepPlan, SweepTarget, Target, TargetGrid, Tile, Variant,
    };
}
