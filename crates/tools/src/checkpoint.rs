//! The checkpoint store: what a file tool keeps of a file before it changes it, so a rewind can
//! put the file back (docs/storage.md §Checkpoints).
//!
//! Content-addressed: a blob is named by the SHA-256 of its bytes, so the same content kept twice
//! is stored once. Bounded: after each new blob the oldest blobs (by modification time; reusing
//! a blob touches it) are removed until the store fits its byte budget. A file larger than the
//! whole budget is not kept, and the record says so. The log refers to blobs by hash
//! (`seedpod_protocol::FileCheckpoint`); reading one back checks the hash, so a blob changed
//! on disk is refused rather than restored.

use std::fs::{self, File, FileTimes};
use std::io::{self, ErrorKind, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use seedpod_protocol::{Before, FileCheckpoint};
use sha2::{Digest, Sha256};

/// A pod's checkpoint blobs: one directory, one budget.
#[derive(Debug, Clone)]
pub struct CheckpointStore {
    dir: PathBuf,
    budget: u64,
}

/// Why a kept file cannot be read back.
#[derive(Debug, thiserror::Error)]
pub enum BlobError {
    #[error("\"{0}\" is not a checkpoint name (64 hexadecimal digits); the log was edited")]
    BadName(String),
    #[error(
        "its checkpoint {0} is no longer kept (pruned when its segment was archived or to stay \
         in the checkpoint budget, or removed)"
    )]
    Missing(String),
    #[error("its checkpoint {0} was changed on disk (its content no longer has that hash)")]
    Tampered(String),
    #[error("its checkpoint {name} cannot be read: {source}")]
    Io { name: String, source: io::Error },
}

