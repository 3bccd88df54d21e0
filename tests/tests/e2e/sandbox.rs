//! The shell sandbox (`docs/sandbox.md`) end to end with the real binary. An allowed `shell`
//! that writes outside the write roots fails with "Permission denied" and nothing lands; with
//! `network = false` a connect to a local listener is refused; `shell = "sandboxed"` runs a
//! confined command without asking and asks before `"sandbox": false`; a child pod's shell is
//! confined to the scope its parent delegated. Where the kernel has no Landlock each test fails
//! in CI and is skipped, saying so, elsewhere.

use std::net::TcpListener;

use seedpod_e2e::{
    TestHome, is_approval_request, is_run_end, missing_prerequisite, tool_results, wait_for,
};
use seedpod_protocol::{ApprovalAnswer, ClientMode, Entry, EntryKind, Method, ServerMsg};
use serde_json::{Value, json};

/// Whether the kernel has Landlock at ABI `at_least` or later. Where it has not the test cannot
/// run: a failure where `CI` is set, a skip elsewhere (`missing_prerequisite`).
fn landlock(at_least: i64) -> bool {
    // SAFETY: landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION) only returns a
    // number; it reads and writes no memory of ours.
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            1u32,
        )
    };
    if abi < at_least {
        let have = if abi < 1 {
            "none".to_string()
        } else {
            format!("ABI {abi}")
        };
        missing_prerequisite(&format!(
            "Landlock ABI {at_least} or later (this kernel has {have})"
        ));
        return false;
    }
    true
}

fn shell(arguments: Value) -> Value {
    json!({"tool_calls": [{"name": "shell", "arguments": arguments.to_string()}]})
}

fn call(tool: &str, arguments: Value) -> Value {
    json!({"tool_calls": [{"name": tool, "arguments": arguments.to_string()}]})
}

