//! The second line behind the read-only mounts (`jail.rs`): before and after each sandboxed
//! command the shell tool compares every protected path (`protect.rs`) by content, not by size
//! and time, which a rewrite can keep. A protected file cannot change while mounted read-only,
//! so a change here means one the mounts could not cover: a protected file or directory the
//! command *created* (there was nothing to mount over). Those are removed again; anything else
//! that changed is named in the result with [`TAMPER_NOTE`], which the pod turns into an alert
//! for the person. Nothing the command started is alive by then (its PID namespace is gone), so
//! no write can come after the check.

use seedpod_protocol::SandboxFinding;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::protect;

/// Starts the note a result carries when protected files changed; the pod looks for it.
pub const TAMPER_NOTE: &str = "[sandbox: the command changed files that make programs run \
                               commands outside the sandbox:";

/// Starts the note a result carries when the command created protected files, which were
/// removed again; the pod alerts the person to the attempt.
pub const REVERTED_NOTE: &str = "[sandbox: these files are read-only for commands";

/// Bytes of a file hashed; past this the length and the hash of the first part stand for it.
const MAX_HASHED: u64 = 4 * 1024 * 1024;
/// Entries of a protected directory compared, at most (a hooks directory holds a dozen).
const MAX_ENTRIES: usize = 1_000;

/// What is at a path: nothing, a directory, a symlink's target or a file's content hash.
#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    Directory,
    Link(PathBuf),
    File { len: u64, sha256: [u8; 32] },
    Other,
}

/// The state of each protected path and of each entry of a protected directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Snapshot(BTreeMap<PathBuf, State>);

/// How a protected path differs after the command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Change {
    /// It did not exist before: removed again after the call.
    Created(PathBuf),
    /// It existed and is now different or gone.
    Changed(PathBuf),
}

fn state(path: &Path) -> Option<State> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    let kind = meta.file_type();
    if kind.is_symlink() {
        return Some(State::Link(std::fs::read_link(path).unwrap_or_default()));
    }
    if kind.is_dir() {
        return Some(State::Directory);
    }
    if !kind.is_file() {
        return Some(State::Other);
    }
    let mut hasher = Sha256::new();
    if let Ok(file) = std::fs::File::open(path) {
        let mut buf = [0u8; 16 * 1024];
        let mut reader = file.take(MAX_HASHED);
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            hasher.update(&buf[..n]);
        }
    }
    Some(State::File {
        len: meta.len(),
        sha256: hasher.finalize().into(),
    })
}

fn record(files: &mut BTreeMap<PathBuf, State>, path: &Path, depth: usize) {
    let Some(found) = state(path) else { return };
    let is_dir = found == State::Directory;
    files.insert(path.to_path_buf(), found);
    if !is_dir || depth == 0 {
        return;
    }
    let Ok(entries) = std::fs::read_dir(path) else {
        return;
    };
    for entry in entries.flatten().take(MAX_ENTRIES) {
        record(files, &entry.path(), depth - 1);
    }
}

impl Snapshot {
    pub(crate) fn take(roots: &[PathBuf]) -> Snapshot {
        let mut files = BTreeMap::new();
        for path in protect::all(roots) {
            record(&mut files, &path, 2);
        }
        Snapshot(files)
    }

    /// What appeared, disappeared or changed between `self` and `after`. A path created under
    /// a created directory is left to the directory.
    pub(crate) fn changes(&self, after: &Snapshot) -> Vec<Change> {
        let mut changes: Vec<Change> = Vec::new();
        for (path, now) in &after.0 {
            match self.0.get(path) {
                Some(before) if before == now => {}
                Some(_) => changes.push(Change::Changed(path.clone())),
                None => {
                    let under_created = changes
                        .iter()
                        .any(|c| matches!(c, Change::Created(dir) if path.starts_with(dir)));
                    if !under_created {
                        changes.push(Change::Created(path.clone()));
                    }
                }
            }
        }
        for path in self.0.keys() {
            if !after.0.contains_key(path) {
                changes.push(Change::Changed(path.clone()));
            }
        }
        changes
    }
}

