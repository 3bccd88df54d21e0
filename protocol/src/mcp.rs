//! What a pod says about its MCP servers (`mcp_servers`, answered with `mcp_servers`; the
//! TUI's `/mcp` and `seedpod mcp ls`): each server's state, its tools and why it is not
//! running when it is not.

use serde::{Deserialize, Serialize};

/// Where a server is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum McpState {
    /// Starting and initialising; its tools are listed once it answers.
    Starting,
    /// Running; its tools can be called.
    Ready,
    /// It died or could not start; the pod tries again after a pause.
    Restarting,
    /// It could not be started after several tries, or cannot be started at all (its command
    /// does not exist); the pod stopped trying. `seedpod restart` tries again.
    Failed,
    /// `enabled = false`, or left out for this pod (a child started without it).
    Disabled,
    /// The pod is stopping.
    Stopped,
    /// An HTTP server that wants an OAuth login (`seedpod mcp login SERVER`); the pod tries
    /// again once the login is done.
    NeedsLogin,
    #[serde(other)]
    Unknown,
}

impl McpState {
    pub fn as_str(self) -> &'static str {
        match self {
            McpState::Starting => "starting",
            McpState::Ready => "ready",
            McpState::Restarting => "restarting",
            McpState::Failed => "failed",
            McpState::Disabled => "disabled",
            McpState::Stopped => "stopped",
            McpState::NeedsLogin => "needs login",
            McpState::Unknown => "unknown",
        }
    }
}

/// What a person can do to one server of a running pod (`mcp_control`, the `/mcp` popup's
/// keys, `/mcp reconnect|disable|enable SERVER`). None of it outlives the pod: a restart starts
/// the servers as the configuration says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum McpAction {
    /// Stop it (calls in flight end with an error result) and start it again now, whatever
    /// state it was in, with a fresh count of tries.
    Reconnect,
    /// Stop it and start it no more: its tools leave the next segment's offer.
    Disable,
    /// Start a disabled (or failed) server.
    Enable,
    #[serde(other)]
    Unknown,
}

impl McpAction {
    pub const ALL: [McpAction; 3] = [McpAction::Reconnect, McpAction::Disable, McpAction::Enable];

    pub fn as_str(self) -> &'static str {
        match self {
            McpAction::Reconnect => "reconnect",
            McpAction::Disable => "disable",
            McpAction::Enable => "enable",
            McpAction::Unknown => "unknown",
        }
    }

    pub fn from_name(name: &str) -> Option<McpAction> {
        McpAction::ALL.into_iter().find(|a| a.as_str() == name)
    }
}

/// Whether a call of an MCP tool runs at once, waits for a person, or is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum McpApproval {
    Allow,
    Ask,
    Deny,
    #[serde(other)]
    Unknown,
}

impl McpApproval {
    pub fn as_str(self) -> &'static str {
        match self {
            McpApproval::Allow => "allow",
            McpApproval::Ask => "ask",
            McpApproval::Deny => "deny",
            McpApproval::Unknown => "unknown",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpToolStatus {
    /// The name the model calls it by (`mcp__SERVER__TOOL`).
    pub name: String,
    /// The server's own name for it.
    pub server_name: String,
    #[serde(default)]
    pub read_only: bool,
    pub approval: McpApproval,
    /// Offered in the pod's current segment (a tool the server added since is offered from
    /// the next one).
    #[serde(default)]
    pub offered: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpServerStatus {
    pub name: String,
    /// `stdio` or `http`.
    pub transport: String,
    pub state: McpState,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<McpToolStatus>,
    /// Why it is not running, or the last thing that went wrong.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// How many times it was started again after dying.
    #[serde(default)]
    pub restarts: u32,
    /// The process of a stdio server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
}

/// The listing people read (`/mcp`, `seedpod mcp ls`): one block per server.
pub fn render_servers(servers: &[McpServerStatus]) -> String {
    if servers.is_empty() {
        return "no MCP servers are configured for this pod; add one as [mcp.servers.NAME] in \
                config.toml (see docs/configuration.md)"
            .to_owned();
    }
    let mut out = String::new();
    for server in servers {
        let mut head = format!(
            "{} ({}): {}",
            server.name,
            server.transport,
            server.state.as_str()
        );
        if let Some(pid) = server.pid {
            head.push_str(&format!(", pid {pid}"));
        }
        if server.restarts > 0 {
            head.push_str(&format!(", restarted {} times", server.restarts));
        }
        out.push_str(&head);
        out.push('\n');
        if let Some(error) = &server.last_error {
            out.push_str(&format!("  last error: {error}\n"));
        }
        for tool in &server.tools {
            let mut line = format!("  {} ({})", tool.name, tool.approval.as_str());
            if tool.read_only {
                line.push_str(" read-only");
            }
            if !tool.offered {
                line.push_str(" — offered from the next segment");
            }
            out.push_str(&line);
            out.push('\n');
        }
    }
    out.trim_end().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_listing_says_why_a_server_is_down_and_what_each_tool_does() {
        let servers = vec![
            McpServerStatus {
                name: "t".into(),
                transport: "stdio".into(),
                state: McpState::Ready,
                tools: vec![McpToolStatus {
                    name: "mcp__t__echo".into(),
                    server_name: "echo".into(),
                    read_only: true,
                    approval: McpApproval::Ask,
                    offered: true,
                }],
                last_error: None,
                restarts: 1,
                pid: Some(42),
            },
            McpServerStatus {
                name: "gone".into(),
                transport: "stdio".into(),
                state: McpState::Failed,
                tools: Vec::new(),
                last_error: Some("cannot start `nope`: No such file or directory".into()),
                restarts: 0,
                pid: None,
            },
        ];
        assert_eq!(
            render_servers(&servers),
            "t (stdio): ready, pid 42, restarted 1 times\n  mcp__t__echo (ask) read-only\n\
             gone (stdio): failed\n  last error: cannot start `nope`: No such file or directory"
        );
        assert!(render_servers(&[]).contains("[mcp.servers.NAME]"));
    }

    #[test]
    fn actions_pin_their_wire_names_and_an_unknown_one_decodes_as_unknown() {
        for action in McpAction::ALL {
            let json = serde_json::to_string(&action).unwrap();
            assert_eq!(json, format!("\"{}\"", action.as_str()));
            assert_eq!(McpAction::from_name(action.as_str()), Some(action));
        }
        let later: McpAction = serde_json::from_str("\"restart_all\"").unwrap();
        assert_eq!(later, McpAction::Unknown);
        assert_eq!(McpAction::from_name("unknown"), None);
    }
}
