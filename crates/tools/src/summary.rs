//! One-line descriptions of tool calls for approval prompts and logs.
//!
//! They read the model's raw arguments leniently: a summary must be shown even for arguments
//! the tool itself would refuse.

use serde_json::Value;

use crate::file_tool::{cut_chars, thousands};

/// A summary longer than this many characters is cut.
const MAX_SUMMARY_CHARS: usize = 120;

pub fn call_summary(name: &str, arguments: &str) -> String {
    let args: Value = serde_json::from_str(arguments).unwrap_or(Value::Null);
    let text = |key: &str| args.get(key).and_then(Value::as_str);
    let detail = match name {
        "shell" => text("command").map(|command| {
            let mut lines = command.lines().filter(|l| !l.trim().is_empty());
            let first = lines.next().unwrap_or("").trim().to_owned();
            match lines.count() {
                0 => first,
                more => format!("{first} (+{more} more lines)"),
            }
        }),
        "write_file" => text("path").map(|path| match text("content") {
            Some(content) => format!("{path} ({} bytes)", thousands(content.len() as u64)),
            None => path.to_owned(),
        }),
        "edit_file" => text("path").map(|path| {
            let all = args.get("replace_all").and_then(Value::as_bool) == Some(true);
            if all {
                format!("{path} (replace all)")
            } else {
                path.to_owned()
            }
        }),
        "read_file" => text("path").map(|path| {
            let number = |key: &str| args.get(key).and_then(Value::as_u64);
            match (number("offset"), number("limit")) {
                (None, None) => path.to_owned(),
                (offset, Some(limit)) => {
                    let from = offset.unwrap_or(1);
                    format!(
                        "{path} (lines {from}-{})",
                        from.saturating_add(limit.saturating_sub(1))
                    )
                }
                (Some(offset), None) => format!("{path} (from line {offset})"),
            }
        }),
        "list_dir" => Some(text("path").unwrap_or(".").to_owned()),
        "glob" => text("pattern").map(|pattern| match text("path") {
            Some(path) => format!("{pattern} in {path}"),
            None => pattern.to_owned(),
        }),
        "grep" => text("pattern").map(|pattern| {
            let mut line = format!("/{pattern}/");
            if let Some(path) = text("path") {
                line.push_str(&format!(" in {path}"));
            }
            if let Some(glob) = text("glob") {
                line.push_str(&format!(" ({glob})"));
            }
            line
        }),
        // The subject line: what a person approves (the whole message is in the arguments).
        "git_commit" => text("message").map(|message| {
            let subject = message.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            let all = args.get("all").and_then(Value::as_bool) == Some(true);
            if all {
                format!("{} (every change)", subject.trim())
            } else {
                subject.trim().to_owned()
            }
        }),
        _ => None,
    };
    let detail = detail.unwrap_or_else(|| arguments.to_owned());
    // Said first, so no cut at the summary's length can hide it: wherever a summary goes
    // (events, history, `ls`, a desktop notification) the person sees what they would allow.
    let label = if name == "shell" && crate::shell::wants_unconfined(arguments) {
        "shell (leaves the sandbox)"
    } else {
        name
    };
    one_line(&format!("{label}: {detail}"))
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

    #[test]
    fn a_commit_is_summarised_by_its_subject() {
        assert_eq!(
            call_summary(
                "git_commit",
                r#"{"message": "\nFix the parser\n\nBecause."}"#
            ),
            "git_commit: Fix the parser"
        );
        assert_eq!(
            call_summary("git_commit", r#"{"message": "Add it", "all": true}"#),
            "git_commit: Add it (every change)"
        );
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
