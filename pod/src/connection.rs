//! One client connection: handshake, then requests in, replies and events out.
//!
//! Two halves run concurrently: the reader decodes frames and forwards them to the controller
//! one at a time (so replies keep request order); the writer drains replies and, once
//! subscribed, the client's bounded event queue. A client that stops reading only ever fills
//! its own queue; the bus then drops it and the writer resyncs it with a fresh snapshot, and a
//! client that stays stuck is disconnected (invariant 4).

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use seedpod_protocol::{
    ClientMode, ErrorCode, EventSeq, FrameCodec, FramesError, GoodbyeReason, InstanceId, Method,
    PROTOCOL_VERSION, PodName, PodState, Request, RequestId, ServerMsg, decode_request, encode,
    handshake,
};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, oneshot};
use tokio_util::codec::{FramedRead, FramedWrite};
use tokio_util::sync::CancellationToken;

use crate::bus::Subscription;
use crate::controller::{
    CatchUp, ConnectionMethod, ControllerHandle, ControllerMethod, ControllerMsg, Now, Route,
    SnapshotData, SubscribeReply, route,
};

/// Most entries per `snapshot_entries` frame: amortises per-frame overhead.
pub const SNAPSHOT_BATCH: usize = 256;

/// A `snapshot_entries` frame is closed once its entries reach this many bytes, so a client
/// parses a big session in steps instead of one huge message. A single entry longer than the
/// frame limit still goes alone, in parts (`seedpod_protocol::frames`).
pub const SNAPSHOT_BATCH_BYTES: usize = 1024 * 1024;

/// Replies waiting to be written to one client.
pub const OUTBOX_CAPACITY: usize = 64;

/// A client whose socket does not accept a frame for this long is disconnected.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(30);

/// Resyncs allowed within `RESYNC_WINDOW` before a client is told goodbye. A client that falls
/// behind in a burst (a fast stream, a slow terminal) is resynced as often as it needs, like a
/// multiplexer redrawing a screen; one that cannot even keep up with snapshots is let go.
pub const MAX_RESYNCS_PER_WINDOW: usize = 20;

/// The window over which resyncs are counted.
pub const RESYNC_WINDOW: Duration = Duration::from_secs(10);

/// A connection that has not said `hello` this long after connecting is closed: real clients
/// say it at once, and a silent one only holds a descriptor and a connection slot.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

enum Out {
    Line(String),
    Subscribed(Box<SubscribeReply>),
    /// Write this frame, then close.
    Close(String),
}

/// Who is on the other end, from the socket's credentials (`SO_PEERCRED`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Peer {
    pub pid: Option<i32>,
}

impl Peer {
    /// The peer's executable, or why it is not known. Read only when it is logged: every
    /// `notify` opens a connection, and most never answer anything.
    fn exe(&self) -> String {
        match self.pid {
            Some(pid) => std::fs::read_link(format!("/proc/{pid}/exe"))
                .map(|p| p.display().to_string())
                .unwrap_or_else(|e| format!("unknown ({e})")),
            None => "unknown (no peer credentials)".into(),
        }
    }
}

/// Answers that widen what the model may do; each is logged with its peer.
fn widens_policy(method: &Method) -> bool {
    matches!(
        method,
        Method::Approve { .. } | Method::RevokeApproval { .. }
    )
}

pub struct ConnectionInfo {
    pub pod: PodName,
    pub instance: InstanceId,
}

/// Serve one connection until the client leaves, breaks the protocol, or the pod stops.
pub async fn serve_connection<S>(
    stream: S,
    peer: Peer,
    controller: ControllerHandle,
    info: Arc<ConnectionInfo>,
    shutdown: CancellationToken,
) where
    S: AsyncRead + AsyncWrite + Send + 'static,
{
    let (read, write) = tokio::io::split(stream);
    let reader = FramedRead::new(read, FrameCodec::for_pod());
    let writer = FramedWrite::new(write, FrameCodec::for_pod());
    let (out_tx, out_rx) = mpsc::channel(OUTBOX_CAPACITY);
    let _ = controller.tx.send(ControllerMsg::ClientConnected).await;
    // When the writer ends (client gone, goodbye sent, write timeout) the reader must end too,
    // or the socket would stay half open.
    let writer_done = CancellationToken::new();
    let write_task = tokio::spawn({
        let done = writer_done.clone();
        let controller = controller.clone();
        async move {
            write_loop(writer, out_rx, controller).await;
            done.cancel();
        }
    });
    tokio::select! {
        () = read_loop(reader, out_tx, &controller, &info, &shutdown, &peer) => {}
        () = writer_done.cancelled() => {}
    }
    let _ = write_task.await;
    let _ = controller.tx.send(ControllerMsg::ClientDisconnected).await;
}

