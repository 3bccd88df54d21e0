//! `seedpod exec` as scripts use it: in a real shell pipeline, with the exit code of each
//! outcome (done, the model failed, a call needed approval, interrupted), `--json` events that
//! parse line by line, approvals only as the flags say, and the pod gone afterwards unless
//! `--keep`.

use std::io::BufRead as _;
use std::path::Path;
use std::process::{Command, Stdio};

use seedpod_e2e::openai_fake::OpenAiFake;
use seedpod_e2e::{EVENT_TIMEOUT, TestHome, seedpod_bin, wait_exit, wait_for};
use seedpod_protocol::{ClientMode, ServerMsg};
use serde_json::{Value, json};

/// What one `seedpod exec` in a pipeline left behind.
struct Piped {
    /// `seedpod exec`'s own exit status (not the pipeline's).
    code: i32,
    /// Its stdout after passing through `tr a-z A-Z`.
    stdout: String,
    stderr: String,
}

/// Run `seedpod exec ARGS | tr a-z A-Z` under `sh -c`, the way a CI script would, keeping
/// exec's own exit status (POSIX sh has no `pipefail`, so the left side writes it to a file).
fn exec_piped(sb: &TestHome, args: &[&str], stdin: Option<&str>) -> Piped {
    let code_file = sb.path().join("exec.code");
    let _ = std::fs::remove_file(&code_file);
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(r#"{ "$SP" exec "$@"; echo $? > "$CODE"; } | tr a-z A-Z"#)
        .arg("sh")
        .args(args)
        .env("SP", seedpod_bin())
        .env("CODE", &code_file)
        .env("SEEDPOD_HOME", sb.path())
        .env_remove("SEEDPOD_LOG")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .current_dir(sb.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run sh");
    if let Some(mut input) = child.stdin.take() {
        std::io::Write::write_all(&mut input, stdin.unwrap_or_default().as_bytes())
            .expect("write stdin");
    }
    let out = child.wait_with_output().expect("the pipeline ends");
    let code = std::fs::read_to_string(&code_file)
        .expect("exec's status was written")
        .trim()
        .parse()
        .expect("a number");
    Piped {
        code,
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The pods left in the home: an exec pod must not be among them unless kept.
fn pods_left(sb: &TestHome) -> Vec<String> {
    std::fs::read_dir(sb.home.pods_dir())
        .map(|dir| {
            dir.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

fn shell_step(command: &str) -> Value {
    json!({"tool_calls": [{"name": "shell", "arguments": json!({"command": command}).to_string()}]})
}

fn script_arg(path: &Path) -> &str {
    path.to_str().expect("utf-8 path")
}

/// Each line of `--json` output as JSON; panics on a line that does not parse.
fn events(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}")))
        .collect()
}

#[test]
fn the_answer_goes_down_the_pipe_with_exit_0_and_the_pod_is_removed() {
    let sb = TestHome::new();
    let script = sb.script(
        "s.jsonl",
        &[json!({"text": "the answer is forty-two", "chunk_chars": 4})],
    );
    let out = exec_piped(
        &sb,
        &[
            "--provider",
            "scripted",
            "--script",
            script_arg(&script),
            "-",
        ],
        Some("what is the answer?"),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, "THE ANSWER IS FORTY-TWO\n");
    assert_eq!(pods_left(&sb), Vec::<String>::new(), "the exec pod is gone");
}

#[test]
fn a_provider_that_fails_is_exit_1_with_its_reason() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let fake = runtime.block_on(OpenAiFake::failing(500));
    let sb = TestHome::new();
    sb.user_config("[retry]\nmax_retries = 0\n[context]\nprobe = false\n");
    let out = exec_piped(
        &sb,
        &[
            "--provider",
            "openai",
            "--base-url",
            fake.base_url(),
            "--model",
            "gpt-test",
            "say hello",
        ],
        None,
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.contains("500"), "says why: {}", out.stderr);
    assert_eq!(out.stdout, "");
    assert_eq!(fake.seen().len(), 1, "the request reached the fake");
    assert_eq!(pods_left(&sb), Vec::<String>::new());
}

#[test]
fn a_call_that_needs_approval_is_exit_3_at_once_naming_the_flag() {
    let sb = TestHome::new();
    let script = sb.script(
        "s.jsonl",
        &[shell_step("echo ran > ran.txt"), json!({"text": "done"})],
    );
    let out = exec_piped(
        &sb,
        &[
            "--provider",
            "scripted",
            "--script",
            script_arg(&script),
            "make a file",
        ],
        None,
    );
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(out.stderr.contains("--allow shell"), "{}", out.stderr);
    assert!(
        out.stderr.contains("echo ran"),
        "names the call: {}",
        out.stderr
    );
    assert!(
        !sb.path().join("ran.txt").exists(),
        "the command did not run"
    );
    assert_eq!(pods_left(&sb), Vec::<String>::new());

    // Approving what only reads is no licence to run commands.
    let out = exec_piped(
        &sb,
        &[
            "--provider",
            "scripted",
            "--script",
            script_arg(&script),
            "--approve",
            "read-only",
            "make a file",
        ],
        None,
    );
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        !sb.path().join("ran.txt").exists(),
        "the command did not run"
    );
}

#[test]
fn json_events_parse_line_by_line_and_approve_all_runs_the_call() {
    let sb = TestHome::new();
    let script = sb.script(
        "s.jsonl",
        &[
            shell_step("echo ran > ran.txt"),
            json!({"text": "made \"ran.txt\"\nbye"}),
        ],
    );
    let out = exec_piped(
        &sb,
        &[
            "--provider",
            "scripted",
            "--script",
            script_arg(&script),
            "--approve",
            "all",
            "--json",
            "make a file",
        ],
        None,
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        sb.path().join("ran.txt").exists(),
        "the approved command ran"
    );
    // `tr` upper-cased the stream; every line still parses as JSON.
    let events = events(&out.stdout.to_lowercase());
    let types: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
    for expected in [
        "started",
        "tool_call",
        "approval",
        "tool_result",
        "text",
        "end",
    ] {
        assert!(types.contains(&expected), "{expected} in {types:?}");
    }
    let approval = events.iter().find(|e| e["type"] == "approval").unwrap();
    assert_eq!(approval["decision"], "approved");
    assert_eq!(approval["by"], "--approve all");
    let text = events.iter().find(|e| e["type"] == "text").unwrap();
    assert_eq!(text["text"], "made \"ran.txt\"\nbye");
    let end = events.last().unwrap();
    assert_eq!(end["type"], "end");
    assert_eq!(end["status"], "completed");
    assert_eq!(end["exit_code"], 0);
    assert_eq!(end["kept"], false);
}

#[test]
fn keep_leaves_the_pod_inspectable() {
    let sb = TestHome::new();
    let script = sb.script("s.jsonl", &[json!({"text": "kept answer"})]);
    let out = exec_piped(
        &sb,
        &[
            "--provider",
            "scripted",
            "--script",
            script_arg(&script),
            "--keep",
            "--name",
            "job1",
            "answer",
        ],
        None,
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("kept pod job1"), "{}", out.stderr);
    assert_eq!(pods_left(&sb), ["job1"]);
    let history = sb.ok(&["history", "job1"]);
    assert!(history.contains("kept answer"), "{history}");
}

#[test]
fn bad_flags_and_names_fail_before_any_pod_starts() {
    let sb = TestHome::new();
    let script = sb.script("s.jsonl", &[json!({"text": "hello"})]);
    sb.start_scripted("mine", &script);
    let cases: [(&[&str], &str); 3] = [
        (&["--allow", "shel", "task"], "--allow shel"),
        (&["--name", "mine", "task"], "a pod named \"mine\" exists"),
        (&["-"], "the task is empty"),
    ];
    for (args, says) in cases {
        let mut all = vec!["--provider", "scripted", "--script", script_arg(&script)];
        all.extend_from_slice(args);
        let out = exec_piped(&sb, &all, Some("\n"));
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains(says), "{args:?}: {}", out.stderr);
    }
    assert_eq!(pods_left(&sb), ["mine"], "the existing pod is untouched");
    assert!(sb.ok(&["history", "mine"]).trim().lines().count() <= 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_stops_the_run_and_removes_the_pod() {
    let sb = TestHome::new();
    let script = sb.script(
        "s.jsonl",
        &[json!({"text": "a long answer that never ends", "gate": "never-opened"})],
    );
    let mut child = Command::new(seedpod_bin())
        .args(["exec", "--json", "--name", "held", "--provider", "scripted"])
        .args(["--script", script_arg(&script), "go"])
        .env("SEEDPOD_HOME", sb.path())
        .env_remove("SEEDPOD_LOG")
        .current_dir(sb.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run exec");
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let started: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert_eq!(started["type"], "started");

    // The model is mid-answer, held at its gate.
    let mut events = sb.connect("held", ClientMode::Attach).await;
    let mut seen = Vec::new();
    wait_for(&mut events, &mut seen, |msg| match msg {
        ServerMsg::TextDelta { .. } => Some(()),
        ServerMsg::InFlight { text, .. } if !text.is_empty() => Some(()),
        _ => None,
    })
    .await;
    let pod_pid = sb.pid("held").await;
    seedpod_e2e::kill(child.id(), libc::SIGTERM);
    let status = tokio::time::timeout(
        EVENT_TIMEOUT,
        tokio::task::spawn_blocking(move || child.wait()),
    )
    .await
    .expect("exec ends after SIGTERM")
    .unwrap()
    .unwrap();
    assert_eq!(status.code(), Some(130));
    let end: Value = serde_json::from_str(&lines.last().unwrap().unwrap()).unwrap();
    assert_eq!(end["status"], "interrupted");
    wait_exit(pod_pid).await;
    assert_eq!(pods_left(&sb), Vec::<String>::new(), "the pod was removed");
}

/// `seedpod exec --json --name NAME` on a model held mid-answer at a gate that never opens;
/// returns exec, its stdout lines, an attached connection that saw the answer start, and the
/// pod's pid.
async fn exec_held(
    sb: &TestHome,
    name: &str,
    keep: bool,
) -> (
    std::process::Child,
    std::io::Lines<std::io::BufReader<std::process::ChildStdout>>,
    seedpod_client::Connection,
    u32,
) {
    let script = sb.script(
        "s.jsonl",
        &[json!({"text": "a long answer that never ends", "gate": "never-opened"})],
    );
    let mut cmd = Command::new(seedpod_bin());
    cmd.args(["exec", "--json", "--name", name, "--provider", "scripted"])
        .args(["--script", script_arg(&script), "go"])
        .env("SEEDPOD_HOME", sb.path())
        .env_remove("SEEDPOD_LOG")
        .current_dir(sb.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if keep {
        cmd.arg("--keep");
    }
    let mut child = cmd.spawn().expect("run exec");
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let started: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert_eq!(started["type"], "started");
    let mut events = sb.connect(name, ClientMode::Attach).await;
    let mut seen = Vec::new();
    wait_for(&mut events, &mut seen, |msg| match msg {
        ServerMsg::TextDelta { .. } => Some(()),
        ServerMsg::InFlight { text, .. } if !text.is_empty() => Some(()),
        _ => None,
    })
    .await;
    let pid = sb.pid(name).await;
    (child, lines, events, pid)
}

async fn reap(mut child: std::process::Child) -> std::process::ExitStatus {
    tokio::time::timeout(
        EVENT_TIMEOUT,
        tokio::task::spawn_blocking(move || child.wait()),
    )
    .await
    .expect("exec ends")
    .unwrap()
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_of_exec_leaves_no_pod_behind() {
    let sb = TestHome::new();
    let (child, _lines, _events, pod_pid) = exec_held(&sb, "orphan", false).await;
    seedpod_e2e::kill(child.id(), libc::SIGKILL);
    let status = reap(child).await;
    assert_eq!(status.code(), None, "killed, not exited");
    // The pod sees exec's end of the lease close, stops, and removes itself.
    wait_exit(pod_pid).await;
    assert_eq!(
        pods_left(&sb),
        Vec::<String>::new(),
        "the pod removed itself"
    );
    let logs = sb.home.logs_dir();
    assert!(!logs.join("orphan.stderr").exists(), "its stderr file too");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_of_exec_with_keep_cancels_the_run_and_keeps_the_pod() {
    let sb = TestHome::new();
    let (child, _lines, mut events, _pod_pid) = exec_held(&sb, "kept", true).await;
    seedpod_e2e::kill(child.id(), libc::SIGKILL);
    reap(child).await;
    let mut seen = Vec::new();
    wait_for(&mut events, &mut seen, |msg| match msg {
        ServerMsg::State { state, .. } if *state == seedpod_protocol::PodState::Idle => Some(()),
        _ => None,
    })
    .await;
    assert_eq!(pods_left(&sb), ["kept"], "kept for inspection");
    let history = sb.ok(&["history", "kept"]);
    assert!(history.contains("go"), "{history}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigint_stops_the_run_and_removes_the_pod() {
    let sb = TestHome::new();
    let (child, lines, _events, pod_pid) = exec_held(&sb, "ctrl-c", false).await;
    seedpod_e2e::kill(child.id(), libc::SIGINT);
    let status = reap(child).await;
    assert_eq!(status.code(), Some(130));
    let end: Value = serde_json::from_str(&lines.last().unwrap().unwrap()).unwrap();
    assert_eq!(end["status"], "interrupted");
    wait_exit(pod_pid).await;
    assert_eq!(pods_left(&sb), Vec::<String>::new(), "the pod was removed");
}

#[test]
fn a_lease_that_is_no_pipe_is_refused_before_the_pod_starts() {
    let sb = TestHome::new();
    let script = sb.script("s.jsonl", &[json!({"text": "hello"})]);
    for (fd, says) in [("1", "standard streams"), ("97", "no such open descriptor")] {
        let out = sb
            .cmd()
            .args(["pod", "serve", "sneaky", "--provider", "scripted"])
            .args(["--script", script_arg(&script), "--exec-lease", fd])
            .output()
            .expect("run pod serve");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(says), "{fd}: {stderr}");
    }
    assert_eq!(pods_left(&sb), Vec::<String>::new());
}
