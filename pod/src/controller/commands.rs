//! Pod-side commands (`/clear`, `/memory`, `/model`, `/help`): carried out by the pod so that
//! every client has them, whether it sends `command` or a `run` whose text is `/clear`.

use std::sync::Arc;

use seedpod_protocol::{
    EntryKind, ErrorCode, ModelConfig, Origin, PodCommand, Segment, SegmentStart, ServerMsg,
};
use seedpod_store::{Durability, SegmentState, SegmentWriter, new_segment_id};

use tokio::sync::oneshot;

use super::route::LoopCommand;
use super::{Activity, Controller};

/// What a new segment starts from besides the pod's settings.
pub(super) struct NewSegment {
    pub origin: Origin,
    pub seed: Vec<seedpod_protocol::ModelItem>,
    pub compaction: Option<seedpod_protocol::Compaction>,
    /// The task list the new segment starts with.
    pub tasks: Vec<seedpod_protocol::Task>,
}

fn done(id: u64, command: PodCommand, message: impl Into<String>) -> ServerMsg {
    ServerMsg::CommandDone {
        id,
        command,
        message: message.into(),
    }
}

fn refuse(id: u64, code: ErrorCode, message: impl Into<String>) -> ServerMsg {
    ServerMsg::Error {
        id: Some(id),
        code,
        message: message.into(),
    }
}

/// `/name args` when a `run`'s input is exactly a pod command: typed text (`seedpod send NAME
/// /clear`) or the composer's command segment. Anything around it makes it ordinary input.
pub(super) fn as_command(segments: &[Segment]) -> Option<(PodCommand, String)> {
    match segments {
        [Segment::Text { text }] => PodCommand::parse(text),
        [Segment::WorkflowInvoke { slug, args }] => {
            PodCommand::from_name(slug).map(|command| (command, args.clone()))
        }
        _ => None,
    }
}

pub const HELP: &str =
    "Commands the pod carries out (from any client, or `seedpod send NAME /cmd`):
  /clear         start a new segment: empty history, a freshly rendered system prompt
                 (the old segment stays in the log)
  /compact [FOCUS]  summarise the conversation into a new segment that starts from the
                 summary and the last messages (the pod also does this by itself when the
                 context fills; the old segment stays in the log)
  /memory TEXT   append `* TEXT` to the project's AGENTS.md
  /model [NAME]  show or switch the model for the next requests
  /mcp [SERVER]  the MCP servers: state, tools and their approvals, why one is down
  /help          this list
References in a message: @path attaches a file or directory listing, #slug a knowledge note
(.seedpod/knowledge/slug.md), /slug a workflow (.seedpod/workflows/slug.md).";

impl Controller {
    pub(super) async fn command(&mut self, id: u64, command: LoopCommand) -> ServerMsg {
        tracing::info!(
            event = "command",
            command = command.as_pod_command().as_str()
        );
        match command {
            LoopCommand::Clear => self.clear(id).await,
            LoopCommand::Model { name } => self.switch_model(id, name.trim()).await,
            LoopCommand::Help => done(id, PodCommand::Help, HELP),
            LoopCommand::Mcp { server } => self.mcp_command(id, &server),
            LoopCommand::Unknown => refuse(
                id,
                ErrorCode::InvalidRequest,
                "unknown command; /help lists them",
            ),
        }
    }

    /// Start a new segment. Only between turns, with nothing queued: a turn's calls and
    /// results belong to one segment, and queued items were received into this one.
    async fn clear(&mut self, id: u64) -> ServerMsg {
        if !matches!(self.activity, Activity::Idle) || self.state.open_run.is_some() {
            return refuse(
                id,
                ErrorCode::Busy,
                format!(
                    "the pod is {}; /clear starts a new segment only between turns — wait for \
                     the turn to end or /cancel it first",
                    self.pod_state().as_str()
                ),
            );
        }
        if !self.state.pending.is_empty() {
            return refuse(
                id,
                ErrorCode::Busy,
                "inputs are still queued; /clear once they have run",
            );
        }
        let old = self.state.segment_id.clone();
        match self
            .start_segment(Origin::ClearedFrom {
                segment_id: old.clone(),
            })
            .await
        {
            Ok(()) => done(
                id,
                PodCommand::Clear,
                format!(
                    "started a new segment {}; the old one ({old}) stays in the log",
                    self.state.segment_id
                ),
            ),
            Err(message) => refuse(id, ErrorCode::StorageFailed, message),
        }
    }

