//! One client connection to a pod: connect, handshake, send requests, receive frames.

use std::path::Path;
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use interprocess::local_socket::tokio::Stream;
use interprocess::local_socket::tokio::prelude::*;
use interprocess::local_socket::{GenericFilePath, ToFsName};
use seedpod_protocol::{
    ClientMode, EventSeq, FrameCodec, FramesError, InstanceId, Method, PROTOCOL_VERSION, PodName,
    PodState, Request, RequestId, ServerMsg, encode,
};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::codec::{FramedRead, FramedWrite};

use crate::deadline;
use crate::error::ClientError;
use crate::paths::Home;

/// What the pod said when it accepted us.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Welcome {
    pub pod: PodName,
    pub server_version: String,
    pub state: PodState,
    pub instance: InstanceId,
    /// Last event seq before the welcome; `subscribe {since_seq}` from here misses nothing.
    pub seq: EventSeq,
}

/// The byte streams a connection runs over: a pod's socket, or a bridge's stdout and stdin
/// (`remote.rs`).
pub type Reader = Box<dyn AsyncRead + Send + Unpin>;
pub type Writer = Box<dyn AsyncWrite + Send + Unpin>;

pub struct Connection {
    name: PodName,
    /// The pod's process, when known (from its lock file), for "not answering" messages.
    pid: Option<u32>,
    /// How long to wait for the handshake and quick replies (`deadline.rs`).
    quick: Duration,
    reader: FramedRead<Reader, FrameCodec>,
    writer: FramedWrite<Writer, FrameCodec>,
    next_id: RequestId,
    pub welcome: Welcome,
    /// What else lives as long as the connection (a remote link's `ssh` process).
    _keep: Option<Box<dyn Send + Sync>>,
}

impl Connection {
    /// Connect to pod `name` under `home` and complete the handshake.
    pub async fn connect(
        home: &Home,
        name: &PodName,
        client: &str,
        mode: ClientMode,
    ) -> Result<Connection, ClientError> {
        home.check_runtime_dir()?;
        let pid = tokio::fs::read_to_string(home.lock_path(name))
            .await
            .ok()
            .and_then(|text| text.trim().parse().ok());
        Connection::open_and_greet(&home.socket_path(name), name, pid, client, mode).await
    }

    /// Connect to a socket path directly (parents and tests).
    pub async fn connect_path(
        socket: &Path,
        name: &PodName,
        client: &str,
        mode: ClientMode,
    ) -> Result<Connection, ClientError> {
        Connection::open_and_greet(socket, name, None, client, mode).await
    }

    async fn open_and_greet(
        socket: &Path,
        name: &PodName,
        pid: Option<u32>,
        client: &str,
        mode: ClientMode,
    ) -> Result<Connection, ClientError> {
        let quick = deadline::reply_timeout();
        let not_answering = |doing: &str| ClientError::NotAnswering {
            name: name.to_string(),
            pid,
            waited: quick,
            doing: doing.to_string(),
        };
        // A full listen backlog (a wedged pod) makes connect itself wait.
        let stream = tokio::time::timeout(quick, open(socket, name))
            .await
            .map_err(|_| not_answering("when connecting"))??;
        let (read, write) = tokio::io::split(stream);
        Connection::greet(
            Box::new(read),
            Box::new(write),
            None,
            name,
            pid,
            quick,
            client,
            mode,
        )
        .await
    }

    /// Complete the handshake over `reader` and `writer` (a bridge to a pod on another
    /// machine); `keep` lives as long as the connection.
    pub async fn over(
        reader: Reader,
        writer: Writer,
        keep: Option<Box<dyn Send + Sync>>,
        name: &PodName,
        quick: Duration,
        client: &str,
        mode: ClientMode,
    ) -> Result<Connection, ClientError> {
        Connection::greet(reader, writer, keep, name, None, quick, client, mode).await
    }

