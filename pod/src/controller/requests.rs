//! Client methods (DESIGN §5 table): each returns exactly one reply frame for the requester.

use seedpod_protocol::{
    AckOutcome, DequeueReason, EntryKind, EntrySeq, ErrorCode, PodEvent, PodStatus, QueueId,
    QueuedItem, RequestId, RunEndReason, RunTrigger, Segment, ServerMsg,
};
use seedpod_store::Durability;
use tokio::sync::oneshot;

use super::commit::CommitError;
use super::injection::Injection;
use super::route::{ControllerMethod, Deferred, Now};
use super::{Activity, Controller, ControllerMsg};
use crate::{completions, earlier, render};

fn ack(id: RequestId, outcome: AckOutcome) -> ServerMsg {
    ServerMsg::Ack {
        id,
        outcome,
        queue_id: None,
        entry_seq: None,
    }
}

fn ack_entry(id: RequestId, outcome: AckOutcome, entry_seq: Option<EntrySeq>) -> ServerMsg {
    ServerMsg::Ack {
        id,
        outcome,
        queue_id: None,
        entry_seq,
    }
}

fn error(id: RequestId, code: ErrorCode, message: impl Into<String>) -> ServerMsg {
    ServerMsg::Error {
        id: Some(id),
        code,
        message: message.into(),
    }
}

impl Controller {
    /// Answer one request on `reply`. Deferred methods are answered on tasks of their own
    /// (completions walk the file tree, earlier pages read files, a spawn starts a process, a
    /// compaction asks the model), so the controller never waits on them.
    pub(super) async fn answer(
        &mut self,
        id: RequestId,
        method: ControllerMethod,
        reply: oneshot::Sender<ServerMsg>,
    ) {
        if matches!(self.runs.activity, Activity::Stopping) {
            let _ = reply.send(error(id, ErrorCode::Stopping, "the pod is shutting down"));
            return;
        }
        match method {
            ControllerMethod::Deferred(deferred) => self.defer(id, deferred, reply).await,
            ControllerMethod::Now(now) => {
                // Left by a commit no request waited for (a stopped child's reports).
                self.log.unsynced = None;
                let answer = self.handle_request(id, now).await;
                match self.log.unsynced.take() {
                    None => {
                        let _ = reply.send(answer);
                    }
                    // Acknowledged once durable, without holding the controller meanwhile.
                    Some(durable) => {
                        let tx = self.senders.commands.clone();
                        tokio::spawn(async move {
                            let answer = match durable.wait().await {
                                Ok(()) => answer,
                                Err(err) => {
                                    // The controller hears first, so a retry of this request
                                    // finds the log broken rather than "already taken".
                                    let reason = err.to_string();
                                    let _ = tx.send(ControllerMsg::SyncFailed { reason }).await;
                                    error(
                                        id,
                                        ErrorCode::StorageFailed,
                                        format!(
                                            "nothing was acknowledged: the log could not be synced: {err}"
                                        ),
                                    )
                                }
                            };
                            let _ = reply.send(answer);
                        });
                    }
                }
            }
        }
    }

