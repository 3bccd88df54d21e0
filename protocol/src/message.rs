//! Client ⇄ pod messages (DESIGN §4). Client frames are requests tagged by `method` with an
//! optional `id`; pod frames are tagged by `type`. Broadcast events carry a `seq` that increases
//! by one per event for the life of the pod process (`welcome.instance` names that life).

use serde::{Deserialize, Serialize};

use crate::approval::StandingApproval;
use crate::completion::{Completion, CompletionKind};
use crate::entry::{Entry, QueuedItem, Usage, WindowSource};
use crate::ids::{CallId, EntrySeq, EventSeq, InstanceId, PodName, QueueId, RequestId, SegmentId};
use crate::pod_event::PodEvent;
use crate::segment::Segment;

/// The protocol version this binary speaks. Bump on any incompatible change.
pub const PROTOCOL_VERSION: u32 = 1;

/// A client frame: `{"id":1,"method":"notify","message":"hi"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<RequestId>,
    #[serde(flatten)]
    pub method: Method,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "method", rename_all = "snake_case")]
pub enum Method {
    /// Must be the first frame on a connection.
    Hello {
        protocol: u32,
        client: String,
        mode: ClientMode,
    },
    Run {
        segments: Vec<Segment>,
    },
    Notify {
        message: String,
        #[serde(default = "default_true")]
        wake: bool,
    },
    PodEvent {
        event: PodEvent,
        #[serde(default = "default_true")]
        wake: bool,
    },
    Pause,
    Resume,
    Cancel,
    Shutdown,
    /// Start (or restart) receiving events. With `since_seq` the pod replays what it still holds
    /// after that seq; otherwise, or when it no longer holds them, it sends a full snapshot.
    Subscribe {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        since_seq: Option<EventSeq>,
    },
    GetHistory,
    GetContext,
    Status,
    /// Suggestions for the composer (`@file`, `/command`, `/workflow`, `#knowledge`): answered
    /// with `completions`. Bounded by the pod; `prefix` is what follows the sigil.
    ListCompletions {
        kind: CompletionKind,
        #[serde(default)]
        prefix: String,
    },
    /// Withdraw a queued input (`queued` event's `queue_id`) before it is sent to the model:
    /// committed as a `dequeued` entry with reason `cancelled`. Only inputs (`run` items) can
    /// be withdrawn; an acknowledged notification always reaches the model.
    CancelQueued {
        queue_id: QueueId,
    },
    /// Answer a pending `approval_request`: the one for `call_id`, or the oldest pending one.
    /// Acknowledged once the `approval_answer` entry is durable.
    Approve {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        call_id: Option<CallId>,
        answer: ApprovalAnswer,
        /// Why, for `deny`; the model reads it in the call's error result.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// A pod-side command (`/clear`, `/memory TEXT`, `/model NAME`, `/help`), answered with
    /// `command_done`. A `run` whose text starts with one of these is the same command.
    Command {
        name: PodCommand,
        #[serde(default, skip_serializing_if = "String::is_empty")]
        args: String,
    },
    /// New input from this pod's parent (DESIGN §7): handled like `run`, and the turn it
    /// starts is reported back to the parent when it ends (`turn_ended` / `errored`).
    Delegate {
        segments: Vec<Segment>,
    },
    /// Start a child pod of this pod, answered with `spawned` once the child accepts
    /// connections (its task is already in its log by then).
    Spawn(SpawnRequest),
    /// From a parent pod that came back: deliver any undelivered reports now rather than at
    /// the next retry.
    DeliverReports,
    /// Page back through the log for display: the committed entries of `segment_id` before
    /// `before_seq`, newest last, bounded in size. At the start of a segment (`before_seq` 0)
    /// the answer is the end of the segment before it. Answered with `earlier`.
    Earlier {
        segment_id: SegmentId,
        before_seq: EntrySeq,
    },
    /// The standing approvals in force, answered with `approvals`.
    ListApprovals,
    /// Withdraw standing approvals: `standing`, or every one when absent. Each is committed as
    /// an `approval_revoked` entry; answered with `approvals` (what is left) once durable, or
    /// `nothing_pending` when `standing` is not in force.
    RevokeApproval {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        standing: Option<StandingApproval>,
    },
    /// The pod's MCP servers: every one, or only `server`. Answered with `mcp_servers`.
    McpServers {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        server: Option<String>,
    },
    /// Reconnect, disable or enable one MCP server of the running pod. Answered with
    /// `mcp_servers` (every server, as they are once the action is under way).
    McpControl {
        server: String,
        action: crate::McpAction,
    },
    #[serde(other)]
    Unknown,
}

/// What a child pod is started with: its name, its first input, and what it may touch. Paths
/// are relative to the parent's working directory; each must be inside what the parent itself
/// may read (`read`) or write (`write`). No `read` means the parent's working directory; no
/// `write` means the child writes nothing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpawnRequest {
    pub name: PodName,
    pub task: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub write: Vec<String>,
    /// The child's model; the parent's when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Session instructions for the child's system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// The parent's MCP servers the child starts too: all of them when absent, none for an
    /// empty list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_servers: Option<Vec<String>>,
}

