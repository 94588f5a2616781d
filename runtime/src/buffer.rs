//! Typed device buffers and cached read-only parameter buffers.

use std::fmt;
use std::marker::PhantomData;

use crate::cl::{self, Event, Sealed};
use crate::device::Device;
use crate::error::{Error, Result};

/// An element type that can live in a [`Buffer`]; `CL_NAME` is its OpenCL C name.
pub trait Scalar: Sealed + Copy + Default + Send + Sync + fmt::Debug + 'static {
    /// The OpenCL C spelling of this type.
    const CL_NAME: &'static str;
    /// The value as an OpenCL C literal that reads back bit for bit (`1.5f`, `3u`).
    fn cl_literal(&self) -> String;
    /// Appends the value's bytes in device order (little-endian on every OpenCL device we target).
    fn put_bytes(&self, out: &mut Vec<u8>);
}

macro_rules! scalars {
    ($($t:ty => $name:literal, $lit:expr);* $(;)?) => {$(
        impl Sealed for $t {}
        impl Scalar for $t {
            const CL_NAME: &'static str = $name;
            fn cl_literal(&self) -> String {
                let f: fn(&$t) -> String = $lit;
                f(self)
            }
            fn put_bytes(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
        }
    )*};
}

scalars!(
    f32 => "float", |v| float_literal(f64::from(*v), v.is_finite(), v.to_bits().into(), "f", "as_float", "u");
    f64 => "double", |v| float_literal(*v, v.is_finite(), v.to_bits(), "", "as_double", "ul");
    u8 => "uchar", |v| format!("((uchar){v})");
    i32 => "int", |v| if *v == i32::MIN { "(-2147483647 - 1)".to_string() } else { format!("({v})") };
    u32 => "uint", |v| format!("{v}u");
    u64 => "ulong", |v| format!("{v}ul");
);

/// Rust's shortest round-trip formatting, so the literal is the same bits; non-finite values by bit pattern.
fn float_literal(v: f64, finite: bool, bits: u64, suffix: &str, reinterpret: &str, int_suffix: &str) -> String {
    if !finite {
        return format!("{reinterpret}(0x{bits:x}{int_suffix})");
    }
    let text = if suffix == "f" {
        format!("{:?}", v as f32)
    } else {
        format!("{v:?}")
    };
    format!("({text}{suffix})")
}

/// Checks `len` elements of `T` against the device's limits and returns the byte size.
fn checked_bytes<T>(dev: &Device, len: usize, what: &str) -> Result<usize> {
    if len == 0 {
        return Err(Error::InvalidConfig(format!("{what} must not be empty")));
    }
    let bytes = len
        .checked_mul(size_of::<T>())
        .ok_or_else(|| Error::InvalidConfig(format!("{what} of {len} elements overflows usize")))?;
    if bytes as u64 > dev.info().max_alloc_bytes {
        return Err(Error::OutOfMemory {
            what: what.to_owned(),
            bytes,
        });
    }
    Ok(bytes)
}

/// A device array of `len` elements of `T`, owned by one [`Device`].
pub struct Buffer<T: Scalar> {
    mem: cl::Mem,
    len: usize,
    device: Device,
    _elem: PhantomData<T>,
}

impl<T: Scalar> Buffer<T> {
    fn what(len: usize) -> String {
        format!("buffer of {len} {}", T::CL_NAME)
    }

    fn create(dev: &Device, len: usize, data: Option<&[T]>) -> Result<Self> {
        checked_bytes::<T>(dev, len, &Self::what(len))?;
        let mem = cl::Mem::new(dev.queue(), len, data, || Self::what(len))?;
        Ok(Buffer {
            mem,
            len,
            device: dev.clone(),
            _elem: PhantomData,
        })
    }

    /// A zero-filled buffer of `len` elements. Waits for the fill, so that
    /// allocation failures surface here as [`Error::OutOfMemory`].
    pub fn new(dev: &Device, len: usize) -> Result<Self> {
        let buf = Self::create(dev, len, None)?;
        buf.mem
            .fill(dev.queue(), T::default(), len, || Self::what(len))?
            .wait()?;
        Ok(buf)
    }

    /// A buffer holding a copy of `data` (which must not be empty).
    pub fn from_slice(dev: &Device, data: &[T]) -> Result<Self> {
        Self::create(dev, data.len(), Some(data))
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer has no elements (never true: empty buffers are rejected).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn check_len(&self, found: usize, what: &str) -> Result<()> {
        if found == self.len {
            Ok(())
        } else {
            Err(Error::LengthMismatch {
                what: format!("{what} {}", Self::what(self.len)),
                expected: self.len,
                found,
            })
        }
    }

    /// Copies `data` into the buffer, blocking until done.
    pub fn write(&mut self, data: &[T]) -> Result<()> {
        self.check_len(data.len(), "write to")?;
        self.mem.write(self.device.queue(), data)
    }

    /// Copies the buffer into `out`, blocking until done (and so until every
    /// command queued before it has finished).
    pub fn read(&self, out: &mut [T]) -> Result<()> {
        self.check_len(out.len(), "read from")?;
        self.mem.read(self.device.queue(), out)
    }

    /// Copies `data` into elements `offset..offset + data.len()`, blocking until done.
    pub(crate) fn write_at(&self, offset: usize, data: &[T]) -> Result<()> {
        self.check_range(offset, data.len(), "write to")?;
        self.mem.write_at(self.device.queue(), offset, data)
    }

    /// Reads elements `offset..offset + out.len()` into `out`, blocking until done (and so
    /// until every command queued before it has finished).
    pub(crate) fn read_at(&self, offset: usize, out: &mut [T]) -> Result<()> {
        self.check_range(offset, out.len(), "read from")?;
        self.mem.read_at(self.device.queue(), offset, out)
    }

    /// Pinned host memory of `len` elements in this buffer's device context.
    pub(crate) fn pinned(&self, len: usize) -> Result<crate::cl::Pinned<T>> {
        crate::cl::Pinned::new(self.device.queue(), len)
    }

    /// Enqueues reading elements `offset..offset + out.len()` into `out` on the device's
    /// `lane`, after the events `after`; returns at once.
    ///
    /// # Safety
    /// `out` must stay valid and untouched until the event completes.
    pub(crate) unsafe fn read_at_async(
        &self,
        lane: cl::Lane,
        offset: usize,
        out: &mut [T],
        after: &[Event],
    ) -> Result<Event> {
        self.check_range(offset, out.len(), "read from")?;
        // SAFETY: forwarded to the caller.
        unsafe { self.mem.read_at_async((self.device.queue(), lane), offset, out, after) }
    }

    /// Enqueues writing `data` into elements `offset..offset + data.len()` on the device's
    /// `lane`, after the events `after`; returns at once.
    ///
    /// # Safety
    /// `data` must stay valid and unchanged until the event completes.
    pub(crate) unsafe fn write_at_async(
        &self,
        lane: cl::Lane,
        offset: usize,
        data: &[T],
        after: &[Event],
    ) -> Result<Event> {
        self.check_range(offset, data.len(), "write to")?;
        // SAFETY: forwarded to the caller.
        unsafe {
            self.mem
                .write_at_async((self.device.queue(), lane), offset, data, after)
        }
    }

    fn check_range(&self, offset: usize, len: usize, what: &str) -> Result<()> {
        match offset.checked_add(len) {
            Some(end) if end <= self.len => Ok(()),
            _ => Err(Error::InvalidConfig(format!(
                "{what} {}: elements {offset}..{offset}+{len} past its end",
                Self::what(self.len)
            ))),
        }
    }

    /// Reads the buffer into a new vector.
    pub fn to_vec(&self) -> Result<Vec<T>> {
        let mut out = vec![T::default(); self.len];
        self.read(&mut out)?;
        Ok(out)
    }

    /// Enqueues a device-side copy of `src` into this buffer; both must have the
    /// same length and device. Returns without waiting.
    pub fn copy_from(&mut self, src: &Buffer<T>) -> Result<Event> {
        self.check_len(src.len, "copy into")?;
        if !self.device.same_as(&src.device) {
            return Err(Error::InvalidConfig(
                "copy_from between buffers of different devices".into(),
            ));
        }
        self.mem.copy_from::<T>(self.device.queue(), &src.mem, self.len)
    }

    /// The device owning this buffer.
    pub fn device(&self) -> &Device {
        &self.device
    }

    pub(crate) fn mem(&self) -> &cl::Mem {
        &self.mem
    }
}

impl<T: Scalar> fmt::Debug for Buffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Buffer<{}>[{}] on {}", T::CL_NAME, self.len, self.device.info().name)
    }
}

