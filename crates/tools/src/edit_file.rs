//! `edit_file`: replace an exact piece of text in a file, atomically.

use schemars::JsonSchema;
use seedpod_engine::ToolOutput;
use seedpod_protocol::{
    CallSummary, Effect, GuardScan, InFlush, InSmallPrompt, Policy, Preview, ToolDecl,
};
use serde::Deserialize;
use serde_json::Value;

use crate::atomic::write_atomic;
use crate::checkpoint::CheckpointStore;
use crate::file_tool::{
    FileTool, WithCheckpoint, check, keep_before, looks_binary, open_error, thousands,
};
use crate::scope::{Access, Scope};
use crate::summary::text;

/// How many occurrence line numbers an ambiguity error lists.
const MAX_LISTED_LINES: usize = 10;

/// The declaration every list of tools derives from (`seedpod_protocol::tool_decl`).
pub(crate) const DECL: ToolDecl = ToolDecl {
    name: "edit_file",
    default_policy: Policy::Allow,
    effect: Effect::Changes,
    note: Some(include_str!("../protocols/edit_file.md")),
    small_note: Some(
        "old must match the file exactly once; copy it from read_file without the line numbers.",
    ),
    in_small_prompt: InSmallPrompt::Always,
    summary: summarise,
    guard: GuardScan::Everything,
    preview: Preview::FileEdit,
    in_flush: InFlush::Offered,
};

pub(crate) struct EditFile;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct EditFileArgs {
    /// Relative to the working directory, or absolute.
    path: String,
    /// The exact text to replace, whitespace and indentation included.
    old: String,
    /// The text to put in its place.
    new: String,
    /// Replace every occurrence instead of requiring exactly one.
    #[serde(default)]
    replace_all: bool,
}

impl FileTool for EditFile {
    const DECL: ToolDecl = DECL;
    const DESCRIPTION: &'static str = "Replace exact text in a file, atomically: old must \
        occur exactly once (include surrounding lines to make it unique), or set replace_all.";
    type Args = EditFileArgs;

    fn run(scope: &Scope, args: EditFileArgs, checkpoints: Option<&CheckpointStore>) -> ToolOutput {
        let path = match check(scope, Self::NAME, &args.path, Access::Write) {
            Ok(path) => path,
            Err(output) => return output,
        };
        let shown = &args.path;
        if args.old.is_empty() {
            return ToolOutput::error(
                "old is empty; give the exact text to replace (use write_file to create a file)",
            );
        }
        if args.old == args.new {
            return ToolOutput::error("old and new are the same text; there is nothing to change");
        }
        let bytes = match crate::beneath::open_read(&path).and_then(|mut file| {
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(&mut file, &mut bytes)
                .map(|_| bytes)
                .map_err(crate::beneath::OpenError::Io)
        }) {
            Ok(bytes) => bytes,
            Err(err) => return open_error("read", shown, &err),
        };
        if looks_binary(&bytes) {
            return ToolOutput::error(format!(
                "\"{shown}\" is a binary file; edit_file edits text"
            ));
        }
        let Ok(text) = String::from_utf8(bytes) else {
            return ToolOutput::error(format!(
                "\"{shown}\" is not UTF-8 text; edit_file only edits UTF-8 files"
            ));
        };
        let lines = occurrence_lines(&text, &args.old);
        match (lines.len(), args.replace_all) {
            (0, _) => ToolOutput::error(format!(
                "old was not found in \"{shown}\" (0 occurrences). Read the file again \
                 (read_file) and copy the exact text, including whitespace and indentation, \
                 without the line-number prefix."
            )),
            (1, _) | (_, true) => {
                let edited = text.replace(&args.old, &args.new);
                let kept = match keep_before(checkpoints, &path, shown) {
                    Ok(kept) => kept,
                    Err(output) => return output,
                };
                if let Err(err) = write_atomic(&path, edited.as_bytes()) {
                    return open_error("write", shown, &err);
                }
                let count = lines.len();
                let which = if count == 1 {
                    "occurrence"
                } else {
                    "occurrences"
                };
                ToolOutput::ok(format!(
                    "replaced {count} {which} in \"{shown}\" (line {}); the file now has {} bytes",
                    list_lines(&lines),
                    thousands(edited.len() as u64)
                ))
                .with_checkpoint(kept)
            }
            (count, false) => ToolOutput::error(format!(
                "old occurs {count} times in \"{shown}\" (lines {}); nothing was changed. \
                 Include more surrounding text so it occurs exactly once, or set replace_all \
                 to true to replace every occurrence.",
                list_lines(&lines)
            )),
        }
    }
}

