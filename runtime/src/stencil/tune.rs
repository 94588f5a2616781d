//! A short autotuning pass for stencil launches: which variant, tile and work-group run
//! fastest for one device, stencil and grid shape.
//!
//! The candidates come from the stencil's [`StencilSpec`] (rank, halo, default tile, the
//! tiled kernel's `__local` arrays) and the device's limits ([`DeviceInfo`]'s
//! `max_work_group_size` and `local_mem_bytes`); seed 002's tile/block shapes are among
//! them. The caller times a candidate by launching it (a closure that enqueues one step
//! and returns its [`Event`]); the tuner takes the median of a few profiled launches and
//! keeps the fastest. Answers are cached in memory and in a JSON file, so a tuned
//! configuration costs nothing the next time, in this process or the next.
//!
//! ```
//! use clforge_runtime::tune::{candidates, Tuner};
//! use clforge_runtime::{Buffer, Device, VariantSpec, DeviceGrid, LaunchConfig, Shape, StencilArg, StencilSpec, Boundary, Tile};
//!
//! // A hand-written "stencil" (the macro generates these kernels for real ones).
//! const SOURCE: &str = "
//! __kernel void twice_plain(__global float* out, __global const float* u, int nx, int ny, int nz) {
//!     int x = get_global_id(0), y = get_global_id(1);
//!     if (x < nx && y < ny) out[x + nx * y] = 2.0f * u[x + nx * y];
//! }";
//! let variant = |kernel, local_bytes_per_point| VariantSpec { kernel, unavailable: None, local_bytes_per_point };
//! let spec = StencilSpec {
//!     name: "twice", rank: 2, halo: [0; 3], boundary: Boundary::Clamp, lanes: 8, narrow: None, point: false,
//!     folds: &[], packed: &[],
//!     variants: [variant("twice_plain", 0), variant("twice_tiled", 4), variant("twice_vec8", 0), variant("twice_steps", 8),
//!                variant("twice_march", 4)],
//!     default_tile: Tile { x: 32, y: 32, rows: 4 }, origin: "doc.rs:1", source: SOURCE,
//! };
//! let dev = Device::default().unwrap();
//! let shape = Shape::d2(64, 32);
//! let (mut out, u) = (DeviceGrid::<f32>::new(&dev, shape).unwrap(), DeviceGrid::<f32>::new(&dev, shape).unwrap());
//! // Only plain candidates exist in this source; the others fail to launch and are skipped.
//! let mut tuner = Tuner::in_memory();
//! let tuned = tuner.tune(&dev, spec, shape, |plan| plan.launch(&mut out, &[StencilArg::grid("u", &u)])).unwrap();
//! assert!(candidates(&spec, dev.info(), shape).contains(&tuned.config));
//! assert!(!tuned.from_cache);
//! // The second time the answer comes from the cache, without launching anything.
//! let again = tuner.tune(&dev, spec, shape, |_| unreachable!()).unwrap();
//! assert!(again.from_cache && again.config == tuned.config);
//! ```

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::device::{Device, DeviceInfo};
use crate::error::{Error, Result};
use crate::host::Shape;
use crate::program::Event;
use crate::stencil::{LaunchConfig, StencilPlan, StencilSpec, Tile, Variant};

/// Environment variable naming the tuning cache file; see [`Tuner::new`].
pub const TUNE_CACHE_ENV: &str = "CLFORGE_TUNE_CACHE";

/// Version of the cache file's layout; files of another version are ignored.
const CACHE_VERSION: u32 = 1;

/// Timed launches per candidate (after one warm-up launch) when not set otherwise: enough
/// for a steady median of launches that take a few microseconds.
const DEFAULT_REPETITIONS: usize = 10;

/// Tile/work-group shapes of seed 002's table 1 (tile x × tile y / block x × block y),
/// the shapes its author timed for the 512×256 Jacobi iteration.
pub const SEED_002_TILES: [Tile; 7] = [
    Tile { x: 32, y: 32, rows: 4 },
    Tile { x: 32, y: 16, rows: 4 },
    Tile { x: 32, y: 8, rows: 4 },
    Tile { x: 32, y: 4, rows: 4 },
    Tile { x: 32, y: 32, rows: 8 },
    Tile { x: 32, y: 16, rows: 8 },
    Tile { x: 32, y: 32, rows: 16 },
];

/// One candidate the tuner tried and what it measured.
#[derive(Clone, Debug)]
pub struct Trial {
    /// The configuration.
    pub config: LaunchConfig,
    /// Median device time of its launches in nanoseconds per iteration (per launch divided
    /// by [`LaunchConfig::iterations`]), if it ran.
    pub median_ns: Option<u64>,
    /// Why it did not run (build failure, work-group too large for the kernel, ...).
    pub error: Option<String>,
}