    #[allow(clippy::too_many_arguments)]
    async fn greet(
        reader: Reader,
        writer: Writer,
        keep: Option<Box<dyn Send + Sync>>,
        name: &PodName,
        pid: Option<u32>,
        quick: Duration,
        client: &str,
        mode: ClientMode,
    ) -> Result<Connection, ClientError> {
        let not_answering = |doing: &str| ClientError::NotAnswering {
            name: name.to_string(),
            pid,
            waited: quick,
            doing: doing.to_string(),
        };
        let mut conn = Connection {
            name: name.clone(),
            pid,
            quick,
            reader: FramedRead::new(reader, FrameCodec::for_client()),
            writer: FramedWrite::new(writer, FrameCodec::for_client()),
            next_id: RequestId::new(1),
            welcome: Welcome {
                pod: name.clone(),
                server_version: String::new(),
                state: PodState::Unknown,
                instance: InstanceId::default(),
                seq: EventSeq::new(0),
            },
            _keep: keep,
        };
        conn.send(Method::Hello {
            protocol: PROTOCOL_VERSION,
            client: client.to_string(),
            mode,
        })
        .await?;
        let first = tokio::time::timeout(quick, conn.recv())
            .await
            .map_err(|_| not_answering("to the handshake"))??;
        conn.welcome = welcome_from(first, name)?;
        Ok(conn)
    }

    /// Send a request; returns the id it was given.
    pub async fn send(&mut self, method: Method) -> Result<RequestId, ClientError> {
        let id = self.next_id;
        self.next_id = id.next();
        let line = encode(&Request {
            id: Some(id),
            method,
        });
        // The pod would close the connection on an oversized frame, and the writer would only
        // see "Broken pipe"; say what happened and what to do instead.
        if line.len() > seedpod_protocol::MAX_FRAME_BYTES {
            return Err(ClientError::Setup(too_large(line.len())));
        }
        self.send_line(line).await?;
        Ok(id)
    }

    /// Send a raw line as is (scripts' view of the protocol; tests of bad input).
    pub async fn send_line(&mut self, line: String) -> Result<(), ClientError> {
        self.writer.send(line).await.map_err(frames_error)
    }

    /// The next frame, or `None` when the pod closed the connection.
    pub async fn recv(&mut self) -> Result<Option<ServerMsg>, ClientError> {
        match self.reader.next().await {
            None => Ok(None),
            Some(Ok(line)) => serde_json::from_str(&line)
                .map(Some)
                .map_err(|e| ClientError::Protocol(format!("undecodable frame from pod: {e}"))),
            Some(Err(err)) => Err(frames_error(err)),
        }
    }

    /// The next raw line (for `--json` output that must pass frames through untouched).
    pub async fn recv_line(&mut self) -> Result<Option<String>, ClientError> {
        match self.reader.next().await {
            None => Ok(None),
            Some(Ok(line)) => Ok(Some(line)),
            Some(Err(err)) => Err(frames_error(err)),
        }
    }

    /// Send a request and wait for its reply (`ack`, a result, or `error`, matched by id). Live
    /// events that arrive meanwhile are skipped, so use it on control connections.
    /// A pod that sends nothing back within the method's deadline (`deadline.rs`) is reported
    /// as not answering.
    pub async fn call(&mut self, method: Method) -> Result<ServerMsg, ClientError> {
        let wait = deadline::for_method(&method, self.quick);
        let doing = format!("to {}", method.name());
        match tokio::time::timeout(wait, self.call_unbounded(method)).await {
            Ok(result) => result,
            Err(_) => Err(ClientError::NotAnswering {
                name: self.name.to_string(),
                pid: self.pid,
                waited: wait,
                doing,
            }),
        }
    }

    async fn call_unbounded(&mut self, method: Method) -> Result<ServerMsg, ClientError> {
        let id = self.send(method).await?;
        loop {
            let msg = self.recv().await?;
            if let Some(answer) = answer_to(id, msg, &self.name) {
                return answer;
            }
        }
    }

    pub fn name(&self) -> &PodName {
        &self.name
    }

    /// Keep `what` alive as long as the connection (a remote link's ssh process).
    pub fn keep(&mut self, what: Box<dyn Send + Sync>) {
        self._keep = Some(what);
    }
}

