//! The controller: the single owner of a pod's state (history, log writer, queues, run, bus).
//!
//! Connections and the run task never touch state; they send `ControllerMsg`s over one bounded
//! channel and get answers on oneshots. Every model-visible fact goes through `commit`, which
//! appends to the log first and folds into memory second (invariant 1), using the same fold as
//! restore (invariant 2).
//!
//! Files: `route.rs` decides who answers each client method, `requests.rs` answers the
//! controller's share, `runs.rs` owns the run lifecycle (start, pause,
//! resume, cancel, drain queues), `host.rs` is the run task's side of the channel,
//! `commit.rs` the one commit path, `snapshot.rs` attach/subscribe.

mod approvals;
mod attach;
mod children;
mod commands;
mod commit;
mod context;
mod data_guard;
mod host;
mod inbox;
mod injection;
mod input;
mod mcp;
mod mcp_input;
mod meta_file;
mod queue_events;
mod requests;
mod route;
mod runs;
mod snapshot;
#[cfg(test)]
pub(crate) mod stall;
mod standing;
mod switch;
#[cfg(test)]
mod tests;
mod window_learned;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use seedpod_engine::{
    HostError, PreparedRequest, Provider, ProviderEvent, RetryPolicy, RunLimits, RunOutcome,
    ToolRegistry,
};
use seedpod_protocol::{
    Entry, EntryKind, EventSeq, InFlightToolCall, InstanceId, PodName, PodState, RequestId,
    SegmentId, ServerMsg,
};
use seedpod_store::{PodMeta, SegmentState, SegmentWriter};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

pub use inbox::{Receivers, Senders, channels};
pub use route::{ConnectionMethod, ControllerMethod, Now, Route, route};
pub use snapshot::{CatchUp, SnapshotData, SubscribeReply};

use crate::bus::Bus;

/// Commands queued to the controller. Bounded so a flood of requests slows its senders, never
/// the controller's memory.
pub const CONTROLLER_QUEUE_CAPACITY: usize = 256;

/// Everything the controller can be asked to do.
pub enum ControllerMsg {
    /// A client request the controller answers (see `route`), with one frame.
    Request {
        id: RequestId,
        method: ControllerMethod,
        reply: oneshot::Sender<ServerMsg>,
    },
    /// Start receiving events: a snapshot (or ring catch-up) plus a live queue.
    Subscribe {
        since: Option<EventSeq>,
        reply: oneshot::Sender<SubscribeReply>,
    },
    /// `get_history`: the active segment's id and its entries, shared, for the connection to
    /// encode (`ConnectionMethod::History`).
    History {
        reply: oneshot::Sender<(SegmentId, Vec<Arc<Entry>>)>,
    },
    /// A client said hello: the state and last seq for its `welcome`.
    Greet {
        reply: oneshot::Sender<(PodState, EventSeq)>,
    },
    ClientConnected,
    ClientDisconnected,
    /// From the run task: commit queued items and build the next request.
    Prepare {
        generation: u64,
        reply: oneshot::Sender<Result<PreparedRequest, HostError>>,
    },
    /// From the run task: a streamed delta to show.
    Provisional {
        generation: u64,
        event: ProviderEvent,
    },
    /// From the run task: append one entry.
    Commit {
        generation: u64,
        /// Boxed: a `segment_start` is large, and every other command would pay for it.
        kind: Box<EntryKind>,
        reply: oneshot::Sender<Result<(), HostError>>,
    },
    /// From the run task: may this tool call run? (May wait for a person.)
    Authorize {
        generation: u64,
        call: seedpod_engine::PendingCall,
        /// What the `pre_tool` hooks said, run by the run task before it asked.
        hook: crate::hooks::PreTool,
        reply: oneshot::Sender<Result<seedpod_engine::Authorization, HostError>>,
    },
    /// From the task that read a file's current text for an approval request: ask the person.
    Ask {
        generation: u64,
        call: seedpod_engine::PendingCall,
        always: Option<seedpod_protocol::CommandRule>,
        replaces: Option<seedpod_protocol::Replaces>,
        reply: oneshot::Sender<Result<seedpod_engine::Authorization, HostError>>,
    },
    /// From the run task (or an idle compaction task): the summary a compaction asked for.
    Compacted {
        generation: u64,
        summary: Result<String, seedpod_engine::ProviderError>,
        reply: oneshot::Sender<Result<(), HostError>>,
    },
    /// From the task writing a new segment (`switch.rs`): the file is written, or why not.
    SegmentWritten {
        segment_id: SegmentId,
        result: Result<switch::Written, switch::SwitchError>,
    },
    /// A durable reply's fsync failed: the log can no longer be trusted.
    SyncFailed {
        reason: String,
    },
    /// From the run task: the items its input references, resolved off the loop, to commit
    /// before its first request.
    Attach {
        generation: u64,
        resolved: Vec<crate::references::Resolved>,
        reply: oneshot::Sender<Result<(), HostError>>,
    },
    /// From the run task: the provider refused a request for good; can the pod make it fit?
    Refused {
        generation: u64,
        error: seedpod_engine::ProviderError,
        reply: oneshot::Sender<Result<bool, HostError>>,
    },
    /// From an idle compaction task: what the memory flush before the summary did.
    MemoryFlushed {
        generation: u64,
        actions: Vec<String>,
    },
    /// An idle compaction task is done.
    CompactionFinished {
        generation: u64,
    },
    /// From the run task: the run's loop returned.
    RunFinished {
        generation: u64,
        result: Result<RunOutcome, HostError>,
    },
}

