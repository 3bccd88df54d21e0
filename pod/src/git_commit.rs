//! `/commit`: the model writes a commit message for the repository's changes and a
//! person approves it before anything is committed.
//!
//! Two halves, both here:
//! - [`prepare`] runs when a person types `/commit`: it checks the pod's directory is in a git
//!   repository, looks at what is staged (or, with nothing staged, at every change) and writes
//!   the input the run starts with: what to do and the changes themselves, capped.
//! - the `git_commit` tool the model then calls with its message. It is `ask` by default, so
//!   the approval prompt (TUI or `seedpod approve`) is where the person reads the message; a
//!   denial with a reason ("shorter subject") sends the model back to write another.
//!
//! git runs as a plain process with arguments (never through a shell), the message goes in on
//! stdin (`git commit -F -`), so no message can become an option or a command. It runs with
//! the person's identity and hooks, like their own `git commit`: that is why it asks.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use seedpod_engine::{Tool, ToolFailure, ToolOutput, ToolRegistry};
use seedpod_protocol::{
    CallSummary, Effect, GuardScan, InFlush, InSmallPrompt, Preview, ToolDecl, ToolSpec,
};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;

use crate::policy::{Policies, Policy};

/// The tool's name, as the model calls it.
pub const GIT_COMMIT: &str = "git_commit";
/// The declaration every list of tools derives from (`seedpod_protocol::tool_decl`). It asks:
/// the approval is where the person reads the message.
pub const DECL: ToolDecl = ToolDecl {
    name: GIT_COMMIT,
    default_policy: Policy::Ask,
    effect: Effect::Changes,
    note: None,
    small_note: None,
    in_small_prompt: InSmallPrompt::Always,
    summary: summarise,
    guard: GuardScan::Everything,
    preview: Preview::Arguments,
    in_flush: InFlush::Never,
};
/// The diff quoted in the `/commit` input; more is summarised by the stat above it.
const MAX_DIFF_CHARS: usize = 12_000;
/// A subject and a body, not an essay.
const MAX_MESSAGE_CHARS: usize = 10_000;
/// git, hooks included, gets this long before the call fails.
const GIT_TIMEOUT: Duration = Duration::from_secs(120);

/// Why git could not be asked, or what it said that stops `/commit` or the tool. The text is
/// the product: the person reads it in `/commit`'s refusal, the model in the tool's result.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// git could not be started at all.
    #[error("could not run git ({cause}); is git installed?")]
    Spawn { cause: std::io::Error },
    /// The message could not be written to git's stdin.
    #[error("could not pass the message to git: {cause}")]
    Stdin { cause: std::io::Error },
    /// git (a hook, most likely) ran past `GIT_TIMEOUT`.
    #[error("git {command} took over {} s", GIT_TIMEOUT.as_secs())]
    TimedOut { command: String },
    /// Waiting for git failed.
    #[error("git {command} failed to run: {cause}")]
    Wait {
        command: String,
        cause: std::io::Error,
    },
    /// The pod's directory is not in a git repository.
    #[error(
        "/commit needs a git repository, and {} is not in one (git init creates one)",
        dir.display()
    )]
    NotARepository { dir: PathBuf },
    /// Nothing is staged and the working tree is clean.
    #[error(
        "nothing to commit in {}: no staged changes and a clean working tree",
        top.display()
    )]
    NothingToCommit { top: PathBuf },
}

impl From<GitError> for ToolFailure {
    fn from(err: GitError) -> ToolFailure {
        ToolFailure::new(err.to_string())
    }
}

/// The output of one git command.
struct GitOutput {
    success: bool,
    stdout: String,
    stderr: String,
}

