//! The files inside a write root that a sandboxed command must not change, because programs
//! the person runs later read them and run what they say: git's config, hooks and the files
//! that point git at another config (`commondir`, a `.git` file, worktree and submodule git
//! directories), attributes and submodules, seedpod's project config and workflows, and editor
//! tasks and settings. One list, used twice: those that exist are mounted read-only for the
//! command (`jail.rs`), and all of them are compared before and after it (`watch.rs`), which
//! catches one the command creates.

use std::path::{Path, PathBuf};

/// Paths relative to a write root. Directories are protected whole.
const PROTECTED: &[&str] = &[
    ".git/config",
    ".git/config.worktree",
    ".git/commondir",
    ".git/hooks",
    ".git/info",
    ".gitattributes",
    ".gitmodules",
    ".seedpod/config.toml",
    ".seedpod/workflows",
    ".vscode",
    ".idea",
];

/// In each git directory under `.git/worktrees/*` and `.git/modules/*` (linked worktrees and
/// submodules), the files that decide what git runs or which config it reads.
const PER_GIT_DIR: &[&str] = &["config", "config.worktree", "commondir", "gitdir", "hooks"];

/// Every protected path under `root`, present or not. A `.git` that is a file (a linked
/// worktree's or a submodule's pointer to its git directory) is protected itself.
pub(crate) fn paths(root: &Path) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = PROTECTED.iter().map(|p| root.join(p)).collect();
    let git = root.join(".git");
    if std::fs::symlink_metadata(&git).is_ok_and(|m| m.is_file()) {
        paths.push(git.clone());
    }
    for nested in ["worktrees", "modules"] {
        let Ok(entries) = std::fs::read_dir(git.join(nested)) else {
            continue;
        };
        for entry in entries.flatten() {
            for name in PER_GIT_DIR {
                paths.push(entry.path().join(name));
            }
        }
    }
    paths
}

/// Every protected path under each of `roots`.
pub(crate) fn all(roots: &[PathBuf]) -> Vec<PathBuf> {
    roots.iter().flat_map(|r| paths(r)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worktree_pointer_and_nested_git_dirs_are_protected() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join(".git/worktrees/feature")).unwrap();
        std::fs::create_dir_all(root.join(".git/modules/lib")).unwrap();
        let paths = paths(root);
        for expected in [
            ".git/config",
            ".git/commondir",
            ".git/hooks",
            ".gitattributes",
            ".seedpod/config.toml",
            ".git/worktrees/feature/commondir",
            ".git/worktrees/feature/gitdir",
            ".git/modules/lib/config",
            ".git/modules/lib/hooks",
        ] {
            assert!(paths.contains(&root.join(expected)), "{expected}");
        }
        assert!(
            !paths.contains(&root.join(".git")),
            ".git is a directory here"
        );

        let linked = tempfile::tempdir().unwrap();
        std::fs::write(linked.path().join(".git"), "gitdir: /elsewhere\n").unwrap();
        assert!(paths_of(linked.path()).contains(&linked.path().join(".git")));
    }

    fn paths_of(root: &Path) -> Vec<PathBuf> {
        paths(root)
    }
}
