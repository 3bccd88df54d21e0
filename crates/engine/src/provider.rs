//! The provider contract: how the engine turns committed history into a request body and a
//! request body into a stream of events.
//!
//! Building the body and sending it are two separate calls on purpose. The body is a pure function
//! of the context, so `seedpod context` can print it and replay can prove it byte-identical
//! (DESIGN §1, invariant 2) without any network involved; sending is the only impure part.

use std::time::Duration;

use futures::stream::BoxStream;
use seedpod_protocol::{
    CallId, FinishReason, ModelConfig, ModelItem, ProviderKind, ResponsesReasoning, ToolSpec, Usage,
};

/// Everything a request is built from. Borrowed from the controller's state, which owns it.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    pub model: &'a ModelConfig,
    /// Rendered once per segment and stored in the log; never re-rendered here.
    pub system_prompt: &'a str,
    pub tools: &'a [ToolSpec],
    /// Committed history, oldest first.
    pub items: &'a [ModelItem],
}

/// One thing a provider reports while a response streams in.
///
/// Deltas are provisional: the turn loop broadcasts them as they arrive and commits the assembled
/// items only once the whole response has arrived.
#[derive(Debug, Clone, PartialEq)]
pub enum ProviderEvent {
    TextDelta(String),
    ThinkingDelta(String),
    /// A piece of the opaque reasoning signature; pieces concatenate in order.
    ThinkingSignature(String),
    /// A whole Responses API reasoning item, to be sent back verbatim. The thinking deltas
    /// before it were its summary as it streamed; this replaces them.
    ReasoningItem(ResponsesReasoning),
    /// A tool call begins. `index` identifies it for the deltas that follow and orders the calls.
    ToolCallStart {
        index: u32,
        call_id: CallId,
        name: String,
    },
    /// A fragment of a call's arguments, exactly as the model streamed it.
    ToolCallDelta {
        index: u32,
        arguments: String,
    },
    /// Token counts for the response so far. Providers report running totals, so the last one
    /// received is the response's usage.
    Usage(Usage),
    Finish(FinishReason),
    /// transient notice for the status line, e.g. retry waits
    Status(String),
}

impl ProviderEvent {
    /// Whether this event is part of the answer itself (text, reasoning, tool calls), as opposed
    /// to bookkeeping (usage, finish, status). Once any output has been forwarded to clients, a
    /// failed request is not retried: the retry would stream a second copy of the answer.
    pub fn is_output(&self) -> bool {
        match self {
            ProviderEvent::TextDelta(_)
            | ProviderEvent::ThinkingDelta(_)
            | ProviderEvent::ThinkingSignature(_)
            | ProviderEvent::ReasoningItem(_)
            | ProviderEvent::ToolCallStart { .. }
            | ProviderEvent::ToolCallDelta { .. } => true,
            ProviderEvent::Usage(_) | ProviderEvent::Finish(_) | ProviderEvent::Status(_) => false,
        }
    }
}

/// Why a request failed. The split tells a retry policy whether trying again can help.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProviderError {
    /// Overload, rate limit, a dropped connection, a timeout: the same request may succeed later.
    #[error("{message}")]
    Transient {
        message: String,
        /// The HTTP status the provider answered with, when it answered with one (for the status
        /// line and the `provider_error` log event).
        status: Option<u16>,
        /// How long the provider asked us to wait (`retry-after`), when it said.
        retry_after: Option<Duration>,
    },
    /// A bad request, bad credentials, an exhausted script: retrying cannot help.
    #[error("{message}")]
    Permanent {
        message: String,
        /// The HTTP status the provider answered with, when it answered with one.
        status: Option<u16>,
    },
}

/// `message` with control characters (a server's NUL, ESC, …) escaped.
pub(crate) fn printable(message: String) -> String {
    match seedpod_protocol::printable_line(&message) {
        std::borrow::Cow::Borrowed(_) => message,
        std::borrow::Cow::Owned(escaped) => escaped,
    }
}

impl ProviderError {
    /// A transient failure that did not come with an HTTP status (connect error, timeout, a
    /// dropped stream, a scripted failure).
    /// The message is made printable: it can quote a server's bytes, and it is logged, stored
    /// in the run's end and shown.
    pub fn transient(message: impl Into<String>) -> Self {
        ProviderError::Transient {
            message: printable(message.into()),
            status: None,
            retry_after: None,
        }
    }

    /// A permanent failure that did not come with an HTTP status.
    pub fn permanent(message: impl Into<String>) -> Self {
        ProviderError::Permanent {
            message: printable(message.into()),
            status: None,
        }
    }

    /// The human-readable explanation, without the kind.
    pub fn message(&self) -> &str {
        match self {
            ProviderError::Transient { message, .. } | ProviderError::Permanent { message, .. } => {
                message
            }
        }
    }

    /// Whether the same request could succeed if sent again later.
    pub fn is_transient(&self) -> bool {
        match self {
            ProviderError::Transient { .. } => true,
            ProviderError::Permanent { .. } => false,
        }
    }

    /// The HTTP status behind this error, if the provider answered with one.
    pub fn status(&self) -> Option<u16> {
        match self {
            ProviderError::Transient { status, .. } | ProviderError::Permanent { status, .. } => {
                *status
            }
        }
    }

    /// How long the provider asked us to wait before trying again, if it said.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            ProviderError::Transient { retry_after, .. } => *retry_after,
            ProviderError::Permanent { .. } => None,
        }
    }
}

/// A response as it streams in. Ends after `Finish`, or with the first error.
pub type EventStream = BoxStream<'static, Result<ProviderEvent, ProviderError>>;

pub trait Provider: Send + Sync {
    fn kind(&self) -> ProviderKind;

    /// The exact JSON text of the request body for this context. MUST be deterministic: same
    /// context → same bytes (this is what `seedpod context` prints and what replay must reproduce
    /// byte for byte).
    fn request_body(&self, ctx: &Context<'_>) -> String;

    /// Send `body` and stream the response. Connection happens lazily inside the stream, so
    /// dropping the stream before polling it sends nothing.
    fn stream(&self, body: String) -> EventStream;

    /// The server cut a streamed answer before any of it arrived. Some servers do that for a
    /// prompt over their window, where the same request unstreamed gets the proper "too long"
    /// refusal (llama-cpp-python's server: docs/agent-loop.md §Provider failures). Ask once
    /// without streaming, for a one-token answer, and return the server's error if it gives
    /// one; `None` when the request was accepted (the cut was the network) or the provider has
    /// no such question to ask. A provider may answer from what it was told before, so that
    /// it asks once per window rather than once per turn (`window/cut_memo.rs`).
    fn diagnose_cut(
        &self,
        _body: &str,
    ) -> futures::future::BoxFuture<'static, Option<ProviderError>> {
        Box::pin(async { None })
    }

    /// The models the provider's server offers (`/model` with no name, its completions).
    fn list_models(&self) -> futures::future::BoxFuture<'static, Result<Vec<String>, String>> {
        let kind = self.kind().as_str();
        Box::pin(async move { Err(format!("the {kind} provider cannot list models")) })
    }
}

/// A request body as JSON. Every provider's body is built of strings, numbers, already-valid raw
/// JSON and `serde_json::Value`s (string-keyed maps), for which serialising cannot fail.
#[allow(
    clippy::expect_used,
    reason = "serialising these types cannot fail (see above)"
)]
pub(crate) fn body_json(request: &impl serde::Serialize) -> String {
    serde_json::to_string(request).expect("a request body always serialises")
}
