//! Approval requests: each becomes one cell that its answer (or its run's end) updates in place,
//! and the ones still waiting are kept in order so the app can ask about the oldest.
//!
//! The rules are the pod's fold (`SegmentState`): an answer settles the pending request with
//! its call id; a `run_end` closes every request still pending (a cancelled run's request is no
//! longer pending); an answer to nothing pending changes nothing. Snapshot entries and live
//! `committed` events take the same path, so a reattached client sees the same pending request.

use seedpod_protocol::{ApprovalDecision, ApprovalRequest, CallId, PodState};

use super::cells::{ApprovalStatus, CellKind, ToolStatus};
use super::transcript::{PendingApproval, Transcript};

impl Transcript {
    /// The oldest request waiting for a person's answer.
    pub fn pending_approval(&self) -> Option<&ApprovalRequest> {
        self.view.pending_approval.as_ref()
    }

    pub(super) fn approval_request(&mut self, request: &ApprovalRequest) -> bool {
        let kind = CellKind::Approval {
            request: request.clone(),
            status: ApprovalStatus::Waiting,
        };
        let index = self.push_committed(kind, None);
        self.set_call_status(&request.call_id, ToolStatus::AwaitingApproval);
        self.pending_approvals.push(PendingApproval {
            request: request.clone(),
            index,
        });
        self.refresh_approval_view();
        true
    }

    pub(super) fn approval_answer(
        &mut self,
        call_id: &CallId,
        decision: &ApprovalDecision,
    ) -> bool {
        let Some(position) = self
            .pending_approvals
            .iter()
            .position(|p| &p.request.call_id == call_id)
        else {
            return false;
        };
        let pending = self.pending_approvals.remove(position);
        // Answered: the call runs now (or its error result arrives, for a denial).
        self.set_call_status(call_id, ToolStatus::Running);
        let status = match decision {
            ApprovalDecision::Approve => ApprovalStatus::Approved,
            ApprovalDecision::ApproveAlways(standing) => {
                ApprovalStatus::ApprovedAlways(standing.clone())
            }
            ApprovalDecision::Deny { reason } => ApprovalStatus::Denied {
                reason: reason.clone(),
            },
            ApprovalDecision::Unknown => ApprovalStatus::Unknown,
        };
        self.settle(pending.index, status);
        self.refresh_approval_view();
        true
    }

    /// The run ended (or a new segment began): what nobody answered is no longer pending.
    pub(super) fn close_approvals(&mut self) -> bool {
        let closed = std::mem::take(&mut self.pending_approvals);
        for pending in &closed {
            self.settle(pending.index, ApprovalStatus::Closed);
        }
        self.refresh_approval_view();
        !closed.is_empty()
    }

    /// Keep the status line's view in step with the requests and the pod's state: waiting when
    /// the pod says so or a request is pending (the request's entry may arrive before the
    /// `state` event, and a snapshot of a paused pod has only the entry).
    pub(super) fn refresh_approval_view(&mut self) {
        self.view.pending_approval = self.pending_approvals.first().map(|p| p.request.clone());
        self.view.waiting_for_approval =
            self.view.state == PodState::WaitingForApproval || !self.pending_approvals.is_empty();
    }

    fn settle(&mut self, index: usize, new_status: ApprovalStatus) {
        let Some(cell) = self.cells.get_mut(index) else {
            return;
        };
        if let CellKind::Approval { status, .. } = &mut cell.kind {
            *status = new_status;
            cell.touch();
        }
    }

    /// Set the status of the call cell for `call_id`, while it has no result yet.
    fn set_call_status(&mut self, call_id: &CallId, new: ToolStatus) {
        let Some(call) = self.open_calls.get(call_id) else {
            return;
        };
        let Some(cell) = self.cells.get_mut(call.index) else {
            return;
        };
        if let CellKind::ToolCall { status, .. } = &mut cell.kind
            && *status != new
        {
            *status = new;
            cell.touch();
        }
    }
}
