//! The provisional in-flight block: text, thinking and tool calls streaming right now. Deltas
//! only paint these cells; when an entry commits, its provisional cell is taken out and the
//! committed cell takes its place (and its id).

use seedpod_protocol::{CallId, InFlightToolCall};

use super::cells::{Cell, CellKind, ToolStatus};
use super::transcript::Transcript;

/// What a provisional cell stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum LiveRole {
    Thinking,
    Text,
    /// A streaming tool call, by its index in the model's response.
    Tool(u32),
}

impl Transcript {
    /// Whether anything is streaming.
    pub fn is_streaming(&self) -> bool {
        !self.live.is_empty()
    }

    pub(super) fn live_text(&mut self, delta: &str) {
        let cell = self.live_cell(LiveRole::Text);
        if let CellKind::AssistantText { text, .. } = &mut cell.kind {
            text.push_str(delta);
        }
        cell.touch();
    }

    pub(super) fn live_thinking(&mut self, delta: &str) {
        let cell = self.live_cell(LiveRole::Thinking);
        if let CellKind::Thinking { text, .. } = &mut cell.kind {
            text.push_str(delta);
        }
        cell.touch();
    }

    /// A tool call delta: the first one for an index names the call, later ones carry more of
    /// its arguments.
    pub(super) fn live_tool(
        &mut self,
        index: u32,
        new_call_id: Option<&CallId>,
        new_name: Option<&str>,
        delta: &str,
    ) {
        let cell = self.live_cell(LiveRole::Tool(index));
        if let CellKind::ToolCall {
            call_id,
            name,
            arguments,
            ..
        } = &mut cell.kind
        {
            if let Some(id) = new_call_id {
                *call_id = id.clone();
            }
            if let Some(n) = new_name {
                *name = n.to_string();
            }
            arguments.push_str(delta);
        }
        cell.touch();
    }

    /// Replace the provisional block with a snapshot's `in_flight` frame.
    pub(super) fn set_live(&mut self, text: &str, thinking: &str, calls: &[InFlightToolCall]) {
        self.clear_live();
        if !thinking.is_empty() {
            self.live_thinking(thinking);
        }
        if !text.is_empty() {
            self.live_text(text);
        }
        for call in calls {
            self.live_tool(
                call.index,
                Some(&call.call_id),
                Some(&call.name),
                &call.arguments,
            );
        }
    }

    pub(super) fn clear_live(&mut self) -> bool {
        let had = !self.live.is_empty();
        self.cells.truncate(self.committed);
        self.live.clear();
        had
    }

    /// Take out the provisional cell that an entry now commits, if there is one.
    pub(super) fn take_live(&mut self, role: LiveRole) -> Option<Cell> {
        let position = self.live.iter().position(|r| *r == role)?;
        self.live.remove(position);
        Some(self.cells.remove(self.committed + position))
    }

    /// The provisional tool call cell with this call id, if it is streaming.
    pub(super) fn live_tool_role(&self, call_id: &CallId) -> Option<LiveRole> {
        self.live
            .iter()
            .zip(&self.cells[self.committed..])
            .find_map(|(role, cell)| {
                let is_call =
                    matches!(&cell.kind, CellKind::ToolCall { call_id: id, .. } if id == call_id);
                is_call.then_some(*role)
            })
    }

    /// The provisional cell for `role`, created at the end of the block on first use.
    fn live_cell(&mut self, role: LiveRole) -> &mut Cell {
        let position = match self.live.iter().position(|r| *r == role) {
            Some(position) => position,
            None => {
                let kind = match role {
                    LiveRole::Thinking => CellKind::Thinking {
                        text: String::new(),
                        streaming: true,
                    },
                    LiveRole::Text => CellKind::AssistantText {
                        text: String::new(),
                        streaming: true,
                        interrupted: false,
                    },
                    LiveRole::Tool(_) => CellKind::ToolCall {
                        call_id: CallId::default(),
                        name: String::new(),
                        arguments: String::new(),
                        status: ToolStatus::Running,
                        output: String::new(),
                        duration_ms: None,
                        outcome: None,
                        progress: None,
                    },
                };
                let cell = Cell::new(self.fresh_id(), kind);
                self.cells.push(cell);
                self.live.push(role);
                self.live.len() - 1
            }
        };
        let index = self.committed + position;
        &mut self.cells[index]
    }
}
