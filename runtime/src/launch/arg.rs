//! Arguments of a kernel launch on one device, whatever the kind: grids, packed grids and
//! bit-packed lattices, params structs, scalars and reduction outputs, and the checks a
//! launch makes of them.

use std::sync::Mutex;

use crate::buffer::{ConstBuffer, Scalar};
use crate::device::{lock, Device};
use crate::error::{Error, Result};
use crate::grid::{check_shape, DeviceGrid, Packable, PackedGrid, Shape};
use crate::params::Params;
use crate::program::Arg;

/// A grid argument a kernel reads packed (`packed(name = bits)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PackedArg {
    /// Its position among the launch's arguments (the function's arguments less `at: Point`).
    pub arg: usize,
    /// Its name in the stencil function.
    pub name: &'static str,
    /// Bits per point: 1, 2 or 4.
    pub bits: u32,
}

/// One `(bytes, buffer)` per params argument, in argument order.
#[derive(Debug, Default)]
pub(crate) struct ParamsCache(Mutex<Vec<(Vec<u8>, ConstBuffer)>>);

type ParamsBlocks = Vec<(Vec<u8>, ConstBuffer)>;

impl ParamsCache {
    /// Uploads a params block only when it differs from this plan's last one; the guard
    /// holds the device buffers, in the order of the params arguments.
    pub(crate) fn refresh(
        &self,
        device: &Device,
        args: &[KernelArg<'_>],
    ) -> Result<std::sync::MutexGuard<'_, ParamsBlocks>> {
        let mut params = lock(&self.0);
        let mut slot = 0;
        for a in args {
            if let ArgKind::Params(bytes) = &a.0 {
                let same = params
                    .get(slot)
                    .is_some_and(|(b, c)| b == bytes && c.device_index() == device.info().index);
                if !same {
                    let entry = (bytes.clone(), device.constant_bytes(bytes)?);
                    match params.get_mut(slot) {
                        Some(old) => *old = entry,
                        None => params.push(entry),
                    }
                }
                slot += 1;
            }
        }
        Ok(params)
    }
}

/// Every argument is packed where the stencil declares it (in its bits) and nowhere else:
/// the kernel reads words of packed points where it declares them, bytes or words of one
/// point elsewhere, so any other binding would compute from the wrong values.
pub(crate) fn check_packing(
    stencil: &str,
    declared: &[PackedArg],
    outs: &[KernelArg<'_>],
    args: &[KernelArg<'_>],
) -> Result<()> {
    let bound = |a: &KernelArg<'_>| match a.0 {
        ArgKind::Grid { packed, .. } => packed,
        _ => None,
    };
    if let Some((name, bits)) = outs.iter().find_map(|o| match o.0 {
        ArgKind::Grid {
            name, packed: Some(b), ..
        } => Some((name, b)),
        _ => None,
    }) {
        return Err(Error::PackedBinding {
            stencil: stencil.into(),
            grid: name.into(),
            declared: None,
            bound: Some(bits),
        });
    }
    for (i, a) in args.iter().enumerate() {
        let d = declared.iter().find(|p| p.arg == i);
        let b = bound(a);
        if d.map(|p| p.bits) != b {
            let grid = match (d, &a.0) {
                (Some(p), _) => p.name,
                (None, ArgKind::Grid { name, .. }) => name,
                (None, _) => "?",
            };
            return Err(Error::PackedBinding {
                stencil: stencil.into(),
                grid: grid.into(),
                declared: d.map(|p| p.bits),
                bound: b,
            });
        }
    }
    Ok(())
}

/// Every grid argument has the plan's shape.
pub(crate) fn check_arg_shapes(shape: Shape, args: &[KernelArg<'_>]) -> Result<()> {
    for a in args {
        if let ArgKind::Grid { name, shape: s, .. } = &a.0 {
            check_shape(name, shape, *s)?;
        }
    }
    Ok(())
}

impl Clone for ParamsCache {
    fn clone(&self) -> Self {
        ParamsCache(Mutex::new(lock(&self.0).clone()))
    }
}

/// One argument of a generated kernel launch on one device (built by the generated code).
#[derive(Clone, Debug)]
pub struct KernelArg<'a>(pub(crate) ArgKind<'a>);

#[derive(Clone)]
pub(crate) enum ArgKind<'a> {
    Grid {
        name: &'a str,
        shape: Shape,
        arg: Arg<'a>,
        /// A [`PackedGrid`]: its bits per point.
        packed: Option<u32>,
    },
    Params(Vec<u8>),
    Scalar(Arg<'a>),
    /// A reduction output: part `part` of `parts` (one per device of a split launch).
    Reduction {
        name: &'a str,
        red: &'a dyn crate::launch::Reducer,
        part: usize,
        parts: usize,
    },
}

impl std::fmt::Debug for ArgKind<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ArgKind::Grid {
                name,
                shape,
                packed: None,
                ..
            } => write!(f, "grid `{name}` of shape {shape}"),
            ArgKind::Grid {
                name,
                shape,
                packed: Some(b),
                ..
            } => write!(f, "grid `{name}` of shape {shape}, packed in {b} bits per point"),
            ArgKind::Params(b) => write!(f, "params ({} bytes)", b.len()),
            ArgKind::Scalar(a) => write!(f, "scalar {a:?}"),
            ArgKind::Reduction { name, part, parts, .. } => write!(f, "reduction `{name}` (part {part} of {parts})"),
        }
    }
}