    /// Close the active segment and continue in a new one with an empty history and a freshly
    /// rendered prompt (`/clear`).
    pub(super) async fn start_segment(&mut self, origin: Origin) -> Result<(), String> {
        self.switch_segment(NewSegment {
            origin,
            seed: Vec::new(),
            compaction: None,
            tasks: Vec::new(),
        })
        .await
    }

    /// Close the active segment and continue in a new one. Everything the old segment still
    /// owes is written into the new file *before* `pod.json` points at it — the open run (a
    /// compaction mid-turn), the durable queue, reports the parent has not taken — so a crash
    /// at any point leaves the pod either wholly on its old segment or wholly on the new one.
    pub(super) async fn switch_segment(&mut self, new: NewSegment) -> Result<(), String> {
        // The MCP servers' tools as they are now (a server restarting keeps offering what it
        // offered last). A window learned or configured since the last segment may call for
        // the other prompt mode.
        let mut specs: Vec<seedpod_protocol::ToolSpec> = self
            .tools
            .specs()
            .into_iter()
            .filter(|s| crate::mcp::names::server_of(&s.name).is_none())
            .collect();
        specs.extend(self.mcp.tool_specs());
        let model = self.state.model.clone();
        let planned = crate::segment_plan::plan(&crate::segment_plan::Plan {
            prompt: &self.session.prompt,
            pod_name: &self.name,
            cwd: &self.meta.cwd,
            model: &model.model,
            session_instructions: self.meta.instructions.as_deref(),
            window: self.state.window.map(|w| w.tokens),
            specs: &specs,
            child_tools_in_compact: self.session.context.child_tools_in_compact,
        });
        let crate::segment_plan::Planned { tools, inputs, .. } = planned;
        // The instruction files are read on a blocking thread; the segment switch waits for
        // them, but no runtime thread does.
        let rendered = tokio::task::spawn_blocking(move || crate::prompt::render_prompt(&inputs))
            .await
            .map_err(|_| "the system prompt could not be rendered: its thread failed".to_string())?
            .map_err(|e| format!("the system prompt could not be rendered: {e}"))?;
        for alert in rendered.alerts() {
            self.publish_alert(seedpod_protocol::AlertLevel::Warn, alert);
        }
        let segment_id = new_segment_id();
        let start = SegmentStart {
            segment_id: segment_id.clone(),
            system_prompt: rendered.text,
            model,
            tools,
            seed: new.seed,
            standing_approvals: self.state.standing_approvals.clone(),
            origin: new.origin,
            context_window: self.state.window,
            compaction: new.compaction,
            tasks: new.tasks,
        };
        let path = seedpod_store::segment_path(&self.pod_dir, &segment_id);
        let (writer, first) = SegmentWriter::create(path, start)
            .await
            .map_err(|e| format!("the new segment could not be written: {e}"))?;
        let mut state = SegmentState::start(&first).map_err(|e| e.to_string())?;
        let mut written = vec![first];
        for kind in self.carried_over() {
            let entry = writer
                .append(kind, Durability::Sync)
                .await
                .map_err(|e| format!("the new segment could not be written: {e}"))?;
            state.apply(&entry).map_err(|e| e.to_string())?;
            written.push(entry);
        }
        let mut meta = self.meta.clone();
        meta.active_segment = segment_id.clone();
        meta.segments.push(segment_id.clone());
        self.meta_file
            .save(&meta)
            .await
            .map_err(|e| format!("pod.json could not be updated: {e}"))?;
        let old = std::mem::replace(&mut self.writer, writer);
        if let Err(err) = old.close().await {
            tracing::warn!(event = "store_close_failed", error = %err);
        }
        self.meta = meta;
        self.state = state;
        self.mcp.register(&mut self.tools, &self.state.tools);
        self.entries = written.into_iter().map(Arc::new).collect();
        tracing::info!(event = "segment_started", segment = %segment_id);
        for entry in self.entries.clone() {
            self.bus.publish(|seq| ServerMsg::Committed {
                seq,
                entry: (*entry).clone(),
            });
        }
        self.publish_fill();
        Ok(())
    }

