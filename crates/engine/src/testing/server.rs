//! A loopback HTTP/1.1 model server for provider tests: it answers each request, in order, with
//! the next scripted `Reply` (a recorded SSE stream played byte for byte in pieces of chosen
//! sizes, an error status, a stream that goes silent, raw bytes) and records what was asked.
//!
//! Every reply closes its connection, so each request is a fresh connection and replies are
//! matched to requests by arrival order — or, for a server started with `MockServer::routes`, by
//! method and path, each route answering as often as it is asked. Dropping the server stops it
//! and every connection.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};

/// A request head larger than this is not a request our providers send.
const MAX_HEAD_BYTES: usize = 64 * 1024;

/// One scripted answer.
#[derive(Debug, Clone)]
pub enum Reply {
    /// `200` with an event-stream body written in pieces of `chunks` bytes (cycled), then close.
    Stream { body: Vec<u8>, chunks: Vec<usize> },
    /// Any status, with extra headers and a body.
    Status {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// `200`, the first bytes of a body, then silence with the connection held open.
    Hang { prefix: Vec<u8> },
    /// These exact bytes as the whole response (head included), then close.
    Raw(Vec<u8>),
}

impl Reply {
    /// A stream written in one piece.
    pub fn sse(body: impl Into<Vec<u8>>) -> Self {
        Reply::Stream {
            body: body.into(),
            chunks: vec![usize::MAX],
        }
    }

    /// A stream written in pieces of these sizes, cycled.
    pub fn sse_in_pieces(body: impl Into<Vec<u8>>, chunks: &[usize]) -> Self {
        Reply::Stream {
            body: body.into(),
            chunks: chunks.to_vec(),
        }
    }

    pub fn status(status: u16, body: impl Into<String>) -> Self {
        Reply::Status {
            status,
            headers: Vec::new(),
            body: body.into(),
        }
    }

    /// Add a header to a `Status` reply (other replies are returned unchanged).
    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        if let Reply::Status { headers, .. } = &mut self {
            headers.push((name.to_owned(), value.to_owned()));
        }
        self
    }
}

/// A request as the server received it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedRequest {
    pub method: String,
    pub path: String,
    /// Names lowercased, in arrival order.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl RecordedRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }
}

pub struct MockServer {
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<RecordedRequest>>>,
    task: JoinHandle<()>,
}

impl MockServer {
    /// Listen on a free loopback port and answer with `replies`, in order. Requests past the
    /// last reply get a `500` saying so.
    pub async fn start(replies: Vec<Reply>) -> MockServer {
        MockServer::serving(Replies::Ordered(replies)).await
    }

    #[allow(
        clippy::expect_used,
        reason = "test support: a loopback port that cannot be bound is a broken test machine"
    )]
    async fn serving(replies: Replies) -> MockServer {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a test server can bind a loopback port");
        let addr = listener
            .local_addr()
            .expect("a bound listener has an address");
        let requests = Arc::new(Mutex::new(Vec::new()));
        let task = tokio::spawn(serve(listener, replies, requests.clone()));
        MockServer {
            addr,
            requests,
            task,
        }
    }

    /// Listen on a free loopback port and answer each request with the reply of the route
    /// (method, path with its query) it matches, as often as asked; anything else gets a `404`.
    pub async fn routes(routes: Vec<(&str, &str, Reply)>) -> MockServer {
        let routes = routes
            .into_iter()
            .map(|(method, path, reply)| (method.to_owned(), path.to_owned(), reply))
            .collect();
        MockServer::serving(Replies::Routed(Arc::new(routes))).await
    }

    /// `http://127.0.0.1:PORT`, to which a provider's path is appended.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// How replies are matched to requests.
enum Replies {
    /// The next reply for the next connection.
    Ordered(Vec<Reply>),
    /// (method, path, reply): by what the request asks.
    Routed(Arc<Vec<(String, String, Reply)>>),
}

