//! `shell`: run a command line with `bash -c` (`bash -lc` under `[shell] login`) in the pod's
//! working directory.
//!
//! With the sandbox on (`sandbox/`, Landlock) each command runs confined to the pod's scope;
//! a call with `"sandbox": false` runs unconfined, which the pod's approvals always ask a person
//! about. Without it a shell can reach anything the user can and only approvals govern it.
//! Either way a command cannot outlive its call by accident or flood the model: it runs in its
//! own process group, which is killed whole on timeout or when the call is dropped, and its
//! output is captured within a fixed budget.

use std::collections::VecDeque;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use schemars::JsonSchema;
use seedpod_config::agent;
use seedpod_engine::{Tool, ToolOutput};
use seedpod_protocol::{
    CallSummary, Effect, GuardScan, InFlush, InSmallPrompt, Policy, Preview, SandboxFinding,
    ToolDecl, ToolMeta, ToolSpec,
};
use serde::Deserialize;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::time::Instant;

use crate::args;
use crate::file_tool::thousands;
use crate::sandbox::Sandbox;
use crate::sandbox::watch::{self, Snapshot};

/// The declaration every list of tools derives from (`seedpod_protocol::tool_decl`). A person
/// approves each command by default: nothing but the sandbox confines one.
pub const DECL: ToolDecl = ToolDecl {
    name: "shell",
    default_policy: Policy::Ask,
    effect: Effect::RunsCommands,
    note: Some(include_str!("../protocols/shell.md")),
    small_note: Some(
        "a fresh non-interactive shell each call; the first line of the result is the exit code; the user may have to approve it.",
    ),
    in_small_prompt: InSmallPrompt::Always,
    summary: summarise,
    guard: GuardScan::Everything,
    preview: Preview::Command,
    in_flush: InFlush::Never,
};

/// Exit code reported for a command killed at its timeout, as coreutils' `timeout` does.
pub const TIMEOUT_EXIT_CODE: i32 = 124;

/// How long to keep reading after the shell exited while a background process it started still
/// holds the output pipes; past this the call returns instead of waiting for that process.
const PIPE_GRACE: Duration = Duration::from_millis(200);

const BACKGROUND_NOTE: &str = "[the command exited, but processes it started in the background \
     still hold its output; their later output is not shown]";

/// How long a sandboxed command's namespace gets to end after a timeout before its group is
/// killed outright (it takes microseconds; this bounds a wedged kernel, not normal work).
const NAMESPACE_END_GRACE: Duration = Duration::from_secs(5);

/// Reads of already-waiting output after the command ended (at most 1 MiB with 16 KiB reads).
const MAX_FINAL_READS: usize = 64;

/// Size of each read from the output pipes.
const READ_CHUNK: usize = 16 * 1024;

/// Limits on `shell` calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShellLimits {
    /// Used when a call gives no `timeout_secs`.
    pub default_timeout: Duration,
    /// A larger requested timeout is clamped to this (and the result says so).
    pub max_timeout: Duration,
    /// Per stream (stdout, stderr): output beyond this is dropped from the middle.
    pub max_output_bytes: usize,
    /// `bash -lc` instead of `bash -c` (`[shell] login`). A login shell reads the person's
    /// profile before every command, whose noise (and, in the sandbox, whose refused writes)
    /// then lands in every result; the pod's own environment already carries their PATH.
    pub login: bool,
}

impl Default for ShellLimits {
    fn default() -> Self {
        ShellLimits {
            default_timeout: Duration::from_secs(agent::DEFAULT_SHELL_TIMEOUT_SECS),
            max_timeout: Duration::from_secs(agent::DEFAULT_SHELL_MAX_TIMEOUT_SECS),
            max_output_bytes: 200 * 1024,
            login: false,
        }
    }
}

