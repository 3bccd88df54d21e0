//! The controller's side of MCP: what the servers' tasks report (a tool list to compare with
//! the segment's, an alert to publish) and the `mcp_servers` request and `/mcp` command.

use seedpod_protocol::{
    AlertLevel, ErrorCode, McpAction, PodCommand, RequestId, ServerMsg, ToolSpec,
    mcp::render_servers,
};

use super::Controller;
use crate::guard::{self, GuardMode};
use crate::mcp::{McpEvent, tools_changed_alert};

/// The pod's MCP servers: their tools, policies and state (`crate::mcp`), and what the guard
/// flagged in their descriptions.
pub(super) struct McpSide {
    pub(super) hub: crate::mcp::McpHub,
    /// MCP tools whose descriptions the guard flagged, by tool name: repeated to every client
    /// that attaches, like a failed server.
    pub(super) flags: std::collections::BTreeMap<String, String>,
}

impl Controller {
    pub(super) fn mcp_event(&mut self, event: McpEvent) {
        match event {
            McpEvent::Alert { level, message } => self.publish_alert(level, message),
            // Display state for the call's cell: published, never committed (docs/protocol.md
            // §Tool progress). A call ends its reports when it ends, so only a running pod
            // has any to show.
            McpEvent::Progress { call_id, progress } => {
                if matches!(self.runs.activity, super::Activity::Running { .. }) {
                    self.audience.bus.publish(|seq| ServerMsg::ToolProgress {
                        seq,
                        call_id,
                        progress,
                    });
                }
            }
            McpEvent::ToolsListed { server } => {
                let now = self.mcp.hub.server_specs(&server);
                // Callable from the next run on (offered once a segment lists them).
                self.mcp.hub.register(&mut self.runs.tools, &now);
                // The segment may offer its tools in the compact form: compare like for like.
                let mode =
                    crate::prompt::PromptMode::for_window(self.log.state.window.map(|w| w.tokens));
                let now = crate::prompt::tools_for_mode(&now, mode, true);
                // A segment that offers `tool_search` holds only the MCP tools it loaded, as
                // the server listed them when they were loaded: a search finds them as they
                // are now, so there is nothing to compare.
                let searching = self
                    .log
                    .state
                    .tools
                    .iter()
                    .any(|t| t.name == crate::tool_search::TOOL_SEARCH);
                if !searching
                    && let Some(message) = tools_changed_alert(&server, &self.log.state.tools, &now)
                {
                    self.publish_alert(AlertLevel::Warn, message);
                }
                self.guard_descriptions(&server, &now);
            }
        }
    }

    /// A tool's description reaches the model in every request: one written to steer it
    /// (an injection in a server's tool list) is worth a person's look. The tool is still
    /// offered (the person configured the server); the alert names it.
    fn guard_descriptions(&mut self, server: &str, specs: &[ToolSpec]) {
        if matches!(self.session.guard, GuardMode::Off) {
            return;
        }
        let prefix = format!("{}{server}__", crate::mcp::names::PREFIX);
        self.mcp.flags.retain(|name, _| !name.starts_with(&prefix));
        for spec in specs {
            let found = guard::scan(&spec.description);
            if found.is_empty() {
                continue;
            }
            let families: Vec<&str> = found.iter().map(|d| d.pattern.as_str()).collect();
            tracing::warn!(
                event = "security.injection_detected",
                source = %format!("MCP tool {} description", spec.name),
                patterns = ?families,
            );
            if matches!(self.session.guard, GuardMode::Log) {
                continue;
            }
            let message = format!(
                "the description of MCP tool {} (server {server}) reads like instructions to the \
                 model ({}); it is offered as the server lists it — check the server, or set \
                 [approvals] {} = \"deny\"",
                spec.name,
                families.join(", "),
                spec.name
            );
            self.mcp.flags.insert(spec.name.clone(), message.clone());
            self.publish_alert(AlertLevel::Warn, message);
        }
    }

    /// `mcp_servers`: every server, or the one named.
    pub(super) fn mcp_servers(&self, id: RequestId, server: Option<String>) -> ServerMsg {
        if let Some(name) = &server
            && !self.mcp.hub.has_server(name)
        {
            return ServerMsg::Error {
                id: Some(id),
                code: ErrorCode::InvalidRequest,
                message: self.no_such_server(name),
            };
        }
        ServerMsg::McpServers {
            id,
            servers: self
                .mcp
                .hub
                .status(server.as_deref(), &self.log.state.tools),
        }
    }

    /// `mcp_control`: reconnect, disable or enable one server; answered with every server's
    /// state once the action is under way.
    pub(super) fn mcp_control(&self, id: RequestId, server: &str, action: McpAction) -> ServerMsg {
        match self.control_server(server, action) {
            Ok(()) => ServerMsg::McpServers {
                id,
                servers: self.mcp.hub.status(None, &self.log.state.tools),
            },
            Err(message) => ServerMsg::Error {
                id: Some(id),
                code: ErrorCode::InvalidRequest,
                message,
            },
        }
    }

    fn control_server(&self, server: &str, action: McpAction) -> Result<(), String> {
        if !self.mcp.hub.has_server(server) {
            return Err(self.no_such_server(server));
        }
        self.mcp.hub.control(server, action)?;
        tracing::info!(event = "mcp_control", server, action = action.as_str());
        Ok(())
    }

    /// `/mcp [SERVER]`: the same listing as text; `/mcp reconnect|disable|enable SERVER` does
    /// what `mcp_control` does and says so.
    pub(super) fn mcp_command(&self, id: RequestId, args: &str) -> ServerMsg {
        let mut words = args.split_whitespace();
        if let (Some(action), Some(server), None) = (
            words.next().and_then(McpAction::from_name),
            words.next(),
            words.next(),
        ) {
            return match self.control_server(server, action) {
                Ok(()) => ServerMsg::CommandDone {
                    id,
                    command: PodCommand::Mcp,
                    message: match action {
                        McpAction::Reconnect => format!("MCP server {server}: reconnecting"),
                        McpAction::Disable => format!(
                            "MCP server {server}: disabled; its tools leave the next segment"
                        ),
                        McpAction::Enable | McpAction::Unknown => {
                            format!("MCP server {server}: starting")
                        }
                    },
                },
                Err(message) => ServerMsg::Error {
                    id: Some(id),
                    code: ErrorCode::InvalidRequest,
                    message,
                },
            };
        }
        let only = args.trim();
        if !only.is_empty() && !self.mcp.hub.has_server(only) {
            return ServerMsg::Error {
                id: Some(id),
                code: ErrorCode::InvalidRequest,
                message: self.no_such_server(only),
            };
        }
        let only = (!only.is_empty()).then_some(only);
        ServerMsg::CommandDone {
            id,
            command: PodCommand::Mcp,
            message: render_servers(&self.mcp.hub.status(only, &self.log.state.tools)),
        }
    }

    fn no_such_server(&self, name: &str) -> String {
        let all = self.mcp.hub.status(None, &[]);
        if all.is_empty() {
            return format!("no MCP server named {name}: this pod has none configured");
        }
        let names: Vec<&str> = all.iter().map(|s| s.name.as_str()).collect();
        format!(
            "no MCP server named {name}; this pod's servers: {}",
            names.join(", ")
        )
    }
}
