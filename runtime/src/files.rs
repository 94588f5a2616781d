//! Files clforge writes (checkpoints, the tuner's cache, meshes, VTK, pictures, reports): a file is replaced only by a complete,
//! synced new one, so a failure at any point (a full disk, a missing directory, an error while
//! writing) leaves the previous file as it was and no partial file behind.

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// Writes `path` through `write`: into a temporary file beside it, flushed and synced, then
/// renamed over `path` (atomic on POSIX file systems), and the directory synced so the rename
/// survives a crash. On any error the temporary file is removed and `path` is untouched.
pub fn replace_file(path: &Path, write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    replace_file_syncing(path, write, File::sync_all)
}

/// [`replace_file`] with the sync of the complete temporary file done by `sync` (a test makes
/// it fail: a disk that reports an error only when asked to persist).
fn replace_file_syncing(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
    sync: impl FnOnce(&File) -> io::Result<()>,
) -> io::Result<()> {
    let tmp = temporary(path)?;
    let result = (|| {
        let mut out = BufWriter::new(File::create(&tmp)?);
        write(&mut out)?;
        out.flush()?;
        let file = out.into_inner().map_err(io::IntoInnerError::into_error)?;
        sync(&file)?;
        drop(file);
        fs::rename(&tmp, path)
    })();
    if let Err(e) = result {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    sync_parent(path)
}

/// [`replace_file`] for writers that take a path rather than a stream (a plotting backend's
/// PNG): `produce` writes the complete file at the temporary path it is given (beside `path`,
/// ending in `path`'s extension, so writers that pick the format by extension keep working),
/// which is then synced and renamed over `path`. On any error the temporary file is removed and
/// `path` is untouched.
pub fn replace_file_at(path: &Path, produce: impl FnOnce(&Path) -> io::Result<()>) -> io::Result<()> {
    let mut tmp = temporary(path)?;
    if let Some(ext) = path.extension() {
        let mut name = tmp.as_os_str().to_owned();
        name.push(".");
        name.push(ext);
        tmp = PathBuf::from(name);
    }
    let result = (|| {
        produce(&tmp)?;
        File::open(&tmp)?.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if let Err(e) = result {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    sync_parent(path)
}

/// `<path>.tmp<pid>` beside `path`; an error if `path` names no file.
fn temporary(path: &Path) -> io::Result<PathBuf> {
    if path.file_name().is_none() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("`{}` names no file", path.display()),
        ));
    }
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp{}", std::process::id()));
    Ok(PathBuf::from(tmp))
}

/// Syncs the directory that holds `path` (where the platform can open a directory).
fn sync_parent(path: &Path) -> io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if cfg!(unix) {
        File::open(dir)?.sync_all()?;
    }
    Ok(())
}

/// 64-bit FNV-1a: a hash that stays the same across Rust releases and runs (cache keys,
/// checkpoint checksums).
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("clforge-files-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    fn leftovers(d: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_complete_write_replaces_the_file() {
        let d = dir("ok");
        let p = d.join("state.bin");
        fs::write(&p, b"old").unwrap();
        replace_file(&p, |w| w.write_all(b"new state")).unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"new state");
        assert_eq!(leftovers(&d), ["state.bin"]);
    }

    /// A failure at every byte offset of the write leaves the previous file whole and no
    /// temporary file.
    #[test]
    fn a_failed_write_at_any_offset_keeps_the_previous_file() {
        let d = dir("fail");
        let p = d.join("state.bin");
        fs::write(&p, b"previous").unwrap();
        let data = b"0123456789";
        for fail_at in 0..=data.len() {
            let e = replace_file(&p, |w| {
                w.write_all(&data[..fail_at])?;
                Err(io::Error::other("disk full"))
            })
            .unwrap_err();
            assert_eq!(e.to_string(), "disk full");
            assert_eq!(fs::read(&p).unwrap(), b"previous", "failing at byte {fail_at}");
            assert_eq!(leftovers(&d), ["state.bin"]);
        }
    }

    /// A path-taking writer that fails after writing part of its file leaves the previous file
    /// and no temporary; one that succeeds replaces it, its temporary ending in the extension.
    #[test]
    fn a_path_writer_replaces_only_a_complete_file() {
        let d = dir("at");
        let p = d.join("picture.png");
        fs::write(&p, b"previous").unwrap();
        for fail_at in 0..4 {
            let e = replace_file_at(&p, |tmp| {
                assert_eq!(tmp.extension().and_then(|e| e.to_str()), Some("png"));
                fs::write(tmp, &b"new"[..fail_at.min(3)])?;
                Err(io::Error::other("encoder failed"))
            })
            .unwrap_err();
            assert_eq!(e.to_string(), "encoder failed");
            assert_eq!(fs::read(&p).unwrap(), b"previous");
            assert_eq!(leftovers(&d), ["picture.png"]);
        }
        // A writer that reports success without writing anything is an error too.
        assert!(replace_file_at(&p, |_| Ok(())).is_err());
        assert_eq!(fs::read(&p).unwrap(), b"previous");
        replace_file_at(&p, |tmp| fs::write(tmp, b"new picture")).unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"new picture");
        assert_eq!(leftovers(&d), ["picture.png"]);
    }

    /// A sync that fails after the whole file was written keeps the previous file too.
    #[test]
    fn a_failed_sync_keeps_the_previous_file() {
        let d = dir("sync");
        let p = d.join("state.bin");
        fs::write(&p, b"previous").unwrap();
        let e = replace_file_syncing(
            &p,
            |w| w.write_all(b"all of the new state"),
            |_| Err(io::Error::other("sync failed")),
        )
        .unwrap_err();
        assert_eq!(e.to_string(), "sync failed");
        assert_eq!(fs::read(&p).unwrap(), b"previous");
        assert_eq!(leftovers(&d), ["state.bin"]);
    }

    #[test]
    fn a_missing_directory_is_an_error_and_creates_nothing() {
        let d = dir("missing");
        let p = d.join("no-such-dir").join("state.bin");
        assert!(replace_file(&p, |w| w.write_all(b"x")).is_err());
        assert!(!d.join("no-such-dir").exists());
        assert!(replace_file(Path::new(""), |w| w.write_all(b"x")).is_err());
        // A "directory" that is a file cannot be written into: an error, the file untouched.
        let blocker = d.join("not-a-dir");
        fs::write(&blocker, b"keep").unwrap();
        assert!(replace_file(&blocker.join("state.bin"), |w| w.write_all(b"x")).is_err());
        assert!(replace_file_at(&blocker.join("p.png"), |tmp| fs::write(tmp, b"x")).is_err());
        assert_eq!(fs::read(&blocker).unwrap(), b"keep");
    }

    #[test]
    fn fnv1a_is_the_published_hash() {
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