pub(crate) struct Shell {
    cwd: PathBuf,
    limits: ShellLimits,
    sandbox: Option<Sandbox>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ShellArgs {
    /// The command line. Standard input is empty.
    command: String,
    /// Seconds before it is killed (default and maximum: see the description).
    #[schemars(range(min = 1))]
    timeout_secs: Option<u64>,
    /// false: run outside the sandbox, after a person approves. Only for a command the
    /// sandbox stopped that must write elsewhere or reach the network.
    sandbox: Option<bool>,
}

/// Whether a `shell` call's raw arguments ask to run outside the sandbox (`"sandbox": false`);
/// the pod asks a person about such a call whatever the policy.
/// The one reading of that choice: the pod's approval and the tool itself both decide through
/// `ShellArgs`, so what a person was asked about is exactly what runs unconfined. Arguments
/// that do not parse are not a call at all (the tool refuses them).
pub fn wants_unconfined(arguments: &str) -> bool {
    serde_json::from_str::<ShellArgs>(arguments).is_ok_and(|args| args.unconfined())
}

impl ShellArgs {
    fn unconfined(&self) -> bool {
        self.sandbox == Some(false)
    }
}

/// Whether already-parsed arguments leave the sandbox, read the same way (`wants_unconfined`).
fn leaves_sandbox(args: &Value) -> bool {
    serde_json::from_value::<ShellArgs>(args.clone()).is_ok_and(|args| args.unconfined())
}

/// The command's first line and how many more there are; a call that asks to leave the
/// sandbox says so in place of the tool's name.
fn summarise(args: &Value) -> CallSummary {
    let detail = crate::summary::text(args, "command").map(|command| {
        let mut lines = command.lines().filter(|l| !l.trim().is_empty());
        let first = lines.next().unwrap_or("").trim().to_owned();
        match lines.count() {
            0 => first,
            more => format!("{first} (+{more} more lines)"),
        }
    });
    CallSummary {
        label: leaves_sandbox(args).then_some("shell (leaves the sandbox)"),
        detail,
    }
}

impl Shell {
    pub(crate) fn new(cwd: PathBuf, limits: ShellLimits, sandbox: Option<Sandbox>) -> Self {
        Shell {
            cwd,
            limits,
            sandbox,
        }
    }
}

impl Tool for Shell {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: DECL.name.to_owned(),
            description: format!(
                "Run a command line with `bash {}` in the working directory. Returns the exit \
                 code, stdout and stderr (each cut to {} KiB, start and end kept). A non-zero \
                 exit or a timeout fails the call. Times out after {} s unless timeout_secs says \
                 otherwise (at most {} s): the command and everything it started are killed, \
                 exit code {TIMEOUT_EXIT_CODE}. {}",
                // The flag tells the model whether the person's profile is read; the full
                // prompt's note on `shell` says what each means. Nothing longer: in a 2k window
                // every token of a tool description counts.
                if self.limits.login { "-lc" } else { "-c" },
                self.limits.max_output_bytes / 1024,
                self.limits.default_timeout.as_secs(),
                self.limits.max_timeout.as_secs(),
                match &self.sandbox {
                    Some(sandbox) => format!(
                        "Runs in a sandbox: writes only inside the writable directories and \
                         $TMPDIR{}{}.",
                        if sandbox.network() {
                            ""
                        } else {
                            ", with no network"
                        },
                        if sandbox.complete() {
                            "; what it starts ends with it (run a server and its client in one \
                             command)"
                        } else {
                            ""
                        }
                    ),
                    None => "Not confined to the file scope: each command is subject to the \
                             user's approval."
                        .to_string(),
                },
            ),
            parameters: args::schema::<ShellArgs>(),
        }
    }

    fn call(&self, arguments: String) -> BoxFuture<'static, ToolOutput> {
        let cwd = self.cwd.clone();
        let limits = self.limits;
        let sandbox = self.sandbox.clone();
        async move {
            match args::parse::<ShellArgs>(DECL.name, &arguments) {
                Ok(args) => {
                    let sandbox = sandbox.filter(|_| !args.unconfined());
                    run(cwd, limits, sandbox, args).await
                }
                Err(output) => output,
            }
        }
        .boxed()
    }
}

