//! Shared test fakes: an in-memory `RunHost` and a few tools (here), a loopback model server
//! replaying recorded SSE streams (`testing/server.rs`) and helpers for provider tests
//! (`testing/streams.rs`), and Responses API event streams to replay
//! (`testing/responses_stream.rs`). Compiled for this crate's tests and, through the `testing` feature,
//! for other crates' tests, so fakes are written once.
//!
//! `MemoryHost` folds committed entries into history the way the store's fold does for the kinds
//! the turn loop commits, and builds request bodies through the real provider, so a test sees
//! the same bodies a pod would send.

mod responses_stream;
mod server;
mod streams;

pub use self::responses_stream::ResponsesStream;
pub use self::server::{MockServer, RecordedRequest, Reply};
pub use self::streams::{
    cut, cut_after, drain, model_config, with_cr, with_crlf, with_keep_alives,
};

use std::sync::{Arc, Mutex, PoisonError};

use futures::FutureExt;
use futures::future::BoxFuture;
use seedpod_protocol::{
    CallId, EntryKind, ModelConfig, ModelItem, ProviderKind, RunTrigger, Segment, ToolSpec,
    flatten_to_text,
};
use tokio::sync::Notify;

use crate::host::{Authorization, HostError, PreparedRequest, Purpose, RunHost};
use crate::pending::{PendingCall, unanswered_tool_calls};
use crate::provider::{Context, Provider, ProviderEvent};
use crate::tool::{Tool, ToolOutput, ToolRegistry};

/// The model configuration tests use with the scripted provider.
pub fn scripted_model() -> ModelConfig {
    ModelConfig::new(ProviderKind::Scripted, "script")
}

/// A spec with a permissive object schema.
pub fn tool_spec(name: &str) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: format!("test tool {name}"),
        parameters: serde_json::json!({"type": "object"}),
    }
}

/// The log failure `MemoryHost::fail_commit` injects: a typed error of the host's own, as a
/// pod's store error is.
#[derive(Debug, thiserror::Error)]
#[error("cannot append {kind} to the log: disk full (injected)")]
pub struct InjectedLogFailure {
    /// The kind of the entry refused.
    pub kind: &'static str,
}

/// A run host over plain vectors: the log, the history folded from it, and what was broadcast.
pub struct MemoryHost {
    pub provider: Arc<dyn Provider>,
    pub model: ModelConfig,
    pub system_prompt: String,
    pub tools: Vec<ToolSpec>,
    /// Every committed entry, in order.
    pub log: Vec<EntryKind>,
    /// The model-visible history folded from `log`.
    pub history: Vec<ModelItem>,
    /// Every provisional event received.
    pub provisional: Vec<ProviderEvent>,
    /// Every request body prepared.
    pub bodies: Vec<String>,
    /// `turn_end` entries since the last `run_start`.
    pub iterations: u32,
    /// Make the commit attempt with this 0-based number fail (later attempts would succeed, so a
    /// loop that ignored the failure would show up in `log`).
    pub fail_commit: Option<usize>,
    pub commit_attempts: usize,
    /// Calls of these tools are denied by `authorize`, with the reason `denied: NAME`.
    pub deny_tools: Vec<String>,
    /// Every call id `authorize` was asked about, in order.
    pub authorized: Vec<CallId>,
}

impl MemoryHost {
    pub fn new(provider: Arc<dyn Provider>, tools: &ToolRegistry) -> Self {
        MemoryHost {
            provider,
            model: scripted_model(),
            system_prompt: "You are a test pod.".into(),
            tools: tools.specs(),
            log: Vec::new(),
            history: Vec::new(),
            provisional: Vec::new(),
            bodies: Vec::new(),
            iterations: 0,
            fail_commit: None,
            commit_attempts: 0,
            deny_tools: Vec::new(),
            authorized: Vec::new(),
        }
    }

    /// What a pod does before `drive_run`: commit `run_start` and the user's input.
    pub fn start_run(&mut self, text: &str) {
        let segments = vec![Segment::text(text)];
        let text = flatten_to_text(&segments);
        self.record(EntryKind::RunStart {
            trigger: RunTrigger::User,
        });
        self.record(EntryKind::UserInput {
            segments,
            text,
            queue_id: None,
        });
    }

    /// The body the next request would carry.
    pub fn request_body(&self) -> String {
        self.provider.request_body(&Context {
            model: &self.model,
            system_prompt: &self.system_prompt,
            tools: &self.tools,
            items: &self.history,
        })
    }

    /// Append to the log and fold into history, bypassing failure injection.
    pub fn record(&mut self, kind: EntryKind) {
        self.fold(&kind);
        self.log.push(kind);
    }

