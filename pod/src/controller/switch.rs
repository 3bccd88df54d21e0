//! Moving to a new segment (`/clear`, a compaction) without the controller waiting on the disk.
//!
//! The new file is written on a task: its start (the prompt rendered on a blocking thread) and
//! everything the old segment still owes — the open run, the durable queue, reports the parent
//! has not taken — in one batch under one fsync (`SegmentWriter::create_with`). Meanwhile the
//! controller goes on: deltas, snapshots and reads are served, and a `notify` is queued in the
//! old segment and acknowledged once that entry is synced. What was queued meanwhile is then
//! appended to the new file too (again on a task), and only when the new file holds everything
//! does `pod.json` point at it — so a crash at any moment leaves the pod wholly on its old
//! segment or wholly on the new one, and nothing acknowledged is lost.
//!
//! Everything else that could commit (answers, other requests, child and MCP messages) waits in
//! `deferred` until the switch is over, in arrival order; so the only entries the old segment
//! can gain meanwhile are `queued` ones, and a switch that finds anything else there gives up
//! rather than guess.

use std::sync::Arc;

use seedpod_protocol::{
    AlertLevel, Entry, EntryKind, ErrorCode, Origin, PodCommand, RequestId, SegmentId,
    SegmentStart, ServerMsg,
};
use seedpod_store::{Durability, SegmentState, SegmentWriter, new_segment_id};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::commands::{done, refuse};
use super::context::CompactionDone;
use super::route::{ControllerMethod, Deferred, Now};
use super::{Activity, Controller, ControllerMsg};

