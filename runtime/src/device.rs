//! Device discovery and selection, and the per-device context, queue and caches.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use ocl::core::{self, DeviceId, PlatformId};

use crate::buffer::ConstBuffer;
use crate::error::{cl, Error, Result};
use crate::program::Program;

/// Environment variable that overrides [`Device::default`]; it takes the same
/// syntax as [`Device::select`].
pub const DEVICE_ENV: &str = "CLFORGE_DEVICE";

/// Constant buffers kept per device before the cache is emptied (bounds memory
/// when callers upload ever-changing parameter blocks).
const CONSTANT_CACHE_LIMIT: usize = 1024;

/// The broad class of a device.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub enum DeviceKind {
    /// A graphics processor.
    Gpu,
    /// A host processor.
    Cpu,
    /// A dedicated accelerator.
    Accelerator,
    /// Anything else.
    Other,
}

/// Static facts about one OpenCL device.
#[derive(Clone, Debug, serde::Serialize)]
pub struct DeviceInfo {
    /// Position in [`Device::list`].
    pub index: usize,
    /// Device name.
    pub name: String,
    /// Device vendor.
    pub vendor: String,
    /// Name of the platform (driver) the device belongs to.
    pub platform: String,
    /// Driver version string.
    pub driver_version: String,
    /// OpenCL version string reported by the device.
    pub opencl_version: String,
    /// Device class.
    pub kind: DeviceKind,
    /// Number of compute units.
    pub compute_units: u32,
    /// Largest work-group size.
    pub max_work_group_size: usize,
    /// `__local` memory per work group, in bytes.
    pub local_mem_bytes: u64,
    /// Global memory, in bytes.
    pub global_mem_bytes: u64,
    /// Largest single allocation, in bytes.
    pub max_alloc_bytes: u64,
    /// Whether `double` is supported.
    pub fp64: bool,
}

/// An OpenCL device with its context, an in-order profiling command queue and
/// program/constant caches. Cheap to clone; clones share everything.
#[derive(Clone)]
pub struct Device {
    inner: Arc<Inner>,
}

struct Inner {
    context: core::Context,
    queue: core::CommandQueue,
    id: DeviceId,
    info: DeviceInfo,
    /// source -> options -> program.
    programs: Mutex<HashMap<String, HashMap<String, Program>>>,
    constants: Mutex<HashMap<Vec<u8>, ConstBuffer>>,
}

/// One discovered device.
struct Found {
    platform: PlatformId,
    id: DeviceId,
    info: DeviceInfo,
}

/// Process-wide device state.
///
/// PoCL fails when several threads enumerate platforms/devices or create
/// contexts at the same time (measured: parallel `cargo test` threads). So
/// discovery runs once per process, and each device gets at most one
/// context + queue per process; both happen under this one lock and every
/// later `Device` for the same index is a clone of the cached one.
struct Registry {
    found: Option<Arc<[Found]>>,
    open: BTreeMap<usize, Device>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    found: None,
    open: BTreeMap::new(),
});

/// Locks a mutex, ignoring poisoning (the protected caches stay consistent).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Registry {
    fn found(&mut self) -> Result<Arc<[Found]>> {
        if let Some(found) = &self.found {
            return Ok(found.clone());
        }
        let found: Arc<[Found]> = discover()?.into();
        self.found = Some(found.clone());
        Ok(found)
    }
}

fn discover() -> Result<Vec<Found>> {
    let platforms = core::get_platform_ids().map_err(|_| Error::NoPlatform)?;
    let mut found = Vec::new();
    for platform in platforms {
        // A platform without devices reports CL_DEVICE_NOT_FOUND: skip it.
        let Ok(ids) = core::get_device_ids(platform, Some(core::DeviceType::ALL), None) else {
            continue;
        };
        let platform_name = platform_string(platform)?;
        for id in ids {
            let info = query_info(found.len(), id, &platform_name)?;
            found.push(Found { platform, id, info });
        }
    }
    if found.is_empty() {
        return Err(Error::NoPlatform);
    }
    Ok(found)
}

fn platform_string(platform: PlatformId) -> Result<String> {
    match core::get_platform_info(platform, core::PlatformInfo::Name) {
        Ok(name) => Ok(name.to_string().trim().to_owned()),
        Err(e) => Err(cl("clGetPlatformInfo")(e)),
    }
}

fn raw_info(id: DeviceId, param: core::DeviceInfo) -> Result<Vec<u8>> {
    core::get_device_info_raw(id, param as u32).map_err(cl("clGetDeviceInfo"))
}

fn string_info(id: DeviceId, param: core::DeviceInfo) -> Result<String> {
    let bytes = raw_info(id, param)?;
    Ok(String::from_utf8_lossy(&bytes).trim_end_matches('\0').trim().to_owned())
}

