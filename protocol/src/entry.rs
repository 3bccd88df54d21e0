//! Log entries: one per line of a segment file, and the payload of every `committed` event, so a
//! live client and a reattached one see exactly the same shape (DESIGN §4, §6).

use serde::{Deserialize, Serialize};

use crate::ids::{CallId, EntrySeq, QueueId, ReportId, SegmentId};

use crate::approval::RuleWire;
pub use crate::approval::{CommandRule, StandingApproval};
use crate::item::ModelItem;
use crate::pod_event::PodEvent;
use crate::segment::Segment;
use crate::system_item::SystemItem;
use crate::tasks::Task;
use crate::tool_meta::ToolMeta;

/// The entry format version written in every line's `v`.
pub const ENTRY_VERSION: u32 = 1;

/// One committed fact: `{"v":1,"seq":N,"ts":MS,"kind":...}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub v: u32,
    /// Position in the segment, from 0, without gaps.
    pub seq: EntrySeq,
    /// Unix time in milliseconds when the pod committed it (display only; never model-visible).
    pub ts: u64,
    #[serde(flatten)]
    pub kind: EntryKind,
}

// `SegmentStart` is one entry per segment and already sat at the lint's edge; its boxed
// `totals` added a pointer. Boxing the whole variant would save ~200 bytes per entry at the
// cost of an indirection at every construction site; worth doing on its own, not here.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EntryKind {
    /// Always the first entry of a segment.
    SegmentStart(SegmentStart),
    /// A run (one user-visible turn: requests and tool calls until the model stops) begins.
    RunStart {
        trigger: RunTrigger,
    },
    /// What the person submitted; `text` is `flatten_to_text(segments)` rendered at commit time.
    UserInput {
        segments: Vec<Segment>,
        text: String,
        /// Set when this input was queued earlier; committing it also dequeues it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        queue_id: Option<QueueId>,
    },
    /// Something the model produced: text, reasoning or a tool call.
    AssistantItem {
        item: ModelItem,
    },
    /// The model's answer exactly as it arrived, when cleaning changed it (reasoning moved out,
    /// tool-call text or echoed markers removed). Committed just before the cleaned items of the
    /// same response; kept for the record and never sent to the model.
    AssistantRaw {
        text: String,
    },
    /// What the model had streamed of an answer when it was stopped (a pause, a cancel, the pod
    /// stopping): kept because a person saw it. Part of history as an assistant message, so
    /// the model knows what it already said and a resumed turn goes on from it; clients mark
    /// it interrupted.
    AssistantInterrupted {
        text: String,
    },
    ToolResult {
        call_id: CallId,
        name: String,
        content: String,
        is_error: bool,
        /// Facts about the outcome for clients (exit code, output dropped, duration); the
        /// model reads them in `content`. Left out when nothing is known.
        #[serde(default, skip_serializing_if = "ToolMeta::is_empty")]
        meta: ToolMeta,
    },
    SystemItem {
        item: SystemItem,
        /// Set when this item was queued earlier; committing it also dequeues it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        queue_id: Option<QueueId>,
    },
    /// One model response and its tool results are fully committed.
    TurnEnd {
        iteration: u32,
        finish: FinishReason,
    },
    RunEnd {
        reason: RunEndReason,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    Usage(Usage),
    ConfigChanged {
        model: ModelConfig,
    },
    /// Durable receipt of a request that will be committed later (DESIGN §5 queues).
    Queued {
        queue_id: QueueId,
        item: QueuedItem,
    },
    /// A queued request dropped without being committed (e.g. a queued run cancelled).
    Dequeued {
        queue_id: QueueId,
        reason: DequeueReason,
    },
    /// A tool call whose policy is `ask` waits for a person's decision. Pending until an
    /// `approval_answer` for the same `call_id` or the end of the run.
    ApprovalRequest(ApprovalRequest),
    /// A person's decision on an `approval_request`; `deny` becomes the call's error result.
    ApprovalAnswer {
        call_id: CallId,
        decision: ApprovalDecision,
    },
    /// A person withdrew a standing approval (`seedpod approvals NAME --revoke`, `/approvals`):
    /// from here on, calls it covered are asked about again.
    ApprovalRevoked {
        standing: StandingApproval,
    },
    /// A call ran without asking because a standing approval covers it: which one. Not for the
    /// model; the person sees under the call what let it through.
    ApprovalStanding {
        call_id: CallId,
        standing: StandingApproval,
    },
    /// A report for this pod's parent, waiting in the durable outbox until delivered. (The end
    /// of a parent-started run is a report by itself and needs no entry of its own.)
    Outbox {
        event: PodEvent,
    },
    /// The parent acknowledged the report with this id; it is not sent again.
    OutboxDelivered {
        event_id: ReportId,
    },
    /// The model's context window as the pod now knows it (configured, from the built-in
    /// table, asked from the server, or learned from a "too long" error). Recorded so replay and
    /// later segments never ask again.
    ContextWindow(ContextWindow),
    /// A pruning step (docs/agent-loop.md §Pruning): old tool results replaced by shorter text.
    /// Committed as a step, not re-done on every request, so the request prefix stays stable
    /// between steps.
    ContextPruned {
        trims: Vec<ToolResultTrim>,
    },
    /// Something a person should still see when they come back (a reattach, `seedpod history`),
    /// where it happened: the pod stopped mid-turn or while a call waited for approval. Never
    /// model-visible and no effect on history: replay skips it, so the next request's bytes
    /// are the same with or without it (docs/storage.md).
    Notice {
        level: crate::message::AlertLevel,
        message: String,
    },
    /// Written by a newer seedpod. Clients show it raw; replay refuses it.
    #[serde(other)]
    Unknown,
}

