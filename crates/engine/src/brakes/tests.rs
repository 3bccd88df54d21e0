use super::*;
use seedpod_protocol::CallId;

fn ok(name: &str, args: &str, out: &str) -> CallRecord {
    CallRecord::new(name, args, false, out)
}

fn failed(name: &str, args: &str, out: &str) -> CallRecord {
    CallRecord::new(name, args, true, out)
}

#[test]
fn records_pair_results_with_their_calls_in_result_order() {
    let items = vec![
        ModelItem::UserMessage { text: "go".into() },
        ModelItem::ToolCall {
            call_id: CallId::new("a"),
            name: "shell".into(),
            arguments: r#"{"command":"false"}"#.into(),
        },
        ModelItem::ToolCall {
            call_id: CallId::new("b"),
            name: "read_file".into(),
            arguments: r#"{"path":"x"}"#.into(),
        },
        ModelItem::ToolResult {
            call_id: CallId::new("a"),
            content: "exit code 1".into(),
            is_error: true,
            images: Vec::new(),
        },
        ModelItem::ToolResult {
            call_id: CallId::new("b"),
            content: "x".into(),
            is_error: false,
            images: Vec::new(),
        },
        // A result whose call is not in this part of history is not counted.
        ModelItem::ToolResult {
            call_id: CallId::new("gone"),
            content: "?".into(),
            is_error: true,
            images: Vec::new(),
        },
    ];
    let calls = calls_in(&items);
    assert_eq!(
        calls,
        vec![
            failed("shell", r#"{"command":"false"}"#, "exit code 1"),
            ok("read_file", r#"{"path":"x"}"#, "x"),
        ]
    );
}

#[test]
fn failures_in_a_row_stop_the_run_and_a_success_resets_the_count() {
    let limits = BrakeLimits::default();
    let mut calls: Vec<CallRecord> = (0..4)
        .map(|i| failed("shell", &format!("{{\"command\":\"t{i}\"}}"), "boom"))
        .collect();
    assert_eq!(stop_reason(&calls, &limits), None, "four is not five");
    calls.push(failed("grep", "{}", "no"));
    let why = stop_reason(&calls, &limits).expect("the fifth failure in a row stops");
    assert!(why.contains("5 tool calls failed in a row"), "{why}");
    assert!(why.contains("the last was grep"), "{why}");

    // An edit that worked between failing test runs is progress.
    calls.insert(2, ok("edit_file", "{}", "edited"));
    assert_eq!(stop_reason(&calls, &limits), None);
}

#[test]
fn the_same_call_with_the_same_result_stops_at_the_repeat_limit() {
    let limits = BrakeLimits::default();
    let mut calls = vec![ok("read_file", r#"{"path":"a"}"#, "same"); 3];
    assert_eq!(stop_reason(&calls, &limits), None);
    // Key order does not make it a different call.
    calls.push(ok("read_file", r#"{ "path" : "a" }"#, "same"));
    let why = stop_reason(&calls, &limits).expect("four identical calls stop");
    assert!(
        why.contains("read_file with the same arguments 4 times"),
        "{why}"
    );

    // A different result is something new: polling a build that progresses is not a loop.
    let mut polling = vec![ok("shell", r#"{"command":"tail log"}"#, "step 1"); 3];
    polling.push(ok("shell", r#"{"command":"tail log"}"#, "step 2"));
    assert_eq!(stop_reason(&polling, &limits), None);
}

#[test]
fn zero_turns_a_brake_off() {
    let off = BrakeLimits {
        same_call_failures: 0,
        failures_in_a_row: 0,
        repeat_limit: 0,
    };
    let calls = vec![failed("shell", "{}", "boom"); 50];
    assert_eq!(stop_reason(&calls, &off), None);
    assert_eq!(repeat_note(&calls, "shell", "{}", &off), None);
}

#[test]
fn the_note_comes_once_on_the_second_failure_of_the_exact_call() {
    let limits = BrakeLimits::default();
    let args = r#"{"path":"missing.txt"}"#;
    assert_eq!(repeat_note(&[], "read_file", args, &limits), None);
    let one = vec![failed("read_file", args, "not found")];
    let note = repeat_note(&one, "read_file", args, &limits).expect("second failure");
    assert!(note.contains("failed 2 times in this run"), "{note}");
    assert!(note.starts_with('\n'), "appended on its own line");

    let two = vec![one[0].clone(), one[0].clone()];
    assert_eq!(
        repeat_note(&two, "read_file", args, &limits),
        None,
        "said once, not on every later failure"
    );
    // Other arguments, another tool, or a success are not the same failing call.
    assert_eq!(
        repeat_note(&one, "read_file", r#"{"path":"other"}"#, &limits),
        None
    );
    assert_eq!(repeat_note(&one, "grep", args, &limits), None);
    let succeeded = vec![ok("read_file", args, "text")];
    assert_eq!(repeat_note(&succeeded, "read_file", args, &limits), None);
}
