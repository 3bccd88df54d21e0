//! seedpod's own directories and files are private to the user who runs it, whatever the
//! umask: directories are created `0700` and files `0600`, and a directory that is a symbolic
//! link, belongs to someone else, or can be written by others is refused before anything is
//! read from or written to it. A pod's log holds everything its model saw, `pod.json` says
//! where requests (and the API key) go, and the socket drives the pod: anyone who can touch
//! them is the user.
//!
//! Checks use `lstat` (`symlink_metadata`): a link is judged as a link, never by its target,
//! so a link planted in a shared directory cannot be repointed later.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

use crate::error::ClientError;
use crate::paths::{HOME_ENV, current_uid};

/// Create `dir` and any missing parents `0700`.
pub fn create_dir_all(dir: &Path) -> io::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

/// Open `path` for appending, creating it `0600`.
pub fn open_append(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)
}

/// How strict a directory check is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// Nobody else may even look inside (the runtime directory: its sockets drive pods).
    OwnerOnly,
    /// Nobody else may change it; our own that others can read is tightened to `0700`.
    NotWritableByOthers,
}

/// Create `dir` `0700` if it is missing, then refuse it unless it is a real directory of ours
/// that others cannot write (or, for `OwnerOnly`, reach at all). `what` names it in errors.
pub fn ensure_dir(dir: &Path, what: &str, reach: Reach) -> Result<(), ClientError> {
    let meta = match std::fs::symlink_metadata(dir) {
        Ok(meta) => meta,
        Err(err) if err.kind() == io::ErrorKind::NotFound => {
            create_dir_all(dir).map_err(|e| ClientError::io(dir, "create", e))?;
            std::fs::symlink_metadata(dir).map_err(|e| ClientError::io(dir, "inspect", e))?
        }
        Err(err) => return Err(ClientError::io(dir, "inspect", err)),
    };
    check(dir, what, reach, &meta)
}

/// The same judgement on a directory that must already exist (a client connecting).
pub fn check_dir(dir: &Path, what: &str, reach: Reach) -> Result<(), ClientError> {
    let meta = std::fs::symlink_metadata(dir).map_err(|e| ClientError::io(dir, "inspect", e))?;
    check(dir, what, reach, &meta)
}

fn check(
    dir: &Path,
    what: &str,
    reach: Reach,
    meta: &std::fs::Metadata,
) -> Result<(), ClientError> {
    let shown = dir.display();
    if meta.file_type().is_symlink() {
        return Err(ClientError::Setup(format!(
            "{what} {shown} is a symbolic link; seedpod does not follow links for its own \
             directories (someone could repoint it). Remove the link, or set {HOME_ENV}=DIR"
        )));
    }
    if !meta.is_dir() {
        return Err(ClientError::Setup(format!(
            "{what} {shown} is not a directory; move it aside"
        )));
    }
    if meta.uid() != current_uid() {
        return Err(ClientError::Setup(format!(
            "{what} {shown} belongs to uid {}, not to you (uid {}); remove it or set {HOME_ENV}=DIR",
            meta.uid(),
            current_uid()
        )));
    }
    let mode = meta.mode() & 0o777;
    let refused = match reach {
        Reach::OwnerOnly => mode & 0o077 != 0,
        Reach::NotWritableByOthers => mode & 0o022 != 0,
    };
    if refused {
        return Err(ClientError::Setup(format!(
            "{what} {shown} is accessible to other users (mode {mode:o}); run `chmod 700 {shown}`"
        )));
    }
    if mode & 0o077 != 0 {
        // Ours, and nobody else can change it: make it private rather than refuse to start.
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| ClientError::io(dir, "make private", e))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::symlink_metadata(path).unwrap().mode() & 0o777
    }

    /// Under the most permissive common umask, what seedpod creates is still private.
    #[test]
    fn created_dirs_and_files_are_private_whatever_the_umask() {
        let tmp = tempfile::tempdir().unwrap();
        // SAFETY: umask only sets this process's file-creation mask; other tests' files are
        // created with explicit modes or in their own temp dirs.
        let old = unsafe { libc::umask(0o022) };
        let dir = tmp.path().join("a/b");
        create_dir_all(&dir).unwrap();
        let file = dir.join("f.log");
        drop(open_append(&file).unwrap());
        unsafe { libc::umask(old) };
        assert_eq!(mode(&tmp.path().join("a")), 0o700);
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&file), 0o600);
    }

    #[test]
    fn a_symlinked_dir_is_refused_even_when_it_points_at_a_private_dir_of_ours() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().join("real");
        create_dir_all(&real).unwrap();
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        for reach in [Reach::OwnerOnly, Reach::NotWritableByOthers] {
            let err = ensure_dir(&link, "runtime directory", reach).unwrap_err();
            assert!(err.to_string().contains("symbolic link"), "{err}");
            let err = check_dir(&link, "runtime directory", reach).unwrap_err();
            assert!(err.to_string().contains("symbolic link"), "{err}");
        }
    }

    #[test]
    fn a_dir_others_can_write_is_refused_and_one_they_can_read_is_tightened() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("data");
        create_dir_all(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let err = ensure_dir(&dir, "data directory", Reach::NotWritableByOthers).unwrap_err();
        assert!(err.to_string().contains("chmod 700"), "{err}");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        ensure_dir(&dir, "data directory", Reach::NotWritableByOthers).unwrap();
        assert_eq!(mode(&dir), 0o700);
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o750)).unwrap();
        let err = ensure_dir(&dir, "runtime directory", Reach::OwnerOnly).unwrap_err();
        assert!(
            err.to_string().contains("accessible to other users"),
            "{err}"
        );
    }

    /// A directory someone else owns is refused even when its mode is private.
    #[test]
    fn a_dir_owned_by_someone_else_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let theirs = if current_uid() == 0 {
            // As root, make one that belongs to `nobody`.
            let dir = tmp.path().join("theirs");
            create_dir_all(&dir).unwrap();
            std::os::unix::fs::chown(&dir, Some(65534), Some(65534)).unwrap();
            dir
        } else {
            // Otherwise root's own `/` is someone else's.
            Path::new("/").to_path_buf()
        };
        let err = check_dir(&theirs, "data directory", Reach::NotWritableByOthers).unwrap_err();
        assert!(err.to_string().contains("not to you"), "{err}");
    }

    #[test]
    fn a_file_where_a_dir_should_be_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("run");
        std::fs::write(&path, "").unwrap();
        let err = ensure_dir(&path, "runtime directory", Reach::OwnerOnly).unwrap_err();
        assert!(err.to_string().contains("not a directory"), "{err}");
    }
}
