//! The controller's side of child pods (DESIGN §7): the records in `pod.json`, the write scope
//! lent to children, the outbox of reports to this pod's own parent.

use seedpod_protocol::{ErrorCode, ServerMsg, SpawnRequest};
use tokio::sync::oneshot;

use super::Controller;

impl Controller {
    /// `spawn`: answered later on `reply`, once the child runs (or failed to start).
    pub(super) async fn spawn_child(
        &mut self,
        id: u64,
        request: SpawnRequest,
        reply: oneshot::Sender<ServerMsg>,
    ) {
        let _ = request;
        let _ = reply.send(ServerMsg::Error {
            id: Some(id),
            code: ErrorCode::Internal,
            message: "spawn is being built".into(),
        });
    }

    /// Retry undelivered reports to the parent now.
    pub(super) fn deliver_reports_now(&mut self) {}
}