    fn fold(&mut self, kind: &EntryKind) {
        match kind {
            EntryKind::RunStart { .. } => self.iterations = 0,
            EntryKind::UserInput { text, .. } => {
                self.history
                    .push(ModelItem::UserMessage { text: text.clone() });
            }
            EntryKind::AssistantItem { item } => self.history.push(item.clone()),
            EntryKind::AssistantRaw { .. } => {}
            EntryKind::AssistantInterrupted { text } => {
                self.history
                    .push(ModelItem::AssistantText { text: text.clone() });
            }
            EntryKind::ToolResult {
                call_id,
                content,
                is_error,
                meta,
                ..
            } => self.history.push(ModelItem::ToolResult {
                call_id: call_id.clone(),
                content: content.clone(),
                is_error: *is_error,
                images: meta.images(),
            }),
            EntryKind::SystemItem { item, .. } => self.history.push(ModelItem::SystemMessage {
                text: item.history_text().to_owned(),
            }),
            EntryKind::TurnEnd { .. } => self.iterations += 1,
            EntryKind::SegmentStart(_)
            | EntryKind::RunEnd { .. }
            | EntryKind::Usage(_)
            | EntryKind::ConfigChanged { .. }
            | EntryKind::Queued { .. }
            | EntryKind::Dequeued { .. }
            | EntryKind::ApprovalRequest(_)
            | EntryKind::ApprovalAnswer { .. }
            | EntryKind::ApprovalRevoked { .. }
            | EntryKind::ApprovalStanding { .. }
            | EntryKind::Outbox { .. }
            | EntryKind::OutboxDelivered { .. }
            | EntryKind::ContextWindow(_)
            | EntryKind::ContextPruned { .. }
            | EntryKind::Notice { .. }
            | EntryKind::Unknown => {}
        }
    }
}

impl RunHost for MemoryHost {
    async fn prepare_request(&mut self) -> Result<PreparedRequest, HostError> {
        let body = self.request_body();
        self.bodies.push(body.clone());
        Ok(PreparedRequest {
            purpose: Purpose::Answer,
            body,
            unanswered: unanswered_tool_calls(&self.history),
            iteration: self.iterations,
            run_calls: crate::brakes::calls_in(&self.history),
        })
    }

    async fn provisional(&mut self, event: ProviderEvent) {
        self.provisional.push(event);
    }

    async fn commit(&mut self, kind: EntryKind) -> Result<(), HostError> {
        let attempt = self.commit_attempts;
        self.commit_attempts += 1;
        if self.fail_commit == Some(attempt) {
            return Err(HostError::log(InjectedLogFailure { kind: kind.name() }));
        }
        self.record(kind);
        Ok(())
    }

    async fn authorize(&mut self, call: &PendingCall) -> Result<Authorization, HostError> {
        self.authorized.push(call.call_id.clone());
        if self.deny_tools.contains(&call.name) {
            return Ok(Authorization::Denied {
                reason: format!("denied: {}", call.name),
            });
        }
        Ok(Authorization::Allowed)
    }
}

/// The names of tools in the order their calls finished.
pub type CompletionLog = Arc<Mutex<Vec<String>>>;

fn note_finished(log: &CompletionLog, name: &str) {
    log.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(name.to_owned());
}

/// Answers with its raw arguments.
pub struct EchoTool {
    name: String,
}

impl EchoTool {
    pub fn named(name: &str) -> Self {
        EchoTool { name: name.into() }
    }
}

impl Tool for EchoTool {
    fn spec(&self) -> ToolSpec {
        tool_spec(&self.name)
    }

    fn call(&self, arguments: String) -> BoxFuture<'static, ToolOutput> {
        async move { ToolOutput::ok(arguments) }.boxed()
    }
}

/// Finishes only after a `ReleaseTool` sharing its `Notify` has run (or the test notifies).
pub struct WaitTool {
    pub name: String,
    pub release: Arc<Notify>,
    pub finished: CompletionLog,
}

impl Tool for WaitTool {
    fn spec(&self) -> ToolSpec {
        tool_spec(&self.name)
    }

    fn call(&self, _arguments: String) -> BoxFuture<'static, ToolOutput> {
        let (name, release, finished) = (
            self.name.clone(),
            self.release.clone(),
            self.finished.clone(),
        );
        async move {
            release.notified().await;
            note_finished(&finished, &name);
            ToolOutput::ok(format!("{name} was released"))
        }
        .boxed()
    }
}

/// Releases its `WaitTool` and finishes at once. `Notify` keeps the permit if the waiter is not
/// waiting yet, so the two work in either polling order.
pub struct ReleaseTool {
    pub name: String,
    pub release: Arc<Notify>,
    pub finished: CompletionLog,
}

impl Tool for ReleaseTool {
    fn spec(&self) -> ToolSpec {
        tool_spec(&self.name)
    }

    fn call(&self, _arguments: String) -> BoxFuture<'static, ToolOutput> {
        let (name, release, finished) = (
            self.name.clone(),
            self.release.clone(),
            self.finished.clone(),
        );
        async move {
            note_finished(&finished, &name);
            release.notify_one();
            ToolOutput::ok(format!("{name} released the other"))
        }
        .boxed()
    }
}
