//! Shared fixtures for this crate's tests: log entries, frames, cells of every kind, and text
//! renderings of cells and buffers.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use ratatui::buffer::Buffer;
use ratatui::text::Line;
use seedpod_protocol::{
    AlertLevel, ApprovalDecision, ApprovalRequest, CallId, Compaction, CompactionTrigger, Entry,
    EntryKind, EntrySeq, EventSeq, FinishReason, InFlightToolCall, InstanceId, ModelConfig,
    ModelItem, Origin, PodEvent, PodState, ProviderKind, QueueEntry, QueueId, QueuedItem, ReportId,
    RunEndReason, RunTrigger, Segment, SegmentId, SegmentStart, ServerMsg, StandingApproval,
    SystemItem, Usage,
};
use seedpod_transcript::{
    ApprovalStatus, Cell, CellKind, LogHead, SegmentOrigin, Theme, ToolStatus, Transcript,
    cell_lines,
};

pub const TS: u64 = 1_763_848_000_000;

pub fn entry(seq: u64, kind: EntryKind) -> Entry {
    Entry {
        v: 1,
        seq: EntrySeq::new(seq),
        ts: TS + seq * 100,
        kind,
    }
}

pub fn committed(event_seq: u64, entry: Entry) -> ServerMsg {
    ServerMsg::Committed {
        seq: EventSeq::new(event_seq),
        entry,
    }
}

pub fn segment_start() -> EntryKind {
    EntryKind::SegmentStart(SegmentStart {
        date: None,
        context_window: None,
        compaction: None,
        segment_id: SegmentId::new("0193f0c2-7c1e-7d2a-9c1b-3f7a2b1c0d9e"),
        system_prompt: "You are demo.".into(),
        model: ModelConfig::new(ProviderKind::Scripted, "script"),
        tools: vec![],
        seed: vec![],
        standing_approvals: Vec::new(),
        origin: Origin::New,
        tasks: Vec::new(),
        totals: None,
    })
}

pub fn run_start() -> EntryKind {
    EntryKind::RunStart {
        trigger: RunTrigger::User,
    }
}

pub fn user_text(text: &str) -> EntryKind {
    EntryKind::UserInput {
        segments: vec![Segment::text(text)],
        text: text.into(),
        queue_id: None,
    }
}

pub fn answer(text: &str) -> EntryKind {
    EntryKind::AssistantItem {
        item: ModelItem::AssistantText { text: text.into() },
    }
}

pub fn reasoning(text: &str) -> EntryKind {
    EntryKind::AssistantItem {
        item: ModelItem::Reasoning {
            text: text.into(),
            signature: None,
            responses: None,
        },
    }
}

pub fn tool_call(call_id: &str, name: &str, arguments: &str) -> EntryKind {
    EntryKind::AssistantItem {
        item: ModelItem::ToolCall {
            call_id: CallId::new(call_id),
            name: name.into(),
            arguments: arguments.into(),
        },
    }
}

pub fn tool_result(call_id: &str, name: &str, content: &str, is_error: bool) -> EntryKind {
    EntryKind::ToolResult {
        call_id: CallId::new(call_id),
        name: name.into(),
        content: content.into(),
        is_error,
        meta: Default::default(),
    }
}

pub fn usage(input: u64, output: u64) -> EntryKind {
    EntryKind::Usage(Usage {
        input_tokens: input,
        output_tokens: output,
        cache_read_tokens: 0,
        cache_creation_tokens: 0,
    })
}

pub fn turn_end() -> EntryKind {
    EntryKind::TurnEnd {
        iteration: 1,
        finish: FinishReason::Stop,
    }
}

pub fn run_end(reason: RunEndReason) -> EntryKind {
    EntryKind::RunEnd {
        reason,
        message: None,
    }
}

pub fn approval_request(request: ApprovalRequest) -> EntryKind {
    EntryKind::ApprovalRequest(request)
}

