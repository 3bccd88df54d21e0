//! seedpod's wire and log vocabulary.
//!
//! Owns: the client ⇄ pod messages (`Request`/`Method`, `ServerMsg`), the log entry types that
//! are also the payload of `committed` events (`Entry`), the typed pieces inside them (`Segment`,
//! `SystemItem`, `PodEvent`, `ModelItem`), the NDJSON framing (frame limit, long messages in parts), the
//! handshake version check, and the shape of a tool's declaration (`tool_decl.rs`: the one
//! place a tool's name, default policy, notes and summary are stated, read by every crate).
//!
//! Must not own: I/O, sockets, files, or any behaviour beyond pure encode/decode/render helpers.
//! Everything here is plain data so that every other crate, and scripts, can agree on it.
//!
//! Start reading at `message.rs` (what goes over the socket), then `entry.rs` (what goes to disk).

pub mod approval;
pub mod checkpoint;
pub mod codec;
pub mod completion;
pub mod entry;
pub mod frames;
pub mod handshake;
pub mod ids;
pub mod item;
pub mod mcp;
pub mod message;
pub mod numbers;
pub mod pod_event;
pub mod printable;
pub mod progress;
pub mod reasoning;
pub mod segment;
pub mod system_item;
pub mod tasks;
pub mod text;
pub mod tool_decl;
pub mod tool_meta;

pub use approval::{CommandRule, StandingApproval, quote_word, quote_words};
pub use checkpoint::{Before, FileCheckpoint};
pub use codec::{FrameError, decode_request, encode};
pub use completion::{Completion, CompletionKind, SLASH_COMMANDS};
pub use entry::{
    ApprovalDecision, ApprovalRequest, Compaction, CompactionTrigger, ContextWindow, DequeueReason,
    ENTRY_VERSION, Entry, EntryKind, FinishReason, ModelConfig, NO_REPLY, Origin, PodTotals,
    ProviderKind, QueuedItem, Replaces, RunEndReason, RunTrigger, SegmentStart, ToolResultTrim,
    ToolSpec, TrimMode, Usage, WindowSource, is_no_reply,
};
pub use frames::{FrameCodec, FramesError, MAX_FRAME_BYTES, MAX_MESSAGE_BYTES};
pub use ids::{
    CallId, EntrySeq, EventSeq, InstanceId, MAX_NAME_CHARS, NameError, PodName, QueueId, ReportId,
    RequestId, SegmentId,
};
pub use item::{ModelItem, ToolImage, unanswered_tool_calls};
pub use mcp::{McpAction, McpServerStatus, McpState};
pub use message::{
    AckOutcome, AlertLevel, ApprovalAnswer, ClientMode, ContextFill, ErrorCode, FillBasis,
    GoodbyeReason, InFlightToolCall, Method, PROTOCOL_VERSION, PodCommand, PodState, PodStatus,
    QueueEntry, Request, ServerMsg, SpawnRequest,
};
pub use numbers::{short_count, thousands};
pub use pod_event::PodEvent;
pub use printable::{printable_line, printable_text};
pub use progress::{MAX_PROGRESS_MESSAGE_CHARS, ToolProgress};
pub use reasoning::{ReasoningEffort, ReasoningSummary, ResponsesOptions, ResponsesReasoning};
pub use segment::{Segment, flatten_to_text, parse_typed};
pub use system_item::SystemItem;
pub use tasks::{ReminderSource, Task, TaskStatus, TaskTracker};
pub use text::{char_prefix, ellipsize};
pub use tool_decl::{
    CallSummary, Effect, GuardScan, InFlush, InSmallPrompt, Policy, Preview, ToolDecl,
};
pub use tool_meta::{SandboxFinding, ToolAttachment, ToolMeta};
