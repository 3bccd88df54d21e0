//! Atomic file replacement: a reader (or a crash) sees the old content or the new, never half.
//!
//! The bytes go to a temporary file in the target's own directory (a rename is only atomic within
//! one filesystem), are fsynced, and the temporary file is renamed over the target; the directory
//! is fsynced afterwards so the rename itself survives a power cut.

use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

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

/// Write `bytes` to `path` atomically, creating missing parent directories. The caller has
/// already checked `path` (and so its would-be parents) against the scope.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<Written> {
    write_atomic_with(path, bytes, |_| Ok(()))
}

/// [`write_atomic`] with a hook between the finished temporary file and the rename, so tests can
/// stand in for a crash at the worst moment. A hook error aborts the write: the temporary file
/// is removed and the target is untouched.
pub(crate) fn write_atomic_with(
    path: &Path,
    bytes: &[u8],
    before_rename: impl FnOnce(&Path) -> io::Result<()>,
) -> io::Result<Written> {
    let dir = path
        .parent()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the path has no parent"))?;
    std::fs::create_dir_all(dir)?;
    let existing = match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => {
            return Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                "it is a directory",
            ));
        }
        Ok(meta) => Some(meta),
        Err(err) if err.kind() == io::ErrorKind::NotFound => None,
        Err(err) => return Err(err),
    };
    let mut temp = tempfile::Builder::new()
        .prefix(TEMP_PREFIX)
        .suffix(".tmp")
        // A new file gets the usual 0666 less umask, not tempfile's private 0600.
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(dir)?;
    if let Some(meta) = &existing {
        // Replacing must not change the mode (an edited script stays executable).
        temp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(meta.permissions().mode()))?;
    }
    temp.write_all(bytes)?;
    temp.as_file().sync_all()?;
    // On error `temp` is dropped here, which deletes the temporary file.
    before_rename(temp.path())?;
    temp.persist(path).map_err(|err| err.error)?;
    sync_dir(dir)?;
    Ok(match existing {
        Some(meta) => Written::Replaced {
            old_len: meta.len(),
        },
        None => Written::Created,
    })
}

fn sync_dir(dir: &Path) -> io::Result<()> {
    std::fs::File::open(dir)?.sync_all()
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
        assert_eq!(err.kind(), io::ErrorKind::IsADirectory);
    }
}
