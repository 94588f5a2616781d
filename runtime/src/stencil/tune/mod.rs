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
//! use clforge_runtime::{Bind, Buffer, Device, VariantSpec, DeviceGrid, LaunchConfig, Shape, KernelArg, StencilSpec, Boundary, Tile};
//!
//! // A hand-written "stencil" (the macro generates these kernels for real ones).
//! const SOURCE: &str = "
//! __kernel void twice_plain(__global float* out, __global const float* u, int nx, int ny, int nz) {
//!     int x = get_global_id(0), y = get_global_id(1);
//!     if (x < nx && y < ny) out[x + nx * y] = 2.0f * u[x + nx * y];
//! }";
//! let params = &[Bind::Out(0), Bind::Arg(0), Bind::Extent(0), Bind::Extent(1), Bind::Extent(2)];
//! let variant = |kernel, local_bytes_per_point| VariantSpec { kernel, unavailable: None, local_bytes_per_point, params };
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
//! let tuned = tuner.tune(&dev, spec, shape, |plan| plan.launch(&mut out, &[KernelArg::grid("u", &u)])).unwrap();
//! assert!(candidates(&spec, dev.info(), shape).contains(&tuned.config));
//! assert!(!tuned.from_cache);
//! // The second time the answer comes from the cache, without launching anything.
//! let again = tuner.tune(&dev, spec, shape, |_| unreachable!()).unwrap();
//! assert!(again.from_cache && again.config == tuned.config);
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::device::{Device, DeviceInfo};
use crate::error::{Error, Result};
use crate::grid::Shape;
use crate::program::Event;
use crate::stencil::{LaunchConfig, StencilPlan, StencilSpec, Tile};

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
/// Median device time of `reps` launches after one warm-up launch.
fn median_time<F>(plan: &StencilPlan, time: &mut F, reps: usize) -> Result<u64>
where
    F: FnMut(&StencilPlan) -> Result<Event>,
{
    Event::median_ns(reps, || time(plan))
}

mod cache;
mod candidates;
#[cfg(test)]
mod tests;

use crate::files::fnv1a;
use cache::{read_cache, write_atomically, CacheFile, Entry};
pub use candidates::candidates;
