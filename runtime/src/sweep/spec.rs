//! What the runtime knows of a generated sweep, and how to launch it.

use crate::grid::Boundary;

/// How the points of a sweep are ordered on the device.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Schedule {
    /// One work-item walks the whole region in order.
    Serial,
    /// Blocks on anti-diagonals, one launch per block diagonal, global memory.
    #[default]
    Wave,
    /// [`Schedule::Wave`] with the block and its halo in local memory (2-D, fixed boundary).
    WaveLocal,
    /// L×L×L blocks on block planes, L² work-items per block (3-D).
    Blocks,
    /// One launch: blocks wait on their upstream neighbours' flags.
    Persistent,
    /// [`Schedule::Persistent`] with the block and every field it reads in local memory (2-D,
    /// fixed boundary).
    PersistentLocal,
    /// [`Schedule::Blocks`] in one launch: cubes taken in plane order, each waiting on the three
    /// cubes behind it (3-D).
    PersistentBlocks,
    /// [`Schedule::Blocks`] with the cube, its halo and every field it reads in local memory
    /// (3-D, fixed boundary).
    BlocksLocal,
    /// One launch: strips of L rows walk the whole x extent, each waiting on the progress of
    /// the strip above (2-D, any boundary).
    Strip,
}

impl Schedule {
    /// Every schedule, in the spec's order.
    pub const ALL: [Schedule; 9] = [
        Schedule::Serial,
        Schedule::Wave,
        Schedule::WaveLocal,
        Schedule::Blocks,
        Schedule::Persistent,
        Schedule::PersistentLocal,
        Schedule::PersistentBlocks,
        Schedule::BlocksLocal,
        Schedule::Strip,
    ];
    /// One launch per sweep, work-groups ordered by tickets and flags.
    pub fn is_persistent(self) -> bool {
        matches!(
            self,
            Schedule::Persistent | Schedule::PersistentLocal | Schedule::PersistentBlocks | Schedule::Strip
        )
    }
    /// The schedule's name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Schedule::Serial => "serial",
            Schedule::Wave => "wave",
            Schedule::WaveLocal => "wave-local",
            Schedule::Blocks => "blocks",
            Schedule::Persistent => "persistent",
            Schedule::PersistentLocal => "persistent-local",
            Schedule::PersistentBlocks => "persistent-blocks",
            Schedule::BlocksLocal => "blocks-local",
            Schedule::Strip => "strip",
        }
    }
}

impl std::fmt::Display for Schedule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One generated schedule of a sweep, as the macro decided it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScheduleSpec {
    /// The kernel's OpenCL name.
    pub kernel: &'static str,
    /// Why the schedule does not exist for this sweep, if it does not.
    pub unavailable: Option<&'static str>,
    /// Where each of the kernel's parameters comes from, in its parameter order.
    pub params: &'static [clforge_abi::Bind],
}

/// What the runtime knows about one generated sweep (from the macro).
#[derive(Clone, Copy, Debug)]
pub struct SweepSpec {
    /// The Rust function's name.
    pub name: &'static str,
    /// Number of dimensions.
    pub rank: usize,
    /// Largest offset read along each axis.
    pub halo: [usize; 3],
    /// `Fixed` (the halo-wide edge keeps its values) or `Clamp`.
    pub boundary: Boundary,
    /// Direction per axis: `true` when the sweep runs towards increasing indices.
    pub forward: [bool; 3],
    /// The schedules in [`Schedule::ALL`] order.
    pub schedules: [ScheduleSpec; 9],
    /// Bytes of one value of the swept field.
    pub value_bytes: usize,
    /// Bytes per point the local-memory schedule stages (every field it stages).
    pub local_bytes_per_point: usize,
    /// `file.rs:line` of the Rust function.
    pub origin: &'static str,
    /// The generated OpenCL C.
    pub source: &'static str,
}

impl SweepSpec {
    /// The macro's facts about one schedule.
    pub fn schedule(&self, s: Schedule) -> &ScheduleSpec {
        &self.schedules[s as usize]
    }
    /// The schedules this sweep has.
    pub fn available(&self) -> impl Iterator<Item = Schedule> + '_ {
        Schedule::ALL
            .into_iter()
            .filter(|&s| self.schedule(s).unavailable.is_none())
    }
    /// Block edge L when the config names none: 16 in 2-D, 8 in 3-D (seed 001).
    pub fn default_block(&self) -> usize {
        if self.rank == 3 {
            8
        } else {
            16
        }
    }
}

/// How to run a sweep: the schedule and its block edge.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
pub struct SweepConfig {
    /// Which schedule.
    pub schedule: Schedule,
    /// Block edge L (points); for [`Schedule::Strip`] the rows of a strip. Default:
    /// [`SweepSpec::default_block`].
    pub block: Option<usize>,
    /// [`Schedule::Strip`]: steps between two publications of a strip's progress (default
    /// [`DEFAULT_PHASE`]); ignored by the other schedules.
    pub phase: Option<usize>,
    /// [`Schedule::Strip`]: the next phase's cache lines are loaded during the current phase,
    /// one load every `prefetch` columns of each row (default [`DEFAULT_PREFETCH`]; 0: none);
    /// ignored by the other schedules.
    pub prefetch: Option<usize>,
    /// [`Schedule::Strip`]: rows each work-item walks, a column apart (a divisor of the block;
    /// default [`DEFAULT_ROWS`]); ignored by the other schedules.
    pub rows: Option<usize>,
}

/// Steps between two progress publications of the strip schedule when the config names none:
/// the fastest on the H100 for both benchmark sweeps (2026-11-25, with the device-scope fence:
/// C = 16 against 8 and 32; docs/SWEEPS.md).
pub const DEFAULT_PHASE: usize = 16;

/// The strip schedule's prefetch stride (columns) when the config names none (0: no prefetch):
/// 32, the fastest measured on the H100 (Gauss–Seidel 16384² L = 128, C = 16: 15.1 ms; C = 32
/// without prefetch: 22.5 ms; docs/SWEEPS.md).
pub const DEFAULT_PREFETCH: usize = 32;

/// Rows per work-item of the strip schedule when the config names none.
pub const DEFAULT_ROWS: usize = 1;

impl SweepConfig {
    /// `schedule` with its default block.
    pub fn new(schedule: Schedule) -> SweepConfig {
        SweepConfig {
            schedule,
            block: None,
            phase: None,
            prefetch: None,
            rows: None,
        }
    }
    /// `schedule` on blocks of edge `block`.
    pub fn with_block(schedule: Schedule, block: usize) -> SweepConfig {
        SweepConfig {
            schedule,
            block: Some(block),
            phase: None,
            prefetch: None,
            rows: None,
        }
    }
    /// The strip schedule's phase (steps between progress publications).
    pub fn with_phase(mut self, phase: usize) -> SweepConfig {
        self.phase = Some(phase);
        self
    }
    /// The strip schedule's prefetch stride (columns; 0: none).
    pub fn with_prefetch(mut self, columns: usize) -> SweepConfig {
        self.prefetch = Some(columns);
        self
    }
    /// The strip schedule's rows per work-item (a divisor of the block).
    pub fn with_rows(mut self, rows: usize) -> SweepConfig {
        self.rows = Some(rows);
        self
    }
}
