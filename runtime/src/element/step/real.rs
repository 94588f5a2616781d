//! [`Real`]: the floating-point type an explicit step computes in, `f32` or `f64`. The element
//! kernels are written once in `real`; the runtime builds them with `-D CLFORGE_REAL_DOUBLE` for
//! `f64`, and the host reference ([`HostStepper`](crate::element::reference::HostStepper)) does the
//! same arithmetic in the same type, so device and host agree per step in either precision.

use std::ops::{Add, AddAssign, Div, Mul, Neg, Sub, SubAssign};

use crate::buffer::Scalar;
use crate::element::io::Values;
use crate::element::kernels::{DeviceKernels, ElementKernels};
use crate::program::Arg;

/// `f32` or `f64`: the precision of a [`Stepper`](crate::element::plan::Stepper) and a
/// [`HostStepper`](crate::element::reference::HostStepper), and of a VTK field
/// ([`Field`](crate::element::io::Field)). Sealed.
pub trait Real:
    Scalar
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + AddAssign
    + SubAssign
    + Into<f64>
{
    /// `"f32"` or `"f64"`, for messages.
    const NAME: &'static str;
    /// The OpenCL build option that makes the element kernels' `real` this type.
    const BUILD_OPTION: &'static str;
    /// The largest finite value of the type, widened.
    const MAX: f64;
    /// `v` rounded to this type.
    fn of(v: f64) -> Self;
    /// The value in `f64` (exact).
    fn widen(self) -> f64;
    /// The kernel argument of a `real` value.
    fn arg<'a>(self) -> Arg<'a>;
    /// The launch functions of an element's kernels in this precision.
    #[doc(hidden)]
    fn kernels(k: &'static dyn DeviceKernels) -> &'static dyn ElementKernels<Self>;
    /// The numbers of a VTK field in this precision (`fem::io::Field` writes either).
    #[doc(hidden)]
    fn vtk_values(v: Vec<Self>) -> Values;
}

impl Real for f32 {
    const NAME: &'static str = "f32";
    const BUILD_OPTION: &'static str = "";
    const MAX: f64 = f32::MAX as f64;
    fn of(v: f64) -> f32 {
        v as f32
    }
    fn widen(self) -> f64 {
        f64::from(self)
    }
    fn arg<'a>(self) -> Arg<'a> {
        Arg::f32(self)
    }
    fn kernels(k: &'static dyn DeviceKernels) -> &'static dyn ElementKernels<f32> {
        k
    }
    fn vtk_values(v: Vec<f32>) -> Values {
        Values::F32(v)
    }
}

impl Real for f64 {
    const NAME: &'static str = "f64";
    const BUILD_OPTION: &'static str = "-D CLFORGE_REAL_DOUBLE";
    const MAX: f64 = f64::MAX;
    fn of(v: f64) -> f64 {
        v
    }
    fn widen(self) -> f64 {
        self
    }
    fn arg<'a>(self) -> Arg<'a> {
        Arg::f64(self)
    }
    fn kernels(k: &'static dyn DeviceKernels) -> &'static dyn ElementKernels<f64> {
        k
    }
    fn vtk_values(v: Vec<f64>) -> Values {
        Values::F64(v)
    }
}
