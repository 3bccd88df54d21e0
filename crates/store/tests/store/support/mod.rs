//! Shared fixtures for the store's integration tests: a segment start, a realistic run of entry
//! kinds, raw-file helpers and a proptest strategy for fold-valid entry kinds.

// Test code: a failed unwrap is how it reports a broken fixture.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use seedpod_protocol::{
    CallId, DequeueReason, ENTRY_VERSION, Entry, EntryKind, EntrySeq, FinishReason, ModelConfig,
    ModelItem, Origin, PodEvent, ProviderKind, QueueId, QueuedItem, ReportId, RunEndReason,
    RunTrigger, Segment, SegmentId, SegmentStart, SystemItem, ToolSpec, Usage,
};
use seedpod_store::entry_line;

pub fn segment_start(segment_id: &str) -> SegmentStart {
    SegmentStart {
        date: None,
        context_window: None,
        compaction: None,
        segment_id: SegmentId::new(segment_id),
        system_prompt: "You are a pod.\nBe brief.".into(),
        model: ModelConfig::new(ProviderKind::Scripted, "script"),
        tools: vec![ToolSpec {
            name: "read_file".into(),
            description: "Read a file".into(),
            parameters: serde_json::json!({
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"],
            }),
        }],
        seed: vec![ModelItem::UserMessage {
            text: "summary of earlier work".into(),
        }],
        standing_approvals: Vec::new(),
        origin: Origin::New,
        tasks: Vec::new(),
        totals: None,
    }
}

pub fn entry(seq: u64, kind: EntryKind) -> Entry {
    Entry {
        v: ENTRY_VERSION,
        seq: EntrySeq::new(seq),
        ts: 1_700_000_000_000 + seq,
        kind,
    }
}

/// A user run with a tool call, a queued notification committed mid-run, a dequeued run, usage
/// and a config change: every fold-relevant kind at least once.
pub fn realistic_run() -> Vec<EntryKind> {
    vec![
        EntryKind::Queued {
            queue_id: QueueId::new(1),
            item: QueuedItem::Run {
                segments: vec![Segment::text("look at a.txt")],
            },
        },
        EntryKind::RunStart {
            trigger: RunTrigger::User,
        },
        EntryKind::UserInput {
            segments: vec![Segment::text("look at a.txt")],
            text: "look at a.txt".into(),
            queue_id: Some(QueueId::new(1)),
        },
        EntryKind::AssistantItem {
            item: ModelItem::Reasoning {
                text: "I should read it".into(),
                signature: Some("sig==".into()),
                responses: None,
            },
        },
        EntryKind::AssistantItem {
            item: ModelItem::ToolCall {
                call_id: CallId::new("call_1"),
                name: "read_file".into(),
                arguments: r#"{ "path":"a.txt" }"#.into(),
            },
        },
        EntryKind::Queued {
            queue_id: QueueId::new(2),
            item: QueuedItem::Notify {
                message: "build done".into(),
                wake: true,
            },
        },
        EntryKind::ToolResult {
            call_id: CallId::new("call_1"),
            name: "read_file".into(),
            content: "hello \"world\"\n".into(),
            is_error: false,
            meta: Default::default(),
        },
        EntryKind::TurnEnd {
            iteration: 1,
            finish: FinishReason::ToolUse,
        },
        EntryKind::SystemItem {
            item: SystemItem::Notification {
                message: "build done".into(),
                body: "[notification] build done".into(),
            },
            queue_id: Some(QueueId::new(2)),
        },
        EntryKind::AssistantItem {
            item: ModelItem::AssistantText {
                text: "It says hello.".into(),
            },
        },
        EntryKind::TurnEnd {
            iteration: 2,
            finish: FinishReason::Stop,
        },
        EntryKind::Usage(Usage {
            input_tokens: 120,
            output_tokens: 30,
            cache_read_tokens: 5,
            cache_creation_tokens: 0,
        }),
        EntryKind::RunEnd {
            reason: RunEndReason::Completed,
            message: None,
        },
        EntryKind::Queued {
            queue_id: QueueId::new(3),
            item: QueuedItem::Run {
                segments: vec![Segment::text("never mind")],
            },
        },
        EntryKind::Dequeued {
            queue_id: QueueId::new(3),
            reason: DequeueReason::Cancelled,
        },
        EntryKind::ConfigChanged {
            model: ModelConfig::new(ProviderKind::Openai, "gpt-x"),
        },
    ]
}

/// `realistic_run` numbered after a segment start, as a writer would produce it.
pub fn realistic_entries() -> Vec<Entry> {
    let mut entries = vec![entry(0, EntryKind::SegmentStart(segment_start("s1")))];
    for (i, kind) in realistic_run().into_iter().enumerate() {
        entries.push(entry(i as u64 + 1, kind));
    }
    entries
}

/// The exact file bytes for `entries`.
pub fn file_bytes(entries: &[Entry]) -> Vec<u8> {
    entries
        .iter()
        .flat_map(|e| entry_line(e).unwrap().into_bytes())
        .collect()
}