/// A read-only device buffer of raw bytes (a kernel parameter block), made by
/// [`Device::constant_bytes`]. Cheap to clone; clones share the buffer.
#[derive(Clone)]
pub struct ConstBuffer {
    mem: cl::Mem,
    len: usize,
    device_index: usize,
}

impl ConstBuffer {
    pub(crate) fn new(dev: &Device, bytes: &[u8]) -> Result<Self> {
        let len = checked_bytes::<u8>(dev, bytes.len(), "constant buffer")?;
        let mem = cl::Mem::read_only(dev.queue(), bytes, || "constant buffer".into())?;
        Ok(ConstBuffer {
            mem,
            len,
            device_index: dev.info().index,
        })
    }

    /// Size in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer is empty (never true: empty buffers are rejected).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub(crate) fn mem(&self) -> &cl::Mem {
        &self.mem
    }

    pub(crate) fn device_index(&self) -> usize {
        self.device_index
    }

    #[cfg(test)]
    pub(crate) fn same_as(&self, other: &ConstBuffer) -> bool {
        self.mem.same_as(&other.mem)
    }
}

impl fmt::Debug for ConstBuffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ConstBuffer[{} bytes]", self.len)
    }
}

/// The bytes of a slice of plain scalars (MPI and checkpoints move them as bytes).
pub(crate) fn scalar_bytes<T: Scalar>(v: &[T]) -> &[u8] {
    // SAFETY: `Scalar` types are plain numbers without padding or invalid bit patterns.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), size_of_val(v)) }
}

