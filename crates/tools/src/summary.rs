//! One-line descriptions of tool calls for approval prompts and logs, and the command prefix an
//! "approve always" answer for `shell` remembers.
//!
//! Both read the model's raw arguments leniently: a summary must be shown even for arguments
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
        _ => None,
    };
    let detail = detail.unwrap_or_else(|| arguments.to_owned());
    one_line(&format!("{name}: {detail}"))
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

/// The first word of a `shell` call's command, after leading `VAR=value` assignments.
///
/// `None` unless the command is one simple command whose program is spelled out: a list or
/// pipeline (`;`, `&&`, `|`, `&`, a newline), a command substitution, a redirection to a file,
/// a compound command (`if`, `(…)`, `{ …; }`) or a program name that is itself an expansion
/// (`$EDITOR`) all give `None`, and so do programs that exist to run other commands (`env`,
/// `sudo`, `bash`, `xargs`, …). Remembering "cargo" must not approve `cargo test && rm -rf ~`,
/// so a caller that matches new commands against remembered prefixes gets `None` (ask again)
/// for every command whose first word does not say all it will run. Descriptor duplication
/// (`2>&1`) is allowed.
pub fn shell_command_prefix(arguments: &str) -> Option<String> {
    let args: Value = serde_json::from_str(arguments).ok()?;
    let words = simple_command_words(args.get("command")?.as_str()?)?;
    let program = words.into_iter().find(|word| !is_assignment(word))?;
    if program.text.is_empty()
        || program.has_expansion
        || COMPOUND.contains(&program.text.as_str())
        || RUNS_ANOTHER_COMMAND.contains(&program.text.as_str())
    {
        return None;
    }
    Some(program.text)
}

/// Shell words that start a compound command rather than name a program.
const COMPOUND: &[&str] = &[
    "if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until", "do",
    "done", "function", "!", "[[", "]]", "{", "}", "coproc", "time",
];

/// Programs whose job is to run another command or script: remembering one of these would
/// approve everything, so they never make a prefix.
const RUNS_ANOTHER_COMMAND: &[&str] = &[
    "eval", "exec", "command", "builtin", "source", ".", "env", "sudo", "doas", "su", "nohup",
    "nice", "timeout", "xargs", "sh", "bash", "zsh", "dash", "fish",
];

struct Word {
    /// The word with quotes removed.
    text: String,
    /// `$` appeared outside single quotes: the word's value is only known at run time.
    has_expansion: bool,
    /// The raw word started with `NAME=` (unquoted), as an assignment does.
    raw_assignment: bool,
}

fn is_assignment(word: &Word) -> bool {
    word.raw_assignment
}

/// Interim: the words of one simple command without assignments, wrappers or expansions.
pub(crate) fn simple_words(command: &str) -> Option<Vec<String>> {
    let words = simple_command_words(command)?;
    if words.iter().any(|w| w.raw_assignment || w.has_expansion) {
        return None;
    }
    let program = words.first()?;
    if program.text.is_empty()
        || COMPOUND.contains(&program.text.as_str())
        || RUNS_ANOTHER_COMMAND.contains(&program.text.as_str())
        || command.contains('#')
    {
        return None;
    }
    Some(words.into_iter().map(|w| w.text).collect())
}

