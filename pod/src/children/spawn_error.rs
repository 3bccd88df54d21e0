//! Why a spawn started no child: the controller decides (`admit`, the limits) or the launch
//! task finds out, and `SpawnReply::send` says it to whoever asked — a client's error reply or
//! the `spawn_pod` tool's result, so every text here is worded for a person or the model.

use seedpod_client::Home;
use seedpod_client::launch::{LaunchError, log_tail, stderr_path};
use seedpod_protocol::PodName;
use seedpod_tools::{Access, Blocked, ScopeError};

use super::limits::Refusal;

/// Log lines of a child that did not come up, quoted after why.
const LOG_TAIL_LINES: usize = 10;

/// Why a spawn request started no child.
#[derive(Debug, thiserror::Error)]
pub enum SpawnRefused {
    /// `[children] max_depth` or `max_children` (`limits.rs`).
    #[error("no child started: {0}")]
    Limits(Refusal),
    /// `mcp_servers` names a server this pod does not run.
    #[error(
        "mcp_servers names \"{unknown}\", which is not one of this pod's MCP servers ({}); a \
         child can only get servers its parent runs",
        listed(running)
    )]
    UnknownMcpServer {
        unknown: String,
        /// The servers this pod runs.
        running: Vec<String>,
    },
    #[error("\"{0}\" is this pod's own name; pick another")]
    OwnName(PodName),
    /// A child of that name is recorded, or a pod directory of that name exists.
    #[error(
        "a pod named \"{0}\" exists already; pick another name (send_to_pod gives an existing \
         child more work)"
    )]
    NameTaken(PodName),
    #[error("the task is empty; say what the child should do")]
    EmptyTask,
    /// The pod has no configured scope and none could be made for its directory.
    #[error(transparent)]
    NoScope(ScopeError),
    /// The pod may not lend this path (it may not reach it itself, or it is protected).
    #[error("cannot delegate {} access: {}", access_word(*access), blocked.reason)]
    NotDelegable { access: Access, blocked: Blocked },
    /// The child was admitted and recorded, but its process did not come up (the record is
    /// dropped again).
    #[error("child pod {name} did not start: {cause}")]
    NotStarted { name: PodName, cause: LaunchFailed },
}

/// Why an admitted child's process did not come up.
#[derive(Debug, thiserror::Error)]
pub enum LaunchFailed {
    /// The running binary cannot be found to start the child with.
    #[error("cannot find the seedpod binary: {cause}")]
    NoBinary { cause: std::io::Error },
    /// The record must be on disk before the process starts, and it could not be written.
    #[error("the child could not be recorded in pod.json, so it was not started: {cause}")]
    NotRecorded {
        cause: std::sync::Arc<seedpod_store::StoreError>,
    },
    /// The process did not start or did not come up; `log_tail` holds its last log lines when
    /// it got as far as writing any.
    #[error("{cause}{}", tail(log_tail.as_deref()))]
    Launch {
        cause: LaunchError,
        log_tail: Option<String>,
    },
}

impl LaunchFailed {
    /// A launch failure, with the child's last log lines when it ran at all.
    pub fn launch(home: &Home, cause: LaunchError) -> LaunchFailed {
        let log_tail = match &cause {
            LaunchError::Exited { name, .. } | LaunchError::NotReady { name } => Some(log_tail(
                &[&home.log_path(name), &stderr_path(home, name)],
                LOG_TAIL_LINES,
            )),
            LaunchError::Io { .. } | LaunchError::Spawn(_) | LaunchError::Failed { .. } => None,
        };
        LaunchFailed::Launch { cause, log_tail }
    }
}

fn listed(running: &[String]) -> String {
    if running.is_empty() {
        "it has none".to_owned()
    } else {
        running.join(", ")
    }
}

fn access_word(access: Access) -> &'static str {
    match access {
        Access::Read => "read",
        Access::Write => "write",
    }
}

fn tail(lines: Option<&str>) -> String {
    lines.map(|lines| format!("\n{lines}")).unwrap_or_default()
}
