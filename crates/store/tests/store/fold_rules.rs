//! The fold's rules, one behaviour per test.

// Test code: a failed unwrap is how it reports a broken fixture.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::{entry, realistic_entries, segment_start};
use seedpod_protocol::{
    CallId, DequeueReason, Entry, EntryKind, EntrySeq, FinishReason, ModelConfig, ModelItem,
    ProviderKind, QueueEntry, QueueId, QueuedItem, ReportId, RunEndReason, RunTrigger, Segment,
    SegmentId, SystemItem, Usage,
};
use seedpod_store::{FoldError, SegmentState};

/// A state after a segment start, plus a helper to apply kinds with the right seq.
struct Fold(SegmentState);

impl Fold {
    fn new() -> Self {
        Fold(SegmentState::start(&entry(0, EntryKind::SegmentStart(segment_start("s1")))).unwrap())
    }

    fn apply(&mut self, kind: EntryKind) -> Result<(), FoldError> {
        let e = entry(self.0.next_seq.get(), kind);
        self.0.apply(&e)
    }

    fn ok(&mut self, kind: EntryKind) -> &mut Self {
        self.apply(kind).unwrap();
        self
    }
}

fn queued_notify(queue_id: u64) -> EntryKind {
    EntryKind::Queued {
        queue_id: QueueId::new(queue_id),
        item: QueuedItem::Notify {
            message: format!("n{queue_id}"),
            wake: true,
        },
    }
}

fn tool_call(call_id: &str) -> EntryKind {
    EntryKind::AssistantItem {
        item: ModelItem::ToolCall {
            call_id: CallId::new(call_id),
            name: "read_file".into(),
            arguments: format!("{{\"id\":\"{call_id}\"}}"),
        },
    }
}

fn tool_result(call_id: &str) -> EntryKind {
    EntryKind::ToolResult {
        call_id: CallId::new(call_id),
        name: "read_file".into(),
        content: "ok".into(),
        is_error: false,
        meta: Default::default(),
    }
}

fn user(text: &str, queue_id: Option<u64>) -> EntryKind {
    EntryKind::UserInput {
        segments: vec![Segment::text(text)],
        text: text.into(),
        queue_id: queue_id.map(QueueId::new),
    }
}

fn ids(pending: &[QueueEntry]) -> Vec<QueueId> {
    pending.iter().map(|q| q.queue_id).collect()
}

#[test]
fn start_takes_everything_from_segment_start() {
    let start = segment_start("s1");
    let state = Fold::new().0;
    assert_eq!(state.segment_id, SegmentId::new("s1"));
    assert_eq!(state.system_prompt, start.system_prompt);
    assert_eq!(state.model, start.model);
    assert_eq!(state.tools, start.tools);
    assert_eq!(state.history, start.seed);
    assert_eq!(state.next_seq, EntrySeq::new(1));
    assert_eq!(state.next_queue_id, QueueId::new(1));
    assert_eq!(state.open_run, None);
    assert!(state.pending.is_empty());
}

#[test]
fn start_refuses_anything_but_segment_start_at_seq_0() {
    let not_start = entry(0, user("hi", None));
    assert!(matches!(
        SegmentState::start(&not_start),
        Err(FoldError::NotAStart {
            seq: EntrySeq::FIRST,
            kind: "user_input"
        })
    ));
    let late = entry(3, EntryKind::SegmentStart(segment_start("s1")));
    assert!(SegmentState::start(&late).is_err());
    assert_eq!(SegmentState::replay(&[]), Err(FoldError::Empty));
}