/// A cheap handle for sending commands.
#[derive(Clone)]
pub struct ControllerHandle {
    pub tx: mpsc::Sender<ControllerMsg>,
    /// The pod's hooks, for the `user_prompt` hooks a connection runs before it forwards an
    /// input (`None` in tests that run no hooks).
    pub hooks: Option<Arc<crate::hooks::Hooks>>,
}

/// What the pod is doing: the one place its state comes from (`pod_state`). Transitions:
/// `Idle → Running` (a run starts, `runs.rs`), `Idle → Compacting` (a compaction between
/// turns, `context.rs`), `Running → Paused` (a pause), `Running | Compacting | Paused → Idle`
/// (the run or compaction ends, or is cancelled), anything `→ Stopping` (the pod stops).
enum Activity {
    Idle,
    /// A turn's run task.
    Running {
        generation: u64,
        task: JoinHandle<()>,
        started: Instant,
        /// Pod usage totals when this run task started, so the run's own tokens can be logged.
        usage_at_start: seedpod_protocol::Usage,
    },
    /// A compaction between turns, on a task of its own (a turn's compaction is part of its
    /// run: `Running` with `fitting.compacting` set).
    Compacting {
        generation: u64,
        task: JoinHandle<()>,
    },
    Paused,
    Stopping,
}

impl Activity {
    /// The task working for the pod now, if one is.
    fn take_task(&mut self, next: Activity) -> Option<JoinHandle<()>> {
        match std::mem::replace(self, next) {
            Activity::Running { task, .. } | Activity::Compacting { task, .. } => Some(task),
            Activity::Idle | Activity::Paused | Activity::Stopping => None,
        }
    }
}

/// What is streaming right now, for snapshots of reattaching clients.
#[derive(Default, Clone)]
struct InFlight {
    text: String,
    thinking: String,
    tool_calls: Vec<InFlightToolCall>,
}

/// The pieces the controller is built from (see `crate::restore`).
pub struct ControllerParts {
    pub name: PodName,
    pub pod_dir: PathBuf,
    pub meta: PodMeta,
    pub writer: SegmentWriter,
    pub state: SegmentState,
    pub entries: Vec<Entry>,
    pub provider: Arc<dyn Provider>,
    pub tools: ToolRegistry,
    pub limits: RunLimits,
    /// How hard runs retry transient provider failures (configured by `[retry]`).
    pub retry: RetryPolicy,
    /// Alerts found while restoring (torn tail, interrupted run), published once clients come.
    pub alerts: Vec<String>,
    /// Approval policies, input handling and what a new segment's prompt is made of.
    pub session: crate::session::SessionSettings,
    /// Where pods live: children's directories and sockets, the parent's socket.
    pub home: seedpod_client::Home,
    /// The pod's MCP servers.
    pub mcp: crate::mcp::McpHub,
}

