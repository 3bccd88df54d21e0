//! `glob`: find files by path pattern.

use globset::GlobBuilder;
use schemars::JsonSchema;
use seedpod_engine::ToolOutput;
use seedpod_protocol::{
    CallSummary, Effect, GuardScan, InFlush, InSmallPrompt, Policy, Preview, ToolDecl,
};
use serde::Deserialize;
use serde_json::Value;

use crate::checkpoint::CheckpointStore;
use crate::file_tool::FileTool;
use crate::scope::Scope;
use crate::summary::text;
use crate::walk;

/// Paths returned per call; the walk is sorted, so a cut is always the same first ones.
pub(crate) const MAX_RESULTS: usize = 500;

/// The declaration every list of tools derives from (`seedpod_protocol::tool_decl`).
pub(crate) const DECL: ToolDecl = ToolDecl {
    name: "glob",
    default_policy: Policy::Allow,
    effect: Effect::ReadOnly,
    note: Some(include_str!("../protocols/glob.md")),
    small_note: Some("`**` crosses directories (`**/*.rs`); git-ignored files are not listed."),
    in_small_prompt: InSmallPrompt::Always,
    summary: summarise,
    guard: GuardScan::Everything,
    preview: Preview::Arguments,
    in_flush: InFlush::Never,
};

pub(crate) struct Glob;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GlobArgs {
    /// Matched against paths relative to `path`: `*` stays in one directory, `**` crosses
    /// directories, `{a,b}` gives alternatives.
    pattern: String,
    /// The directory to search. Default: the working directory.
    path: Option<String>,
}

impl FileTool for Glob {
    const DECL: ToolDecl = DECL;
    const DESCRIPTION: &'static str = "Find files and directories whose path matches a glob \
        (e.g. `**/*.rs`). Returns up to 500 sorted paths relative to the working directory; \
        git-ignored files are left out.";
    type Args = GlobArgs;

    fn run(scope: &Scope, args: GlobArgs, _: Option<&CheckpointStore>) -> ToolOutput {
        let (root, shown_root) = match walk::search_root(scope, Self::NAME, args.path.as_deref()) {
            Ok(found) => found,
            Err(output) => return output,
        };
        let pattern = args.pattern.strip_prefix("./").unwrap_or(&args.pattern);
        if pattern.starts_with('/') {
            return ToolOutput::error(
                "the pattern is matched relative to path; give the directory as path and a \
                 relative pattern (e.g. path \"/a/b\", pattern \"**/*.rs\")",
            );
        }
        let matcher = match GlobBuilder::new(pattern).literal_separator(true).build() {
            Ok(glob) => glob.compile_matcher(),
            Err(err) => {
                return ToolOutput::error(format!(
                    "invalid glob pattern: {err}; fix the pattern and call glob again"
                ));
            }
        };
        let mut found = Vec::new();
        let mut tail = String::new();
        for (visited, entry) in walk::builder(scope, &root).build().enumerate() {
            if visited == walk::MAX_VISITED {
                tail.push_str(&walk::visited_note());
                break;
            }
            let Ok(entry) = entry else { continue };
            let Ok(rel) = entry.path().strip_prefix(&root) else {
                continue;
            };
            if rel.as_os_str().is_empty() || !matcher.is_match(rel) {
                continue;
            }
            if found.len() == MAX_RESULTS {
                tail.push_str(&format!(
                    "[stopped at {MAX_RESULTS} paths; more match: narrow the pattern or path]\n"
                ));
                break;
            }
            let mut shown = walk::display(scope, entry.path());
            if entry.file_type().is_some_and(|t| t.is_dir()) {
                shown.push('/');
            }
            found.push(shown);
        }
        if found.is_empty() && tail.is_empty() {
            return ToolOutput::ok(format!(
                "no paths under \"{shown_root}\" match `{}` (files ignored by .gitignore are \
                 not searched)",
                args.pattern
            ));
        }
        let mut text = found.join("\n");
        text.push('\n');
        text.push_str(&tail);
        ToolOutput::ok(text)
    }
}

