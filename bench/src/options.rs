//! What a run is asked to do (shared by every suite), the empty report it starts from, and
//! the short text of a launch configuration used in tables, checks and progress lines.

use clforge::runtime::{Device, DeviceKind, LaunchConfig, Shape, StencilSpec, Variant};

use crate::measure::Reps;
use crate::report::Report;
use crate::roofline::Roofline;

/// What to run.
#[derive(Clone, Debug)]
pub struct Options {
    pub quick: bool,
    pub reps: Reps,
    /// 2-D sizes (Jacobi).
    pub sizes_2d: Vec<Shape>,
    /// 3-D sizes (heat step).
    pub sizes_3d: Vec<Shape>,
    pub f64: bool,
    /// Tune afresh in memory instead of using the cache file.
    pub retune: bool,
    /// Iterations of the small-grid study.
    pub iterations: usize,
    /// Shape of the small-grid study.
    pub small: Shape,
    /// `--kernels`: the elements suite's schedules to run (all when empty).
    pub kernels: Vec<String>,
}

impl Options {
    /// Default sizes: seed 002's 512x256 and large grids on GPUs, smaller ones on CPUs.
    pub fn defaults(dev: &Device, quick: bool) -> (Vec<Shape>, Vec<Shape>) {
        let gpu = dev.info().kind == DeviceKind::Gpu;
        let sq = |n| Shape::d2(n, n);
        let cube = |n| Shape::d3(n, n, n);
        match (gpu, quick) {
            (true, false) => (
                vec![Shape::d2(512, 256), sq(4096), sq(8192), sq(16384)],
                vec![cube(512)],
            ),
            (true, true) => (vec![Shape::d2(512, 256), sq(4096)], vec![cube(256)]),
            (false, false) => (vec![Shape::d2(512, 256), sq(2048)], vec![cube(256)]),
            (false, true) => (vec![Shape::d2(512, 256)], vec![cube(64)]),
        }
    }
}

/// The report of suite `suite` before anything is timed: the run's settings, the device and
/// its roofline.
pub fn new_report(dev: &Device, opts: &Options, suite: &str, roofline: Roofline, copy_gb_s: f64) -> Report {
    Report {
        tool: "clforge-bench",
        version: env!("CARGO_PKG_VERSION"),
        suite: suite.to_owned(),
        quick: opts.quick,
        reps: opts.reps,
        device: dev.info().clone(),
        roofline,
        copy_gb_s,
        checks: Vec::new(),
        results: Vec::new(),
        tuning: Vec::new(),
        iterations: Vec::new(),
        elements: Vec::new(),
        skipped: Vec::new(),
        tune_cache: None,
        wall_s: 0.0,
    }
}

/// Short text for a launch configuration of `spec` (defaults filled in), in the seed's
/// tile/block notation for tiles.
pub fn describe(config: &LaunchConfig, spec: &StencilSpec) -> String {
    let config = &config.effective(spec);
    let dims = |d: &[usize; 3]| {
        let n = if d[2] > 1 { 3 } else { 2 };
        d[..n].iter().map(usize::to_string).collect::<Vec<_>>().join("x")
    };
    let wg = config.work_group.as_ref().map_or("default".to_owned(), dims);
    match config.variant {
        Variant::Plain => match config.points {
            Some(p) => format!("plain {wg} x{p} points"),
            None => format!("plain {wg}"),
        },
        Variant::Vector => {
            let lanes = config.lanes.map_or(String::new(), |l| format!(" {l} lanes"));
            match config.points {
                Some(p) => format!("vector {wg}{lanes} x{p} vectors"),
                None => format!("vector {wg}{lanes}"),
            }
        }
        Variant::Tiled => match config.tile {
            Some(t) => format!("tiled {}x{}/{}x{}", t.x, t.y, t.x, t.rows),
            None => "tiled default".to_owned(),
        },
        Variant::Steps => match config.tile {
            Some(t) => format!("steps {} on {}x{}/{}x{}", config.iterations(), t.x, t.y, t.x, t.rows),
            None => format!("steps {}", config.iterations()),
        },
        Variant::March => match config.tile {
            Some(t) => format!("march {}x{}/{}x{} z{}", t.x, t.y, t.x, t.rows, config.march_planes()),
            None => format!("march z{}", config.march_planes()),
        },
    }
}