#[test]
fn queue_ids_leave_pending_when_committed_or_dequeued() {
    let mut fold = Fold::new();
    fold.ok(queued_notify(1))
        .ok(EntryKind::Queued {
            queue_id: QueueId::new(2),
            item: QueuedItem::Run {
                segments: vec![Segment::text("later")],
            },
        })
        .ok(queued_notify(3))
        .ok(queued_notify(4));
    assert_eq!(ids(&fold.0.pending), [1, 2, 3, 4].map(QueueId::new));
    assert_eq!(fold.0.next_queue_id, QueueId::new(5));

    fold.ok(user("later", Some(2)));
    assert_eq!(ids(&fold.0.pending), [1, 3, 4].map(QueueId::new));
    fold.ok(EntryKind::SystemItem {
        item: SystemItem::Notification {
            message: "n3".into(),
            body: "[notification] n3".into(),
        },
        queue_id: Some(QueueId::new(3)),
    });
    assert_eq!(ids(&fold.0.pending), [1, 4].map(QueueId::new));
    fold.ok(EntryKind::Dequeued {
        queue_id: QueueId::new(1),
        reason: DequeueReason::Cancelled,
    });
    assert_eq!(ids(&fold.0.pending), [4].map(QueueId::new));
    // A dequeue of something not pending changes nothing and is not an error.
    fold.ok(EntryKind::Dequeued {
        queue_id: QueueId::new(99),
        reason: DequeueReason::Duplicate,
    });
    assert_eq!(ids(&fold.0.pending), [4].map(QueueId::new));
    assert_eq!(
        fold.0.next_queue_id,
        QueueId::new(5),
        "ids are never reused"
    );

    let tail = &fold.0.history[fold.0.history.len() - 2..];
    assert_eq!(
        tail,
        [
            ModelItem::UserMessage {
                text: "later".into()
            },
            ModelItem::SystemMessage {
                text: "[notification] n3".into()
            },
        ]
    );
}

#[test]
fn next_queue_id_follows_the_highest_id_seen() {
    let mut fold = Fold::new();
    fold.ok(queued_notify(7)).ok(queued_notify(3));
    assert_eq!(fold.0.next_queue_id, QueueId::new(8));
}

#[test]
fn runs_open_count_turns_and_close() {
    let mut fold = Fold::new();
    fold.ok(EntryKind::RunStart {
        trigger: RunTrigger::Notification,
    });
    assert_eq!(fold.0.open_run, Some(RunTrigger::Notification));
    for iteration in 1..=3 {
        fold.ok(EntryKind::TurnEnd {
            iteration,
            finish: FinishReason::ToolUse,
        });
    }
    assert_eq!(fold.0.iterations_in_run, 3);
    fold.ok(EntryKind::RunEnd {
        reason: RunEndReason::LimitReached,
        message: None,
    });
    assert_eq!(fold.0.open_run, None);
    fold.ok(EntryKind::RunStart {
        trigger: RunTrigger::User,
    });
    assert_eq!(fold.0.iterations_in_run, 0, "a new run counts from zero");
    assert_eq!(fold.0.open_run, Some(RunTrigger::User));
}

#[test]
fn unanswered_tool_calls_are_those_since_the_last_message_without_results() {
    let mut fold = Fold::new();
    fold.ok(user("go", None))
        .ok(tool_call("old"))
        .ok(user("again", None));
    assert!(
        unanswered(&fold.0.history).is_empty(),
        "calls before the last user message do not count"
    );
    fold.ok(tool_call("a"))
        .ok(tool_call("b"))
        .ok(tool_call("c"))
        .ok(tool_result("b"));
    assert_eq!(
        unanswered(&fold.0.history),
        vec![
            (
                CallId::new("a"),
                "read_file".into(),
                "{\"id\":\"a\"}".into()
            ),
            (
                CallId::new("c"),
                "read_file".into(),
                "{\"id\":\"c\"}".into()
            ),
        ]
    );
    fold.ok(tool_result("a")).ok(tool_result("c"));
    assert!(unanswered(&fold.0.history).is_empty());

    fold.ok(tool_call("d")).ok(EntryKind::SystemItem {
        item: SystemItem::Interrupt {
            body: "interrupted".into(),
        },
        queue_id: None,
    });
    assert!(
        unanswered(&fold.0.history).is_empty(),
        "a system message also starts a new window"
    );
}