pub fn approval_answer(call_id: &str, decision: ApprovalDecision) -> EntryKind {
    EntryKind::ApprovalAnswer {
        call_id: CallId::new(call_id),
        decision,
    }
}

pub fn notification(message: &str) -> EntryKind {
    EntryKind::SystemItem {
        item: SystemItem::Notification {
            message: message.into(),
            body: format!("[notification] {message}"),
        },
        queue_id: None,
    }
}

pub fn snapshot_begin(seq: u64, state: PodState) -> ServerMsg {
    ServerMsg::SnapshotBegin {
        context: Default::default(),
        seq: EventSeq::new(seq),
        state,
        greeting: "pod demo · scripted/script".into(),
        segment_id: SegmentId::new("0193f0c2"),
        entries: 0,
        message_cap: None,
    }
}

pub fn in_flight(text: &str, thinking: &str, tool_calls: Vec<InFlightToolCall>) -> ServerMsg {
    ServerMsg::InFlight {
        text: text.into(),
        thinking: thinking.into(),
        tool_calls,
        queue: vec![],
    }
}

pub fn queued_run(queue_id: u64, text: &str) -> QueueEntry {
    QueueEntry {
        queue_id: QueueId::new(queue_id),
        item: QueuedItem::Run {
            segments: vec![Segment::text(text)],
        },
    }
}

pub fn cell(kind: CellKind) -> Cell {
    Cell::new(1, kind)
}

pub fn expanded(kind: CellKind) -> Cell {
    let mut cell = Cell::new(1, kind);
    cell.expanded = true;
    cell
}

/// `n` lines of numbered tool output.
pub fn long_output(n: usize) -> String {
    (1..=n)
        .map(|i| format!("line {i:>4}: compiling crate number {i} of the workspace"))
        .collect::<Vec<_>>()
        .join("\n")
}

pub const MARKDOWN: &str = "# Plan\n\nThis has *emphasis*, **strong**, ~~struck~~ and `inline code`, \
with a [link](https://example.com/docs) and <https://example.com>.\n\n## Steps\n\n\
1. Read the file\n2. Change it\n   - keep tests green\n   - [x] done item\n3. Ship\n\n\
> A quote that is long enough to wrap across lines at narrow widths, to show the bar.\n\n\
```rust\nfn main() {\n    let greeting = \"hello\"; // say it\n    println!(\"{greeting}\");\n}\n```\n\n\
---\n\n### Small heading\n\nDone.";

pub const WIDE_TABLE: &str = "| name | kind | size | owner | description | status |\n\
|:-----|:----:|-----:|-------|-------------|--------|\n\
| seedpod-protocol | library | 1,546 | protocol team | wire and log types, the NDJSON codec | stable |\n\
| seedpod-transcript | library | 3,000 | tui team | projection of frames into cells and their renderers | new |\n\
| seedpod | binary | 900 | cli team | flags and wiring | stable |";

pub const CJK: &str = "日本語のテキストは空白なしで折り返されます。中文文本也没有空格。한국어 텍스트도 있습니다. Mixed with English words and emoji 🚀🎉 that are two columns wide.";

