//! Reductions fused into a stencil launch: a stencil output of type [`Max`], [`Min`] or
//! [`Sum`] is not a grid but one value over every updated point. Each work-group folds its
//! points in a fixed tree order and writes one partial; a second kernel of the same program,
//! queued right behind, folds the partials in a fixed order into one value on the device; the
//! host reads that value ([`Reduction::value`]). The order is fixed for a given launch, so a
//! launch gives the same bits every time; where the operation is exact (`Max`, `Min`, integer
//! `Sum`) they are the host reference's bits too, and a float `Sum` differs from the host's
//! sequential sum by rounding only.
//!
//! `Max` and `Min` propagate NaN (a diverging run is noticed, unlike `f32::max`) and order
//! zeros (`Max(-0.0, 0.0)` is `0.0`), so that the result does not depend on the order.

use std::sync::{Arc, Mutex};

use crate::buffer::{Buffer, Scalar};
use crate::device::{lock, Device};
use crate::error::{Error, Result};
use crate::program::Arg;

/// How a reduction combines values: the operation, its identity and its OpenCL spelling.
pub trait Reduce: Copy + std::fmt::Debug + Send + Sync + 'static {
    /// The reduced element type.
    type Value: Scalar;
    /// The operation's name in messages and generated code (`max`, `min`, `sum`).
    const OP: &'static str;
    /// The identity: the value of a reduction over no points.
    fn identity() -> Self;
    /// Combines two partial results (order-independent where the operation is exact).
    fn combine(self, other: Self) -> Self;
    /// The value.
    fn get(self) -> Self::Value;
    /// Wraps a value.
    fn of(v: Self::Value) -> Self;
}

/// The largest value (NaN if any value is NaN; `0.0` over `-0.0`).
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd, Default)]
pub struct Max<T>(pub T);
/// The smallest value (NaN if any value is NaN; `-0.0` under `0.0`).
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd, Default)]
pub struct Min<T>(pub T);
/// The sum (in the element type; a float sum is folded in the launch's fixed tree order).
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd, Default)]
pub struct Sum<T>(pub T);

macro_rules! float_reductions {
    ($($t:ty, $bits:ty);*) => {$(
        impl Reduce for Max<$t> {
            type Value = $t;
            const OP: &'static str = "max";
            fn identity() -> Self { Max(<$t>::NEG_INFINITY) }
            fn combine(self, o: Self) -> Self {
                let (a, b) = (self.0, o.0);
                Max(if a.is_nan() || b.is_nan() {
                    a + b
                } else if a == b {
                    <$t>::from_bits(a.to_bits() & b.to_bits())
                } else if a > b {
                    a
                } else {
                    b
                })
            }
            fn get(self) -> $t { self.0 }
            fn of(v: $t) -> Self { Max(v) }
        }
        impl Reduce for Min<$t> {
            type Value = $t;
            const OP: &'static str = "min";
            fn identity() -> Self { Min(<$t>::INFINITY) }
            fn combine(self, o: Self) -> Self {
                let (a, b) = (self.0, o.0);
                Min(if a.is_nan() || b.is_nan() {
                    a + b
                } else if a == b {
                    <$t>::from_bits(a.to_bits() | b.to_bits())
                } else if a < b {
                    a
                } else {
                    b
                })
            }
            fn get(self) -> $t { self.0 }
            fn of(v: $t) -> Self { Min(v) }
        }
        impl Reduce for Sum<$t> {
            type Value = $t;
            const OP: &'static str = "sum";
            fn identity() -> Self { Sum(0.0) }
            fn combine(self, o: Self) -> Self { Sum(self.0 + o.0) }
            fn get(self) -> $t { self.0 }
            fn of(v: $t) -> Self { Sum(v) }
        }
    )*};
}
float_reductions!(f32, u32; f64, u64);

