//! A shell command that exits non-zero or times out is a failed call to
//! the model, in the log (with its exit code as metadata) and in `history`; a model that keeps
//! failing is told to change approach, then stopped with `run_end {reason: no_progress}` and a
//! message that says why — and `send` says so and exits non-zero.

use seedpod_e2e::TestHome;
use seedpod_protocol::{EntryKind, RunEndReason};
use serde_json::{Value, json};

/// Run a command that must fail; its stderr.
fn fails(sb: &TestHome, args: &[&str]) -> String {
    let out = sb.run(args);
    assert!(!out.status.success(), "{args:?} succeeded");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn shell(command: &str) -> Value {
    let arguments = json!({ "command": command }).to_string();
    json!({"tool_calls": [{"name": "shell", "arguments": arguments}]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_commands_are_errors_with_their_exit_code() {
    let sb = TestHome::new();
    sb.user_config("[approvals]\nshell = \"allow\"\n");
    let script = sb.script(
        "s.jsonl",
        &[
            shell("echo built; exit 3"),
            json!({"tool_calls": [{"name": "shell", "arguments": json!({"command": "sleep 30", "timeout_secs": 1}).to_string()}]}),
            shell("echo fine"),
            json!({"text": "done"}),
        ],
    );
    sb.start_scripted("p", &script);
    let out = sb.ok(&["send", "p", "build it"]);
    assert!(out.contains("done"), "{out}");

    let results: Vec<(String, bool, Option<i32>, bool)> = sb
        .history("p")
        .await
        .into_iter()
        .filter_map(|e| match e.kind {
            EntryKind::ToolResult {
                content,
                is_error,
                meta,
                ..
            } => Some((content, is_error, meta.exit_code, meta.timed_out)),
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), 3, "{results:#?}");
    assert!(
        results[0].0.starts_with("exit code 3\n"),
        "{}",
        results[0].0
    );
    assert_eq!(
        (results[0].1, results[0].2, results[0].3),
        (true, Some(3), false)
    );
    assert_eq!(
        (results[1].1, results[1].2, results[1].3),
        (true, Some(124), true)
    );
    assert_eq!(
        (results[2].1, results[2].2, results[2].3),
        (false, Some(0), false)
    );

    // The human-readable history names the failure and its code.
    let text = sb.ok(&["history", "p"]);
    assert!(text.contains("tool result shell [error: exit 3]"), "{text}");
    assert!(
        text.contains("tool result shell [error: timed out]"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_that_keeps_failing_is_warned_then_stopped() {
    let sb = TestHome::new();
    sb.user_config("[approvals]\nshell = \"allow\"\n\n[loop]\nfailures_in_a_row = 3\n");
    let script = sb.script(
        "s.jsonl",
        &[
            shell("cat missing.txt"),
            shell("cat missing.txt"),
            shell("cat also-missing.txt"),
            json!({"text": "never sent"}),
        ],
    );
    sb.start_scripted("p", &script);
    let failed = fails(&sb, &["send", "p", "read the file"]);
    assert!(
        failed.contains("the run made no progress and was stopped")
            && failed.contains("3 tool calls failed in a row"),
        "{failed}"
    );

    let entries = sb.history("p").await;
    let results: Vec<String> = entries
        .iter()
        .filter_map(|e| match &e.kind {
            EntryKind::ToolResult { content, .. } => Some(content.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), 3, "{results:#?}");
    assert!(!results[0].contains("failed 2 times"));
    assert!(
        results[1].contains("this exact call has now failed 2 times in this run"),
        "{}",
        results[1]
    );
    let end = entries.iter().rev().find_map(|e| match &e.kind {
        EntryKind::RunEnd { reason, message } => Some((*reason, message.clone())),
        _ => None,
    });
    let (reason, message) = end.expect("a run_end");
    assert_eq!(reason, RunEndReason::NoProgress);
    assert!(
        message
            .unwrap_or_default()
            .contains("[loop] failures_in_a_row")
    );
    assert!(
        !entries.iter().any(|e| matches!(
            &e.kind,
            EntryKind::AssistantItem { item: seedpod_protocol::ModelItem::AssistantText { text } } if text == "never sent"
        )),
        "the model was not asked again"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_loop_setting_is_refused_with_its_key() {
    let sb = TestHome::new();
    sb.user_config("[loop]\nmax_iterations = 0\n");
    let err = fails(&sb, &["config", "show"]);
    assert!(err.contains("loop.max_iterations"), "{err}");
    sb.user_config("[loop]\nrepeat_limit = -1\n");
    let err = fails(&sb, &["config", "show"]);
    assert!(
        err.contains("loop.repeat_limit") && err.contains("negative"),
        "{err}"
    );
    sb.user_config("[loop]\nfailures_in_a_row = 0\n[tasks]\nremind_after = 7\n");
    let shown = sb.ok(&["config", "show"]);
    assert!(shown.contains("failures_in_a_row = 0"), "{shown}");
    assert!(shown.contains("remind_after = 7"), "{shown}");
}
