//! The run lifecycle (DESIGN §5): start, finish, pause, resume, cancel, abandon, and draining
//! the durable queue after every run so nothing acknowledged is ever stranded.

use std::time::Instant;

use seedpod_engine::{HostError, RunOutcome, drive_run_with_retry, unanswered_tool_calls};
use seedpod_protocol::{
    AlertLevel, DequeueReason, EntryKind, EntrySeq, QueuedItem, RunEndReason, RunTrigger,
    SystemItem,
};
use seedpod_store::Durability;

use super::commit::CommitError;
use super::host::PodHost;
use super::injection::Injection;
use super::input::UserInput;
use super::{Activity, Controller, ControllerMsg, attach};
use crate::render;

/// The run: whether one is going, the generation that tells its commands from stale ones, and
/// what it runs with.
pub(super) struct Runs {
    pub(super) activity: super::Activity,
    /// Bumped whenever a run task is started or abandoned; commands from older runs are refused.
    pub(super) generation: u64,
    pub(super) provider: std::sync::Arc<dyn seedpod_engine::Provider>,
    pub(super) tools: seedpod_engine::ToolRegistry,
    pub(super) limits: seedpod_engine::RunLimits,
    pub(super) retry: seedpod_engine::RetryPolicy,
    /// The open run's input, while what it references is not yet attached (`attach.rs`).
    pub(super) unattached: Option<Vec<seedpod_protocol::Segment>>,
    /// That input is a person's: its `@SERVER:URI` references are MCP resources to read.
    pub(super) unattached_by_person: bool,
    /// The run task waiting for an answer to an approval request, if one is.
    pub(super) waiting_approval: Option<super::approvals::WaitingApproval>,
    /// The server's model list as last fetched, for `/model` completions: typing a name asks
    /// on every keystroke, the server at most once a minute.
    pub(super) model_list: crate::completions::ModelListCache,
}

impl Controller {
    /// Commit the start of a run (and its input, durably, then what it references), then start
    /// the run task. Returns the input's log seq.
    pub(super) async fn start_run(
        &mut self,
        trigger: RunTrigger,
        input: Option<UserInput>,
    ) -> Result<Option<EntrySeq>, CommitError> {
        self.commit(EntryKind::RunStart { trigger }, Durability::Buffered)
            .await?;
        let mut input_seq = None;
        if let Some(input) = input {
            let references = attach::has_references(&input.segments);
            let segments = references.then(|| input.segments.clone());
            self.commit(input.into_entry(), Durability::Sync).await?;
            input_seq = self.log.entries.last().map(|e| e.seq);
            // Attached by the run task before its first request (`attach.rs`).
            self.runs.unattached = segments;
            self.runs.unattached_by_person = trigger == RunTrigger::User;
        }
        tracing::info!(
            event = "turn_start",
            model = %self.log.state.model.model,
            message_count = self.log.state.history.len(),
            trigger = ?trigger,
        );
        self.spawn_run();
        Ok(input_seq)
    }

    /// Start (or continue, after a pause) the turn loop on a task of its own.
    pub(super) fn spawn_run(&mut self) {
        self.runs.generation += 1;
        self.runs.waiting_approval = None;
        let generation = self.runs.generation;
        let mut link = PodHost::new(
            generation,
            self.senders.commands.clone(),
            self.hooks.clone(),
        );
        let provider = self.runs.provider.clone();
        let tools = self.runs.tools.clone();
        let limits = self.runs.limits;
        let retry = self.runs.retry;
        let tx = self.senders.commands.clone();
        let attachments = self.attachments();
        let task = tokio::spawn(async move {
            let attached = match attachments {
                Some(job) => link.attach(job).await,
                None => Ok(()),
            };
            let result = match attached {
                Ok(()) => {
                    drive_run_with_retry(&mut link, provider.as_ref(), &tools, &limits, &retry)
                        .await
                }
                Err(err) => Err(err),
            };
            let _ = tx
                .send(ControllerMsg::RunFinished { generation, result })
                .await;
        });
        self.runs.activity = Activity::Running {
            generation,
            task,
            started: Instant::now(),
            usage_at_start: self.log.state.usage,
        };
        self.publish_state();
    }

