//! Pod-side commands (`/clear`, `/memory`, `/model`, `/help`): carried out by the pod so that
//! every client has them, whether it sends `command` or a `run` whose text is `/clear`.

use seedpod_protocol::{
    EntryKind, ErrorCode, ModelConfig, PodCommand, RequestId, Segment, ServerMsg,
};
use seedpod_store::Durability;

use tokio::sync::oneshot;

use super::Controller;
use super::route::LoopCommand;

pub(super) fn done(id: RequestId, command: PodCommand, message: impl Into<String>) -> ServerMsg {
    ServerMsg::CommandDone {
        id,
        command,
        message: message.into(),
    }
}

pub(super) fn refuse(id: RequestId, code: ErrorCode, message: impl Into<String>) -> ServerMsg {
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
(.seedpod/knowledge/slug.md), /slug a workflow (.seedpod/workflows/slug.md); an MCP server's
prompt is /mcp__SERVER__PROMPT [ARGS] and its resource @SERVER:URI.";

impl Controller {
    pub(super) async fn command(&mut self, id: RequestId, command: LoopCommand) -> ServerMsg {
        tracing::info!(
            event = "command",
            command = command.as_pod_command().as_str()
        );
        match command {
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

    /// `/memory TEXT`: the append is answered from a blocking thread, since it writes a file
    /// in the project; nothing of the pod's state changes.
    /// `/commit [hint]`: git is asked what changed off the loop; then the person's run starts
    /// (or queues) with that as its input, exactly like input they typed, and the reply is that
    /// run's acknowledgement. The model commits with `git_commit`, which asks first.
    pub(super) fn commit_command(
        &self,
        id: RequestId,
        hint: String,
        reply: oneshot::Sender<ServerMsg>,
    ) {
        let cwd = self.pod.meta.cwd.clone();
        let tx = self.senders.commands.clone();
        tokio::spawn(async move {
            match crate::git_commit::prepare(&cwd, hint.trim()).await {
                Ok(text) => {
                    let request = super::ControllerMsg::Request {
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
                    let _ = reply.send(refuse(id, ErrorCode::InvalidRequest, reason.to_string()));
                }
            }
        });
    }

    /// `/model` with no name: the model in use, and what the server offers to switch to
    /// (asked off the loop, bounded by the provider's timeouts).
    pub(super) fn model_list(&self, id: RequestId, reply: oneshot::Sender<ServerMsg>) {
        let current = self.log.state.model.clone();
        let cached = self.runs.model_list.fresh();
        let listing = self.runs.provider.list_models();
        let cache = self.runs.model_list.clone();
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

    pub(super) fn memory(&self, id: RequestId, text: &str, reply: oneshot::Sender<ServerMsg>) {
        let text = text.trim().to_string();
        if text.is_empty() {
            let _ = reply.send(refuse(
                id,
                ErrorCode::InvalidRequest,
                "usage: /memory TEXT — appends `* TEXT` to the project's AGENTS.md",
            ));
            return;
        }
        let cwd = self.pod.meta.cwd.clone();
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

    async fn switch_model(&mut self, id: RequestId, name: &str) -> ServerMsg {
        // `/model` with no name is answered off the loop (`model_list`); this one switches.
        let current = self.log.state.model.clone();
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
            .filter(|w| self.log.state.window != Some(*w))
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
        self.pod.meta.config.model = name.to_string();
        self.pod.meta_file.save_later(&self.pod.meta).await;
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
