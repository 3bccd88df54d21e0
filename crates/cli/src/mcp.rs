//! `seedpod mcp ls NAME`: the pod's MCP servers as it sees them now (state, tools and their
//! approvals, the last error). Asked of the running pod: a server's state lives in its process.

use anyhow::Result;
use seedpod_client::Home;
use seedpod_protocol::{ClientMode, Method, PodName, ServerMsg, mcp::render_servers};

use crate::exit::Exit;
use crate::pods;

pub async fn ls(home: &Home, name: &PodName, server: Option<String>, json: bool) -> Result<()> {
    let mut conn = pods::connect(home, name, ClientMode::Control).await?;
    match conn.call(Method::McpServers { server }).await {
        Ok(ServerMsg::McpServers { servers, .. }) => {
            if json {
                let text = serde_json::to_string(&servers)
                    .map_err(|e| Exit::failure(format!("could not encode the listing: {e}")))?;
                println!("{text}");
            } else {
                for line in render_servers(&servers).lines() {
                    println!("{}", seedpod_protocol::printable_line(line));
                }
            }
            Ok(())
        }
        Ok(ServerMsg::Error { message, .. }) => Err(Exit::usage(message)),
        Ok(other) => Err(Exit::failure(format!(
            "unexpected answer: {}",
            seedpod_protocol::encode(&other)
        ))),
        Err(err) => Err(err.into()),
    }
}
