//! The directory walk `glob` and `grep` share: ripgrep's walker, so `.gitignore`, `.ignore` and
//! git's excludes are honoured as people expect (also outside a git checkout); symlinks are not
//! followed and denied paths are never entered, so a walk stays inside what the scope allows.

use std::path::{Path, PathBuf};

use ignore::WalkBuilder;
use seedpod_engine::ToolOutput;

use crate::file_tool::{check, io_error};
use crate::scope::{Access, Scope};

/// Entries a walk visits at most; a huge tree is cut rather than searched for minutes.
pub(crate) const MAX_VISITED: usize = 100_000;

/// A sorted (so deterministic) walk from `root`, which the caller has checked for reading.
pub(crate) fn builder(scope: &Scope, root: &Path) -> WalkBuilder {
    let scope = scope.clone();
    let mut builder = WalkBuilder::new(root);
    builder
        .hidden(false)
        .require_git(false)
        .follow_links(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(move |entry| {
            entry.file_name() != ".git" && scope.allows(entry.path(), Access::Read)
        });
    builder
}

/// How a found path is shown: relative to the working directory when inside it, so the model
/// can pass it straight to another tool.
pub(crate) fn display(scope: &Scope, path: &Path) -> String {
    match path.strip_prefix(scope.cwd()) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".to_owned(),
        Ok(rel) => rel.display().to_string(),
        Err(_) => path.display().to_string(),
    }
}

/// The note appended when a walk stopped at [`MAX_VISITED`].
pub(crate) fn visited_note() -> String {
    format!(
        "[stopped after visiting {} entries; give a narrower path]\n",
        crate::file_tool::thousands(MAX_VISITED as u64)
    )
}

/// Where a walk of `tool` starts: `path` (default `.`) checked for reading and existing.
/// Returns it with the form to show in messages, or the error result for the model.
pub(crate) fn search_root<'a>(
    scope: &Scope,
    tool: &str,
    path: Option<&'a str>,
) -> Result<(PathBuf, &'a str), ToolOutput> {
    let shown = path.unwrap_or(".");
    let root = check(scope, tool, shown, Access::Read)?;
    std::fs::metadata(&root).map_err(|err| io_error("search", shown, &err))?;
    Ok((root, shown))
}
