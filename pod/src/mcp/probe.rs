//! One connection to one server, as a pod makes it, for the hidden `seedpod mcp probe`: the
//! client under test when the MCP conformance suite drives seedpod (`scripts/mcp-conformance`,
//! docs/testing.md). It starts the server the way `server.rs` does, lists its tools, calls
//! the first and says what happened — nothing a pod keeps.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use rmcp::model::CallToolRequestParams;
use rmcp::service::ServiceError;
use seedpod_config::McpServer;
use tokio::sync::Notify;

use super::handler::Handler;
use super::server::start_for_probe;

/// Why a probe did not get through.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// The server wants a (new, or wider) login: `seedpod mcp login` and probe again.
    #[error("{0}")]
    NeedsLogin(String),
    #[error("{0}")]
    Failed(String),
}

/// Connect to `config`, list its tools and call the first with `arguments` (none: `{}`).
pub async fn probe(
    config: &McpServer,
    cwd: &Path,
    arguments: Option<serde_json::Value>,
) -> Result<String, ProbeError> {
    let handler = Handler::new(&config.name, Arc::new(Notify::new()));
    let live = start_for_probe(config, cwd, handler).await?;
    let mut report = format!(
        "{} offers {} tools: {}",
        config.name,
        live.tools.len(),
        live.tools
            .iter()
            .map(|t| t.original.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut outcome = Ok(());
    if let Some(tool) = live.tools.first() {
        let arguments = match arguments {
            Some(serde_json::Value::Object(map)) => map,
            _ => serde_json::Map::new(),
        };
        let params = CallToolRequestParams::new(tool.original.clone()).with_arguments(arguments);
        match live.peer.call_tool(params).await {
            Ok(result) => {
                let _ = write!(
                    report,
                    "\ncalled {}: {}",
                    tool.original,
                    if result.is_error == Some(true) {
                        "it answered with an error"
                    } else {
                        "ok"
                    }
                );
            }
            Err(err) => outcome = Err(call_failure(&tool.original, &err)),
        }
    }
    live.stop().await;
    outcome.map(|()| report)
}

fn call_failure(tool: &str, err: &ServiceError) -> ProbeError {
    let words = super::words::service_error(err);
    let (challenge, scope) = match err {
        ServiceError::TransportSend(error) => super::words::refusal(error.error.as_ref()),
        _ => (None, None),
    };
    if challenge.is_some() || scope.is_some() {
        return ProbeError::NeedsLogin(format!("calling {tool}: {words}"));
    }
    ProbeError::Failed(format!("calling {tool} failed: {words}"))
}
