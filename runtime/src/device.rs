//! Device selection and the per-device context and queue.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use crate::cl::{self, Found};
use crate::error::{Error, Result};
// Also the path `stencil.rs` imports `lock` by.
pub(crate) use crate::sync::lock;

pub use crate::cl::{DeviceInfo, DeviceKind};

/// Environment variable that overrides [`Device::default`]; it takes the same
/// syntax as [`Device::select`].
pub const DEVICE_ENV: &str = "CLFORGE_DEVICE";

/// An OpenCL device with its context, an in-order profiling command queue and
/// program/constant caches. Cheap to clone; clones share everything.
#[derive(Clone)]
pub struct Device {
    inner: Arc<Inner>,
}

struct Inner {
    queue: cl::Queue,
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

impl Registry {
    fn found(&mut self) -> Result<Arc<[Found]>> {
        if let Some(found) = &self.found {
            return Ok(found.clone());
        }
        let found: Arc<[Found]> = cl::discover()?.into();
        self.found = Some(found.clone());
        Ok(found)
    }
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
        let dev = Device {
            inner: Arc::new(Inner {
                queue: f.open()?,
                info: f.info.clone(),
            }),
        };
        reg.open.insert(index, dev.clone());
        Ok(dev)
    }

    /// Static facts about this device.
    pub fn info(&self) -> &DeviceInfo {
        &self.inner.info
    }

    /// Blocks until every command queued on this device has finished.
    pub fn finish(&self) -> Result<()> {
        self.inner.queue.finish()
    }

    pub(crate) fn queue(&self) -> &cl::Queue {
        &self.inner.queue
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
}