    pub(super) async fn run_finished(
        &mut self,
        generation: u64,
        result: Result<RunOutcome, HostError>,
    ) {
        if !self.is_current(generation) {
            return;
        }
        // Whatever the run did not attach, it never will: the run is over.
        self.runs.unattached = None;
        let (duration_ms, before) = match &self.runs.activity {
            Activity::Running {
                started,
                usage_at_start,
                ..
            } => (started.elapsed().as_millis() as u64, *usage_at_start),
            Activity::Idle
            | Activity::Compacting { .. }
            | Activity::Paused
            | Activity::Stopping => (0, self.log.state.usage),
        };
        let input_tokens = self
            .log
            .state
            .usage
            .input_tokens
            .saturating_sub(before.input_tokens);
        let output_tokens = self
            .log
            .state
            .usage
            .output_tokens
            .saturating_sub(before.output_tokens);
        let run_items = &self.log.state.history[self
            .log
            .state
            .run_history_start
            .min(self.log.state.history.len())..];
        let tool_call_count = run_items
            .iter()
            .filter(|item| matches!(item, seedpod_protocol::ModelItem::ToolCall { .. }))
            .count();
        self.hooks.observe(
            seedpod_config::HookEvent::TurnEnd,
            crate::hooks::turn_end_details(&result),
        );
        match result {
            Ok(outcome) => {
                tracing::info!(
                    event = "turn_end",
                    outcome = ?outcome,
                    duration_ms,
                    input_tokens,
                    output_tokens,
                    total_tokens = input_tokens + output_tokens,
                    iterations = self.log.state.iterations_in_run,
                    tool_call_count,
                );
                // A failed run says why in its committed `run_end` (every client shows it
                // there); an alert would print the same error a second time.
            }
            Err(err) => {
                // The loop could not commit: the log is failing. Nothing more is written.
                tracing::error!(event = "turn_failed", error = %err, duration_ms);
                self.publish_alert(AlertLevel::Error, format!("the run stopped: {err}"));
            }
        }
        self.runs.activity = Activity::Idle;
        self.audience.in_flight = Default::default();
        self.abandon_compaction("ended with its run");
        self.publish_state();
        if self.compact_after_run() {
            return;
        }
        self.after_run().await;
    }

    /// After every run (and on start): commit queued notifications, then start the next queued
    /// input, or a run woken by a notification.
    pub(super) async fn after_run(&mut self) {
        if !matches!(self.runs.activity, Activity::Idle) {
            return;
        }
        let woken = match self.commit_pending_system_items().await {
            Ok(woken) => woken,
            Err(err) => {
                tracing::error!(event = "drain_failed", error = %err);
                return;
            }
        };
        let next_run = self.log.state.pending.iter().find_map(|q| match &q.item {
            QueuedItem::Run { segments } => Some((q.queue_id, segments.clone(), RunTrigger::User)),
            QueuedItem::Delegated { segments } => {
                Some((q.queue_id, segments.clone(), RunTrigger::Parent))
            }
            QueuedItem::Notify { .. } | QueuedItem::PodEvent { .. } | QueuedItem::Unknown => None,
        });
        let started = match (next_run, woken) {
            (Some((queue_id, segments, trigger)), _) => {
                let input = self.user_input(segments, Some(queue_id));
                let started = self.start_run(trigger, Some(input)).await;
                self.publish_queue();
                started
            }
            (None, Some(trigger)) => self.start_run(trigger, None).await,
            (None, None) => Ok(None),
        };
        if let Err(err) = started {
            tracing::error!(event = "drain_failed", error = %err);
        }
    }

