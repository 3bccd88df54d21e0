//! A loopback model server that enforces a context window, for the context-management tests
//! and `context-bench`.
//!
//! It speaks the real streaming wire formats — OpenAI Chat Completions (`POST …/chat/completions`)
//! and the Anthropic Messages API (`POST …/messages`) — and answers every request from what the
//! request says, not from a script, so a pod can run any number of turns against it:
//!
//! - a request over the limit gets HTTP 400 with the provider's real "too long" body, stating
//!   the limit and the request's size (or, with `cuts_streams`, a streamed one gets 200 and an
//!   empty stream, as llama-cpp-python answers; with `truncates_silently` it is answered and
//!   its usage counts only `limit` prompt tokens, as Ollama does past its `num_ctx`; with
//!   `wording` the refusal is in vLLM's or LM Studio's words and shape, or states no window at
//!   all — `Wording` says what each real server sends; with `drops_unstreamed` an unstreamed
//!   one gets no answer at all);
//! - a summary request (no tools offered, a system prompt that asks for a summary) gets a
//!   summary that repeats every `FACT:` line it was shown, so a test can see a fact survive
//!   compaction;
//! - a last user message `run COMMAND` gets a `shell` call for COMMAND (and, once the result
//!   is in, a short text);
//! - a last user message `read FILE` gets a `read_file` call for FILE (and, once the result is
//!   in, a short text);
//! - anything else gets a text of about `reply_chars` characters.
//!
//! Tokens are counted by the server's own rule — characters of the whole request body divided
//! by `chars_per_token` — deliberately not the pod's estimate (bytes/4 of the texts plus a few
//! per message), so the pod's estimate is sometimes too low and its recovery gets exercised.
//! Usage is reported with that count, as a real server reports its tokenizer's count.
//!
//! The server runs on its own thread and runtime, so sync tests, async tests and benches use it
//! alike; dropping it stops the thread and every connection. `request.rs` reads what a request
//! asks for, `wire.rs` writes answers and errors.

mod request;
mod wire;

#[cfg(test)]
mod tests;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use tokio::task::JoinSet;

pub use request::{Answer, Wire};
pub use wire::{Wording, anthropic_too_long, openai_too_long, too_long};

/// A request head larger than this is not one our providers send.
const MAX_HEAD_BYTES: usize = 64 * 1024;
/// A request body larger than this is refused unread (a pod's request is far smaller; this only
/// bounds the server's memory).
const MAX_BODY_BYTES: usize = 32 * 1024 * 1024;

/// What the server enforces and how it answers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LimitConfig {
    /// Tokens a request may hold; a larger one is refused as "too long".
    pub limit: u64,
    /// Characters of request body per token in the server's count (rounded up).
    pub chars_per_token: f64,
    /// Characters of a plain text reply.
    pub reply_chars: usize,
    /// Refuse a streamed request over the limit the way llama-cpp-python's server does: `200`,
    /// then the stream ends with nothing in it. An unstreamed one still gets the 400.
    pub cuts_streams: bool,
    /// Close the connection without a word on an unstreamed request over the limit (a server
    /// that fails the prompt both ways and never says why).
    pub drops_unstreamed: bool,
    /// Answer a request over the limit the way Ollama does past its `num_ctx`: as if it were
    /// not, from the end of the prompt, reporting only `limit` prompt tokens.
    pub truncates_silently: bool,
    /// Whose words an OpenAI-wire refusal is in (the Anthropic wire always speaks Anthropic's).
    pub wording: Wording,
}

impl LimitConfig {
    /// A server enforcing `limit` tokens, counting 3.2 characters per token of the whole body
    /// (JSON punctuation and tool schemas included, as a tokenizer sees them), with replies of
    /// 200 characters.
    pub fn new(limit: u64) -> LimitConfig {
        LimitConfig {
            limit,
            chars_per_token: 3.2,
            reply_chars: 200,
            cuts_streams: false,
            drops_unstreamed: false,
            truncates_silently: false,
            wording: Wording::OpenAi,
        }
    }

    /// The server's token count of a request body.
    pub fn count(&self, body: &str) -> u64 {
        (body.chars().count() as f64 / self.chars_per_token).ceil() as u64
    }
}

