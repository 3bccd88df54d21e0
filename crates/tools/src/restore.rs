//! Putting files back from checkpoints, for a rewind (docs/storage.md §Checkpoints).
//!
//! `plan` decides, for each path a file tool changed after the rewind's point, what restoring it
//! means — write its kept content back, remove it (it did not exist), nothing (it already
//! matches) — or why it is refused. `apply` does exactly what the plan shows, checking each path
//! again just before touching it. Refused, and said so: a path outside the pod's directory, a
//! path that is now a symbolic link or goes through one (never followed: it could lead
//! anywhere), a directory where a file was, a checkpoint whose bytes no longer match their hash,
//! one that was pruned or never kept.

use std::fs;
use std::io::{self, ErrorKind, Write};
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, SystemTime};

use seedpod_protocol::{Before, FileCheckpoint};

use crate::checkpoint::CheckpointStore;

/// What a rewind does to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Write these bytes back (the file differs from them now, or is gone).
    Restore(Vec<u8>),
    /// Remove it: it did not exist at the rewind's point.
    Delete,
    /// It already is as it was.
    Unchanged,
    /// Left alone, for this reason.
    Refused(String),
}

impl Change {
    /// One word for the listing.
    pub fn verb(&self) -> &'static str {
        match self {
            Change::Restore(_) => "restore",
            Change::Delete => "delete",
            Change::Unchanged => "unchanged",
            Change::Refused(_) => "refused",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    pub path: PathBuf,
    pub change: Change,
}

/// The earliest checkpoint of each path among `checkpoints` (in log order): the file as it was
/// before the first change after the rewind's point, which is its state at that point.
pub fn first_per_path(
    checkpoints: impl IntoIterator<Item = FileCheckpoint>,
) -> Vec<FileCheckpoint> {
    let mut first: Vec<FileCheckpoint> = Vec::new();
    for checkpoint in checkpoints {
        if !first.iter().any(|c| c.path == checkpoint.path) {
            first.push(checkpoint);
        }
    }
    first
}

/// What restoring each of `checkpoints` (one per path) would do, for a pod working in `cwd`.
pub fn plan(
    cwd: &Path,
    store: &CheckpointStore,
    checkpoints: &[FileCheckpoint],
) -> Vec<FileChange> {
    checkpoints
        .iter()
        .map(|checkpoint| {
            let path = PathBuf::from(&checkpoint.path);
            let change = match check_path(cwd, &path) {
                Err(reason) => Change::Refused(reason),
                Ok(now) => decide(store, &checkpoint.before, now.as_deref()),
            };
            FileChange { path, change }
        })
        .collect()
}

fn decide(store: &CheckpointStore, before: &Before, now: Option<&[u8]>) -> Change {
    match before {
        Before::Blob { sha256, .. } => match store.read(sha256) {
            Err(err) => Change::Refused(err.to_string()),
            Ok(bytes) if now == Some(bytes.as_slice()) => Change::Unchanged,
            Ok(bytes) => Change::Restore(bytes),
        },
        Before::Absent => match now {
            Some(_) => Change::Delete,
            None => Change::Unchanged,
        },
        Before::NotKept { reason } => Change::Refused(format!("it was not kept ({reason})")),
        Before::Unknown => {
            Change::Refused("its checkpoint was recorded by a newer seedpod; upgrade".into())
        }
    }
}

/// Whether `path` may be restored for a pod in `cwd`, and its content now (`None`: absent).
fn check_path(cwd: &Path, path: &Path) -> Result<Option<Vec<u8>>, String> {
    let inside = path.is_absolute()
        && path.starts_with(cwd)
        && path != cwd
        && !path
            .components()
            .any(|c| matches!(c, Component::ParentDir | Component::CurDir));
    if !inside {
        return Err(format!(
            "it is outside the pod's directory {}; rewind only restores files there",
            cwd.display()
        ));
    }
    let mut at = cwd.to_path_buf();
    let relative = path.strip_prefix(cwd).unwrap_or(path);
    let mut components = relative.components().peekable();
    while let Some(component) = components.next() {
        at.push(component);
        let meta = match fs::symlink_metadata(&at) {
            Ok(meta) => meta,
            Err(err) if err.kind() == ErrorKind::NotFound => return Ok(None),
            Err(err) => return Err(format!("{} cannot be examined: {err}", at.display())),
        };
        if meta.file_type().is_symlink() {
            let target = fs::read_link(&at)
                .map(|t| format!(" (to {})", t.display()))
                .unwrap_or_default();
            return Err(format!(
                "{} is now a symbolic link{target}; it is not followed",
                at.display()
            ));
        }
        let last = components.peek().is_none();
        if last && !meta.is_file() {
            return Err("it is no longer a regular file (a directory or a device is there)".into());
        }
        if !last && !meta.is_dir() {
            return Err(format!("{} is not a directory", at.display()));
        }
    }
    fs::read(path)
        .map(Some)
        .map_err(|err| format!("it cannot be read: {err}"))
}

/// Carry out `changes` (the plan a person confirmed); returns what could not be done after all
/// (a path that changed between the plan and now is checked again and left alone).
pub fn apply(cwd: &Path, changes: &[FileChange]) -> Vec<(PathBuf, String)> {
    let mut failed = Vec::new();
    for FileChange { path, change } in changes {
        let result = match change {
            Change::Unchanged | Change::Refused(_) => continue,
            Change::Restore(bytes) => check_path(cwd, path)
                .and_then(|_| write_back(path, bytes).map_err(|e| e.to_string())),
            Change::Delete => check_path(cwd, path).and_then(|now| match now {
                Some(_) => fs::remove_file(path).map_err(|e| e.to_string()),
                None => Ok(()),
            }),
        };
        if let Err(reason) = result {
            failed.push((path.clone(), reason));
        }
    }
    failed
}

/// Replace `path` with `bytes` atomically, keeping its permissions when it exists.
fn write_back(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let parent = path
        .parent()
        .ok_or_else(|| io::Error::other("the path has no directory"))?;
    fs::create_dir_all(parent)?;
    let mut temp = tempfile::Builder::new()
        .prefix(".rewind")
        .tempfile_in(parent)?;
    temp.write_all(bytes)?;
    if let Ok(meta) = fs::metadata(path) {
        temp.as_file().set_permissions(meta.permissions())?;
    }
    temp.as_file().sync_all()?;
    temp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Files under `cwd` modified after `since` and not in `known`: what something other than the
/// file tools (a shell command, a person) may have changed. Best effort: a bounded walk that
/// skips `.git`, and only modification times, which a command can set as it likes.
pub fn changed_since(cwd: &Path, since: SystemTime, known: &[PathBuf]) -> Vec<PathBuf> {
    /// The walk looks at no more entries than this.
    const MAX_ENTRIES: usize = 20_000;
    // Times on disk can be coarser than the log's milliseconds.
    let since = since.checked_sub(Duration::from_millis(1)).unwrap_or(since);
    let mut found = Vec::new();
    let mut pending = vec![cwd.to_path_buf()];
    let mut seen = 0usize;
    while let Some(dir) = pending.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > MAX_ENTRIES {
                return found;
            }
            let Ok(meta) = entry.metadata() else { continue };
            let path = entry.path();
            if meta.is_dir() && entry.file_name() != ".git" {
                pending.push(path);
            } else if meta.is_file()
                && meta.modified().is_ok_and(|m| m > since)
                && !known.contains(&path)
            {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixture {
        _dir: tempfile::TempDir,
        cwd: PathBuf,
        outside: PathBuf,
        store: CheckpointStore,
    }

    fn fixture() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let cwd = root.join("project");
        let outside = root.join("outside");
        fs::create_dir_all(&cwd).unwrap();
        fs::create_dir_all(&outside).unwrap();
        let store = CheckpointStore::new(root.join("checkpoints"), 1 << 20);
        Fixture {
            _dir: dir,
            cwd,
            outside,
            store,
        }
    }

    fn kept(f: &Fixture, path: &Path, content: &str) -> FileCheckpoint {
        fs::write(path, content).unwrap();
        f.store.keep(path).unwrap()
    }

    #[test]
    fn restores_deletes_and_leaves_alone_what_matches() {
        let f = fixture();
        let a = f.cwd.join("a.txt");
        let b = f.cwd.join("sub/b.txt");
        let c = f.cwd.join("c.txt");
        let a_before = kept(&f, &a, "a then");
        fs::write(&a, "a now").unwrap();
        let b_before = FileCheckpoint {
            path: b.to_string_lossy().into_owned(),
            before: Before::Absent,
        };
        fs::create_dir_all(b.parent().unwrap()).unwrap();
        fs::write(&b, "new").unwrap();
        let c_before = kept(&f, &c, "same");
        let changes = plan(&f.cwd, &f.store, &[a_before, b_before, c_before]);
        let verbs: Vec<&str> = changes.iter().map(|c| c.change.verb()).collect();
        assert_eq!(verbs, ["restore", "delete", "unchanged"]);
        assert!(apply(&f.cwd, &changes).is_empty());
        assert_eq!(fs::read_to_string(&a).unwrap(), "a then");
        assert!(!b.exists());
        assert_eq!(fs::read_to_string(&c).unwrap(), "same");
    }

    /// Each attack, and the words its refusal must contain; nothing outside is touched.
    #[test]
    fn refuses_what_would_reach_outside_or_trust_a_changed_checkpoint() {
        let f = fixture();
        let secret = f.outside.join("secret");
        fs::write(&secret, "outside stays").unwrap();
        // A checkpointed file that is now a symlink to a file outside.
        let linked = f.cwd.join("linked.txt");
        let linked_before = kept(&f, &linked, "was a file");
        fs::remove_file(&linked).unwrap();
        std::os::unix::fs::symlink(&secret, &linked).unwrap();
        // A directory on the way that is now a symlink to outside.
        fs::create_dir_all(f.cwd.join("dir")).unwrap();
        let through = f.cwd.join("dir/file.txt");
        let through_before = kept(&f, &through, "inside");
        fs::remove_dir_all(f.cwd.join("dir")).unwrap();
        std::os::unix::fs::symlink(&f.outside, f.cwd.join("dir")).unwrap();
        // A tampered blob.
        let tampered = f.cwd.join("t.txt");
        let tampered_before = kept(&f, &tampered, "original");
        fs::write(&tampered, "edited").unwrap();
        if let Before::Blob { sha256, .. } = &tampered_before.before {
            fs::write(f.store.dir().join(sha256), "evil").unwrap();
        }
        let absent = |path: String| FileCheckpoint {
            path,
            before: Before::Absent,
        };
        let cases: Vec<(FileCheckpoint, &str)> = vec![
            (linked_before, "symbolic link"),
            (through_before, "symbolic link"),
            (tampered_before, "changed on disk"),
            (absent(secret.to_string_lossy().into_owned()), "outside"),
            (
                absent(format!("{}/../outside/secret", f.cwd.display())),
                "outside",
            ),
            (absent("relative.txt".into()), "outside"),
            (
                FileCheckpoint {
                    path: f.cwd.join("big").to_string_lossy().into_owned(),
                    before: Before::NotKept {
                        reason: "too big".into(),
                    },
                },
                "not kept",
            ),
        ];
        let checkpoints: Vec<FileCheckpoint> = cases.iter().map(|(c, _)| c.clone()).collect();
        let changes = plan(&f.cwd, &f.store, &checkpoints);
        for ((checkpoint, words), change) in cases.iter().zip(&changes) {
            match &change.change {
                Change::Refused(reason) => {
                    assert!(reason.contains(words), "{}: {reason}", checkpoint.path)
                }
                other => panic!("{} was not refused: {other:?}", checkpoint.path),
            }
        }
        assert!(apply(&f.cwd, &changes).is_empty());
        assert_eq!(fs::read_to_string(&secret).unwrap(), "outside stays");
        assert_eq!(fs::read_to_string(&tampered).unwrap(), "edited");
    }

    #[test]
    fn the_first_checkpoint_of_a_path_is_its_state_at_the_point() {
        let at = |path: &str, before: Before| FileCheckpoint {
            path: path.into(),
            before,
        };
        let first = first_per_path([
            at("/p/a", Before::Absent),
            at("/p/b", Before::Absent),
            at(
                "/p/a",
                Before::NotKept {
                    reason: "later".into(),
                },
            ),
        ]);
        assert_eq!(
            first,
            [at("/p/a", Before::Absent), at("/p/b", Before::Absent)]
        );
    }
}
