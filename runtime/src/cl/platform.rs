//! Device discovery: every device of every platform and the static facts about it.

use ocl::core::{self, DeviceId, PlatformId};

use super::{failed, Queue};
use crate::error::{Error, Result};

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
    /// Position in [`Device::list`](crate::Device::list).
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
    /// Largest work-group size (items in all dimensions together).
    pub max_work_group_size: usize,
    /// Largest work-group extent along each dimension (`CL_DEVICE_MAX_WORK_ITEM_SIZES`).
    pub max_work_item_sizes: [usize; 3],
    /// `__local` memory per work group, in bytes.
    pub local_mem_bytes: u64,
    /// Global memory, in bytes.
    pub global_mem_bytes: u64,
    /// Largest single allocation, in bytes.
    pub max_alloc_bytes: u64,
    /// Whether `double` is supported.
    pub fp64: bool,
    /// `CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT` in `CL_DEVICE_SINGLE_FP_CONFIG`: `float` division and
    /// `sqrt` can be built correctly rounded (as Rust computes them); programs then are.
    pub fp32_correctly_rounded_divide_sqrt: bool,
}

/// A made-up device's facts, for unit tests of choices made from them.
#[cfg(test)]
pub(crate) fn test_info(
    kind: DeviceKind,
    platform: &str,
    max_work_group_size: usize,
    local_mem_bytes: u64,
) -> DeviceInfo {
    DeviceInfo {
        index: 0,
        name: "test device".into(),
        vendor: "test".into(),
        platform: platform.into(),
        driver_version: "1.0".into(),
        opencl_version: "OpenCL 1.2".into(),
        kind,
        compute_units: 1,
        max_work_group_size,
        max_work_item_sizes: [max_work_group_size; 3],
        local_mem_bytes,
        global_mem_bytes: 1 << 30,
        max_alloc_bytes: 1 << 28,
        fp64: true,
        fp32_correctly_rounded_divide_sqrt: true,
    }
}

/// One discovered device.
pub(crate) struct Found {
    platform: PlatformId,
    id: DeviceId,
    pub(crate) info: DeviceInfo,
}

impl Found {
    /// Creates a context and a queue on this device.
    pub(crate) fn open(&self) -> Result<Queue> {
        Queue::open(self.platform, self.id)
    }
}

/// Every device of every platform, indexed in discovery order.
pub(crate) fn discover() -> Result<Vec<Found>> {
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
        Err(e) => Err(failed("clGetPlatformInfo")(e)),
    }
}

fn raw_info(id: DeviceId, param: core::DeviceInfo) -> Result<Vec<u8>> {
    core::get_device_info_raw(id, param as u32).map_err(failed("clGetDeviceInfo"))
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

/// `CL_DEVICE_MAX_WORK_ITEM_SIZES`: one `size_t` per dimension (at least three); dimensions a
/// driver leaves out allow only 1.
fn work_item_sizes(id: DeviceId) -> Result<[usize; 3]> {
    let bytes = raw_info(id, core::DeviceInfo::MaxWorkItemSizes)?;
    let word = size_of::<usize>();
    Ok(std::array::from_fn(|d| {
        bytes
            .get(d * word..(d + 1) * word)
            .and_then(|b| b.try_into().ok())
            .map_or(1, usize::from_ne_bytes)
    }))
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
        max_work_item_sizes: work_item_sizes(id)?,
        local_mem_bytes: num_info(id, I::LocalMemSize)?,
        global_mem_bytes: num_info(id, I::GlobalMemSize)?,
        max_alloc_bytes: num_info(id, I::MaxMemAllocSize)?,
        fp64,
        // CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT is bit 7 of the single-precision config.
        fp32_correctly_rounded_divide_sqrt: num_info(id, I::SingleFpConfig).is_ok_and(|c| c & (1 << 7) != 0),
    })
}