/// Run git in `dir` with `args`, `stdin` fed in when given; never prompting, never paging.
async fn git(dir: &Path, args: &[&str], stdin: Option<&str>) -> Result<GitOutput, GitError> {
    let mut command = tokio::process::Command::new("git");
    command
        .args(args)
        .current_dir(dir)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_PAGER", "cat")
        .env("GIT_EDITOR", "true")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = command.spawn().map_err(|cause| GitError::Spawn { cause })?;
    if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
        pipe.write_all(text.as_bytes())
            .await
            .map_err(|cause| GitError::Stdin { cause })?;
    }
    let output = tokio::time::timeout(GIT_TIMEOUT, child.wait_with_output())
        .await
        .map_err(|_| GitError::TimedOut {
            command: args.join(" "),
        })?
        .map_err(|cause| GitError::Wait {
            command: args.join(" "),
            cause,
        })?;
    Ok(GitOutput {
        success: output.status.success(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    })
}

/// The top of the repository holding `dir`, or why there is none.
async fn repository(dir: &Path) -> Result<PathBuf, GitError> {
    let out = git(dir, &["rev-parse", "--show-toplevel"], None).await?;
    if !out.success {
        return Err(GitError::NotARepository {
            dir: dir.to_path_buf(),
        });
    }
    Ok(PathBuf::from(out.stdout.trim()))
}

/// What `/commit` would commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Changes {
    Staged,
    /// Nothing is staged: every change, untracked files included (`git add -A`).
    All,
}

/// The input a `/commit` run starts with, or why there is nothing to do. `focus` is what the
/// person typed after `/commit` (a hint for the message).
pub async fn prepare(dir: &Path, focus: &str) -> Result<String, GitError> {
    let top = repository(dir).await?;
    let staged = git(&top, &["diff", "--cached", "--stat"], None).await?;
    let changes = if staged.stdout.trim().is_empty() {
        Changes::All
    } else {
        Changes::Staged
    };
    let (stat, diff, listing) = match changes {
        Changes::Staged => (
            staged.stdout,
            git(&top, &["diff", "--cached", "--no-color"], None)
                .await?
                .stdout,
            String::new(),
        ),
        Changes::All => {
            let status = git(
                &top,
                &["status", "--porcelain=v1", "--untracked-files=all"],
                None,
            )
            .await?
            .stdout;
            if status.trim().is_empty() {
                return Err(GitError::NothingToCommit { top });
            }
            (
                git(&top, &["diff", "--stat", "HEAD"], None).await?.stdout,
                git(&top, &["diff", "--no-color", "HEAD"], None)
                    .await?
                    .stdout,
                status,
            )
        }
    };
    let (what, all) = match changes {
        Changes::Staged => ("the staged changes", false),
        Changes::All => (
            "every change in the working tree (nothing is staged, so all of them, new files too)",
            true,
        ),
    };
    let mut text = format!(
        "/commit{}\n\nWrite a commit message for {what} in {} and commit it by calling \
         git_commit with \"all\": {all}. The message: a subject line in the imperative under 72 \
         characters, then, if it helps, a blank line and a short body saying why. Do not change \
         any file. I will read the message before it is committed.\n",
        if focus.is_empty() {
            String::new()
        } else {
            format!(" {focus}")
        },
        top.display()
    );
    if !listing.is_empty() {
        text.push_str(&format!("\nFiles (git status):\n{listing}"));
    }
    if !stat.trim().is_empty() {
        text.push_str(&format!("\nSummary (git diff --stat):\n{stat}"));
    }
    let shown = seedpod_protocol::char_prefix(&diff, MAX_DIFF_CHARS).unwrap_or(&diff);
    if !shown.trim().is_empty() {
        text.push_str(&format!("\nDiff:\n{shown}"));
        if shown.len() < diff.len() {
            text.push_str(&format!(
                "\n[the diff goes on for {} more characters; read files for detail]\n",
                diff[shown.len()..].chars().count()
            ));
        }
    }
    Ok(text)
}

/// The `git_commit` tool, working in the pod's directory.
pub struct GitCommit {
    dir: PathBuf,
}