#[test]
fn items_reach_history_in_model_form() {
    let mut fold = Fold::new();
    let before = fold.0.history.len();
    fold.ok(EntryKind::ToolResult {
        call_id: CallId::new("c"),
        name: "n".into(),
        content: "bad".into(),
        is_error: true,
        meta: Default::default(),
    })
    .ok(EntryKind::AssistantItem {
        item: ModelItem::AssistantText { text: "t".into() },
    });
    assert_eq!(
        fold.0.history[before..],
        [
            ModelItem::ToolResult {
                call_id: CallId::new("c"),
                content: "bad".into(),
                is_error: true,
                images: Vec::new(),
            },
            ModelItem::AssistantText { text: "t".into() },
        ]
    );
}

#[test]
fn usage_adds_up_and_config_changes_replace_the_model() {
    let mut fold = Fold::new();
    let usage = Usage {
        input_tokens: 10,
        output_tokens: 2,
        cache_read_tokens: 1,
        cache_creation_tokens: 0,
    };
    fold.ok(EntryKind::Usage(usage)).ok(EntryKind::Usage(usage));
    assert_eq!(fold.0.usage.input_tokens, 20);
    assert_eq!(fold.0.usage.cache_read_tokens, 2);
    fold.ok(EntryKind::Usage(Usage {
        input_tokens: u64::MAX,
        ..usage
    }));
    assert_eq!(fold.0.usage.input_tokens, u64::MAX, "saturates");

    let model = ModelConfig::new(ProviderKind::Anthropic, "claude");
    fold.ok(EntryKind::ConfigChanged {
        model: model.clone(),
    });
    assert_eq!(fold.0.model, model);
}

#[test]
fn refusals_name_the_seq_and_leave_the_state_unchanged() {
    let mut fold = Fold::new();
    fold.ok(user("hi", None));
    let before = fold.0.clone();

    let cases: Vec<(Entry, FoldError)> = vec![
        (
            entry(5, user("skip", None)),
            FoldError::OutOfOrder {
                seq: EntrySeq::new(5),
                expected: EntrySeq::new(2),
            },
        ),
        (
            entry(2, EntryKind::SegmentStart(segment_start("again"))),
            FoldError::SecondStart {
                seq: EntrySeq::new(2),
            },
        ),
        (
            entry(2, EntryKind::Unknown),
            FoldError::UnknownKind {
                seq: EntrySeq::new(2),
            },
        ),
        (
            entry(
                2,
                EntryKind::SystemItem {
                    item: SystemItem::Unknown,
                    queue_id: None,
                },
            ),
            FoldError::UnknownSystemItem {
                seq: EntrySeq::new(2),
            },
        ),
    ];
    for (bad, expected) in cases {
        assert_eq!(fold.0.apply(&bad), Err(expected.clone()));
        assert!(expected.to_string().starts_with("entry "), "{expected}");
        assert_eq!(fold.0, before);
    }
}

#[test]
fn replay_of_a_realistic_run() {
    let state = SegmentState::replay(&realistic_entries()).unwrap();
    assert!(state.pending.is_empty());
    assert_eq!(state.open_run, None);
    assert_eq!(state.next_queue_id, QueueId::new(4));
    assert_eq!(state.iterations_in_run, 2);
    assert_eq!(state.model.model, "gpt-x");
    assert_eq!(state.usage.input_tokens, 120);
    assert!(unanswered(&state.history).is_empty());
}

fn approval_request(call_id: &str) -> EntryKind {
    EntryKind::ApprovalRequest(seedpod_protocol::ApprovalRequest {
        call_id: CallId::new(call_id),
        tool: "shell".into(),
        arguments: r#"{"command":"cargo test"}"#.into(),
        summary: "shell: cargo test".into(),
        always: Some(seedpod_protocol::CommandRule::Prefix(vec!["cargo".into()])),
        replaces: None,
    })
}

fn approval_answer(call_id: &str, decision: seedpod_protocol::ApprovalDecision) -> EntryKind {
    EntryKind::ApprovalAnswer {
        call_id: CallId::new(call_id),
        decision,
    }
}

