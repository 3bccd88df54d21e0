//! `write_file`: create or replace a whole file, atomically.

use schemars::JsonSchema;
use seedpod_engine::ToolOutput;
use seedpod_protocol::{
    CallSummary, Effect, GuardScan, InFlush, InSmallPrompt, Policy, Preview, ToolDecl,
};
use serde::Deserialize;
use serde_json::Value;

use crate::atomic::{Written, write_atomic};
use crate::checkpoint::CheckpointStore;
use crate::file_tool::{FileTool, WithCheckpoint, check, keep_before, open_error, thousands};
use crate::scope::{Access, Scope};
use crate::summary::text;

/// The declaration every list of tools derives from (`seedpod_protocol::tool_decl`).
pub(crate) const DECL: ToolDecl = ToolDecl {
    name: "write_file",
    default_policy: Policy::Allow,
    effect: Effect::Changes,
    note: Some(include_str!("../protocols/write_file.md")),
    small_note: Some("replaces the whole file; for a small change use edit_file."),
    in_small_prompt: InSmallPrompt::Always,
    summary: summarise,
    guard: GuardScan::Everything,
    preview: Preview::FileWrite,
    in_flush: InFlush::Offered,
};

pub(crate) struct WriteFile;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WriteFileArgs {
    /// Relative to the working directory, or absolute.
    path: String,
    /// The complete new content.
    content: String,
}

impl FileTool for WriteFile {
    const DECL: ToolDecl = DECL;
    const DESCRIPTION: &'static str = "Create a file, or replace a file's whole content, \
        atomically; missing parent directories are created. For part of a file, use \
        edit_file.";
    type Args = WriteFileArgs;

    fn run(
        scope: &Scope,
        args: WriteFileArgs,
        checkpoints: Option<&CheckpointStore>,
    ) -> ToolOutput {
        let path = match check(scope, Self::NAME, &args.path, Access::Write) {
            Ok(path) => path,
            Err(output) => return output,
        };
        let kept = match keep_before(checkpoints, &path, &args.path) {
            Ok(kept) => kept,
            Err(output) => return output,
        };
        let bytes = thousands(args.content.len() as u64);
        let output = match write_atomic(&path, args.content.as_bytes()) {
            Ok(Written::Created) => {
                ToolOutput::ok(format!("created \"{}\": wrote {bytes} bytes", args.path))
            }
            Ok(Written::Replaced { old_len }) => ToolOutput::ok(format!(
                "replaced \"{}\": wrote {bytes} bytes (it had {} bytes)",
                args.path,
                thousands(old_len)
            )),
            Err(err) => return open_error("write", &args.path, &err),
        };
        output.with_checkpoint(kept)
    }
}

/// `write_file: src/a.rs (1,234 bytes)`.
fn summarise(args: &Value) -> CallSummary {
    CallSummary::detail(text(args, "path").map(|path| match text(args, "content") {
        Some(content) => format!("{path} ({} bytes)", thousands(content.len() as u64)),
        None => path.to_owned(),
    }))
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use crate::scope::ScopeRules;
    use crate::test_support::{Fixture, json};
    use serde_json::json as j;

    #[tokio::test]
    async fn creates_then_replaces_with_byte_counts() {
        let f = Fixture::new();
        let args = json(j!({"path": "src/deep/new.rs", "content": "a".repeat(1_234)}));
        assert_eq!(
            f.ok("write_file", &args).await,
            "created \"src/deep/new.rs\": wrote 1,234 bytes"
        );
        let args = json(j!({"path": "src/deep/new.rs", "content": "fn main() {}\n"}));
        assert_eq!(
            f.ok("write_file", &args).await,
            "replaced \"src/deep/new.rs\": wrote 13 bytes (it had 1,234 bytes)"
        );
        assert_eq!(f.read("src/deep/new.rs"), "fn main() {}\n");
    }

    #[tokio::test]
    async fn escapes_are_refused_and_nothing_is_written_outside() {
        let f = Fixture::new();
        f.write("keep.txt", "keep");
        std::fs::write(f.outside.join("secret.txt"), "secret").unwrap();
        std::os::unix::fs::symlink(f.outside.join("secret.txt"), f.path("file-link")).unwrap();
        std::os::unix::fs::symlink(&f.outside, f.path("dir-link")).unwrap();
        let outside_abs = f.outside.join("abs.txt");
        for path in [
            "../outside/new.txt",
            "../outside/secret.txt",
            outside_abs.to_str().unwrap(),
            "file-link",
            "dir-link/secret.txt",
            "dir-link/sub/new.txt",
            "nope/../../outside/x.txt",
        ] {
            let err = f
                .err("write_file", &json(j!({"path": path, "content": "pwned"})))
                .await;
            assert!(err.starts_with("access blocked: "), "{path}: {err}");
            assert!(err.contains("ask the user"), "{err}");
        }
        assert_eq!(
            std::fs::read_to_string(f.outside.join("secret.txt")).unwrap(),
            "secret"
        );
        let mut left: Vec<PathBuf> = std::fs::read_dir(&f.outside)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        left.sort();
        assert_eq!(left, [f.outside.join("secret.txt")]);
        assert!(
            !f.path("nope").exists(),
            "no directory was created for a refused write"
        );
    }

    #[tokio::test]
    async fn read_only_and_denied_roots_refuse_writes() {
        let rules = ScopeRules {
            read: vec!["../outside".into()],
            write: vec![".".into()],
            deny: vec![".git".into()],
        };
        let f = Fixture::with_rules(rules);
        std::fs::write(f.outside.join("a.md"), "doc").unwrap();
        let err = f
            .err(
                "write_file",
                r#"{"path": "../outside/a.md", "content": "x"}"#,
            )
            .await;
        assert!(err.contains("is read-only in this pod's scope"), "{err}");
        assert_eq!(
            std::fs::read_to_string(f.outside.join("a.md")).unwrap(),
            "doc"
        );
        let err = f
            .err("write_file", r#"{"path": ".git/config", "content": "x"}"#)
            .await;
        assert!(err.contains("is denied by this pod's scope"), "{err}");
        assert!(!f.path(".git").exists());
        f.ok("write_file", r#"{"path": "src/ok.txt", "content": "x"}"#)
            .await;
    }

    #[tokio::test]
    async fn missing_content_is_a_helpful_error() {
        let f = Fixture::new();
        let err = f.err("write_file", r#"{"path": "a.txt"}"#).await;
        assert!(err.contains("missing field `content`"), "{err}");
        assert!(
            err.contains("content (string, required), path (string, required)"),
            "{err}"
        );
    }
}