    /// Commit every queued notification and pod event, in queue order. Returns the trigger for
    /// a run if any of them asked to wake the pod.
    pub(super) async fn commit_pending_system_items(
        &mut self,
    ) -> Result<Option<RunTrigger>, CommitError> {
        let queued: Vec<_> = self
            .log
            .state
            .pending
            .iter()
            .filter(|q| !q.item.is_input())
            .cloned()
            .collect();
        if queued.is_empty() {
            return Ok(None);
        }
        let mut woken = None;
        for entry in queued {
            let kind = match entry.item {
                QueuedItem::Unknown => EntryKind::Dequeued {
                    queue_id: entry.queue_id,
                    reason: DequeueReason::Unknown,
                },
                item => {
                    let Some(injection) = Injection::from_queued(item) else {
                        continue;
                    };
                    let (item, wake, trigger) = injection.into_system_item(
                        &self.session.notify_wrapper,
                        self.session.notify_max_chars,
                    );
                    if wake {
                        woken.get_or_insert(trigger);
                    }
                    EntryKind::SystemItem {
                        item,
                        queue_id: Some(entry.queue_id),
                    }
                }
            };
            self.commit(kind, Durability::Buffered).await?;
        }
        self.publish_queue();
        Ok(woken)
    }

    /// What the model had streamed of an answer being stopped stays: committed as an
    /// interrupted assistant item (history, so the model knows what it said and "anything not
    /// shown above" is true; clients mark it). Call after the run task is aborted, so nothing
    /// else of the answer can follow.
    pub(super) async fn keep_streamed_text(&mut self) {
        let streamed = std::mem::take(&mut self.audience.in_flight.text);
        // Providers refuse an assistant turn that ends in white space.
        let text = streamed.trim_end();
        if text.trim().is_empty() || self.log.state.open_run.is_none() {
            return;
        }
        let kind = EntryKind::AssistantInterrupted {
            text: text.to_owned(),
        };
        if let Err(err) = self.commit(kind, Durability::Buffered).await {
            tracing::error!(event = "interrupted_text_lost", error = %err);
        }
    }

    /// Stop the running turn, keep what it committed and what it had streamed; the run stays
    /// open in the log.
    pub(super) async fn pause(&mut self) -> bool {
        // A run whose `run_end` is already committed has finished, even if its task has not
        // reported yet: pausing it would leave the pod paused with no open run in the log.
        if !matches!(self.runs.activity, Activity::Running { .. })
            || self.log.state.open_run.is_none()
        {
            return false;
        }
        if let Activity::Running { task, .. } =
            std::mem::replace(&mut self.runs.activity, Activity::Paused)
        {
            task.abort();
        }
        self.runs.generation += 1;
        self.runs.waiting_approval = None;
        self.keep_streamed_text().await;
        self.audience.in_flight = Default::default();
        self.abandon_compaction("stopped by a pause");
        tracing::info!(event = "paused");
        self.publish_state();
        true
    }

    /// Close an open run: orphan tool calls get a "not run" result, an interrupt item records
    /// why, and `run_end` closes it. Used by cancel and by new input while paused.
    pub(super) async fn close_run(
        &mut self,
        reason: RunEndReason,
        body: String,
    ) -> Result<(), CommitError> {
        if let Some(task) = self.runs.activity.take_task(Activity::Idle) {
            task.abort();
        }
        self.runs.generation += 1;
        self.runs.waiting_approval = None;
        self.keep_streamed_text().await;
        self.audience.in_flight = Default::default();
        self.runs.unattached = None;
        self.abandon_compaction("cancelled");
        if self.log.state.open_run.is_none() {
            // The run had already committed its end; nothing is left to close.
            self.publish_state();
            return Ok(());
        }
        for call in unanswered_tool_calls(&self.log.state.history) {
            self.commit(
                EntryKind::ToolResult {
                    call_id: call.call_id,
                    name: call.name,
                    content: render::orphan_result(),
                    is_error: true,
                    meta: Default::default(),
                },
                Durability::Buffered,
            )
            .await?;
        }
        self.commit(
            EntryKind::SystemItem {
                item: SystemItem::Interrupt { body },
                queue_id: None,
            },
            Durability::Buffered,
        )
        .await?;
        self.commit(
            EntryKind::RunEnd {
                reason,
                message: None,
            },
            Durability::Sync,
        )
        .await?;
        self.publish_state();
        Ok(())
    }
}