/// Scalars a stencil may take by value.
pub trait KernelScalar: Copy {
    /// As a kernel argument.
    fn kernel_arg(self) -> Arg<'static>;
}

macro_rules! kernel_scalars {
    ($($t:ty => $f:ident),*) => {$(
        impl KernelScalar for $t {
            fn kernel_arg(self) -> Arg<'static> {
                Arg::$f(self)
            }
        }
    )*};
}
kernel_scalars!(f32 => f32, f64 => f64, i32 => i32, u32 => u32);

impl<'a> KernelArg<'a> {
    /// A grid argument named as in the stencil function.
    pub fn grid<T: Scalar>(name: &'a str, grid: &'a DeviceGrid<T>) -> KernelArg<'a> {
        KernelArg(ArgKind::Grid {
            name,
            shape: grid.shape(),
            arg: Arg::buffer(grid.buffer()),
            packed: None,
        })
    }
    /// A grid the stencil reads packed (`#[stencil(packed(name = BITS))]`), named as in the
    /// stencil function. A launch refuses it where the stencil reads the grid unpacked or in
    /// other bits, and refuses a [`KernelArg::grid`] where it reads it packed
    /// ([`Error::PackedBinding`]).
    pub fn packed<T: Packable, const BITS: u32>(name: &'a str, grid: &'a PackedGrid<T, BITS>) -> KernelArg<'a> {
        KernelArg(ArgKind::Grid {
            name,
            shape: grid.shape(),
            arg: Arg::buffer(grid.words()),
            packed: Some(BITS),
        })
    }
    /// Whether this is a grid (or bit-packed lattice) argument.
    pub(crate) fn is_grid(&self) -> bool {
        matches!(self.0, ArgKind::Grid { .. })
    }
    /// A reduction output named as in the stencil's outputs (on one device).
    pub fn reduction<R: crate::launch::Reduce>(name: &'a str, r: &'a crate::launch::Reduction<R>) -> KernelArg<'a> {
        Self::reduction_part(name, r, 0, 1)
    }
    /// Part `part` of `parts` of a reduction output (one device of a split launch).
    pub(crate) fn reduction_part(
        name: &'a str,
        r: &'a dyn crate::launch::Reducer,
        part: usize,
        parts: usize,
    ) -> KernelArg<'a> {
        KernelArg(ArgKind::Reduction {
            name,
            red: r,
            part,
            parts,
        })
    }
    /// The reduction behind a reduction output.
    pub(crate) fn reducer(&self) -> Option<&'a dyn crate::launch::Reducer> {
        match self.0 {
            ArgKind::Reduction { red, .. } => Some(red),
            _ => None,
        }
    }
    /// A bit-packed lattice state (`Lattice<bool>`) named as in the rule.
    pub fn bits(name: &'a str, bits: &'a crate::grid::DeviceBits) -> KernelArg<'a> {
        KernelArg(ArgKind::Grid {
            name,
            shape: bits.shape(),
            arg: Arg::buffer(bits.words()),
            packed: None,
        })
    }
    /// A params struct, passed in constant memory.
    pub fn params<P: Params>(p: &P) -> KernelArg<'a> {
        KernelArg(ArgKind::Params(p.to_bytes()))
    }
    /// A scalar passed by value.
    pub fn scalar<T: KernelScalar>(v: T) -> KernelArg<'a> {
        KernelArg(ArgKind::Scalar(v.kernel_arg()))
    }
}
