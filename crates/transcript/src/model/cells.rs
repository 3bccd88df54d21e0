//! Cells: one visible block of the transcript each, in a shape the renderers can draw without
//! knowing the protocol's bookkeeping (seq numbers, queue ids, usage entries).

use seedpod_protocol::{
    AlertLevel, ApprovalRequest, CallId, Compaction, PodEvent, RunEndReason, Segment, SegmentId,
    StandingApproval, ToolProgress, Usage,
};

/// One block of the transcript.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// Stable for the life of the cell and unique within a `Transcript`; the render cache keys on
    /// it. A streaming cell keeps its id when its committed entry replaces it.
    pub id: u64,
    /// Bumped whenever `kind` or `expanded` changes, so cached layouts know they are stale.
    pub revision: u64,
    pub kind: CellKind,
    /// Whether a collapsible cell (tool call, thinking, attachment...) shows its whole body.
    pub expanded: bool,
    /// The log entry this cell was made from; `None` while it is provisional (streaming) or
    /// for what no entry holds (a live alert, the log's head).
    pub key: Option<super::CellKey>,
}

impl Cell {
    pub fn new(id: u64, kind: CellKind) -> Cell {
        Cell {
            id,
            revision: 0,
            kind,
            expanded: false,
            key: None,
        }
    }

    /// Whether `expanded` changes what this cell shows.
    pub fn is_toggleable(&self) -> bool {
        match &self.kind {
            // What was pasted shows folded under its chip.
            CellKind::UserInput { segments } => {
                segments.iter().any(|s| matches!(s, Segment::Paste { .. }))
            }
            CellKind::Thinking { .. }
            | CellKind::ToolCall { .. }
            | CellKind::FileAttachment { .. }
            | CellKind::Knowledge { .. }
            | CellKind::Workflow { .. }
            | CellKind::TaskReminder { .. }
            | CellKind::Interrupt { .. }
            | CellKind::Approval { .. }
            | CellKind::Compaction { .. } => true,
            CellKind::SegmentStart { .. }
            | CellKind::AssistantText { .. }
            | CellKind::Noted
            | CellKind::Notification { .. }
            | CellKind::PodEvent { .. }
            | CellKind::Alert { .. }
            | CellKind::RunEnd { .. }
            | CellKind::ModelChanged { .. }
            | CellKind::DateChanged { .. }
            | CellKind::ContextPruned { .. }
            | CellKind::WindowLearned { .. }
            | CellKind::ApprovalRevoked { .. }
            | CellKind::StandingAllowed { .. }
            | CellKind::LogHead { .. }
            | CellKind::Unknown { .. } => false,
        }
    }

    /// Record a change so caches re-layout this cell.
    pub(crate) fn touch(&mut self) {
        self.revision += 1;
    }
}

/// Where a segment came from, for its separator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SegmentOrigin {
    /// The pod's first segment.
    New,
    /// A compaction summary seeds it; the older segment holds the full history.
    CompactedFrom(SegmentId),
    ForkedFrom(SegmentId),
    /// `/clear`: history starts afresh here; the older segment stays in the log.
    ClearedFrom(SegmentId),
    /// The same conversation under the compact prompt, for a small window learned late.
    RecomposedFrom(SegmentId),
    /// A rewind: the history of an earlier point of that segment, which stays in the log.
    RewoundFrom(SegmentId),
    /// An origin written by a newer seedpod.
    Unknown,
}

/// The top of the transcript when the pod's log holds more than what is loaded: what paging
/// back (`earlier`) has to say there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogHead {
    /// Something earlier is in the log; scrolling to the top loads it.
    More,
    /// A page of earlier entries was asked for and has not arrived yet.
    Loading,
    /// Nothing lies before the first cell: this is where the pod began.
    Beginning,
    /// As many earlier entries as this client keeps are loaded; `pod`'s older ones are in
    /// `seedpod history POD --all`.
    Capped { pod: String },
}

/// Where an approval request stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalStatus {
    /// Nobody has answered yet; the run waits.
    Waiting,
    Approved,
    /// Approved, and calls like it run without asking from now on.
    ApprovedAlways(StandingApproval),
    Denied {
        reason: String,
    },
    /// The run ended (cancelled, failed) before anyone answered.
    Closed,
    /// Answered in a way this client does not know.
    Unknown,
}