fn requests(entries: &[Entry]) -> usize {
    entries
        .iter()
        .filter(|e| matches!(e.kind, EntryKind::ApprovalRequest(_)))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_allowed_shell_cannot_write_outside_its_write_roots() {
    if !landlock(1) {
        return;
    }
    let sb = TestHome::new();
    sb.user_config("[approvals]\nshell = \"allow\"\n");
    // Outside the pod's directory but in the sandbox's own temp area, where nothing of the pod
    // may write.
    let outside = tempfile::tempdir().expect("outside dir");
    let target = outside.path().join("escaped.txt");
    let script = sb.script(
        "s.jsonl",
        &[
            shell(json!({"command": format!("echo pwned > '{}'", target.display())})),
            shell(
                json!({"command": "echo ok > inside.txt && echo t > \"$TMPDIR/t\" && echo wrote"}),
            ),
            json!({"text": "done"}),
        ],
    );
    sb.start_scripted("p", &script);
    sb.ok(&["send", "p", "write things"]);
    let results = tool_results(&sb.history("p").await);
    assert_eq!(results.len(), 2, "{results:#?}");
    assert!(
        results[0].contains("Permission denied") && results[0].starts_with("exit code 1"),
        "{}",
        results[0]
    );
    assert!(
        results[0].contains("the command ran in the sandbox"),
        "the model is told why: {}",
        results[0]
    );
    assert!(!target.exists(), "a write landed outside the write roots");
    assert!(results[1].contains("wrote"), "{}", results[1]);
    assert!(sb.path().join("inside.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_network_a_local_connect_is_refused() {
    if !landlock(4) {
        return;
    }
    let sb = TestHome::new();
    sb.user_config("[approvals]\nshell = \"allow\"\n\n[shell]\nnetwork = false\n");
    let listener = TcpListener::bind("127.0.0.1:0").expect("listener");
    let port = listener.local_addr().expect("address").port();
    let script = sb.script(
        "s.jsonl",
        &[
            shell(
                json!({"command": format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected")}),
            ),
            json!({"text": "done"}),
        ],
    );
    sb.start_scripted("p", &script);
    sb.ok(&["send", "p", "connect"]);
    let results = tool_results(&sb.history("p").await);
    assert!(
        !results[0].contains("connected") && results[0].contains("Permission denied"),
        "{}",
        results[0]
    );
    let shown = sb.ok(&["config", "show", "p"]);
    assert!(
        shown.contains("no network"),
        "config show says what is enforced: {shown}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sandboxed_runs_confined_without_asking_and_asks_to_leave() {
    if !landlock(1) {
        return;
    }
    let sb = TestHome::new();
    sb.user_config("[approvals]\nshell = \"sandboxed\"\n");
    let outside = tempfile::tempdir().expect("outside dir");
    let target = outside.path().join("approved.txt");
    let script = sb.script(
        "s.jsonl",
        &[
            shell(json!({"command": "echo a > a.txt"})),
            shell(json!({
                "command": format!("echo b > '{}'", target.display()),
                "sandbox": false
            })),
            json!({"text": "done"}),
        ],
    );
    sb.start_scripted("p", &script);
    let mut events = sb.connect("p", ClientMode::Attach).await;
    let mut seen = Vec::new();
    sb.ok(&["send", "p", "go", "--no-wait"]);
    let request = wait_for(&mut events, &mut seen, is_approval_request).await;
    assert!(
        request.arguments.contains("\"sandbox\":false"),
        "{request:?}"
    );
    assert_eq!(
        request.always, None,
        "leaving the sandbox is never a standing rule"
    );
    assert!(
        sb.path().join("a.txt").exists(),
        "the confined call ran unasked"
    );
    let history = sb.history("p").await;
    assert_eq!(requests(&history), 1, "only the unconfined call asked");

    let mut control = sb.connect("p", ClientMode::Control).await;
    control
        .call(Method::Approve {
            call_id: Some(request.call_id),
            answer: ApprovalAnswer::Approve,
            reason: None,
        })
        .await
        .expect("approved");
    wait_for(&mut events, &mut seen, is_run_end).await;
    assert!(target.exists(), "the approved unconfined call ran");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_childs_shell_is_confined_to_its_delegated_scope() {
    if !landlock(1) {
        return;
    }
    let sb = TestHome::new();
    sb.user_config("[approvals]\nshell = \"allow\"\n");
    std::fs::create_dir_all(sb.path().join("sub")).expect("sub");
    let kid = |mut step: Value| {
        step["pod"] = json!("kid");
        step
    };
    let script = sb.script(
        "family.jsonl",
        &[
            call(
                "spawn_pod",
                json!({"name": "kid", "task": "write", "scope": {"write": ["sub"]}}),
            ),
            json!({"text": "kid is writing"}),
            json!({"text": "kid finished"}),
            kid(shell(json!({"command": "echo kid > parent.txt"}))),
            kid(shell(
                json!({"command": "echo kid > sub/kid.txt && echo wrote"}),
            )),
            kid(json!({"text": "done"})),
        ],
    );
    sb.start_scripted("boss", &script);
    let mut boss = sb.connect("boss", ClientMode::Attach).await;
    let mut seen = Vec::new();
    sb.ok(&["send", "boss", "delegate"]);
    // The spawning turn ends, then the kid's report wakes the boss for a second one.
    wait_for(&mut boss, &mut seen, is_run_end).await;
    wait_for(&mut boss, &mut seen, is_run_end).await;
    let kid_results = tool_results(&sb.history("kid").await);
    assert_eq!(kid_results.len(), 2, "{kid_results:#?}");
    assert!(
        kid_results[0].contains("Permission denied"),
        "the kid wrote in its parent's directory: {}",
        kid_results[0]
    );
    assert!(!sb.path().join("parent.txt").exists());
    assert!(kid_results[1].contains("wrote"), "{}", kid_results[1]);
    assert!(sb.path().join("sub/kid.txt").exists());
}

/// Protected files are read-only for a sandboxed command: writing an existing hooks directory
/// fails inside the command, and a hooks directory the command creates (nothing was there to
/// mount over) is removed again, named in the result and alerted to the person.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_planted_git_hook_fails_or_is_removed_and_alerted() {
    if !landlock(1) {
        return;
    }
    let sb = TestHome::new();
    sb.user_config("[approvals]\nshell = \"allow\"\n");
    std::fs::create_dir_all(sb.path().join(".git")).expect("git dir");
    let plant = "printf '#!/bin/sh\\ntouch PWNED\\n' > .git/hooks/pre-commit";
    let script = sb.script(
        "s.jsonl",
        &[
            shell(json!({"command": format!("mkdir -p .git/hooks && {plant}")})),
            json!({"text": "done"}),
        ],
    );
    sb.start_scripted("p", &script);
    let mut events = sb.connect("p", ClientMode::Attach).await;
    let mut seen = Vec::new();
    sb.ok(&["send", "p", "plant", "--no-wait"]);
    let alert = wait_for(&mut events, &mut seen, |msg| match msg {
        ServerMsg::Alert { message, .. } if message.contains("[sandbox:") => Some(message.clone()),
        _ => None,
    })
    .await;
    assert!(alert.contains(".git/hooks"), "{alert}");
    wait_for(&mut events, &mut seen, is_run_end).await;
    assert!(
        !sb.path().join(".git/hooks").exists(),
        "the planted hooks directory stayed"
    );
    let results = tool_results(&sb.history("p").await);
    assert!(
        results[0].contains("removed again"),
        "the result names it too: {}",
        results[0]
    );
}
