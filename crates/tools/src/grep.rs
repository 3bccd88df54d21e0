//! `grep`: search file contents with a regular expression.

use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

use ignore::overrides::OverrideBuilder;
use regex::{Regex, RegexBuilder};
use schemars::JsonSchema;
use seedpod_engine::ToolOutput;
use seedpod_protocol::{
    CallSummary, Effect, GuardScan, InFlush, InSmallPrompt, Policy, Preview, ToolDecl,
};
use serde::Deserialize;
use serde_json::Value;

use crate::checkpoint::CheckpointStore;
use crate::file_tool::{BINARY_SNIFF_BYTES, FileTool, cut_chars, looks_binary};
use crate::scope::Scope;
use crate::summary::text;
use crate::walk;

/// Matching lines returned per call.
pub(crate) const MAX_MATCHES: usize = 200;
/// A matching line is cut after this many characters (minified files would flood the output).
pub(crate) const MAX_LINE_CHARS: usize = 300;

/// The declaration every list of tools derives from (`seedpod_protocol::tool_decl`).
pub(crate) const DECL: ToolDecl = ToolDecl {
    name: "grep",
    default_policy: Policy::Allow,
    effect: Effect::ReadOnly,
    note: Some(include_str!("../protocols/grep.md")),
    small_note: Some("a regex matched line by line; narrow it with path and glob."),
    in_small_prompt: InSmallPrompt::Always,
    summary: summarise,
    guard: GuardScan::Everything,
    preview: Preview::Arguments,
    in_flush: InFlush::Never,
};

pub(crate) struct Grep;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GrepArgs {
    /// A regular expression, as ripgrep's (e.g. `fn main\(`).
    pattern: String,
    /// A file or directory to search. Default: the working directory.
    path: Option<String>,
    /// Only files matching this glob, as ripgrep's `-g` (`*.rs`, `!*.md`).
    glob: Option<String>,
    /// Ignore case.
    #[serde(default)]
    case_insensitive: bool,
}

impl FileTool for Grep {
    const DECL: ToolDecl = DECL;
    const DESCRIPTION: &'static str = "Search file contents with a regular expression: \
        `path:line: text` per matching line, up to 200, long lines cut. Skips git-ignored and \
        binary files.";
    type Args = GrepArgs;

    fn run(scope: &Scope, args: GrepArgs, _: Option<&CheckpointStore>) -> ToolOutput {
        let (root, shown_root) = match walk::search_root(scope, Self::NAME, args.path.as_deref()) {
            Ok(found) => found,
            Err(output) => return output,
        };
        let regex = match RegexBuilder::new(&args.pattern)
            .case_insensitive(args.case_insensitive)
            .build()
        {
            Ok(regex) => regex,
            Err(err) => {
                return ToolOutput::error(format!(
                    "invalid regular expression: {err}\nEscape special characters (e.g. `\\(`, \
                     `\\.`) to match them literally, then call grep again."
                ));
            }
        };
        let mut walker = walk::builder(scope, &root);
        if let Some(glob) = &args.glob {
            let overrides = OverrideBuilder::new(&root)
                .add(glob)
                .and_then(|builder| builder.build());
            match overrides {
                Ok(overrides) => {
                    walker.overrides(overrides);
                }
                Err(err) => {
                    return ToolOutput::error(format!(
                        "invalid glob filter: {err}; fix glob and call grep again"
                    ));
                }
            }
        }
        let mut search = Search {
            regex,
            text: String::new(),
            matches: 0,
        };
        for (visited, entry) in walker.build().enumerate() {
            if visited == walk::MAX_VISITED {
                search.text.push_str(&walk::visited_note());
                break;
            }
            let Ok(entry) = entry else { continue };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            // An unreadable file is skipped, as ripgrep does; the rest of the tree still counts.
            let shown = walk::display(scope, entry.path());
            if search.file(entry.path(), &shown).is_err() {
                continue;
            }
            if search.matches == MAX_MATCHES {
                search.text.push_str(&format!(
                    "[stopped at {MAX_MATCHES} matches; there may be more: narrow with path, glob or a more \
                     specific pattern]\n"
                ));
                break;
            }
        }
        if search.text.is_empty() {
            return ToolOutput::ok(format!(
                "no matches for `{}` under \"{shown_root}\" (files ignored by .gitignore and \
                 binary files are not searched)",
                args.pattern
            ));
        }
        ToolOutput::ok(search.text)
    }
}

struct Search {
    regex: Regex,
    text: String,
    matches: usize,
}

