//! `read_file`: a text file's lines, numbered, a bounded window at a time.

use std::io::{self, BufRead, BufReader, Read};

use schemars::JsonSchema;
use seedpod_engine::ToolOutput;
use seedpod_protocol::{
    CallSummary, Effect, GuardScan, InFlush, InSmallPrompt, Policy, Preview, ToolDecl,
};
use serde::Deserialize;
use serde_json::Value;

use crate::checkpoint::CheckpointStore;
use crate::file_tool::{
    BINARY_SNIFF_BYTES, FileTool, check, cut_chars, io_error, looks_binary, open_error, thousands,
};
use crate::scope::{Access, Scope};
use crate::summary::text;

/// Lines shown when the call gives no `limit`.
pub(crate) const DEFAULT_LINES: u64 = 2_000;
/// Most bytes of numbered output one call returns, whatever `limit` says.
pub(crate) const MAX_OUTPUT_BYTES: usize = 256 * 1024;
/// Longer lines (minified code, data) are cut so one line cannot use up the window.
pub(crate) const MAX_LINE_CHARS: usize = 2_000;

/// The declaration every list of tools derives from (`seedpod_protocol::tool_decl`).
pub(crate) const DECL: ToolDecl = ToolDecl {
    name: "read_file",
    default_policy: Policy::Allow,
    effect: Effect::ReadOnly,
    note: Some(include_str!("../protocols/read_file.md")),
    small_note: Some(
        "lines come numbered (the number is not content); for a big file, grep first and read with offset and limit.",
    ),
    in_small_prompt: InSmallPrompt::Always,
    summary: summarise,
    guard: GuardScan::Everything,
    preview: Preview::Arguments,
    in_flush: InFlush::Offered,
};

pub(crate) struct ReadFile;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReadFileArgs {
    /// Relative to the working directory, or absolute.
    path: String,
    /// The first line to show, counting from 1. Default: 1.
    #[schemars(range(min = 1))]
    offset: Option<u64>,
    /// The most lines to show. Default: 2000.
    #[schemars(range(min = 1))]
    limit: Option<u64>,
}

impl FileTool for ReadFile {
    const DECL: ToolDecl = DECL;
    const DESCRIPTION: &'static str = "Read a text file, its lines numbered \
        (`   12\\tcontent`; the number is not content): up to 2000 lines or 256 KiB a call, \
        with a closing note giving the offset to continue from. Binary files are refused.";
    type Args = ReadFileArgs;

    fn run(scope: &Scope, args: ReadFileArgs, _: Option<&CheckpointStore>) -> ToolOutput {
        let path = match check(scope, Self::NAME, &args.path, Access::Read) {
            Ok(path) => path,
            Err(output) => return output,
        };
        let offset = args.offset.unwrap_or(1);
        let limit = args.limit.unwrap_or(DEFAULT_LINES);
        if offset == 0 || limit == 0 {
            return ToolOutput::error(
                "offset and limit count from 1 (offset 1 is the first line); call read_file again",
            );
        }
        let shown = &args.path;
        // Opened without following any symlink (the path was checked in its canonical form),
        // so nothing swapped in since the check is read.
        let file = match crate::beneath::open_read(&path) {
            Ok(file) => file,
            Err(err) => return open_error("read", shown, &err),
        };
        let opened = file.metadata().and_then(|meta| {
            if meta.is_dir() {
                Err(io::Error::from(io::ErrorKind::IsADirectory))
            } else {
                Ok(file)
            }
        });
        match opened.and_then(|file| read_window(file, offset, limit)) {
            Ok(window) => window.render(shown, offset),
            Err(err) => io_error("read", shown, &err),
        }
    }
}

struct Window {
    text: String,
    binary: bool,
    /// Lines in the file up to where reading stopped (all of them if `more` is false).
    lines_seen: u64,
    /// The last line shown, if any was.
    last_shown: Option<u64>,
    /// The file continues after the last line shown.
    more: bool,
    /// Reading stopped at the byte cap rather than at `limit`.
    capped: bool,
}

