//! seedpod's model side: everything between committed history and a model's answer.
//!
//! Owns:
//! - the provider contract (`provider`): a deterministic request body built from a context, and a
//!   stream of events for sending it; and the providers themselves: `anthropic` (Messages API),
//!   `openai` (Chat Completions, also for local OpenAI-compatible servers), `responses`
//!   (OpenAI's Responses API, reasoning items kept in the log) and `scripted` (the
//!   test and demo double). The real ones share `http` (client, failure classification, the
//!   streamed body as events) and `sse` (event-stream parsing);
//! - the turn loop (`turn`): request, stream, commit, run tools, repeat — driving a `RunHost`
//!   (`host`) that owns the state and the log; transient provider failures are retried there
//!   (`retry`), never after part of an answer has streamed;
//! - the tool contract and registry (`tool`), and finding tool calls left unanswered in history
//!   (`pending`);
//! - knowing a model's context window (`window`): the well-known families, asking the server,
//!   and reading the limit out of a "prompt too long" error.
//!
//! The model items themselves (`ModelItem`) live in `seedpod-protocol`, because the log stores
//! them verbatim; they are re-exported here for convenience.
//!
//! Must not own: the log, sockets and clients, or the controller's state. The loop never holds
//! history; it asks the host for each request and hands every fact back through `commit`, so that
//! history is committed before it is context (DESIGN §1).
//!
//! Start reading at `turn.rs`, then `host.rs` and `provider.rs`; for a real provider,
//! `openai.rs`, then `http.rs`.

pub mod anthropic;
pub mod brakes;
pub mod host;
mod http;
pub mod openai;
pub mod pending;
pub mod provider;
pub mod redact;
mod response;
pub mod responses;
pub mod retry;
pub mod sanitize;
pub mod scripted;
pub mod sse;
pub mod tool;
pub mod turn;
pub mod window;

#[cfg(any(test, feature = "testing"))]
pub mod testing;

pub use anthropic::{AnthropicConfig, AnthropicProvider};
pub use brakes::{BrakeLimits, CallRecord};
pub use host::{Authorization, HostError, PreparedRequest, Purpose, RunHost};
pub use http::{
    DEFAULT_CONNECT_TIMEOUT, DEFAULT_IDLE_READ_TIMEOUT, ProviderSetupError, http_client_builder,
    is_local_server, without_trust_roots,
};
pub use openai::{OpenAiConfig, OpenAiProvider};
pub use pending::{PendingCall, unanswered_tool_calls};
pub use provider::{Context, EventStream, Provider, ProviderError, ProviderEvent};
pub use responses::{ResponsesConfig, ResponsesProvider};
pub use retry::{DEFAULT_RETRYABLE_STATUSES, RetryPolicy, RetryStatuses};
pub use scripted::{
    ScriptError, ScriptStep, ScriptToolCall, ScriptedErrorKind, ScriptedFailure, ScriptedProvider,
};
pub use seedpod_protocol::ModelItem;
pub use tool::{Tool, ToolFailure, ToolOutput, ToolRegistry};
pub use turn::{
    DEFAULT_MAX_ITERATIONS, MAX_REFUSAL_RECOVERIES, RunLimits, RunOutcome, drive_run,
    drive_run_with_retry, summarize,
};
pub use window::{DEFAULT_PROBE_TIMEOUT, Overflow, family_window, overflow_of, probe_window};