async fn run(
    cwd: PathBuf,
    limits: ShellLimits,
    sandbox: Option<Sandbox>,
    args: ShellArgs,
) -> ToolOutput {
    let mut notes = Vec::new();
    let timeout = match args.timeout_secs.map(Duration::from_secs) {
        None => limits.default_timeout,
        Some(requested) if requested.is_zero() => {
            return ToolOutput::error("timeout_secs must be at least 1; call shell again");
        }
        Some(requested) if requested > limits.max_timeout => {
            notes.push(format!(
                "[timeout_secs {} is above the maximum of {} s; used {} s]",
                requested.as_secs(),
                limits.max_timeout.as_secs(),
                limits.max_timeout.as_secs()
            ));
            limits.max_timeout
        }
        Some(requested) => requested,
    };
    let mut command = tokio::process::Command::new("bash");
    command
        .arg(if limits.login { "-lc" } else { "-c" })
        .arg(&args.command)
        .current_dir(&cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own process group, so a timeout can kill everything the command started.
        .process_group(0)
        .kill_on_drop(true);
    // What Landlock cannot refuse inside the write roots (git hooks and config, seedpod's
    // project config) is compared before and after the command.
    let watched = sandbox
        .as_ref()
        .map(|s| (s.watched_roots(), Snapshot::take(&s.watched_roots())));
    // No provider key, token or password from the pod's environment (`shell_env.rs`).
    crate::shell_env::scrub(&mut command);
    if let Some(sandbox) = &sandbox {
        // Never run unconfined because confinement failed: the call fails instead.
        match sandbox.prepare() {
            Ok(prepared) => {
                command.env("TMPDIR", sandbox.temp_dir());
                prepared.apply(&mut command);
            }
            Err(err) => return ToolOutput::error(format!("{err}; the command was not run")),
        }
    }
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(err) => return ToolOutput::error(format!("could not start bash: {err}")),
    };
    let mut group = GroupKiller(child.id().and_then(|id| i32::try_from(id).ok()));
    let sandboxed = sandbox.is_some();
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let mut out = Capture::new(limits.max_output_bytes);
    let mut err = Capture::new(limits.max_output_bytes);
    let (mut out_buf, mut err_buf) = (vec![0u8; READ_CHUNK], vec![0u8; READ_CHUNK]);
    let deadline = Instant::now() + timeout;
    let mut exited: Option<(ExitStatus, Instant)> = None;

    // `None`: the deadline passed while the shell was still running.
    let status = loop {
        if let Some((status, _)) = exited
            && stdout.is_none()
            && stderr.is_none()
        {
            break Some(status);
        }
        let grace_end = exited.map(|(_, at)| at + PIPE_GRACE);
        tokio::select! {
            // Past the deadline with the shell already gone, only background output is
            // missing: that is the grace case, not a timeout.
            _ = tokio::time::sleep_until(deadline) => {
                if exited.is_some() {
                    notes.push(BACKGROUND_NOTE.to_owned());
                }
                break exited.map(|(status, _)| status);
            }
            _ = sleep_until_some(grace_end) => {
                notes.push(BACKGROUND_NOTE.to_owned());
                break exited.map(|(status, _)| status);
            }
            read = read_some(&mut stdout, &mut out_buf) => match read {
                Ok(0) | Err(_) => stdout = None,
                Ok(n) => out.push(&out_buf[..n]),
            },
            read = read_some(&mut stderr, &mut err_buf) => match read {
                Ok(0) | Err(_) => stderr = None,
                Ok(n) => err.push(&err_buf[..n]),
            },
            status = child.wait(), if exited.is_none() => match status {
                Ok(status) => exited = Some((status, Instant::now())),
                Err(wait_err) => {
                    return ToolOutput::error(format!("could not wait for the command: {wait_err}"));
                }
            },
        }
    };

    let mut meta = ToolMeta::default();
    let status_line = match status {
        Some(status) => {
            // Background processes it left running (a server started with `&`) are the
            // command's business; only a timeout or a dropped call kills the group.
            group.disarm();
            meta.exit_code = status.code();
            meta.signal = status.signal();
            describe_status(status)
        }
        None => {
            if sandboxed {
                // The process between the pod and the command ends the command's PID
                // namespace and exits once nothing in it is left (`sandbox/jail.rs`); waiting for
                // it means the call returns with every process of the command gone.
                group.end_namespace();
                if tokio::time::timeout(NAMESPACE_END_GRACE, child.wait())
                    .await
                    .is_err()
                {
                    group.kill();
                }
            } else {
                group.kill();
            }
            meta.exit_code = Some(TIMEOUT_EXIT_CODE);
            meta.timed_out = true;
            tracing::warn!(
                event = "tool_timeout",
                tool = "shell",
                timeout_ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
            );
            // Reap the shell itself; its group is already dead, so this returns at once.
            let _ = child.wait().await;
            notes.push(format!(
                "[timed out after {} s; the command and every process it started were killed. \
                 Pass a larger timeout_secs (at most {} s) if it needs longer; run servers and \
                 watchers in the background with output redirected to a file]",
                timeout.as_secs(),
                limits.max_timeout.as_secs()
            ));
            format!("exit code {TIMEOUT_EXIT_CODE}")
        }
    };
    // A timer can win the race against output already waiting in a pipe; keep that output.
    drain_ready(&mut stdout, &mut out_buf, &mut out);
    drain_ready(&mut stderr, &mut err_buf, &mut err);
    if let Some(sandbox) = &sandbox
        && status.is_some_and(|s| !s.success())
        && err.mentions_denial()
    {
        notes.push(sandbox_note(sandbox));
    }
    if let Some(sandbox) = &sandbox
        && crate::sandbox::reach::reached(&args.command, &err.text(), sandbox.hidden())
    {
        tracing::warn!(event = "sandbox_reached_for_seedpod");
        meta.sandbox.push(SandboxFinding::ReachedForSeedpod);
    }
    if let Some((roots, before)) = &watched {
        let changes = before.changes(&Snapshot::take(roots));
        if !changes.is_empty() {
            let (removed, remain) = watch::undo_created(&changes);
            tracing::warn!(
                event = "sandbox_protected_file_changed",
                removed = ?removed,
                changed = ?remain
            );
            meta.sandbox.extend(watch::findings(&removed, &remain));
        }
    }
    meta.dropped(out.dropped() + err.dropped());
    if meta.truncated {
        tracing::info!(
            event = "tool_output_truncated",
            tool = "shell",
            bytes_dropped = meta.bytes_dropped,
            stdout_bytes = out.total,
            stderr_bytes = err.total,
        );
    }
    // The model reads each finding as a note; the pod alerts the person from `meta`.
    notes.extend(meta.sandbox.iter().map(watch::finding_note));
    let text = render(&status_line, &notes, &out, &err);
    // A failed command is a failed call (the model, the log and the TUI all see it so); the
    // text still carries everything it printed.
    let failed = meta.timed_out || status.is_none_or(|s| !s.success());
    let output = if failed {
        ToolOutput::error(text)
    } else {
        ToolOutput::ok(text)
    };
    output.with_meta(meta)
}

