//! How long restore takes for a long segment: writes N realistic entries (default 100000) through
//! the real writer into a temp segment, then times `read_segment` + `SegmentState::replay` — and
//! only those — as a restore would run them.
//!
//! `cargo run --release -p seedpod-store --example replay_bench [N]`

use std::error::Error;
use std::time::Instant;

use seedpod_protocol::{
    CallId, EntryKind, FinishReason, ModelConfig, ModelItem, Origin, ProviderKind, RunEndReason,
    RunTrigger, Segment, SegmentId, SegmentStart, SystemItem, ToolSpec, Usage,
};
use seedpod_store::{Durability, SegmentState, SegmentWriter, read_segment};

/// Entries written when no count is given.
const DEFAULT_ENTRIES: u64 = 100_000;

/// Roughly what a tool returns: a few hundred bytes of file content with quotes and newlines.
const TOOL_OUTPUT: &str = "fn main() {\n    println!(\"hello, world\");\n}\n\n// A longer \
    comment that makes this result look like a real file excerpt, with \"quotes\", tabs\tand \
    unicode — é, 漢字 — so the parser meets escapes as it would in a real pod's log.\n";

/// The `i`-th entry of an endless, realistic conversation: runs of tool-calling turns with
/// reasoning, usage, and the occasional notification.
fn kind(i: u64) -> EntryKind {
    let call_id = format!("call_{}", i / 12);
    match i % 12 {
        0 => EntryKind::RunStart {
            trigger: RunTrigger::User,
        },
        1 => {
            let text = format!("please look at src/module_{i}.rs and fix the failing test");
            EntryKind::UserInput {
                segments: vec![Segment::text(text.clone())],
                text,
                queue_id: None,
            }
        }
        2 | 7 => EntryKind::AssistantItem {
            item: ModelItem::Reasoning {
                text: "The test fails because the parser rejects trailing commas; I will read \
                       the file first and then patch the tokenizer."
                    .into(),
                signature: Some("EqQBCkYIBxgCKkDk3v9 signature bytes".into()),
                responses: None,
            },
        },
        3 => EntryKind::AssistantItem {
            item: ModelItem::ToolCall {
                call_id: CallId::new(call_id),
                name: "read_file".into(),
                arguments: format!("{{\"path\":\"src/module_{i}.rs\",\"limit\":200}}"),
            },
        },
        4 => EntryKind::ToolResult {
            call_id: CallId::new(call_id),
            name: "read_file".into(),
            content: TOOL_OUTPUT.into(),
            is_error: false,
            meta: Default::default(),
        },
        5 => EntryKind::TurnEnd {
            iteration: 1,
            finish: FinishReason::ToolUse,
        },
        6 => EntryKind::Usage(Usage {
            input_tokens: 12_000 + i,
            output_tokens: 350,
            cache_read_tokens: 11_000,
            cache_creation_tokens: 0,
        }),
        8 => EntryKind::SystemItem {
            item: SystemItem::Notification {
                message: "ci finished".into(),
                body: "[notification] ci finished: 3 passed, 1 failed".into(),
            },
            queue_id: None,
        },
        9 => EntryKind::AssistantItem {
            item: ModelItem::AssistantText {
                text: "I fixed the tokenizer to accept trailing commas and added a regression \
                       test; all tests pass now."
                    .into(),
            },
        },
        10 => EntryKind::TurnEnd {
            iteration: 2,
            finish: FinishReason::Stop,
        },
        _ => EntryKind::RunEnd {
            reason: RunEndReason::Completed,
            message: None,
        },
    }
}

fn segment_start() -> SegmentStart {
    SegmentStart {
        date: None,
        context_window: None,
        compaction: None,
        segment_id: SegmentId::new("bench"),
        system_prompt: "You are a helpful coding agent working in a repository.".repeat(20),
        model: ModelConfig::new(ProviderKind::Scripted, "script"),
        tools: vec![ToolSpec {
            name: "read_file".into(),
            description: "Read a file from the workspace".into(),
            parameters: serde_json::json!({
                "type": "object",
                "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}},
                "required": ["path"],
            }),
        }],
        seed: Vec::new(),
        standing_approvals: Vec::new(),
        origin: Origin::New,
        tasks: Vec::new(),
        totals: None,
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let count = match std::env::args().nth(1) {
        Some(arg) => arg
            .parse::<u64>()
            .map_err(|e| format!("entry count {arg:?}: {e}"))?,
        None => DEFAULT_ENTRIES,
    };
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("bench.jsonl");

    let (writer, _) = SegmentWriter::create(path.clone(), segment_start()).await?;
    for i in 1..count {
        writer.append(kind(i), Durability::Buffered).await?;
    }
    writer.close().await?;
    let bytes = std::fs::metadata(&path)?.len();

    let started = Instant::now();
    let read = read_segment(&path)?;
    let state = SegmentState::replay(&read.entries)?;
    let elapsed = started.elapsed();

    println!(
        "replay {} entries: {} ms ({:.1} MiB, {} history items)",
        read.entries.len(),
        elapsed.as_millis(),
        bytes as f64 / (1024.0 * 1024.0),
        state.history.len()
    );
    Ok(())
}