/// One model request as the server saw and answered it.
#[derive(Debug, Clone, PartialEq)]
pub struct Exchange {
    pub wire: Wire,
    /// The request body, verbatim.
    pub body: String,
    /// The server's count of it.
    pub tokens: u64,
    pub answer: Answer,
}

impl Exchange {
    pub fn refused(&self) -> bool {
        self.answer == Answer::Refused
    }

    pub fn is_summary(&self) -> bool {
        matches!(self.answer, Answer::Summary { .. })
    }
}

/// Requests answered so far, shared between the server thread and the test.
type Log = Arc<Mutex<Served>>;

#[derive(Default)]
struct Served {
    /// Not yet taken by `take_exchanges`.
    exchanges: Vec<Exchange>,
    /// Model requests ever answered: numbers ids (tool-call ids must stay unique in a
    /// conversation, also after a soak has taken the exchanges).
    count: usize,
}

pub struct LimitServer {
    addr: SocketAddr,
    config: LimitConfig,
    exchanges: Log,
    /// Dropped or fired to stop the accept loop; the runtime then drops every connection.
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl LimitServer {
    /// Listen on a free loopback port and serve until dropped.
    pub fn start(config: LimitConfig) -> LimitServer {
        let listener =
            std::net::TcpListener::bind("127.0.0.1:0").expect("bind a loopback port for the fake");
        listener
            .set_nonblocking(true)
            .expect("a loopback listener can be made non-blocking");
        let addr = listener
            .local_addr()
            .expect("a bound listener has an address");
        let exchanges = Log::default();
        let (shutdown, stop) = oneshot::channel();
        let log = exchanges.clone();
        let thread = std::thread::Builder::new()
            .name("limit-server".into())
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("a runtime for the fake model server");
                runtime.block_on(async move {
                    let listener = TcpListener::from_std(listener)
                        .expect("register the fake's listener with its runtime");
                    tokio::select! {
                        () = serve(listener, config, log) => {}
                        _ = stop => {}
                    }
                });
            })
            .expect("spawn the fake model server's thread");
        LimitServer {
            addr,
            config,
            exchanges,
            shutdown: Some(shutdown),
            thread: Some(thread),
        }
    }

    /// `http://127.0.0.1:PORT`: the Anthropic base URL (the provider appends `/v1/messages`).
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `http://127.0.0.1:PORT/v1`: the OpenAI base URL (the provider appends
    /// `/chat/completions`).
    pub fn openai_base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The `seedpod start` flags for a pod that talks to this server over `wire` (an Anthropic
    /// pod also needs `ANTHROPIC_API_KEY` set; any value does).
    pub fn start_args(&self, wire: Wire) -> Vec<String> {
        let (provider, base_url, model) = match wire {
            Wire::OpenAi => ("openai", self.openai_base_url(), "fake-gpt"),
            Wire::Anthropic => ("anthropic", self.base_url(), "fake-claude"),
        };
        [
            "--provider",
            provider,
            "--base-url",
            &base_url,
            "--model",
            model,
        ]
        .map(str::to_owned)
        .to_vec()
    }

    pub fn config(&self) -> LimitConfig {
        self.config
    }

    /// Every model request so far, in arrival order.
    pub fn exchanges(&self) -> Vec<Exchange> {
        self.lock().exchanges.clone()
    }

    /// Every model request since the last call, removed from the server's memory (a long soak
    /// would otherwise hold every body it ever saw).
    pub fn take_exchanges(&self) -> Vec<Exchange> {
        std::mem::take(&mut self.lock().exchanges)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Served> {
        self.exchanges
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for LimitServer {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

async fn serve(listener: TcpListener, config: LimitConfig, log: Log) {
    // Owned here so that connections live exactly as long as the server.
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((socket, _)) => {
                    connections.spawn(answer(socket, config, log.clone()));
                }
                Err(_) => return,
            },
            // Reap finished connections so a long soak does not keep their handles.
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

/// Read one request, answer it, close the connection.
async fn answer(mut socket: TcpStream, config: LimitConfig, log: Log) {
    let response = match read_request(&mut socket).await {
        Ok(Some(request)) => respond(&request, config, &log),
        Ok(None) => return,
        Err(response) => response,
    };
    // A write error means the client went away; there is no one left to tell.
    let _ = socket.write_all(&response).await;
    let _ = socket.shutdown().await;
}

/// The whole HTTP response to `request`, after recording it if it was a model request.
fn respond(request: &HttpRequest, config: LimitConfig, log: &Log) -> Vec<u8> {
    let Some(wire) = Wire::of_path(&request.method, &request.path) else {
        return wire::json_response(404, r#"{"error":{"message":"no such route on the fake"}}"#);
    };
    let tokens = config.count(&request.body);
    let mut served = log.lock().unwrap_or_else(PoisonError::into_inner);
    let index = served.count;
    served.count += 1;
    let streamed = serde_json::from_str::<serde_json::Value>(&request.body)
        .is_ok_and(|v| v["stream"] == serde_json::Value::Bool(true));
    let over = tokens > config.limit;
    let (answer, response) = if over && config.cuts_streams && streamed {
        (Answer::Refused, wire::stream_response(""))
    } else if over && config.drops_unstreamed && !streamed {
        (Answer::Refused, Vec::new())
    } else if over && streamed && wire == Wire::OpenAi && config.wording == Wording::LmStudio {
        // LM Studio opens the stream and sends its refusal as an `error` event.
        let body = too_long(config.wording, config.limit, tokens);
        let event = format!("event: error\ndata: {body}\n\n");
        (Answer::Refused, wire::stream_response(&event))
    } else if over && !config.truncates_silently {
        let body = match wire {
            Wire::OpenAi => too_long(config.wording, config.limit, tokens),
            Wire::Anthropic => anthropic_too_long(config.limit, tokens),
        };
        (Answer::Refused, wire::json_response(400, &body))
    } else {
        match request::read(wire, &request.body) {
            Ok(asked) => {
                let answer = asked.answer();
                let counted = tokens.min(config.limit);
                let stream = wire::answer_stream(wire, &asked, &answer, index, counted, config);
                (answer, wire::stream_response(&stream))
            }
            Err(problem) => {
                let body = serde_json::json!({"error": {"message": problem}}).to_string();
                (Answer::Malformed(problem), wire::json_response(400, &body))
            }
        }
    };
    served.exchanges.push(Exchange {
        wire,
        body: request.body.clone(),
        tokens,
        answer,
    });
    response
}

struct HttpRequest {
    method: String,
    path: String,
    body: String,
}

/// Read one request: the head up to the blank line, then `content-length` bytes of body.
/// `Ok(None)` when the client closed first; `Err` carries the response for a request too large.
async fn read_request(socket: &mut TcpStream) -> Result<Option<HttpRequest>, Vec<u8>> {
    let mut buf = Vec::new();
    let head_end = loop {
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
        if buf.len() > MAX_HEAD_BYTES {
            return Err(wire::json_response(
                431,
                r#"{"error":{"message":"head too large"}}"#,
            ));
        }
        if read_more(socket, &mut buf).await == 0 {
            return Ok(None);
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next().unwrap_or_default().split(' ');
    let method = request_line.next().unwrap_or_default().to_owned();
    let path = request_line.next().unwrap_or_default().to_owned();
    let length = lines
        .filter_map(|line| line.split_once(':'))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("content-length"))
        .and_then(|(_, value)| value.trim().parse::<usize>().ok())
        .unwrap_or(0);
    if length > MAX_BODY_BYTES {
        return Err(wire::json_response(
            413,
            r#"{"error":{"message":"body too large"}}"#,
        ));
    }
    let body_start = head_end + 4;
    while buf.len() < body_start + length {
        if read_more(socket, &mut buf).await == 0 {
            return Ok(None);
        }
    }
    let body = String::from_utf8_lossy(&buf[body_start..body_start + length]).into_owned();
    Ok(Some(HttpRequest { method, path, body }))
}

async fn read_more(socket: &mut TcpStream, buf: &mut Vec<u8>) -> usize {
    let mut chunk = [0u8; 16 * 1024];
    match socket.read(&mut chunk).await {
        Ok(n) => {
            buf.extend_from_slice(&chunk[..n]);
            n
        }
        Err(_) => 0,
    }
}
