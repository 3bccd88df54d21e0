//! Shared support for seedpod's end-to-end tests: a sandboxed `SEEDPOD_HOME`, the real
//! `seedpod` binary, scripted-provider scripts, and helpers that wait for events (never sleep).
//!
//! Every test gets its own temp home; pods started in it are killed when the `TestHome` drops,
//! so a failing test never leaves daemons behind.

pub mod binary;
pub mod events;
pub mod limit_server;
pub mod openai_fake;
pub mod pty;
pub mod responses_fake;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

pub use binary::seedpod_bin;

use seedpod_client::{Connection, Home};
use seedpod_protocol::{ClientMode, Entry, Method, PodEvent, PodName, ServerMsg};
use serde_json::Value;

/// Upper bound for waiting on an event; only reached when a test is failing.
pub const EVENT_TIMEOUT: Duration = Duration::from_secs(30);

/// Say that a test cannot run here because it needs `what` (a kernel feature, a program, a
/// quiet port); the caller then returns. Where `CI` is set this fails the test instead: CI's
/// machine is set up to have everything the suite needs (`.ci/run`), and a skip there would pass
/// without testing anything.
pub fn missing_prerequisite(what: &str) {
    assert!(
        std::env::var_os("CI").is_none(),
        "this CI machine cannot run the test: it needs {what}"
    );
    // Past the harness's capture, so a skip shows in a passing run.
    let _ = writeln!(std::io::stderr(), "skipped: the test needs {what}");
}

/// Whether to run a heavy scenario — one that costs tens of seconds of a debug build and
/// tests what a change elsewhere rarely touches (`docs/testing.md`, "Heavy scenarios"). It runs
/// where `CI` or `SEEDPOD_HEAVY_TESTS` is set; elsewhere it says it was skipped and how to run
/// it, and the caller returns. So CI runs it once per submission, not every `cargo test` of a
/// one-line change.
pub fn heavy_scenario(what: &str) -> bool {
    if std::env::var_os("CI").is_some() || std::env::var_os("SEEDPOD_HEAVY_TESTS").is_some() {
        return true;
    }
    let _ = writeln!(
        std::io::stderr(),
        "skipped heavy scenario ({what}): it runs in CI; SEEDPOD_HEAVY_TESTS=1 runs it here"
    );
    false
}

/// One test's own seedpod world: a temporary directory holding its `SEEDPOD_HOME` and working
/// directory, and the `seedpod` commands run against it. (Not the shell sandbox, which is
/// `seedpod_tools::TestHome`; this was once also called `TestHome`.)
pub struct TestHome {
    pub dir: tempfile::TempDir,
    pub home: Home,
}

impl Default for TestHome {
    fn default() -> Self {
        TestHome::new()
    }
}