/// Every kind of cell, with a name for the snapshot, in a few variations.
pub fn every_cell() -> Vec<(&'static str, Cell)> {
    let tool = |status, output: String, duration_ms| CellKind::ToolCall {
        call_id: CallId::new("call_1"),
        name: "read_file".into(),
        arguments: r#"{"path":"src/main.rs","limit":200}"#.into(),
        status,
        output,
        duration_ms,
        outcome: None,
        progress: None,
    };
    vec![
        (
            "segment_start",
            cell(CellKind::SegmentStart {
                segment_id: SegmentId::new("0193f0c2-7c1e"),
                provider: "anthropic".into(),
                model: "claude-sonnet-4".into(),
                origin: SegmentOrigin::CompactedFrom(SegmentId::new("0193eeee-aaaa")),
            }),
        ),
        (
            "segment_start_cleared",
            cell(CellKind::SegmentStart {
                segment_id: SegmentId::new("0193f0c2-7c1e"),
                provider: "anthropic".into(),
                model: "claude-sonnet-4".into(),
                origin: SegmentOrigin::ClearedFrom(SegmentId::new("0193eeee-aaaa")),
            }),
        ),
        (
            "user_input_chips",
            cell(CellKind::UserInput {
                segments: vec![
                    Segment::text("Summarise "),
                    Segment::FileRef {
                        path: "README.md".into(),
                    },
                    Segment::text(" using "),
                    Segment::KnowledgeRef {
                        slug: "style".into(),
                    },
                    Segment::text(" then run "),
                    Segment::WorkflowInvoke {
                        slug: "review".into(),
                        args: "fast".into(),
                    },
                    Segment::text(" on this:\n"),
                    Segment::Paste {
                        id: 1,
                        chars: 1234,
                        lines: 40,
                        content: "x".repeat(1234),
                    },
                    Segment::text("\nthanks!"),
                    Segment::Unknown,
                ],
            }),
        ),
        (
            "user_input_cjk",
            cell(CellKind::UserInput {
                segments: vec![Segment::text(CJK)],
            }),
        ),
        (
            "assistant_markdown",
            cell(CellKind::AssistantText {
                text: MARKDOWN.into(),
                streaming: false,
                interrupted: false,
            }),
        ),
        (
            "assistant_wide_table",
            cell(CellKind::AssistantText {
                text: format!("Crates:\n\n{WIDE_TABLE}\n\nThat is all."),
                streaming: false,
                interrupted: false,
            }),
        ),
        (
            "assistant_cjk",
            cell(CellKind::AssistantText {
                text: format!("## 見出し\n\n{CJK}\n\n- 項目その一は長いテキストです\n- 二"),
                streaming: false,
                interrupted: false,
            }),
        ),
        (
            "assistant_streaming_open_fence",
            cell(CellKind::AssistantText {
                text: "Here is the fix:\n\n```python\ndef add(a, b):\n    return a + b".into(),
                streaming: true,
                interrupted: false,
            }),
        ),
        (
            "assistant_streaming_empty",
            cell(CellKind::AssistantText {
                text: String::new(),
                streaming: true,
                interrupted: false,
            }),
        ),
        (
            "thinking_collapsed",
            cell(CellKind::Thinking {
                text: "The user wants a summary.\nFirst read the README, then the docs.".into(),
                streaming: false,
            }),
        ),
        (
            "thinking_streaming",
            cell(CellKind::Thinking {
                text: "The user wants a summary.\nNow checking the docs folder".into(),
                streaming: true,
            }),
        ),
        (
            "thinking_expanded",
            expanded(CellKind::Thinking {
                text: "The user wants a summary.\nFirst read the README, then the docs.".into(),
                streaming: false,
            }),
        ),
        (
            "tool_running",
            cell(tool(ToolStatus::Running, String::new(), None)),
        ),
        (
            "tool_ok_short",
            cell(tool(ToolStatus::Ok, "fn main() {}\n".into(), Some(12))),
        ),
        (
            "tool_ok_no_output",
            cell(tool(ToolStatus::Ok, String::new(), Some(3))),
        ),
        (
            "tool_error",
            cell(tool(
                ToolStatus::Error,
                "error: no such file or directory: src/main.rs".into(),
                Some(1_530),
            )),
        ),
        (
            "tool_2000_lines_collapsed",
            cell(tool(ToolStatus::Ok, long_output(2000), Some(65_000))),
        ),
        (
            "tool_escape_codes",
            cell(CellKind::ToolCall {
                call_id: CallId::new("c"),
                name: "shell".into(),
                arguments: r#"{"command":"cargo build\n--release"}"#.into(),
                status: ToolStatus::Ok,
                output:
                    "\u{1b}[32m   Compiling\u{1b}[0m seedpod\tv0.1.0\r\n\u{1b}[1mFinished\u{1b}[0m"
                        .into(),
                duration_ms: Some(4_200),
                outcome: None,
                progress: None,
            }),
        ),
        (
            "approval_waiting",
            cell(approval_cell(ApprovalStatus::Waiting)),
        ),
        (
            "approval_approved",
            cell(approval_cell(ApprovalStatus::Approved)),
        ),
        (
            "approval_approved_always",
            cell(approval_cell(ApprovalStatus::ApprovedAlways(StandingApproval {
                tool: "shell".into(),
                rule: Some(seedpod_protocol::CommandRule::Prefix(vec!["cargo".into()])),
            }))),
        ),
        (
            "approval_denied",
            cell(approval_cell(ApprovalStatus::Denied {
                reason: "not on the main branch; open a pull request instead".into(),
            })),
        ),
        (
            "approval_closed",
            cell(approval_cell(ApprovalStatus::Closed)),
        ),
        (
            "approval_long_arguments",
            cell(CellKind::Approval {
                request: ApprovalRequest {
                    call_id: CallId::new("call_9"),
                    tool: "write_file".into(),
                    arguments: serde_json::json!({
                        "path": "src/lib.rs",
                        "content": (1..=10).map(|i| format!("line {i}")).collect::<Vec<_>>().join("\n"),
                    })
                    .to_string(),
                    summary: "write_file: src/lib.rs (10 lines)".into(),
                    always: None,
                    replaces: None,
                },
                status: ApprovalStatus::Waiting,
            }),
        ),
        (
            "notification",
            cell(CellKind::Notification {
                message: "CI is green on main: all 214 checks passed after the retry".into(),
            }),
        ),
        (
            "pod_event_turn_ended",
            cell(CellKind::PodEvent {
                event: PodEvent::TurnEnded {
                    pod: "child-1".into(),
                    event_id: ReportId::new("e1"),
                },
            }),
        ),
        (
            "pod_event_errored",
            cell(CellKind::PodEvent {
                event: PodEvent::Errored {
                    pod: "child-2".into(),
                    event_id: ReportId::new("e2"),
                    message: "the provider returned 529 overloaded three times".into(),
                },
            }),
        ),
        (
            "pod_event_scope",
            cell(CellKind::PodEvent {
                event: PodEvent::ScopeSubDelegated {
                    pod: "child-1".into(),
                    event_id: ReportId::new("e3"),
                    child: "grandchild".into(),
                    scope: vec!["src/".into(), "docs/".into()],
                },
            }),
        ),
        (
            "pod_event_unknown",
            cell(CellKind::PodEvent {
                event: PodEvent::Unknown,
            }),
        ),
        (
            "file_attachment",
            cell(CellKind::FileAttachment {
                path: "docs/architecture.md".into(),
                body: long_output(40),
            }),
        ),
        (
            "file_attachment_expanded",
            expanded(CellKind::FileAttachment {
                path: "notes.txt".into(),
                body: "first line\nsecond line that is somewhat longer than forty columns wide"
                    .into(),
            }),
        ),
        (
            "knowledge",
            cell(CellKind::Knowledge {
                slug: "style".into(),
                body: "Write short files.\nOne idea each.".into(),
            }),
        ),
        (
            "workflow",
            cell(CellKind::Workflow {
                slug: "review".into(),
                body: "Review the diff.".into(),
            }),
        ),
        (
            "task_reminder",
            cell(CellKind::TaskReminder {
                source: seedpod_protocol::ReminderSource::TaskInactivity,
                body: "- [ ] write tests\n- [ ] run clippy".into(),
            }),
        ),
        (
            "interrupt",
            cell(CellKind::Interrupt {
                body: "[interrupt] The person cancelled the turn before the tool ran.".into(),
            }),
        ),
        (
            "alert_warn",
            cell(CellKind::Alert {
                level: AlertLevel::Warn,
                message: "the log ended in a torn entry; it was moved aside to 0193.jsonl.torn"
                    .into(),
            }),
        ),
        (
            "alert_error",
            cell(CellKind::Alert {
                level: AlertLevel::Error,
                message: "storage failed: no space left on device".into(),
            }),
        ),
        (
            "run_end_completed",
            cell(CellKind::RunEnd {
                reason: RunEndReason::Completed,
                message: None,
                duration_ms: Some(12_345),
                tokens: Some(Usage {
                    input_tokens: 12_000,
                    output_tokens: 340,
                    cache_read_tokens: 300,
                    cache_creation_tokens: 0,
                }),
            }),
        ),
        (
            "run_end_error",
            cell(CellKind::RunEnd {
                reason: RunEndReason::Error,
                message: Some("provider error: 401 unauthorized (check ANTHROPIC_API_KEY)".into()),
                duration_ms: Some(800),
                tokens: None,
            }),
        ),
        (
            "model_changed",
            cell(CellKind::ModelChanged {
                provider: "openai".into(),
                model: "gpt-5".into(),
            }),
        ),
        (
            "compaction_by_command",
            cell(CellKind::Compaction {
                record: compaction_record(CompactionTrigger::Command, None),
            }),
        ),
        (
            "compaction_auto_with_focus",
            cell(CellKind::Compaction {
                record: compaction_record(
                    CompactionTrigger::Auto,
                    Some("the parser and its error messages"),
                ),
            }),
        ),
        (
            "compaction_overflow_expanded",
            expanded(CellKind::Compaction {
                record: compaction_record(CompactionTrigger::Overflow, None),
            }),
        ),
        (
            "context_pruned",
            cell(CellKind::ContextPruned { results: 3 }),
        ),
        (
            "window_learned",
            cell(CellKind::WindowLearned { tokens: 16_000 }),
        ),
        (
            "approval_revoked",
            cell(CellKind::ApprovalRevoked {
                rule: "shell: git status …".into(),
            }),
        ),
        (
            "log_head_more",
            cell(CellKind::LogHead {
                head: LogHead::More,
            }),
        ),
        (
            "log_head_loading",
            cell(CellKind::LogHead {
                head: LogHead::Loading,
            }),
        ),
        (
            "log_head_beginning",
            cell(CellKind::LogHead {
                head: LogHead::Beginning,
            }),
        ),
        (
            "log_head_capped",
            cell(CellKind::LogHead {
                head: LogHead::Capped { pod: "demo".into() },
            }),
        ),
        (
            "unknown_entry",
            cell(CellKind::Unknown {
                label: "log entry #7 of an unknown kind".into(),
                raw: r#"{"v":1,"seq":7,"ts":1763848000700,"kind":"unknown"}"#.into(),
            }),
        ),
    ]
}

