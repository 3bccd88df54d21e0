//! Atomic file replacement: a reader (or a crash) sees the old content or the new, never half.
//!
//! The bytes go to a temporary file in the target's own directory (a rename is only atomic within
//! one filesystem), are fsynced, and the temporary file is renamed over the target; the directory
//! is fsynced afterwards so the rename itself survives a power cut.

use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::beneath::{self, OpenError};

/// What a write did to the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Written {
    Created,
    /// Replaced an existing file of this many bytes.
    Replaced {
        old_len: u64,
    },
}

/// Prefix of temporary files: hidden, and named after no real file, so a leftover from a killed
/// process is recognisable and never taken for the target.
const TEMP_PREFIX: &str = ".seedpod-write-";

/// Write `bytes` to the canonical, checked `path` atomically, creating missing parent
/// directories. Everything happens relative to a handle on the parent directory opened without
/// following symlinks (`beneath.rs`), so the directory cannot be swapped for a link between the
/// scope check and the rename.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<Written, OpenError> {
    write_atomic_with(path, bytes, |_| Ok(()))
}

/// [`write_atomic`] with a hook between the finished temporary file and the rename, so tests can
/// stand in for a crash at the worst moment. A hook error aborts the write: the temporary file
/// is removed and the target is untouched.
pub(crate) fn write_atomic_with(
    path: &Path,
    bytes: &[u8],
    before_rename: impl FnOnce(&Path) -> io::Result<()>,
) -> Result<Written, OpenError> {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(OpenError::Io(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the path has no parent",
        )));
    };
    let dir_fd = beneath::create_dirs(dir)?;
    let existing = beneath::stat_at(&dir_fd, name)?;
    if let Some(st) = &existing
        && st.st_mode & libc::S_IFMT == libc::S_IFDIR
    {
        return Err(OpenError::Io(io::Error::new(
            io::ErrorKind::IsADirectory,
            "it is a directory",
        )));
    }
    let temp_name = temp_name();
    let mut temp = beneath::create_new_at(&dir_fd, temp_name.as_ref(), 0o666)?;
    let result = (|| -> io::Result<()> {
        if let Some(st) = &existing {
            // Replacing must not change the mode (an edited script stays executable).
            temp.set_permissions(std::fs::Permissions::from_mode(st.st_mode & 0o7777))?;
        }
        temp.write_all(bytes)?;
        temp.sync_all()?;
        before_rename(&dir.join(&temp_name))?;
        beneath::rename_at(&dir_fd, temp_name.as_ref(), name)?;
        // The rename itself must survive a power cut.
        std::fs::File::from(dir_fd.try_clone()?).sync_all()
    })();
    if let Err(err) = result {
        beneath::unlink_at(&dir_fd, temp_name.as_ref());
        return Err(OpenError::Io(err));
    }
    Ok(match existing {
        Some(st) => Written::Replaced {
            old_len: u64::try_from(st.st_size).unwrap_or(0),
        },
        None => Written::Created,
    })
}

/// A hidden name no real file has: the prefix, the process and a counter.
fn temp_name() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!("{TEMP_PREFIX}{}-{n}-{nanos:x}.tmp", std::process::id())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_crash_before_the_rename_leaves_the_old_content_intact() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("notes.txt");
        std::fs::write(&target, b"old content\n").unwrap();

        let mut seen_temp = None;
        let err = write_atomic_with(&target, b"new content that never lands\n", |temp| {
            // The new bytes are complete and durable in the temporary file, not in the target.
            assert_ne!(temp, target);
            assert_eq!(temp.parent(), target.parent());
            assert_eq!(
                std::fs::read(temp).unwrap(),
                b"new content that never lands\n"
            );
            assert_eq!(std::fs::read(&target).unwrap(), b"old content\n");
            seen_temp = Some(temp.to_owned());
            Err(io::Error::other("simulated crash"))
        })
        .unwrap_err();

        assert_eq!(err.to_string(), "simulated crash");
        assert!(matches!(err, OpenError::Io(_)));
        assert_eq!(std::fs::read(&target).unwrap(), b"old content\n");
        assert!(
            !seen_temp.unwrap().exists(),
            "the temporary file was left behind"
        );
        assert_eq!(entries(dir.path()), ["notes.txt"]);
    }

    #[test]
    fn replaces_and_creates_with_parent_directories() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("a/b/new.txt");
        assert_eq!(write_atomic(&target, b"one").unwrap(), Written::Created);
        assert_eq!(
            write_atomic(&target, b"two!").unwrap(),
            Written::Replaced { old_len: 3 }
        );
        assert_eq!(std::fs::read(&target).unwrap(), b"two!");
        assert_eq!(entries(&dir.path().join("a/b")), ["new.txt"]);
    }

    #[test]
    fn replacing_keeps_the_file_mode() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("run.sh");
        std::fs::write(&target, b"#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o750)).unwrap();
        write_atomic(&target, b"#!/bin/sh\necho hi\n").unwrap();
        let mode = std::fs::metadata(&target).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o750);
    }

    #[test]
    fn a_directory_is_not_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let err = write_atomic(dir.path(), b"x").unwrap_err();
        assert!(
            matches!(&err, OpenError::Io(e) if e.kind() == io::ErrorKind::IsADirectory),
            "{err}"
        );
    }
}