/// How a person answers an approval request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalAnswer {
    Approve,
    /// Approve, and stop asking for this tool (for `shell`: this command's first word).
    ApproveAlways,
    Deny,
    #[serde(other)]
    Unknown,
}

/// The commands the pod itself carries out, so every client (TUI, `send`, scripts) has them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PodCommand {
    /// Start a new segment: fresh history, a freshly rendered system prompt.
    Clear,
    /// Append `* TEXT` to the project's `AGENTS.md`.
    Memory,
    /// Switch the model for the next requests (`config_changed`).
    Model,
    /// List the commands.
    Help,
    /// Summarise the conversation into a new segment now (`/compact [focus]`).
    Compact,
    /// Have the model write a commit message for the repository's changes and commit them
    /// once a person approves it (`/commit [hint]`).
    Commit,
    /// List the MCP servers, their state and tools (`/mcp [server]`).
    Mcp,
    #[serde(other)]
    Unknown,
}

impl PodCommand {
    pub const ALL: [PodCommand; 7] = [
        PodCommand::Clear,
        PodCommand::Memory,
        PodCommand::Model,
        PodCommand::Help,
        PodCommand::Compact,
        PodCommand::Commit,
        PodCommand::Mcp,
    ];

    pub fn as_str(&self) -> &'static str {
        match self {
            PodCommand::Clear => "clear",
            PodCommand::Memory => "memory",
            PodCommand::Model => "model",
            PodCommand::Help => "help",
            PodCommand::Compact => "compact",
            PodCommand::Commit => "commit",
            PodCommand::Mcp => "mcp",
            PodCommand::Unknown => "unknown",
        }
    }

    pub fn from_name(name: &str) -> Option<PodCommand> {
        PodCommand::ALL.into_iter().find(|c| c.as_str() == name)
    }

    /// `/name args` at the start of `text` (after leading whitespace), if `name` is a pod
    /// command: how a typed `/clear` reaches the pod through `run`.
    pub fn parse(text: &str) -> Option<(PodCommand, String)> {
        let rest = text.trim_start().strip_prefix('/')?;
        let (name, args) = match rest.split_once(char::is_whitespace) {
            Some((name, args)) => (name, args.trim()),
            None => (rest, ""),
        };
        Some((PodCommand::from_name(name)?, args.to_string()))
    }
}

fn default_true() -> bool {
    true
}