#[test]
fn an_unanswered_approval_request_is_pending_until_answered() {
    use seedpod_protocol::ApprovalDecision;
    let mut fold = Fold::new();
    fold.ok(EntryKind::RunStart {
        trigger: RunTrigger::User,
    })
    .ok(tool_call("a"))
    .ok(approval_request("a"));
    assert_eq!(
        fold.0.pending_approval().map(|r| &r.call_id),
        Some(&CallId::new("a"))
    );
    fold.ok(approval_answer("a", ApprovalDecision::Approve));
    assert_eq!(fold.0.pending_approval(), None);
    assert_eq!(
        fold.0
            .approval(&CallId::new("a"))
            .and_then(|a| a.decision.clone()),
        Some(ApprovalDecision::Approve)
    );
    // A second answer to an answered request changes nothing.
    fold.ok(approval_answer(
        "a",
        ApprovalDecision::Deny {
            reason: "late".into(),
        },
    ));
    assert_eq!(
        fold.0
            .approval(&CallId::new("a"))
            .and_then(|a| a.decision.clone()),
        Some(ApprovalDecision::Approve)
    );
}

#[test]
fn run_end_closes_pending_approvals_but_standing_ones_stay() {
    use seedpod_protocol::{ApprovalDecision, StandingApproval};
    let cargo = StandingApproval {
        tool: "shell".into(),
        rule: Some(seedpod_protocol::CommandRule::Prefix(vec!["cargo".into()])),
    };
    let mut fold = Fold::new();
    fold.ok(EntryKind::RunStart {
        trigger: RunTrigger::User,
    })
    .ok(tool_call("a"))
    .ok(approval_request("a"))
    .ok(approval_answer(
        "a",
        ApprovalDecision::ApproveAlways(cargo.clone()),
    ))
    .ok(tool_result("a"))
    .ok(tool_call("b"))
    .ok(approval_request("b"))
    .ok(EntryKind::RunEnd {
        reason: RunEndReason::Cancelled,
        message: None,
    });
    assert_eq!(fold.0.pending_approval(), None);
    assert!(fold.0.approvals.is_empty());
    assert_eq!(fold.0.standing_approvals, vec![cargo]);
}

fn run(trigger: RunTrigger, reason: RunEndReason, message: Option<&str>) -> [EntryKind; 2] {
    [
        EntryKind::RunStart { trigger },
        EntryKind::RunEnd {
            reason,
            message: message.map(str::to_owned),
        },
    ]
}

#[test]
fn only_runs_the_parent_started_become_reports_until_delivered() {
    use seedpod_protocol::PodEvent;
    use seedpod_store::{PendingReport, Report};
    let mut fold = Fold::new();
    for kind in run(RunTrigger::User, RunEndReason::Completed, None) {
        fold.ok(kind);
    }
    assert!(fold.0.outbox.is_empty(), "a person's turn is not reported");
    for kind in run(RunTrigger::Parent, RunEndReason::Completed, None) {
        fold.ok(kind);
    }
    for kind in run(RunTrigger::Parent, RunEndReason::Error, Some("model down")) {
        fold.ok(kind);
    }
    let shut_down = PodEvent::ShutDown {
        pod: "kid".into(),
        event_id: ReportId::new("s1/7"),
    };
    fold.ok(EntryKind::Outbox {
        event: shut_down.clone(),
    });
    assert_eq!(
        fold.0.outbox,
        [
            PendingReport {
                event_id: ReportId::new("s1/4"),
                report: Report::TurnEnded,
            },
            PendingReport {
                event_id: ReportId::new("s1/6"),
                report: Report::Errored {
                    message: "model down".into(),
                },
            },
            PendingReport {
                event_id: ReportId::new("s1/7"),
                report: Report::Event(shut_down),
            },
        ],
        "ids are the segment and the seq of the entry that made the report"
    );
    fold.ok(EntryKind::OutboxDelivered {
        event_id: ReportId::new("s1/6"),
    });
    let left: Vec<&ReportId> = fold.0.outbox.iter().map(|r| &r.event_id).collect();
    assert_eq!(left, [&ReportId::new("s1/4"), &ReportId::new("s1/7")]);
    fold.ok(EntryKind::OutboxDelivered {
        event_id: ReportId::new("nothing/1"),
    });
    assert_eq!(fold.0.outbox.len(), 2, "an unknown id changes nothing");
}