/// [`scalar_bytes`], writable: every byte pattern is a valid `Scalar`.
pub(crate) fn scalar_bytes_mut<T: Scalar>(v: &mut [T]) -> &mut [u8] {
    // SAFETY: as `scalar_bytes`; every byte pattern is a valid `Scalar`.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<u8>(), size_of_val(v)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip<T: Scalar + PartialEq>(data: &[T]) {
        let dev = Device::default().unwrap();
        let mut buf = Buffer::from_slice(&dev, data).unwrap();
        assert_eq!(buf.len(), data.len());
        assert!(!buf.is_empty());
        assert_eq!(buf.to_vec().unwrap(), data);

        let zeros = Buffer::<T>::new(&dev, data.len()).unwrap();
        assert!(zeros.to_vec().unwrap().iter().all(|x| *x == T::default()));

        let reversed: Vec<T> = data.iter().rev().copied().collect();
        buf.write(&reversed).unwrap();
        let mut out = vec![T::default(); data.len()];
        buf.read(&mut out).unwrap();
        assert_eq!(out, reversed);

        let mut copy = Buffer::<T>::new(&dev, data.len()).unwrap();
        copy.copy_from(&buf).unwrap().wait().unwrap();
        assert_eq!(copy.to_vec().unwrap(), reversed);
    }

    #[test]
    fn roundtrip_f32() {
        roundtrip(&[1.5f32, -2.0, 3.25, f32::MAX, 0.1]);
    }

    #[test]
    fn roundtrip_f64() {
        roundtrip(&[1.5f64, -2.0, std::f64::consts::PI, f64::MIN_POSITIVE]);
    }

    #[test]
    fn roundtrip_u8() {
        roundtrip(&(0..=255u8).collect::<Vec<_>>());
    }

    #[test]
    fn roundtrip_i32_u32() {
        roundtrip(&[i32::MIN, -1, 0, 7, i32::MAX]);
        roundtrip(&[0u32, 1, u32::MAX]);
    }

    #[test]
    fn length_mismatch() {
        let dev = Device::default().unwrap();
        let mut buf = Buffer::<f32>::new(&dev, 4).unwrap();
        let e = buf.write(&[1.0; 3]).unwrap_err();
        assert!(
            matches!(
                e,
                Error::LengthMismatch {
                    expected: 4,
                    found: 3,
                    ..
                }
            ),
            "{e}"
        );
        let e = buf.read(&mut [0.0; 5]).unwrap_err();
        assert!(
            matches!(
                e,
                Error::LengthMismatch {
                    expected: 4,
                    found: 5,
                    ..
                }
            ),
            "{e}"
        );
        let other = Buffer::<f32>::new(&dev, 2).unwrap();
        assert!(matches!(buf.copy_from(&other), Err(Error::LengthMismatch { .. })));
    }

    #[test]
    fn empty_and_huge_are_rejected() {
        let dev = Device::default().unwrap();
        assert!(matches!(Buffer::<f32>::new(&dev, 0), Err(Error::InvalidConfig(_))));
        assert!(matches!(
            Buffer::<u8>::from_slice(&dev, &[]),
            Err(Error::InvalidConfig(_))
        ));
        let too_big = usize::try_from(dev.info().max_alloc_bytes / 8 + 1).unwrap();
        assert!(matches!(
            Buffer::<f64>::new(&dev, too_big),
            Err(Error::OutOfMemory { .. })
        ));
        assert!(matches!(
            Buffer::<f64>::new(&dev, usize::MAX),
            Err(Error::InvalidConfig(_))
        ));
    }
}
