//! A person's input that names what an MCP server offers: `/mcp__SERVER__PROMPT args` (the
//! server is asked for the prompt off the loop; its text becomes the input) and `@SERVER:URI`
//! (checked against the server's list before anything is committed; read and attached like a
//! file by the run task, `attach.rs`). And the composer's completion of both.
//! docs/configuration.md §MCP prompts and resources.

use seedpod_protocol::{ErrorCode, RequestId, RunTrigger, Segment, ServerMsg};
use tokio::sync::oneshot;

use super::commands::refuse;
use super::route::{ControllerMethod, Now};
use super::{Controller, ControllerMsg};
use crate::completions::MAX_COMPLETIONS;
use crate::mcp::McpHub;

impl Controller {
    /// `/mcp__SERVER__PROMPT args`: ask the server for the prompt, then run its text as the
    /// person's input. A refusal (unknown prompt, missing argument, server down) is the reply,
    /// and nothing is committed.
    pub(super) fn mcp_prompt(
        &self,
        id: RequestId,
        command: String,
        args: String,
        reply: oneshot::Sender<ServerMsg>,
    ) {
        let hub = self.mcp.hub.clone();
        let tx = self.senders.commands.clone();
        tokio::spawn(async move {
            let text = match hub.prompt(&command) {
                Ok((server, prompt)) => hub.run_prompt(&server, &prompt, &args).await,
                Err(why) => Err(why),
            };
            match text {
                Ok(text) => {
                    tracing::info!(event = "mcp_prompt_run", command = %command, chars = text.len());
                    let request = ControllerMsg::Request {
                        id,
                        method: ControllerMethod::Now(Now::Input {
                            segments: vec![Segment::text(text)],
                            trigger: RunTrigger::User,
                        }),
                        reply,
                    };
                    // A controller that is gone drops the reply: the client sees the pod leave.
                    let _ = tx.send(request).await;
                }
                Err(why) => {
                    let _ = reply.send(refuse(id, ErrorCode::InvalidRequest, why));
                }
            }
        });
    }

    /// Why `segments` cannot be sent, if one of them is an `@SERVER:URI` of one of this pod's
    /// servers that it cannot attach (server down, no such resource).
    pub(super) fn mcp_references(&self, segments: &[Segment]) -> Option<String> {
        segments.iter().find_map(|segment| match segment {
            Segment::FileRef { path } => self.mcp.hub.check_reference(path)?.err(),
            Segment::Text { .. }
            | Segment::Paste { .. }
            | Segment::KnowledgeRef { .. }
            | Segment::WorkflowInvoke { .. }
            | Segment::Unknown => None,
        })
    }
}

/// `answer` (the pod's own completions) with what the MCP servers add: the prompts after the
/// workflows for `/`, and for `@SERVER:` the server's resources instead of files.
pub(super) fn with_mcp_completions(answer: ServerMsg, hub: &McpHub, prefix: &str) -> ServerMsg {
    let ServerMsg::Completions {
        id,
        kind,
        mut items,
        mut truncated,
    } = answer
    else {
        return answer;
    };
    match kind {
        seedpod_protocol::CompletionKind::Workflow => {
            items.extend(hub.prompt_completions(prefix));
        }
        seedpod_protocol::CompletionKind::File => {
            if let Some(resources) = hub.resource_completions(prefix) {
                items = resources;
                truncated = false;
            }
        }
        seedpod_protocol::CompletionKind::Command
        | seedpod_protocol::CompletionKind::Knowledge
        | seedpod_protocol::CompletionKind::Model
        | seedpod_protocol::CompletionKind::Unknown => {}
    }
    if items.len() > MAX_COMPLETIONS {
        items.truncate(MAX_COMPLETIONS);
        truncated = true;
    }
    ServerMsg::Completions {
        id,
        kind,
        items,
        truncated,
    }
}