pub const SUMMARY: &str = "## Task\n\nMake the parser report **line and column** on every error.\n\n\
## Done\n\n- `src/parse.rs`: spans on tokens\n- tests for three error kinds\n\n\
## Open\n\n1. the lexer's errors\n2. update `docs/errors.md`";

/// What a compaction of 143 messages with 4 kept records.
pub fn compaction_record(trigger: CompactionTrigger, focus: Option<&str>) -> Compaction {
    Compaction {
        summary: SUMMARY.into(),
        compacted_items: 143,
        kept_items: 4,
        tokens_before: 48_200,
        tokens_after: 3_100,
        trigger,
        focus: focus.map(str::to_string),
        memory_flush: Vec::new(),
    }
}

/// A `shell` approval request for `cargo test --workspace`.
pub fn shell_request(call_id: &str) -> ApprovalRequest {
    ApprovalRequest {
        call_id: CallId::new(call_id),
        tool: "shell".into(),
        arguments: r#"{"command":"cargo test --workspace --all-targets"}"#.into(),
        summary: "shell: cargo test --workspace --all-targets".into(),
        always: Some(seedpod_protocol::CommandRule::Prefix(vec!["cargo".into()])),
        replaces: None,
    }
}

pub fn approval_cell(status: ApprovalStatus) -> CellKind {
    CellKind::Approval {
        request: shell_request("call_1"),
        status,
    }
}