/// Reads a `cl_uint`, `size_t`, `cl_ulong` or bitfield query as `u64`.
fn num_info(id: DeviceId, param: core::DeviceInfo) -> Result<u64> {
    let bytes = raw_info(id, param)?;
    match bytes.len() {
        4 => Ok(u32::from_ne_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]).into()),
        8 => Ok(u64::from_ne_bytes(std::array::from_fn(|i| bytes[i]))),
        n => Err(Error::Cl {
            op: "clGetDeviceInfo",
            message: format!("{param:?} returned {n} bytes, expected 4 or 8"),
        }),
    }
}

fn query_info(index: usize, id: DeviceId, platform: &str) -> Result<DeviceInfo> {
    use core::DeviceInfo as I;
    let ty = core::DeviceType::from_bits_truncate(num_info(id, I::Type)?);
    let kind = if ty.contains(core::DeviceType::GPU) {
        DeviceKind::Gpu
    } else if ty.contains(core::DeviceType::CPU) {
        DeviceKind::Cpu
    } else if ty.contains(core::DeviceType::ACCELERATOR) {
        DeviceKind::Accelerator
    } else {
        DeviceKind::Other
    };
    // Devices without doubles may reject the CL_DEVICE_DOUBLE_FP_CONFIG query.
    let fp64 = num_info(id, I::DoubleFpConfig).is_ok_and(|c| c != 0)
        || string_info(id, I::Extensions)?.contains("cl_khr_fp64");
    Ok(DeviceInfo {
        index,
        name: string_info(id, I::Name)?,
        vendor: string_info(id, I::Vendor)?,
        platform: platform.to_owned(),
        driver_version: string_info(id, I::DriverVersion)?,
        opencl_version: string_info(id, I::Version)?,
        kind,
        compute_units: u32::try_from(num_info(id, I::MaxComputeUnits)?).unwrap_or(u32::MAX),
        max_work_group_size: usize::try_from(num_info(id, I::MaxWorkGroupSize)?).unwrap_or(usize::MAX),
        local_mem_bytes: num_info(id, I::LocalMemSize)?,
        global_mem_bytes: num_info(id, I::GlobalMemSize)?,
        max_alloc_bytes: num_info(id, I::MaxMemAllocSize)?,
        fp64,
    })
}

/// Picks a device index from a selector; see [`Device::select`].
fn pick(found: &[Found], selector: &str) -> Result<usize> {
    let wanted = selector.trim().to_lowercase();
    let first_of = |kind: DeviceKind| {
        // Prefer a vendor driver over PoCL's own GPU backends.
        found
            .iter()
            .filter(|f| f.info.kind == kind)
            .min_by_key(|f| f.info.platform.contains("Portable Computing Language"))
    };
    let hit = match wanted.as_str() {
        "gpu" => first_of(DeviceKind::Gpu),
        "cpu" => first_of(DeviceKind::Cpu),
        _ => match wanted.parse::<usize>() {
            Ok(i) => found.get(i),
            Err(_) => found.iter().find(|f| {
                !wanted.is_empty()
                    && (f.info.name.to_lowercase().contains(&wanted)
                        || f.info.platform.to_lowercase().contains(&wanted))
            }),
        },
    };
    hit.map(|f| f.info.index).ok_or_else(|| Error::DeviceNotFound {
        wanted: selector.to_owned(),
        available: found
            .iter()
            .map(|f| {
                format!(
                    "{}: {} ({}, {:?})",
                    f.info.index, f.info.name, f.info.platform, f.info.kind
                )
            })
            .collect::<Vec<_>>()
            .join("; "),
    })
}

impl Device {
    /// The default device: the one named by `CLFORGE_DEVICE` if that is set
    /// (same syntax as [`Device::select`]), else the first GPU over all
    /// platforms, else the first CPU, else the first device.
    #[allow(clippy::should_implement_trait, reason = "fallible, so not `Default`")]
    pub fn default() -> Result<Device> {
        if let Some(sel) = std::env::var(DEVICE_ENV).ok().filter(|s| !s.trim().is_empty()) {
            return Device::select(&sel);
        }
        Self::open_with(|found| {
            pick(found, "gpu")
                .or_else(|_| pick(found, "cpu"))
                .or_else(|_| pick(found, "0"))
        })
    }

    /// Selects a device by `"gpu"`, `"cpu"`, a decimal index into
    /// [`Device::list`], or a case-insensitive substring of the device or
    /// platform name. Fails with [`Error::DeviceNotFound`] listing what exists.
    pub fn select(selector: &str) -> Result<Device> {
        Self::open_with(|found| pick(found, selector))
    }

    /// Describes every device of every platform.
    pub fn list() -> Result<Vec<DeviceInfo>> {
        let found = lock(&REGISTRY).found()?;
        Ok(found.iter().map(|f| f.info.clone()).collect())
    }

