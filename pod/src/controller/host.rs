//! The run task's side: `PodHost` implements the engine's `RunHost` by sending commands to the
//! controller, and the controller's handlers for those commands.

use std::collections::HashMap;
use std::sync::Arc;

use seedpod_engine::{
    Authorization, Context, HostError, PendingCall, PreparedRequest, ProviderEvent, Purpose,
    RunHost, unanswered_tool_calls,
};
use seedpod_protocol::{EntryKind, InFlightToolCall, ServerMsg};
use seedpod_store::Durability;
use tokio::sync::{mpsc, oneshot};

use super::data_guard::{DataSource, Guarded};
use super::{Activity, Controller, ControllerMsg};
use crate::hooks::Hooks;
use crate::prompt::PromptMode;

/// Handed to `drive_run`; every call is a command to the controller tagged with the run's
/// generation, so a stopped run cannot commit anything.
pub struct PodHost {
    pub generation: u64,
    pub tx: mpsc::Sender<ControllerMsg>,
    /// `pre_tool` and `post_tool` hooks run here, on the run task, never on the loop.
    pub hooks: Arc<Hooks>,
    /// Each allowed call's arguments by call id, for its `post_tool` event.
    pub arguments: HashMap<String, String>,
}

impl PodHost {
    pub fn new(generation: u64, tx: mpsc::Sender<ControllerMsg>, hooks: Arc<Hooks>) -> PodHost {
        PodHost {
            generation,
            tx,
            hooks,
            arguments: HashMap::new(),
        }
    }
}

pub(super) fn gone() -> HostError {
    HostError::Stopped
}

impl RunHost for PodHost {
    async fn prepare_request(&mut self) -> Result<PreparedRequest, HostError> {
        let (reply, rx) = oneshot::channel();
        self.tx
            .send(ControllerMsg::Prepare {
                generation: self.generation,
                reply,
            })
            .await
            .map_err(|_| gone())?;
        rx.await.map_err(|_| gone())?
    }

    async fn provisional(&mut self, event: ProviderEvent) {
        let _ = self
            .tx
            .send(ControllerMsg::Provisional {
                generation: self.generation,
                event,
            })
            .await;
    }

    async fn commit(&mut self, kind: EntryKind) -> Result<(), HostError> {
        // What `post_tool` hooks add is part of the result the model reads, committed with it,
        // so a restore replays it without running them again (docs/hooks.md).
        let kind = match kind {
            EntryKind::ToolResult {
                call_id,
                name,
                content,
                is_error,
                meta,
            } => {
                // Only a call that ran: one denied, or naming no tool, was never allowed to.
                let added = match self.arguments.remove(call_id.as_str()) {
                    Some(arguments) => {
                        self.hooks
                            .post_tool(&name, call_id.as_str(), &arguments, &content, is_error)
                            .await
                    }
                    None => Vec::new(),
                };
                EntryKind::ToolResult {
                    call_id,
                    name,
                    content: crate::hooks::with_context(content, &added),
                    is_error,
                    meta,
                }
            }
            other => other,
        };
        let (reply, rx) = oneshot::channel();
        self.tx
            .send(ControllerMsg::Commit {
                generation: self.generation,
                kind: Box::new(kind),
                reply,
            })
            .await
            .map_err(|_| gone())?;
        rx.await.map_err(|_| gone())?
    }

    async fn compacted(
        &mut self,
        summary: Result<String, seedpod_engine::ProviderError>,
    ) -> Result<(), HostError> {
        let (reply, rx) = oneshot::channel();
        self.tx
            .send(ControllerMsg::Compacted {
                generation: self.generation,
                summary,
                reply,
            })
            .await
            .map_err(|_| gone())?;
        rx.await.map_err(|_| gone())?
    }

    async fn refused(&mut self, err: &seedpod_engine::ProviderError) -> Result<bool, HostError> {
        let (reply, rx) = oneshot::channel();
        self.tx
            .send(ControllerMsg::Refused {
                generation: self.generation,
                error: err.clone(),
                reply,
            })
            .await
            .map_err(|_| gone())?;
        rx.await.map_err(|_| gone())?
    }

    async fn authorize(&mut self, call: &PendingCall) -> Result<Authorization, HostError> {
        self.arguments
            .insert(call.call_id.to_string(), call.arguments.clone());
        let hook = self
            .hooks
            .pre_tool(&call.name, call.call_id.as_str(), &call.arguments)
            .await;
        let (reply, rx) = oneshot::channel();
        self.tx
            .send(ControllerMsg::Authorize {
                generation: self.generation,
                call: call.clone(),
                hook,
                reply,
            })
            .await
            .map_err(|_| gone())?;
        let answer = rx.await.map_err(|_| gone())??;
        if matches!(answer, Authorization::Denied { .. }) {
            self.arguments.remove(call.call_id.as_str());
        }
        Ok(answer)
    }
}

