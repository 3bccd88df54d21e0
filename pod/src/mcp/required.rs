//! `required = true`: a pod does not start without such a server. The hub waits for the
//! first start of its required servers only (a pod without one says ready as before) and
//! gives the reason of the first that is not ready, for `seedpod start` to show.

use std::time::Duration;

use seedpod_protocol::McpState;

use super::McpHub;

impl McpHub {
    /// Why the pod must not start: a required server whose first start ended without it
    /// running. Waits (each within its startup timeout) only when a server is required.
    pub async fn required_failure(&self) -> Option<String> {
        let waits = self
            .inner
            .servers
            .iter()
            .filter(|slot| slot.required)
            .map(|slot| {
                let mut view = slot.view.clone();
                let limit = slot.startup_timeout + Duration::from_secs(1);
                async move {
                    let _ = tokio::time::timeout(limit, view.wait_for(|v| v.settled)).await;
                }
            });
        futures::future::join_all(waits).await;
        self.inner
            .servers
            .iter()
            .filter(|slot| slot.required)
            .find_map(|slot| {
                let view = slot.view.borrow();
                (view.state != McpState::Ready).then(|| {
                    let why = view.last_error.clone().unwrap_or_else(|| {
                        format!(
                            "it did not finish starting within {}s (startup_timeout_secs)",
                            slot.startup_timeout.as_secs()
                        )
                    });
                    format!("required MCP server {} could not start: {why}", slot.name)
                })
            })
    }
}
