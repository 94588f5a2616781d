//! The one binder: every generated kernel's launch arguments, in its parameter order, from the
//! parameter list the macro printed ([`Bind`]). No plan writes an argument order by hand.

use std::sync::Arc;

use clforge_abi::Bind;

use crate::buffer::ConstBuffer;
use crate::error::{Error, Result};
use crate::launch::arg::ArgKind;
use crate::launch::reduce::ReductionBuffers;
use crate::launch::KernelArg;
use crate::program::Arg;

/// What one launch binds from: the outputs and arguments the generated code passed, their
/// uploaded params blocks and reduction buffers, the extents and place of the launched grid,
/// and the values the kind's plan supplies by name.
#[derive(Default)]
pub(crate) struct Sources<'s, 'a> {
    /// The kernel's OpenCL name, for messages.
    pub(crate) kernel: &'s str,
    pub(crate) outs: &'s [KernelArg<'a>],
    pub(crate) args: &'s [KernelArg<'a>],
    /// One `(bytes, buffer)` per params argument, in argument order.
    pub(crate) params: &'s [(Vec<u8>, ConstBuffer)],
    /// One part per reduction output, in output order.
    pub(crate) folds: &'s [Arc<dyn ReductionBuffers>],
    pub(crate) extents: [i32; 3],
    /// Origin (0..3), then the whole grid's extents (3..6); `None`: the launched grid is whole.
    pub(crate) place: Option<[i32; 6]>,
    /// The reduction box's low (0..3) and high (3..6) corners.
    pub(crate) reduce_box: Option<[i32; 6]>,
    pub(crate) named: &'s [(&'static str, Arg<'s>)],
}

/// Binds `specs` into `slots` (as long as `specs`): each parameter from its source, or a
/// typed error naming the kernel and the parameter when the launch does not supply it.
pub(crate) fn bind<'s>(specs: &[Bind], s: &'s Sources<'s, '_>, slots: &mut [Arg<'s>]) -> Result<()> {
    check_counts(specs, s)?;
    if slots.len() != specs.len() {
        return Err(missing(
            s.kernel,
            &format!("{} parameters, {} slots", specs.len(), slots.len()),
        ));
    }
    for (slot, &b) in slots.iter_mut().zip(specs) {
        *slot = one(b, s)?;
    }
    Ok(())
}

/// [`bind`] into a new vector.
pub(crate) fn bind_vec<'s>(specs: &[Bind], s: &'s Sources<'s, '_>) -> Result<Vec<Arg<'s>>> {
    let mut v = vec![Arg::i32(0); specs.len()];
    bind(specs, s, &mut v)?;
    Ok(v)
}

/// Where `name` sits among `specs` (a value a plan changes between launches of one binding).
pub(crate) fn position(specs: &[Bind], name: &str) -> Option<usize> {
    specs.iter().position(|b| matches!(b, Bind::Named(n) if *n == name))
}

/// Arguments and outputs the launch lacks, or passes beyond the kernel's, are a count mismatch
/// (as a direct launch with too few arguments is), not a misbinding.
fn check_counts(specs: &[Bind], s: &Sources<'_, '_>) -> Result<()> {
    let (mut args, mut outs, mut supplied) = (0, 0, 0);
    for b in specs {
        match *b {
            Bind::Arg(i) => {
                args += 1;
                supplied += usize::from(i < s.args.len());
            }
            Bind::Out(i) => {
                outs += 1;
                supplied += usize::from(i < s.outs.len());
            }
            _ => supplied += 1,
        }
    }
    let extra = s.args.len().saturating_sub(args) + s.outs.len().saturating_sub(outs);
    if supplied == specs.len() && extra == 0 {
        return Ok(());
    }
    Err(Error::LengthMismatch {
        what: format!(
            "arguments of kernel `{}` ({} outputs and {} arguments passed; it takes {outs} and {args})",
            s.kernel,
            s.outs.len(),
            s.args.len()
        ),
        expected: specs.len(),
        found: supplied + extra,
    })
}

fn one<'s>(b: Bind, s: &'s Sources<'s, '_>) -> Result<Arg<'s>> {
    // Component `a` of the `n` components from `at` (origin and whole extents: three axes
    // each; the reduction box: six corner components).
    let axis = |a: usize, of: Option<[i32; 6]>, (at, n): (usize, usize), what: &str| {
        of.filter(|_| a < n)
            .and_then(|v| v.get(at + a).copied())
            .map(Arg::i32)
            .ok_or_else(|| missing(s.kernel, what))
    };
    match b {
        Bind::Arg(i) => {
            let a = s
                .args
                .get(i)
                .ok_or_else(|| missing(s.kernel, &format!("argument {i} (the launch passed {})", s.args.len())))?;
            from_kind(a, i, s.args, s)
        }
        Bind::Out(i) => {
            let a = s
                .outs
                .get(i)
                .ok_or_else(|| missing(s.kernel, &format!("output {i} (the launch passed {})", s.outs.len())))?;
            from_kind(a, i, s.outs, s)
        }
        Bind::Extent(a) => s
            .extents
            .get(a)
            .copied()
            .map(Arg::i32)
            .ok_or_else(|| missing(s.kernel, "an extent")),
        Bind::Origin(a) => axis(a, s.place, (0, 3), "the launched grid's origin"),
        Bind::Whole(a) => axis(a, s.place, (3, 3), "the whole grid's extents"),
        Bind::ReduceBox(i) => axis(i, s.reduce_box, (0, 6), "the reduction's box"),
        Bind::Named(n) => s
            .named
            .iter()
            .find(|(k, _)| *k == n)
            .map(|(_, a)| *a)
            .ok_or_else(|| missing(s.kernel, &format!("`{n}`"))),
    }
}

/// One argument as the kernel takes it: a grid's or scalar's own value, a params block's
/// buffer, a reduction's partials.
fn from_kind<'s>(a: &'s KernelArg<'_>, i: usize, list: &[KernelArg<'_>], s: &'s Sources<'s, '_>) -> Result<Arg<'s>> {
    let before = |f: fn(&ArgKind<'_>) -> bool| list[..i].iter().filter(|x| f(&x.0)).count();
    Ok(match &a.0 {
        ArgKind::Grid { arg, .. } | ArgKind::Scalar(arg) => *arg,
        ArgKind::Params(_) => {
            let k = before(|x| matches!(x, ArgKind::Params(_)));
            let p = s.params.get(k).ok_or_else(|| missing(s.kernel, "a params block"))?;
            Arg::constant(&p.1)
        }
        ArgKind::Reduction { .. } => {
            let k = before(|x| matches!(x, ArgKind::Reduction { .. }));
            s.folds
                .get(k)
                .ok_or_else(|| missing(s.kernel, "a reduction's buffers"))?
                .partials()
        }
    })
}

fn missing(kernel: &str, what: &str) -> Error {
    Error::InvalidConfig(format!(
        "kernel `{kernel}` takes {what}, which this launch does not supply: the generated code and the runtime \
         disagree (rebuild the crate that holds the kernel with this clforge)"
    ))
}