impl GitCommit {
    /// Offer the tool unless `policies` deny it.
    pub fn register(registry: &mut ToolRegistry, dir: &Path, policies: &Policies) {
        if policies.offers(&DECL) {
            registry.register(Arc::new(GitCommit {
                dir: dir.to_path_buf(),
            }));
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CommitArgs {
    message: String,
    #[serde(default)]
    all: bool,
}

/// The subject line, which is what a person approves (the whole message is in the arguments),
/// and `(every change)` when it stages everything.
fn summarise(args: &Value) -> CallSummary {
    CallSummary::detail(args.get("message").and_then(Value::as_str).map(|message| {
        let subject = message.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        if args.get("all").and_then(Value::as_bool) == Some(true) {
            format!("{} (every change)", subject.trim())
        } else {
            subject.trim().to_owned()
        }
    }))
}

/// The spec, also used to describe a pod without running it.
pub fn spec() -> ToolSpec {
    ToolSpec {
        name: GIT_COMMIT.into(),
        description: "Commit to the git repository of the working directory with a message \
            you wrote: the staged changes, or with \"all\" every change (new files too). A \
            person reads the message first unless they allow every commit. Use it when asked \
            to commit (/commit); never to save work on your own."
            .into(),
        parameters: json!({
            "type": "object",
            "additionalProperties": false,
            "required": ["message"],
            "properties": {
                "message": {"type": "string", "description": "The commit message: a subject line, optionally a blank line and a body."},
                "all": {"type": "boolean", "description": "Stage every change first (git add -A). Default: false, commit what is staged."}
            }
        }),
    }
}

impl Tool for GitCommit {
    fn spec(&self) -> ToolSpec {
        spec()
    }

    fn call(&self, arguments: String) -> BoxFuture<'static, ToolOutput> {
        let dir = self.dir.clone();
        async move {
            match make_git_commit(&dir, &arguments).await {
                Ok(text) => ToolOutput::ok(text),
                Err(failure) => ToolOutput::from(failure),
            }
        }
        .boxed()
    }
}

async fn make_git_commit(dir: &Path, arguments: &str) -> Result<String, ToolFailure> {
    let args: CommitArgs = serde_json::from_str(arguments).map_err(|e| {
        ToolFailure::new(format!(
            "git_commit takes {{\"message\": \"…\", \"all\": false}}: {e}"
        ))
    })?;
    let message = args.message.trim();
    if message.is_empty() {
        return Err(ToolFailure::new(
            "the message is empty; write a subject line",
        ));
    }
    if message.chars().count() > MAX_MESSAGE_CHARS {
        return Err(ToolFailure::new(format!(
            "the message is over {MAX_MESSAGE_CHARS} characters; keep it to a subject and a short body"
        )));
    }
    let top = repository(dir).await?;
    if args.all {
        let added = git(&top, &["add", "-A"], None).await?;
        if !added.success {
            return Err(ToolFailure::new(format!(
                "git add -A failed:\n{}",
                added.stderr.trim()
            )));
        }
    }
    let staged = git(&top, &["diff", "--cached", "--quiet"], None).await?;
    if staged.success {
        return Err(ToolFailure::new(if args.all {
            "nothing to commit: the working tree is clean"
        } else {
            "nothing is staged; stage files first, or call again with \"all\": true"
        }));
    }
    let committed = git(
        &top,
        &["commit", "--file=-", "--cleanup=strip", "--no-edit"],
        Some(&format!("{message}\n")),
    )
    .await?;
    if !committed.success {
        return Err(ToolFailure::new(format!(
            "git commit failed:\n{}{}",
            committed.stdout.trim(),
            committed.stderr.trim()
        )));
    }
    let shown = git(
        &top,
        &["show", "--stat", "--format=committed %h: %s", "HEAD"],
        None,
    )
    .await?;
    Ok(shown.stdout.trim_end().to_owned())
}

#[cfg(test)]
mod tests;