impl EntryKind {
    /// The `kind` tag as written in the log.
    pub fn name(&self) -> &'static str {
        match self {
            EntryKind::SegmentStart(_) => "segment_start",
            EntryKind::RunStart { .. } => "run_start",
            EntryKind::UserInput { .. } => "user_input",
            EntryKind::AssistantItem { .. } => "assistant_item",
            EntryKind::AssistantRaw { .. } => "assistant_raw",
            EntryKind::AssistantInterrupted { .. } => "assistant_interrupted",
            EntryKind::ToolResult { .. } => "tool_result",
            EntryKind::SystemItem { .. } => "system_item",
            EntryKind::TurnEnd { .. } => "turn_end",
            EntryKind::RunEnd { .. } => "run_end",
            EntryKind::Usage(_) => "usage",
            EntryKind::ConfigChanged { .. } => "config_changed",
            EntryKind::Queued { .. } => "queued",
            EntryKind::Dequeued { .. } => "dequeued",
            EntryKind::ApprovalRequest(_) => "approval_request",
            EntryKind::ApprovalAnswer { .. } => "approval_answer",
            EntryKind::ApprovalRevoked { .. } => "approval_revoked",
            EntryKind::ApprovalStanding { .. } => "approval_standing",
            EntryKind::Outbox { .. } => "outbox",
            EntryKind::OutboxDelivered { .. } => "outbox_delivered",
            EntryKind::ContextWindow(_) => "context_window",
            EntryKind::ContextPruned { .. } => "context_pruned",
            EntryKind::Notice { .. } => "notice",
            EntryKind::Unknown => "unknown",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SegmentStart {
    pub segment_id: SegmentId,
    /// Rendered once when the segment starts; replay never re-renders it.
    pub system_prompt: String,
    /// The UTC day (`YYYY-MM-DD`) the system prompt was rendered on, which its "Today is …"
    /// says: when the day has changed by a later request, the pod tells the model the new date
    /// with a `date_changed` item. Absent in segments written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    pub model: ModelConfig,
    /// The tool schemas offered to the model in this segment.
    #[serde(default)]
    pub tools: Vec<ToolSpec>,
    /// History carried into this segment (compaction summary, fork point).
    #[serde(default)]
    pub seed: Vec<ModelItem>,
    /// `approve_always` answers carried over from the segment before (a `/clear` does not make
    /// a person approve again what they approved for the whole pod).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub standing_approvals: Vec<StandingApproval>,
    pub origin: Origin,
    /// The context window known when the segment started, carried over so a new segment does
    /// not forget a learned limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<ContextWindow>,
    /// Set on a segment made by compaction (`origin: compacted_from`): what was summarised.
    /// The summary itself is the first item of `seed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compaction: Option<Compaction>,
    /// The model's task list carried over from the segment before (a compaction keeps the
    /// plan; `/clear` starts without one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tasks: Vec<Task>,
    /// The pod's running totals from every segment before this one, so a pod's counters
    /// survive compaction and `/clear` and a restore reads only the active segment (see
    /// docs/storage.md). Absent in a pod's first segment and in segments written before it
    /// was recorded; the fold adds the segment's own entries on top.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// Boxed: it is rare beside the other entry kinds, which stay small.
    pub totals: Option<Box<PodTotals>>,
}

/// What a pod has done over its whole life, across segments: tokens, runs, tool calls and
/// time spent in runs. Display only; never model-visible.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PodTotals {
    pub usage: Usage,
    /// `run_start` entries.
    #[serde(default)]
    pub runs: u64,
    /// Tool calls the model made (committed `assistant_item` tool calls).
    #[serde(default)]
    pub tool_calls: u64,
    /// Milliseconds between each `run_start` and its `run_end` (entry timestamps).
    #[serde(default)]
    pub run_ms: u64,
}

/// How many tokens the model's context holds, and how the pod knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextWindow {
    pub tokens: u64,
    pub source: WindowSource,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WindowSource {
    /// `context_window` in the configuration.
    Config,
    /// The built-in (or configured) table of model families.
    Table,
    /// Asked from the model server (Ollama, llama.cpp, vLLM, LM Studio).
    Server,
    /// Stated by the server in a "too long" error.
    Learned,
    #[serde(other)]
    Unknown,
}

impl WindowSource {
    pub fn as_str(&self) -> &'static str {
        match self {
            WindowSource::Config => "config",
            WindowSource::Table => "table",
            WindowSource::Server => "server",
            WindowSource::Learned => "learned",
            WindowSource::Unknown => "unknown",
        }
    }
}