/// The 1-based line on which each non-overlapping occurrence of `needle` starts.
fn occurrence_lines(text: &str, needle: &str) -> Vec<usize> {
    let mut lines = Vec::new();
    let mut line = 1;
    let mut counted_to = 0;
    for (at, _) in text.match_indices(needle) {
        line += text[counted_to..at].matches('\n').count();
        counted_to = at;
        lines.push(line);
    }
    lines
}

fn list_lines(lines: &[usize]) -> String {
    let mut shown: Vec<String> = lines
        .iter()
        .take(MAX_LISTED_LINES)
        .map(|l| l.to_string())
        .collect();
    if lines.len() > MAX_LISTED_LINES {
        shown.push("…".to_owned());
    }
    shown.join(", ")
}

/// `edit_file: a.rs (replace all)`.
fn summarise(args: &Value) -> CallSummary {
    CallSummary::detail(text(args, "path").map(|path| {
        if args.get("replace_all").and_then(Value::as_bool) == Some(true) {
            format!("{path} (replace all)")
        } else {
            path.to_owned()
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::occurrence_lines;
    use crate::test_support::{Fixture, json};
    use serde_json::json as j;

    const TEXT: &str = "fn a() {\n    x();\n}\nfn b() {\n    x();\n}\nfn c() {}\n";

    #[test]
    fn occurrences_are_located_by_line() {
        assert_eq!(occurrence_lines(TEXT, "x();"), [2, 5]);
        assert_eq!(occurrence_lines("aaaa", "aa"), [1, 1]);
        assert!(occurrence_lines(TEXT, "y").is_empty());
    }

    #[tokio::test]
    async fn replaces_a_unique_occurrence() {
        let f = Fixture::new();
        f.write("a.rs", TEXT);
        let args = json(j!({"path": "a.rs", "old": "fn c() {}", "new": "fn c() { y(); }"}));
        let out = f.ok("edit_file", &args).await;
        assert_eq!(
            out,
            "replaced 1 occurrence in \"a.rs\" (line 7); the file now has 56 bytes"
        );
        assert_eq!(f.read("a.rs"), TEXT.replace("fn c() {}", "fn c() { y(); }"));
    }

    #[tokio::test]
    async fn zero_occurrences_is_an_error_that_says_not_found() {
        let f = Fixture::new();
        f.write("a.rs", TEXT);
        let args = json(j!({"path": "a.rs", "old": "fn d()", "new": "fn e()"}));
        let err = f.err("edit_file", &args).await;
        assert!(
            err.starts_with("old was not found in \"a.rs\" (0 occurrences)"),
            "{err}"
        );
        assert_eq!(f.read("a.rs"), TEXT);
    }

    #[tokio::test]
    async fn many_occurrences_need_replace_all() {
        let f = Fixture::new();
        f.write("a.rs", TEXT);
        let args = json(j!({"path": "a.rs", "old": "    x();", "new": "    z();"}));
        let err = f.err("edit_file", &args).await;
        assert!(
            err.starts_with("old occurs 2 times in \"a.rs\" (lines 2, 5)"),
            "{err}"
        );
        assert!(err.contains("set replace_all"), "{err}");
        assert_eq!(f.read("a.rs"), TEXT, "nothing changed");

        let args =
            json(j!({"path": "a.rs", "old": "    x();", "new": "    z();", "replace_all": true}));
        let out = f.ok("edit_file", &args).await;
        assert!(
            out.starts_with("replaced 2 occurrences in \"a.rs\" (line 2, 5)"),
            "{out}"
        );
        assert_eq!(f.read("a.rs"), TEXT.replace("x();", "z();"));
    }

    #[tokio::test]
    async fn refuses_empty_old_missing_files_and_escapes() {
        let f = Fixture::new();
        f.write("a.rs", TEXT);
        let err = f
            .err("edit_file", r#"{"path": "a.rs", "old": "", "new": "x"}"#)
            .await;
        assert!(err.contains("old is empty"), "{err}");
        let err = f
            .err("edit_file", r#"{"path": "b.rs", "old": "a", "new": "x"}"#)
            .await;
        assert!(err.contains("does not exist"), "{err}");
        std::fs::write(f.outside.join("o.rs"), TEXT).unwrap();
        let err = f
            .err(
                "edit_file",
                r#"{"path": "../outside/o.rs", "old": "fn c() {}", "new": "x"}"#,
            )
            .await;
        assert!(err.contains("outside this pod's scope"), "{err}");
        let err = f
            .err(
                "edit_file",
                r#"{"path": "a.rs", "old": "a", "new": "b", "all": true}"#,
            )
            .await;
        assert!(err.contains("unknown field `all`"), "{err}");
        let err = f
            .err(
                "edit_file",
                r#"{"path": "a.rs", "old": "a", "new": "b", "replace_all": "yes"}"#,
            )
            .await;
        assert!(err.contains("expected a boolean"), "{err}");
    }
}
