//! The update logic without a terminal: sequences of frames → the expected view model.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::support::*;
use seedpod_protocol::{
    AlertLevel, CallId, Entry, EntryKind, EntrySeq, ErrorCode, EventSeq, InFlightToolCall,
    InstanceId, PodState, RequestId, RunEndReason, ServerMsg, SystemItem, Usage,
};
use seedpod_transcript::{CellKind, ToolStatus, Transcript};

fn text_of_cell(t: &Transcript, index: usize) -> &str {
    match &t.cells()[index].kind {
        CellKind::AssistantText { text, .. } | CellKind::Thinking { text, .. } => text,
        other => panic!("cell {index} is {other:?}"),
    }
}

#[test]
fn a_live_turn_streams_then_commits_into_one_cell() {
    let mut t = attached();
    apply_all(
        &mut t,
        &[
            committed(5, entry(1, run_start())),
            committed(6, entry(2, user_text("hi"))),
            ServerMsg::State {
                seq: EventSeq::new(7),
                state: PodState::Running,
            },
            ServerMsg::TextDelta {
                seq: EventSeq::new(8),
                text: "Hello".into(),
            },
        ],
    );
    assert_eq!(kinds(&t), ["segment_start", "user", "text*"]);
    assert!(t.is_streaming());
    let streaming_id = t.cells()[2].id;
    assert!(t.apply(&ServerMsg::TextDelta {
        seq: EventSeq::new(9),
        text: ", world".into(),
    }));
    assert_eq!(text_of_cell(&t, 2), "Hello, world");
    t.apply(&committed(10, entry(3, answer("Hello, world!"))));
    assert_eq!(kinds(&t), ["segment_start", "user", "text"]);
    assert_eq!(text_of_cell(&t, 2), "Hello, world!");
    // The committed cell takes the streaming cell's place and id, with a new revision.
    assert_eq!(t.cells()[2].id, streaming_id);
    assert!(!t.is_streaming());
    assert_eq!(t.committed_len(), 3);
}

#[test]
fn reattach_mid_turn_ends_with_exactly_one_answer() {
    let mut t = Transcript::new();
    apply_all(
        &mut t,
        &[
            snapshot_begin(40, PodState::Running),
            ServerMsg::SnapshotEntries {
                entries: vec![
                    entry(0, segment_start()),
                    entry(1, run_start()),
                    entry(2, user_text("who are you?")),
                ],
            },
            in_flight("Hello, I am", "", vec![]),
            ServerMsg::SnapshotEnd {
                seq: EventSeq::new(40),
            },
        ],
    );
    assert_eq!(kinds(&t), ["segment_start", "user", "text*"]);
    assert_eq!(text_of_cell(&t, 2), "Hello, I am");
    apply_all(
        &mut t,
        &[
            ServerMsg::TextDelta {
                seq: EventSeq::new(41),
                text: " demo".into(),
            },
            ServerMsg::TextDelta {
                seq: EventSeq::new(42),
                text: ".".into(),
            },
        ],
    );
    assert_eq!(text_of_cell(&t, 2), "Hello, I am demo.");
    apply_all(
        &mut t,
        &[
            committed(43, entry(3, answer("Hello, I am demo."))),
            committed(44, entry(4, turn_end())),
            committed(45, entry(5, run_end(RunEndReason::Completed))),
        ],
    );
    assert_eq!(kinds(&t), ["segment_start", "user", "text", "run_end"]);
    let answers = t
        .cells()
        .iter()
        .filter(|c| matches!(c.kind, CellKind::AssistantText { .. }))
        .count();
    assert_eq!(answers, 1);
    assert_eq!(t.last_answer().as_deref(), Some("Hello, I am demo."));
}

#[test]
fn events_at_or_below_the_last_seq_are_ignored() {
    let mut t = attached();
    assert!(t.apply(&committed(5, entry(1, user_text("once")))));
    let before = t.cells().to_vec();
    // A replayed commit and an old delta change nothing.
    assert!(!t.apply(&committed(5, entry(1, user_text("once")))));
    assert!(!t.apply(&committed(3, entry(1, user_text("older")))));
    assert!(!t.apply(&ServerMsg::TextDelta {
        seq: EventSeq::new(4),
        text: "stale".into(),
    }));
    assert_eq!(t.cells(), &before[..]);
    assert!(t.apply(&ServerMsg::TextDelta {
        seq: EventSeq::new(6),
        text: "fresh".into(),
    }));
}