/// The controller: one owner, its state kept by concern in the types below, each in the file
/// that owns that concern. A field here is a subsystem, not a variable.
pub struct Controller {
    /// Who this pod is and where it lives; `pod.json`'s one writer.
    pod: Identity,
    /// The active segment: its writer, its folded state and its entries (`commit.rs`).
    log: commit::Log,
    /// The clients: the event bus, what is streaming, what to repeat (`snapshot.rs`).
    audience: snapshot::Audience,
    /// The run and what it runs with (`runs.rs`).
    runs: runs::Runs,
    /// Fitting the context: a compaction under way, what failed (`context.rs`).
    fitting: context::Fitting,
    /// Child pods and this pod's reports to its parent (`children.rs`).
    family: children::Family,
    /// The MCP servers (`mcp.rs`).
    mcp: mcp::McpSide,
    /// A segment switch under way and what waits for it (`switch.rs`).
    switch: switch::Switch,
    /// Approval policies, input handling and what a new segment's prompt is made of.
    session: crate::session::SessionSettings,
    /// The person's `[hooks]`, run off the loop by the tasks that need their answers.
    hooks: Arc<crate::hooks::Hooks>,
    /// Every queue's sending end, for the tasks the controller starts.
    senders: Senders,
    shutdown: CancellationToken,
}

/// Who the pod is and where its files are.
struct Identity {
    name: PodName,
    /// This process's run of the pod (a restart is a new instance).
    instance: InstanceId,
    meta: PodMeta,
    /// The one writer of `pod.json`.
    meta_file: meta_file::MetaFile,
    pod_dir: PathBuf,
    /// Where pods live: children's directories and sockets, the parent's socket.
    home: seedpod_client::Home,
}

impl Controller {
    /// Build the controller and its command channel.
    pub fn new(
        parts: ControllerParts,
        shutdown: CancellationToken,
    ) -> (Controller, ControllerHandle, Receivers) {
        Controller::with_channels(parts, shutdown, channels())
    }

    /// Build the controller on queues made earlier (`channels`), when tools must hold a sender
    /// before the pod opens.
    pub fn with_channels(
        parts: ControllerParts,
        shutdown: CancellationToken,
        (senders, receivers): (Senders, Receivers),
    ) -> (Controller, ControllerHandle, Receivers) {
        let tx = senders.commands.clone();
        let seen_events = snapshot::event_ids(&parts.entries);
        let fill = crate::context::estimate::fill(&parts.state);
        let meta_file = meta_file::MetaFile::start(parts.pod_dir.clone());
        let paused = parts.state.open_run.is_some();
        let hooks = Arc::new(crate::hooks::Hooks::new(
            parts.session.hooks.clone(),
            parts.name.to_string(),
            parts.meta.cwd.clone(),
            senders.hooks.clone(),
        ));
        let handle_hooks = Some(hooks.clone());
        let controller = Controller {
            pod: Identity {
                name: parts.name,
                instance: InstanceId::new(uuid::Uuid::now_v7().to_string()),
                meta: parts.meta,
                meta_file,
                pod_dir: parts.pod_dir,
                home: parts.home,
            },
            log: commit::Log {
                writer: parts.writer,
                state: parts.state,
                entries: parts.entries.into_iter().map(Arc::new).collect(),
                storage_broken: None,
                unsynced: None,
                seen_events,
            },
            audience: snapshot::Audience {
                bus: Bus::new(),
                in_flight: InFlight::default(),
                clients: 0,
                standing_alerts: parts.alerts,
                queue_events: Default::default(),
                fill,
            },
            runs: runs::Runs {
                activity: if paused {
                    Activity::Paused
                } else {
                    Activity::Idle
                },
                generation: 0,
                provider: parts.provider,
                tools: parts.tools,
                limits: parts.limits,
                retry: parts.retry,
                unattached: None,
                unattached_by_person: false,
                waiting_approval: None,
                model_list: Default::default(),
            },
            fitting: Default::default(),
            family: Default::default(),
            mcp: mcp::McpSide {
                hub: parts.mcp,
                flags: Default::default(),
            },
            switch: Default::default(),
            session: parts.session,
            hooks,
            senders,
            shutdown,
        };
        let handle = ControllerHandle {
            tx,
            hooks: handle_hooks,
        };
        (controller, handle, receivers)
    }