impl CheckpointStore {
    pub fn new(dir: PathBuf, budget: u64) -> CheckpointStore {
        CheckpointStore { dir, budget }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Keep what `path` holds now, just before a tool changes it. `path` is one the scope
    /// checked (canonical, no symlinks). An error means nothing could be kept and the caller
    /// must not change the file: a change that cannot be undone is not made in silence.
    pub fn keep(&self, path: &Path) -> io::Result<FileCheckpoint> {
        let shown = path.to_string_lossy().into_owned();
        let before = match fs::symlink_metadata(path) {
            Err(err) if err.kind() == ErrorKind::NotFound => Before::Absent,
            Err(err) => return Err(err),
            Ok(meta) if !meta.is_file() => {
                return Err(io::Error::other("it is not a regular file"));
            }
            Ok(meta) if meta.len() > self.budget => Before::NotKept {
                reason: format!(
                    "{} bytes, more than the whole checkpoint budget of {} bytes",
                    meta.len(),
                    self.budget
                ),
            },
            Ok(_) => {
                let mut bytes = Vec::new();
                open_no_follow(path)?.read_to_end(&mut bytes)?;
                let sha256 = hash_hex(&bytes);
                self.store(&sha256, &bytes)?;
                Before::Blob {
                    sha256,
                    bytes: bytes.len() as u64,
                }
            }
        };
        Ok(FileCheckpoint {
            path: shown,
            before,
        })
    }

    fn store(&self, sha256: &str, bytes: &[u8]) -> io::Result<()> {
        fs::create_dir_all(&self.dir)?;
        let target = self.dir.join(sha256);
        if let Ok(file) = File::options().write(true).open(&target) {
            // Already kept: touch it, so pruning treats it as recent.
            file.set_times(FileTimes::new().set_modified(SystemTime::now()))?;
            return Ok(());
        }
        let mut temp = tempfile::Builder::new()
            .prefix(".blob")
            .tempfile_in(&self.dir)?;
        temp.write_all(bytes)?;
        temp.as_file().sync_all()?;
        temp.persist(&target).map_err(|e| e.error)?;
        self.prune(sha256)
    }

    /// Remove the oldest blobs until the store fits its budget; `keep` is never removed.
    fn prune(&self, keep: &str) -> io::Result<()> {
        let mut blobs = Vec::new();
        let mut total = 0u64;
        for entry in fs::read_dir(&self.dir)? {
            let entry = entry?;
            let Ok(meta) = entry.metadata() else { continue };
            if !meta.is_file() {
                continue;
            }
            total = total.saturating_add(meta.len());
            let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            blobs.push((modified, entry.file_name(), meta.len()));
        }
        blobs.sort();
        for (_, name, len) in blobs {
            if total <= self.budget {
                break;
            }
            if name.to_str() == Some(keep) {
                continue;
            }
            match fs::remove_file(self.dir.join(&name)) {
                Ok(()) => total = total.saturating_sub(len),
                Err(err) if err.kind() == ErrorKind::NotFound => {}
                Err(err) => return Err(err),
            }
        }
        Ok(())
    }

    /// Remove the blobs `in_use` does not name that were last kept before `settled`, and return
    /// their names. Blobs kept since `settled` stay: a file tool keeps its blob before its
    /// `tool_result` (which names it) is committed, so a fresh blob may be named a moment later.
    /// Anything in the directory that is not a blob name (a temporary file) is left alone.
    pub fn prune_unused(
        &self,
        in_use: &std::collections::BTreeSet<String>,
        settled: SystemTime,
    ) -> io::Result<Vec<String>> {
        let entries = match fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(err) if err.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
            Err(err) => return Err(err),
        };
        let mut removed = Vec::new();
        for entry in entries {
            let entry = entry?;
            let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                continue;
            };
            let is_blob = name.len() == 64 && name.bytes().all(|b| b.is_ascii_hexdigit());
            if !is_blob || in_use.contains(&name.to_ascii_lowercase()) {
                continue;
            }
            let Ok(meta) = entry.metadata() else { continue };
            let modified = meta.modified().unwrap_or(SystemTime::now());
            if !meta.is_file() || modified >= settled {
                continue;
            }
            match fs::remove_file(entry.path()) {
                Ok(()) => removed.push(name),
                Err(err) if err.kind() == ErrorKind::NotFound => {}
                Err(err) => return Err(err),
            }
        }
        removed.sort();
        Ok(removed)
    }

    /// The bytes of blob `sha256`, checked against their name.
    pub fn read(&self, sha256: &str) -> Result<Vec<u8>, BlobError> {
        if sha256.len() != 64 || !sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(BlobError::BadName(sha256.to_owned()));
        }
        let short = sha256[..12].to_owned();
        let mut bytes = Vec::new();
        match open_no_follow(&self.dir.join(sha256)).and_then(|mut f| f.read_to_end(&mut bytes)) {
            Ok(_) => {}
            Err(err) if err.kind() == ErrorKind::NotFound => return Err(BlobError::Missing(short)),
            Err(source) => {
                return Err(BlobError::Io {
                    name: short,
                    source,
                });
            }
        }
        if hash_hex(&bytes) != sha256.to_ascii_lowercase() {
            return Err(BlobError::Tampered(short));
        }
        Ok(bytes)
    }
}

