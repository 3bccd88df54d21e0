use super::*;
use crate::entry::{EntryKind, FinishReason};
use crate::ids::CallId;
use crate::item::ModelItem;
use crate::tool_meta::ToolMeta;

fn call(id: &str, arguments: &str) -> EntryKind {
    EntryKind::AssistantItem {
        item: ModelItem::ToolCall {
            call_id: CallId::new(id),
            name: UPDATE_TASKS.into(),
            arguments: arguments.into(),
        },
    }
}

fn result(id: &str, is_error: bool) -> EntryKind {
    EntryKind::ToolResult {
        call_id: CallId::new(id),
        name: UPDATE_TASKS.into(),
        content: "ok".into(),
        is_error,
        meta: ToolMeta::default(),
    }
}

fn turn_end() -> EntryKind {
    EntryKind::TurnEnd {
        iteration: 1,
        finish: FinishReason::ToolUse,
    }
}

const TWO: &str = r#"{"tasks":[{"content":"read the code","status":"done"},{"content":"fix the bug","status":"in_progress"}]}"#;

#[test]
fn a_valid_list_parses_in_order() {
    let tasks = parse_update(TWO).expect("valid");
    assert_eq!(tasks.len(), 2);
    assert_eq!(tasks[0].checkbox_line(), "[x] read the code");
    assert_eq!(tasks[1].checkbox_line(), "[~] fix the bug");
    assert!(parse_update(r#"{"tasks":[]}"#).expect("empty").is_empty());
}

#[test]
fn bad_lists_are_refused_with_what_to_do() {
    let cases = [
        ("not json", "update_tasks takes"),
        (
            r#"{"tasks":[{"content":"x","status":"later"}]}"#,
            "update_tasks takes",
        ),
        (
            r#"{"tasks":[{"content":"x","status":"done","owner":"me"}]}"#,
            "update_tasks takes",
        ),
        (r#"{"items":[]}"#, "update_tasks takes"),
        (
            r#"{"tasks":[{"content":"  ","status":"pending"}]}"#,
            "task 1 has no content",
        ),
        (
            r#"{"tasks":[{"content":"a","status":"in_progress"},{"content":"b","status":"in_progress"}]}"#,
            "2 tasks are in_progress",
        ),
    ];
    for (arguments, expected) in cases {
        let error = parse_update(arguments).expect_err(arguments);
        assert!(error.contains(expected), "{arguments}: {error}");
    }
}

#[test]
fn the_size_limits_hold() {
    let long = format!(
        r#"{{"tasks":[{{"content":"{}","status":"pending"}}]}}"#,
        "é".repeat(MAX_TASK_CHARS + 1)
    );
    assert!(
        parse_update(&long)
            .expect_err("long")
            .contains("characters long")
    );
    let at_limit = format!(
        r#"{{"tasks":[{{"content":"{}","status":"pending"}}]}}"#,
        "é".repeat(MAX_TASK_CHARS)
    );
    assert!(parse_update(&at_limit).is_ok());
    let item = r#"{"content":"x","status":"pending"}"#;
    let many = format!(r#"{{"tasks":[{}]}}"#, vec![item; MAX_TASKS + 1].join(","));
    assert!(
        parse_update(&many)
            .expect_err("many")
            .contains("keep at most")
    );
}

#[test]
fn the_list_is_the_last_successful_call() {
    let mut tracker = TaskTracker::default();
    assert!(!tracker.apply(&call("c1", TWO)));
    assert!(tracker.tasks().is_empty(), "a call alone sets nothing");
    assert!(tracker.apply(&result("c1", false)));
    assert_eq!(tracker.tasks().len(), 2);

    // A call whose result failed leaves the list as it was.
    tracker.apply(&call("c2", r#"{"tasks":[]}"#));
    assert!(!tracker.apply(&result("c2", true)));
    assert_eq!(tracker.tasks().len(), 2);

    // A result with no call (or invalid arguments) changes nothing.
    assert!(!tracker.apply(&result("nobody", false)));
    tracker.apply(&call("c3", "garbage"));
    assert!(!tracker.apply(&result("c3", false)));
    assert_eq!(tracker.tasks().len(), 2);
}

#[test]
fn a_segment_start_resets_to_what_it_carries() {
    let mut tracker = TaskTracker::default();
    tracker.apply(&call("c1", TWO));
    tracker.apply(&result("c1", false));
    tracker.apply(&turn_end());
    let carried = vec![Task {
        content: "carried".into(),
        status: TaskStatus::Pending,
    }];
    tracker = TaskTracker::starting_with(carried.clone());
    assert_eq!(tracker.tasks(), carried.as_slice());
    assert_eq!(tracker.untouched(), 0);
}

#[test]
fn a_reminder_is_due_only_after_the_threshold_with_open_tasks() {
    let mut tracker = TaskTracker::default();
    tracker.apply(&call("c1", TWO));
    tracker.apply(&result("c1", false));
    tracker.apply(&turn_end());
    for _ in 0..2 {
        assert_eq!(tracker.reminder_due(3), None);
        tracker.apply(&turn_end());
    }
    assert_eq!(
        tracker.reminder_due(3),
        None,
        "two requests are under three"
    );
    tracker.apply(&turn_end());
    let Some(item) = tracker.reminder_due(3) else {
        panic!("a reminder is due after three untouched requests");
    };
    assert_eq!(tracker.reminder_due(0), None, "0 turns reminders off");
    let SystemItem::TaskReminder { source, body } = &item else {
        panic!("a task reminder: {item:?}");
    };
    assert_eq!(*source, ReminderSource::TaskInactivity);
    assert!(body.contains("[~] fix the bug"), "{body}");
    assert_eq!(body.matches("<system-reminder>").count(), 1);

    // Giving the reminder restarts the count.
    tracker.apply(&EntryKind::SystemItem {
        item,
        queue_id: None,
    });
    assert_eq!(tracker.untouched(), 0);
    assert_eq!(tracker.reminder_due(3), None);
}

/// The response that sets the list does not count as a request that left it untouched,
/// whether its `turn_end` is committed before the call's result or after it.
#[test]
fn the_request_that_set_the_list_is_not_counted() {
    let mut result_first = TaskTracker::default();
    result_first.apply(&call("c1", TWO));
    result_first.apply(&result("c1", false));
    result_first.apply(&turn_end());
    assert_eq!(result_first.untouched(), 0);

    let mut turn_end_first = TaskTracker::default();
    turn_end_first.apply(&call("c1", TWO));
    turn_end_first.apply(&turn_end());
    turn_end_first.apply(&result("c1", false));
    assert_eq!(turn_end_first.untouched(), 0);
    // The next response is the first that left it untouched, in both orders.
    for tracker in [&mut result_first, &mut turn_end_first] {
        tracker.apply(&turn_end());
        assert_eq!(tracker.untouched(), 1);
    }
}

#[test]
fn no_reminder_when_every_task_is_done_or_there_is_no_list() {
    let mut tracker = TaskTracker::default();
    for _ in 0..20 {
        tracker.apply(&turn_end());
    }
    assert_eq!(tracker.reminder_due(1), None, "no list");
    tracker.apply(&call(
        "c1",
        r#"{"tasks":[{"content":"a","status":"done"}]}"#,
    ));
    tracker.apply(&result("c1", false));
    for _ in 0..20 {
        tracker.apply(&turn_end());
    }
    assert_eq!(tracker.reminder_due(1), None, "all done");
}

#[test]
fn wrapping_happens_exactly_once() {
    let once = wrap_reminder("do the thing");
    assert_eq!(once, "<system-reminder>\ndo the thing\n</system-reminder>");
    assert_eq!(wrap_reminder(&once), once);
    assert_eq!(wrap_reminder(&format!("  {once}\n")), once);
}

#[test]
fn reminders_without_a_source_read_as_task_inactivity() {
    let legacy: SystemItem =
        serde_json::from_str(r#"{"kind":"task_reminder","body":"b"}"#).expect("legacy reminder");
    assert_eq!(
        legacy,
        SystemItem::TaskReminder {
            source: ReminderSource::TaskInactivity,
            body: "b".into()
        }
    );
    let newer: SystemItem =
        serde_json::from_str(r#"{"kind":"task_reminder","source":"deadline","body":"b"}"#)
            .expect("newer source");
    assert!(matches!(
        newer,
        SystemItem::TaskReminder {
            source: ReminderSource::Unknown,
            ..
        }
    ));
    let written = serde_json::to_string(&SystemItem::TaskReminder {
        source: ReminderSource::TaskInactivity,
        body: "b".into(),
    })
    .expect("serialise");
    assert_eq!(
        written,
        r#"{"kind":"task_reminder","source":"task_inactivity","body":"b"}"#
    );
}