async fn serve(
    listener: TcpListener,
    replies: Replies,
    requests: Arc<Mutex<Vec<RecordedRequest>>>,
) {
    // Owned here so that held-open connections live exactly as long as the server.
    let mut connections = JoinSet::new();
    let (mut ordered, routes) = match replies {
        Replies::Ordered(replies) => (replies.into_iter(), None),
        Replies::Routed(routes) => (Vec::new().into_iter(), Some(routes)),
    };
    while let Ok((socket, _)) = listener.accept().await {
        let choice = match &routes {
            Some(routes) => Choice::Route(routes.clone()),
            None => Choice::Reply(ordered.next().unwrap_or_else(|| {
                Reply::status(
                    500,
                    "{\"error\":{\"message\":\"the test server has no more replies\"}}",
                )
            })),
        };
        connections.spawn(answer(socket, choice, requests.clone()));
    }
}

/// The reply for one connection, or the routes to choose it from once the request is read.
enum Choice {
    Reply(Reply),
    Route(Arc<Vec<(String, String, Reply)>>),
}

async fn answer(mut socket: TcpStream, choice: Choice, requests: Arc<Mutex<Vec<RecordedRequest>>>) {
    let Some(request) = read_request(&mut socket).await else {
        return;
    };
    let reply = match choice {
        Choice::Reply(reply) => reply,
        Choice::Route(routes) => routes
            .iter()
            .find(|(method, path, _)| *method == request.method && *path == request.path)
            .map(|(_, _, reply)| reply.clone())
            .unwrap_or_else(|| Reply::status(404, "{\"error\":\"no such route\"}")),
    };
    requests
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(request);
    // Write errors mean the client went away, which some tests do on purpose.
    let _ = write_reply(&mut socket, reply).await;
}

async fn write_reply(socket: &mut TcpStream, reply: Reply) -> std::io::Result<()> {
    const STREAM_HEAD: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\
        cache-control: no-cache\r\nconnection: close\r\n\r\n";
    match reply {
        Reply::Stream { body, chunks } => {
            socket.write_all(STREAM_HEAD).await?;
            let mut rest = &body[..];
            for size in chunks.iter().cycle() {
                if rest.is_empty() {
                    break;
                }
                let (piece, tail) = rest.split_at((*size).clamp(1, rest.len()));
                socket.write_all(piece).await?;
                socket.flush().await?;
                // Let the client read this piece before the next is written, so pieces tend
                // to arrive as separate reads (the parser's own tests prove every split).
                tokio::task::yield_now().await;
                rest = tail;
            }
            socket.shutdown().await
        }
        Reply::Status {
            status,
            headers,
            body,
        } => {
            let mut head = format!(
                "HTTP/1.1 {status} Test\r\ncontent-type: application/json\r\n\
                 content-length: {}\r\nconnection: close\r\n",
                body.len()
            );
            for (name, value) in headers {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
            head.push_str("\r\n");
            socket.write_all(head.as_bytes()).await?;
            socket.write_all(body.as_bytes()).await?;
            socket.shutdown().await
        }
        Reply::Hang { prefix } => {
            socket.write_all(STREAM_HEAD).await?;
            socket.write_all(&prefix).await?;
            socket.flush().await?;
            std::future::pending::<()>().await;
            Ok(())
        }
        Reply::Raw(bytes) => {
            socket.write_all(&bytes).await?;
            socket.shutdown().await
        }
    }
}

/// Read one request: the head up to the blank line, then `content-length` bytes of body.
async fn read_request(socket: &mut TcpStream) -> Option<RecordedRequest> {
    let mut buf = Vec::new();
    let head_end = loop {
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
        if buf.len() > MAX_HEAD_BYTES || read_more(socket, &mut buf).await == 0 {
            return None;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next()?.split(' ');
    let method = request_line.next()?.to_owned();
    let path = request_line.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    let length = headers
        .iter()
        .find(|(name, _)| name == "content-length")
        .and_then(|(_, value)| value.parse::<usize>().ok())
        .unwrap_or(0);
    let body_start = head_end + 4;
    while buf.len() < body_start + length {
        if read_more(socket, &mut buf).await == 0 {
            return None;
        }
    }
    let body = String::from_utf8_lossy(&buf[body_start..body_start + length]).into_owned();
    Some(RecordedRequest {
        method,
        path,
        headers,
        body,
    })
}

async fn read_more(socket: &mut TcpStream, buf: &mut Vec<u8>) -> usize {
    let mut chunk = [0u8; 8192];
    match socket.read(&mut chunk).await {
        Ok(n) => {
            buf.extend_from_slice(&chunk[..n]);
            n
        }
        Err(_) => 0,
    }
}