macro_rules! int_reductions {
    ($($t:ty);*) => {$(
        impl Reduce for Max<$t> {
            type Value = $t;
            const OP: &'static str = "max";
            fn identity() -> Self { Max(<$t>::MIN) }
            fn combine(self, o: Self) -> Self { Max(self.0.max(o.0)) }
            fn get(self) -> $t { self.0 }
            fn of(v: $t) -> Self { Max(v) }
        }
        impl Reduce for Min<$t> {
            type Value = $t;
            const OP: &'static str = "min";
            fn identity() -> Self { Min(<$t>::MAX) }
            fn combine(self, o: Self) -> Self { Min(self.0.min(o.0)) }
            fn get(self) -> $t { self.0 }
            fn of(v: $t) -> Self { Min(v) }
        }
        /// Wraps on overflow, as the device's integer arithmetic does.
        impl Reduce for Sum<$t> {
            type Value = $t;
            const OP: &'static str = "sum";
            fn identity() -> Self { Sum(0) }
            fn combine(self, o: Self) -> Self { Sum(self.0.wrapping_add(o.0)) }
            fn get(self) -> $t { self.0 }
            fn of(v: $t) -> Self { Sum(v) }
        }
    )*};
}
int_reductions!(i32; u32);

/// A reduction output of a stencil on the device: pass `&mut` it where the stencil's tuple
/// has its `Max<f32>` (or other) output, then read [`Reduction::value`]. One object serves any
/// number of launches (each overwrites the value) on one device, on [`Devices`](crate::Devices)
/// (one part per device, combined in device order) or across MPI ranks (combined by an
/// all-reduce, so every rank gets the value).
pub struct Reduction<R: Reduce> {
    parts: Mutex<Vec<Arc<Part<R::Value>>>>,
    /// Parts written by the last launch (a plan on fewer devices leaves the rest unused).
    used: Mutex<usize>,
    /// Combines the value across processes (MPI ranks) when set.
    across: Mutex<Option<Arc<dyn Collective>>>,
    _op: std::marker::PhantomData<R>,
}

impl<R: Reduce> std::fmt::Debug for Reduction<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reduction").field("op", &R::OP).finish_non_exhaustive()
    }
}

impl<R: Reduce> Default for Reduction<R> {
    fn default() -> Self {
        Self::new()
    }
}

/// One device's buffers: the work-groups' partials and the folded value.
pub(crate) struct Part<T: Scalar> {
    pub(crate) partials: Buffer<T>,
    /// The fold's first pass: one value per fold work-group.
    pub(crate) level2: Buffer<T>,
    pub(crate) result: Buffer<T>,
}

/// Most work-groups of the fold's first pass (the second folds their values in one group).
pub(crate) const FOLD_GROUPS: usize = 1024;

impl<R: Reduce> Reduction<R> {
    /// A reduction not yet written (its buffers are made on the first launch, on the plan's
    /// devices).
    pub fn new() -> Reduction<R> {
        Reduction {
            parts: Mutex::new(Vec::new()),
            used: Mutex::new(0),
            across: Mutex::new(None),
            _op: std::marker::PhantomData,
        }
    }

    /// The value the last launch computed (waits for it). An error before any launch.
    pub fn value(&self) -> Result<R::Value> {
        let parts: Vec<Arc<Part<R::Value>>> = {
            let used = *lock(&self.used);
            lock(&self.parts).iter().take(used).cloned().collect()
        };
        if parts.is_empty() {
            return Err(Error::InvalidConfig(format!(
                "the {} reduction has no value yet: launch the stencil with it first",
                R::OP
            )));
        }
        let mut acc = R::identity();
        for p in &parts {
            let mut v = [<R::Value as Default>::default()];
            p.result.read(&mut v)?;
            acc = acc.combine(R::of(v[0]));
        }
        if let Some(all) = lock(&self.across).clone() {
            // Every process's value, folded in process order: the same bits everywhere.
            let mine = [acc.get()];
            let mut every = vec![<R::Value as Default>::default(); all.size()];
            all.all_gather(
                crate::buffer::scalar_bytes(&mine),
                crate::buffer::scalar_bytes_mut(&mut every),
            )?;
            return Ok(every.into_iter().fold(R::identity(), |a, v| a.combine(R::of(v))).get());
        }
        Ok(acc.get())
    }

