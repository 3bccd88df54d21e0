//! The link to the pod: one task that owns the attach connection, forwards every frame to the
//! app, sends the app's requests, and when the pod goes away (restart, upgrade, crash) keeps
//! reconnecting with backoff until it is back — the new snapshot then resyncs the transcript.
//!
//! The app never waits on the socket: it hands requests over a channel and hears back through
//! `ConnectionEvent`s, so a slow or vanished pod can never freeze the screen.
//!
//! A link that drops while the pod lives on (an ssh link to another machine going down with a
//! laptop's sleep, a network change) comes back where it was: the task remembers the pod
//! process and the last event it saw, and resubscribes from there, so nothing is lost or shown
//! twice and the screen is not redrawn from a snapshot. A new pod process (restart, upgrade)
//! numbers its events afresh, so then it is a snapshot.

use std::collections::HashMap;
use std::time::Duration;

use seedpod_client::{ClientError, Connection, Home, Remote, Welcome, reply_id};
use seedpod_protocol::{ClientMode, EventSeq, InstanceId, Method, PodName, RequestId, ServerMsg};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// Client name sent in `hello`.
pub const CLIENT_NAME: &str = concat!("seedpod-tui/", env!("CARGO_PKG_VERSION"));

/// First wait before reconnecting; doubled per failed attempt up to `MAX_BACKOFF`. Short,
/// because a restarting pod is usually back within a second.
pub const FIRST_BACKOFF: Duration = Duration::from_millis(100);

/// Longest wait between reconnection attempts.
pub const MAX_BACKOFF: Duration = Duration::from_secs(2);

/// Frames buffered between the link task and the app. When the app falls behind, the task
/// stops reading the socket and the pod resyncs us with a snapshot (DESIGN invariant 4).
pub const LINK_QUEUE: usize = 4096;

/// Requests waiting to be written to the pod.
pub const REQUEST_QUEUE: usize = 64;

/// What the link tells the app.
/// The app's name for one of its requests. A request id means something on one connection
/// only, and a request may outlive its connection (it then fails under this tag), so the app
/// numbers its requests itself and the link maps each connection's request ids back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RequestTag(u64);

impl RequestTag {
    pub const fn new(n: u64) -> Self {
        Self(n)
    }