/// Lowercase hex SHA-256 of `bytes`.
pub fn hash_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn open_no_follow(path: &Path) -> io::Result<File> {
    File::options()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(budget: u64) -> (tempfile::TempDir, CheckpointStore) {
        let dir = tempfile::tempdir().unwrap();
        let store = CheckpointStore::new(dir.path().join("checkpoints"), budget);
        (dir, store)
    }

    #[test]
    fn keeps_content_once_and_reads_it_back_checked() {
        let (dir, store) = store(1024);
        let a = dir.path().join("a.txt");
        let b = dir.path().join("b.txt");
        fs::write(&a, "same").unwrap();
        fs::write(&b, "same").unwrap();
        let first = store.keep(&a).unwrap();
        let second = store.keep(&b).unwrap();
        let Before::Blob { sha256, bytes } = &first.before else {
            panic!("kept {first:?}");
        };
        assert_eq!(*bytes, 4);
        assert_eq!(second.before, first.before, "same bytes, same blob");
        assert_eq!(fs::read_dir(store.dir()).unwrap().count(), 1);
        assert_eq!(store.read(sha256).unwrap(), b"same");
        let missing = store.keep(&dir.path().join("new.txt")).unwrap();
        assert_eq!(missing.before, Before::Absent);
    }

    #[test]
    fn stays_inside_its_budget_dropping_the_oldest_and_skips_a_file_bigger_than_it() {
        let (dir, store) = store(10);
        let mut kept = Vec::new();
        for (i, text) in ["aaaa", "bbbb", "cccc"].iter().enumerate() {
            let path = dir.path().join(format!("{i}"));
            fs::write(&path, text).unwrap();
            let checkpoint = store.keep(&path).unwrap();
            if let Before::Blob { sha256, .. } = &checkpoint.before {
                // Distinct ages whatever the file system's time resolution.
                let age = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(i as u64 + 1);
                File::options()
                    .write(true)
                    .open(store.dir().join(sha256))
                    .unwrap()
                    .set_times(FileTimes::new().set_modified(age))
                    .unwrap();
            }
            kept.push(checkpoint);
        }
        let names = |c: &FileCheckpoint| match &c.before {
            Before::Blob { sha256, .. } => sha256.clone(),
            other => panic!("{other:?}"),
        };
        assert!(matches!(
            store.read(&names(&kept[0])),
            Err(BlobError::Missing(_))
        ));
        assert!(store.read(&names(&kept[2])).is_ok());
        let big = dir.path().join("big");
        fs::write(&big, "x".repeat(11)).unwrap();
        assert!(matches!(
            store.keep(&big).unwrap().before,
            Before::NotKept { .. }
        ));
    }

    #[test]
    fn refuses_an_edited_blob_a_bad_name_and_a_symlink() {
        let (dir, store) = store(1024);
        let path = dir.path().join("a");
        fs::write(&path, "original").unwrap();
        let Before::Blob { sha256, .. } = store.keep(&path).unwrap().before else {
            panic!("not kept");
        };
        fs::write(store.dir().join(&sha256), "evil").unwrap();
        assert!(matches!(store.read(&sha256), Err(BlobError::Tampered(_))));
        for name in ["../../etc/passwd", "", "zz", &"g".repeat(64)] {
            assert!(
                matches!(store.read(name), Err(BlobError::BadName(_))),
                "{name}"
            );
        }
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        assert!(
            store.keep(&link).is_err(),
            "a symlink is not kept as a file"
        );
    }

    #[test]
    fn pruning_removes_only_settled_blobs_nothing_names() {
        let (dir, store) = store(1 << 20);
        let mut names = Vec::new();
        for text in ["named", "unnamed", "fresh"] {
            let path = dir.path().join(text);
            fs::write(&path, text).unwrap();
            let Before::Blob { sha256, .. } = store.keep(&path).unwrap().before else {
                panic!("not kept");
            };
            names.push(sha256);
        }
        let settled = SystemTime::now() - std::time::Duration::from_secs(60);
        let old = settled - std::time::Duration::from_secs(60);
        for name in &names[..2] {
            File::options()
                .write(true)
                .open(store.dir().join(name))
                .unwrap()
                .set_times(FileTimes::new().set_modified(old))
                .unwrap();
        }
        // Not blobs: a temporary file, a name that is no hash, a directory with a hash's name.
        fs::write(store.dir().join(".blob123"), "partial").unwrap();
        fs::write(store.dir().join("notes"), "mine").unwrap();
        fs::create_dir(store.dir().join("a".repeat(64))).unwrap();
        let in_use = std::collections::BTreeSet::from([names[0].clone()]);
        let removed = store.prune_unused(&in_use, settled).unwrap();
        assert_eq!(removed, [names[1].clone()]);
        assert!(store.read(&names[0]).is_ok(), "named: kept");
        assert!(matches!(store.read(&names[1]), Err(BlobError::Missing(_))));
        assert!(store.read(&names[2]).is_ok(), "fresh: kept");
        for other in [".blob123", "notes"] {
            assert!(store.dir().join(other).exists(), "{other}");
        }
        let missing = CheckpointStore::new(dir.path().join("none"), 1);
        assert!(missing.prune_unused(&in_use, settled).unwrap().is_empty());
    }
}
