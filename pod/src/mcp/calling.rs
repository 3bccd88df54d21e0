//! One `tools/call` whose time limit is an idle limit: each progress notification the server
//! sends for the call starts its `tool_timeout_secs` again, so a call that keeps reporting
//! progress runs on and one that stops reporting ends (docs/configuration.md §MCP servers).
//! rmcp resets the limit (`reset_timeout_on_progress`) and, when it passes, tells the server
//! the call is cancelled; a call dropped before its answer (a pause, a cancel) tells it too.

use std::time::Duration;

use rmcp::ServiceError;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotification,
    CancelledNotificationParam, ClientRequest, RequestId, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient};

/// Call the tool of `params` on `peer`; `Err(ServiceError::Timeout)` when `idle` passed without
/// an answer or a progress notification.
pub(super) async fn call_tool(
    peer: &Peer<RoleClient>,
    params: CallToolRequestParams,
    idle: Duration,
) -> Result<CallToolResult, ServiceError> {
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    let mut options = PeerRequestOptions::with_timeout(idle);
    options.reset_timeout_on_progress = true;
    let handle = peer.send_request_with_option(request, options).await?;
    let mut abandoned = Abandoned {
        peer: peer.clone(),
        id: Some(handle.id.clone()),
    };
    let answer = handle.await_response().await;
    abandoned.id = None;
    match answer? {
        ServerResult::CallToolResult(result) => Ok(result),
        // A result without `content` decodes as an empty one: a call that answered nothing.
        ServerResult::EmptyResult(_) => Ok(CallToolResult::default()),
        _ => Err(ServiceError::UnexpectedResponse),
    }
}

/// Says to the server that the call is abandoned, when it is dropped before its answer.
struct Abandoned {
    peer: Peer<RoleClient>,
    id: Option<RequestId>,
}

impl Drop for Abandoned {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else {
            return;
        };
        let notification = CancelledNotification::new(CancelledNotificationParam::new(
            Some(id),
            Some("the call was stopped".to_owned()),
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