    pub fn pod_state(&self) -> PodState {
        match self.runs.activity {
            Activity::Idle => PodState::Idle,
            Activity::Compacting { .. } => PodState::Compacting,
            Activity::Running { .. } if self.fitting.compacting.is_some() => PodState::Compacting,
            Activity::Running { .. } if self.runs.waiting_approval.is_some() => {
                PodState::WaitingForApproval
            }
            Activity::Running { .. } => PodState::Running,
            // Stopped at a request (a restart, or a pause while waiting): answering it is what
            // the pod waits for.
            Activity::Paused if self.log.state.pending_approval().is_some() => {
                PodState::WaitingForApproval
            }
            Activity::Paused => PodState::Paused,
            Activity::Stopping => PodState::Stopping,
        }
    }

    pub fn instance(&self) -> &InstanceId {
        &self.pod.instance
    }

    /// Run until shutdown. Returns after the log is flushed and closed.
    pub async fn run(mut self, mut rx: Receivers) {
        self.relink();
        self.hooks.observe(
            seedpod_config::HookEvent::SessionStart,
            crate::hooks::Details::SessionStart {
                history_items: self.log.state.history.len(),
            },
        );
        // Anything queued durably before a restart is drained now (an idle pod with pending
        // notifications must not strand them).
        if matches!(self.runs.activity, Activity::Idle) {
            self.after_run().await;
        }
        loop {
            // Armed only while a folded `queued` event waits: an idle pod has no timer.
            let queue_due = self.audience.queue_events.due();
            let queue_event = async move {
                match queue_due {
                    Some(due) => tokio::time::sleep_until(due).await,
                    None => std::future::pending().await,
                }
            };
            // What waited for a segment switch goes first once it is over, in order.
            if self.switch.switching.is_none()
                && let Some(cmd) = self.switch.deferred.pop_front()
            {
                self.handle(cmd).await;
                continue;
            }
            let switching = self.switch.switching.is_some();
            let room = self.switch.deferred.len() < switch::DEFERRED_CAPACITY;
            // Biased, subsystems before commands: a tool that tells its subsystem something and
            // then returns has it handled before the run task commits the tool's result. During
            // a segment switch, children and MCP servers wait (what they say may commit).
            tokio::select! {
                biased;
                () = self.shutdown.cancelled() => break,
                () = queue_event => self.publish_queue_now(),
                Some(msg) = rx.children.recv(), if !switching => self.child_msg(msg).await,
                Some(event) = rx.mcp.recv(), if !switching => self.mcp_event(event),
                Some(message) = rx.hooks.recv() => {
                    self.publish_alert(seedpod_protocol::AlertLevel::Warn, message);
                }
                Some(query) = rx.pastes.recv() => {
                    let _ = query.reply.send(crate::paste::find(&self.log.entries, &query.key));
                }
                cmd = rx.commands.recv(), if room => match cmd {
                    Some(cmd) if self.switch.switching.is_some() && switch::waits_for_switch(&cmd) => {
                        self.switch.deferred.push_back(cmd);
                    }
                    Some(cmd) => self.handle(cmd).await,
                    None => break,
                },
            }
        }
        self.stop().await;
    }