    /// The tag after this one.
    pub const fn next(self) -> Self {
        Self(self.0.saturating_add(1))
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum ConnectionEvent {
    /// Attached; a snapshot follows as `Frame`s.
    Connected(Welcome),
    /// Attached again to the same pod process after the link dropped; the events missed
    /// meanwhile follow as `Frame`s (or a snapshot, if the pod no longer holds them).
    Resumed(Welcome),
    /// An event or snapshot frame.
    Frame(ServerMsg),
    /// The answer to the app's request `tag`.
    Reply { tag: RequestTag, msg: ServerMsg },
    /// Request `tag` was not answered and will not be (not connected, or connection lost).
    Failed { tag: RequestTag, reason: String },
    /// The connection is gone; `attempt` counts reconnection attempts so far.
    Down { attempt: u32, reason: String },
    /// No pod process answers: it was stopped or killed, and stays so until someone starts
    /// it (the link keeps trying, so a restart elsewhere is picked up).
    Stopped { attempt: u32 },
    /// The pod speaks another protocol version; `message` says which side is older.
    Incompatible { message: String },
}

/// The app's side of the link. Dropping it stops the task.
pub struct ConnectionHandle {
    requests: mpsc::Sender<(RequestTag, Method)>,
    task: JoinHandle<()>,
}

impl ConnectionHandle {
    /// Queue a request; when the link is gone the app hears `Failed` for it.
    pub fn send(&self, tag: RequestTag, method: Method) -> bool {
        self.requests.try_send((tag, method)).is_ok()
    }
}

impl Drop for ConnectionHandle {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Where the link goes: a pod on this machine, or one on another through ssh and its bridge.
#[derive(Debug, Clone)]
pub enum Endpoint {
    Local(Home),
    Remote(Remote),
}

impl Endpoint {
    async fn connect(&self, pod: &PodName, mode: ClientMode) -> Result<Connection, ClientError> {
        match self {
            Endpoint::Local(home) => Connection::connect(home, pod, CLIENT_NAME, mode).await,
            // Interactive: ssh may ask for a passphrase on the terminal (it reads /dev/tty).
            Endpoint::Remote(remote) => remote.connect(pod, CLIENT_NAME, mode, false, false).await,
        }
    }

    /// Why the link is down, as the status line says it.
    fn down(&self, reason: String) -> String {
        match self {
            Endpoint::Local(_) => reason,
            Endpoint::Remote(remote) => {
                format!("link lost — reconnecting to {} ({reason})", remote.alias)
            }
        }
    }
}

/// Start the link to `pod`.
pub fn spawn(
    endpoint: Endpoint,
    pod: PodName,
    events: mpsc::Sender<ConnectionEvent>,
) -> ConnectionHandle {
    let (requests, rx) = mpsc::channel(REQUEST_QUEUE);
    let task = tokio::spawn(run(endpoint, pod, events, rx));
    ConnectionHandle { requests, task }
}

/// The pod process a link last talked to and the last event it passed on.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Resume {
    instance: InstanceId,
    seq: EventSeq,
}

async fn run(
    endpoint: Endpoint,
    pod: PodName,
    events: mpsc::Sender<ConnectionEvent>,
    mut requests: mpsc::Receiver<(RequestTag, Method)>,
) {
    let mut attempt: u32 = 0;
    let mut resume: Option<Resume> = None;
    loop {
        // Coming back: ask for what was missed rather than for a snapshot.
        let mode = match resume {
            Some(_) => ClientMode::Control,
            None => ClientMode::Attach,
        };
        let reason = match endpoint.connect(&pod, mode).await {
            Ok(mut conn) => {
                attempt = 0;
                let welcome = conn.welcome.clone();
                let event = match resume.take() {
                    None => ConnectionEvent::Connected(welcome.clone()),
                    Some(last) => {
                        let since = (last.instance == welcome.instance).then_some(last.seq);
                        if let Err(err) = conn.send(Method::Subscribe { since_seq: since }).await {
                            resume = Some(last);
                            let down = ConnectionEvent::Down {
                                attempt: 1,
                                reason: endpoint.down(describe(&err)),
                            };
                            if events.send(down).await.is_err() {
                                return;
                            }
                            attempt = 1;
                            if !wait(backoff(attempt), &mut requests, &events).await {
                                return;
                            }
                            continue;
                        }
                        match since {
                            Some(_) => ConnectionEvent::Resumed(welcome.clone()),
                            None => ConnectionEvent::Connected(welcome.clone()),
                        }
                    }
                };
                if events.send(event).await.is_err() {
                    return;
                }
                let mut last = Resume {
                    instance: welcome.instance.clone(),
                    seq: welcome.seq,
                };
                let ended = serve(conn, &mut requests, &events, &mut last).await;
                resume = Some(last);
                match ended {
                    Some(reason) => endpoint.down(reason),
                    None => return, // the app is gone
                }
            }
            Err(ClientError::Incompatible { reason, .. }) => {
                let event = ConnectionEvent::Incompatible { message: reason };
                if events.send(event).await.is_err() {
                    return;
                }
                attempt = attempt.saturating_add(1);
                if !wait(backoff(attempt), &mut requests, &events).await {
                    return;
                }
                continue;
            }
            Err(ClientError::NotRunning { .. }) if matches!(endpoint, Endpoint::Local(_)) => {
                attempt = attempt.saturating_add(1);
                if events
                    .send(ConnectionEvent::Stopped { attempt })
                    .await
                    .is_err()
                {
                    return;
                }
                if !wait(backoff(attempt), &mut requests, &events).await {
                    return;
                }
                continue;
            }
            Err(err) => endpoint.down(describe(&err)),
        };
        attempt = attempt.saturating_add(1);
        let down = ConnectionEvent::Down { attempt, reason };
        if events.send(down).await.is_err() {
            return;
        }
        if !wait(backoff(attempt), &mut requests, &events).await {
            return;
        }
    }
}

fn describe(err: &ClientError) -> String {
    match err {
        ClientError::NotRunning { .. } => "the pod is not running".into(),
        ClientError::Closed { .. }
        | ClientError::Remote { .. }
        | ClientError::NotAnswering { .. }
        | ClientError::Incompatible { .. }
        | ClientError::Refused { .. }
        | ClientError::Protocol(_)
        | ClientError::Setup(_)
        | ClientError::Io { .. }
        | ClientError::Transport(_) => err.to_string(),
    }
}

/// `FIRST_BACKOFF · 2^(attempt-1)`, capped.
pub fn backoff(attempt: u32) -> Duration {
    let factor = 2u32.saturating_pow(attempt.saturating_sub(1).min(16));
    FIRST_BACKOFF.saturating_mul(factor).min(MAX_BACKOFF)
}

/// Sleep between attempts, refusing requests meanwhile. False when the app is gone.
async fn wait(
    delay: Duration,
    requests: &mut mpsc::Receiver<(RequestTag, Method)>,
    events: &mpsc::Sender<ConnectionEvent>,
) -> bool {
    let sleep = tokio::time::sleep(delay);
    tokio::pin!(sleep);
    loop {
        tokio::select! {
            () = &mut sleep => return true,
            request = requests.recv() => {
                let Some((tag, _)) = request else { return false };
                let failed = ConnectionEvent::Failed { tag, reason: "not connected to the pod".into() };
                if events.send(failed).await.is_err() {
                    return false;
                }
            }
        }
    }
}

/// Pump one live connection. Returns why it ended, or `None` when the app is gone.
async fn serve(
    mut conn: Connection,
    requests: &mut mpsc::Receiver<(RequestTag, Method)>,
    events: &mpsc::Sender<ConnectionEvent>,
    last: &mut Resume,
) -> Option<String> {
    // Request id on this connection → the app's tag.
    let mut pending: HashMap<RequestId, RequestTag> = HashMap::new();
    let reason = loop {
        tokio::select! {
            // `recv` only polls a framed reader, so losing this race never drops a frame.
            frame = conn.recv() => {
                let msg = match frame {
                    Ok(Some(msg)) => msg,
                    Ok(None) => break "the pod closed the connection".to_string(),
                    Err(err) => break describe(&err),
                };
                match &msg {
                    ServerMsg::SnapshotBegin { seq, .. } | ServerMsg::SnapshotEnd { seq } => {
                        last.seq = *seq;
                    }
                    other => {
                        if let Some(seq) = other.seq() {
                            last.seq = last.seq.max(seq);
                        }
                    }
                }
                let goodbye = if let ServerMsg::Goodbye { message, .. } = &msg {
                    Some(message.clone())
                } else {
                    None
                };
                let event = match reply_id(&msg).and_then(|id| pending.remove(&id)) {
                    Some(tag) => ConnectionEvent::Reply { tag, msg },
                    None => ConnectionEvent::Frame(msg),
                };
                events.send(event).await.ok()?;
                if let Some(message) = goodbye {
                    break message;
                }
            }
            request = requests.recv() => {
                let (tag, method) = request?;
                match conn.send(method).await {
                    Ok(id) => {
                        pending.insert(id, tag);
                    }
                    Err(err) => {
                        let reason = describe(&err);
                        let failed = ConnectionEvent::Failed { tag, reason: reason.clone() };
                        events.send(failed).await.ok()?;
                        break reason;
                    }
                }
            }
        }
    };
    for (_, tag) in pending {
        let failed = ConnectionEvent::Failed {
            tag,
            reason: "the connection was lost before the pod answered".into(),
        };
        events.send(failed).await.ok()?;
    }
    Some(reason)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        assert_eq!(backoff(1), Duration::from_millis(100));
        assert_eq!(backoff(2), Duration::from_millis(200));
        assert_eq!(backoff(4), Duration::from_millis(800));
        assert_eq!(backoff(10), MAX_BACKOFF);
        assert_eq!(backoff(u32::MAX), MAX_BACKOFF);
    }

    #[tokio::test]
    async fn requests_fail_fast_while_the_pod_is_away() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::under(dir.path());
        let (tx, mut rx) = mpsc::channel(16);
        let link = spawn(Endpoint::Local(home), "absent".parse().unwrap(), tx);
        let first = rx.recv().await.unwrap();
        assert!(
            matches!(&first, ConnectionEvent::Stopped { attempt: 1 }),
            "{first:?}"
        );
        assert!(link.send(RequestTag::new(7), Method::Pause));
        loop {
            match rx.recv().await.unwrap() {
                ConnectionEvent::Failed { tag, .. } => break assert_eq!(tag, RequestTag::new(7)),
                ConnectionEvent::Stopped { .. } => continue, // a retry may come first
                other => panic!("unexpected {other:?}"),
            }
        }
    }
}