/// Said after a failed sandboxed command whose errors look like the sandbox refused something.
fn sandbox_note(sandbox: &Sandbox) -> String {
    let roots: Vec<String> = sandbox
        .write_paths()
        .iter()
        .filter(|p| !p.starts_with("/dev"))
        .map(|p| p.display().to_string())
        .collect();
    format!(
        "[the command ran in the sandbox: it may write only under {}{}. If it must do more, \
         call shell again with \"sandbox\": false — a person will be asked to approve it]",
        roots.join(", "),
        if sandbox.network() {
            ""
        } else {
            ", and the network is off"
        }
    )
}

async fn read_some(
    pipe: &mut Option<impl AsyncRead + Unpin>,
    buf: &mut [u8],
) -> std::io::Result<usize> {
    match pipe {
        Some(pipe) => pipe.read(buf).await,
        None => std::future::pending().await,
    }
}

/// Take what a pipe holds right now, without waiting for more; bounded, because a process still
/// writing (in the background) could keep it full forever.
fn drain_ready(pipe: &mut Option<impl AsyncRead + Unpin>, buf: &mut [u8], capture: &mut Capture) {
    let Some(pipe) = pipe else { return };
    for _ in 0..MAX_FINAL_READS {
        match pipe.read(buf).now_or_never() {
            Some(Ok(n)) if n > 0 => capture.push(&buf[..n]),
            Some(Ok(_)) | Some(Err(_)) | None => return,
        }
    }
}