/// The calls the fold's history holds without results, owned for comparing.
fn unanswered(history: &[ModelItem]) -> Vec<(CallId, String, String)> {
    seedpod_protocol::unanswered_tool_calls(history)
        .into_iter()
        .map(|(id, name, args)| (id.clone(), name.to_owned(), args.to_owned()))
        .collect()
}

#[test]
fn totals_start_from_the_segment_start_and_add_the_segments_own() {
    let mut start = segment_start("s2");
    start.totals = Some(Box::new(seedpod_protocol::PodTotals {
        usage: Usage {
            input_tokens: 1_000,
            output_tokens: 50,
            cache_read_tokens: 0,
            cache_creation_tokens: 0,
        },
        runs: 4,
        tool_calls: 2,
        run_ms: 9_000,
    }));
    let mut state = SegmentState::start(&entry(0, EntryKind::SegmentStart(start))).unwrap();
    let mut at = |seq: u64, ts: u64, kind: EntryKind| {
        let mut e = entry(seq, kind);
        e.ts = ts;
        state.apply(&e).unwrap();
    };
    at(
        1,
        100,
        EntryKind::RunStart {
            trigger: RunTrigger::User,
        },
    );
    at(2, 150, tool_call("c1"));
    at(
        3,
        160,
        EntryKind::Usage(Usage {
            input_tokens: 10,
            output_tokens: 3,
            cache_read_tokens: 0,
            cache_creation_tokens: 0,
        }),
    );
    at(
        4,
        400,
        EntryKind::RunEnd {
            reason: RunEndReason::Completed,
            message: None,
        },
    );
    let totals = state.totals;
    assert_eq!(totals.usage.input_tokens, 1_010);
    assert_eq!(totals.usage.output_tokens, 53);
    assert_eq!(
        (totals.runs, totals.tool_calls, totals.run_ms),
        (5, 3, 9_300)
    );
    assert_eq!(
        state.usage.input_tokens, 10,
        "the segment's own usage is unchanged"
    );
}

#[test]
fn a_segment_start_without_totals_reads_as_zero() {
    let line = r#"{"v":1,"seq":0,"ts":1,"kind":"segment_start","segment_id":"s","system_prompt":"p","model":{"provider":"scripted","model":"m"},"origin":{"type":"new"}}"#;
    let e: Entry = serde_json::from_str(line).unwrap();
    let state = SegmentState::start(&e).unwrap();
    assert_eq!(state.totals, seedpod_protocol::PodTotals::default());
}

/// A `tool_search` result's loaded tools join the segment's tools in load order, once each,
/// so a restore offers exactly what the live pod offered (docs/agent-loop.md §Tool search).
#[test]
fn tools_a_result_loaded_are_offered_after_the_segments_own_once() {
    let spec = |name: &str| seedpod_protocol::ToolSpec {
        name: name.into(),
        description: format!("{name} things"),
        parameters: serde_json::json!({"type": "object"}),
    };
    let loaded = |call_id: &str, names: &[&str]| EntryKind::ToolResult {
        call_id: CallId::new(call_id),
        name: "tool_search".into(),
        content: "loaded".into(),
        is_error: false,
        meta: seedpod_protocol::ToolMeta {
            loaded_tools: names.iter().map(|n| spec(n)).collect(),
            ..Default::default()
        },
    };
    let mut fold = Fold::new();
    let before: Vec<String> = fold.0.tools.iter().map(|t| t.name.clone()).collect();
    fold.ok(tool_call("c1"))
        .ok(loaded(
            "c1",
            &["mcp__gh__get_issue", "mcp__gh__list_issues"],
        ))
        .ok(tool_call("c2"))
        .ok(loaded("c2", &["mcp__gh__list_issues", "mcp__db__query"]))
        .ok(tool_call("c3"))
        .ok(tool_result("c3"));
    let names: Vec<String> = fold.0.tools.iter().map(|t| t.name.clone()).collect();
    let mut expected = before;
    expected.extend(
        [
            "mcp__gh__get_issue",
            "mcp__gh__list_issues",
            "mcp__db__query",
        ]
        .map(String::from),
    );
    assert_eq!(names, expected);
    assert_eq!(fold.0.tools.last(), Some(&spec("mcp__db__query")));
}