/// How a tool call is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolStatus {
    /// Streaming its arguments, or waiting for its result.
    Running,
    /// Committed, and waiting for a person's approval before it runs.
    AwaitingApproval,
    Ok,
    Error,
}

#[derive(Debug, Clone, PartialEq)]
pub enum CellKind {
    /// The first entry of a segment: which model, and where the segment came from.
    SegmentStart {
        segment_id: SegmentId,
        provider: String,
        model: String,
        origin: SegmentOrigin,
    },
    /// What the person submitted, typed segments kept so chips render as chips.
    UserInput {
        segments: Vec<Segment>,
    },
    /// Assistant prose (markdown). `streaming` while it is still the provisional block.
    AssistantText {
        text: String,
        streaming: bool,
        /// Stopped mid-answer (a pause, a cancel, the pod stopping): what was streamed stays,
        /// marked.
        interrupted: bool,
    },
    Thinking {
        text: String,
        streaming: bool,
    },
    /// A turn started by a notification or a child's report that the model chose not to
    /// answer (`NO_REPLY`): a dim line, not an answer.
    Noted,
    /// An assistant tool call paired with its later `tool_result` entry.
    ToolCall {
        call_id: CallId,
        name: String,
        /// The raw argument string the model produced (possibly partial while streaming).
        arguments: String,
        status: ToolStatus,
        output: String,
        /// From the call's commit to its result's commit, when both are known.
        duration_ms: Option<u64>,
        /// How it ended, for the header (a command's exit code, a timeout).
        outcome: Option<String>,
        /// How far it is, as its tool last said while it runs (an MCP server's progress);
        /// gone once it ends.
        progress: Option<ToolProgress>,
    },
    /// A tool call that waits (or waited) for a person's approval, with how it was answered.
    Approval {
        request: ApprovalRequest,
        status: ApprovalStatus,
    },
    /// A `notify` message; the body the model saw is not shown.
    Notification {
        message: String,
    },
    /// A child pod's report.
    PodEvent {
        event: PodEvent,
    },
    FileAttachment {
        path: String,
        body: String,
    },
    Knowledge {
        slug: String,
        body: String,
    },
    Workflow {
        slug: String,
        body: String,
    },
    TaskReminder {
        source: seedpod_protocol::ReminderSource,
        body: String,
    },
    Interrupt {
        body: String,
    },
    /// An alert from the pod (torn log, provider trouble) or a notable turn ending.
    Alert {
        level: AlertLevel,
        message: String,
    },
    /// The end of a run: a separator with how it ended, how long it took and what it cost.
    RunEnd {
        reason: RunEndReason,
        message: Option<String>,
        duration_ms: Option<u64>,
        /// The sum of the run's `usage` entries; `None` when the run's start was not seen.
        tokens: Option<Usage>,
    },
    /// `date_changed`: the model was told the day changed.
    DateChanged {
        date: String,
    },
    /// `config_changed`: the model the pod uses from here on.
    ModelChanged {
        provider: String,
        model: String,
    },
    /// A compaction: the segment that starts here is seeded with a summary of the one before.
    /// Folded, a one-line account; expanded, the summary itself.
    Compaction {
        record: Compaction,
    },
    /// A pruning step: `results` old tool results were shortened for the model (the cells
    /// above keep showing the originals).
    ContextPruned {
        results: usize,
    },
    /// The model server's context window, learned from its "too long" error.
    WindowLearned {
        tokens: u64,
    },
    /// A person withdrew a standing approval; `rule` is its display (`shell: git status …`).
    ApprovalRevoked {
        rule: String,
    },
    /// The call above ran without asking because of this standing approval (its display).
    StandingAllowed {
        rule: String,
    },
    /// The top of a transcript whose log goes further back (see [`LogHead`]).
    LogHead {
        head: LogHead,
    },
    /// Something this client does not know (an entry kind, system item or model item written by
    /// a newer seedpod): shown as a labelled raw line, never a crash.
    Unknown {
        label: String,
        raw: String,
    },
}
