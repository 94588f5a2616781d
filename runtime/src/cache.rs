//! Per-device caches: built programs by source and options, constant buffers by content.
//! Like the devices themselves (see `device.rs`), they live as long as the process.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use crate::buffer::ConstBuffer;
use crate::device::Device;
use crate::error::Result;
use crate::program::Program;
use crate::sync::lock;

/// Constant buffers kept per device before the cache is emptied (bounds memory
/// when callers upload ever-changing parameter blocks).
const CONSTANT_CACHE_LIMIT: usize = 1024;

#[derive(Default)]
struct Caches {
    /// source -> options -> program.
    programs: Mutex<HashMap<String, HashMap<String, Program>>>,
    constants: Mutex<HashMap<Vec<u8>, ConstBuffer>>,
}

/// The caches of each device, by [`DeviceInfo::index`](crate::DeviceInfo::index).
static CACHES: Mutex<BTreeMap<usize, Arc<Caches>>> = Mutex::new(BTreeMap::new());

fn caches(dev: &Device) -> Arc<Caches> {
    lock(&CACHES).entry(dev.info().index).or_default().clone()
}

impl Device {
    /// Builds `source` with `options` for this device, or returns the program
    /// already built from the same source and options in this process.
    /// `-cl-std=CL1.2` is appended unless `options` already pick a standard.
    /// `name` only labels error messages. Builds hold the cache lock, so each
    /// program is compiled once even when requested from many threads.
    pub fn program(&self, name: &str, source: &str, options: &str) -> Result<Program> {
        let caches = caches(self);
        let mut programs = lock(&caches.programs);
        if let Some(p) = programs.get(source).and_then(|m| m.get(options)) {
            return Ok(p.clone());
        }
        let program = Program::build(self, name, source, options)?;
        programs
            .entry(source.to_owned())
            .or_default()
            .insert(options.to_owned(), program.clone());
        Ok(program)
    }

    /// A read-only device buffer holding `bytes`, cached by content so that
    /// small parameter blocks are uploaded once and reused on every launch.
    pub fn constant_bytes(&self, bytes: &[u8]) -> Result<ConstBuffer> {
        let caches = caches(self);
        let mut constants = lock(&caches.constants);
        if let Some(b) = constants.get(bytes) {
            return Ok(b.clone());
        }
        let buffer = ConstBuffer::new(self, bytes)?;
        if constants.len() >= CONSTANT_CACHE_LIMIT {
            constants.clear();
        }
        constants.insert(bytes.to_vec(), buffer.clone());
        Ok(buffer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    #[test]
    fn program_cache_returns_same_program() {
        let dev = Device::default().unwrap();
        let src = "__kernel void fill(__global float* y, float v) { y[get_global_id(0)] = v; }";
        let a = dev.program("fill", src, "").unwrap();
        let b = dev.program("other name", src, "").unwrap();
        let c = dev.program("fill", src, "-cl-fast-relaxed-math").unwrap();
        assert!(a.same_as(&b));
        assert!(!a.same_as(&c));
        assert_eq!(a.name(), b.name());
    }

    #[test]
    fn constant_bytes_caches_by_content() {
        let dev = Device::default().unwrap();
        let a = dev.constant_bytes(&[1, 2, 3, 4]).unwrap();
        let b = dev.constant_bytes(&[1, 2, 3, 4]).unwrap();
        let c = dev.constant_bytes(&[4, 3, 2, 1]).unwrap();
        assert!(a.same_as(&b));
        assert!(!a.same_as(&c));
        assert_eq!(a.len(), 4);
        assert!(matches!(dev.constant_bytes(&[]), Err(Error::InvalidConfig(_))));
    }
}