fn read_window(file: std::fs::File, offset: u64, limit: u64) -> io::Result<Window> {
    let mut head = Vec::with_capacity(BINARY_SNIFF_BYTES);
    let mut file = file;
    (&mut file)
        .take(BINARY_SNIFF_BYTES as u64)
        .read_to_end(&mut head)?;
    let mut window = Window {
        text: String::new(),
        binary: looks_binary(&head),
        lines_seen: 0,
        last_shown: None,
        more: false,
        capped: false,
    };
    if window.binary {
        return Ok(window);
    }
    let mut reader = BufReader::new(io::Cursor::new(head).chain(file));
    let mut raw = Vec::new();
    loop {
        raw.clear();
        if reader.read_until(b'\n', &mut raw)? == 0 {
            return Ok(window);
        }
        let number = window.lines_seen + 1;
        if number < offset {
            window.lines_seen = number;
            continue;
        }
        let shown_so_far = window.last_shown.map_or(0, |last| last - offset + 1);
        let line = numbered(number, &raw);
        if shown_so_far == limit || window.text.len() + line.len() > MAX_OUTPUT_BYTES {
            window.more = true;
            window.capped = shown_so_far < limit;
            return Ok(window);
        }
        window.text.push_str(&line);
        window.lines_seen = number;
        window.last_shown = Some(number);
    }
}

fn numbered(number: u64, raw: &[u8]) -> String {
    let text = String::from_utf8_lossy(raw);
    let text = text.strip_suffix('\n').unwrap_or(&text);
    let text = text.strip_suffix('\r').unwrap_or(text);
    match cut_chars(text, MAX_LINE_CHARS) {
        (kept, true) => {
            let dropped = text[kept.len()..].chars().count() as u64;
            format!(
                "{number:>5}\t{kept}… [line cut: {} more characters]\n",
                thousands(dropped)
            )
        }
        (kept, false) => format!("{number:>5}\t{kept}\n"),
    }
}

impl Window {
    fn render(self, path: &str, offset: u64) -> ToolOutput {
        if self.binary {
            return ToolOutput::error(format!(
                "\"{path}\" is a binary file (it contains NUL bytes), so read_file cannot show \
                 it; use the shell tool with a suitable program (e.g. `file`, `xxd | head`)"
            ));
        }
        let Some(last) = self.last_shown else {
            if self.lines_seen == 0 {
                return ToolOutput::ok(format!("(\"{path}\" is empty)"));
            }
            return ToolOutput::error(format!(
                "offset {offset} is past the end of \"{path}\", which has {} lines; call \
                 read_file with a smaller offset",
                thousands(self.lines_seen)
            ));
        };
        let mut text = self.text;
        if self.more {
            let why = if self.capped {
                format!(
                    "output capped at {} KiB; lines {offset}-{last} shown",
                    MAX_OUTPUT_BYTES / 1024
                )
            } else {
                format!("lines {offset}-{last} shown")
            };
            text.push_str(&format!(
                "[{why}; the file continues: call read_file with offset {} to read on]\n",
                last + 1
            ));
        }
        ToolOutput::ok(text)
    }
}

/// `read_file: a.rs (lines 10-60)`: the file and the window asked for.
fn summarise(args: &Value) -> CallSummary {
    let number = |key: &str| args.get(key).and_then(Value::as_u64);
    CallSummary::detail(
        text(args, "path").map(|path| match (number("offset"), number("limit")) {
            (None, None) => path.to_owned(),
            (offset, Some(limit)) => {
                let from = offset.unwrap_or(1);
                format!(
                    "{path} (lines {from}-{})",
                    from.saturating_add(limit.saturating_sub(1))
                )
            }
            (Some(offset), None) => format!("{path} (from line {offset})"),
        }),
    )
}

#[cfg(test)]
mod tests {
    use crate::test_support::Fixture;

