//! Events of queued commands: waiting for them and their profiling times.

use ocl::core;

use super::failed;
use crate::error::Result;

/// A queued command (kernel launch or copy); wait for it or read its timing.
#[derive(Clone, Debug)]
pub struct Event {
    pub(super) inner: core::Event,
    /// The first command of a run this event ends (several launches timed as one).
    first: Option<core::Event>,
}

impl Event {
    /// An empty event for an enqueue call to fill in.
    pub(crate) fn null() -> Self {
        Event {
            inner: core::Event::null(),
            first: None,
        }
    }

    /// One event for a run of commands on one in-order queue, from the start of `first` to
    /// the end of `last`: [`Event::duration_ns`] then times the whole run, gaps included.
    pub fn spanning(first: &Event, last: Event) -> Event {
        Event {
            first: Some(first.first.clone().unwrap_or_else(|| first.inner.clone())),
            ..last
        }
    }

    /// The OpenCL events of `events`, as a wait list.
    pub(crate) fn wait_list(events: &[Event]) -> Vec<core::Event> {
        events.iter().map(|e| e.inner.clone()).collect()
    }

    /// Blocks until the command has finished.
    pub fn wait(&self) -> Result<()> {
        core::wait_for_event(&self.inner).map_err(failed("clWaitForEvents"))
    }

    /// Device execution time of the command in nanoseconds (profiling
    /// `END - START`; for a [`Event::spanning`] run, the first command's `START`); waits for
    /// the command first.
    pub fn duration_ns(&self) -> Result<u64> {
        use core::{ProfilingInfo as P, ProfilingInfoResult as R};
        self.wait()?;
        let time = |e: &core::Event, what: P| match core::get_event_profiling_info(e, what) {
            Ok(R::Queued(t) | R::Submit(t) | R::Start(t) | R::End(t)) => Ok(t),
            Err(e) => Err(failed("clGetEventProfilingInfo")(e)),
        };
        let first = self.first.as_ref().unwrap_or(&self.inner);
        Ok(time(&self.inner, P::End)?.saturating_sub(time(first, P::Start)?))
    }

    /// The median device time of `reps` launches by `launch` after one untimed launch (the
    /// tuners' measure), in nanoseconds; `reps` 0 times the warm-up launch alone.
    pub fn median_ns(reps: usize, mut launch: impl FnMut() -> Result<Event>) -> Result<u64> {
        let warm = launch()?;
        if reps == 0 {
            return warm.duration_ns();
        }
        warm.wait()?;
        let events = (0..reps).map(|_| launch()).collect::<Result<Vec<Event>>>()?;
        let mut ns = events.iter().map(Event::duration_ns).collect::<Result<Vec<u64>>>()?;
        ns.sort_unstable();
        Ok(ns[(ns.len() - 1) / 2])
    }

    /// Device time from the start of `first` to the end of this command, in nanoseconds
    /// (profiling `END` of `self` − `START` of `first`): the span of a run of launches.
    pub fn since_start_of(&self, first: &Event) -> Result<u64> {
        use core::{ProfilingInfo as P, ProfilingInfoResult as R};
        self.wait()?;
        first.wait()?;
        let time = |e: &Event, what: P| match core::get_event_profiling_info(&e.inner, what) {
            Ok(R::Queued(t) | R::Submit(t) | R::Start(t) | R::End(t)) => Ok(t),
            Err(e) => Err(failed("clGetEventProfilingInfo")(e)),
        };
        Ok(time(self, P::End)?.saturating_sub(time(first, P::Start)?))
    }
}
