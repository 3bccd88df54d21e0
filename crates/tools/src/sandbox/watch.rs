//! What Landlock cannot refuse, seen instead: a sandboxed command may write anywhere under a
//! write root, including `.git/hooks`, `.git/config` and seedpod's project config, which run
//! commands *outside* the sandbox later (the person's own `git commit`, the next pod start).
//! Before and after each sandboxed command the shell tool compares those files; a change is
//! named in the result with [`TAMPER_NOTE`], which the pod turns into an alert for the person.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Starts the note a result carries when watched files changed; the pod looks for it.
pub const TAMPER_NOTE: &str = "[sandbox: the command changed files that make programs run \
                               commands outside the sandbox:";

/// Files (relative to a write root) whose change the person must hear about.
const WATCHED: &[&str] = &[
    ".git/config",
    ".gitattributes",
    ".gitmodules",
    ".seedpod/config.toml",
    ".vscode/tasks.json",
    ".vscode/settings.json",
];

/// A directory whose every entry is watched (hooks are run by name).
const WATCHED_DIRS: &[&str] = &[".git/hooks", ".seedpod/workflows"];

/// The state of each watched file: `None` when absent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Snapshot(BTreeMap<PathBuf, Option<(u64, i64, i64, u64)>>);

fn state(path: &Path) -> Option<(u64, i64, i64, u64)> {
    std::fs::symlink_metadata(path)
        .ok()
        .map(|m| (m.len(), m.mtime(), m.mtime_nsec(), m.ino()))
}

impl Snapshot {
    pub(crate) fn take(roots: &[PathBuf]) -> Snapshot {
        let mut files = BTreeMap::new();
        for root in roots {
            for name in WATCHED {
                let path = root.join(name);
                files.insert(path.clone(), state(&path));
            }
            for dir in WATCHED_DIRS {
                let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
                    continue;
                };
                for entry in entries.flatten() {
                    let path = entry.path();
                    files.insert(path.clone(), state(&path));
                }
            }
        }
        Snapshot(files)
    }

    /// Files that appeared, disappeared or changed between `self` and `after`.
    pub(crate) fn changed(&self, after: &Snapshot) -> Vec<PathBuf> {
        let mut changed: Vec<PathBuf> = after
            .0
            .iter()
            .filter(|(path, now)| self.0.get(*path).cloned().flatten() != **now)
            .map(|(path, _)| path.clone())
            .collect();
        changed.extend(
            self.0
                .iter()
                .filter(|(path, before)| before.is_some() && !after.0.contains_key(*path))
                .map(|(path, _)| path.clone()),
        );
        changed
    }
}

/// The note for a result whose command changed `changed`.
pub(crate) fn note(changed: &[PathBuf]) -> String {
    let list: Vec<String> = changed.iter().map(|p| p.display().to_string()).collect();
    format!(
        "{TAMPER_NOTE} {}. The person has been alerted and must review them; git and seedpod \
         read them outside the sandbox]",
        list.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_hook_and_a_changed_config_are_seen_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
        std::fs::write(root.join("src.rs"), "fn main() {}").unwrap();
        let roots = vec![root.clone()];
        let before = Snapshot::take(&roots);
        assert!(before.changed(&Snapshot::take(&roots)).is_empty());

        std::fs::write(root.join("src.rs"), "fn main() { }").unwrap();
        std::fs::write(root.join(".git/hooks/pre-commit"), "#!/bin/sh\ntouch x\n").unwrap();
        std::fs::write(root.join(".git/config"), "[core]\nfsmonitor = touch x\n").unwrap();
        let changed = before.changed(&Snapshot::take(&roots));
        assert_eq!(
            changed,
            vec![root.join(".git/config"), root.join(".git/hooks/pre-commit")]
        );
        assert!(note(&changed).starts_with(TAMPER_NOTE));
    }
}