/// One tool result replaced by a pruning step. `index` is its position in the segment's
/// history; `call_id` must match there (replay refuses a step that points elsewhere).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolResultTrim {
    pub index: u64,
    pub call_id: CallId,
    pub mode: TrimMode,
    /// The text the model sees from now on.
    pub content: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrimMode {
    /// Head and tail kept, the middle left out with a note.
    Soft,
    /// The whole result replaced by a placeholder.
    Hard,
    #[serde(other)]
    Unknown,
}

/// What a compaction did, recorded in the `segment_start` of the segment it made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Compaction {
    /// The summary the model wrote (also the first seed item, as the model sees it).
    pub summary: String,
    /// History items of the old segment replaced by the summary.
    pub compacted_items: u64,
    /// History items carried over verbatim after the summary.
    pub kept_items: u64,
    /// Estimated context tokens before and after.
    pub tokens_before: u64,
    pub tokens_after: u64,
    pub trigger: CompactionTrigger,
    /// What the person asked the summary to focus on (`/compact FOCUS`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub focus: Option<String>,
    /// What the memory flush before the summary did (`[context] memory_flush`): one line per
    /// file tool call (`write_file AGENTS.md`), or why it did not run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub memory_flush: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactionTrigger {
    /// The fill passed `[context] compact_at`.
    Auto,
    /// `/compact`.
    Command,
    /// The server answered "too long".
    Overflow,
    #[serde(other)]
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Origin {
    New,
    CompactedFrom {
        segment_id: SegmentId,
    },
    /// A fork's first segment: another pod's history up to one entry (docs/storage.md §Fork
    /// and rewind). `pod` and `seq` are absent in logs written before forks recorded them.
    ForkedFrom {
        segment_id: SegmentId,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pod: Option<crate::ids::PodName>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        seq: Option<EntrySeq>,
    },
    /// The pod went back to an earlier point of its own history: segment `segment_id` up to
    /// and including entry `seq`. That segment stays on disk, unchanged and browsable.
    RewoundFrom {
        segment_id: SegmentId,
        seq: EntrySeq,
    },
    ClearedFrom {
        segment_id: SegmentId,
    },
    /// The same conversation under the compact prompt: the server refused a request as too
    /// long for a window learned only then (docs/agent-loop.md §The system prompt's share).
    RecomposedFrom {
        segment_id: SegmentId,
    },
    #[serde(other)]
    Unknown,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProviderKind {
    /// Deterministic test and demo double that plays a JSON-lines script.
    Scripted,
    Anthropic,
    Openai,
    /// OpenAI's Responses API (`/v1/responses`), with reasoning items kept in the log.
    #[serde(rename = "openai-responses")]
    OpenaiResponses,
    #[serde(other)]
    Unknown,
}

impl ProviderKind {
    pub fn as_str(&self) -> &'static str {
        match self {
            ProviderKind::Scripted => "scripted",
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Openai => "openai",
            ProviderKind::OpenaiResponses => "openai-responses",
            ProviderKind::Unknown => "unknown",
        }
    }
}