/// Why a new segment could not be put in place; the pod stays on its old one.
#[derive(Debug, thiserror::Error)]
pub enum SwitchError {
    #[error("the system prompt could not be rendered: {0}")]
    Render(#[from] crate::prompt::PromptError),
    #[error("the system prompt could not be rendered: its thread failed")]
    RenderThread,
    #[error("the new segment could not be written: {0}")]
    Write(#[from] seedpod_store::StoreError),
    #[error("the new segment does not fold: {0}")]
    Fold(String),
    #[error("pod.json could not be updated: {0}")]
    Meta(std::sync::Arc<seedpod_store::StoreError>),
    #[error("the conversation changed ({0}) while the new segment was written")]
    Changed(&'static str),
    #[error("the pod stopped before the new segment was in place")]
    Stopped,
}

/// Commands held while a segment switch is under way; past this the controller stops taking
/// commands (senders wait on the bounded queue) until the switch is over.
pub(super) const DEFERRED_CAPACITY: usize = 256;

/// What a new segment starts from besides the pod's settings.
pub(super) struct NewSegment {
    pub origin: Origin,
    pub seed: Vec<seedpod_protocol::ModelItem>,
    pub compaction: Option<seedpod_protocol::Compaction>,
    /// The task list the new segment starts with.
    pub tasks: Vec<seedpod_protocol::Task>,
}

/// What to do once the new segment is in place (or could not be).
pub(super) enum AfterSwitch {
    /// `/clear` from a client, answered then.
    Clear {
        id: RequestId,
        reply: oneshot::Sender<ServerMsg>,
        /// The segment cleared from.
        old: SegmentId,
    },
    /// A compaction's summary, committed as the new segment's start.
    Compaction(Box<CompactionDone>),
    /// The conversation moved under the compact prompt; the run task waits to send again.
    Recompose {
        reply: oneshot::Sender<Result<bool, seedpod_engine::HostError>>,
        /// The segment moved from.
        old: SegmentId,
    },
}

/// A switch under way.
pub(super) struct Switching {
    segment_id: SegmentId,
    /// How many of the old segment's entries the new file accounts for.
    accounted: usize,
    /// The task writing to the new file, aborted if the pod stops meanwhile.
    task: JoinHandle<()>,
    then: AfterSwitch,
}

/// The new file so far: its writer and every entry in it, in order.
pub struct Written {
    writer: SegmentWriter,
    entries: Vec<Entry>,
    alerts: Vec<String>,
}

/// A segment switch under way, and the commands that wait for its end, in order.
#[derive(Default)]
pub(super) struct Switch {
    pub(super) switching: Option<Switching>,
    pub(super) deferred: std::collections::VecDeque<ControllerMsg>,
}

/// Whether `cmd` must wait for the switch to end: anything that might commit, except the
/// queueing of notifications (a `notify` is acknowledged during a switch), and the run task's
/// own commands, which cannot come while it waits for its compaction.
pub(super) fn waits_for_switch(cmd: &ControllerMsg) -> bool {
    match cmd {
        ControllerMsg::Subscribe { .. }
        | ControllerMsg::Greet { .. }
        | ControllerMsg::History { .. }
        | ControllerMsg::ClientConnected
        | ControllerMsg::ClientDisconnected
        | ControllerMsg::Provisional { .. }
        | ControllerMsg::SyncFailed { .. }
        | ControllerMsg::SegmentWritten { .. } => false,
        ControllerMsg::Request { method, .. } => !matches!(
            method,
            ControllerMethod::Now(Now::Notify { .. } | Now::GetContext | Now::Status)
                | ControllerMethod::Deferred(
                    Deferred::Completions { .. } | Deferred::Earlier { .. } | Deferred::ModelList
                )
        ),
        _ => true,
    }
}

impl Controller {
    /// `/clear`: start a new segment. Only between turns, with nothing queued: a turn's calls
    /// and results belong to one segment, and queued items were received into this one.
    pub(super) fn clear(&mut self, id: RequestId, reply: oneshot::Sender<ServerMsg>) {
        let refusal =
            if !matches!(self.runs.activity, Activity::Idle) || self.log.state.open_run.is_some() {
                Some(format!(
                    "the pod is {}; /clear starts a new segment only between turns — wait for the \
                 turn to end or /cancel it first",
                    self.pod_state().as_str()
                ))
            } else if !self.log.state.pending.is_empty() {
                Some("inputs are still queued; /clear once they have run".to_string())
            } else {
                None
            };
        if let Some(message) = refusal {
            let _ = reply.send(refuse(id, ErrorCode::Busy, message));
            return;
        }
        let old = self.log.state.segment_id.clone();
        let new = NewSegment {
            origin: Origin::ClearedFrom {
                segment_id: old.clone(),
            },
            seed: Vec::new(),
            compaction: None,
            tasks: Vec::new(),
        };
        self.begin_switch(new, AfterSwitch::Clear { id, reply, old });
    }

    /// Start writing the new segment on a task; `then` runs when it is in place.
    pub(super) fn begin_switch(&mut self, new: NewSegment, then: AfterSwitch) {
        // The MCP servers' tools as they are now (a server restarting keeps offering what it
        // offered last). A window learned or configured since the last segment may call for
        // the other prompt mode.
        let mut specs: Vec<seedpod_protocol::ToolSpec> = self
            .runs
            .tools
            .specs()
            .into_iter()
            .filter(|s| crate::mcp::names::server_of(&s.name).is_none())
            .filter(|s| !crate::mcp::resources::is_resource_tool(&s.name))
            .collect();
        specs.extend(self.mcp.hub.offer());
        let model = self.log.state.model.clone();
        let planned = crate::segment_plan::plan(&crate::segment_plan::Plan {
            prompt: &self.session.prompt,
            pod_name: &self.pod.name,
            cwd: &self.pod.meta.cwd,
            model: &model.model,
            session_instructions: self.pod.meta.instructions.as_deref(),
            window: self.log.state.window.map(|w| w.tokens),
            specs: &specs,
            child_tools_in_compact: self.session.context.child_tools_in_compact,
            tool_search: self.session.tool_search,
            previous: &self.log.state.tools,
        });
        let segment_id = new_segment_id();
        let start = SegmentStart {
            segment_id: segment_id.clone(),
            system_prompt: String::new(),
            date: Some(planned.date.clone()),
            model,
            tools: planned.tools.clone(),
            seed: new.seed,
            standing_approvals: self.log.state.standing_approvals.clone(),
            origin: new.origin,
            context_window: self.log.state.window,
            compaction: new.compaction,
            tasks: new.tasks,
            totals: Some(Box::new(self.carried_totals())),
        };
        let carried = self.carried_over();
        let path = seedpod_store::segment_path(&self.pod.pod_dir, &segment_id);
        let tx = self.senders.commands.clone();
        let id = segment_id.clone();
        let task = tokio::spawn(async move {
            let result = write_new(path, planned, start, carried).await;
            let _ = tx
                .send(ControllerMsg::SegmentWritten {
                    segment_id: id,
                    result,
                })
                .await;
        });
        tracing::info!(event = "segment_switch_started", segment = %segment_id);
        self.switch.switching = Some(Switching {
            segment_id,
            accounted: self.log.entries.len(),
            task,
            then,
        });
    }

    /// The new file was written (or topped up), or could not be.
    pub(super) async fn segment_written(
        &mut self,
        segment_id: SegmentId,
        result: Result<Written, SwitchError>,
    ) {
        let current = self
            .switch
            .switching
            .as_ref()
            .is_some_and(|s| s.segment_id == segment_id);
        if !current {
            // A switch abandoned meanwhile (the pod is stopping): its file is not the pod's.
            if let Ok(written) = result {
                self.discard(&segment_id, written.writer);
            }
            return;
        }
        let mut written = match result {
            Ok(written) => written,
            Err(reason) => return self.switch_ended(Err(reason)).await,
        };
        for alert in std::mem::take(&mut written.alerts) {
            self.publish_alert(AlertLevel::Warn, alert);
        }
        let Some(switching) = self.switch.switching.as_mut() else {
            return;
        };
        // What the old segment gained while the file was written goes into the new one too.
        let gained: Vec<EntryKind> = self.log.entries[switching.accounted..]
            .iter()
            .map(|e| e.kind.clone())
            .collect();
        if let Some(other) = gained
            .iter()
            .find(|k| !matches!(k, EntryKind::Queued { .. }))
        {
            let reason = SwitchError::Changed(other.name());
            self.discard(&segment_id, written.writer);
            return self.switch_ended(Err(reason)).await;
        }
        if !gained.is_empty() {
            switching.accounted = self.log.entries.len();
            let tx = self.senders.commands.clone();
            switching.task = tokio::spawn(async move {
                let result = top_up(written, gained).await;
                let _ = tx
                    .send(ControllerMsg::SegmentWritten { segment_id, result })
                    .await;
            });
            return;
        }
        let result = self.move_to(written).await;
        self.switch_ended(result).await;
    }

    /// Point `pod.json` at the new file and make it the pod's segment.
    ///
    /// This is the one wait on the disk left in a switch: `pod.json` is replaced (a small file,
    /// renamed into place) while nothing else is committed, because an entry acknowledged in
    /// the old segment after this point would be lost by a crash.
    async fn move_to(&mut self, written: Written) -> Result<(), SwitchError> {
        let Written {
            writer, entries, ..
        } = written;
        let folded = fold_new(entries);
        let (state, entries) = match folded {
            Ok(folded) => folded,
            Err(reason) => {
                let id = self.switch.switching.as_ref().map(|s| s.segment_id.clone());
                self.discard(&id.unwrap_or_default(), writer);
                return Err(reason);
            }
        };
        let segment_id = state.segment_id.clone();
        let mut meta = self.pod.meta.clone();
        meta.active_segment = segment_id.clone();
        meta.segments.push(segment_id.clone());
        if let Err(err) = self.pod.meta_file.save(&meta).await {
            self.discard(&segment_id, writer);
            return Err(SwitchError::Meta(err));
        }
        // The old file is closed (and synced) on the side: nothing waits for it.
        let old = std::mem::replace(&mut self.log.writer, writer);
        tokio::spawn(async move {
            if let Err(err) = old.close().await {
                tracing::warn!(event = "store_close_failed", error = %err);
            }
        });
        self.pod.meta = meta;
        self.log.state = state;
        self.mcp
            .hub
            .register(&mut self.runs.tools, &self.log.state.tools);
        self.log.entries = entries.into_iter().map(Arc::new).collect();
        tracing::info!(event = "segment_started", segment = %segment_id);
        for entry in self.log.entries.clone() {
            self.audience.bus.publish(|seq| ServerMsg::Committed {
                seq,
                entry: (*entry).clone(),
            });
        }
        self.publish_fill();
        Ok(())
    }

    /// The switch is over: tell whoever asked for it.
    async fn switch_ended(&mut self, result: Result<(), SwitchError>) {
        let Some(switching) = self.switch.switching.take() else {
            return;
        };
        if let Err(reason) = &result {
            tracing::warn!(event = "segment_switch_failed", reason = %reason);
        }
        match switching.then {
            AfterSwitch::Clear { id, reply, old } => {
                let answer = match &result {
                    Ok(()) => done(
                        id,
                        PodCommand::Clear,
                        format!(
                            "started a new segment {}; the old one ({old}) stays in the log",
                            self.log.state.segment_id
                        ),
                    ),
                    Err(error) => {
                        // A queue that changed meanwhile is worth a retry; the disk failing
                        // is not something a retry mends.
                        let code = match error {
                            SwitchError::Changed(_) | SwitchError::Stopped => ErrorCode::Busy,
                            _ => ErrorCode::StorageFailed,
                        };
                        refuse(id, code, format!("nothing was changed: {error}"))
                    }
                };
                let _ = reply.send(answer);
                // What was queued meanwhile (a waking notification) runs now.
                self.after_run().await;
            }
            AfterSwitch::Compaction(done) => {
                self.compaction_switched(*done, result);
            }
            AfterSwitch::Recompose { reply, old } => {
                self.recomposed(reply, old, result);
                // A move made between runs: what was queued meanwhile runs now.
                self.after_run().await;
            }
        }
    }

    /// Drop a new segment's file that will not be used.
    fn discard(&self, segment_id: &SegmentId, writer: SegmentWriter) {
        let path = seedpod_store::segment_path(&self.pod.pod_dir, segment_id);
        tokio::spawn(async move {
            let _ = writer.close().await;
            if let Err(err) = tokio::fs::remove_file(&path).await
                && err.kind() != std::io::ErrorKind::NotFound
            {
                tracing::warn!(event = "segment_discard_failed", path = %path.display(), error = %err);
            }
        });
    }

    /// The pod is stopping mid-switch: the new file is not the pod's; `pod.json` still names
    /// the old segment, which holds everything.
    pub(super) fn abandon_switch(&mut self) {
        if let Some(switching) = self.switch.switching.take() {
            switching.task.abort();
            let path = seedpod_store::segment_path(&self.pod.pod_dir, &switching.segment_id);
            if let Err(err) = std::fs::remove_file(&path)
                && err.kind() != std::io::ErrorKind::NotFound
            {
                tracing::warn!(event = "segment_discard_failed", path = %path.display(), error = %err);
            }
            match switching.then {
                AfterSwitch::Clear { id, reply, .. } => {
                    let reason = SwitchError::Stopped.to_string();
                    let _ = reply.send(refuse(id, ErrorCode::Stopping, reason));
                }
                AfterSwitch::Compaction(done) => done.abandon(),
                AfterSwitch::Recompose { reply, .. } => {
                    let _ = reply.send(Err(seedpod_engine::HostError::Stopped));
                }
            }
        }
    }

    /// What a new segment must carry from the old one, as entries of the new one: the open run
    /// (ids and iteration count start afresh), every queued item under its own queue id, and the
    /// reports the parent has not taken (ids unchanged).
    /// The totals the new segment starts from. An open run is carried as a new `run_start`
    /// (see `carried_over`), which the new segment's fold counts again and times from its own
    /// timestamp: so it is taken out of `runs` here, and its time so far is added now.
    fn carried_totals(&self) -> seedpod_protocol::PodTotals {
        let state = &self.log.state;
        let mut totals = state.totals;
        if state.open_run.is_some() {
            totals.runs = totals.runs.saturating_sub(1);
            if let Some(started) = state.run_started_ts {
                let ms = seedpod_store::unix_ms().saturating_sub(started);
                totals.run_ms = totals.run_ms.saturating_add(ms);
            }
        }
        totals
    }

    fn carried_over(&self) -> Vec<EntryKind> {
        let mut kinds = Vec::new();
        if let Some(trigger) = self.log.state.open_run {
            kinds.push(EntryKind::RunStart { trigger });
        }
        for queued in &self.log.state.pending {
            kinds.push(EntryKind::Queued {
                queue_id: queued.queue_id,
                item: queued.item.clone(),
            });
        }
        for event in self.carried_reports() {
            kinds.push(EntryKind::Outbox { event });
        }
        kinds
    }
}

/// The new segment's state, folded from its entries.
fn fold_new(entries: Vec<Entry>) -> Result<(SegmentState, Vec<Entry>), SwitchError> {
    let first = entries
        .first()
        .ok_or_else(|| SwitchError::Fold("it has no start".into()))?;
    let mut state = SegmentState::start(first).map_err(|e| SwitchError::Fold(e.to_string()))?;
    for entry in &entries[1..] {
        state
            .apply(entry)
            .map_err(|e| SwitchError::Fold(e.to_string()))?;
    }
    Ok((state, entries))
}

/// Render the prompt, then write the new file: the start and what it carries, one fsync.
async fn write_new(
    path: std::path::PathBuf,
    planned: crate::segment_plan::Planned,
    mut start: SegmentStart,
    carried: Vec<EntryKind>,
) -> Result<Written, SwitchError> {
    // The instruction files are read on a blocking thread.
    let rendered = tokio::task::spawn_blocking(move || {
        #[cfg(test)]
        super::stall::point(&planned.inputs.cwd, super::stall::Step::Render);
        planned.render()
    })
    .await
    .map_err(|_| SwitchError::RenderThread)??;
    let alerts = rendered.alerts();
    start.system_prompt = rendered.text;
    // A compaction reports the context the next request carries: the new segment's own prompt
    // and tools (a prompt rendered afresh may be shorter or the compact one) with its seed —
    // the same estimate the gauge shows for the new segment (`estimate::request_tokens`).
    if let Some(compaction) = &mut start.compaction {
        compaction.tokens_after = crate::context::estimate::prompt_tokens(
            &start.system_prompt,
            &start.tools,
            &start.seed,
        );
    }
    let (writer, entries) = SegmentWriter::create_with(path, start, carried).await?;
    Ok(Written {
        writer,
        entries,
        alerts,
    })
}

/// Append what the old segment gained meanwhile, one fsync.
async fn top_up(mut written: Written, gained: Vec<EntryKind>) -> Result<Written, SwitchError> {
    for kind in gained {
        let entry = written.writer.append(kind, Durability::Buffered).await?;
        written.entries.push(entry);
    }
    written.writer.sync().await?;
    Ok(written)
}
