//! One `tools/call` under two time limits (docs/configuration.md §MCP servers). The idle limit
//! (`tool_timeout_secs`) starts again with each progress notification the server sends for the
//! call, so a call that keeps reporting runs on and one that stops reporting ends; rmcp resets
//! it (`reset_timeout_on_progress`). The total limit (`tool_max_secs`) does not: a call that
//! reports progress forever still ends. Past either, the server is told the call is cancelled;
//! so is it when the call is dropped before its answer (a pause, a cancel).
//!
//! While the call runs, its progress reports go to the pod's clients (`progress.rs`).

use std::time::Duration;

use rmcp::ServiceError;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotification,
    CancelledNotificationParam, ClientRequest, RequestId, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient};
use seedpod_protocol::CallId;
use tokio::sync::mpsc;

use super::McpEvent;
use super::progress::ProgressRoutes;

/// What the server is told when a call is dropped before its answer.
const STOPPED: &str = "the call was stopped";
/// What the server is told when a call passed its total limit.
const PAST_TOTAL: &str = "the call ran past its total time limit";

/// A call's time limits.
#[derive(Debug, Clone, Copy)]
pub(super) struct Limits {
    /// Without an answer or a progress report for this long, the call ends.
    pub(super) idle: Duration,
    /// The call ends this long after it was sent, reports or not.
    pub(super) total: Duration,
}

/// Where a call's progress reports go: the connection's routes, and the controller's queue
/// under the model's call id.
pub(super) struct Reporting {
    pub(super) routes: ProgressRoutes,
    pub(super) call_id: CallId,
    pub(super) events: mpsc::Sender<McpEvent>,
}

/// Why a call has no answer.
#[derive(Debug)]
pub(super) enum CallFailure {
    /// `Limits::idle` passed without an answer or a report.
    Idle,
    /// `Limits::total` passed.
    Total,
    Service(ServiceError),
}

/// Call the tool of `params` on `peer` within `limits`, its reports going where `reporting`
/// says.
pub(super) async fn call_tool(
    peer: &Peer<RoleClient>,
    params: CallToolRequestParams,
    limits: Limits,
    reporting: Option<Reporting>,
) -> Result<CallToolResult, CallFailure> {
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    let mut options = PeerRequestOptions::with_timeout(limits.idle);
    options.reset_timeout_on_progress = true;
    let total = tokio::time::sleep(limits.total);
    let handle = peer
        .send_request_with_option(request, options)
        .await
        .map_err(CallFailure::Service)?;
    // Opened once the request is under way, since only then is its token known; a report the
    // server sends before this line goes unshown (it still counts as life for the idle limit).
    let route = reporting.map(|to| (to.routes.open(handle.progress_token.clone()), to));
    let forwarding = async move {
        match route {
            Some((route, to)) => route.forward(to.call_id, to.events).await,
            None => std::future::pending().await,
        }
    };
    let mut abandoned = Abandoned {
        peer: peer.clone(),
        id: Some(handle.id.clone()),
        reason: STOPPED,
    };
    let answer = tokio::select! {
        answer = handle.await_response() => answer,
        () = total => {
            abandoned.reason = PAST_TOTAL;
            return Err(CallFailure::Total);
        }
        never = forwarding => match never {},
    };
    abandoned.id = None;
    match answer {
        Ok(ServerResult::CallToolResult(result)) => Ok(result),
        // A result without `content` decodes as an empty one: a call that answered nothing.
        Ok(ServerResult::EmptyResult(_)) => Ok(CallToolResult::default()),
        Ok(_) => Err(CallFailure::Service(ServiceError::UnexpectedResponse)),
        // Only the idle limit is rmcp's to keep: the total one is this function's.
        Err(ServiceError::Timeout { .. }) => Err(CallFailure::Idle),
        Err(err) => Err(CallFailure::Service(err)),
    }
}

/// Says to the server that the call is abandoned, when it is dropped before its answer.
struct Abandoned {
    peer: Peer<RoleClient>,
    id: Option<RequestId>,
    /// What the server is told.
    reason: &'static str,
}

impl Drop for Abandoned {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else {
            return;
        };
        let notification = CancelledNotification::new(CancelledNotificationParam::new(
            Some(id),
            Some(self.reason.to_owned()),
        ));
        let peer = self.peer.clone();
        // A drop cannot wait: the notification goes from a task of its own.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = peer.send_notification(notification.into()).await;
            });
        }
    }
}