    /// What a new segment must carry from the old one, as entries of the new one: the open run
    /// (ids and iteration count start afresh), every queued item under its own queue id, and the
    /// reports the parent has not taken (ids unchanged).
    fn carried_over(&self) -> Vec<EntryKind> {
        let mut kinds = Vec::new();
        if let Some(trigger) = self.state.open_run {
            kinds.push(EntryKind::RunStart { trigger });
        }
        for queued in &self.state.pending {
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

    /// `/memory TEXT`: the append is answered from a blocking thread, since it writes a file
    /// in the project; nothing of the pod's state changes.
    /// `/commit [hint]`: git is asked what changed off the loop; then the person's run starts
    /// (or queues) with that as its input, exactly like input they typed, and the reply is that
    /// run's acknowledgement. The model commits with `git_commit`, which asks first.
    pub(super) fn commit_command(&self, id: u64, hint: String, reply: oneshot::Sender<ServerMsg>) {
        let cwd = self.meta.cwd.clone();
        let tx = self.senders.commands.clone();
        tokio::spawn(async move {
            match crate::git_commit::prepare(&cwd, hint.trim()).await {
                Ok(text) => {
                    let request = super::Command::Request {
                        id,
                        method: super::route::ControllerMethod::Now(super::route::Now::Input {
                            segments: vec![Segment::text(text)],
                            trigger: seedpod_protocol::RunTrigger::User,
                        }),
                        reply,
                    };
                    // A controller that is gone drops the reply: the client sees the pod leave.
                    let _ = tx.send(request).await;
                }
                Err(reason) => {
                    let _ = reply.send(refuse(id, ErrorCode::InvalidRequest, reason));
                }
            }
        });
    }

    /// `/model` with no name: the model in use, and what the server offers to switch to
    /// (asked off the loop, bounded by the provider's timeouts).
    pub(super) fn model_list(&self, id: u64, reply: oneshot::Sender<ServerMsg>) {
        let current = self.state.model.clone();
        let cached = self.model_list.fresh();
        let listing = self.provider.list_models();
        let cache = self.model_list.clone();
        tokio::spawn(async move {
            let now = format!("model: {} ({})", current.model, current.provider.as_str());
            // The list `/model NAME` completes from: fetched at most once a minute.
            let models = match cached {
                Some(models) => Ok(models),
                None => listing.await,
            };
            if let Ok(models) = &models {
                cache.store(models.clone());
            }
            let message = match models {
                Ok(models) if models.is_empty() => {
                    format!("{now}; the server lists no models; /model NAME switches")
                }
                Ok(mut models) => {
                    models.sort();
                    format!(
                        "{now}; the server offers {}: {}; /model NAME switches",
                        models.len(),
                        models.join(", ")
                    )
                }
                Err(reason) => format!("{now}; /model NAME switches ({reason})"),
            };
            let _ = reply.send(done(id, PodCommand::Model, message));
        });
    }

    pub(super) fn memory(&self, id: u64, text: &str, reply: oneshot::Sender<ServerMsg>) {
        let text = text.trim().to_string();
        if text.is_empty() {
            let _ = reply.send(refuse(
                id,
                ErrorCode::InvalidRequest,
                "usage: /memory TEXT — appends `* TEXT` to the project's AGENTS.md",
            ));
            return;
        }
        let cwd = self.meta.cwd.clone();
        let scope = self.session.scope.clone();
        tokio::task::spawn_blocking(move || {
            let answer = match crate::agents::append_memory(&cwd, &text, scope.as_deref()) {
                Ok(path) => done(
                    id,
                    PodCommand::Memory,
                    format!(
                        "added `* {text}` to {}; the model reads it from the next segment (/clear)",
                        path.display()
                    ),
                ),
                Err(err) => refuse(
                    id,
                    ErrorCode::Internal,
                    format!("could not append to AGENTS.md: {err}"),
                ),
            };
            let _ = reply.send(answer);
        });
    }

    async fn switch_model(&mut self, id: u64, name: &str) -> ServerMsg {
        // `/model` with no name is answered off the loop (`model_list`); this one switches.
        let current = self.state.model.clone();
        if name == current.model {
            return done(id, PodCommand::Model, format!("already using {name}"));
        }
        let model = ModelConfig {
            model: name.to_string(),
            ..current.clone()
        };
        if let Err(err) = self
            .commit(EntryKind::ConfigChanged { model }, Durability::Sync)
            .await
        {
            return err.to_reply(id);
        }
        // Another model has another window: what the configuration or the family table says
        // for it replaces the old one (a window learned from the old model's server too).
        if let Some(window) = crate::context::window::configured(&self.session.context, name)
            .filter(|w| self.state.window != Some(*w))
        {
            if let Err(err) = self
                .commit(EntryKind::ContextWindow(window), Durability::Sync)
                .await
            {
                return err.to_reply(id);
            }
            self.publish_fill();
        }
        // pod.json mirrors the log for `ls` and new segments; the log stays the authority.
        self.meta.config.model = name.to_string();
        self.meta_file.save_later(&self.meta).await;
        done(
            id,
            PodCommand::Model,
            format!(
                "switched to {name} (was {}) for the next requests",
                current.model
            ),
        )
    }
}