    /// Part `i`'s buffers on `device` with room for `groups` partials (made or remade as
    /// needed); marks `parts` parts as written by this launch.
    pub(crate) fn part(&self, i: usize, parts: usize, device: &Device, groups: usize) -> Result<Arc<Part<R::Value>>> {
        let mut list = lock(&self.parts);
        while list.len() <= i {
            list.push(Arc::new(Part {
                partials: Buffer::new(device, groups.max(1))?,
                level2: Buffer::new(device, FOLD_GROUPS)?,
                result: Buffer::new(device, 1)?,
            }));
        }
        let p = &list[i];
        if p.partials.len() < groups || !p.partials.device().same_as(device) {
            list[i] = Arc::new(Part {
                partials: Buffer::new(device, groups.max(1))?,
                level2: Buffer::new(device, FOLD_GROUPS)?,
                result: Buffer::new(device, 1)?,
            });
        }
        *lock(&self.used) = parts;
        Ok(list[i].clone())
    }

    // Only the ranks (the `mpi` feature) combine across processes.
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    pub(crate) fn across(&self, all: Option<Arc<dyn Collective>>) {
        *lock(&self.across) = all;
    }
}

/// Processes that combine a reduction's value: MPI ranks implement it (`dist::ranks`), so a
/// reduction reaches MPI without knowing it.
pub(crate) trait Collective: Send + Sync {
    /// How many processes take part.
    fn size(&self) -> usize;
    /// Every process's `mine` (equal lengths), concatenated in process order into `all`.
    fn all_gather(&self, mine: &[u8], all: &mut [u8]) -> Result<()>;
}

/// A reduction output as a launch sees it, whatever its operation and type.
pub(crate) trait Reducer: Send + Sync {
    /// Part `i` of `parts` on `device`, with room for `groups` partials.
    fn part(&self, i: usize, parts: usize, device: &Device, groups: usize) -> Result<Arc<dyn ReductionBuffers>>;
    /// Marks the reduction as combined across processes (or not).
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    fn across(&self, all: Option<Arc<dyn Collective>>);
}

/// One part's buffers as kernel arguments.
pub(crate) trait ReductionBuffers: Send + Sync {
    fn partials(&self) -> Arg<'_>;
    fn level2(&self) -> Arg<'_>;
    fn result(&self) -> Arg<'_>;
}

impl<T: Scalar> ReductionBuffers for Part<T> {
    fn partials(&self) -> Arg<'_> {
        Arg::buffer(&self.partials)
    }
    fn level2(&self) -> Arg<'_> {
        Arg::buffer(&self.level2)
    }
    fn result(&self) -> Arg<'_> {
        Arg::buffer(&self.result)
    }
}

impl<R: Reduce> Reducer for Reduction<R> {
    fn part(&self, i: usize, parts: usize, device: &Device, groups: usize) -> Result<Arc<dyn ReductionBuffers>> {
        Ok(Reduction::part(self, i, parts, device, groups)? as Arc<dyn ReductionBuffers>)
    }
    fn across(&self, all: Option<Arc<dyn Collective>>) {
        Reduction::across(self, all)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_and_min_propagate_nan_and_order_zeros() {
        let m = |a: f32, b: f32| Max(a).combine(Max(b)).0;
        assert!(m(f32::NAN, 1.0).is_nan() && m(1.0, f32::NAN).is_nan());
        assert_eq!(m(-0.0, 0.0).to_bits(), 0.0f32.to_bits());
        assert_eq!(m(0.0, -0.0).to_bits(), 0.0f32.to_bits());
        assert_eq!(m(-0.0, -0.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(m(2.0, 3.0), 3.0);
        let n = |a: f64, b: f64| Min(a).combine(Min(b)).0;
        assert_eq!(n(-0.0, 0.0).to_bits(), (-0.0f64).to_bits());
        assert_eq!(n(0.0, -0.0).to_bits(), (-0.0f64).to_bits());
        assert!(n(f64::NAN, 0.0).is_nan());
        assert_eq!(Max::<i32>::identity().combine(Max(-5)).0, -5);
        assert_eq!(Sum(u32::MAX).combine(Sum(2)).0, 1);
    }
}
