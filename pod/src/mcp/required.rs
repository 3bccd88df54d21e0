//! `required = true`: a pod does not start without such a server. The hub waits for the
//! first start of its required servers only (a pod without one says ready as before) and
//! gives the reason of the first that is not ready, for `seedpod start` to show.

use seedpod_protocol::McpState;

use super::McpHub;

impl McpHub {
    /// Why the pod must not start: a required server whose first start ended without it
    /// running. Waits (each within its startup timeout) only when a server is required.
    pub async fn required_failure(&self) -> Option<String> {
        if !self.inner.servers.iter().any(|slot| slot.required) {
            return None;
        }
        self.settle().await;
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