/// Remove what the command created among the protected paths; returns the paths of changes
/// that remain for the person to review, and the created ones that could not be removed.
pub(crate) fn undo_created(changes: &[Change]) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let (mut removed, mut remain) = (Vec::new(), Vec::new());
    for change in changes {
        match change {
            Change::Created(path) => {
                let gone = match std::fs::symlink_metadata(path) {
                    Ok(m) if m.is_dir() => std::fs::remove_dir_all(path).is_ok(),
                    Ok(_) => std::fs::remove_file(path).is_ok(),
                    Err(_) => true,
                };
                if gone {
                    removed.push(path.clone());
                } else {
                    remain.push(path.clone());
                }
            }
            Change::Changed(path) => remain.push(path.clone()),
        }
    }
    (removed, remain)
}

/// What a command that created `removed` (taken away again) and changed `remain` is reported
/// as: the findings the pod alerts from, in the order their notes are shown.
pub(crate) fn findings(removed: &[PathBuf], remain: &[PathBuf]) -> Vec<SandboxFinding> {
    let strings = |paths: &[PathBuf]| -> Vec<String> {
        paths.iter().map(|p| p.display().to_string()).collect()
    };
    let mut findings = Vec::new();
    if !remain.is_empty() {
        findings.push(SandboxFinding::Tampered {
            paths: strings(remain),
        });
    }
    if !removed.is_empty() {
        findings.push(SandboxFinding::Reverted {
            paths: strings(removed),
        });
    }
    findings
}

/// The line a result carries for `finding` (the model reads it; the person is alerted with
/// the same words).
pub fn finding_note(finding: &SandboxFinding) -> String {
    match finding {
        SandboxFinding::Tampered { paths } => format!(
            "{TAMPER_NOTE} {}. The person has been alerted and must review them; git and \
             seedpod read them outside the sandbox]",
            paths.join(", ")
        ),
        SandboxFinding::Reverted { paths } => format!(
            "{REVERTED_NOTE}, because git, seedpod or an editor would run what they say outside \
             the sandbox; the command created {}, which was removed again. A person can make \
             such a change]",
            paths.join(", ")
        ),
        SandboxFinding::ReachedForSeedpod => super::reach::NOTE.to_string(),
        SandboxFinding::Unknown => {
            "[sandbox: the command did something the person should review]".into()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_same_size_rewrite_a_new_hook_and_commondir_are_seen_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        std::fs::write(root.join(".git/config"), "[core]\n\tbare = false\n").unwrap();
        std::fs::write(root.join("src.rs"), "fn main() {}").unwrap();
        let roots = vec![root.clone()];
        let before = Snapshot::take(&roots);
        assert!(before.changes(&Snapshot::take(&roots)).is_empty());

        std::fs::write(root.join("src.rs"), "fn main() { }").unwrap();
        std::fs::write(root.join(".git/hooks/pre-commit"), "#!/bin/sh\ntouch x\n").unwrap();
        // The same length, and the modification time set back: only the content tells.
        let meta = std::fs::metadata(root.join(".git/config")).unwrap();
        std::fs::write(root.join(".git/config"), "[core]\n\tbare = fals3\n").unwrap();
        let file = std::fs::File::options()
            .write(true)
            .open(root.join(".git/config"))
            .unwrap();
        file.set_modified(meta.modified().unwrap()).unwrap();
        std::fs::write(root.join(".git/commondir"), "/elsewhere\n").unwrap();

        let changes = before.changes(&Snapshot::take(&roots));
        assert_eq!(
            changes,
            vec![
                Change::Created(root.join(".git/commondir")),
                Change::Changed(root.join(".git/config")),
                Change::Created(root.join(".git/hooks/pre-commit")),
            ]
        );
        let (removed, remain) = undo_created(&changes);
        assert_eq!(remain, vec![root.join(".git/config")]);
        assert_eq!(removed.len(), 2);
        assert!(!root.join(".git/commondir").exists());
        assert!(!root.join(".git/hooks/pre-commit").exists());
        let notes: Vec<String> = findings(&removed, &remain)
            .iter()
            .map(finding_note)
            .collect();
        assert!(notes[0].starts_with(TAMPER_NOTE) && notes[0].contains(".git/config"));
        assert!(notes[1].starts_with(REVERTED_NOTE) && notes[1].contains("pre-commit"));
    }
}