pub fn apply_all(transcript: &mut Transcript, msgs: &[ServerMsg]) {
    for msg in msgs {
        transcript.apply(msg);
    }
}

pub fn kinds(t: &Transcript) -> Vec<&'static str> {
    t.cells()
        .iter()
        .map(|c| match &c.kind {
            CellKind::SegmentStart { .. } => "segment_start",
            CellKind::UserInput { .. } => "user",
            CellKind::AssistantText {
                streaming: true, ..
            } => "text*",
            CellKind::AssistantText { .. } => "text",
            CellKind::Thinking {
                streaming: true, ..
            } => "thinking*",
            CellKind::Thinking { .. } => "thinking",
            CellKind::Noted => "noted",
            CellKind::ToolCall { .. } => "tool",
            CellKind::Approval { .. } => "approval",
            CellKind::Notification { .. } => "notification",
            CellKind::PodEvent { .. } => "pod_event",
            CellKind::FileAttachment { .. } => "file",
            CellKind::Knowledge { .. } => "knowledge",
            CellKind::Workflow { .. } => "workflow",
            CellKind::TaskReminder { .. } => "reminder",
            CellKind::Interrupt { .. } => "interrupt",
            CellKind::Alert { .. } => "alert",
            CellKind::RunEnd { .. } => "run_end",
            CellKind::ModelChanged { .. } => "model",
            CellKind::DateChanged { .. } => "date",
            CellKind::Compaction { .. } => "compaction",
            CellKind::ContextPruned { .. } => "pruned",
            CellKind::WindowLearned { .. } => "window",
            CellKind::ApprovalRevoked { .. } => "revoked",
            CellKind::StandingAllowed { .. } => "standing",
            CellKind::LogHead { .. } => "head",
            CellKind::Unknown { .. } => "unknown",
        })
        .collect()
}