    async fn defer(&mut self, id: RequestId, method: Deferred, reply: oneshot::Sender<ServerMsg>) {
        match method {
            // The server is asked off the loop, bounded by the provider's timeouts.
            Deferred::Completions {
                kind: seedpod_protocol::CompletionKind::Model,
                prefix,
            } => {
                if let Some(models) = self.runs.model_list.fresh() {
                    let _ = reply.send(completions::model_completions(id, Ok(models), &prefix));
                    return;
                }
                let listing = self.runs.provider.list_models();
                let cache = self.runs.model_list.clone();
                tokio::spawn(async move {
                    let models = listing.await;
                    if let Ok(models) = &models {
                        cache.store(models.clone());
                    }
                    let _ = reply.send(completions::model_completions(id, models, &prefix));
                });
            }
            Deferred::Completions { kind, prefix } => {
                let cwd = self.pod.meta.cwd.clone();
                let scope = self.session.scope.clone();
                let hub = self.mcp.hub.clone();
                tokio::task::spawn_blocking(move || {
                    let answer =
                        completions::answer_in_scope(id, &cwd, scope.as_deref(), kind, &prefix);
                    let _ = reply.send(super::mcp_input::with_mcp_completions(
                        answer, &hub, &prefix,
                    ));
                });
            }
            // Pages of the active segment come from memory; anything older is read from files.
            Deferred::Earlier {
                segment_id,
                before_seq,
            } => {
                if segment_id == self.log.state.segment_id && before_seq > EntrySeq::FIRST {
                    let (page, more_here) = earlier::page(&self.log.entries, before_seq);
                    if !page.is_empty() || more_here {
                        let more = more_here
                            || earlier::previous_segment(&self.pod.meta, &segment_id).is_some();
                        let _ = reply.send(earlier::earlier(id, segment_id, page, more));
                        return;
                    }
                }
                let pod_dir = self.pod.pod_dir.clone();
                let meta = self.pod.meta.clone();
                tokio::task::spawn_blocking(move || {
                    let answer =
                        earlier::answer_from_files(id, &pod_dir, &meta, &segment_id, before_seq);
                    let _ = reply.send(answer);
                });
            }
            Deferred::Clear => self.clear(id, reply),
            Deferred::Compact { focus } => self.compact_command(id, focus, reply),
            Deferred::Memory { text } => self.memory(id, &text, reply),
            Deferred::Commit { hint } => self.commit_command(id, hint, reply),
            Deferred::ModelList => self.model_list(id, reply),
            Deferred::McpPrompt { command, args } => self.mcp_prompt(id, command, args, reply),
            Deferred::Spawn(request) => self.spawn_child(id, request, reply).await,
        }
    }

    pub(super) async fn handle_request(&mut self, id: RequestId, method: Now) -> ServerMsg {
        match method {
            Now::Input { segments, trigger } => {
                // An `@SERVER:URI` a person sent names a resource a server lists now, or
                // nothing is sent.
                if trigger == RunTrigger::User
                    && let Some(refused) = self.mcp_references(&segments)
                {
                    return error(id, ErrorCode::InvalidRequest, refused);
                }
                let text = seedpod_protocol::flatten_to_text(&segments);
                if let Err(refusal) = self.guard("input", &text) {
                    return error(id, ErrorCode::InvalidRequest, refusal.to_string());
                }
                self.run_request(id, segments, trigger).await
            }
            Now::DeliverReports => {
                self.deliver_reports_now();
                ack(id, AckOutcome::Done)
            }
            Now::Notify { message, wake } => {
                tracing::info!(event = "notify_received", wake, chars = message.len());
                if let Err(refusal) = self.guard("notification", &message) {
                    return error(id, ErrorCode::InvalidRequest, refusal.to_string());
                }
                self.hooks.observe(
                    seedpod_config::HookEvent::Notification,
                    crate::hooks::Details::Notification {
                        message: message.clone(),
                    },
                );
                self.inject(id, Injection::Notify { message, wake }).await
            }
            Now::Approve {
                call_id,
                answer,
                reason,
            } => self.approve(id, call_id, answer, reason).await,
            Now::Command(command) => self.command(id, command).await,
            Now::ListApprovals => self.list_approvals(id),
            Now::McpServers { server } => self.mcp_servers(id, server),
            Now::McpControl { server, action } => self.mcp_control(id, &server, action),
            Now::RevokeApproval { standing } => self.revoke_approval(id, standing).await,
            Now::PodEvent { event, wake } => self.receive_report(id, event, wake).await,
            // An idle compaction has no turn to pause: Esc stops the compaction.
            Now::Pause if matches!(self.runs.activity, Activity::Compacting { .. }) => {
                self.stop_run(id, String::new()).await
            }
            Now::Pause => {
                // Pausing a paused pod is a no-op (DESIGN §5), acknowledged like a pause.
                if self.pause().await || matches!(self.runs.activity, Activity::Paused) {
                    ack(id, AckOutcome::Done)
                } else {
                    error(
                        id,
                        ErrorCode::NotRunning,
                        "nothing is running; there is nothing to pause",
                    )
                }
            }
            Now::Resume => match self.runs.activity {
                Activity::Paused => {
                    self.spawn_run();
                    ack(id, AckOutcome::Started)
                }
                Activity::Idle
                | Activity::Running { .. }
                | Activity::Compacting { .. }
                | Activity::Stopping => error(
                    id,
                    ErrorCode::NotPaused,
                    format!("the pod is {}, not paused", self.pod_state().as_str()),
                ),
            },
            Now::Cancel => match self.runs.activity {
                Activity::Running { .. } | Activity::Compacting { .. } | Activity::Paused => {
                    self.stop_run(id, render::cancelled_body()).await
                }
                Activity::Idle | Activity::Stopping => error(
                    id,
                    ErrorCode::NotRunning,
                    "nothing is running; there is nothing to cancel",
                ),
            },
            Now::Shutdown => {
                self.shutdown.cancel();
                ack(id, AckOutcome::Done)
            }
            Now::GetContext => ServerMsg::Context {
                id,
                body: self.request_body(),
            },
            Now::Status => ServerMsg::StatusReply {
                id,
                status: self.status(),
            },
            Now::CancelQueued { queue_id } => self.cancel_queued(id, queue_id).await,
        }
    }

