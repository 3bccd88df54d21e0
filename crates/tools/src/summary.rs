//! One-line descriptions of tool calls for approval prompts and logs: the shape every tool's
//! summary is put in. What a tool's summary says is in its declaration (`ToolDecl::summary`,
//! beside the tool).
//!
//! They read the model's raw arguments leniently: a summary must be shown even for arguments
//! the tool itself would refuse.

use seedpod_protocol::{CallSummary, ToolDecl};
use serde_json::Value;

use crate::file_tool::cut_chars;

/// A summary longer than this many characters is cut.
const MAX_SUMMARY_CHARS: usize = 120;

/// The one line an approval shows for a call of tool `name` with `arguments`: `LABEL: DETAIL`,
/// as its declaration `decl` summarises it; its raw arguments when it has no declaration (an
/// MCP tool) or its declaration finds nothing better.
pub fn summary_line(decl: Option<&ToolDecl>, name: &str, arguments: &str) -> String {
    let args: Value = serde_json::from_str(arguments).unwrap_or(Value::Null);
    let summary = decl.map_or(CallSummary::raw(&args), |decl| (decl.summary)(&args));
    // The label is said first, so no cut at the summary's length can hide it: wherever a
    // summary goes (events, history, `ls`, a desktop notification) the person sees what they
    // would allow.
    let label = summary.label.unwrap_or(name);
    let detail = summary.detail.unwrap_or_else(|| arguments.to_owned());
    one_line(&format!("{label}: {detail}"))
}

/// Argument `key` of a call, when it is a string.
pub(crate) fn text<'a>(args: &'a Value, key: &str) -> Option<&'a str> {
    args.get(key).and_then(Value::as_str)
}

/// Control characters (newlines, escapes) flattened, and the length bounded.
fn one_line(text: &str) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    match cut_chars(&flat, MAX_SUMMARY_CHARS) {
        (kept, true) => format!("{kept}…"),
        (kept, false) => kept.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// As the pod summarises a call: by the declaration of the built-in tool of that name.
    fn call_summary(name: &str, arguments: &str) -> String {
        let decl = crate::BUILTIN_TOOLS.into_iter().find(|d| d.name == name);
        summary_line(decl, name, arguments)
    }

    #[test]
    fn summaries_are_one_short_line() {
        assert_eq!(
            call_summary("shell", r#"{"command": "cargo test"}"#),
            "shell: cargo test"
        );
        assert_eq!(
            call_summary(
                "shell",
                r#"{"command": "set -e\ncargo build\n\ncargo test\n"}"#
            ),
            "shell: set -e (+2 more lines)"
        );
        let content = "x".repeat(1_234);
        assert_eq!(
            call_summary(
                "write_file",
                &json!({"path": "src/a.rs", "content": content}).to_string()
            ),
            "write_file: src/a.rs (1,234 bytes)"
        );
        assert_eq!(
            call_summary(
                "edit_file",
                r#"{"path": "a.rs", "old": "a", "new": "b", "replace_all": true}"#
            ),
            "edit_file: a.rs (replace all)"
        );
        assert_eq!(
            call_summary(
                "read_file",
                r#"{"path": "a.rs", "offset": 10, "limit": 51}"#
            ),
            "read_file: a.rs (lines 10-60)"
        );
        assert_eq!(
            call_summary("read_file", r#"{"path": "a.rs"}"#),
            "read_file: a.rs"
        );
        assert_eq!(call_summary("list_dir", "{}"), "list_dir: .");
        let long = "x".repeat(300);
        assert!(
            call_summary(
                "shell",
                &format!(r#"{{"command": "curl {long} | sh", "sandbox": false}}"#)
            )
            .starts_with("shell (leaves the sandbox): curl")
        );
        assert_eq!(
            call_summary("glob", r#"{"pattern": "**/*.rs", "path": "src"}"#),
            "glob: **/*.rs in src"
        );
        assert_eq!(
            call_summary("grep", r#"{"pattern": "fn main", "glob": "*.rs"}"#),
            "grep: /fn main/ (*.rs)"
        );
        assert_eq!(
            call_summary("mcp_thing", "{\"a\":\n1}"),
            "mcp_thing: {\"a\": 1}"
        );
        let long = call_summary("shell", &json!({"command": "x".repeat(500)}).to_string());
        assert_eq!(long.chars().count(), MAX_SUMMARY_CHARS + 1);
        assert!(long.ends_with('…'));
    }
}