    #[tokio::test]
    async fn numbers_lines_and_honours_offset_and_limit() {
        let f = Fixture::new();
        f.write("a.txt", "one\ntwo\r\nthree\nfour\n");
        let all = f.ok("read_file", r#"{"path": "a.txt"}"#).await;
        assert_eq!(all, "    1\tone\n    2\ttwo\n    3\tthree\n    4\tfour\n");
        let part = f
            .ok("read_file", r#"{"path": "a.txt", "offset": 2, "limit": 2}"#)
            .await;
        assert_eq!(
            part,
            "    2\ttwo\n    3\tthree\n[lines 2-3 shown; the file continues: call read_file \
             with offset 4 to read on]\n"
        );
        let tail = f.ok("read_file", r#"{"path": "a.txt", "offset": 4}"#).await;
        assert_eq!(tail, "    4\tfour\n");
        let past = f
            .err("read_file", r#"{"path": "a.txt", "offset": 9}"#)
            .await;
        assert!(
            past.contains("past the end of \"a.txt\", which has 4 lines"),
            "{past}"
        );
        assert!(
            f.ok("read_file", r#"{"path": "a.txt", "offset": 4, "limit": 1}"#)
                .await
                .ends_with("four\n")
        );
    }

    #[tokio::test]
    async fn a_last_line_without_newline_and_an_empty_file() {
        let f = Fixture::new();
        f.write("a.txt", "x\ny");
        assert_eq!(
            f.ok("read_file", r#"{"path": "a.txt"}"#).await,
            "    1\tx\n    2\ty\n"
        );
        f.write("empty.txt", "");
        assert_eq!(
            f.ok("read_file", r#"{"path": "empty.txt"}"#).await,
            "(\"empty.txt\" is empty)"
        );
    }

    #[tokio::test]
    async fn the_default_window_is_capped_with_the_next_offset() {
        let f = Fixture::new();
        let lines: String = (1..=2_500).map(|n| format!("line {n}\n")).collect();
        f.write("long.txt", &lines);
        let out = f.ok("read_file", r#"{"path": "long.txt"}"#).await;
        assert_eq!(out.lines().count(), 2_001);
        assert!(out.contains(" 2000\tline 2000\n"));
        assert!(out.ends_with(
            "[lines 1-2000 shown; the file continues: call read_file with offset 2001 to read on]\n"
        ));

        // 200 lines of ~1,990 bytes: the byte cap, not the line limit, ends the window.
        let wide: String = (1..=200)
            .map(|n| format!("{n:04}{}\n", "w".repeat(1_986)))
            .collect();
        f.write("wide.txt", &wide);
        let out = f.ok("read_file", r#"{"path": "wide.txt"}"#).await;
        assert!(out.len() <= super::MAX_OUTPUT_BYTES + 200, "{}", out.len());
        let note = out.lines().last().unwrap();
        assert!(
            note.starts_with("[output capped at 256 KiB; lines 1-131 shown"),
            "{note}"
        );
        assert!(note.contains("offset 132"), "{note}");
    }

    #[tokio::test]
    async fn very_long_lines_are_cut() {
        let f = Fixture::new();
        f.write("min.js", &"x".repeat(2_500));
        let out = f.ok("read_file", r#"{"path": "min.js"}"#).await;
        assert!(
            out.ends_with("x… [line cut: 500 more characters]\n"),
            "{out}"
        );
    }

    #[tokio::test]
    async fn binary_files_and_directories_are_refused() {
        let f = Fixture::new();
        f.write_bytes("blob.bin", b"PK\x03\x04\x00\x00data");
        let err = f.err("read_file", r#"{"path": "blob.bin"}"#).await;
        assert!(err.contains("is a binary file"), "{err}");
        f.write("dir/x", "");
        let err = f.err("read_file", r#"{"path": "dir"}"#).await;
        assert!(err.contains("is a directory; use list_dir"), "{err}");
        let err = f.err("read_file", r#"{"path": "missing.txt"}"#).await;
        assert!(err.contains("does not exist"), "{err}");
    }

    #[tokio::test]
    async fn escapes_are_refused() {
        let f = Fixture::new();
        std::fs::write(f.outside.join("secret.txt"), "secret").unwrap();
        std::os::unix::fs::symlink(f.outside.join("secret.txt"), f.path("file-link")).unwrap();
        std::os::unix::fs::symlink(&f.outside, f.path("dir-link")).unwrap();
        let absolute = f.outside.join("secret.txt");
        for path in [
            "../outside/secret.txt",
            absolute.to_str().unwrap(),
            "file-link",
            "dir-link/secret.txt",
        ] {
            let err = f
                .err(
                    "read_file",
                    &crate::test_support::json(serde_json::json!({"path": path})),
                )
                .await;
            assert!(err.contains("is outside this pod's scope"), "{path}: {err}");
            assert!(!err.contains("secret\n"), "{err}");
        }
    }

    #[tokio::test]
    async fn bad_arguments_are_explained() {
        let f = Fixture::new();
        let err = f.err("read_file", r#"{"offset": 3}"#).await;
        assert!(err.contains("missing field `path`"), "{err}");
        assert!(err.contains("path (string, required)"), "{err}");
        let err = f.err("read_file", r#"{"path": "a", "offset": "3"}"#).await;
        assert!(
            err.contains("invalid type: string \"3\", expected u64"),
            "{err}"
        );
        let err = f.err("read_file", r#"{"path": "a", "lines": 3}"#).await;
        assert!(err.contains("unknown field `lines`"), "{err}");
        let err = f.err("read_file", r#"{"path": "a", "offset": 0}"#).await;
        assert!(err.contains("count from 1"), "{err}");
    }
}