/// The tuner's answer for one device, stencil and grid shape.
#[derive(Clone, Debug)]
pub struct Tuned {
    /// The fastest configuration.
    pub config: LaunchConfig,
    /// Its median device time per iteration in nanoseconds (see [`Trial::median_ns`]), as
    /// measured when it was tuned (possibly by an earlier process, when `from_cache`).
    pub median_ns: u64,
    /// Whether the answer came from the cache (memory or file) instead of a tuning pass.
    pub from_cache: bool,
    /// Every candidate of the pass, in the order tried; empty when `from_cache`.
    pub trials: Vec<Trial>,
}

/// A cached answer, as stored in the JSON file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Entry {
    variant: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tile: Option<[usize; 3]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    work_group: Option<[usize; 3]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    steps: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    points: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    march: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    lanes: Option<usize>,
    median_ns: u64,
}

impl Entry {
    fn new(config: &LaunchConfig, median_ns: u64) -> Entry {
        Entry {
            variant: config.variant.name().to_owned(),
            tile: config.tile.map(|t| [t.x, t.y, t.rows]),
            work_group: config.work_group,
            steps: config.steps,
            points: config.points,
            march: config.march,
            lanes: config.lanes,
            median_ns,
        }
    }

    /// The configuration, or `None` for an entry this version does not understand.
    fn config(&self) -> Option<LaunchConfig> {
        Some(LaunchConfig {
            variant: Variant::from_name(&self.variant)?,
            tile: self.tile.map(|[x, y, rows]| Tile { x, y, rows }),
            work_group: self.work_group,
            steps: self.steps,
            points: self.points,
            march: self.march,
            lanes: self.lanes,
        })
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct CacheFile {
    version: u32,
    entries: BTreeMap<String, Entry>,
}

/// Chooses launch configurations by timing candidates, and remembers the answers.
#[derive(Debug)]
pub struct Tuner {
    path: Option<PathBuf>,
    /// Loaded from `path` on first use.
    entries: Option<BTreeMap<String, Entry>>,
    repetitions: usize,
    save_error: Option<String>,
}

impl Default for Tuner {
    fn default() -> Self {
        Tuner::new()
    }
}

impl Tuner {
    /// A tuner caching to the file named by `CLFORGE_TUNE_CACHE`, else
    /// `$XDG_CACHE_HOME/clforge/tune.json`, else `~/.cache/clforge/tune.json`
    /// (see [`Tuner::default_cache_path`]).
    pub fn new() -> Tuner {
        Tuner::with_cache(Tuner::default_cache_path())
    }

    /// A tuner caching to `path` (created on first save); `None` keeps answers in memory only.
    pub fn with_cache(path: Option<PathBuf>) -> Tuner {
        Tuner {
            path,
            entries: None,
            repetitions: DEFAULT_REPETITIONS,
            save_error: None,
        }
    }

    /// A tuner that keeps its answers in memory only.
    pub fn in_memory() -> Tuner {
        Tuner::with_cache(None)
    }

    /// The cache file [`Tuner::new`] uses, if a home or cache directory is known.
    pub fn default_cache_path() -> Option<PathBuf> {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        if let Some(path) = var(TUNE_CACHE_ENV) {
            return Some(path);
        }
        let cache_home = var("XDG_CACHE_HOME")
            .filter(|p| p.is_absolute())
            .or_else(|| var("HOME").map(|h| h.join(".cache")))?;
        Some(cache_home.join("clforge").join("tune.json"))
    }

    /// Sets the number of timed launches per candidate (at least 1; default 10).
    pub fn repetitions(mut self, n: usize) -> Tuner {
        self.repetitions = n.max(1);
        self
    }

    /// The cache file, if any.
    pub fn cache_path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Why the last attempt to write the cache file failed, if it did. An unwritable cache
    /// is not an error: the answers stay in memory.
    pub fn save_error(&self) -> Option<&str> {
        self.save_error.as_deref()
    }

    /// The cache key: device (name, platform, driver), stencil name, a hash of its source, shape.
    pub fn key(info: &DeviceInfo, spec: &StencilSpec, shape: Shape) -> String {
        format!(
            "{} | {} | {} | {} | {:016x} | {shape}",
            info.name,
            info.platform,
            info.driver_version,
            spec.name,
            fnv1a(spec.source.as_bytes())
        )
    }

    /// The cached configuration for this device, stencil and shape, if any.
    pub fn cached(&mut self, device: &Device, spec: &StencilSpec, shape: Shape) -> Option<LaunchConfig> {
        let key = Tuner::key(device.info(), spec, shape);
        self.entries().get(&key).and_then(Entry::config)
    }

    /// The fastest configuration for launching `spec` on grids of `shape` on `device`:
    /// from the cache if it holds one, else by a tuning pass that builds each of
    /// [`candidates`], calls `time` once to warm up and then [`Tuner::repetitions`] times,
    /// and takes the median of the events' device times. `time` must enqueue one launch of
    /// the plan it is given (e.g. a ping-pong step) and return its event. Candidates that
    /// fail to build or launch are skipped (see [`Tuned::trials`]); if all fail, the error
    /// lists why.
    pub fn tune<F>(&mut self, device: &Device, spec: StencilSpec, shape: Shape, time: F) -> Result<Tuned>
    where
        F: FnMut(&StencilPlan) -> Result<Event>,
    {
        let configs = candidates(&spec, device.info(), shape);
        self.tune_among(device, spec, shape, &configs, time)
    }

    /// Like [`Tuner::tune`] with the caller's candidates instead of [`candidates`], e.g. to
    /// weigh [`Variant::Steps`] launches (several iterations each; [`candidates`] leaves them
    /// out because they change what one call of `time` does) per iteration. The
    /// answer is cached under the same key, so keep a restricted search (e.g. a quick run)
    /// in a tuner of its own ([`Tuner::in_memory`]) if full passes share the cache file.
    pub fn tune_among<F>(
        &mut self,
        device: &Device,
        spec: StencilSpec,
        shape: Shape,
        configs: &[LaunchConfig],
        mut time: F,
    ) -> Result<Tuned>
    where
        F: FnMut(&StencilPlan) -> Result<Event>,
    {
        if shape.rank() != spec.rank {
            return Err(Error::InvalidConfig(format!(
                "cannot tune {}-D stencil `{}` for grids of shape {shape}",
                spec.rank, spec.name
            )));
        }
        let key = Tuner::key(device.info(), &spec, shape);
        if let Some(entry) = self.entries().get(&key) {
            if let Some(config) = entry.config() {
                return Ok(Tuned {
                    config,
                    median_ns: entry.median_ns,
                    from_cache: true,
                    trials: Vec::new(),
                });
            }
        }
        let mut trials = Vec::new();
        for config in configs.iter().cloned() {
            // Per iteration, so that multi-step launches (the steps variant) compare fairly.
            let iterations = config.iterations().max(1) as u64;
            let measured = StencilPlan::new(device, spec, &config, shape)
                .and_then(|plan| median_time(&plan, &mut time, self.repetitions))
                .map(|ns| ns / iterations);
            let (median_ns, error) = match measured {
                Ok(ns) => (Some(ns), None),
                Err(e) => (None, Some(e.to_string())),
            };
            trials.push(Trial {
                config,
                median_ns,
                error,
            });
        }
        let best = trials
            .iter()
            .filter_map(|t| Some((t.median_ns?, t)))
            .min_by_key(|(ns, _)| *ns);
        let Some((median_ns, best)) = best else {
            let why: Vec<String> = trials
                .iter()
                .filter_map(|t| Some(format!("{:?}: {}", t.config, t.error.as_deref()?)))
                .collect();
            return Err(Error::InvalidConfig(format!(
                "no launch configuration of stencil `{}` ran for shape {shape} on {}: {}",
                spec.name,
                device.info().name,
                why.join("; ")
            )));
        };
        let config = best.config.clone();
        self.entries().insert(key, Entry::new(&config, median_ns));
        self.save();
        Ok(Tuned {
            config,
            median_ns,
            from_cache: false,
            trials,
        })
    }

    fn entries(&mut self) -> &mut BTreeMap<String, Entry> {
        let path = self.path.as_deref();
        self.entries
            .get_or_insert_with(|| path.and_then(|p| read_cache(p).ok()).unwrap_or_default())
    }

    /// Writes the answers to the cache file, merged with entries other processes wrote since
    /// it was read; a failure is remembered in `save_error`, not returned.
    fn save(&mut self) {
        let Some(path) = self.path.clone() else {
            return;
        };
        let mut merged = read_cache(&path).unwrap_or_default();
        merged.extend(self.entries().iter().map(|(k, v)| (k.clone(), v.clone())));
        let file = CacheFile {
            version: CACHE_VERSION,
            entries: merged,
        };
        self.save_error = write_atomically(&path, &file)
            .err()
            .map(|e| format!("{}: {e}", path.display()));
    }
}

fn read_cache(path: &Path) -> io::Result<BTreeMap<String, Entry>> {
    let file: CacheFile = serde_json::from_slice(&fs::read(path)?)?;
    if file.version == CACHE_VERSION {
        Ok(file.entries)
    } else {
        Ok(BTreeMap::new())
    }
}

/// Writes to a temporary file beside `path` and renames it, so readers never see half a file.
fn write_atomically(path: &Path, file: &CacheFile) -> io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir)?;
    }
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp{}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    let text = serde_json::to_vec_pretty(file)?;
    fs::write(&tmp, text)
        .and_then(|()| fs::rename(&tmp, path))
        .inspect_err(|_| {
            let _ = fs::remove_file(&tmp);
        })
}