/// `glob: **/*.rs in src`.
fn summarise(args: &Value) -> CallSummary {
    CallSummary::detail(
        text(args, "pattern").map(|pattern| match text(args, "path") {
            Some(path) => format!("{pattern} in {path}"),
            None => pattern.to_owned(),
        }),
    )
}

#[cfg(test)]
mod tests {
    use crate::test_support::Fixture;

    #[tokio::test]
    async fn matches_relative_paths_and_honours_gitignore() {
        let f = Fixture::new();
        f.write(".gitignore", "target/\n*.log\n");
        f.write("src/main.rs", "");
        f.write("src/tools/mod.rs", "");
        f.write("src/tools/a.txt", "");
        f.write("top.rs", "");
        f.write("debug.log", "");
        f.write("target/gen.rs", "");
        f.write(".git/config.rs", "");
        assert_eq!(
            f.ok("glob", r#"{"pattern": "**/*.rs"}"#).await,
            "src/main.rs\nsrc/tools/mod.rs\ntop.rs\n"
        );
        assert_eq!(f.ok("glob", r#"{"pattern": "*.rs"}"#).await, "top.rs\n");
        assert_eq!(
            f.ok("glob", r#"{"pattern": "*", "path": "src"}"#).await,
            "src/main.rs\nsrc/tools/\n"
        );
        let none = f.ok("glob", r#"{"pattern": "**/*.log"}"#).await;
        assert!(
            none.starts_with("no paths under \".\" match `**/*.log`"),
            "{none}"
        );
    }

    #[tokio::test]
    async fn results_are_bounded_with_a_note() {
        let f = Fixture::new();
        for n in 0..520 {
            f.write(&format!("d/f{n:04}.txt"), "");
        }
        let out = f.ok("glob", r#"{"pattern": "d/*.txt"}"#).await;
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 501);
        assert_eq!(lines[0], "d/f0000.txt");
        assert_eq!(lines[499], "d/f0499.txt");
        assert_eq!(
            lines[500],
            "[stopped at 500 paths; more match: narrow the pattern or path]"
        );
    }

    #[tokio::test]
    async fn bad_patterns_and_escapes_are_errors() {
        let f = Fixture::new();
        let err = f.err("glob", r#"{"pattern": "a[b"}"#).await;
        assert!(err.starts_with("invalid glob pattern"), "{err}");
        let err = f.err("glob", r#"{"pattern": "*", "path": ".."}"#).await;
        assert!(err.contains("outside this pod's scope"), "{err}");
        let err = f.err("glob", r#"{"pattern": "/etc/*"}"#).await;
        assert!(err.contains("relative"), "{err}");
        let err = f.err("glob", r#"{"path": "src"}"#).await;
        assert!(err.contains("missing field `pattern`"), "{err}");
    }

    #[tokio::test]
    async fn denied_paths_are_not_walked() {
        let f = Fixture::with_rules(crate::scope::ScopeRules {
            write: vec![".".into()],
            deny: vec!["secrets".into()],
            ..Default::default()
        });
        f.write("secrets/key.rs", "needle");
        f.write("src/a.rs", "needle");
        assert_eq!(
            f.ok("glob", r#"{"pattern": "**/*.rs"}"#).await,
            "src/a.rs\n"
        );
        assert_eq!(
            f.ok("grep", r#"{"pattern": "needle"}"#).await,
            "src/a.rs:1: needle\n"
        );
    }

    #[tokio::test]
    async fn a_symlinked_directory_pointing_outside_is_not_walked() {
        let f = Fixture::new();
        std::fs::write(f.outside.join("secret.rs"), "").unwrap();
        std::os::unix::fs::symlink(&f.outside, f.path("out")).unwrap();
        f.write("in.rs", "");
        assert_eq!(f.ok("glob", r#"{"pattern": "**/*.rs"}"#).await, "in.rs\n");
    }
}
