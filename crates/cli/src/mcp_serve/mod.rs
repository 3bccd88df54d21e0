//! `seedpod mcp serve NAME`: pod NAME as an MCP server on stdio, so another agent or an editor
//! can send it messages, read its history and status, and see its waiting approvals — and
//! answer them only when the person's own config says so (`[mcp_serve] answer_approvals`;
//! docs/design.md, invariant 6). Each tool call is one short connection to the pod's socket,
//! as any client makes; stdout carries the MCP protocol alone. `docs/mcp-serve.md` is the
//! user's reference.
//!
//! `tools.rs` declares the tools, `send.rs` sends and waits, this file serves and dispatches.

mod send;
mod tools;

use std::time::Duration;

use anyhow::{Context as _, Result};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt as _};
use seedpod_client::Home;
use seedpod_config::mcp_serve::McpServeSettings;
use seedpod_protocol::{ApprovalAnswer, CallId, ClientMode, Method, PodName, ServerMsg};
use serde_json::{Map, Value, json};

use self::tools::ServedTool;
use crate::{format, pods};

/// What a tool call answers: text for the client's model, and whether it is an error result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    pub text: String,
    pub is_error: bool,
}

impl Reply {
    pub fn text(text: impl Into<String>) -> Reply {
        Reply {
            text: text.into(),
            is_error: false,
        }
    }

    pub fn error(text: impl Into<String>) -> Reply {
        Reply {
            text: text.into(),
            is_error: true,
        }
    }
}

pub async fn serve(home: &Home, name: &PodName) -> Result<()> {
    // Read once, at start: a change to the person's config applies to the next server.
    let settings = McpServeSettings::load(&home.config)?;
    let server = PodServer {
        home: home.clone(),
        pod: name.clone(),
        settings,
    };
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .context("the MCP client did not complete the handshake")?;
    running
        .waiting()
        .await
        .context("the MCP session ended with an error")?;
    Ok(())
}

#[derive(Clone)]
struct PodServer {
    home: Home,
    pod: PodName,
    settings: McpServeSettings,
}

impl ServerHandler for PodServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("seedpod", env!("CARGO_PKG_VERSION")))
            .with_instructions(format!(
                "The seedpod agent pod \"{}\": send_message talks to it as its user; \
                 read_history and pod_status show what it did and does.",
                self.pod
            ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = ServedTool::ALL
            .into_iter()
            .map(|tool| {
                let schema = match tool.input_schema() {
                    Value::Object(map) => map,
                    _ => Map::new(),
                };
                Tool::new(tool.name(), tool.description(), std::sync::Arc::new(schema))
            })
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(tool) = ServedTool::from_name(&request.name) else {
            return Err(ErrorData::invalid_params(
                format!("no tool named {}", request.name),
                None,
            ));
        };
        let arguments = request.arguments.unwrap_or_default();
        let reply = self.call(tool, &arguments).await;
        let content = vec![ContentBlock::text(reply.text)];
        let result = if reply.is_error {
            CallToolResult::error(content)
        } else {
            CallToolResult::success(content)
        };
        Ok(result.into())
    }
}