/// The words of one simple command, or `None` for anything more (see [`shell_command_prefix`]).
fn simple_command_words(command: &str) -> Option<Vec<Word>> {
    let mut words = Vec::new();
    let mut chars = command.chars().peekable();
    let mut word: Option<Word> = None;
    let mut raw = String::new();
    // A word exists once something was written for it (`''` is an empty word; a lone `#` or
    // trailing blank is none).
    let finish = |word: &mut Option<Word>, raw: &mut String, words: &mut Vec<Word>| {
        if let Some(mut w) = word.take()
            && !raw.is_empty()
        {
            w.raw_assignment = raw_is_assignment(raw);
            words.push(w);
        }
        raw.clear();
    };
    while let Some(c) = chars.next() {
        let current = word.get_or_insert_with(|| Word {
            text: String::new(),
            has_expansion: false,
            raw_assignment: false,
        });
        match c {
            ' ' | '\t' => {
                finish(&mut word, &mut raw, &mut words);
                continue;
            }
            '#' if raw.is_empty() => break,
            '\\' => {
                let escaped = chars.next()?;
                if escaped == '\n' {
                    continue;
                }
                raw.push(c);
                raw.push(escaped);
                current.text.push(escaped);
                continue;
            }
            '\'' => {
                raw.push(c);
                loop {
                    let q = chars.next()?;
                    if q == '\'' {
                        break;
                    }
                    current.text.push(q);
                }
                raw.push(c);
                continue;
            }
            '"' => {
                raw.push(c);
                loop {
                    match chars.next()? {
                        '"' => break,
                        '`' => return None,
                        '$' if chars.peek() == Some(&'(') => return None,
                        '$' => {
                            current.has_expansion = true;
                            current.text.push('$');
                        }
                        '\\' => {
                            let escaped = chars.next()?;
                            if !matches!(escaped, '"' | '\\' | '$' | '`' | '\n') {
                                current.text.push('\\');
                            }
                            current.text.push(escaped);
                        }
                        q => current.text.push(q),
                    }
                }
                raw.push(c);
                continue;
            }
            '>' | '<' => {
                // Only `N>&M` / `N<&M` / `>&-` (descriptor duplication) stays simple.
                let fd_prefix = raw.chars().all(|d| d.is_ascii_digit());
                if !fd_prefix || chars.next() != Some('&') {
                    return None;
                }
                let mut target = String::new();
                while let Some(&d) = chars.peek() {
                    if d.is_ascii_digit() || d == '-' {
                        target.push(d);
                        chars.next();
                    } else {
                        break;
                    }
                }
                if target.is_empty() {
                    return None;
                }
                // The redirection is not a word of the command.
                word = None;
                raw.clear();
                continue;
            }
            ';' | '|' | '&' | '\n' | '\r' | '`' | '(' | ')' => return None,
            '$' => {
                if chars.peek() == Some(&'(') {
                    return None;
                }
                current.has_expansion = true;
                current.text.push(c);
            }
            _ => current.text.push(c),
        }
        raw.push(c);
    }
    finish(&mut word, &mut raw, &mut words);
    Some(words)
}

fn raw_is_assignment(raw: &str) -> bool {
    let Some((name, _)) = raw.split_once('=') else {
        return false;
    };
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn prefix(command: &str) -> Option<String> {
        shell_command_prefix(&json!({ "command": command }).to_string())
    }

    #[test]
    fn the_prefix_is_the_program_of_a_simple_command() {
        assert_eq!(prefix("cargo test -p x").as_deref(), Some("cargo"));
        assert_eq!(
            prefix("  RUST_LOG=debug X='a b' cargo test").as_deref(),
            Some("cargo")
        );
        assert_eq!(prefix("./run.sh --fast").as_deref(), Some("./run.sh"));
        assert_eq!(prefix("'my tool' arg").as_deref(), Some("my tool"));
        assert_eq!(prefix("cargo test 2>&1").as_deref(), Some("cargo"));
        assert_eq!(prefix("grep -n 'a|b' src/*.rs").as_deref(), Some("grep"));
        assert_eq!(prefix("echo \"it's; fine\"").as_deref(), Some("echo"));
        assert_eq!(prefix("ls # comment; here").as_deref(), Some("ls"));
    }

    #[test]
    fn anything_more_than_one_spelled_out_program_has_no_prefix() {
        for command in [
            "cargo test && rm -rf ~",
            "cargo test; rm x",
            "cargo test | tee out",
            "sleep 1 &",
            "cargo test\nrm x",
            "echo $(rm x)",
            "echo \"$(rm x)\"",
            "echo `rm x`",
            "cargo test > /etc/passwd",
            "cat < secret",
            "(rm x)",
            "{ rm x; }",
            "if true; then rm x; fi",
            "$EDITOR file",
            "X=1",
            "",
            "   ",
            "echo 'unclosed",
            "env X=1 rm x",
            "bash -c 'rm x'",
            "sudo rm x",
        ] {
            assert_eq!(prefix(command), None, "{command:?}");
        }
        assert_eq!(shell_command_prefix("not json"), None);
        assert_eq!(shell_command_prefix(r#"{"command": 3}"#), None);
        assert_eq!(shell_command_prefix(r#"{"cmd": "ls"}"#), None);
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