    async fn handle(&mut self, cmd: ControllerMsg) {
        match cmd {
            ControllerMsg::Request { id, method, reply } => self.answer(id, method, reply).await,
            ControllerMsg::Subscribe { since, reply } => {
                let answer = self.subscribe(since);
                let _ = reply.send(answer);
            }
            ControllerMsg::History { reply } => {
                let segment = self.log.state.segment_id.clone();
                let _ = reply.send((segment, self.log.entries.clone()));
            }
            ControllerMsg::Greet { reply } => {
                let _ = reply.send((self.pod_state(), self.audience.bus.seq()));
            }
            ControllerMsg::ClientConnected => {
                self.audience.clients += 1;
                tracing::info!(event = "client_connect", clients = self.audience.clients);
            }
            ControllerMsg::ClientDisconnected => {
                self.audience.clients = self.audience.clients.saturating_sub(1);
                tracing::info!(event = "client_disconnect", clients = self.audience.clients);
            }
            ControllerMsg::Prepare { generation, reply } => {
                let answer = self.prepare(generation).await;
                let _ = reply.send(answer);
            }
            ControllerMsg::Provisional { generation, event } => {
                if self.is_current(generation) {
                    self.provisional(event);
                }
            }
            ControllerMsg::Commit {
                generation,
                kind,
                reply,
            } => {
                let answer = self.commit_from_run(generation, *kind).await;
                let _ = reply.send(answer);
            }
            ControllerMsg::Authorize {
                generation,
                call,
                hook,
                reply,
            } => self.authorize(generation, call, hook, reply).await,
            ControllerMsg::Ask {
                generation,
                call,
                always,
                replaces,
                reply,
            } => self.ask(generation, call, always, replaces, reply).await,
            ControllerMsg::Compacted {
                generation,
                summary,
                reply,
            } => self.compacted(generation, summary, reply),
            ControllerMsg::SegmentWritten { segment_id, result } => {
                self.segment_written(segment_id, result).await;
            }
            ControllerMsg::SyncFailed { reason } => self.sync_failed(reason),
            ControllerMsg::Attach {
                generation,
                resolved,
                reply,
            } => {
                let answer = self.attach(generation, resolved).await;
                let _ = reply.send(answer);
            }
            ControllerMsg::Refused {
                generation,
                error,
                reply,
            } => match self.refused(generation, &error).await {
                Ok(context::Refusal::SmallPrompt) => self.recompose(reply, true),
                Ok(context::Refusal::Retry) => {
                    let _ = reply.send(Ok(true));
                }
                Ok(context::Refusal::Fail) => {
                    let _ = reply.send(Ok(false));
                }
                Err(err) => {
                    let _ = reply.send(Err(err));
                }
            },
            ControllerMsg::MemoryFlushed {
                generation,
                actions,
            } => self.memory_flushed(generation, actions),
            ControllerMsg::CompactionFinished { generation } => {
                self.compaction_finished(generation).await;
            }
            ControllerMsg::RunFinished { generation, result } => {
                self.run_finished(generation, result).await;
            }
        }
    }

    /// Stop the run (left open in the log so a restore comes back paused), flush, close.
    async fn stop(&mut self) {
        tracing::info!(event = "server_stop", pod = %self.pod.name);
        if let Some(task) = self.runs.activity.take_task(Activity::Stopping) {
            task.abort();
        }
        self.runs.generation += 1;
        self.runs.waiting_approval = None;
        self.abandon_switch();
        // Whatever waited for the switch is told the pod is stopping.
        for cmd in std::mem::take(&mut self.switch.deferred) {
            if let ControllerMsg::Request { id, reply, .. } = cmd {
                let _ = reply.send(ServerMsg::Error {
                    id: Some(id),
                    code: seedpod_protocol::ErrorCode::Stopping,
                    message: "the pod is shutting down".into(),
                });
            }
        }
        self.keep_streamed_text().await;
        self.abandon_compaction("stopped with the pod");
        self.publish_state();
        self.final_reports().await;
        if let Err(err) = self.pod.meta_file.flush().await {
            tracing::error!(event = "meta_save_failed", error = %err);
        }
        if let Err(err) = self.log.writer.close().await {
            tracing::error!(event = "store_close_failed", error = %err);
        }
        self.audience.bus.close_all();
    }
}