impl TestHome {
    pub fn new() -> TestHome {
        // Short prefix: socket paths must fit sun_path.
        let dir = tempfile::Builder::new()
            .prefix("sp")
            .tempdir_in("/tmp")
            .expect("temp dir");
        let home = Home::under(dir.path());
        TestHome { dir, home }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Write the user's `config.toml` (creating the config directory); returns its path.
    pub fn user_config(&self, text: &str) -> PathBuf {
        std::fs::create_dir_all(&self.home.config).expect("config dir");
        let path = self.home.config.join("config.toml");
        std::fs::write(&path, text).expect("write config.toml");
        path
    }

    /// A `seedpod` command with this sandbox's `SEEDPOD_HOME`.
    pub fn cmd(&self) -> Command {
        let mut cmd = Command::new(seedpod_bin());
        cmd.env("SEEDPOD_HOME", self.dir.path());
        cmd.env_remove("SEEDPOD_LOG");
        cmd.current_dir(self.dir.path());
        cmd
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.cmd().args(args).output().expect("run seedpod")
    }

    /// Run and require exit 0; returns stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "seedpod {args:?} failed ({}):\nstdout: {}\nstderr: {}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Write a scripted-provider script (one JSON response per line).
    pub fn script(&self, file: &str, steps: &[Value]) -> PathBuf {
        let path = self.dir.path().join(file);
        let text: Vec<String> = steps.iter().map(Value::to_string).collect();
        std::fs::write(&path, text.join("\n") + "\n").expect("write script");
        path
    }

    /// Start a pod on the scripted provider and wait until it is ready.
    pub fn start_scripted(&self, name: &str, script: &Path) {
        let out = self.ok(&[
            "start",
            name,
            "--provider",
            "scripted",
            "--script",
            script.to_str().expect("utf-8 path"),
        ]);
        assert_eq!(out.trim(), name);
    }

    /// The request bodies the scripted provider received, in order.
    pub fn requests(&self, name: &str) -> Vec<String> {
        let path = self
            .home
            .pod_dir(&PodName::new(name.to_string()).unwrap())
            .join("scripted-requests.jsonl");
        std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// A gate file for scripted `gate` steps; `open_gate` releases the held response.
    pub fn gate(&self, file: &str) -> PathBuf {
        self.dir.path().join(file)
    }

    pub fn open_gate(&self, file: &str) {
        std::fs::write(self.gate(file), b"open").expect("open gate");
    }

    pub fn segment_files(&self, name: &str) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(
            self.home
                .pod_dir(&PodName::new(name.to_string()).unwrap())
                .join("segments"),
        )
        .map(|dir| dir.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
        files.retain(|p| p.extension().is_some_and(|e| e == "jsonl"));
        files.sort();
        files
    }

    pub async fn connect(&self, name: &str, mode: ClientMode) -> Connection {
        Connection::connect(
            &self.home,
            &PodName::new(name.to_string()).unwrap(),
            "seedpod-e2e",
            mode,
        )
        .await
        .expect("connect to pod")
    }

    /// The pod `name` as most scenarios drive it: an attached client whose events the test
    /// waits on, and a control client that gives it input.
    pub async fn drive(&self, name: &str) -> Driven {
        Driven {
            events: self.connect(name, ClientMode::Attach).await,
            seen: Vec::new(),
            control: self.connect(name, ClientMode::Control).await,
        }
    }

    pub async fn pid(&self, name: &str) -> u32 {
        let mut conn = self.connect(name, ClientMode::Control).await;
        match conn.call(Method::Status).await.expect("status") {
            ServerMsg::StatusReply { status, .. } => status.pid,
            other => panic!("unexpected status reply {other:?}"),
        }
    }

    /// `kill -9` the pod process and wait until it is gone (its lock released).
    pub async fn kill9(&self, name: &str) {
        let pid = self.pid(name).await;
        kill(pid, libc::SIGKILL);
        wait_exit(pid).await;
    }

    pub async fn context(&self, name: &str) -> String {
        let mut conn = self.connect(name, ClientMode::Control).await;
        match conn.call(Method::GetContext).await.expect("context") {
            ServerMsg::Context { body, .. } => body,
            other => panic!("unexpected context reply {other:?}"),
        }
    }

    /// Add no-wake notifications until pod `name`'s segment holds `target` entries (for
    /// benchmarks of big sessions). Several connections at once, so the writer's group commit
    /// shares fsyncs between them.
    pub async fn grow(&self, name: &str, target: usize) {
        const WRITERS: usize = 16;
        let have = self.history(name).await.len();
        let missing = target.saturating_sub(have);
        let mut tasks = Vec::new();
        for w in 0..WRITERS {
            let count = missing / WRITERS + usize::from(w < missing % WRITERS);
            let mut conn = self.connect(name, ClientMode::Control).await;
            tasks.push(tokio::spawn(async move {
                for i in 0..count {
                    conn.call(seedpod_protocol::Method::Notify {
                        message: format!("grow {w}-{i}"),
                        wake: false,
                    })
                    .await
                    .expect("grow");
                }
            }));
        }
        for task in tasks {
            task.await.expect("writer task");
        }
    }

    /// Append finished turns to stopped pod `name`'s segment until it holds `total` entries
    /// (a big transcript in no time, for the TUI's tests and benches); returns how the last
    /// answer starts on screen.
    pub fn append_turns(&self, name: &str, total: u64) -> String {
        use seedpod_protocol::{
            EntryKind, FinishReason, ModelItem, RunEndReason, RunTrigger, Segment, Usage,
        };
        let file = self.segment_files(name).pop().expect("a segment file");
        let text = std::fs::read_to_string(&file).expect("read the segment");
        let last: Entry =
            serde_json::from_str(text.lines().last().expect("an entry")).expect("entry");
        let mut seq = last.seq;
        let mut out = String::new();
        let mut turn = 0;
        while (seq + 6).get() < total {
            turn += 1;
            let answer = format!("Answer number {turn}: a line of **markdown** with `code`.");
            let kinds = [
                EntryKind::RunStart {
                    trigger: RunTrigger::User,
                },
                EntryKind::UserInput {
                    segments: vec![Segment::text(format!("question {turn}"))],
                    text: format!("question {turn}"),
                    queue_id: None,
                },
                EntryKind::AssistantItem {
                    item: ModelItem::AssistantText { text: answer },
                },
                EntryKind::Usage(Usage {
                    input_tokens: 100,
                    output_tokens: 20,
                    ..Usage::default()
                }),
                EntryKind::TurnEnd {
                    iteration: 1,
                    finish: FinishReason::Stop,
                },
                EntryKind::RunEnd {
                    reason: RunEndReason::Completed,
                    message: None,
                },
            ];
            for kind in kinds {
                seq += 1;
                let entry = Entry {
                    v: 1,
                    seq,
                    ts: last.ts + seq.get(),
                    kind,
                };
                out.push_str(&serde_json::to_string(&entry).expect("encode"));
                out.push('\n');
            }
        }
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&file)
            .expect("open the segment");
        std::io::Write::write_all(&mut file, out.as_bytes()).expect("append");
        format!("Answer number {turn}: a line")
    }

    pub async fn history(&self, name: &str) -> Vec<Entry> {
        let mut conn = self.connect(name, ClientMode::Control).await;
        match conn.call(Method::GetHistory).await.expect("history") {
            ServerMsg::History { entries, .. } => entries,
            other => panic!("unexpected history reply {other:?}"),
        }
    }
}

impl Drop for TestHome {
    fn drop(&mut self) {
        // Kill every pod this sandbox started (their pids are in the lock files).
        let Ok(pods) = std::fs::read_dir(self.home.pods_dir()) else {
            return;
        };
        for pod in pods.filter_map(|e| e.ok()) {
            let lock = pod.path().join("pod.lock");
            if let Ok(text) = std::fs::read_to_string(&lock)
                && let Ok(pid) = text.trim().parse::<u32>()
            {
                kill(pid, libc::SIGKILL);
            }
        }
    }
}

/// Resident memory of process `pid` in kB (`VmRSS` of `/proc/PID/status`), 0 if unreadable.
pub fn rss_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

pub fn kill(pid: u32, signal: i32) {
    // SAFETY: kill has no memory-safety preconditions; a stale pid at worst hits nothing.
    unsafe {
        libc::kill(pid as i32, signal);
    }
}

/// Wait until process `pid` has exited: a pidfd becomes readable when it does (an event, not a
/// poll; the pod is not our child, so it cannot be waited on).
pub async fn wait_exit(pid: u32) {
    use std::os::fd::{FromRawFd, OwnedFd};
    // SAFETY: pidfd_open takes a pid and flags and returns a new fd or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
    if fd < 0 {
        return; // already gone
    }
    // SAFETY: the syscall returned a fresh fd that nothing else owns.
    let owned = unsafe { OwnedFd::from_raw_fd(fd as i32) };
    // SAFETY: `owned` is a fresh fd that this AsyncFd owns exclusively until it drops.
    let async_fd = unsafe { tokio::io::unix::AsyncFd::register(owned) }
        .unwrap_or_else(|e| panic!("register pidfd: {e}"));
    tokio::time::timeout(EVENT_TIMEOUT, async_fd.readable())
        .await
        .expect("pod process did not exit")
        .expect("wait on pidfd")
        .retain_ready();
}

/// A running pod's two clients (`TestHome::drive`): `events` attached, with every frame read
/// from it collected in `seen`, and `control` for input and commands.
pub struct Driven {
    pub events: Connection,
    pub seen: Vec<ServerMsg>,
    pub control: Connection,
}

impl Driven {
    /// Give the pod `text` as typed input; panics unless the pod takes it (acknowledged, run
    /// or queued).
    pub async fn run(&mut self, text: &str) {
        let reply = self
            .control
            .call(Method::Run {
                segments: vec![seedpod_protocol::Segment::text(text)],
            })
            .await
            .expect("the pod answers the input");
        assert!(
            matches!(reply, ServerMsg::Ack { .. }),
            "the pod took the input: {reply:?}"
        );
    }