    /// A report from a child (or a script speaking for one): committed once per event id.
    pub(super) async fn receive_report(
        &mut self,
        id: RequestId,
        event: PodEvent,
        wake: bool,
    ) -> ServerMsg {
        let event_id = event.event_id().cloned();
        if let Some(reason) = &self.log.storage_broken {
            // A report taken just before the log broke may not be on disk: never "already taken".
            return CommitError::Broken(reason.clone()).to_reply(id);
        }
        if let Some(event_id) = &event_id
            && self.log.seen_events.contains(event_id)
        {
            // A retried report already in the log: acknowledge, commit nothing.
            return ack(id, AckOutcome::Done);
        }
        self.note_child_event(&event).await;
        let wake = self.child_report_wakes(wake);
        let reply = self.inject(id, Injection::PodEvent { event, wake }).await;
        // Remembered only once the log holds it, so a report the log refused is taken again
        // when the child retries (invariant 5).
        if let (Some(event_id), ServerMsg::Ack { .. }) = (event_id, &reply) {
            self.log.seen_events.insert(event_id);
        }
        reply
    }

    /// Withdraw a queued input before it runs; the `dequeued` entry is durable before the ack.
    async fn cancel_queued(&mut self, id: RequestId, queue_id: QueueId) -> ServerMsg {
        let queued = self
            .log
            .state
            .pending
            .iter()
            .find(|entry| entry.queue_id == queue_id)
            .map(|entry| entry.item.is_input());
        match queued {
            None => error(
                id,
                ErrorCode::InvalidRequest,
                format!("nothing is queued as #{queue_id}: it may already have been sent"),
            ),
            Some(false) => error(
                id,
                ErrorCode::InvalidRequest,
                format!(
                    "#{queue_id} is a notification, not an input; notifications cannot be withdrawn"
                ),
            ),
            Some(true) => {
                let kind = EntryKind::Dequeued {
                    queue_id,
                    reason: DequeueReason::Cancelled,
                };
                match self.commit(kind, Durability::Sync).await {
                    Ok(()) => {
                        self.publish_queue();
                        ack_entry(id, AckOutcome::Done, self.last_entry_seq())
                    }
                    Err(err) => err.to_reply(id),
                }
            }
        }
    }

    async fn run_request(
        &mut self,
        id: RequestId,
        segments: Vec<Segment>,
        trigger: RunTrigger,
    ) -> ServerMsg {
        let queued = |segments| match trigger {
            RunTrigger::Parent => QueuedItem::Delegated { segments },
            RunTrigger::User
            | RunTrigger::Notification
            | RunTrigger::PodEvent
            | RunTrigger::Unknown => QueuedItem::Run { segments },
        };
        match self.runs.activity {
            Activity::Idle => self.start_user_run(id, segments, trigger).await,
            Activity::Paused => {
                let abandoned = self
                    .close_run(RunEndReason::Abandoned, render::abandoned_body())
                    .await;
                if let Err(err) = abandoned {
                    return err.to_reply(id);
                }
                if self.has_queued_run() {
                    // Inputs queued before this one go first (FIFO): queue it behind them.
                    let reply = self.enqueue(id, queued(segments)).await;
                    self.after_run().await;
                    reply
                } else {
                    self.start_user_run(id, segments, trigger).await
                }
            }
            Activity::Running { .. } | Activity::Compacting { .. } => {
                self.enqueue(id, queued(segments)).await
            }
            Activity::Stopping => error(id, ErrorCode::Stopping, "the pod is shutting down"),
        }
    }

