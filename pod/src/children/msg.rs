//! The messages child-pod tasks and tools send the controller, on their own queue: this module
//! is all they know of it.

use seedpod_protocol::{
    ErrorCode, PodEvent, PodName, ReportId, RequestId, ServerMsg, SpawnRequest,
};
use seedpod_store::{ChildRecord, OutputCursor};
use tokio::sync::oneshot;

use super::limits::Refusal;
use super::spawn_error::{LaunchFailed, SpawnRefused};

/// Messages on the children's queue (bounded: a sender waits when it is full).
pub const CHILD_QUEUE_CAPACITY: usize = 64;

/// Messages from child-pod tasks and tools to the controller.
pub enum ChildMsg {
    /// Start a child (from the `spawn_pod` tool; clients use `Method::Spawn`).
    Spawn {
        request: SpawnRequest,
        reply: SpawnReply,
    },
    /// The child process started, or failed to.
    Launched {
        name: PodName,
        /// The child's socket path, or why it did not come up.
        result: Result<String, LaunchFailed>,
        reply: SpawnReply,
    },
    /// The records as they are now.
    Records {
        reply: oneshot::Sender<Vec<ChildRecord>>,
    },
    /// A probe (or a conversation) found the child running or not.
    Liveness { name: PodName, live: bool },
    /// `read_pod_output` read up to here.
    Cursor { name: PodName, cursor: OutputCursor },
    /// The parent acknowledged one of this pod's reports.
    Delivered { event_id: ReportId },
    /// Reports a stopped child left undelivered in its log, read by a relink.
    Reports { events: Vec<PodEvent> },
    /// `send_to_pod` is about to restore a stopped child: count it live if `max_children`
    /// allows, in the same step as the check (`children/limits.rs`).
    Revive {
        name: PodName,
        reply: oneshot::Sender<Result<(), Refusal>>,
    },
}

/// Who asked for a spawn, and so how the answer is sent.
pub enum SpawnReply {
    Client {
        id: RequestId,
        reply: oneshot::Sender<ServerMsg>,
    },
    /// The `spawn_pod` tool: what it tells the model, or why no child started.
    Tool(oneshot::Sender<Result<String, SpawnRefused>>),
}

impl SpawnReply {
    /// Answer with the started child's name and socket, or why none started.
    pub fn send(self, result: Result<(PodName, String), SpawnRefused>) {
        match self {
            SpawnReply::Client { id, reply } => {
                let msg = match result {
                    Ok((name, socket)) => ServerMsg::Spawned { id, name, socket },
                    Err(refused) => ServerMsg::Error {
                        id: Some(id),
                        code: ErrorCode::InvalidRequest,
                        message: refused.to_string(),
                    },
                };
                let _ = reply.send(msg);
            }
            SpawnReply::Tool(reply) => {
                let _ = reply.send(result.map(|(name, socket)| {
                    format!(
                        "started child pod {name} (socket {socket}); it is working on its task \
                         now. You get a pod_event when it finishes a turn; read_pod_output \
                         {name} shows what it did, send_to_pod gives it more to do."
                    )
                }));
            }
        }
    }
}