/// A segment path inside `dir` (the file is not created).
pub fn seg_path(dir: &Path) -> PathBuf {
    dir.join("seg.jsonl")
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z ]{0,12}",
        Just("line\nbreak \"quoted\" \\ tab\t é 漢字 🙂".to_owned()),
        Just(String::new()),
    ]
}

fn model_item() -> impl Strategy<Value = ModelItem> {
    prop_oneof![
        text().prop_map(|text| ModelItem::AssistantText { text }),
        (text(), proptest::option::of(text())).prop_map(|(text, signature)| ModelItem::Reasoning {
            text,
            signature,
            responses: None,
        }),
        ("c[0-3]", text(), text()).prop_map(|(call_id, name, arguments)| ModelItem::ToolCall {
            call_id: CallId::new(call_id),
            name,
            arguments,
        }),
        ("c[0-3]", task_arguments()).prop_map(|(call_id, arguments)| ModelItem::ToolCall {
            call_id: CallId::new(call_id),
            name: "update_tasks".into(),
            arguments,
        }),
    ]
}

/// `update_tasks` arguments: valid lists of up to four tasks, and some that are refused.
pub fn task_arguments() -> impl Strategy<Value = String> {
    let status = prop_oneof![Just("pending"), Just("in_progress"), Just("done")];
    let valid = proptest::collection::vec(("[a-z ]{1,12}", status), 0..4).prop_map(|tasks| {
        let tasks: Vec<serde_json::Value> = tasks
            .into_iter()
            .map(|(content, status)| serde_json::json!({"content": content, "status": status}))
            .collect();
        serde_json::json!({ "tasks": tasks }).to_string()
    });
    prop_oneof![
        4 => valid,
        1 => Just(r#"{"tasks":[{"content":"x","status":"later"}]}"#.to_string()),
        1 => text(),
    ]
}

fn system_item() -> impl Strategy<Value = SystemItem> {
    prop_oneof![
        (text(), text()).prop_map(|(message, body)| SystemItem::Notification { message, body }),
        text().prop_map(|body| SystemItem::Interrupt { body }),
        text().prop_map(|body| SystemItem::TaskReminder {
            source: seedpod_protocol::ReminderSource::TaskInactivity,
            body,
        }),
        (text(), text()).prop_map(|(path, body)| SystemItem::FileAttachment { path, body }),
        text().prop_map(|body| SystemItem::PodEvent {
            event: PodEvent::TurnEnded {
                pod: "child".into(),
                event_id: ReportId::new("e1"),
            },
            body,
        }),
    ]
}

fn queue_id() -> impl Strategy<Value = QueueId> {
    (1u64..6).prop_map(QueueId::new)
}

/// Any entry kind the fold accepts after a segment start.
pub fn fold_valid_kind() -> impl Strategy<Value = EntryKind> {
    prop_oneof![
        prop_oneof![Just(RunTrigger::User), Just(RunTrigger::Notification)]
            .prop_map(|trigger| EntryKind::RunStart { trigger }),
        (text(), proptest::option::of(queue_id())).prop_map(|(text, queue_id)| {
            EntryKind::UserInput {
                segments: vec![Segment::text(text.clone())],
                text,
                queue_id,
            }
        }),
        model_item().prop_map(|item| EntryKind::AssistantItem { item }),
        (
            "c[0-3]",
            prop_oneof![Just("tool"), Just("update_tasks")],
            text(),
            any::<bool>()
        )
            .prop_map(|(call_id, name, content, is_error)| {
                EntryKind::ToolResult {
                    call_id: CallId::new(call_id),
                    name: name.into(),
                    content,
                    is_error,
                    meta: Default::default(),
                }
            }),
        (system_item(), proptest::option::of(queue_id()))
            .prop_map(|(item, queue_id)| EntryKind::SystemItem { item, queue_id }),
        (0u32..5).prop_map(|iteration| EntryKind::TurnEnd {
            iteration,
            finish: FinishReason::Stop,
        }),
        proptest::option::of(text()).prop_map(|message| EntryKind::RunEnd {
            reason: RunEndReason::Cancelled,
            message,
        }),
        (any::<u32>(), any::<u32>()).prop_map(|(i, o)| EntryKind::Usage(Usage {
            input_tokens: u64::from(i),
            output_tokens: u64::from(o),
            cache_read_tokens: 1,
            cache_creation_tokens: 2,
        })),
        text().prop_map(|model| EntryKind::ConfigChanged {
            model: ModelConfig::new(ProviderKind::Anthropic, model),
        }),
        (queue_id(), text(), any::<bool>()).prop_map(|(queue_id, message, wake)| {
            EntryKind::Queued {
                queue_id,
                item: QueuedItem::Notify { message, wake },
            }
        }),
        queue_id().prop_map(|queue_id| EntryKind::Dequeued {
            queue_id,
            reason: DequeueReason::Duplicate,
        }),
    ]
}
