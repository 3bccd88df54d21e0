//! What the status line shows: the pod's name, state, model, tokens and queue (from frames), and
//! the connection state (set by the app, which owns the socket).

use std::time::Instant;

use seedpod_protocol::{
    AlertLevel, ApprovalRequest, ContextFill, InstanceId, PodState, QueueEntry, SegmentId,
};

/// The pod as the status line sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct PodView {
    /// From `welcome`; empty until the handshake.
    pub name: String,
    pub state: PodState,
    /// When the current run started (for "running 12s"); `None` unless running.
    pub running_since: Option<Instant>,
    /// When the pod started summarising the conversation (for "compacting 4s"); `None` unless
    /// compacting.
    pub compacting_since: Option<Instant>,
    pub provider: String,
    pub model: String,
    /// Token totals of the pod over its life: `segment_start.totals` plus the segment's own
    /// `usage` entries.
    pub tokens_in: u64,
    pub tokens_out: u64,
    /// How full the model's context is (from `snapshot_begin` and `context_fill` events); all
    /// zero from a pod that does not say.
    pub context: ContextFill,
    /// Inputs and notifications received but not yet committed, oldest first.
    pub queue: Vec<QueueEntry>,
    /// A transient provider retry notice; cleared when output arrives or the run ends.
    pub retry_notice: Option<String>,
    /// A tool call waits for a person: the pod's state says so, or a request is pending.
    pub waiting_for_approval: bool,
    /// The oldest approval request nobody has answered yet (the app's modal asks about it).
    pub pending_approval: Option<ApprovalRequest>,
    /// The last error reply, `goodbye` or `incompatible`, until the next `welcome` (a new
    /// connection) or the next run.
    pub notice: Option<Notice>,
    pub segment_id: SegmentId,
    /// The pod process (`welcome.instance`); seqs are only comparable within one instance.
    pub instance: InstanceId,
    pub server_version: String,
    /// `snapshot_begin.greeting`: one line about the pod, for a first screen.
    pub greeting: String,
    /// `snapshot_begin.message_cap`: the pod's `[input] max_message_chars`, when it says.
    pub message_cap: Option<u64>,
}

impl Default for PodView {
    fn default() -> PodView {
        PodView {
            name: String::new(),
            state: PodState::Idle,
            running_since: None,
            compacting_since: None,
            provider: String::new(),
            model: String::new(),
            tokens_in: 0,
            tokens_out: 0,
            context: ContextFill::default(),
            queue: Vec::new(),
            retry_notice: None,
            waiting_for_approval: false,
            pending_approval: None,
            notice: None,
            segment_id: SegmentId::default(),
            instance: InstanceId::default(),
            server_version: String::new(),
            greeting: String::new(),
            message_cap: None,
        }
    }
}

/// A one-line message for the status line that is not part of the transcript.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    pub level: AlertLevel,
    pub message: String,
}

/// The connection to the pod, as the app knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConnectionState {
    Connecting,
    Connected,
    Reconnecting {
        attempt: u32,
        reason: String,
    },
    /// No pod process answers (stopped or killed); it stays so until someone starts it.
    Stopped,
    /// The handshake failed on a protocol mismatch; `message` says which side is older.
    Incompatible {
        message: String,
    },
}