/// Entries the turn loop commits that must be on disk before anything depends on them.
fn durability_for(kind: &EntryKind) -> Durability {
    match kind {
        EntryKind::TurnEnd { .. } | EntryKind::RunEnd { .. } => Durability::Sync,
        EntryKind::SegmentStart(_)
        | EntryKind::RunStart { .. }
        | EntryKind::UserInput { .. }
        | EntryKind::AssistantItem { .. }
        | EntryKind::AssistantInterrupted { .. }
        | EntryKind::AssistantRaw { .. }
        | EntryKind::ToolResult { .. }
        | EntryKind::SystemItem { .. }
        | EntryKind::Usage(_)
        | EntryKind::ConfigChanged { .. }
        | EntryKind::Queued { .. }
        | EntryKind::Dequeued { .. }
        | EntryKind::OutboxDelivered { .. }
        | EntryKind::ContextPruned { .. }
        | EntryKind::ApprovalStanding { .. }
        | EntryKind::Notice { .. }
        | EntryKind::Unknown => Durability::Buffered,
        EntryKind::ContextWindow(_) => Durability::Sync,
        EntryKind::ApprovalRequest(_)
        | EntryKind::ApprovalAnswer { .. }
        | EntryKind::ApprovalRevoked { .. }
        | EntryKind::Outbox { .. } => Durability::Sync,
    }
}

impl Controller {
    /// Whether `generation` is the task running now (a run, or an idle compaction).
    pub(super) fn is_current(&self, generation: u64) -> bool {
        matches!(
            self.runs.activity,
            Activity::Running { generation: g, .. } | Activity::Compacting { generation: g, .. }
                if g == generation
        )
    }

    /// Commit what is queued for the model, then build the request from committed history.
    pub(super) async fn prepare(&mut self, generation: u64) -> Result<PreparedRequest, HostError> {
        if !self.is_current(generation) {
            return Err(gone());
        }
        // Tool calls left unanswered (a resumed run) are answered before anything else joins
        // history: a system message between a call and its result would orphan the call.
        let mut unanswered: Vec<PendingCall> = unanswered_tool_calls(&self.log.state.history);
        if unanswered.is_empty() {
            self.commit_pending_system_items()
                .await
                .map_err(HostError::log)?;
            unanswered = unanswered_tool_calls(&self.log.state.history);
        }
        // A new day since the model was last told the date: say so (`calendar.rs`).
        if unanswered.is_empty()
            && let Some(item) = crate::calendar::date_note(
                self.log.state.model_date.as_deref(),
                &crate::calendar::today(),
            )
        {
            self.commit(
                EntryKind::SystemItem {
                    item,
                    queue_id: None,
                },
                Durability::Buffered,
            )
            .await
            .map_err(HostError::log)?;
        }
        if unanswered.is_empty()
            && let Some(item) = self
                .log
                .state
                .tasks
                .reminder_due(self.runs.limits.task_reminder_after)
        {
            let untouched = self.log.state.tasks.untouched();
            self.commit(
                EntryKind::SystemItem {
                    item,
                    queue_id: None,
                },
                Durability::Buffered,
            )
            .await
            .map_err(HostError::log)?;
            tracing::info!(event = "task_reminder", untouched_requests = untouched);
        }
        if unanswered.is_empty()
            && let Some(summary) = self.fit_context().await?
        {
            return Ok(summary);
        }
        self.audience.in_flight = Default::default();
        let body = self.request_body();
        self.fitting.fit.sent_estimate =
            Some(crate::context::estimate::request_tokens(&self.log.state));
        Ok(PreparedRequest {
            purpose: Purpose::Answer,
            body,
            unanswered,
            iteration: self.log.state.iterations_in_run,
            run_calls: self.run_calls(),
        })
    }

    /// The open run's answered tool calls, for the loop brakes.
    fn run_calls(&self) -> Vec<seedpod_engine::CallRecord> {
        let start = self
            .log
            .state
            .run_history_start
            .min(self.log.state.history.len());
        seedpod_engine::brakes::calls_in(&self.log.state.history[start..])
    }

