//! A running tool call's progress (`tool_progress` frames): shown on the call's cell while the
//! call runs, gone when its result commits or its run stops. Display state only: a snapshot
//! carries none, so a client that attaches mid-call shows the next report.

use seedpod_protocol::{CallId, ToolProgress};

use super::cells::{CellKind, ToolStatus};
use super::transcript::Transcript;

impl Transcript {
    /// Show `progress` on the running call `call_id` (`None` clears it). A report for a call
    /// this client does not hold open (it ended, or began before what is loaded) changes
    /// nothing.
    pub(super) fn tool_progress(
        &mut self,
        call_id: &CallId,
        progress: Option<&ToolProgress>,
    ) -> bool {
        let Some(index) = self.open_calls.get(call_id).map(|call| call.index) else {
            return false;
        };
        let Some(cell) = self.cells.get_mut(index) else {
            return false;
        };
        let CellKind::ToolCall {
            status: ToolStatus::Running,
            progress: shown,
            ..
        } = &mut cell.kind
        else {
            return false;
        };
        if shown.as_ref() == progress {
            return false;
        }
        *shown = progress.cloned();
        cell.touch();
        true
    }

    /// Clear the progress of every open call.
    pub(super) fn clear_progress(&mut self) {
        let open: Vec<CallId> = self.open_calls.keys().cloned().collect();
        for call_id in open {
            self.tool_progress(&call_id, None);
        }
    }
}
