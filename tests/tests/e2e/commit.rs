//! `/commit`: in a git repository the model writes a commit message for
//! the staged changes, a person reads it in the approval prompt (here `seedpod approve`),
//! a denial with a reason sends the model back, and only the approved message is committed.
//! Outside a repository the command is refused with what to do.

use std::path::Path;
use std::process::Command;

use seedpod_e2e::{TestHome, is_run_end, wait_for};
use seedpod_protocol::{ClientMode, EntryKind, ServerMsg};
use serde_json::json;

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("this test needs git installed");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn approval_summary(msg: &ServerMsg) -> Option<String> {
    match msg {
        ServerMsg::Committed { entry, .. } => match &entry.kind {
            EntryKind::ApprovalRequest(request) => Some(request.summary.clone()),
            _ => None,
        },
        _ => None,
    }
}

fn commit_call(message: &str) -> serde_json::Value {
    let arguments = json!({ "message": message }).to_string();
    json!({"tool_calls": [{"name": "git_commit", "arguments": arguments}]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commit_asks_with_the_message_and_commits_only_what_was_approved() {
    let sb = TestHome::new();
    let dir = sb.path();
    git(dir, &["init", "-q"]);
    git(dir, &["config", "user.name", "Seed Tester"]);
    git(dir, &["config", "user.email", "tester@example.invalid"]);
    git(dir, &["config", "commit.gpgsign", "false"]);
    // The sandbox's own directories (config, data, run, state) are not part of the work.
    std::fs::write(
        dir.join(".gitignore"),
        "/config/\n/data/\n/run/\n/state/\n*.jsonl\n",
    )
    .expect("gitignore");
    std::fs::write(dir.join("parser.rs"), "fn parse() {}\n").expect("write");
    git(dir, &["add", ".gitignore", "parser.rs"]);
    git(dir, &["commit", "-q", "-m", "Start"]);
    std::fs::write(dir.join("parser.rs"), "fn parse() -> bool { true }\n").expect("write");
    git(dir, &["add", "parser.rs"]);
    std::fs::write(dir.join("notes.txt"), "not staged\n").expect("write");

    let script = sb.script(
        "s.jsonl",
        &[
            commit_call(
                "Make parse report success, which the caller needs to know whether to go on",
            ),
            commit_call("Make parse report success\n\nThe caller needs to know whether to go on."),
            json!({"text": "Committed."}),
        ],
    );
    sb.start_scripted("p", &script);
    let mut events = sb.connect("p", ClientMode::Attach).await;
    let mut seen = Vec::new();
    sb.ok(&["send", "p", "/commit", "--no-wait"]);

    // The model saw the staged diff, not the unstaged file.
    let first = wait_for(&mut events, &mut seen, approval_summary).await;
    assert_eq!(
        first,
        "git_commit: Make parse report success, which the caller needs to know whether to go on"
    );
    let requests = sb.requests("p");
    assert!(
        requests[0].contains("for the staged changes"),
        "{}",
        requests[0]
    );
    assert!(
        requests[0].contains("+fn parse() -> bool { true }"),
        "{}",
        requests[0]
    );
    assert!(!requests[0].contains("notes.txt"), "{}", requests[0]);

    sb.ok(&[
        "approve",
        "p",
        "--deny",
        "keep the subject under 50 characters",
    ]);
    let second = wait_for(&mut events, &mut seen, approval_summary).await;
    assert_eq!(second, "git_commit: Make parse report success");
    assert_eq!(
        git(dir, &["log", "-1", "--format=%s"]).trim(),
        "Start",
        "nothing is committed before a person approves"
    );
    sb.ok(&["approve", "p"]);
    wait_for(&mut events, &mut seen, is_run_end).await;

    assert_eq!(
        git(dir, &["log", "-1", "--format=%B"]).trim_end(),
        "Make parse report success\n\nThe caller needs to know whether to go on."
    );
    let committed = git(dir, &["show", "--name-only", "--format=", "HEAD"]);
    assert_eq!(committed.trim(), "parser.rs", "only the staged file");
    assert!(git(dir, &["status", "--porcelain"]).contains("?? notes.txt"));

    // The denial reached the model as the first call's result.
    let results: Vec<(String, bool)> = sb
        .history("p")
        .await
        .into_iter()
        .filter_map(|e| match e.kind {
            EntryKind::ToolResult {
                content, is_error, ..
            } => Some((content, is_error)),
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), 2, "{results:#?}");
    assert!(
        results[0].1 && results[0].0.contains("under 50 characters"),
        "{results:#?}"
    );
    assert!(
        !results[1].1 && results[1].0.starts_with("committed "),
        "{results:#?}"
    );
}

#[test]
fn commit_outside_a_repository_or_with_nothing_to_commit_says_why() {
    let sb = TestHome::new();
    let script = sb.script("s.jsonl", &[json!({"text": "never asked"})]);
    sb.start_scripted("p", &script);
    let out = sb.run(&["send", "p", "/commit"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/commit needs a git repository"), "{err}");
    assert!(err.contains("git init creates one"), "{err}");

    git(sb.path(), &["init", "-q"]);
    std::fs::write(sb.path().join(".gitignore"), "*\n").expect("ignore everything");
    let out = sb.run(&["send", "p", "/commit"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("nothing to commit"), "{err}");
    assert!(sb.requests("p").is_empty(), "the model was never asked");
}
