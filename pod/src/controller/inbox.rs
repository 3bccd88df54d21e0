//! The controller's queues. Its own commands (clients, the run task) come on one; each
//! subsystem that works off the controller — child pods, MCP servers, `read_paste` — has its
//! own, typed by what that subsystem may say, so none of them imports the controller.
//!
//! All are bounded: a sender waits when its queue is full, the controller's memory never grows.

use tokio::sync::mpsc;

use super::{CONTROLLER_QUEUE_CAPACITY, ControllerMsg};
use crate::children::{CHILD_QUEUE_CAPACITY, ChildMsg};
use crate::mcp::{MCP_QUEUE_CAPACITY, McpEvent};
use crate::paste::{PASTE_QUEUE_CAPACITY, PasteQuery};

/// The sending ends, cloned into whoever talks to the controller.
#[derive(Clone)]
pub struct Senders {
    pub commands: mpsc::Sender<ControllerMsg>,
    pub children: mpsc::Sender<ChildMsg>,
    pub mcp: mpsc::Sender<McpEvent>,
    pub pastes: mpsc::Sender<PasteQuery>,
    /// Hooks that failed, reported by whichever task ran them (`crate::hooks`).
    pub hooks: mpsc::Sender<String>,
}

/// The receiving ends, owned by the controller's run loop.
pub struct Receivers {
    pub(super) commands: mpsc::Receiver<ControllerMsg>,
    pub(super) children: mpsc::Receiver<ChildMsg>,
    pub(super) mcp: mpsc::Receiver<McpEvent>,
    pub(super) pastes: mpsc::Receiver<PasteQuery>,
    pub(super) hooks: mpsc::Receiver<String>,
}

/// Every queue, made before the controller when tools must hold a sender.
pub fn channels() -> (Senders, Receivers) {
    let (commands, commands_rx) = mpsc::channel(CONTROLLER_QUEUE_CAPACITY);
    let (children, children_rx) = mpsc::channel(CHILD_QUEUE_CAPACITY);
    let (mcp, mcp_rx) = mpsc::channel(MCP_QUEUE_CAPACITY);
    let (pastes, pastes_rx) = mpsc::channel(PASTE_QUEUE_CAPACITY);
    let (hooks, hooks_rx) = mpsc::channel(crate::hooks::HOOK_ALERT_CAPACITY);
    (
        Senders {
            commands,
            children,
            mcp,
            pastes,
            hooks,
        },
        Receivers {
            commands: commands_rx,
            children: children_rx,
            mcp: mcp_rx,
            pastes: pastes_rx,
            hooks: hooks_rx,
        },
    )
}