async fn sleep_until_some(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

fn describe_status(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(signal)) => format!("terminated by signal {signal}"),
        (None, None) => format!("ended with {status}"),
    }
}

fn render(status_line: &str, notes: &[String], out: &Capture, err: &Capture) -> String {
    let mut text = format!("{status_line}\n");
    for note in notes {
        text.push_str(note);
        text.push('\n');
    }
    for (name, capture) in [("stdout", out), ("stderr", err)] {
        if capture.total == 0 {
            continue;
        }
        text.push_str(&format!("--- {name} ---\n"));
        text.push_str(&capture.render(name));
        if !text.ends_with('\n') {
            text.push('\n');
        }
    }
    if out.total == 0 && err.total == 0 {
        text.push_str("(no output)\n");
    }
    text
}

/// Kills a process group when dropped, unless disarmed: a call dropped mid-run (a cancelled
/// turn) must not leave its processes running.
struct GroupKiller(Option<i32>);

impl GroupKiller {
    fn kill(&mut self) {
        if let Some(pgid) = self.0.take() {
            // SAFETY: kill(2) has no memory-safety preconditions. A negative pid addresses the
            // process group this call created; the id cannot have been reused while the group
            // has members, and an empty group just makes the call fail with ESRCH.
            unsafe {
                libc::kill(-pgid, libc::SIGKILL);
            }
        }
    }

    fn disarm(&mut self) {
        self.0 = None;
    }

    /// For a sandboxed command: ask the process in between to end the namespace (SIGTERM); the
    /// group stays armed in case it does not.
    fn end_namespace(&self) {
        if let Some(pid) = self.0 {
            // SAFETY: kill(2) has no memory-safety preconditions; the process is our child and
            // not yet reaped, so the id is still its own.
            unsafe {
                libc::kill(pid, libc::SIGTERM);
            }
        }
    }
}

impl Drop for GroupKiller {
    fn drop(&mut self) {
        self.kill();
    }
}

/// One output stream within a byte budget: the first half of the budget and the most recent
/// half are kept (errors tend to be at one end or the other), the middle is counted and dropped.
/// Memory stays bounded however much the command writes, and the pipe keeps being drained so the
/// command never blocks on a full pipe.
struct Capture {
    head: Vec<u8>,
    head_cap: usize,
    tail: VecDeque<u8>,
    tail_cap: usize,
    total: u64,
}

impl Capture {
    fn new(max: usize) -> Self {
        Capture {
            head: Vec::new(),
            head_cap: max / 2,
            tail: VecDeque::new(),
            tail_cap: max - max / 2,
            total: 0,
        }
    }