    /// Read the attached client's frames until `pick` matches (`wait_for`).
    pub async fn wait_for<T>(&mut self, pick: impl FnMut(&ServerMsg) -> Option<T>) -> T {
        wait_for(&mut self.events, &mut self.seen, pick).await
    }
}

/// Read frames until `pick` returns `Some`, collecting every frame seen (including the match).
pub async fn wait_for<T>(
    conn: &mut Connection,
    seen: &mut Vec<ServerMsg>,
    mut pick: impl FnMut(&ServerMsg) -> Option<T>,
) -> T {
    let result = tokio::time::timeout(EVENT_TIMEOUT, async {
        loop {
            let msg = conn
                .recv()
                .await
                .expect("receive frame")
                .expect("pod closed the connection while a test waited for an event");
            let found = pick(&msg);
            seen.push(msg);
            if let Some(found) = found {
                return found;
            }
        }
    })
    .await;
    match result {
        Ok(found) => found,
        Err(_) => panic!(
            "timed out waiting for an event; last frames: {:?}",
            seen.iter().rev().take(5).collect::<Vec<_>>()
        ),
    }
}

/// Matches a committed `run_end`.
pub fn is_run_end(msg: &ServerMsg) -> Option<()> {
    match msg {
        ServerMsg::Committed { entry, .. }
            if matches!(entry.kind, seedpod_protocol::EntryKind::RunEnd { .. }) =>
        {
            Some(())
        }
        _ => None,
    }
}

/// Matches a committed `approval_request`, giving the request.
pub fn is_approval_request(msg: &ServerMsg) -> Option<seedpod_protocol::ApprovalRequest> {
    match msg {
        ServerMsg::Committed { entry, .. } => match &entry.kind {
            seedpod_protocol::EntryKind::ApprovalRequest(request) => Some(request.clone()),
            _ => None,
        },
        _ => None,
    }
}

/// The content of every tool result in `entries`, in order.
pub fn tool_results(entries: &[seedpod_protocol::Entry]) -> Vec<String> {
    entries
        .iter()
        .filter_map(|e| match &e.kind {
            seedpod_protocol::EntryKind::ToolResult { content, .. } => Some(content.clone()),
            _ => None,
        })
        .collect()
}

/// Matches a committed pod event from child pod `child` (any kind), giving the event.
pub fn is_pod_event_from(child: &str) -> impl FnMut(&ServerMsg) -> Option<PodEvent> + '_ {
    move |msg| match msg {
        ServerMsg::Committed { entry, .. } => match &entry.kind {
            seedpod_protocol::EntryKind::SystemItem {
                item: seedpod_protocol::SystemItem::PodEvent { event, .. },
                ..
            } if event.pod() == Some(child) => Some(event.clone()),
            _ => None,
        },
        _ => None,
    }
}

/// Matches a `state` event with the given state.
pub fn is_state(state: seedpod_protocol::PodState) -> impl FnMut(&ServerMsg) -> Option<()> {
    move |msg| match msg {
        ServerMsg::State { state: s, .. } if *s == state => Some(()),
        _ => None,
    }
}