impl Search {
    /// Append the file's matching lines, stopping at [`MAX_MATCHES`] in total.
    fn file(&mut self, path: &Path, shown: &str) -> io::Result<()> {
        // Race-free: a file swapped for a link since the walk saw it, or one with other names
        // (hard links) that may be outside the scope, is skipped.
        let mut file = match crate::beneath::open_read(path) {
            Ok(file) => file,
            Err(crate::beneath::OpenError::Io(err)) => return Err(err),
            Err(crate::beneath::OpenError::Changed | crate::beneath::OpenError::HardLinked(_)) => {
                return Ok(());
            }
        };
        let mut head = Vec::with_capacity(BINARY_SNIFF_BYTES);
        (&mut file)
            .take(BINARY_SNIFF_BYTES as u64)
            .read_to_end(&mut head)?;
        if looks_binary(&head) {
            return Ok(());
        }
        let mut reader = BufReader::new(io::Cursor::new(head).chain(file));
        let mut raw = Vec::new();
        let mut number = 0u64;
        while self.matches < MAX_MATCHES {
            raw.clear();
            if reader.read_until(b'\n', &mut raw)? == 0 {
                break;
            }
            number += 1;
            let line = String::from_utf8_lossy(&raw);
            let line = line.trim_end_matches(['\n', '\r']);
            if !self.regex.is_match(line) {
                continue;
            }
            let (kept, cut) = cut_chars(line, MAX_LINE_CHARS);
            let ellipsis = if cut { " …" } else { "" };
            self.text
                .push_str(&format!("{shown}:{number}: {kept}{ellipsis}\n"));
            self.matches += 1;
        }
        Ok(())
    }
}

/// `grep: /fn main/ in src (*.rs)`.
fn summarise(args: &Value) -> CallSummary {
    CallSummary::detail(text(args, "pattern").map(|pattern| {
        let mut line = format!("/{pattern}/");
        if let Some(path) = text(args, "path") {
            line.push_str(&format!(" in {path}"));
        }
        if let Some(glob) = text(args, "glob") {
            line.push_str(&format!(" ({glob})"));
        }
        line
    }))
}

#[cfg(test)]
mod tests {
    use crate::test_support::{Fixture, json};
    use serde_json::json as j;

    fn tree() -> Fixture {
        let f = Fixture::new();
        f.write(".gitignore", "ignored.txt\nbuild/\n");
        f.write("ignored.txt", "needle in an ignored file\n");
        f.write("build/out.rs", "needle in an ignored dir\n");
        f.write("src/a.rs", "fn a() {}\n// Needle here\nlet needle = 1;\n");
        f.write("src/b.md", "a needle in docs\n");
        f.write_bytes("blob.bin", b"needle\x00\x01");
        f
    }

    #[tokio::test]
    async fn reports_path_line_text_and_honours_gitignore() {
        let f = tree();
        assert_eq!(
            f.ok("grep", r#"{"pattern": "needle"}"#).await,
            "src/a.rs:3: let needle = 1;\nsrc/b.md:1: a needle in docs\n"
        );
    }

    #[tokio::test]
    async fn case_insensitive_glob_and_path_narrow_the_search() {
        let f = tree();
        assert_eq!(
            f.ok(
                "grep",
                r#"{"pattern": "needle", "case_insensitive": true, "glob": "*.rs"}"#
            )
            .await,
            "src/a.rs:2: // Needle here\nsrc/a.rs:3: let needle = 1;\n"
        );
        assert_eq!(
            f.ok("grep", r#"{"pattern": "needle", "path": "src/b.md"}"#)
                .await,
            "src/b.md:1: a needle in docs\n"
        );
        let none = f.ok("grep", r#"{"pattern": "haystack"}"#).await;
        assert!(
            none.starts_with("no matches for `haystack` under \".\""),
            "{none}"
        );
    }

    #[tokio::test]
    async fn matches_and_line_length_are_bounded() {
        let f = Fixture::new();
        let many: String = (1..=250).map(|n| format!("hit {n}\n")).collect();
        f.write("many.txt", &many);
        let out = f.ok("grep", r#"{"pattern": "hit"}"#).await;
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 201);
        assert_eq!(lines[199], "many.txt:200: hit 200");
        assert!(
            lines[200].starts_with("[stopped at 200 matches"),
            "{}",
            lines[200]
        );

        f.write("many.txt", &format!("hit {}\n", "x".repeat(1_000)));
        let out = f.ok("grep", r#"{"pattern": "hit"}"#).await;
        assert_eq!(out, format!("many.txt:1: hit {} …\n", "x".repeat(296)));
    }

    #[tokio::test]
    async fn bad_regex_and_escapes_are_errors() {
        let f = tree();
        let err = f.err("grep", r#"{"pattern": "fn main("}"#).await;
        assert!(err.starts_with("invalid regular expression"), "{err}");
        assert!(err.contains("Escape special characters"), "{err}");
        let err = f
            .err("grep", &json(j!({"pattern": "x", "path": f.outside})))
            .await;
        assert!(err.contains("outside this pod's scope"), "{err}");
        let err = f
            .err("grep", r#"{"pattern": "x", "case_insensitive": 1}"#)
            .await;
        assert!(err.contains("expected a boolean"), "{err}");
    }
}
