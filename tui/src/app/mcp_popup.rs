//! `/mcp`: the attached pod's MCP servers, asked from the pod when the popup opens, with keys
//! to reconnect (`r`), disable (`d`) and enable (`e`) the selected one. The pod answers each
//! action with every server's state, and the popup asks again whenever the pod publishes an
//! alert (a server came up, died or changed its tools), so it shows what the pod holds.

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use seedpod_protocol::{McpAction, McpServerStatus, Method, ServerMsg};

use super::{App, Effect, FlashLevel, Overlay, Pending};

/// The popup's state: `servers` is `None` until the pod answers.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct McpPopup {
    pub servers: Option<Vec<McpServerStatus>>,
    pub selected: usize,
}

impl McpPopup {
    fn chosen(&self) -> Option<&McpServerStatus> {
        self.servers.as_ref()?.get(self.selected)
    }
}

impl App {
    /// `/mcp` alone: open the popup and ask the pod for its servers.
    pub(super) fn open_mcp(&mut self, now: Instant) -> Vec<Effect> {
        if !self.is_connected() {
            self.flash(
                FlashLevel::Warn,
                "not connected to the pod; `seedpod mcp ls NAME` lists its servers from a shell",
                now,
            );
            return Vec::new();
        }
        self.overlay = Overlay::Mcp(McpPopup::default());
        vec![self.request(Pending::McpServers, Method::McpServers { server: None })]
    }

    pub(super) fn mcp_key(
        &mut self,
        mut popup: McpPopup,
        key: &KeyEvent,
        now: Instant,
    ) -> (Overlay, Vec<Effect>) {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let count = popup.servers.as_ref().map_or(0, Vec::len);
        let action = match key.code {
            KeyCode::Up | KeyCode::Char('k') => {
                popup.selected = popup.selected.saturating_sub(1);
                None
            }
            KeyCode::Down | KeyCode::Char('j') => {
                popup.selected = (popup.selected + 1).min(count.saturating_sub(1));
                None
            }
            KeyCode::Char('c') if ctrl => return (Overlay::None, Vec::new()),
            KeyCode::Char('r') => Some(McpAction::Reconnect),
            KeyCode::Char('d') => Some(McpAction::Disable),
            KeyCode::Char('e') => Some(McpAction::Enable),
            // Any other key closes it, as the listing it replaced did.
            _ => return (Overlay::None, Vec::new()),
        };
        let (Some(action), Some(server)) = (action, popup.chosen().map(|s| s.name.clone())) else {
            return (Overlay::Mcp(popup), Vec::new());
        };
        self.flash(
            FlashLevel::Info,
            format!("MCP server {server}: {}…", action.as_str()),
            now,
        );
        let effect = self.request(Pending::McpServers, Method::McpControl { server, action });
        (Overlay::Mcp(popup), vec![effect])
    }

    /// The pod's servers (after `mcp_servers` or an action).
    pub(super) fn mcp_listed(&mut self, servers: Vec<McpServerStatus>) {
        if let Overlay::Mcp(popup) = &mut self.overlay {
            popup.selected = popup.selected.min(servers.len().saturating_sub(1));
            popup.servers = Some(servers);
        }
    }

    /// An action refused (or the list not given): the popup stays, with the pod's reason.
    pub(super) fn mcp_failed(&mut self, reason: &str, now: Instant) {
        if matches!(self.overlay, Overlay::Mcp(McpPopup { servers: None, .. })) {
            self.overlay = Overlay::None;
        }
        self.flash(FlashLevel::Error, format!("/mcp: {reason}"), now);
    }

    /// While the popup is open, an alert (what servers say when they change) refreshes it.
    pub(super) fn mcp_changed(&mut self, msg: &ServerMsg) -> Vec<Effect> {
        if !matches!(self.overlay, Overlay::Mcp(_)) || !matches!(msg, ServerMsg::Alert { .. }) {
            return Vec::new();
        }
        if self.is_pending(|p| matches!(p, Pending::McpServers)) {
            return Vec::new();
        }
        vec![self.request(Pending::McpServers, Method::McpServers { server: None })]
    }
}
