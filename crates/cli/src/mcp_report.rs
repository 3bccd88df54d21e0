//! What `seedpod start` says about MCP servers once the pod is ready: one line for each
//! server that already failed. A new pod says ready after its servers' first start, so it
//! knows them all; a restored pod does not wait, so a server still starting is not reported
//! (`seedpod mcp ls` shows it later). A server with `required = true` never gets here: the
//! pod refuses to start without it.

use seedpod_client::Home;
use seedpod_protocol::{ClientMode, McpState, Method, PodName, ServerMsg};

use crate::pods;

/// Print each server of pod `name` that failed to start, on stderr (stdout is the pod's name
/// for scripts). Says nothing when the pod cannot be asked: the start itself succeeded.
pub async fn report_failed(home: &Home, name: &PodName) {
    let Ok(mut conn) = pods::connect(home, name, ClientMode::Control).await else {
        return;
    };
    let Ok(ServerMsg::McpServers { servers, .. }) =
        conn.call(Method::McpServers { server: None }).await
    else {
        return;
    };
    for server in servers {
        let failed = match server.state {
            McpState::Failed | McpState::Restarting | McpState::NeedsLogin => true,
            McpState::Starting
            | McpState::Ready
            | McpState::Disabled
            | McpState::Stopped
            | McpState::Unknown => false,
        };
        if failed {
            let why = server.last_error.as_deref().unwrap_or("no reason given");
            eprintln!(
                "warning: MCP server {} failed to start: {}",
                server.name,
                seedpod_protocol::printable_line(why)
            );
        }
    }
}