/// Everything about the model that shapes a request body. Recorded in the log (in
/// `segment_start`, changed by `config_changed`) rather than read from config files at request
/// time, so a restored pod sends byte-identical requests whatever the files say today.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelConfig {
    pub provider: ProviderKind,
    pub model: String,
    /// Sampling temperature; not sent unless set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Output token limit; the provider's default unless set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// The Responses API's own options (`openai-responses` only); absent when all default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub responses: Option<crate::reasoning::ResponsesOptions>,
}

impl ModelConfig {
    /// A model with the provider's default sampling.
    pub fn new(provider: ProviderKind, model: impl Into<String>) -> ModelConfig {
        ModelConfig {
            provider,
            model: model.into(),
            temperature: None,
            max_tokens: None,
            responses: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON schema of the arguments. `serde_json` maps are sorted, so this serialises
    /// deterministically.
    pub parameters: serde_json::Value,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunTrigger {
    User,
    Notification,
    PodEvent,
    /// Input from the pod's parent (`delegate`): the run's end is reported to the parent.
    Parent,
    #[serde(other)]
    Unknown,
}

/// What a model answers when a turn started by a notification or a child's report needs no
/// answer (docs/agent-loop.md §Silent answers). The text is committed like any answer (replay
/// stays exact); clients show such a turn as noted instead of as an answer.
pub const NO_REPLY: &str = "NO_REPLY";

impl RunTrigger {
    /// Whether a run started this way may end silently: a notification or a child's report.
    /// A person's own turn, or a parent's, is never silent.
    pub fn may_be_silent(self) -> bool {
        match self {
            RunTrigger::Notification | RunTrigger::PodEvent => true,
            RunTrigger::User | RunTrigger::Parent | RunTrigger::Unknown => false,
        }
    }
}

/// Whether `text` is the model choosing not to answer.
pub fn is_no_reply(text: &str) -> bool {
    text.trim() == NO_REPLY
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    Stop,
    ToolUse,
    Length,
    ContentFilter,
    #[serde(other)]
    Unknown,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunEndReason {
    /// The model answered without calling more tools.
    Completed,
    /// The iteration cap was reached.
    LimitReached,
    /// `cancel` stopped it.
    Cancelled,
    /// A paused run was dropped because new input arrived.
    Abandoned,
    /// The provider failed; `message` says how.
    Error,
    /// A loop brake stopped a run that kept failing or repeating itself; `message` says which.
    NoProgress,
    #[serde(other)]
    Unknown,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    #[serde(default)]
    pub cache_read_tokens: u64,
    #[serde(default)]
    pub cache_creation_tokens: u64,
}

impl Usage {
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_creation_tokens += other.cache_creation_tokens;
    }
}

/// A request received durably but not yet committed to history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum QueuedItem {
    Run {
        segments: Vec<Segment>,
    },
    Notify {
        message: String,
        wake: bool,
    },
    PodEvent {
        event: PodEvent,
        wake: bool,
    },
    /// Input from the pod's parent, queued behind a running turn.
    Delegated {
        segments: Vec<Segment>,
    },
    #[serde(other)]
    Unknown,
}

impl QueuedItem {
    /// An input that starts a run (as opposed to a notification or a pod event).
    pub fn is_input(&self) -> bool {
        matches!(self, QueuedItem::Run { .. } | QueuedItem::Delegated { .. })
    }
}

/// A tool call waiting for approval, with what a person needs to decide.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "RequestWire", into = "RequestWire")]
pub struct ApprovalRequest {
    pub call_id: CallId,
    pub tool: String,
    /// The model's raw arguments, as in the tool call.
    pub arguments: String,
    /// One line for prompts and lists, e.g. `shell: cargo test`.
    pub summary: String,
    /// What an `approve_always` answer would cover beyond the tool: for `shell`, the narrowest
    /// rule that covers this command (`git status …`, or the exact command). `None` means the
    /// whole tool, except for `shell`, where it means "always" cannot be offered (the command is
    /// not one a rule may cover) and the answer counts as a single approval.
    pub always: Option<CommandRule>,
    /// For a `write_file` that would replace an existing file: what it holds now, so a person
    /// sees the change as a diff. Read by the pod when it asks (through the scope), bounded.
    pub replaces: Option<Replaces>,
}

/// The current content of a file a write would replace, as the approval shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Replaces {
    /// The whole current text.
    Text { content: String },
    /// Not shown (too large, binary, unreadable), and why.
    Unshown { why: String },
    #[serde(other)]
    Unknown,
}

#[derive(Serialize, Deserialize)]
struct RequestWire {
    call_id: CallId,
    tool: String,
    arguments: String,
    summary: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    prefix: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    exact: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    replaces: Option<Replaces>,
}

impl From<RequestWire> for ApprovalRequest {
    fn from(wire: RequestWire) -> ApprovalRequest {
        ApprovalRequest {
            call_id: wire.call_id,
            tool: wire.tool,
            arguments: wire.arguments,
            summary: wire.summary,
            always: RuleWire {
                prefix: wire.prefix,
                exact: wire.exact,
            }
            .into_rule(),
            replaces: wire.replaces,
        }
    }
}

impl From<ApprovalRequest> for RequestWire {
    fn from(request: ApprovalRequest) -> RequestWire {
        let RuleWire { prefix, exact } = RuleWire::from_rule(request.always);
        RequestWire {
            call_id: request.call_id,
            tool: request.tool,
            arguments: request.arguments,
            summary: request.summary,
            prefix,
            exact,
            replaces: request.replaces,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ApprovalDecision {
    /// Run this call.
    Approve,
    /// Run this call and, for the rest of this pod's life, every call it stands for.
    ApproveAlways(StandingApproval),
    /// Do not run it; the model gets an error result carrying `reason`.
    Deny { reason: String },
    #[serde(other)]
    Unknown,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DequeueReason {
    Cancelled,
    /// A duplicate pod event (same event id) already committed.
    Duplicate,
    #[serde(other)]
    Unknown,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::SegmentId;

    fn entry(kind: EntryKind) -> Entry {
        Entry {
            v: ENTRY_VERSION,
            seq: EntrySeq::new(7),
            ts: 1_700_000_000_000,
            kind,
        }
    }

    #[test]
    fn golden_user_input_line() {
        let e = entry(EntryKind::UserInput {
            segments: vec![Segment::text("hi")],
            text: "hi".into(),
            queue_id: None,
        });
        assert_eq!(
            serde_json::to_string(&e).unwrap(),
            r#"{"v":1,"seq":7,"ts":1700000000000,"kind":"user_input","segments":[{"type":"text","text":"hi"}],"text":"hi"}"#
        );
    }

    #[test]
    fn every_kind_round_trips() {
        let kinds = vec![
            EntryKind::SegmentStart(SegmentStart {
                date: None,
                segment_id: SegmentId::new("s1"),
                system_prompt: "be good".into(),
                model: ModelConfig::new(ProviderKind::Scripted, "script"),
                tools: vec![ToolSpec {
                    name: "echo".into(),
                    description: "echo".into(),
                    parameters: serde_json::json!({"type":"object","properties":{"b":{},"a":{}}}),
                }],
                seed: vec![ModelItem::UserMessage { text: "x".into() }],
                standing_approvals: Vec::new(),
                origin: Origin::CompactedFrom {
                    segment_id: SegmentId::new("s0"),
                },
                context_window: Some(ContextWindow {
                    tokens: 16_000,
                    source: WindowSource::Learned,
                }),
                compaction: Some(Compaction {
                    summary: "we did x".into(),
                    compacted_items: 40,
                    kept_items: 3,
                    tokens_before: 12_000,
                    tokens_after: 900,
                    trigger: CompactionTrigger::Overflow,
                    focus: Some("the parser".into()),
                    memory_flush: vec!["write_file AGENTS.md".into()],
                }),
                tasks: Vec::new(),
                totals: None,
            }),
            EntryKind::ContextWindow(ContextWindow {
                tokens: 8192,
                source: WindowSource::Server,
            }),
            EntryKind::ContextPruned {
                trims: vec![ToolResultTrim {
                    index: 4,
                    call_id: CallId::new("c"),
                    mode: TrimMode::Soft,
                    content: "head … tail".into(),
                }],
            },
            EntryKind::RunStart {
                trigger: RunTrigger::Notification,
            },
            EntryKind::Notice {
                level: crate::message::AlertLevel::Warn,
                message: "the pod stopped in the middle of a turn".into(),
            },
            EntryKind::AssistantItem {
                item: ModelItem::Reasoning {
                    text: "t".into(),
                    signature: Some("sig".into()),
                    responses: None,
                },
            },
            EntryKind::ToolResult {
                call_id: CallId::new("c"),
                name: "echo".into(),
                content: "out".into(),
                is_error: true,
                meta: ToolMeta::default(),
            },
            EntryKind::ToolResult {
                call_id: CallId::new("d"),
                name: "shell".into(),
                content: "exit code 124".into(),
                is_error: true,
                meta: ToolMeta {
                    exit_code: Some(124),
                    timed_out: true,
                    duration_ms: Some(1_000),
                    ..ToolMeta::default()
                },
            },
            EntryKind::SystemItem {
                item: SystemItem::Interrupt { body: "b".into() },
                queue_id: Some(QueueId::new(3)),
            },
            EntryKind::TurnEnd {
                iteration: 2,
                finish: FinishReason::ToolUse,
            },
            EntryKind::RunEnd {
                reason: RunEndReason::Error,
                message: Some("boom".into()),
            },
            EntryKind::Usage(Usage {
                input_tokens: 1,
                output_tokens: 2,
                cache_read_tokens: 3,
                cache_creation_tokens: 4,
            }),
            EntryKind::ConfigChanged {
                model: ModelConfig::new(ProviderKind::Openai, "gpt"),
            },
            EntryKind::Queued {
                queue_id: QueueId::new(4),
                item: QueuedItem::Notify {
                    message: "m".into(),
                    wake: false,
                },
            },
            EntryKind::Dequeued {
                queue_id: QueueId::new(4),
                reason: DequeueReason::Cancelled,
            },
            EntryKind::ApprovalRequest(ApprovalRequest {
                call_id: CallId::new("c"),
                tool: "shell".into(),
                arguments: r#"{"command":"cargo test"}"#.into(),
                summary: "shell: cargo test".into(),
                always: Some(CommandRule::Prefix(vec!["cargo".into(), "test".into()])),
                replaces: None,
            }),
            EntryKind::ApprovalAnswer {
                call_id: CallId::new("c"),
                decision: ApprovalDecision::ApproveAlways(StandingApproval {
                    tool: "shell".into(),
                    rule: Some(CommandRule::Exact(vec!["cargo".into(), "t x".into()])),
                }),
            },
            EntryKind::ApprovalAnswer {
                call_id: CallId::new("c"),
                decision: ApprovalDecision::Deny {
                    reason: "not now".into(),
                },
            },
            EntryKind::ApprovalStanding {
                call_id: CallId::new("c"),
                standing: StandingApproval {
                    tool: "shell".into(),
                    rule: Some(CommandRule::Prefix(vec!["git".into(), "status".into()])),
                },
            },
        ];
        for kind in kinds {
            let e = entry(kind);
            let json = serde_json::to_string(&e).unwrap();
            let back: Entry = serde_json::from_str(&json).unwrap();
            assert_eq!(back, e, "{json}");
            assert_eq!(serde_json::to_string(&back).unwrap(), json);
        }
    }

    #[test]
    fn golden_approval_answer_line() {
        let e = entry(EntryKind::ApprovalAnswer {
            call_id: CallId::new("c1"),
            decision: ApprovalDecision::Deny {
                reason: "no".into(),
            },
        });
        assert_eq!(
            serde_json::to_string(&e).unwrap(),
            r#"{"v":1,"seq":7,"ts":1700000000000,"kind":"approval_answer","call_id":"c1","decision":{"type":"deny","reason":"no"}}"#
        );
    }

    #[test]
    fn golden_tool_result_lines_with_and_without_metadata() {
        let plain = entry(EntryKind::ToolResult {
            call_id: CallId::new("c1"),
            name: "read_file".into(),
            content: "x".into(),
            is_error: false,
            meta: ToolMeta::default(),
        });
        let line = r#"{"v":1,"seq":7,"ts":1700000000000,"kind":"tool_result","call_id":"c1","name":"read_file","content":"x","is_error":false}"#;
        assert_eq!(
            serde_json::to_string(&plain).unwrap(),
            line,
            "older lines unchanged"
        );
        assert_eq!(serde_json::from_str::<Entry>(line).unwrap(), plain);
        let failed = entry(EntryKind::ToolResult {
            call_id: CallId::new("c2"),
            name: "shell".into(),
            content: "exit code 2".into(),
            is_error: true,
            meta: ToolMeta {
                exit_code: Some(2),
                duration_ms: Some(15),
                ..ToolMeta::default()
            },
        });
        assert_eq!(
            serde_json::to_string(&failed).unwrap(),
            r#"{"v":1,"seq":7,"ts":1700000000000,"kind":"tool_result","call_id":"c2","name":"shell","content":"exit code 2","is_error":true,"meta":{"exit_code":2,"duration_ms":15}}"#
        );
    }

    #[test]
    fn unknown_entry_kind_decodes_to_unknown() {
        let e: Entry =
            serde_json::from_str(r#"{"v":1,"seq":0,"ts":0,"kind":"teleport","x":1}"#).unwrap();
        assert_eq!(e.kind, EntryKind::Unknown);
    }
}