    fn push(&mut self, bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let to_head = bytes.len().min(self.head_cap - self.head.len());
        self.head.extend_from_slice(&bytes[..to_head]);
        let rest = &bytes[to_head..];
        let rest = &rest[rest.len().saturating_sub(self.tail_cap)..];
        self.tail.extend(rest);
        let excess = self.tail.len().saturating_sub(self.tail_cap);
        self.tail.drain(..excess);
    }

    fn dropped(&self) -> u64 {
        self.total - (self.head.len() + self.tail.len()) as u64
    }

    /// What was kept, head and tail joined.
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.head).into_owned()
            + &String::from_utf8_lossy(&self.tail.iter().copied().collect::<Vec<u8>>())
    }

    /// Whether what was kept reads like a refusal by the kernel (EACCES, EPERM, a refused
    /// connection).
    fn mentions_denial(&self) -> bool {
        let text = self.text();
        [
            "Permission denied",
            "Operation not permitted",
            "Read-only file system",
        ]
        .iter()
        .any(|needle| text.contains(needle))
    }

    fn render(&self, name: &str) -> String {
        let mut text = String::from_utf8_lossy(&self.head).into_owned();
        let dropped = self.dropped();
        if dropped > 0 {
            if !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&format!(
                "[… {} bytes of {name} dropped here ({} in total); redirect the output to a file \
                 and read or grep it for the rest …]\n",
                thousands(dropped),
                thousands(self.total)
            ));
        }
        let (front, back) = self.tail.as_slices();
        text.push_str(&String::from_utf8_lossy(&[front, back].concat()));
        text
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::time::Duration;

    use super::*;

    /// The approval and the tool read the choice to leave the sandbox the same way; anything
    /// but a well-formed `"sandbox": false` stays sandboxed (and a call that does not parse
    /// does not run at all).
    #[test]
    fn only_a_well_formed_false_leaves_the_sandbox() {
        assert!(wants_unconfined(r#"{"command": "ls", "sandbox": false}"#));
        for arguments in [
            r#"{"command": "ls"}"#,
            r#"{"command": "ls", "sandbox": true}"#,
            r#"{"command": "ls", "sandbox": "false"}"#,
            r#"{"command": "ls", "sandbox": 0}"#,
            r#"{"command": "ls", "sandbox": false, "sandbox": true}"#,
            r#"{"command": "ls", "sandbox": true, "sandbox": false}"#,
            r#"{"command": "ls", "sandbox": false, "extra": 1}"#,
            "not json",
        ] {
            assert!(!wants_unconfined(arguments), "{arguments}");
        }
    }
    use crate::test_support::{Fixture, json};
    use serde_json::json as j;

    #[test]
    fn capture_keeps_head_and_tail_and_counts_the_rest() {
        let mut capture = Capture::new(10);
        capture.push(b"0123");
        capture.push(b"456789abcdefghij");
        capture.push(b"XYZ");
        assert_eq!(capture.total, 23);
        assert_eq!(capture.head, b"01234");
        assert_eq!(capture.tail, b"ijXYZ");
        assert_eq!(capture.dropped(), 13);
        let mut small = Capture::new(10);
        small.push(b"0123456789");
        assert_eq!(small.dropped(), 0);
        assert_eq!(small.render("stdout"), "0123456789");
    }

    #[tokio::test]
    async fn a_zero_exit_succeeds_and_says_its_code() {
        let f = Fixture::new();
        let out = f.call("shell", r#"{"command": "true"}"#).await;
        assert!(!out.is_error);
        assert_eq!(out.content, "exit code 0\n(no output)\n");
        assert_eq!(out.meta.exit_code, Some(0));
        assert!(out.meta.duration_ms.is_some());
        assert_eq!(
            f.ok("shell", r#"{"command": "printf 'no newline'"}"#).await,
            "exit code 0\n--- stdout ---\nno newline\n"
        );
    }

    #[tokio::test]
    async fn a_non_zero_exit_fails_the_call_with_its_output_and_code() {
        let f = Fixture::new();
        let out = f
            .call("shell", r#"{"command": "pwd; echo oops >&2; exit 3"}"#)
            .await;
        assert!(out.is_error, "{}", out.content);
        assert_eq!(
            out.content,
            format!(
                "exit code 3\n--- stdout ---\n{}\n--- stderr ---\noops\n",
                f.cwd.display()
            )
        );
        assert_eq!(out.meta.exit_code, Some(3));
        assert_eq!(out.meta.outcome().as_deref(), Some("exit 3"));
        assert!(!out.meta.truncated);

        let killed = f.call("shell", r#"{"command": "kill -TERM $$"}"#).await;
        assert!(killed.is_error);
        assert_eq!(killed.content, "terminated by signal 15\n(no output)\n");
        assert_eq!(
            (killed.meta.exit_code, killed.meta.signal),
            (None, Some(15))
        );
    }

    #[tokio::test]
    async fn a_timeout_kills_the_whole_process_group() {
        let f = Fixture::new();
        let output = f
            .call(
                "shell",
                r#"{"command": "sleep 100 & echo $! > pidfile; wait", "timeout_secs": 1}"#,
            )
            .await;
        assert!(output.is_error, "a timeout is a failed call");
        assert!(output.meta.timed_out);
        assert_eq!(output.meta.exit_code, Some(TIMEOUT_EXIT_CODE));
        let out = output.content;
        assert!(out.starts_with("exit code 124\n[timed out after 1 s; the command and every process it started were killed."), "{out}");
        let pid: i32 = f.read("pidfile").trim().parse().expect("pid in pidfile");
        wait_until_gone(pid, Duration::from_secs(5));
    }

    #[tokio::test]
    async fn dropping_the_call_kills_the_whole_process_group() {
        let f = Fixture::new();
        let shell = Shell::new(f.cwd.clone(), ShellLimits::default(), None);
        let call = tokio::spawn(
            shell.call(r#"{"command": "sleep 100 & echo $! > pidfile; wait"}"#.to_owned()),
        );
        let pid = wait_for_pidfile(&f.path("pidfile"), Duration::from_secs(10)).await;
        call.abort();
        assert!(call.await.unwrap_err().is_cancelled());
        wait_until_gone(pid, Duration::from_secs(5));
    }

    #[tokio::test]
    async fn commands_run_in_a_plain_shell_unless_a_login_shell_is_configured() {
        let probe = r#"{"command": "shopt -q login_shell && echo login || echo plain"}"#;
        let plain = Fixture::new().ok("shell", probe).await;
        assert!(plain.ends_with("--- stdout ---\nplain\n"), "{plain}");
        let login = Fixture::with_shell(ShellLimits {
            login: true,
            ..ShellLimits::default()
        });
        let out = login.ok("shell", probe).await;
        assert!(out.ends_with("--- stdout ---\nlogin\n"), "{out}");
        // The model is told which it gets.
        let spec = |limits| {
            Shell::new(PathBuf::from("/"), limits, None)
                .spec()
                .description
        };
        assert!(spec(ShellLimits::default()).contains("`bash -c`"));
        let login_limits = ShellLimits {
            login: true,
            ..ShellLimits::default()
        };
        assert!(spec(login_limits).contains("`bash -lc`"));
    }

    #[tokio::test]
    async fn a_requested_timeout_above_the_maximum_is_clamped() {
        let f = Fixture::with_shell(ShellLimits {
            max_timeout: Duration::from_secs(5),
            ..ShellLimits::default()
        });
        let out = f
            .ok("shell", r#"{"command": "echo hi", "timeout_secs": 900}"#)
            .await;
        assert_eq!(
            out,
            "exit code 0\n[timeout_secs 900 is above the maximum of 5 s; used 5 s]\n--- stdout ---\nhi\n"
        );
        let err = f
            .err("shell", r#"{"command": "true", "timeout_secs": 0}"#)
            .await;
        assert!(err.contains("at least 1"), "{err}");
    }

    #[tokio::test]
    async fn a_megabyte_of_output_is_cut_with_the_dropped_count() {
        let f = Fixture::new();
        let output = f
            .call(
                "shell",
                r#"{"command": "head -c 1000000 /dev/zero | tr '\\0' a; head -c 1000000 /dev/zero | tr '\\0' b >&2"}"#,
            )
            .await;
        assert!(!output.is_error);
        assert!(output.meta.truncated);
        assert_eq!(output.meta.bytes_dropped, 2 * 795_200);
        let out = output.content;
        // 1,000,000 - 200 KiB kept.
        assert!(
            out.contains("[… 795,200 bytes of stdout dropped here (1,000,000 in total);"),
            "{}",
            &out[..200]
        );
        assert!(out.contains("[… 795,200 bytes of stderr dropped here (1,000,000 in total);"));
        let kept = |c: char| -> usize {
            out.lines()
                .filter(|l| !l.is_empty() && l.chars().all(|x| x == c))
                .map(str::len)
                .sum()
        };
        assert_eq!(kept('a'), 200 * 1024);
        assert_eq!(kept('b'), 200 * 1024);
        assert!(out.len() < 2 * 200 * 1024 + 1_000, "{}", out.len());
    }

    #[tokio::test]
    async fn background_processes_holding_the_pipes_do_not_hang_the_call() {
        let f = Fixture::new();
        let out = f
            .ok(
                "shell",
                r#"{"command": "sleep 30 & echo $! > pidfile; echo started"}"#,
            )
            .await;
        let pid: i32 = f.read("pidfile").trim().parse().expect("pid in pidfile");
        // SAFETY: kill(2) with a pid this test's command started.
        unsafe { libc::kill(pid, libc::SIGKILL) };
        assert!(
            out.starts_with("exit code 0\n[the command exited, but processes it started"),
            "{out}"
        );
        assert!(out.ends_with("--- stdout ---\nstarted\n"), "{out}");
    }

    #[tokio::test]
    async fn bad_arguments_are_explained() {
        let f = Fixture::new();
        let err = f.err("shell", r#"{"cmd": "ls"}"#).await;
        assert!(err.contains("unknown field `cmd`"), "{err}");
        let err = f.err("shell", &json(j!({"command": ["ls"]}))).await;
        assert!(
            err.contains("invalid type: sequence, expected a string"),
            "{err}"
        );
    }

    /// Wait (bounded) for the command to have written its background pid.
    async fn wait_for_pidfile(path: &Path, within: Duration) -> i32 {
        let deadline = std::time::Instant::now() + within;
        loop {
            let written = std::fs::read_to_string(path).unwrap_or_default();
            if let Some(pid) = written.strip_suffix('\n').and_then(|p| p.parse().ok()) {
                return pid;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the command never wrote {}",
                path.display()
            );
            tokio::task::yield_now().await;
        }
    }

    /// Wait (bounded) for `pid` to be gone: no such process, or a zombie nobody has reaped yet
    /// (a container's init may be slow to), which is dead all the same.
    fn wait_until_gone(pid: i32, within: Duration) {
        let deadline = std::time::Instant::now() + within;
        loop {
            // SAFETY: signal 0 only checks for existence.
            let exists = unsafe { libc::kill(pid, 0) } == 0;
            if !exists || is_zombie(pid) {
                return;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "process {pid} still alive after the timeout"
            );
            std::thread::yield_now();
        }
    }

    fn is_zombie(pid: i32) -> bool {
        let stat = std::fs::read_to_string(Path::new("/proc").join(pid.to_string()).join("stat"));
        // The state follows the parenthesised command name: "123 (sleep) Z ...".
        stat.ok()
            .and_then(|s| {
                s.rsplit_once(')')
                    .map(|(_, rest)| rest.trim_start().starts_with('Z'))
            })
            .unwrap_or(false)
    }
}