    /// Returns the cached device chosen by `choose`, creating its context and
    /// queue on first use.
    fn open_with(choose: impl FnOnce(&[Found]) -> Result<usize>) -> Result<Device> {
        let mut reg = lock(&REGISTRY);
        let found = reg.found()?;
        let index = choose(&found)?;
        if let Some(dev) = reg.open.get(&index) {
            return Ok(dev.clone());
        }
        let f = found
            .get(index)
            .ok_or_else(|| Error::InvalidConfig(format!("device index {index} out of range")))?;
        let props = core::ContextProperties::new().platform(f.platform);
        let context = core::create_context(Some(&props), &[f.id], None, None).map_err(cl("clCreateContext"))?;
        let queue = core::create_command_queue(&context, f.id, Some(core::CommandQueueProperties::PROFILING_ENABLE))
            .map_err(cl("clCreateCommandQueue"))?;
        let dev = Device {
            inner: Arc::new(Inner {
                context,
                queue,
                id: f.id,
                info: f.info.clone(),
                programs: Mutex::default(),
                constants: Mutex::default(),
            }),
        };
        reg.open.insert(index, dev.clone());
        Ok(dev)
    }

    /// Static facts about this device.
    pub fn info(&self) -> &DeviceInfo {
        &self.inner.info
    }

    /// Builds `source` with `options` for this device, or returns the program
    /// already built from the same source and options in this process.
    /// `-cl-std=CL1.2` is appended unless `options` already pick a standard.
    /// `name` only labels error messages. Builds hold the cache lock, so each
    /// program is compiled once even when requested from many threads.
    pub fn program(&self, name: &str, source: &str, options: &str) -> Result<Program> {
        let mut programs = lock(&self.inner.programs);
        if let Some(p) = programs.get(source).and_then(|m| m.get(options)) {
            return Ok(p.clone());
        }
        let program = Program::build(self, name, source, options)?;
        programs
            .entry(source.to_owned())
            .or_default()
            .insert(options.to_owned(), program.clone());
        Ok(program)
    }

    /// A read-only device buffer holding `bytes`, cached by content so that
    /// small parameter blocks are uploaded once and reused on every launch.
    pub fn constant_bytes(&self, bytes: &[u8]) -> Result<ConstBuffer> {
        let mut constants = lock(&self.inner.constants);
        if let Some(b) = constants.get(bytes) {
            return Ok(b.clone());
        }
        let buffer = ConstBuffer::new(self, bytes)?;
        if constants.len() >= CONSTANT_CACHE_LIMIT {
            constants.clear();
        }
        constants.insert(bytes.to_vec(), buffer.clone());
        Ok(buffer)
    }

    /// Blocks until every command queued on this device has finished.
    pub fn finish(&self) -> Result<()> {
        core::finish(&self.inner.queue).map_err(cl("clFinish"))
    }

    pub(crate) fn context(&self) -> &core::Context {
        &self.inner.context
    }

    pub(crate) fn queue(&self) -> &core::CommandQueue {
        &self.inner.queue
    }

    pub(crate) fn id(&self) -> DeviceId {
        self.inner.id
    }

    pub(crate) fn same_as(&self, other: &Device) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

impl fmt::Debug for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Device")
            .field("index", &self.inner.info.index)
            .field("name", &self.inner.info.name)
            .field("platform", &self.inner.info.platform)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_device_has_info() {
        let dev = Device::default().unwrap();
        let info = dev.info();
        assert!(!info.name.is_empty());
        assert!(!info.platform.is_empty());
        assert!(info.opencl_version.contains("OpenCL"), "{info:?}");
        assert!(info.compute_units > 0);
        assert!(info.max_work_group_size > 0);
        assert!(info.global_mem_bytes > 0 && info.max_alloc_bytes > 0);
        assert!(info.local_mem_bytes > 0);
        dev.finish().unwrap();
    }

    #[test]
    fn list_is_not_empty_and_indexed() {
        let list = Device::list().unwrap();
        assert!(!list.is_empty());
        for (i, info) in list.iter().enumerate() {
            assert_eq!(info.index, i);
        }
    }

    #[test]
    fn select_cpu_and_by_index_share_the_device() {
        let cpu = Device::select("cpu").unwrap();
        assert_eq!(cpu.info().kind, DeviceKind::Cpu);
        let by_index = Device::select(&cpu.info().index.to_string()).unwrap();
        assert!(cpu.same_as(&by_index));
        let by_name = Device::select(&cpu.info().name.to_uppercase()).unwrap();
        assert!(cpu.same_as(&by_name));
    }

    #[test]
    fn select_unknown_lists_devices() {
        match Device::select("no-such-device") {
            Err(Error::DeviceNotFound { wanted, available }) => {
                assert_eq!(wanted, "no-such-device");
                assert!(available.starts_with("0: "), "{available}");
            }
            other => panic!("expected DeviceNotFound, got {other:?}"),
        }
        assert!(matches!(Device::select("999999"), Err(Error::DeviceNotFound { .. })));
    }

    #[test]
    fn constant_bytes_caches_by_content() {
        let dev = Device::default().unwrap();
        let a = dev.constant_bytes(&[1, 2, 3, 4]).unwrap();
        let b = dev.constant_bytes(&[1, 2, 3, 4]).unwrap();
        let c = dev.constant_bytes(&[4, 3, 2, 1]).unwrap();
        assert!(a.same_as(&b));
        assert!(!a.same_as(&c));
        assert_eq!(a.len(), 4);
        assert!(matches!(dev.constant_bytes(&[]), Err(Error::InvalidConfig(_))));
    }
}
