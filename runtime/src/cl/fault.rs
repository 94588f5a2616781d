//! Faults injected into the OpenCL layer, for tests of what a failure leaves behind: the `n`-th
//! program build, kernel enqueue or buffer read-back on the calling thread fails as the driver's
//! would (`Error::Cl` naming the call), once. Nothing is armed unless a test arms it; a disarmed
//! check is one thread-local read.
//!
//! ```
//! use clforge_runtime::fault::{self, Site};
//! use clforge_runtime::{Buffer, Device, Error};
//! let dev = Device::default().unwrap();
//! let b = Buffer::from_slice(&dev, &[1.0f32, 2.0]).unwrap();
//! let armed = fault::fail_nth(Site::Read, 0);
//! assert!(matches!(b.to_vec(), Err(Error::Cl { op: "clEnqueueReadBuffer", .. })));
//! assert!(armed.fired());
//! assert_eq!(b.to_vec().unwrap(), [1.0, 2.0]); // once
//! ```

use std::cell::Cell;

use crate::error::{Error, Result};

/// Where a fault is injected.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Site {
    /// `clBuildProgram`: building a program from source.
    Build,
    /// `clEnqueueNDRangeKernel`: launching a kernel.
    Enqueue,
    /// `clEnqueueReadBuffer`: reading a buffer back to the host.
    Read,
}

impl Site {
    fn op(self) -> &'static str {
        match self {
            Site::Build => "clBuildProgram",
            Site::Enqueue => "clEnqueueNDRangeKernel",
            Site::Read => "clEnqueueReadBuffer",
        }
    }
}

#[derive(Clone, Copy)]
struct Plan {
    site: Site,
    /// Calls at `site` still to pass before the one that fails.
    pass: usize,
    fired: bool,
}

thread_local! {
    static PLAN: Cell<Option<Plan>> = const { Cell::new(None) };
}

/// Arms a fault: the `n`-th call (0 for the next) at `site` on this thread fails, once. The
/// fault is disarmed when the returned guard is dropped; arming another replaces it.
#[must_use = "the fault is disarmed when the guard is dropped"]
pub fn fail_nth(site: Site, n: usize) -> Armed {
    PLAN.with(|p| {
        p.set(Some(Plan {
            site,
            pass: n,
            fired: false,
        }))
    });
    Armed {
        _not_send: std::marker::PhantomData,
    }
}

/// An armed fault (see [`fail_nth`]).
#[derive(Debug)]
pub struct Armed {
    // Thread-local: the guard belongs to the thread it armed.
    _not_send: std::marker::PhantomData<*const ()>,
}

impl Armed {
    /// Whether the fault has fired.
    pub fn fired(&self) -> bool {
        PLAN.with(|p| p.get().is_some_and(|plan| plan.fired))
    }
}

impl Drop for Armed {
    fn drop(&mut self) {
        PLAN.with(|p| p.set(None));
    }
}

/// The injected failure at `site`, if this call is the armed one.
pub(crate) fn check(site: Site) -> Result<()> {
    PLAN.with(|p| {
        let Some(mut plan) = p.get() else { return Ok(()) };
        if plan.site != site || plan.fired {
            return Ok(());
        }
        if plan.pass > 0 {
            plan.pass -= 1;
            p.set(Some(plan));
            return Ok(());
        }
        plan.fired = true;
        p.set(Some(plan));
        Err(Error::Cl {
            op: site.op(),
            message: "CL_OUT_OF_RESOURCES (-5) [injected by clforge_runtime::fault]".into(),
        })
    })
}