/// What the first frame of a connection says: the pod's welcome, or why there is none.
pub(crate) fn welcome_from(
    first: Option<ServerMsg>,
    name: &PodName,
) -> Result<Welcome, ClientError> {
    match first {
        Some(ServerMsg::Welcome {
            pod,
            server_version,
            state,
            instance,
            seq,
            ..
        }) => Ok(Welcome {
            pod,
            server_version,
            state,
            instance,
            seq,
        }),
        Some(ServerMsg::Incompatible { reason, supported }) => Err(ClientError::Incompatible {
            supported,
            reason: reason.replace("NAME", name.as_str()),
        }),
        Some(ServerMsg::Error { message, code, .. }) => Err(ClientError::Refused { code, message }),
        Some(other) => Err(ClientError::Protocol(format!(
            "expected welcome, got {}",
            encode(&other)
        ))),
        None => Err(ClientError::Closed {
            name: name.to_string(),
            reason: Some("during the handshake".into()),
        }),
    }
}

/// What a frame read while waiting for the reply to request `id` means: the reply (an `error`
/// reply is a refusal), the end of the connection, or `None` for a frame to skip (a live event).
pub(crate) fn answer_to(
    id: RequestId,
    msg: Option<ServerMsg>,
    name: &PodName,
) -> Option<Result<ServerMsg, ClientError>> {
    let Some(msg) = msg else {
        return Some(Err(ClientError::Closed {
            name: name.to_string(),
            reason: Some("before it answered".into()),
        }));
    };
    match (reply_id(&msg), msg) {
        (Some(reply), ServerMsg::Error { code, message, .. }) if reply == id => {
            Some(Err(ClientError::Refused { code, message }))
        }
        (Some(reply), other) if reply == id => Some(Ok(other)),
        (_, ServerMsg::Goodbye { message, .. }) => Some(Err(ClientError::Closed {
            name: name.to_string(),
            reason: Some(message),
        })),
        _ => None,
    }
}

/// The error for a request over the frame limit.
pub(crate) fn too_large(bytes: usize) -> String {
    format!(
        "the request is {:.1} MiB, over the {} MiB a pod accepts in one message; put the text \
         in a file in the pod's directory and send a message that names it (`@FILE`)",
        bytes as f64 / (1024.0 * 1024.0),
        seedpod_protocol::MAX_FRAME_BYTES / (1024 * 1024)
    )
}

pub(crate) fn frames_error(err: FramesError) -> ClientError {
    match err {
        FramesError::Io(io) => ClientError::Transport(io),
        other => ClientError::Protocol(format!("the pod's frames could not be read: {other}")),
    }
}

/// The request id a frame answers, if it is a reply.
pub fn reply_id(msg: &ServerMsg) -> Option<RequestId> {
    match msg {
        ServerMsg::Ack { id, .. }
        | ServerMsg::History { id, .. }
        | ServerMsg::Context { id, .. }
        | ServerMsg::StatusReply { id, .. }
        | ServerMsg::Completions { id, .. }
        | ServerMsg::CommandDone { id, .. }
        | ServerMsg::Spawned { id, .. }
        | ServerMsg::Earlier { id, .. }
        | ServerMsg::Approvals { id, .. }
        | ServerMsg::McpServers { id, .. } => Some(*id),
        ServerMsg::Error { id, .. } => *id,
        ServerMsg::Welcome { .. }
        | ServerMsg::Incompatible { .. }
        | ServerMsg::SnapshotBegin { .. }
        | ServerMsg::SnapshotEntries { .. }
        | ServerMsg::InFlight { .. }
        | ServerMsg::SnapshotEnd { .. }
        | ServerMsg::Committed { .. }
        | ServerMsg::TextDelta { .. }
        | ServerMsg::ThinkingDelta { .. }
        | ServerMsg::ToolCallDelta { .. }
        | ServerMsg::State { .. }
        | ServerMsg::Queued { .. }
        | ServerMsg::Alert { .. }
        | ServerMsg::Status { .. }
        | ServerMsg::ContextFill { .. }
        | ServerMsg::ToolProgress { .. }
        | ServerMsg::Goodbye { .. }
        | ServerMsg::Unknown => None,
    }
}

async fn open(socket: &Path, name: &PodName) -> Result<Stream, ClientError> {
    let fs_name = socket
        .to_fs_name::<GenericFilePath>()
        .map_err(|e| ClientError::io(socket, "name the socket", e))?;
    match Stream::connect(fs_name).await {
        Ok(stream) => Ok(stream),
        Err(err)
            if matches!(
                err.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused
            ) =>
        {
            Err(ClientError::NotRunning {
                name: name.to_string(),
            })
        }
        Err(err) => Err(ClientError::io(socket, "connect to", err)),
    }
}