impl PodServer {
    async fn call(&self, tool: ServedTool, arguments: &Map<String, Value>) -> Reply {
        let mut conn = match pods::connect(&self.home, &self.pod, ClientMode::Control).await {
            Ok(conn) => conn,
            Err(err) => return Reply::error(format!("{err:#}")),
        };
        match tool {
            ServedTool::SendMessage => {
                let Some(text) = arguments.get("text").and_then(Value::as_str) else {
                    return Reply::error("send_message needs `text`, the message to send");
                };
                if text.trim().is_empty() {
                    return Reply::error("the message is empty");
                }
                let wait = arguments
                    .get("wait")
                    .and_then(Value::as_bool)
                    .unwrap_or(true);
                let secs = arguments
                    .get("timeout_secs")
                    .and_then(Value::as_u64)
                    .unwrap_or(tools::DEFAULT_WAIT_SECS)
                    .clamp(1, tools::MAX_WAIT_SECS);
                send::send(&mut conn, text, wait.then(|| Duration::from_secs(secs))).await
            }
            ServedTool::ReadHistory => {
                let limit = arguments
                    .get("limit")
                    .and_then(Value::as_u64)
                    .map_or(tools::DEFAULT_HISTORY, |n| n as usize)
                    .clamp(1, tools::MAX_HISTORY);
                match conn.call(Method::GetHistory).await {
                    Ok(ServerMsg::History { entries, .. }) => {
                        let from = entries.len().saturating_sub(limit);
                        let lines: Vec<String> =
                            entries[from..].iter().map(format::entry_line).collect();
                        Reply::text(lines.join("\n"))
                    }
                    Ok(_) => {
                        Reply::error("the pod answered the history request with something else")
                    }
                    Err(err) => Reply::error(format!("{err:#}")),
                }
            }
            ServedTool::PodStatus | ServedTool::ListPendingApprovals => {
                let status = match conn.call(Method::Status).await {
                    Ok(ServerMsg::StatusReply { status, .. }) => status,
                    Ok(_) => {
                        return Reply::error(
                            "the pod answered the status request with something else",
                        );
                    }
                    Err(err) => return Reply::error(format!("{err:#}")),
                };
                let value = if tool == ServedTool::PodStatus {
                    json!({
                        "name": status.name,
                        "state": status.state,
                        "provider": status.provider,
                        "model": status.model,
                        "cwd": status.cwd,
                        "queued_inputs": status.queue.len(),
                        "waiting_for_approval": status.pending_approval.as_ref().map(|r| &r.summary),
                        "context": status.context,
                        "usage": status.usage,
                    })
                } else {
                    let pending: Vec<Value> = status
                        .pending_approval
                        .iter()
                        .map(|request| {
                            json!({
                                "call_id": request.call_id,
                                "tool": request.tool,
                                "summary": request.summary,
                                "arguments": request.arguments,
                            })
                        })
                        .collect();
                    Value::Array(pending)
                };
                Reply::text(value.to_string())
            }
            ServedTool::AnswerApproval => self.answer(&mut conn, arguments).await,
        }
    }

    /// `answer_approval`: only when the person's config allows it, and only once per call
    /// (never a standing approval).
    async fn answer(
        &self,
        conn: &mut seedpod_client::Connection,
        arguments: &Map<String, Value>,
    ) -> Reply {
        if !self.settings.answer_approvals {
            return Reply::error(format!(
                "answering approvals through MCP is off: only a person may approve what pod \
                 \"{pod}\" runs. They answer with `seedpod approve {pod}` (or in the TUI), or \
                 let MCP clients answer by setting [mcp_serve] answer_approvals = true in their \
                 own seedpod config.toml (a project's file cannot) and restarting this server",
                pod = self.pod
            ));
        }
        let Some(call_id) = arguments.get("call_id").and_then(Value::as_str) else {
            return Reply::error(
                "answer_approval needs `call_id` (list_pending_approvals gives it)",
            );
        };
        let (answer, reason) = match arguments.get("decision").and_then(Value::as_str) {
            Some("approve") => (ApprovalAnswer::Approve, None),
            Some("deny") => (
                ApprovalAnswer::Deny,
                Some(
                    arguments
                        .get("reason")
                        .and_then(Value::as_str)
                        .unwrap_or("denied by an MCP client")
                        .to_string(),
                ),
            ),
            _ => return Reply::error("`decision` must be \"approve\" or \"deny\""),
        };
        match conn
            .call(Method::Approve {
                call_id: Some(CallId::new(call_id)),
                answer,
                reason,
            })
            .await
        {
            Ok(ServerMsg::Ack { .. }) => Reply::text(match answer {
                ApprovalAnswer::Deny => format!("denied call {call_id}"),
                _ => format!("approved call {call_id} (this once)"),
            }),
            Ok(_) => Reply::error("the pod answered the approval with something else"),
            Err(err) => Reply::error(format!("the pod did not take the answer: {err:#}")),
        }
    }
}
