//! Timing with OpenCL profiling events, summary statistics, and progress on stderr.

use std::io::IsTerminal;
use std::time::Duration;

use anyhow::Result;
use clforge::runtime::Event;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;

/// Median, minimum and maximum of device times, in microseconds.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Stats {
    /// Timed launches.
    pub n: usize,
    pub median_us: f64,
    pub min_us: f64,
    pub max_us: f64,
}

impl Stats {
    /// Statistics of `ns` (nanoseconds); `n = 0` gives zeros.
    pub fn from_ns(ns: &[u64]) -> Stats {
        let mut v = ns.to_vec();
        v.sort_unstable();
        let us = |x: u64| x as f64 / 1e3;
        let median = match v.len() {
            0 => 0.0,
            n if n % 2 == 1 => us(v[n / 2]),
            n => 0.5 * (us(v[n / 2 - 1]) + us(v[n / 2])),
        };
        Stats {
            n: v.len(),
            median_us: median,
            min_us: v.first().copied().map_or(0.0, us),
            max_us: v.last().copied().map_or(0.0, us),
        }
    }
}

/// How many launches to time and how many to run first.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Reps {
    pub warmup: usize,
    pub timed: usize,
}

/// Runs `launch` `reps.warmup` times (waiting for each), then `reps.timed` times back to
/// back, and summarises the timed launches' profiled device times.
pub fn time_launches(reps: Reps, mut launch: impl FnMut() -> Result<Event>) -> Result<Stats> {
    for _ in 0..reps.warmup {
        launch()?.wait()?;
    }
    let events = (0..reps.timed).map(|_| launch()).collect::<Result<Vec<Event>>>()?;
    let ns = events.iter().map(Event::duration_ns).collect::<Result<Vec<u64>, _>>()?;
    Ok(Stats::from_ns(&ns))
}

/// Sum of the events' profiled device times, in nanoseconds.
pub fn device_sum_ns(events: &[Event]) -> Result<u64> {
    let mut sum = 0;
    for e in events {
        sum += e.duration_ns()?;
    }
    Ok(sum)
}

/// A progress bar on a terminal; plain numbered lines on stderr otherwise (logs, CI, the
/// GPU machine), so that a long run shows where it is either way.
pub struct Progress {
    bar: Option<ProgressBar>,
    total: u64,
    done: u64,
}

impl Progress {
    pub fn new(total: u64) -> Progress {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
            let style = ProgressStyle::with_template("{elapsed:>4} [{bar:30}] {pos}/{len} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> ");
            bar.set_style(style);
            bar.enable_steady_tick(Duration::from_millis(200));
            bar
        });
        Progress { bar, total, done: 0 }
    }

    /// Announces the next step.
    pub fn step(&mut self, what: &str) {
        self.done += 1;
        match &self.bar {
            Some(bar) => {
                bar.set_position(self.done.saturating_sub(1));
                bar.set_message(what.to_owned());
            }
            None => eprintln!("[{}/{}] {what}", self.done, self.total.max(self.done)),
        }
    }

    /// A note that stays on screen.
    pub fn note(&self, text: &str) {
        match &self.bar {
            Some(bar) => bar.println(text),
            None => eprintln!("{text}"),
        }
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_of_odd_even_and_empty() {
        let s = Stats::from_ns(&[3000, 1000, 2000]);
        assert_eq!((s.n, s.median_us, s.min_us, s.max_us), (3, 2.0, 1.0, 3.0));
        assert_eq!(Stats::from_ns(&[4000, 1000, 2000, 3000]).median_us, 2.5);
        assert_eq!(Stats::from_ns(&[]).n, 0);
    }
}
