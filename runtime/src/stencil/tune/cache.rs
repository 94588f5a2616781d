//! The tuner's cache: entries keyed by device, source and shape, kept in a JSON file that is
//! replaced atomically.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::stencil::{LaunchConfig, Tile, Variant};

use super::CACHE_VERSION;

/// A cached answer, as stored in the JSON file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(super) struct Entry {
    pub(super) variant: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) tile: Option<[usize; 3]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) work_group: Option<[usize; 3]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) steps: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) points: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) march: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) lanes: Option<usize>,
    pub(super) median_ns: u64,
}

impl Entry {
    pub(crate) fn new(config: &LaunchConfig, median_ns: u64) -> Entry {
        Entry {
            variant: config.variant.name().to_owned(),
            tile: config.tile.map(|t| [t.x, t.y, t.rows]),
            work_group: config.work_group,
            steps: config.steps,
            points: config.points,
            march: config.march,
            lanes: config.lanes,
            median_ns,
        }
    }

    /// The configuration, or `None` for an entry this version does not understand.
    pub(crate) fn config(&self) -> Option<LaunchConfig> {
        Some(LaunchConfig {
            variant: Variant::from_name(&self.variant)?,
            tile: self.tile.map(|[x, y, rows]| Tile { x, y, rows }),
            work_group: self.work_group,
            steps: self.steps,
            points: self.points,
            march: self.march,
            lanes: self.lanes,
        })
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub(super) struct CacheFile {
    pub(super) version: u32,
    pub(super) entries: BTreeMap<String, Entry>,
}

pub(super) fn read_cache(path: &Path) -> io::Result<BTreeMap<String, Entry>> {
    let file: CacheFile = serde_json::from_slice(&fs::read(path)?)?;
    if file.version == CACHE_VERSION {
        Ok(file.entries)
    } else {
        Ok(BTreeMap::new())
    }
}

/// Replaces the cache file with `file` ([`crate::files::replace_file`]: complete and synced, or
/// the previous file untouched).
pub(super) fn write_atomically(path: &Path, file: &CacheFile) -> io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir)?;
    }
    let text = serde_json::to_vec_pretty(file)?;
    crate::files::replace_file(path, |w| w.write_all(&text))
}