/// An attached client that has seen a snapshot of an idle pod with a segment start.
pub fn attached() -> Transcript {
    let mut t = Transcript::new();
    apply_all(
        &mut t,
        &[
            ServerMsg::Welcome {
                protocol: 1,
                pod: "demo".parse().unwrap(),
                server_version: "0.1.0".into(),
                state: PodState::Idle,
                instance: InstanceId::new("i1"),
                seq: EventSeq::new(4),
            },
            snapshot_begin(4, PodState::Idle),
            ServerMsg::SnapshotEntries {
                entries: vec![entry(0, segment_start())],
            },
            in_flight("", "", vec![]),
            ServerMsg::SnapshotEnd {
                seq: EventSeq::new(4),
            },
        ],
    );
    t
}

/// A cell's lines as text.
pub fn text_of(lines: &[Line<'_>]) -> Vec<String> {
    lines.iter().map(|l| l.to_string()).collect()
}

/// The cell at widths 40, 80 and 120, each line padded to the width and closed with `|`, so a
/// snapshot shows where the edge is.
pub fn at_widths(cell: &Cell) -> String {
    let theme = Theme::plain();
    let mut out = String::new();
    for width in [40u16, 80, 120] {
        out.push_str(&format!("── width {width} ──\n"));
        for line in cell_lines(cell, width, &theme) {
            let text = line.to_string();
            let pad = usize::from(width).saturating_sub(line.width());
            out.push_str(&format!("{text}{}|\n", " ".repeat(pad)));
        }
    }
    out
}

/// A buffer as text, one row per line, trailing spaces kept to the edge marker.
pub fn screen(buffer: &Buffer) -> String {
    let area = buffer.area;
    let mut out = String::new();
    for y in area.top()..area.bottom() {
        let mut row = String::new();
        let mut skip = 0;
        for x in area.left()..area.right() {
            if skip > 0 {
                skip -= 1;
                continue;
            }
            let symbol = buffer[(x, y)].symbol();
            skip = unicode_width::UnicodeWidthStr::width(symbol).saturating_sub(1);
            row.push_str(symbol);
        }
        out.push_str(&row);
        out.push_str("|\n");
    }
    out
}