async fn read_loop<R>(
    mut reader: FramedRead<R, FrameCodec>,
    out: mpsc::Sender<Out>,
    controller: &ControllerHandle,
    info: &ConnectionInfo,
    shutdown: &CancellationToken,
    peer: &Peer,
) where
    R: AsyncRead + Unpin,
{
    let mut greeted = false;
    let handshake_deadline = tokio::time::Instant::now() + HANDSHAKE_TIMEOUT;
    loop {
        let unwelcome = async {
            if greeted {
                std::future::pending::<()>().await;
            }
            tokio::time::sleep_until(handshake_deadline).await;
        };
        let frame = tokio::select! {
            () = shutdown.cancelled() => {
                let bye = ServerMsg::Goodbye { reason: GoodbyeReason::Shutdown, message: "the pod is stopping".into() };
                let _ = out.send(Out::Close(encode(&bye))).await;
                return;
            }
            () = unwelcome => {
                let message = format!(
                    "no hello within {}s of connecting; the connection is closed",
                    HANDSHAKE_TIMEOUT.as_secs()
                );
                close_with_error(&out, ErrorCode::HandshakeRequired, message).await;
                return;
            }
            frame = reader.next() => frame,
        };
        let line = match frame {
            None => return,
            Some(Ok(line)) => line,
            Some(Err(FramesError::FrameTooLarge | FramesError::MessageTooLarge { .. })) => {
                close_with_error(
                    &out,
                    ErrorCode::FrameTooLarge,
                    format!(
                        "request exceeds {} bytes; the connection is closed",
                        seedpod_protocol::MAX_FRAME_BYTES
                    ),
                )
                .await;
                return;
            }
            Some(Err(FramesError::BadPart(reason))) => {
                close_with_error(
                    &out,
                    ErrorCode::MalformedFrame,
                    format!("{reason}; the connection is closed"),
                )
                .await;
                return;
            }
            Some(Err(FramesError::Io(err))) => {
                if err.kind() == std::io::ErrorKind::InvalidData {
                    close_with_error(
                        &out,
                        ErrorCode::MalformedFrame,
                        "frame is not UTF-8; the connection is closed".into(),
                    )
                    .await;
                }
                return;
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        let request = match decode_request(&line) {
            Ok(request) => request,
            Err(err) => {
                let reply = ServerMsg::Error {
                    id: err.id,
                    code: err.code,
                    message: err.message,
                };
                if out.send(Out::Line(encode(&reply))).await.is_err() {
                    return;
                }
                continue;
            }
        };
        if !greeted {
            let greeting = greet(controller).await;
            let Some((state, seq)) = greeting else { return };
            match hello(&request, info, state, seq) {
                Hello::Accepted { welcome, attach } => {
                    greeted = true;
                    if out.send(Out::Line(welcome)).await.is_err() {
                        return;
                    }
                    if attach && !subscribe(controller, &out, None).await {
                        return;
                    }
                }
                Hello::Close(frame) => {
                    let _ = out.send(Out::Close(frame)).await;
                    return;
                }
                Hello::Retry(frame) => {
                    if out.send(Out::Line(frame)).await.is_err() {
                        return;
                    }
                }
            }
            continue;
        }
        if !dispatch(request, controller, &out, peer).await {
            return;
        }
    }
}

/// What to do with a connection's first frames.
enum Hello {
    Accepted {
        welcome: String,
        attach: bool,
    },
    /// Send this frame and close (incompatible version, unknown mode).
    Close(String),
    /// Not a hello: send this error and wait for one.
    Retry(String),
}

fn hello(request: &Request, info: &ConnectionInfo, state: PodState, seq: EventSeq) -> Hello {
    let Method::Hello { protocol, mode, .. } = &request.method else {
        return Hello::Retry(encode(&ServerMsg::Error {
            id: request.id,
            code: ErrorCode::HandshakeRequired,
            message: format!(
                "send hello first: {{\"method\":\"hello\",\"protocol\":{PROTOCOL_VERSION},\"client\":\"NAME\",\"mode\":\"control\"}}"
            ),
        }));
    };
    if let Some(incompatible) = handshake::check_version(*protocol) {
        return Hello::Close(encode(&incompatible));
    }
    let attach = match mode {
        ClientMode::Attach => true,
        ClientMode::Control => false,
        ClientMode::Unknown => {
            return Hello::Close(encode(&ServerMsg::Error {
                id: request.id,
                code: ErrorCode::InvalidRequest,
                message: "unknown mode; use \"attach\" or \"control\"".into(),
            }));
        }
    };
    Hello::Accepted {
        welcome: encode(&ServerMsg::Welcome {
            protocol: PROTOCOL_VERSION,
            pod: info.pod.clone(),
            server_version: env!("CARGO_PKG_VERSION").to_string(),
            state,
            instance: info.instance.clone(),
            seq,
        }),
        attach,
    }
}

/// Answer one request here or forward it to the controller; false when the connection
/// should end.
async fn dispatch(
    request: Request,
    controller: &ControllerHandle,
    out: &mpsc::Sender<Out>,
    peer: &Peer,
) -> bool {
    let id = request.id.unwrap_or(RequestId::new(0));
    if widens_policy(&request.method) {
        // Defence in depth behind the sandbox (docs/sandbox.md): who said it, for the record.
        tracing::info!(
            event = "policy_answer",
            method = request.method.name(),
            peer_pid = peer.pid,
            peer_exe = %peer.exe(),
        );
    }
    let method = match route(request.method) {
        Route::Controller(method) => method,
        Route::Connection(ConnectionMethod::Subscribe { since }) => {
            return subscribe(controller, out, since).await;
        }
        Route::Connection(ConnectionMethod::History) => {
            return history(controller, out, id).await;
        }
        Route::Connection(ConnectionMethod::Hello) => {
            let again = refusal(id, "hello was already accepted on this connection");
            return out.send(Out::Line(again)).await.is_ok();
        }
        Route::Connection(ConnectionMethod::Unknown) => {
            let unknown = refusal(id, "unknown method; see docs/protocol.md for the methods");
            return out.send(Out::Line(unknown)).await.is_ok();
        }
    };
    let method = match prompted(controller.hooks.as_deref(), id, method).await {
        Ok(method) => method,
        Err(blocked) => return out.send(Out::Line(encode(&blocked))).await.is_ok(),
    };
    let (reply, rx) = oneshot::channel();
    if controller
        .tx
        .send(ControllerMsg::Request { id, method, reply })
        .await
        .is_err()
    {
        return false;
    }
    match rx.await {
        Ok(answer) => out.send(Out::Line(encode(&answer))).await.is_ok(),
        Err(_) => {
            let bye = ServerMsg::Goodbye {
                reason: GoodbyeReason::Shutdown,
                message: "the pod is stopping".into(),
            };
            let _ = out.send(Out::Close(encode(&bye))).await;
            false
        }
    }
}

/// A person's input as the `user_prompt` hooks leave it, run here, on the connection's task,
/// before the controller sees it: a block is the sender's error and nothing is recorded; what
/// the hooks add goes into the input itself, labelled, so it is committed (or queued) with it
/// and replays without them (docs/hooks.md). A parent's `delegate` is not a person's prompt.
async fn prompted(
    hooks: Option<&crate::hooks::Hooks>,
    id: RequestId,
    method: ControllerMethod,
) -> Result<ControllerMethod, ServerMsg> {
    let Some(hooks) = hooks.filter(|h| h.has(seedpod_config::HookEvent::UserPrompt)) else {
        return Ok(method);
    };
    let ControllerMethod::Now(Now::Input {
        mut segments,
        trigger: seedpod_protocol::RunTrigger::User,
    }) = method
    else {
        return Ok(method);
    };
    let text = seedpod_protocol::flatten_to_text(&segments);
    match hooks.user_prompt(&text).await {
        crate::hooks::Prompted::Block { reason } => Err(ServerMsg::Error {
            id: Some(id),
            code: ErrorCode::InvalidRequest,
            message: format!(
                "a user_prompt hook blocked this input, so it was not recorded: {reason}"
            ),
        }),
        crate::hooks::Prompted::Go { context } => {
            for added in context {
                segments.push(seedpod_protocol::Segment::text(format!(
                    "\n\n[user_prompt hook] {added}"
                )));
            }
            Ok(ControllerMethod::Now(Now::Input {
                segments,
                trigger: seedpod_protocol::RunTrigger::User,
            }))
        }
    }
}

fn refusal(id: RequestId, message: &str) -> String {
    encode(&ServerMsg::Error {
        id: Some(id),
        code: ErrorCode::InvalidRequest,
        message: message.into(),
    })
}

/// Subscribe the reader's way: the writer picks the subscription up from the outbox, after
/// any reply queued before it.
async fn subscribe(
    controller: &ControllerHandle,
    out: &mpsc::Sender<Out>,
    since: Option<EventSeq>,
) -> bool {
    match request_subscription(controller, since).await {
        Some(sub) => out.send(Out::Subscribed(Box::new(sub))).await.is_ok(),
        None => false,
    }
}

/// Ask the controller for a catch-up and a live queue: the one way both a client's
/// `subscribe` and the writer's resync after lagging get one. `None` when the pod is stopping.
async fn request_subscription(
    controller: &ControllerHandle,
    since: Option<EventSeq>,
) -> Option<SubscribeReply> {
    let (reply, rx) = oneshot::channel();
    controller
        .tx
        .send(ControllerMsg::Subscribe { since, reply })
        .await
        .ok()?;
    rx.await.ok()
}

/// Answer `get_history` from the controller's shared entries: the reply is encoded here, entry
/// by entry, so the controller neither copies the segment nor waits while it is serialised.
async fn history(controller: &ControllerHandle, out: &mpsc::Sender<Out>, id: RequestId) -> bool {
    let (reply, rx) = oneshot::channel();
    if controller
        .tx
        .send(ControllerMsg::History { reply })
        .await
        .is_err()
    {
        return false;
    }
    match rx.await {
        Ok((segment_id, entries)) => {
            let line = history_frame(id, &segment_id, &entries);
            out.send(Out::Line(line)).await.is_ok()
        }
        Err(_) => false,
    }
}

/// The text of `ServerMsg::History` (pinned by a test below), written from shared entries.
fn history_frame(
    id: RequestId,
    segment_id: &seedpod_protocol::SegmentId,
    entries: &[Arc<seedpod_protocol::Entry>],
) -> String {
    let mut frame = format!(
        "{{\"type\":\"history\",\"id\":{},\"segment_id\":{},\"entries\":[",
        encode(&id),
        encode(segment_id)
    );
    for (n, entry) in entries.iter().enumerate() {
        if n > 0 {
            frame.push(',');
        }
        frame.push_str(&encode(&**entry));
    }
    frame.push_str("]}");
    frame
}

async fn greet(controller: &ControllerHandle) -> Option<(PodState, EventSeq)> {
    let (reply, rx) = oneshot::channel();
    controller
        .tx
        .send(ControllerMsg::Greet { reply })
        .await
        .ok()?;
    rx.await.ok()
}

async fn close_with_error(out: &mpsc::Sender<Out>, code: ErrorCode, message: String) {
    let err = encode(&ServerMsg::Error {
        id: None,
        code,
        message: message.clone(),
    });
    let _ = out.send(Out::Line(err)).await;
    let bye = encode(&ServerMsg::Goodbye {
        reason: GoodbyeReason::ProtocolError,
        message,
    });
    let _ = out.send(Out::Close(bye)).await;
}

type Sink<W> = FramedWrite<W, FrameCodec>;

async fn write_loop<W>(
    mut writer: Sink<W>,
    mut out: mpsc::Receiver<Out>,
    controller: ControllerHandle,
) where
    W: AsyncWrite + Unpin,
{
    let mut live: Option<Subscription> = None;
    let mut resyncs: std::collections::VecDeque<tokio::time::Instant> = Default::default();
    loop {
        let next = tokio::select! {
            item = out.recv() => match item {
                Some(item) => Next::Out(item),
                None => Next::Done,
            },
            event = next_event(&mut live) => Next::Event(event),
        };
        let ok = match next {
            Next::Done => break,
            Next::Out(Out::Line(line)) => send(&mut writer, line).await,
            Next::Out(Out::Close(line)) => {
                let _ = send(&mut writer, line).await;
                break;
            }
            Next::Out(Out::Subscribed(reply)) => {
                let ok = write_catch_up(&mut writer, reply.catch_up).await;
                live = Some(reply.subscription);
                ok
            }
            Next::Event(Some(line)) => send(&mut writer, line.to_string()).await,
            Next::Event(None) => {
                let lagged = live
                    .as_ref()
                    .is_some_and(|s| s.lagged.load(Ordering::Acquire));
                live = None;
                if !lagged {
                    // The bus closed because the pod is stopping; the reader says goodbye.
                    continue;
                }
                let now = tokio::time::Instant::now();
                resyncs.retain(|at| now.duration_since(*at) < RESYNC_WINDOW);
                resyncs.push_back(now);
                if resyncs.len() > MAX_RESYNCS_PER_WINDOW {
                    let bye = ServerMsg::Goodbye {
                        reason: GoodbyeReason::Lagged,
                        message: format!(
                            "the client fell behind the event stream {MAX_RESYNCS_PER_WINDOW} times in {}s; reconnect to resync",
                            RESYNC_WINDOW.as_secs()
                        ),
                    };
                    let _ = send(&mut writer, encode(&bye)).await;
                    break;
                }
                tracing::warn!(event = "client_lagged", resyncs = resyncs.len());
                match request_subscription(&controller, None).await {
                    Some(reply) => {
                        let ok = write_catch_up(&mut writer, reply.catch_up).await;
                        live = Some(reply.subscription);
                        ok
                    }
                    None => false,
                }
            }
        };
        if !ok {
            break;
        }
    }
    let _ = SinkExt::<String>::close(&mut writer).await;
}

enum Next {
    Out(Out),
    Event(Option<Arc<str>>),
    Done,
}

async fn next_event(live: &mut Option<Subscription>) -> Option<Arc<str>> {
    match live {
        Some(sub) => sub.recv().await,
        None => std::future::pending().await,
    }
}

async fn send<W: AsyncWrite + Unpin>(writer: &mut Sink<W>, line: String) -> bool {
    matches!(
        tokio::time::timeout(WRITE_TIMEOUT, writer.send(line)).await,
        Ok(Ok(()))
    )
}

async fn write_catch_up<W: AsyncWrite + Unpin>(writer: &mut Sink<W>, catch_up: CatchUp) -> bool {
    match catch_up {
        CatchUp::Replay(lines) => {
            for line in lines {
                if !send(writer, line.to_string()).await {
                    return false;
                }
            }
            true
        }
        CatchUp::Snapshot(snapshot) => write_snapshot(writer, *snapshot).await,
    }
}

/// `snapshot_entries` frames for `entries`, each closed at `SNAPSHOT_BATCH` entries or
/// `SNAPSHOT_BATCH_BYTES` bytes. Each entry is encoded once, straight from the shared copy; the
/// text is the same JSON as `ServerMsg::SnapshotEntries` (pinned by a test below).
fn snapshot_batches(entries: &[Arc<seedpod_protocol::Entry>]) -> impl Iterator<Item = String> {
    const OPEN: &str = "{\"type\":\"snapshot_entries\",\"entries\":[";
    let mut rest = entries.iter().peekable();
    std::iter::from_fn(move || {
        rest.peek()?;
        let mut frame = String::from(OPEN);
        let mut count = 0;
        while let Some(entry) = rest.peek() {
            if count > 0 && (count == SNAPSHOT_BATCH || frame.len() >= SNAPSHOT_BATCH_BYTES) {
                break;
            }
            if count > 0 {
                frame.push(',');
            }
            frame.push_str(&encode(&***entry));
            count += 1;
            rest.next();
        }
        frame.push_str("]}");
        Some(frame)
    })
}

async fn write_snapshot<W: AsyncWrite + Unpin>(writer: &mut Sink<W>, snap: SnapshotData) -> bool {
    let begin = ServerMsg::SnapshotBegin {
        seq: snap.seq,
        state: snap.state,
        greeting: snap.greeting,
        segment_id: snap.segment_id,
        entries: snap.entries.len() as u64,
        context: snap.context,
        message_cap: Some(snap.message_cap),
    };
    if !send(writer, encode(&begin)).await {
        return false;
    }
    for frame in snapshot_batches(&snap.entries) {
        if !send(writer, frame).await {
            return false;
        }
    }
    if !send(writer, encode(&snap.in_flight)).await {
        return false;
    }
    // Restore findings are part of the snapshot (repeated to every client), not live events.
    for message in snap.alerts {
        let alert = ServerMsg::Alert {
            seq: snap.seq,
            level: seedpod_protocol::AlertLevel::Warn,
            message,
        };
        if !send(writer, encode(&alert)).await {
            return false;
        }
    }
    send(writer, encode(&ServerMsg::SnapshotEnd { seq: snap.seq })).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use seedpod_protocol::{Entry, EntryKind, EntrySeq};

    fn entry(seq: u64, text_bytes: usize) -> Entry {
        Entry {
            v: 1,
            seq: EntrySeq::new(seq),
            ts: 9,
            kind: EntryKind::UserInput {
                segments: Vec::new(),
                text: "x".repeat(text_bytes),
                queue_id: None,
            },
        }
    }

    /// A connection that never says hello is told why and closed at the deadline, and the
    /// controller hears it come and go. Time is paused, so the ten seconds pass at once; the
    /// e2e suite checks that a silent connection holds up nobody else on a real socket.
    #[tokio::test(start_paused = true)]
    async fn a_connection_that_never_says_hello_is_closed_with_a_reason_at_the_deadline() {
        use tokio::io::AsyncReadExt;
        let (pod_side, mut client) = tokio::io::duplex(64 * 1024);
        let (tx, mut controller) = mpsc::channel(8);
        let info = Arc::new(ConnectionInfo {
            pod: PodName::new("p").unwrap(),
            instance: InstanceId::new("i"),
        });
        let started = tokio::time::Instant::now();
        let served = tokio::spawn(serve_connection(
            pod_side,
            Peer::default(),
            ControllerHandle { tx, hooks: None },
            info,
            CancellationToken::new(),
        ));
        let mut said = String::new();
        client.read_to_string(&mut said).await.unwrap();
        assert!(
            started.elapsed() >= HANDSHAKE_TIMEOUT,
            "{:?}",
            started.elapsed()
        );
        let frames: Vec<ServerMsg> = said
            .lines()
            .map(|line| serde_json::from_str(line).expect("a server message"))
            .collect();
        assert!(
            matches!(
                frames.first(),
                Some(ServerMsg::Error {
                    code: ErrorCode::HandshakeRequired,
                    ..
                })
            ),
            "{frames:?}"
        );
        assert!(
            matches!(frames.last(), Some(ServerMsg::Goodbye { .. })),
            "{frames:?}"
        );
        served.await.unwrap();
        assert!(matches!(
            controller.recv().await,
            Some(ControllerMsg::ClientConnected)
        ));
        assert!(matches!(
            controller.recv().await,
            Some(ControllerMsg::ClientDisconnected)
        ));
    }

    #[test]
    fn history_encodes_like_the_protocol_type() {
        let entries: Vec<Arc<Entry>> = (0..3).map(|i| Arc::new(entry(i, 10))).collect();
        let segment_id = seedpod_protocol::SegmentId::new("s\"1");
        let owned = encode(&ServerMsg::History {
            id: RequestId::new(7),
            segment_id: segment_id.clone(),
            entries: entries.iter().map(|e| Entry::clone(e)).collect(),
        });
        assert_eq!(
            history_frame(RequestId::new(7), &segment_id, &entries),
            owned
        );
        let empty = encode(&ServerMsg::History {
            id: RequestId::new(8),
            segment_id: segment_id.clone(),
            entries: Vec::new(),
        });
        assert_eq!(history_frame(RequestId::new(8), &segment_id, &[]), empty);
    }

    #[test]
    fn snapshot_batches_encode_like_the_protocol_type() {
        let entries: Vec<Arc<Entry>> = (0..3).map(|i| Arc::new(entry(i, 10))).collect();
        let frames: Vec<String> = snapshot_batches(&entries).collect();
        let owned = encode(&ServerMsg::SnapshotEntries {
            entries: entries.iter().map(|e| (**e).clone()).collect(),
        });
        assert_eq!(frames, vec![owned]);
    }

    #[test]
    fn snapshot_batches_close_at_the_byte_bound_and_keep_every_entry_in_order() {
        let entries: Vec<Arc<Entry>> = (0..40).map(|i| Arc::new(entry(i, 270_000))).collect();
        let frames: Vec<String> = snapshot_batches(&entries).collect();
        assert!(frames.len() >= 10, "{} frames", frames.len());
        let mut seqs = Vec::new();
        for frame in &frames {
            assert!(
                frame.len() < SNAPSHOT_BATCH_BYTES + 300_000,
                "{}",
                frame.len()
            );
            match serde_json::from_str::<ServerMsg>(frame).unwrap() {
                ServerMsg::SnapshotEntries { entries } => {
                    seqs.extend(entries.iter().map(|e| e.seq));
                }
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(seqs, (0..40).map(EntrySeq::new).collect::<Vec<_>>());
        assert_eq!(snapshot_batches(&[]).count(), 0);
    }
}
