//! The task list: the model keeps it with `update_tasks`, the log holds it (so it
//! replays exactly and survives a restart), `seedpod tasks` prints it, and a model that leaves
//! open tasks untouched for `[tasks] remind_after` requests gets one `task_reminder` before the
//! next request — not before.

use seedpod_e2e::TestHome;
use seedpod_protocol::{EntryKind, ReminderSource, SystemItem};
use serde_json::{Value, json};

fn call(name: &str, arguments: Value) -> Value {
    json!({"tool_calls": [{"name": name, "arguments": arguments.to_string()}]})
}

fn plan() -> Value {
    json!({"tasks": [
        {"content": "read the failing test", "status": "done"},
        {"content": "find the cause", "status": "in_progress"},
        {"content": "fix it", "status": "pending"},
    ]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_keeps_a_list_and_is_reminded_when_it_goes_stale() {
    let sb = TestHome::new();
    sb.user_config("[tasks]\nremind_after = 2\n");
    let script = sb.script(
        "s.jsonl",
        &[
            call("update_tasks", plan()),
            call("list_dir", json!({"path": "."})),
            call("list_dir", json!({"path": "."})),
            json!({"text": "still looking"}),
        ],
    );
    sb.start_scripted("p", &script);
    let out = sb.ok(&["send", "p", "fix the test"]);
    assert!(out.contains("still looking"), "{out}");

    // The reminder went into the fourth request (two requests after the list was set), not
    // into any before it.
    let requests = sb.requests("p");
    assert_eq!(requests.len(), 4, "{requests:#?}");
    for (i, body) in requests.iter().enumerate().take(3) {
        assert!(!body.contains("system-reminder"), "request {i}: {body}");
    }
    assert_eq!(
        requests[3].matches("<system-reminder>").count(),
        1,
        "{}",
        requests[3]
    );
    assert!(
        requests[3].contains("[~] find the cause"),
        "{}",
        requests[3]
    );

    let entries = sb.history("p").await;
    let reminders: Vec<(ReminderSource, String)> = entries
        .iter()
        .filter_map(|e| match &e.kind {
            EntryKind::SystemItem {
                item: SystemItem::TaskReminder { source, body },
                ..
            } => Some((*source, body.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(reminders.len(), 1, "{reminders:#?}");
    assert_eq!(reminders[0].0, ReminderSource::TaskInactivity);
    assert!(reminders[0].1.starts_with("<system-reminder>\n"));

    // `seedpod tasks` prints the list, as text and as JSON.
    let text = sb.ok(&["tasks", "p"]);
    assert_eq!(
        text,
        "[x] read the failing test\n[~] find the cause\n[ ] fix it\n"
    );
    let listed: Value = serde_json::from_str(&sb.ok(&["tasks", "p", "--json"])).expect("json");
    assert_eq!(listed, plan()["tasks"]);

    // Replay is exact: the next request is byte for byte the same after a restart, and the
    // list is still there.
    let before = sb.context("p").await;
    sb.ok(&["restart", "p"]);
    assert_eq!(sb.context("p").await, before);
    assert_eq!(sb.ok(&["tasks", "p"]), text);

    // The stop flushed the pod's log: the run's `turn_end` line counts its three tool calls
    // and says how long it took.
    let log = std::fs::read_to_string(
        sb.home
            .log_path(&seedpod_protocol::PodName::new("p").expect("name")),
    )
    .expect("the pod's log");
    let turn_end = log
        .lines()
        .find(|l| l.contains(r#""event":"turn_end""#))
        .expect("a turn_end line");
    assert!(turn_end.contains(r#""tool_call_count":3"#), "{turn_end}");
    assert!(turn_end.contains(r#""duration_ms":"#), "{turn_end}");
    assert!(
        log.contains(r#""event":"task_reminder""#),
        "the reminder is logged too"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_list_fails_the_call_and_changes_nothing() {
    let sb = TestHome::new();
    let script = sb.script(
        "s.jsonl",
        &[
            call("update_tasks", plan()),
            // Two tasks in progress, and a status that does not exist.
            call(
                "update_tasks",
                json!({"tasks": [
                    {"content": "a", "status": "in_progress"},
                    {"content": "b", "status": "in_progress"},
                ]}),
            ),
            call(
                "update_tasks",
                json!({"tasks": [{"content": "a", "status": "later"}]}),
            ),
            json!({"text": "ok"}),
        ],
    );
    sb.start_scripted("p", &script);
    sb.ok(&["send", "p", "plan it"]);
    let errors: Vec<String> = sb
        .history("p")
        .await
        .into_iter()
        .filter_map(|e| match e.kind {
            EntryKind::ToolResult {
                content,
                is_error: true,
                ..
            } => Some(content),
            _ => None,
        })
        .collect();
    assert_eq!(errors.len(), 2, "{errors:#?}");
    assert!(
        errors
            .iter()
            .all(|e| e.starts_with("the task list was not changed"))
    );
    assert!(errors[0].contains("one at a time"), "{}", errors[0]);
    assert_eq!(
        sb.ok(&["tasks", "p"]),
        "[x] read the failing test\n[~] find the cause\n[ ] fix it\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_can_turn_the_tool_off_and_a_pod_without_a_list_says_so() {
    let sb = TestHome::new();
    sb.user_config("[approvals]\nupdate_tasks = \"deny\"\n");
    let script = sb.script("s.jsonl", &[json!({"text": "hi"})]);
    sb.start_scripted("p", &script);
    sb.ok(&["send", "p", "hello"]);
    let requests = sb.requests("p");
    assert!(!requests[0].contains("update_tasks"), "{}", requests[0]);
    let out = sb.run(&["tasks", "p"]);
    assert!(out.status.success());
    assert!(out.stdout.is_empty());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("has no task list"),
        "{out:?}"
    );
    let missing = sb.run(&["tasks", "nobody"]);
    assert!(!missing.status.success());
}

/// In a real terminal: the list is pinned above the composer while a task is open, and Ctrl-T
/// folds it to one line saying where the model is.
#[test]
fn the_tui_pins_the_list_and_ctrl_t_folds_it() {
    use seedpod_e2e::pty::{Tui, keys};
    let sb = TestHome::new();
    let script = sb.script(
        "s.jsonl",
        &[
            call("update_tasks", plan()),
            json!({"text": "Working on the cause now."}),
        ],
    );
    sb.start_scripted("p", &script);
    let mut tui = Tui::spawn(&sb, &["attach", "p"]);
    tui.wait_for("connected");
    tui.send("fix the test");
    tui.send(keys::ENTER);
    tui.wait_for("Working on the cause now.");
    tui.wait_for("tasks 1/3 done  (Ctrl-T folds)");
    tui.wait_for("    [~] find the cause");
    tui.send(keys::CTRL_T);
    tui.wait_for("tasks 1/3 · now: find the cause  (Ctrl-T shows)");
    tui.send(keys::CTRL_D);
    assert!(tui.wait_exit());
}