impl Method {
    /// The method name as written on the wire.
    pub fn name(&self) -> &'static str {
        match self {
            Method::Hello { .. } => "hello",
            Method::Run { .. } => "run",
            Method::Notify { .. } => "notify",
            Method::PodEvent { .. } => "pod_event",
            Method::Pause => "pause",
            Method::Resume => "resume",
            Method::Cancel => "cancel",
            Method::Shutdown => "shutdown",
            Method::Subscribe { .. } => "subscribe",
            Method::GetHistory => "get_history",
            Method::GetContext => "get_context",
            Method::Status => "status",
            Method::ListCompletions { .. } => "list_completions",
            Method::CancelQueued { .. } => "cancel_queued",
            Method::Approve { .. } => "approve",
            Method::Command { .. } => "command",
            Method::Delegate { .. } => "delegate",
            Method::Spawn(_) => "spawn",
            Method::DeliverReports => "deliver_reports",
            Method::Earlier { .. } => "earlier",
            Method::ListApprovals => "list_approvals",
            Method::RevokeApproval { .. } => "revoke_approval",
            Method::McpServers { .. } => "mcp_servers",
            Method::McpControl { .. } => "mcp_control",
            Method::Unknown => "unknown",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClientMode {
    /// Snapshot, then live events.
    Attach,
    /// Requests only (notify, send, scripts, parent pods).
    Control,
    #[serde(other)]
    Unknown,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PodState {
    Idle,
    Running,
    Paused,
    /// A tool call waits for a person's approval (`approve`); nothing runs meanwhile.
    WaitingForApproval,
    /// The conversation is being summarised into a new segment; input is queued meanwhile.
    Compacting,
    Stopping,
    #[serde(other)]
    Unknown,
}

impl PodState {
    pub fn as_str(&self) -> &'static str {
        match self {
            PodState::Idle => "idle",
            PodState::Running => "running",
            PodState::Paused => "paused",
            PodState::WaitingForApproval => "waiting_for_approval",
            PodState::Compacting => "compacting",
            PodState::Stopping => "stopping",
            PodState::Unknown => "unknown",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// Unknown method or bad parameters.
    InvalidRequest,
    /// Not JSON, or not an object.
    MalformedFrame,
    /// A frame longer than `MAX_FRAME_BYTES`; the connection is closed.
    FrameTooLarge,
    /// A request before `hello`.
    HandshakeRequired,
    /// `pause`/`cancel` while nothing runs.
    NotRunning,
    /// `resume` while not paused.
    NotPaused,
    /// The pod is shutting down.
    Stopping,
    /// The log could not be written; nothing was acknowledged.
    StorageFailed,
    /// `approve` while no approval request is pending (or not the one named).
    NothingPending,
    /// The request is valid but not now (e.g. `/clear` while a turn runs).
    Busy,
    Internal,
    #[serde(other)]
    Unknown,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AlertLevel {
    Info,
    Warn,
    Error,
    #[serde(other)]
    Unknown,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GoodbyeReason {
    /// The pod is stopping.
    Shutdown,
    /// The client fell too far behind the event stream.
    Lagged,
    /// The client broke the protocol (oversized or undecodable frame).
    ProtocolError,
    #[serde(other)]
    Unknown,
}

/// What an `ack` acknowledges beyond "done".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AckOutcome {
    /// Applied (committed to the log when it changes history).
    Done,
    /// A run started.
    Started,
    /// Durably queued; it will be committed later.
    Queued,
    #[serde(other)]
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueEntry {
    pub queue_id: QueueId,
    pub item: QueuedItem,
}

/// A tool call as it streams, for the in-flight part of a snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct InFlightToolCall {
    pub index: u32,
    pub call_id: CallId,
    pub name: String,
    pub arguments: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PodStatus {
    pub name: PodName,
    pub state: PodState,
    pub pid: u32,
    pub cwd: String,
    pub provider: String,
    pub model: String,
    pub segment_id: SegmentId,
    pub entries: u64,
    pub queue: Vec<QueueEntry>,
    pub usage: Usage,
    pub clients: u32,
    pub server_version: String,
    /// The oldest tool call waiting for a person's answer, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_approval: Option<crate::entry::ApprovalRequest>,
    /// How full the model's context is.
    #[serde(default)]
    pub context: ContextFill,
    /// Why the pod's log cannot be written any more (a full disk, a write error): the pod is
    /// up but acknowledges nothing until restarted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_broken: Option<String>,
    /// The pod's totals over its whole life, across segments (`usage` is the active
    /// segment's alone). Absent from pods older than the field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub totals: Option<crate::entry::PodTotals>,
}

/// How full the model's context is: the tokens of the next request and the window, when known.
/// Every client shows this one figure (the pod computes it: `docs/agent-loop.md` §The fill
/// gauge), so the TUI and `seedpod ls` never disagree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ContextFill {
    pub tokens: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<WindowSource>,
    /// Where `tokens` comes from. Absent (an estimate) from pods older than the field.
    #[serde(default, skip_serializing_if = "FillBasis::is_estimate")]
    pub basis: FillBasis,
}

/// Whether a fill is the model server's own count or the pod's estimate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FillBasis {
    /// The pod's estimate of the next request: the server's count for the last request plus
    /// an estimate of what was committed since, or a whole estimate in a new segment.
    #[default]
    Estimate,
    /// Exactly the server's count of the last request's input: nothing was committed since,
    /// so the next request starts from the same tokens.
    LastRequest,
}

impl FillBasis {
    pub fn is_estimate(&self) -> bool {
        *self == FillBasis::Estimate
    }
}

impl ContextFill {
    /// Percent of the window in use (may pass 100 when the estimate overshoots).
    pub fn percent(&self) -> Option<u64> {
        let window = self.window.filter(|w| *w > 0)?;
        Some(self.tokens.saturating_mul(100) / window)
    }

    /// The share of the window as people read it: `62% of 16k` for the server's count,
    /// `~62% of 16k` for an estimate (a trailing `*` says the window was learned from a
    /// refusal); the tokens alone (`5.2k`, `~5.2k`) while the window is unknown. The TUI's
    /// gauge and `seedpod ls` both print this.
    pub fn label(&self) -> String {
        let about = if self.basis.is_estimate() { "~" } else { "" };
        match (self.window, self.percent()) {
            (Some(window), Some(percent)) => {
                let learned = if self.source == Some(WindowSource::Learned) {
                    "*"
                } else {
                    ""
                };
                format!(
                    "{about}{percent}% of {}{learned}",
                    crate::short_count(window)
                )
            }
            (Some(_), None) | (None, _) => format!("{about}{}", crate::short_count(self.tokens)),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ServerMsg {
    Welcome {
        protocol: u32,
        pod: PodName,
        server_version: String,
        state: PodState,
        /// Identifies this pod process; `seq` values are only comparable within one instance.
        instance: InstanceId,
        /// The seq of the last event published before this welcome: a control client can
        /// `subscribe {since_seq: seq}` to follow from here without a snapshot.
        seq: EventSeq,
    },
    Incompatible {
        supported: u32,
        reason: String,
    },
    Ack {
        id: RequestId,
        outcome: AckOutcome,
        /// For `queued`: the id the item will carry when it is committed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        queue_id: Option<QueueId>,
        /// The log seq of the entry this request committed (a run's `user_input`, an idle
        /// pod's notification), so the client can find its own entries in the event stream.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        entry_seq: Option<EntrySeq>,
    },
    Error {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<RequestId>,
        code: ErrorCode,
        message: String,
    },
    SnapshotBegin {
        seq: EventSeq,
        state: PodState,
        greeting: String,
        segment_id: SegmentId,
        entries: u64,
        #[serde(default)]
        context: ContextFill,
        /// `[input] max_message_chars`: a client can say before sending that a paste is over
        /// it (the pod sends such a paste as its head and tail, readable whole with
        /// `read_paste`). Absent from an older pod.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message_cap: Option<u64>,
    },
    /// Committed entries of the active segment, in bounded batches.
    SnapshotEntries {
        entries: Vec<Entry>,
    },
    /// What is streaming right now and not yet committed.
    InFlight {
        text: String,
        thinking: String,
        tool_calls: Vec<InFlightToolCall>,
        queue: Vec<QueueEntry>,
    },
    SnapshotEnd {
        seq: EventSeq,
    },
    Committed {
        seq: EventSeq,
        entry: Entry,
    },
    TextDelta {
        seq: EventSeq,
        text: String,
    },
    ThinkingDelta {
        seq: EventSeq,
        text: String,
    },
    ToolCallDelta {
        seq: EventSeq,
        index: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        call_id: Option<CallId>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        arguments: String,
    },
    State {
        seq: EventSeq,
        state: PodState,
    },
    /// The queue of inputs waiting to be committed changed; this is its whole new content.
    Queued {
        seq: EventSeq,
        queue: Vec<QueueEntry>,
    },
    Alert {
        seq: EventSeq,
        level: AlertLevel,
        message: String,
    },
    /// A transient notice (retry waits) for the status line; never committed.
    Status {
        seq: EventSeq,
        message: String,
    },
    /// How full the context is changed (after a response's usage, a pruning step, a new
    /// segment, a learned window).
    ContextFill {
        seq: EventSeq,
        context: ContextFill,
    },
    /// How far a running tool call is, as its MCP server last said: display state for the
    /// call's cell, never committed and never in a snapshot; at most a few a second per call,
    /// the latest winning (docs/protocol.md §Tool progress).
    ToolProgress {
        seq: EventSeq,
        call_id: CallId,
        progress: crate::progress::ToolProgress,
    },
    Goodbye {
        reason: GoodbyeReason,
        message: String,
    },
    History {
        id: RequestId,
        segment_id: SegmentId,
        entries: Vec<Entry>,
    },
    Context {
        id: RequestId,
        /// The exact JSON text of the next provider request body.
        body: String,
    },
    StatusReply {
        id: RequestId,
        status: PodStatus,
    },
    /// The answer to `list_completions`, best first. `truncated` says the pod stopped at its
    /// bound, so a longer prefix may find more.
    Completions {
        id: RequestId,
        kind: CompletionKind,
        items: Vec<Completion>,
        #[serde(default)]
        truncated: bool,
    },
    /// The answer to a pod command: what it did, for the person who typed it.
    CommandDone {
        id: RequestId,
        command: PodCommand,
        message: String,
    },
    /// The answer to `spawn`: the child runs and listens on `socket`.
    Spawned {
        id: RequestId,
        name: PodName,
        socket: String,
    },
    /// The answer to `earlier`: entries of `segment_id` (which is the one asked for, or the
    /// one before it), oldest first. `more` says there is something before the first of them.
    Earlier {
        id: RequestId,
        segment_id: SegmentId,
        entries: Vec<Entry>,
        more: bool,
    },
    /// The answer to `list_approvals` and `revoke_approval`: the standing approvals in force,
    /// oldest first.
    Approvals {
        id: RequestId,
        standing: Vec<StandingApproval>,
    },
    /// The answer to `mcp_servers`.
    McpServers {
        id: RequestId,
        servers: Vec<crate::McpServerStatus>,
    },
    #[serde(other)]
    Unknown,
}

impl ServerMsg {
    /// The broadcast `seq` if this is a live event.
    pub fn seq(&self) -> Option<EventSeq> {
        match self {
            ServerMsg::Committed { seq, .. }
            | ServerMsg::TextDelta { seq, .. }
            | ServerMsg::ThinkingDelta { seq, .. }
            | ServerMsg::ToolCallDelta { seq, .. }
            | ServerMsg::State { seq, .. }
            | ServerMsg::Queued { seq, .. }
            | ServerMsg::Alert { seq, .. }
            | ServerMsg::Status { seq, .. }
            | ServerMsg::ContextFill { seq, .. }
            | ServerMsg::ToolProgress { seq, .. } => Some(*seq),
            ServerMsg::Welcome { .. }
            | ServerMsg::Incompatible { .. }
            | ServerMsg::Ack { .. }
            | ServerMsg::Error { .. }
            | ServerMsg::SnapshotBegin { .. }
            | ServerMsg::SnapshotEntries { .. }
            | ServerMsg::InFlight { .. }
            | ServerMsg::SnapshotEnd { .. }
            | ServerMsg::Goodbye { .. }
            | ServerMsg::History { .. }
            | ServerMsg::Context { .. }
            | ServerMsg::StatusReply { .. }
            | ServerMsg::Completions { .. }
            | ServerMsg::CommandDone { .. }
            | ServerMsg::Spawned { .. }
            | ServerMsg::Earlier { .. }
            | ServerMsg::Approvals { .. }
            | ServerMsg::McpServers { .. }
            | ServerMsg::Unknown => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::{Entry, EntryKind, RunTrigger};
    use crate::ids::{InstanceId, ReportId, RequestId, SegmentId};

    fn round_trip<T>(value: &T)
    where
        T: Serialize + for<'de> Deserialize<'de> + PartialEq + std::fmt::Debug,
    {
        let json = serde_json::to_string(value).unwrap();
        let back: T = serde_json::from_str(&json).unwrap();
        assert_eq!(&back, value, "{json}");
    }

    fn fill(tokens: u64, window: Option<u64>, source: Option<WindowSource>) -> ContextFill {
        ContextFill {
            tokens,
            window,
            source,
            basis: FillBasis::Estimate,
        }
    }

    #[test]
    fn the_fill_label_says_the_share_and_whether_it_is_an_estimate() {
        let config = Some(WindowSource::Config);
        assert_eq!(fill(9_920, Some(16_000), config).label(), "~62% of 16k");
        let counted = ContextFill {
            basis: FillBasis::LastRequest,
            ..fill(9_920, Some(16_000), config)
        };
        assert_eq!(counted.label(), "62% of 16k");
        assert_eq!(
            fill(9_920, Some(16_000), Some(WindowSource::Learned)).label(),
            "~62% of 16k*"
        );
        assert_eq!(fill(5_200, None, None).label(), "~5.2k");
        assert_eq!(fill(700, Some(0), config).label(), "~700");
        assert_eq!(fill(20_000, Some(16_000), config).label(), "~125% of 16k");
    }

    #[test]
    fn an_estimated_fill_encodes_as_before_and_an_old_one_reads_as_an_estimate() {
        let old = r#"{"tokens":5,"window":16000,"source":"config"}"#;
        let read: ContextFill = serde_json::from_str(old).unwrap();
        assert_eq!(read.basis, FillBasis::Estimate);
        assert_eq!(serde_json::to_string(&read).unwrap(), old);
        let counted = ContextFill {
            basis: FillBasis::LastRequest,
            ..read
        };
        let text = serde_json::to_string(&counted).unwrap();
        assert!(text.ends_with(r#","basis":"last_request"}"#), "{text}");
        round_trip(&counted);
    }

    #[test]
    fn every_method_round_trips() {
        let methods = vec![
            Method::Hello {
                protocol: 1,
                client: "c".into(),
                mode: ClientMode::Attach,
            },
            Method::Run {
                segments: vec![Segment::text("x")],
            },
            Method::Notify {
                message: "m".into(),
                wake: false,
            },
            Method::PodEvent {
                event: PodEvent::ShutDown {
                    pod: "c".into(),
                    event_id: ReportId::new("e"),
                },
                wake: true,
            },
            Method::Pause,
            Method::Resume,
            Method::Cancel,
            Method::Shutdown,
            Method::Subscribe {
                since_seq: Some(EventSeq::new(3)),
            },
            Method::Subscribe { since_seq: None },
            Method::GetHistory,
            Method::GetContext,
            Method::Status,
            Method::ListCompletions {
                kind: CompletionKind::File,
                prefix: "src/".into(),
            },
            Method::CancelQueued {
                queue_id: QueueId::new(4),
            },
            Method::ListApprovals,
            Method::RevokeApproval { standing: None },
            Method::RevokeApproval {
                standing: Some(StandingApproval {
                    tool: "shell".into(),
                    rule: Some(crate::approval::CommandRule::Prefix(vec!["git".into()])),
                }),
            },
            Method::Approve {
                call_id: Some(CallId::new("c1")),
                answer: ApprovalAnswer::Deny,
                reason: Some("not on main".into()),
            },
            Method::Approve {
                call_id: None,
                answer: ApprovalAnswer::ApproveAlways,
                reason: None,
            },
            Method::Command {
                name: PodCommand::Model,
                args: "gpt-5".into(),
            },
            Method::Command {
                name: PodCommand::Compact,
                args: "the parser".into(),
            },
            Method::Earlier {
                segment_id: SegmentId::new("s"),
                before_seq: EntrySeq::new(0),
            },
            Method::McpControl {
                server: "t".into(),
                action: crate::McpAction::Reconnect,
            },
        ];
        for method in methods {
            assert_ne!(method.name(), "unknown");
            round_trip(&Request {
                id: Some(RequestId::new(9)),
                method,
            });
        }
    }

    #[test]
    fn pod_commands_parse_from_typed_text() {
        assert_eq!(
            PodCommand::parse("  /model gpt-5  "),
            Some((PodCommand::Model, "gpt-5".to_string()))
        );
        assert_eq!(
            PodCommand::parse("/clear"),
            Some((PodCommand::Clear, String::new()))
        );
        assert_eq!(
            PodCommand::parse("/memory use tabs\nalways"),
            Some((PodCommand::Memory, "use tabs\nalways".to_string()))
        );
        assert_eq!(PodCommand::parse("/deploy now"), None);
        assert_eq!(PodCommand::parse("clear"), None);
        assert_eq!(PodCommand::parse("/clearly"), None);
    }

    #[test]
    fn every_server_message_round_trips() {
        let entry = Entry {
            v: 1,
            seq: EntrySeq::new(0),
            ts: 1,
            kind: EntryKind::RunStart {
                trigger: RunTrigger::User,
            },
        };
        let queue = vec![QueueEntry {
            queue_id: QueueId::new(1),
            item: QueuedItem::Notify {
                message: "n".into(),
                wake: true,
            },
        }];
        let msgs = vec![
            ServerMsg::Welcome {
                protocol: 1,
                pod: "p".parse().unwrap(),
                server_version: "0.1.0".into(),
                state: PodState::Idle,
                instance: InstanceId::new("i"),
                seq: EventSeq::new(4),
            },
            ServerMsg::Incompatible {
                supported: 1,
                reason: "r".into(),
            },
            ServerMsg::Ack {
                id: RequestId::new(1),
                outcome: AckOutcome::Queued,
                queue_id: Some(QueueId::new(2)),
                entry_seq: Some(EntrySeq::new(3)),
            },
            ServerMsg::Error {
                id: None,
                code: ErrorCode::FrameTooLarge,
                message: "m".into(),
            },
            ServerMsg::SnapshotBegin {
                seq: EventSeq::new(1),
                state: PodState::Paused,
                greeting: "g".into(),
                segment_id: SegmentId::new("s"),
                entries: 1,
                context: ContextFill {
                    tokens: 900,
                    window: Some(16_000),
                    source: Some(WindowSource::Config),
                    basis: FillBasis::LastRequest,
                },
                message_cap: None,
            },
            ServerMsg::SnapshotEntries {
                entries: vec![entry.clone()],
            },
            ServerMsg::InFlight {
                text: "t".into(),
                thinking: "h".into(),
                tool_calls: vec![InFlightToolCall {
                    index: 0,
                    call_id: CallId::new("c"),
                    name: "n".into(),
                    arguments: "{".into(),
                }],
                queue: queue.clone(),
            },
            ServerMsg::SnapshotEnd {
                seq: EventSeq::new(1),
            },
            ServerMsg::CommandDone {
                id: RequestId::new(3),
                command: PodCommand::Clear,
                message: "new segment".into(),
            },
            ServerMsg::Committed {
                seq: EventSeq::new(2),
                entry,
            },
            ServerMsg::TextDelta {
                seq: EventSeq::new(3),
                text: "a".into(),
            },
            ServerMsg::ThinkingDelta {
                seq: EventSeq::new(4),
                text: "b".into(),
            },
            ServerMsg::ToolCallDelta {
                seq: EventSeq::new(5),
                index: 0,
                call_id: None,
                name: None,
                arguments: "x".into(),
            },
            ServerMsg::State {
                seq: EventSeq::new(6),
                state: PodState::Running,
            },
            ServerMsg::Queued {
                seq: EventSeq::new(7),
                queue,
            },
            ServerMsg::Alert {
                seq: EventSeq::new(8),
                level: AlertLevel::Error,
                message: "m".into(),
            },
            ServerMsg::Status {
                seq: EventSeq::new(9),
                message: "retrying".into(),
            },
            ServerMsg::Goodbye {
                reason: GoodbyeReason::Lagged,
                message: "m".into(),
            },
            ServerMsg::History {
                id: RequestId::new(1),
                segment_id: SegmentId::new("s"),
                entries: vec![],
            },
            ServerMsg::Context {
                id: RequestId::new(1),
                body: "{}".into(),
            },
            ServerMsg::StatusReply {
                id: RequestId::new(1),
                status: PodStatus {
                    name: "p".parse().unwrap(),
                    state: PodState::Idle,
                    pid: 1,
                    cwd: "/".into(),
                    provider: "scripted".into(),
                    model: "m".into(),
                    segment_id: SegmentId::new("s"),
                    entries: 1,
                    queue: vec![],
                    usage: Usage::default(),
                    clients: 0,
                    server_version: "0.1.0".into(),
                    pending_approval: None,
                    context: ContextFill::default(),
                    log_broken: None,
                    totals: None,
                },
            },
            ServerMsg::Approvals {
                id: RequestId::new(3),
                standing: vec![StandingApproval {
                    tool: "edit_file".into(),
                    rule: None,
                }],
            },
            ServerMsg::ContextFill {
                seq: EventSeq::new(10),
                context: ContextFill {
                    tokens: 12,
                    window: None,
                    source: None,
                    basis: FillBasis::Estimate,
                },
            },
            ServerMsg::Earlier {
                id: RequestId::new(2),
                segment_id: SegmentId::new("s0"),
                entries: vec![],
                more: true,
            },
            ServerMsg::ToolProgress {
                seq: EventSeq::new(11),
                call_id: CallId::new("c1"),
                progress: crate::progress::ToolProgress {
                    progress: 3.0,
                    total: Some(10.0),
                    message: Some("indexing".into()),
                },
            },
            ServerMsg::Completions {
                id: RequestId::new(1),
                kind: CompletionKind::Knowledge,
                items: vec![Completion::new("style", "how we write")],
                truncated: true,
            },
        ];
        for msg in msgs {
            round_trip(&msg);
        }
    }

    #[test]
    fn unknown_server_type_decodes_to_unknown() {
        let msg: ServerMsg = serde_json::from_str(r#"{"type":"hologram","seq":1}"#).unwrap();
        assert_eq!(msg, ServerMsg::Unknown);
        assert_eq!(msg.seq(), None);
    }
}
