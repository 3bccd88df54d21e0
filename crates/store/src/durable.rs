//! Making directory changes survive a crash.
//!
//! Syncing a file's data does not persist its *name*: after creating or renaming a file, the
//! directory that holds it must be synced too, or a crash can lose the new segment or leave the
//! old `pod.json` in place. Only Unix lets us open a directory to sync it; elsewhere this is a
//! no-op. It is best effort (a warning, not an error): the data itself is already synced, and some
//! file systems refuse to sync directories at all.

use std::path::Path;

/// Sync the directory containing `file`, logging (not returning) a failure.
pub(crate) fn sync_parent_dir(file: &Path) {
    let Some(dir) = file.parent() else {
        return;
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    if let Err(err) = sync_dir(dir) {
        tracing::warn!(
            event = "dir_fsync_failed",
            dir = %dir.display(),
            error = %err,
        );
    }
}

#[cfg(unix)]
fn sync_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::File::open(dir)?.sync_all()
}

#[cfg(not(unix))]
fn sync_dir(_dir: &Path) -> std::io::Result<()> {
    Ok(())
}