/// Median device time of `reps` launches after one warm-up launch.
fn median_time<F>(plan: &StencilPlan, time: &mut F, reps: usize) -> Result<u64>
where
    F: FnMut(&StencilPlan) -> Result<Event>,
{
    Event::median_ns(reps, || time(plan))
}

/// 64-bit FNV-1a: a hash of the source that stays the same across Rust releases and runs.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The configurations a tuning pass tries for `spec` on grids of `shape` on a device
/// described by `info`: the default launch first, then plain and vector launches with a
/// few work-group shapes, tiled launches with seed 002's tiles and a few others, and for 3-D
/// stencils march launches (2.5-D blocking) with a few tiles and depths.
/// Launches the device cannot run (the checks of [`StencilPlan::new`]: work-group size and
/// extents, local memory, 32-bit indices) and work-groups far wider than the grid are left out.
pub fn candidates(spec: &StencilSpec, info: &DeviceInfo, shape: Shape) -> Vec<LaunchConfig> {
    let dims = shape.dims();
    let wgs: &[[usize; 3]] = match spec.rank {
        1 => &[[64, 1, 1], [128, 1, 1], [256, 1, 1], [512, 1, 1]],
        2 => &[
            [32, 4, 1],
            [32, 8, 1],
            [64, 4, 1],
            [128, 2, 1],
            [256, 1, 1],
            [16, 16, 1],
        ],
        _ => &[[32, 4, 1], [32, 8, 1], [64, 4, 1], [128, 2, 1], [32, 4, 2], [16, 8, 2]],
    };
    let tiles: Vec<Tile> = match spec.rank {
        1 => [64, 128, 256, 512, 1024].map(|x| Tile { x, y: 1, rows: 1 }).to_vec(),
        2 => {
            let mut t = SEED_002_TILES.to_vec();
            t.extend([
                Tile { x: 64, y: 16, rows: 4 },
                Tile { x: 64, y: 32, rows: 8 },
                Tile { x: 128, y: 8, rows: 2 },
            ]);
            t
        }
        _ => vec![
            Tile { x: 32, y: 4, rows: 4 },
            Tile { x: 32, y: 8, rows: 4 },
            Tile { x: 32, y: 8, rows: 8 },
            Tile { x: 32, y: 16, rows: 4 },
            Tile { x: 64, y: 4, rows: 4 },
            Tile { x: 64, y: 8, rows: 2 },
        ],
    };
    // A work-group dimension wider than the grid's next power of two only idles work-items.
    let fits_grid = |wg: [usize; 3], items: [usize; 3]| {
        (0..3).all(|d| wg[d] <= items[d].checked_next_power_of_two().unwrap_or(usize::MAX))
    };
    // Device limits (work-group size, local memory) are the plan's own checks.
    let fits_device = |c: &LaunchConfig| super::size_launch(spec, info, c, shape).is_ok();
    // The default launch first, so that a pass can report what tuning gained over it;
    // later candidates that launch the same way are left out.
    let mut out = vec![LaunchConfig::default()];
    let mut seen = vec![LaunchConfig::default().effective(spec)];
    let mut push = |c: LaunchConfig| {
        let e = c.effective(spec);
        if !seen.contains(&e) {
            seen.push(e);
            out.push(c);
        }
    };
    let vec_items = [dims[0].div_ceil(spec.lanes.max(1)), dims[1], dims[2]];
    for (variant, items) in [(Variant::Plain, dims), (Variant::Vector, vec_items)] {
        for &wg in wgs {
            let c = LaunchConfig {
                variant,
                work_group: Some(wg),
                ..LaunchConfig::default()
            };
            if fits_grid(wg, items) && fits_device(&c) {
                push(c);
            }
        }
    }
    // The plain kernel walking 2, 4 or 8 points along the slowest axis per work-item in the
    // first work-group shapes, and in 2-D 3 rows in 32 x 4 and 3 or 4 in 64 x 2: on the H100
    // Jacobi at 8192² ran fastest so, f32 and f64 (docs/PERFORMANCE.md). Each candidate is a
    // build (a few seconds on PoCL), so the list stays short.
    if spec.rank > 1 {
        let slow = spec.rank - 1;
        // In 3-D on a GPU also wide rows and deeper walks along z (each plane read once for
        // up to 16 points: 2.5-D blocking in registers and the caches); not on a CPU, where
        // every candidate is a build of seconds and none of these pays.
        let gpu = info.kind == crate::DeviceKind::Gpu;
        let extra: &[([usize; 3], usize)] = match (spec.rank, gpu) {
            (2, _) => &[([32, 4, 1], 3), ([64, 2, 1], 3), ([64, 2, 1], 4)],
            (_, true) => &[
                ([64, 2, 1], 8),
                ([128, 2, 1], 4),
                ([128, 2, 1], 8),
                ([128, 1, 1], 8),
                ([256, 1, 1], 4),
                ([32, 4, 1], 16),
                ([64, 2, 1], 16),
                ([128, 1, 1], 16),
            ],
            _ => &[],
        };
        let pairs = wgs
            .iter()
            .take(3)
            .flat_map(|&wg| [2, 4, 8].map(|p| (wg, p)))
            .chain(extra.iter().copied());
        for (wg, points) in pairs {
            let c = LaunchConfig {
                variant: Variant::Plain,
                work_group: Some(wg),
                points: Some(points),
                ..LaunchConfig::default()
            };
            let mut items = dims;
            items[slow] = items[slow].div_ceil(points);
            if items[slow] >= 1 && dims[slow] >= 2 * points && fits_grid(wg, items) && fits_device(&c) {
                push(c);
            }
        }
    }
    // On a GPU the vector kernel with its wide lanes too (the narrow ones are the default there).
    if spec.narrow.is_some() && info.kind == crate::DeviceKind::Gpu {
        let c = LaunchConfig {
            variant: Variant::Vector,
            lanes: Some(spec.lanes),
            ..LaunchConfig::default()
        };
        if fits_device(&c) {
            push(c);
        }
    }
    // On a GPU the vector kernel walking 2 to 8 vectors along the slowest axis: where rows are
    // multiples of its lanes it loads whole aligned vectors (VEC_ALIGNED; the H100's 3-D heat
    // step at 512³ ran at 97-99 % of copy so, docs/PERFORMANCE.md).
    if spec.rank > 1 && info.kind == crate::DeviceKind::Gpu {
        let slow = spec.rank - 1;
        let vector: &[([usize; 3], usize)] = &[
            ([32, 4, 1], 2),
            ([32, 4, 1], 4),
            ([64, 2, 1], 4),
            ([32, 8, 1], 4),
            ([128, 2, 1], 4),
            ([64, 4, 1], 8),
            ([32, 4, 1], 8),
        ];
        for &(wg, points) in vector {
            let c = LaunchConfig {
                variant: Variant::Vector,
                work_group: Some(wg),
                points: Some(points),
                ..LaunchConfig::default()
            };
            let mut items = vec_items;
            items[slow] = items[slow].div_ceil(points);
            if dims[slow] >= 2 * points && fits_grid(wg, items) && fits_device(&c) {
                push(c);
            }
        }
    }
    for t in tiles.iter().chain([&spec.default_tile]) {
        let c = LaunchConfig::tiled(*t);
        if t.rows <= t.y && fits_grid([t.x, t.y, 1], dims) && fits_device(&c) {
            push(c);
        }
    }
    // 3-D: the march variant (2.5-D blocking), columns of a few tiles walked over 8 to 64
    // planes; on a CPU two shapes only (each is a build of seconds).
    if spec.rank == 3 && spec.variant(Variant::March).unavailable.is_none() {
        let gpu = info.kind == crate::DeviceKind::Gpu;
        let marches: &[(Tile, usize)] = if gpu {
            &[
                (Tile { x: 32, y: 8, rows: 4 }, 16),
                (Tile { x: 32, y: 8, rows: 4 }, 64),
                (Tile { x: 32, y: 16, rows: 4 }, 32),
                (Tile { x: 32, y: 16, rows: 8 }, 32),
                (Tile { x: 64, y: 4, rows: 4 }, 32),
                (Tile { x: 64, y: 8, rows: 4 }, 32),
                (Tile { x: 64, y: 16, rows: 8 }, 64),
                (Tile { x: 128, y: 4, rows: 2 }, 32),
            ]
        } else {
            &[(Tile { x: 32, y: 8, rows: 4 }, 16), (Tile { x: 32, y: 8, rows: 4 }, 64)]
        };
        for &(t, planes) in marches {
            let c = LaunchConfig::march(t, planes);
            // Planes past the grid's depth only idle; the deepest march is the whole grid.
            let c = if planes > dims[2] {
                LaunchConfig::march(t, dims[2])
            } else {
                c
            };
            if fits_grid([t.x, t.y, 1], dims) && fits_device(&c) {
                push(c);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::Boundary;
    use crate::stencil::{DeviceGrid, StencilArg};
    use std::cell::Cell;

    /// The three variants of `out = u(-1, 0) + u(1, 0)` with a fixed boundary, written as
    /// the macro would (the runtime's tests cannot use the macro).
    const SOURCE: &str = r#"
#ifndef TILE_X
#define TILE_X 32
#endif
#ifndef TILE_Y
#define TILE_Y 32
#endif
#ifndef WG_Y
#define WG_Y 4
#endif
#define TW (TILE_X + 2)
__kernel void pair_plain(__global float* out, __global const float* u, int nx, int ny, int nz) {
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= 1 && x < nx - 1 && y < ny) out[x + nx * y] = u[x - 1 + nx * y] + u[x + 1 + nx * y];
}
__kernel __attribute__((reqd_work_group_size(TILE_X, WG_Y, 1)))
void pair_tiled(__global float* out, __global const float* u, int nx, int ny, int nz) {
    __local float t_u[TW * TILE_Y];
    int lx = get_local_id(0), x0 = get_group_id(0) * TILE_X, y0 = get_group_id(1) * TILE_Y;
    for (int row = get_local_id(1); row < TILE_Y; row += WG_Y) {
        for (int i = lx; i < TW; i += TILE_X) {
            int gx = clamp(x0 - 1 + i, 0, nx - 1), gy = min(y0 + row, ny - 1);
            t_u[i + TW * row] = u[gx + nx * gy];
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    int x = x0 + lx;
    for (int row = get_local_id(1); row < TILE_Y; row += WG_Y) {
        int y = y0 + row;
        if (x >= 1 && x < nx - 1 && y < ny) out[x + nx * y] = t_u[lx + TW * row] + t_u[lx + 2 + TW * row];
    }
}
__kernel void pair_vec8(__global float* out, __global const float* u, int nx, int ny, int nz) {
    int y = get_global_id(1);
    for (int x = get_global_id(0) * 8; x < min((int)get_global_id(0) * 8 + 8, nx); ++x)
        if (x >= 1 && x < nx - 1 && y < ny) out[x + nx * y] = u[x - 1 + nx * y] + u[x + 1 + nx * y];
}
"#;

    fn spec() -> StencilSpec {
        StencilSpec {
            name: "pair",
            rank: 2,
            halo: [1, 0, 0],
            boundary: Boundary::Fixed,
            lanes: 8,
            narrow: None,
            point: false,
            folds: &[],
            packed: &[],
            variants: [
                ("pair_plain", 0),
                ("pair_tiled", 4),
                ("pair_vec8", 0),
                ("pair_steps", 8),
                ("pair_march", 4),
            ]
            .map(|(kernel, local_bytes_per_point)| crate::VariantSpec {
                kernel,
                unavailable: None,
                local_bytes_per_point,
            }),
            default_tile: Tile { x: 32, y: 32, rows: 4 },
            origin: "tune.rs",
            source: SOURCE,
        }
    }

    fn info(max_work_group_size: usize, local_mem_bytes: u64) -> DeviceInfo {
        crate::cl::test_info(
            crate::DeviceKind::Gpu,
            "test platform",
            max_work_group_size,
            local_mem_bytes,
        )
    }

    /// A fresh cache path under the target directory (removed first).
    fn cache_path(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("clforge-tune-test-{}", std::process::id()));
        let path = dir.join(name).join("tune.json");
        let _ = fs::remove_file(&path);
        path
    }

    /// Tunes `pair` for `shape`, counting the closure's calls, and checks every timed
    /// launch computed the right numbers.
    fn tune_counting(tuner: &mut Tuner, shape: Shape) -> (Tuned, usize) {
        let dev = Device::default().unwrap();
        let host: Vec<f32> = (0..shape.len()).map(|i| (i % 97) as f32).collect();
        let u = DeviceGrid::from_host(&dev, &crate::HostGrid::from_vec(shape, host.clone()).unwrap()).unwrap();
        let mut out = DeviceGrid::<f32>::new(&dev, shape).unwrap();
        let calls = Cell::new(0);
        let tuned = tuner
            .tune(&dev, spec(), shape, |plan| {
                calls.set(calls.get() + 1);
                plan.launch(&mut out, &[StencilArg::grid("u", &u)])
            })
            .unwrap();
        if calls.get() > 0 {
            let [nx, ny, _] = shape.dims();
            let got = out.to_host().unwrap();
            for y in 0..ny {
                for x in 1..nx - 1 {
                    let want = host[x - 1 + nx * y] + host[x + 1 + nx * y];
                    assert_eq!(got.get([x, y, 0]), Some(want), "({x}, {y})");
                }
            }
        }
        (tuned, calls.get())
    }

    #[test]
    fn tunes_once_then_answers_from_memory_and_file() {
        let path = cache_path("roundtrip");
        let shape = Shape::d2(70, 40);
        let mut tuner = Tuner::with_cache(Some(path.clone())).repetitions(2);
        let (first, calls) = tune_counting(&mut tuner, shape);
        assert!(!first.from_cache);
        assert!(tuner.save_error().is_none(), "{:?}", tuner.save_error());
        let dev = Device::default().unwrap();
        let tried = candidates(&spec(), dev.info(), shape);
        assert_eq!(first.trials.len(), tried.len());
        assert!(first.trials.iter().all(|t| t.median_ns.is_some() != t.error.is_some()));
        let ran = first.trials.iter().filter(|t| t.median_ns.is_some()).count();
        // One warm-up and two timed launches per candidate that ran.
        assert!(ran >= 3 && calls == 3 * ran, "{ran} candidates ran, {calls} calls");
        let fastest = first.trials.iter().filter_map(|t| t.median_ns).min();
        assert_eq!(Some(first.median_ns), fastest);

        let (again, calls) = tune_counting(&mut tuner, shape);
        assert_eq!((calls, again.from_cache), (0, true));
        assert_eq!(again.config, first.config);

        // A new tuner (a new process) reads the file.
        let mut fresh = Tuner::with_cache(Some(path.clone()));
        assert_eq!(fresh.cached(&dev, &spec(), shape), Some(first.config.clone()));
        let (from_file, calls) = tune_counting(&mut fresh, shape);
        assert_eq!(
            (calls, from_file.from_cache, from_file.median_ns),
            (0, true, first.median_ns)
        );
        assert_eq!(from_file.config, first.config);

        // Another shape is another key, and both survive in the file.
        let (other, calls) = tune_counting(&mut fresh, Shape::d2(33, 9));
        assert!(!other.from_cache && calls > 0);
        let text = fs::read_to_string(&path).unwrap();
        let file: CacheFile = serde_json::from_str(&text).unwrap();
        assert_eq!(file.entries.len(), 2, "{text}");
        assert!(text.contains("70x40") && text.contains("33x9"), "{text}");
    }

    #[test]
    fn unwritable_or_corrupt_cache_is_not_fatal() {
        // A cache "directory" that is a file cannot be created.
        let blocker = cache_path("blocked");
        fs::create_dir_all(blocker.parent().unwrap()).unwrap();
        fs::write(blocker.parent().unwrap().join("file"), b"x").unwrap();
        let path = blocker.parent().unwrap().join("file").join("tune.json");
        let mut tuner = Tuner::with_cache(Some(path)).repetitions(1);
        let (tuned, calls) = tune_counting(&mut tuner, Shape::d2(40, 8));
        assert!(!tuned.from_cache && calls > 0);
        assert!(tuner.save_error().is_some());
        let (_, calls) = tune_counting(&mut tuner, Shape::d2(40, 8));
        assert_eq!(calls, 0, "kept in memory");

        let corrupt = cache_path("corrupt");
        fs::create_dir_all(corrupt.parent().unwrap()).unwrap();
        fs::write(&corrupt, b"{ not json").unwrap();
        let mut tuner = Tuner::with_cache(Some(corrupt.clone())).repetitions(1);
        let (tuned, calls) = tune_counting(&mut tuner, Shape::d2(40, 8));
        assert!(!tuned.from_cache && calls > 0);
        assert!(tuner.save_error().is_none());
        let file: CacheFile = serde_json::from_slice(&fs::read(&corrupt).unwrap()).unwrap();
        assert_eq!(file.entries.len(), 1);
    }

    #[test]
    fn failing_candidates_are_skipped_and_all_failing_is_an_error() {
        let dev = Device::default().unwrap();
        let shape = Shape::d2(64, 16);
        let mut tuner = Tuner::in_memory().repetitions(1);
        let tuned = tuner
            .tune(&dev, spec(), shape, |plan| {
                if plan.variant() == Variant::Plain {
                    Err(Error::InvalidConfig("refused".into()))
                } else {
                    let u = DeviceGrid::<f32>::new(&dev, shape)?;
                    let mut out = DeviceGrid::<f32>::new(&dev, shape)?;
                    plan.launch(&mut out, &[StencilArg::grid("u", &u)])
                }
            })
            .unwrap();
        assert_ne!(tuned.config.variant, Variant::Plain);
        assert!(tuned
            .trials
            .iter()
            .any(|t| t.error.as_deref().is_some_and(|e| e.contains("refused"))));

        let err = Tuner::in_memory().tune(&dev, spec(), shape, |_| Err(Error::InvalidConfig("nope".into())));
        assert!(
            matches!(&err, Err(Error::InvalidConfig(m)) if m.contains("nope") && m.contains("pair")),
            "{err:?}"
        );
        let err = Tuner::in_memory().tune(&dev, spec(), Shape::d1(64), |_| unreachable!());
        assert!(matches!(err, Err(Error::InvalidConfig(_))));
    }

    #[test]
    fn candidates_respect_device_limits() {
        let shape = Shape::d2(512, 256);
        let all = candidates(&spec(), &info(1024, 48 << 10), shape);
        assert_eq!(all[0], LaunchConfig::default());
        for t in SEED_002_TILES {
            assert!(all.contains(&LaunchConfig::tiled(t)), "{t:?}");
        }
        assert!(all.iter().any(|c| c.variant == Variant::Vector));
        let unique: std::collections::HashSet<_> = all.iter().collect();
        assert_eq!(unique.len(), all.len());

        // 128 work-items and 4 KiB of local memory: (32 + 2) * 32 * 4 B = 4352 B is too much.
        let small = candidates(&spec(), &info(128, 4096), shape);
        for c in &small {
            let items: usize = match (c.variant, c.tile, c.work_group) {
                (Variant::Tiled, Some(t), _) => t.x * t.rows,
                (_, _, Some(wg)) => wg.iter().product(),
                _ => 128,
            };
            assert!(items <= 128, "{c:?}");
            if let Some(t) = c.tile {
                assert!((t.x + 2) * t.y * 4 <= 4096, "{c:?}");
            }
        }
        assert!(!small.contains(&LaunchConfig::tiled(Tile { x: 32, y: 32, rows: 4 })));
        assert!(small.contains(&LaunchConfig::tiled(Tile { x: 32, y: 16, rows: 4 })));

        // A narrow grid gets no work-groups much wider than itself.
        let narrow = candidates(&spec(), &info(1024, 48 << 10), Shape::d2(20, 256));
        assert!(
            narrow.iter().all(|c| c.work_group.is_none_or(|wg| wg[0] <= 32)),
            "{narrow:?}"
        );
    }

    /// 3-D stencils get march candidates (at most as deep as the grid), others none; the
    /// cache file keeps the variant and its depth.
    #[test]
    fn march_candidates_for_3d_stencils_only() {
        let mut s3 = spec();
        s3.rank = 3;
        s3.halo = [1, 1, 1];
        s3.default_tile = Tile { x: 32, y: 8, rows: 4 };
        let gpu = candidates(&s3, &info(1024, 48 << 10), Shape::d3(512, 512, 512));
        let marches = gpu.iter().filter(|c| c.variant == Variant::March).count();
        assert!(marches >= 6, "{gpu:?}");
        assert!(gpu.contains(&LaunchConfig::march(Tile { x: 32, y: 8, rows: 4 }, 16)));
        let shallow = candidates(&s3, &info(1024, 48 << 10), Shape::d3(64, 64, 20));
        assert!(shallow.iter().any(|c| c.march == Some(20)), "{shallow:?}");
        assert!(shallow.iter().all(|c| c.march.is_none_or(|m| m <= 20)), "{shallow:?}");
        let flat = candidates(&spec(), &info(1024, 48 << 10), Shape::d2(512, 256));
        assert!(flat.iter().all(|c| c.variant != Variant::March && c.march.is_none()));

        let c = LaunchConfig::march(Tile { x: 64, y: 8, rows: 4 }, 32);
        let e = Entry::new(&c, 5);
        assert_eq!((e.variant.as_str(), e.march), ("march", Some(32)));
        let text = serde_json::to_string(&e).unwrap();
        let back: Entry = serde_json::from_str(&text).unwrap();
        assert_eq!(back.config(), Some(c));
    }

    #[test]
    fn key_names_device_stencil_source_and_shape() {
        let i = info(256, 1 << 15);
        let a = Tuner::key(&i, &spec(), Shape::d2(8, 8));
        assert!(
            a.contains("test device") && a.contains("1.0") && a.contains("pair") && a.contains("8x8"),
            "{a}"
        );
        assert_ne!(a, Tuner::key(&i, &spec(), Shape::d2(8, 9)));
        let other = StencilSpec {
            source: "// changed\n",
            ..spec()
        };
        assert_ne!(a, Tuner::key(&i, &other, Shape::d2(8, 8)));
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