    /// The exact body the next provider request carries, from committed history only.
    pub(super) fn request_body(&self) -> String {
        self.runs.provider.request_body(&Context {
            model: &self.log.state.model,
            system_prompt: &self.log.state.system_prompt,
            tools: &self.log.state.tools,
            items: &self.log.state.history,
        })
    }

    pub(super) async fn commit_from_run(
        &mut self,
        generation: u64,
        kind: EntryKind,
    ) -> Result<(), HostError> {
        if !self.is_current(generation) {
            return Err(gone());
        }
        let durability = durability_for(&kind);
        let kind = match kind {
            EntryKind::ToolResult {
                call_id,
                name,
                content,
                is_error,
                mut meta,
            } => {
                // A segment on the small prompt offers its tools shortened; what a search
                // loads into it is shortened the same way, or one load could cost more of a
                // small window than all the tools it was offered. Done before the commit, so
                // the entry holds what the requests carry and replay stays exact.
                if !meta.loaded_tools.is_empty()
                    && PromptMode::for_window(self.segment_window()) == PromptMode::Small
                {
                    meta.loaded_tools = crate::prompt::small_tool_specs(&meta.loaded_tools);
                }
                let before = content.len();
                let content = self.fit_tool_result(&name, content);
                meta.dropped(before.saturating_sub(content.len()) as u64);
                // What the sandbox saw a command do (change files git or seedpod run commands
                // from, reach for seedpod's sockets): the person must hear it, not only the
                // model. Read from the result's metadata, never its text, which a command may
                // fill with anything.
                for finding in &meta.sandbox {
                    let alert = seedpod_tools::finding_note(finding);
                    self.publish_alert(seedpod_protocol::AlertLevel::Warn, alert);
                }
                let content = match self.guard_data(DataSource::ToolResult(&name), &content) {
                    Guarded::Pass => content,
                    Guarded::Noted(note) => content + &note,
                    Guarded::Withheld(replacement) => {
                        // What the guard could not read goes with what it withheld.
                        meta.withhold_images();
                        replacement
                    }
                };
                EntryKind::ToolResult {
                    call_id,
                    name,
                    content,
                    is_error,
                    meta,
                }
            }
            other => other,
        };
        let reported = match &kind {
            // Everything the server read: cached tokens are counted apart from `input_tokens`.
            EntryKind::Usage(usage) => {
                Some(usage.input_tokens + usage.cache_read_tokens + usage.cache_creation_tokens)
            }
            _ => None,
        };
        self.commit(kind, durability)
            .await
            .map_err(HostError::log)?;
        if let Some(reported) = reported {
            self.publish_fill();
            self.check_truncation(reported).await?;
        }
        Ok(())
    }

    /// Track and broadcast a streamed delta. Never committed.
    pub(super) fn provisional(&mut self, event: ProviderEvent) {
        match event {
            ProviderEvent::TextDelta(text) => {
                self.audience.in_flight.text.push_str(&text);
                self.audience
                    .bus
                    .publish(|seq| ServerMsg::TextDelta { seq, text });
            }
            ProviderEvent::ThinkingDelta(text) => {
                self.audience.in_flight.thinking.push_str(&text);
                self.audience
                    .bus
                    .publish(|seq| ServerMsg::ThinkingDelta { seq, text });
            }
            ProviderEvent::ToolCallStart {
                index,
                call_id,
                name,
            } => {
                self.audience.in_flight.tool_calls.push(InFlightToolCall {
                    index,
                    call_id: call_id.clone(),
                    name: name.clone(),
                    arguments: String::new(),
                });
                self.audience.bus.publish(|seq| ServerMsg::ToolCallDelta {
                    seq,
                    index,
                    call_id: Some(call_id),
                    name: Some(name),
                    arguments: String::new(),
                });
            }
            ProviderEvent::ToolCallDelta { index, arguments } => {
                if let Some(call) = self
                    .audience
                    .in_flight
                    .tool_calls
                    .iter_mut()
                    .find(|c| c.index == index)
                {
                    call.arguments.push_str(&arguments);
                }
                self.audience.bus.publish(|seq| ServerMsg::ToolCallDelta {
                    seq,
                    index,
                    call_id: None,
                    name: None,
                    arguments,
                });
            }
            ProviderEvent::Status(message) => {
                self.audience
                    .bus
                    .publish(|seq| ServerMsg::Status { seq, message });
            }
            // The reasoning item's summary already streamed as thinking deltas; the item itself
            // is opaque until it commits.
            ProviderEvent::ThinkingSignature(_)
            | ProviderEvent::ReasoningItem(_)
            | ProviderEvent::Usage(_)
            | ProviderEvent::Finish(_) => {}
        }
    }
}