#[test]
fn a_resync_snapshot_replaces_everything_without_duplicates() {
    let mut t = attached();
    t.apply(&committed(5, entry(1, user_text("hello"))));
    let snapshot = [
        snapshot_begin(9, PodState::Idle),
        ServerMsg::SnapshotEntries {
            entries: vec![entry(0, segment_start()), entry(1, user_text("hello"))],
        },
        in_flight("", "", vec![]),
        ServerMsg::SnapshotEnd {
            seq: EventSeq::new(9),
        },
    ];
    apply_all(&mut t, &snapshot);
    apply_all(&mut t, &snapshot);
    assert_eq!(kinds(&t), ["segment_start", "user"]);
    assert_eq!(t.status().name, "demo", "who the pod is survives a resync");
}

#[test]
fn a_new_pod_instance_starts_its_seqs_again() {
    let mut t = attached();
    t.apply(&committed(50, entry(1, user_text("before restart"))));
    t.apply(&ServerMsg::Welcome {
        protocol: 1,
        pod: "demo".parse().unwrap(),
        server_version: "0.1.1".into(),
        state: PodState::Idle,
        instance: InstanceId::new("i2"),
        seq: EventSeq::new(0),
    });
    apply_all(
        &mut t,
        &[
            snapshot_begin(0, PodState::Idle),
            ServerMsg::SnapshotEntries {
                entries: vec![
                    entry(0, segment_start()),
                    entry(1, user_text("before restart")),
                ],
            },
            ServerMsg::SnapshotEnd {
                seq: EventSeq::new(0),
            },
        ],
    );
    assert!(t.apply(&committed(1, entry(2, user_text("after restart")))));
    assert_eq!(kinds(&t), ["segment_start", "user", "user"]);
    assert_eq!(t.status().server_version, "0.1.1");
}