    /// Cancel the open run (its `run_end` says so, with `body` for the model when not empty),
    /// then do what follows every run; the answer to the request that asked.
    async fn stop_run(&mut self, id: RequestId, body: String) -> ServerMsg {
        match self.close_run(RunEndReason::Cancelled, body).await {
            Ok(()) => {
                self.after_run().await;
                ack(id, AckOutcome::Done)
            }
            Err(err) => err.to_reply(id),
        }
    }

    async fn start_user_run(
        &mut self,
        id: RequestId,
        segments: Vec<Segment>,
        trigger: RunTrigger,
    ) -> ServerMsg {
        let input = self.user_input(segments, None);
        match self.start_run(trigger, Some(input)).await {
            // The input is the last entry: the run task cannot commit before this returns.
            Ok(input_seq) => ack_entry(id, AckOutcome::Started, input_seq),
            Err(err) => err.to_reply(id),
        }
    }

    /// A notification or pod event: committed now when idle, durably queued otherwise.
    async fn inject(&mut self, id: RequestId, item: Injection) -> ServerMsg {
        // While a new segment is written, what arrives is queued: the switch carries the queue.
        if !matches!(self.runs.activity, Activity::Idle) || self.switch.switching.is_some() {
            return self.enqueue(id, item.into_queued()).await;
        }
        let (system_item, wake, trigger) =
            item.into_system_item(&self.session.notify_wrapper, self.session.notify_max_chars);
        let committed = self
            .commit_for_reply(EntryKind::SystemItem {
                item: system_item,
                queue_id: None,
            })
            .await;
        if let Err(err) = committed {
            return err.to_reply(id);
        }
        let entry_seq = self.last_entry_seq();
        if wake && let Err(err) = self.start_run(trigger, None).await {
            tracing::error!(event = "wake_failed", error = %err);
        }
        ack_entry(id, AckOutcome::Done, entry_seq)
    }

    /// Durable receipt: the `queued` entry is fsynced before the ack (invariant 5), which
    /// `answer` sends once it is.
    async fn enqueue(&mut self, id: RequestId, item: QueuedItem) -> ServerMsg {
        let queue_id = self.log.state.next_queue_id;
        let committed = self
            .commit_for_reply(EntryKind::Queued { queue_id, item })
            .await;
        if let Err(err) = committed {
            return err.to_reply(id);
        }
        self.publish_queue();
        ServerMsg::Ack {
            id,
            outcome: AckOutcome::Queued,
            queue_id: Some(queue_id),
            entry_seq: self.last_entry_seq(),
        }
    }

    fn has_queued_run(&self) -> bool {
        self.log.state.pending.iter().any(|q| q.item.is_input())
    }

    fn last_entry_seq(&self) -> Option<EntrySeq> {
        self.log.entries.last().map(|e| e.seq)
    }

    fn status(&self) -> PodStatus {
        PodStatus {
            name: self.pod.name.clone(),
            state: self.pod_state(),
            pid: std::process::id(),
            cwd: self.pod.meta.cwd.display().to_string(),
            provider: self.log.state.model.provider.as_str().to_string(),
            model: self.log.state.model.model.clone(),
            segment_id: self.log.state.segment_id.clone(),
            entries: self.log.entries.len() as u64,
            queue: self.log.state.pending.clone(),
            usage: self.log.state.usage,
            clients: self.audience.clients,
            server_version: env!("CARGO_PKG_VERSION").to_string(),
            pending_approval: self.log.state.pending_approval().cloned(),
            context: crate::context::estimate::fill(&self.log.state),
            log_broken: self.log.storage_broken.clone(),
            totals: Some(self.live_totals()),
        }
    }

    /// The log's totals, with the open run's time so far counted (a watcher of a long run
    /// sees its time grow; the log counts it at `run_end`).
    fn live_totals(&self) -> seedpod_protocol::PodTotals {
        let mut totals = self.log.state.totals;
        if let Some(started) = self.log.state.run_started_ts {
            let ms = seedpod_store::unix_ms().saturating_sub(started);
            totals.run_ms = totals.run_ms.saturating_add(ms);
        }
        totals
    }
}
