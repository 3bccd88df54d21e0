//! `list_dir`: one directory's entries, sorted.

use schemars::JsonSchema;
use seedpod_engine::ToolOutput;
use seedpod_protocol::{
    CallSummary, Effect, GuardScan, InFlush, InSmallPrompt, Policy, Preview, ToolDecl,
};
use serde::Deserialize;
use serde_json::Value;

use crate::checkpoint::CheckpointStore;
use crate::file_tool::{FileTool, check, io_error, thousands};
use crate::scope::{Access, Scope};
use crate::summary::text;

/// Entries shown per call; a larger directory is cut, with a note.
pub(crate) const MAX_ENTRIES: usize = 500;

/// The declaration every list of tools derives from (`seedpod_protocol::tool_decl`).
pub(crate) const DECL: ToolDecl = ToolDecl {
    name: "list_dir",
    default_policy: Policy::Allow,
    effect: Effect::ReadOnly,
    note: Some(include_str!("../protocols/list_dir.md")),
    small_note: Some("one directory; glob finds files anywhere below."),
    in_small_prompt: InSmallPrompt::Always,
    summary: summarise,
    guard: GuardScan::Everything,
    preview: Preview::Arguments,
    in_flush: InFlush::Never,
};

pub(crate) struct ListDir;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListDirArgs {
    /// Relative to the working directory, or absolute. Default: ".".
    #[serde(default = "dot")]
    path: String,
}

fn dot() -> String {
    ".".to_owned()
}

impl FileTool for ListDir {
    const DECL: ToolDecl = DECL;
    const DESCRIPTION: &'static str = "List one directory's entries, sorted, up to 500: \
        directories end with `/`, symlinks show `name -> target`. Hidden and git-ignored \
        entries are included.";
    type Args = ListDirArgs;

    fn run(scope: &Scope, args: ListDirArgs, _: Option<&CheckpointStore>) -> ToolOutput {
        let path = match check(scope, Self::NAME, &args.path, Access::Read) {
            Ok(path) => path,
            Err(output) => return output,
        };
        let shown = &args.path;
        // The directory is opened without following symlinks and listed through that handle,
        // so one swapped for a link after the check is not listed.
        let dir = match crate::beneath::open_dir(&path) {
            Ok(dir) => dir,
            Err(crate::beneath::OpenError::Io(err))
                if err.kind() == std::io::ErrorKind::NotADirectory =>
            {
                return ToolOutput::error(format!(
                    "\"{shown}\" is a file, not a directory; use read_file to read it"
                ));
            }
            Err(err) => return crate::file_tool::open_error("list", shown, &err),
        };
        let entries = match std::fs::read_dir(crate::beneath::listing_path(&dir, &path)) {
            Ok(entries) => entries,
            Err(err) if err.kind() == std::io::ErrorKind::NotADirectory => {
                return ToolOutput::error(format!(
                    "\"{shown}\" is a file, not a directory; use read_file to read it"
                ));
            }
            Err(err) => return io_error("list", shown, &err),
        };
        let mut names = Vec::new();
        for entry in entries {
            let entry = match entry {
                Ok(entry) => entry,
                Err(err) => return io_error("list", shown, &err),
            };
            let mut name = entry.file_name().to_string_lossy().into_owned();
            match entry.file_type() {
                Ok(kind) if kind.is_dir() => name.push('/'),
                Ok(kind) if kind.is_symlink() => {
                    if let Ok(target) = std::fs::read_link(entry.path()) {
                        name.push_str(&format!(" -> {}", target.display()));
                    }
                }
                Ok(_) | Err(_) => {}
            }
            names.push(name);
        }
        if names.is_empty() {
            return ToolOutput::ok(format!("(\"{shown}\" is empty)"));
        }
        names.sort();
        let total = names.len();
        names.truncate(MAX_ENTRIES);
        let mut text = names.join("\n");
        text.push('\n');
        if total > MAX_ENTRIES {
            text.push_str(&format!(
                "[showing the first {MAX_ENTRIES} of {} entries; use glob with a pattern to \
                 narrow]\n",
                thousands(total as u64)
            ));
        }
        ToolOutput::ok(text)
    }
}

/// `list_dir: src`, and `.` when no path is given (the default).
fn summarise(args: &Value) -> CallSummary {
    CallSummary::detail(Some(text(args, "path").unwrap_or(".").to_owned()))
}

#[cfg(test)]
mod tests {
    use crate::test_support::Fixture;

    #[tokio::test]
    async fn lists_sorted_with_directories_marked() {
        let f = Fixture::new();
        f.write("b.txt", "");
        f.write(".hidden", "");
        f.write("a/inner.txt", "");
        std::os::unix::fs::symlink("b.txt", f.path("link")).unwrap();
        assert_eq!(
            f.ok("list_dir", "{}").await,
            ".hidden\na/\nb.txt\nlink -> b.txt\n"
        );
        assert_eq!(f.ok("list_dir", r#"{"path": "a"}"#).await, "inner.txt\n");
        f.write("empty/.keep", "");
        std::fs::remove_file(f.path("empty/.keep")).unwrap();
        assert_eq!(
            f.ok("list_dir", r#"{"path": "empty"}"#).await,
            "(\"empty\" is empty)"
        );
    }

    #[tokio::test]
    async fn large_directories_are_cut_with_a_note() {
        let f = Fixture::new();
        for n in 0..510 {
            f.write(&format!("many/f{n:04}"), "");
        }
        let out = f.ok("list_dir", r#"{"path": "many"}"#).await;
        assert_eq!(out.lines().count(), 501);
        assert!(out.lines().nth(499) == Some("f0499"), "{out}");
        assert!(out.ends_with(
            "[showing the first 500 of 510 entries; use glob with a pattern to narrow]\n"
        ));
    }

    #[tokio::test]
    async fn files_missing_paths_and_escapes_are_errors() {
        let f = Fixture::new();
        f.write("a.txt", "");
        let err = f.err("list_dir", r#"{"path": "a.txt"}"#).await;
        assert!(err.contains("is a file, not a directory"), "{err}");
        let err = f.err("list_dir", r#"{"path": "nope"}"#).await;
        assert!(err.contains("does not exist"), "{err}");
        let err = f.err("list_dir", r#"{"path": ".."}"#).await;
        assert!(err.contains("outside this pod's scope"), "{err}");
        let err = f.err("list_dir", r#"{"path": 1}"#).await;
        assert!(err.contains("invalid type"), "{err}");
    }
}