#[test]
fn tool_calls_stream_then_pair_with_their_result() {
    let mut t = attached();
    apply_all(
        &mut t,
        &[
            committed(5, entry(1, run_start())),
            committed(6, entry(2, user_text("read it"))),
            ServerMsg::ToolCallDelta {
                seq: EventSeq::new(7),
                index: 0,
                call_id: Some(CallId::new("call_1")),
                name: Some("read_file".into()),
                arguments: String::new(),
            },
            ServerMsg::ToolCallDelta {
                seq: EventSeq::new(8),
                index: 0,
                call_id: None,
                name: None,
                arguments: r#"{"path":"#.into(),
            },
            ServerMsg::ToolCallDelta {
                seq: EventSeq::new(9),
                index: 0,
                call_id: None,
                name: None,
                arguments: r#""a.txt"}"#.into(),
            },
        ],
    );
    match &t.cells()[2].kind {
        CellKind::ToolCall {
            name,
            arguments,
            status,
            ..
        } => {
            assert_eq!(name, "read_file");
            assert_eq!(arguments, r#"{"path":"a.txt"}"#);
            assert_eq!(*status, ToolStatus::Running);
        }
        other => panic!("{other:?}"),
    }
    let args = r#"{"path":"a.txt"}"#;
    t.apply(&committed(
        10,
        entry(3, tool_call("call_1", "read_file", args)),
    ));
    assert_eq!(kinds(&t), ["segment_start", "user", "tool"]);
    assert!(!t.is_streaming());
    let revision = t.cells()[2].revision;
    t.apply(&committed(
        11,
        entry(7, tool_result("call_1", "read_file", "contents", false)),
    ));
    // No new cell: the result lands in the call's cell.
    assert_eq!(kinds(&t), ["segment_start", "user", "tool"]);
    let cell = &t.cells()[2];
    assert!(cell.revision > revision);
    match &cell.kind {
        CellKind::ToolCall {
            status,
            output,
            duration_ms,
            ..
        } => {
            assert_eq!(*status, ToolStatus::Ok);
            assert_eq!(output, "contents");
            assert_eq!(*duration_ms, Some(400), "entries 3 and 7 are 400 ms apart");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn error_results_and_orphan_results_show() {
    let mut t = attached();
    apply_all(
        &mut t,
        &[
            committed(
                5,
                entry(1, tool_call("c1", "shell", r#"{"command":"false"}"#)),
            ),
            committed(6, entry(2, tool_result("c1", "shell", "exit 1", true))),
            // A result whose call this client never saw still appears.
            committed(7, entry(3, tool_result("c9", "grep", "[not run]", true))),
        ],
    );
    assert_eq!(kinds(&t), ["segment_start", "tool", "tool"]);
    for index in [1, 2] {
        assert!(matches!(
            t.cells()[index].kind,
            CellKind::ToolCall {
                status: ToolStatus::Error,
                ..
            }
        ));
    }
}

#[test]
fn thinking_streams_and_is_replaced_by_reasoning() {
    let mut t = attached();
    apply_all(
        &mut t,
        &[
            ServerMsg::ThinkingDelta {
                seq: EventSeq::new(5),
                text: "Let me ".into(),
            },
            ServerMsg::ThinkingDelta {
                seq: EventSeq::new(6),
                text: "think.".into(),
            },
            ServerMsg::TextDelta {
                seq: EventSeq::new(7),
                text: "Answer".into(),
            },
        ],
    );
    assert_eq!(kinds(&t), ["segment_start", "thinking*", "text*"]);
    t.apply(&committed(8, entry(1, reasoning("Let me think."))));
    assert_eq!(kinds(&t), ["segment_start", "thinking", "text*"]);
    t.apply(&committed(9, entry(2, answer("Answer"))));
    assert_eq!(kinds(&t), ["segment_start", "thinking", "text"]);
    assert!(t.is_toggleable(1));
    assert!(!t.is_toggleable(2));
    assert!(!t.cells()[1].expanded);
    assert!(t.toggle(1));
    assert!(t.cells()[1].expanded);
    assert!(!t.toggle(2));
    assert!(!t.toggle(99));
}

#[test]
fn queue_updates_replace_the_queue() {
    let mut t = attached();
    t.apply(&ServerMsg::Queued {
        seq: EventSeq::new(5),
        queue: vec![queued_run(1, "next"), queued_run(2, "after")],
    });
    assert_eq!(t.status().queue.len(), 2);
    t.apply(&ServerMsg::Queued {
        seq: EventSeq::new(6),
        queue: vec![queued_run(2, "after")],
    });
    assert_eq!(t.status().queue, vec![queued_run(2, "after")]);
    // The snapshot's in-flight frame carries the queue too.
    let mut t = Transcript::new();
    apply_all(
        &mut t,
        &[
            snapshot_begin(1, PodState::Running),
            ServerMsg::InFlight {
                text: String::new(),
                thinking: String::new(),
                tool_calls: vec![],
                queue: vec![queued_run(3, "waiting")],
            },
            ServerMsg::SnapshotEnd {
                seq: EventSeq::new(1),
            },
        ],
    );
    assert_eq!(t.status().queue.len(), 1);
}

#[test]
fn state_transitions_set_and_clear_running_since() {
    let mut t = attached();
    assert_eq!(t.status().running_since, None);
    t.apply(&ServerMsg::State {
        seq: EventSeq::new(5),
        state: PodState::Running,
    });
    let since = t
        .status()
        .running_since
        .expect("running sets running_since");
    // Staying in running keeps the start.
    t.apply(&ServerMsg::State {
        seq: EventSeq::new(6),
        state: PodState::Running,
    });
    assert_eq!(t.status().running_since, Some(since));
    t.apply(&ServerMsg::TextDelta {
        seq: EventSeq::new(7),
        text: "partial".into(),
    });
    t.apply(&ServerMsg::State {
        seq: EventSeq::new(8),
        state: PodState::Paused,
    });
    assert_eq!(t.status().state, PodState::Paused);
    assert_eq!(t.status().running_since, None);
    // A paused pod drops what was streaming; so does the view.
    assert!(!t.is_streaming());
    assert_eq!(kinds(&t), ["segment_start"]);
}

#[test]
fn a_running_snapshot_dates_the_run_from_its_start_entry() {
    let now_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970")
        .as_millis() as u64;
    let start = Entry {
        v: 1,
        seq: EntrySeq::new(1),
        ts: now_ms - 5_000,
        kind: run_start(),
    };
    let mut t = Transcript::new();
    apply_all(
        &mut t,
        &[
            snapshot_begin(3, PodState::Running),
            ServerMsg::SnapshotEntries {
                entries: vec![entry(0, segment_start()), start],
            },
            ServerMsg::SnapshotEnd {
                seq: EventSeq::new(3),
            },
        ],
    );
    let since = t.status().running_since.expect("running");
    let elapsed = since.elapsed();
    assert!(
        elapsed >= Duration::from_millis(4_500) && elapsed < Duration::from_secs(60),
        "{elapsed:?}"
    );
}

#[test]
fn retry_notices_are_transient() {
    let mut t = attached();
    t.apply(&ServerMsg::Status {
        seq: EventSeq::new(5),
        message: "529 overloaded; retrying in 2s (attempt 1 of 3)".into(),
    });
    assert!(t.status().retry_notice.is_some());
    assert_eq!(kinds(&t), ["segment_start"], "a retry notice is not a cell");
    t.apply(&ServerMsg::TextDelta {
        seq: EventSeq::new(6),
        text: "ok".into(),
    });
    assert_eq!(t.status().retry_notice, None);
    t.apply(&ServerMsg::Status {
        seq: EventSeq::new(7),
        message: "again".into(),
    });
    t.apply(&committed(8, entry(1, run_end(RunEndReason::Error))));
    assert_eq!(t.status().retry_notice, None);
}

#[test]
fn run_end_carries_duration_and_the_runs_tokens() {
    let mut t = attached();
    apply_all(
        &mut t,
        &[
            committed(5, entry(1, usage(1_000, 1_000))), // before the run: pod total only
            committed(6, entry(2, run_start())),
            committed(7, entry(3, user_text("go"))),
            committed(8, entry(4, usage(100, 20))),
            committed(9, entry(5, usage(200, 30))),
            committed(10, entry(12, run_end(RunEndReason::Completed))),
        ],
    );
    assert_eq!(t.status().tokens_in, 1_300);
    assert_eq!(t.status().tokens_out, 1_050);
    let last = t.cells().last().expect("a run_end cell");
    match &last.kind {
        CellKind::RunEnd {
            reason,
            duration_ms,
            tokens,
            ..
        } => {
            assert_eq!(*reason, RunEndReason::Completed);
            assert_eq!(*duration_ms, Some(1_000));
            assert_eq!(
                *tokens,
                Some(Usage {
                    input_tokens: 300,
                    output_tokens: 50,
                    cache_read_tokens: 0,
                    cache_creation_tokens: 0,
                })
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(t.turn_starts(), vec![1], "usage entries are not cells");
}

#[test]
fn unknown_kinds_become_labelled_cells_and_unknown_frames_are_ignored() {
    let mut t = attached();
    assert!(t.apply(&committed(5, entry(7, EntryKind::Unknown))));
    assert!(t.apply(&committed(
        6,
        entry(
            8,
            EntryKind::SystemItem {
                item: SystemItem::Unknown,
                queue_id: None,
            }
        )
    )));
    assert!(!t.apply(&ServerMsg::Unknown));
    assert_eq!(kinds(&t), ["segment_start", "unknown", "unknown"]);
    match &t.cells()[1].kind {
        CellKind::Unknown { label, raw } => {
            assert!(label.contains("#7"), "{label}");
            assert!(raw.contains(r#""kind":"unknown""#), "{raw}");
        }
        other => panic!("{other:?}"),
    }
    // Decoded from JSON a newer pod might send.
    let msg: ServerMsg = serde_json::from_str(
        r#"{"type":"committed","seq":9,"entry":{"v":1,"seq":9,"ts":0,"kind":"teleport","x":1}}"#,
    )
    .expect("decodes");
    assert!(t.apply(&msg));
    assert_eq!(t.cells().len(), 4);
}

#[test]
fn system_items_become_their_own_cells() {
    let mut t = attached();
    apply_all(
        &mut t,
        &[
            committed(5, entry(1, notification("CI is green"))),
            committed(
                6,
                entry(
                    2,
                    EntryKind::SystemItem {
                        item: SystemItem::FileAttachment {
                            path: "a.txt".into(),
                            body: "x".into(),
                        },
                        queue_id: None,
                    },
                ),
            ),
            committed(
                7,
                entry(
                    3,
                    EntryKind::SystemItem {
                        item: SystemItem::Interrupt {
                            body: "stop".into(),
                        },
                        queue_id: None,
                    },
                ),
            ),
        ],
    );
    assert_eq!(
        kinds(&t),
        ["segment_start", "notification", "file", "interrupt"]
    );
    match &t.cells()[1].kind {
        CellKind::Notification { message } => assert_eq!(message, "CI is green"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn snapshot_alerts_carry_the_snapshot_seq_and_still_show() {
    let mut t = Transcript::new();
    apply_all(
        &mut t,
        &[
            snapshot_begin(7, PodState::Idle),
            ServerMsg::SnapshotEntries {
                entries: vec![entry(0, segment_start())],
            },
            in_flight("", "", vec![]),
            ServerMsg::Alert {
                seq: EventSeq::new(7),
                level: AlertLevel::Warn,
                message: "torn tail moved aside".into(),
            },
            ServerMsg::SnapshotEnd {
                seq: EventSeq::new(7),
            },
        ],
    );
    assert_eq!(kinds(&t), ["segment_start", "alert"]);
}

#[test]
fn in_flight_tool_calls_and_thinking_paint_the_streaming_block() {
    let mut t = Transcript::new();
    let call = InFlightToolCall {
        index: 0,
        call_id: CallId::new("call_7"),
        name: "grep".into(),
        arguments: r#"{"pattern":"TODO"}"#.into(),
    };
    apply_all(
        &mut t,
        &[
            snapshot_begin(2, PodState::Running),
            in_flight("", "hmm", vec![call]),
            ServerMsg::SnapshotEnd {
                seq: EventSeq::new(2),
            },
        ],
    );
    assert_eq!(kinds(&t), ["thinking*", "tool"]);
    t.apply(&committed(3, entry(0, reasoning("hmm"))));
    t.apply(&committed(
        4,
        entry(1, tool_call("call_7", "grep", r#"{"pattern":"TODO"}"#)),
    ));
    assert_eq!(kinds(&t), ["thinking", "tool"]);
    assert!(!t.is_streaming());
}

#[test]
fn errors_and_goodbyes_are_status_notices_not_cells() {
    let mut t = attached();
    t.apply(&ServerMsg::Error {
        id: Some(RequestId::new(3)),
        code: ErrorCode::NotRunning,
        message: "nothing is running".into(),
    });
    let notice = t.status().notice.clone().expect("a notice");
    assert_eq!(notice.level, AlertLevel::Error);
    assert!(notice.message.contains("nothing is running"));
    assert!(t.clear_notice());
    assert_eq!(t.status().notice, None);
    t.apply(&ServerMsg::Goodbye {
        reason: seedpod_protocol::GoodbyeReason::Lagged,
        message: "fell behind".into(),
    });
    assert!(t.status().notice.is_some());
    assert_eq!(kinds(&t), ["segment_start"]);
}

#[test]
fn turn_starts_mark_the_first_cell_of_each_run() {
    let mut t = attached();
    apply_all(
        &mut t,
        &[
            committed(5, entry(1, run_start())),
            committed(6, entry(2, user_text("one"))),
            committed(7, entry(3, answer("1"))),
            committed(8, entry(4, run_end(RunEndReason::Completed))),
            committed(9, entry(5, run_start())),
            committed(10, entry(6, notification("woke up"))),
            committed(11, entry(7, answer("2"))),
            committed(12, entry(8, run_end(RunEndReason::Completed))),
        ],
    );
    assert_eq!(t.turn_starts(), vec![1, 4]);
    assert_eq!(t.last_answer().as_deref(), Some("2"));
}

/// `NO_REPLY` to a notification or a child's report is a noted line; to a person, or in a run
/// where a person's input was committed, it is an answer like any other (docs/agent-loop.md
/// §Silent answers).
#[test]
fn no_reply_is_silent_only_for_turns_nobody_typed() {
    let started_by = |trigger| EntryKind::RunStart { trigger };
    let mut t = attached();
    apply_all(
        &mut t,
        &[
            committed(
                5,
                entry(1, started_by(seedpod_protocol::RunTrigger::Notification)),
            ),
            committed(6, entry(2, notification("build done"))),
            committed(7, entry(3, answer("NO_REPLY"))),
            committed(8, entry(4, run_end(RunEndReason::Completed))),
            committed(
                9,
                entry(5, started_by(seedpod_protocol::RunTrigger::PodEvent)),
            ),
            committed(10, entry(6, answer("  NO_REPLY\n"))),
            committed(11, entry(7, run_end(RunEndReason::Completed))),
            committed(12, entry(8, run_start())),
            committed(13, entry(9, user_text("say NO_REPLY"))),
            committed(14, entry(10, answer("NO_REPLY"))),
            committed(15, entry(11, run_end(RunEndReason::Completed))),
            committed(
                16,
                entry(12, started_by(seedpod_protocol::RunTrigger::Notification)),
            ),
            committed(17, entry(13, user_text("typed while it ran"))),
            committed(18, entry(14, answer("NO_REPLY"))),
            committed(19, entry(15, run_end(RunEndReason::Completed))),
        ],
    );
    assert_eq!(
        kinds(&t),
        [
            "segment_start",
            "notification",
            "noted",
            "run_end",
            "noted",
            "run_end",
            "user",
            "text",
            "run_end",
            "user",
            "text",
            "run_end",
        ]
    );
}

#[test]
fn a_responses_reasoning_summary_streams_as_thinking_and_commits_without_its_ciphertext() {
    let mut t = attached();
    apply_all(
        &mut t,
        &[
            ServerMsg::ThinkingDelta {
                seq: EventSeq::new(5),
                text: "Read the notes.".into(),
            },
            ServerMsg::ThinkingDelta {
                seq: EventSeq::new(6),
                text: "\n\nThen answer.".into(),
            },
        ],
    );
    assert_eq!(kinds(&t), ["segment_start", "thinking*"]);
    let item = seedpod_protocol::ResponsesReasoning {
        id: "rs_1".into(),
        summary: vec!["Read the notes.".into(), "Then answer.".into()],
        encrypted_content: Some("gAAAA-opaque-ciphertext".into()),
    };
    let committed_item = EntryKind::AssistantItem {
        item: seedpod_protocol::ModelItem::Reasoning {
            text: item.summary_text(),
            signature: None,
            responses: Some(item),
        },
    };
    t.apply(&committed(7, entry(1, committed_item)));
    assert_eq!(kinds(&t), ["segment_start", "thinking"]);
    assert_eq!(text_of_cell(&t, 1), "Read the notes.\n\nThen answer.");
    assert!(!text_of_cell(&t, 1).contains("opaque"));
}

fn progress_frame(seq: u64, call_id: &str, progress: f64) -> ServerMsg {
    ServerMsg::ToolProgress {
        seq: EventSeq::new(seq),
        call_id: CallId::new(call_id),
        progress: seedpod_protocol::ToolProgress {
            progress,
            total: Some(10.0),
            message: Some("indexing".into()),
        },
    }
}

fn progress_of_cell(t: &Transcript, index: usize) -> Option<f64> {
    match &t.cells()[index].kind {
        CellKind::ToolCall { progress, .. } => progress.as_ref().map(|p| p.progress),
        other => panic!("cell {index} is {other:?}"),
    }
}

/// A running call shows its latest report; its result, or its run stopping, clears it; a
/// report for a call this client does not hold open changes nothing.
#[test]
fn a_running_calls_progress_shows_until_it_ends() {
    let mut t = attached();
    apply_all(
        &mut t,
        &[
            ServerMsg::State {
                seq: EventSeq::new(5),
                state: PodState::Running,
            },
            committed(6, entry(1, tool_call("c1", "mcp__t__index", "{}"))),
            committed(7, entry(2, tool_call("c2", "mcp__t__index", "{}"))),
        ],
    );
    assert!(t.apply(&progress_frame(8, "c1", 3.0)));
    assert!(t.apply(&progress_frame(9, "c1", 4.0)));
    assert_eq!(progress_of_cell(&t, 1), Some(4.0));
    // The same report again, or one for a call nobody knows, changes nothing.
    let revision = t.cells()[1].revision;
    assert!(!t.apply(&ServerMsg::ToolProgress {
        seq: EventSeq::new(10),
        call_id: CallId::new("c1"),
        progress: seedpod_protocol::ToolProgress {
            progress: 4.0,
            total: Some(10.0),
            message: Some("indexing".into()),
        },
    }));
    assert!(!t.apply(&progress_frame(11, "c9", 1.0)));
    assert_eq!(t.cells()[1].revision, revision);
    // The result replaces it.
    t.apply(&committed(
        12,
        entry(3, tool_result("c1", "mcp__t__index", "done", false)),
    ));
    assert_eq!(progress_of_cell(&t, 1), None);
    assert!(!t.apply(&progress_frame(13, "c1", 9.0)), "a late report");
    assert_eq!(progress_of_cell(&t, 1), None);
    // The other call's report goes when the run stops (a pause, a cancel).
    assert!(t.apply(&progress_frame(14, "c2", 2.0)));
    assert_eq!(progress_of_cell(&t, 2), Some(2.0));
    t.apply(&ServerMsg::State {
        seq: EventSeq::new(15),
        state: PodState::Paused,
    });
    assert_eq!(progress_of_cell(&t, 2), None);
}
