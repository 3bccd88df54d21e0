//! The pod's Streamable HTTP client for MCP servers: rmcp's own reqwest client, wrapped where
//! rmcp alone leaves a server stuck (docs/decisions.md §MCP sessions).
//!
//! rmcp starts a new session and retries a request once when the server answers a request's
//! session id with 404, as the MCP spec says. Real servers say it differently, so this client
//! turns each of these, on a request that carried a session id, into that same "session
//! expired" for rmcp to recover from:
//! - a 400 (or other 4xx) whose JSON-RPC error says the session is unknown, expired or invalid,
//!   whatever its `id` (the TypeScript SDK's servers answer with `id: null`, which rmcp cannot
//!   match to the request and so would wait for the tool timeout);
//! - a 4xx with a plain-text body that says so;
//! - a connection that could not be made: the request never reached the server.
//!
//! It also notices the connection dying (a refused reconnect, a stream that breaks mid-answer)
//! and says so on `Lost`, which the server's supervisor watches: an HTTP server's health is
//! tracked like a stdio server's process, and a call in flight ends at once.
//!
//! Errors leave here in people's words (`HttpFailure`), never as Rust type names.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use futures::stream::BoxStream;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, ErrorData, RequestId, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use tokio::sync::Notify;

/// Largest single answer (one SSE event or one JSON body) read from an HTTP server. rmcp's own
/// limit is 16 MiB, over which it drops the answer and the call waits its whole timeout; up to
/// this size the answer is read and cut to `max_output` for the model (`result.rs`). Beyond
/// it, the call ends at once with an error saying why.
pub const MAX_ANSWER_BYTES: usize = 64 * 1024 * 1024;
/// The largest `WWW-Authenticate` challenge kept in a login file.
const MAX_CHALLENGE_BYTES: usize = 8 * 1024;

/// Tells a server's supervisor that its connection is gone, and why (the first reason wins).
#[derive(Default)]
pub struct Lost {
    notify: Notify,
    why: Mutex<Option<Gone>>,
}

/// Why a server's connection is no use any more.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gone {
    /// The server is unreachable or the connection broke: reconnect.
    Lost(String),
    /// The server stopped taking the login (a revoked token, or a scope it now wants) and a
    /// refresh did not mend it: only a person's `seedpod mcp login` can (`oauth/watch.rs`).
    NeedsLogin(String),
}

impl Lost {
    fn signal(&self, why: String) {
        self.say(Gone::Lost(why));
    }

    /// The server refuses the login: the supervisor waits for a new one.
    pub fn needs_login(&self, why: String) {
        self.say(Gone::NeedsLogin(why));
    }

    /// The server refuses a machine client's token: reconnecting gets a new one.
    pub fn needs_reconnect(&self, why: String) {
        self.signal(why);
    }

    fn say(&self, gone: Gone) {
        if let Ok(mut slot) = self.why.lock()
            && slot.is_none()
        {
            *slot = Some(gone);
        }
        self.notify.notify_one();
    }

    /// Wait until the connection is said to be lost; the reason.
    pub async fn wait(&self) -> Gone {
        self.notify.notified().await;
        self.why
            .lock()
            .ok()
            .and_then(|why| why.clone())
            .unwrap_or_else(|| Gone::Lost("its connection was lost".to_owned()))
    }
}

/// An HTTP failure, in words.
#[derive(Debug, thiserror::Error)]
pub enum HttpFailure {
    #[error("could not connect to {url}: {why}")]
    Connect { url: String, why: String },
    #[error("the connection to {url} broke: {why}")]
    Broken { url: String, why: String },
    #[error("{url} did not answer in time")]
    TimedOut { url: String },
    #[error("the request to {url} failed: {why}")]
    Request { url: String, why: String },
    #[error("the server answered {status}")]
    Status { status: String },
}

/// rmcp's reqwest client, with sessions that recover and a connection whose loss is noticed.
#[derive(Clone)]
pub struct SessionClient {
    http: reqwest::Client,
    /// The server's URL as it may be shown (without credentials).
    shown: Arc<str>,
    lost: Arc<Lost>,
    /// The server's login file, where a request refused for want of a scope records it for
    /// the next `seedpod mcp login` (`oauth/store.rs`).
    login: Option<super::oauth::store::TokenStore>,
}

impl SessionClient {
    pub fn new(http: reqwest::Client, shown: String, lost: Arc<Lost>) -> SessionClient {
        SessionClient {
            http,
            shown: shown.into(),
            lost,
            login: None,
        }
    }

    /// The same client, recording a scope the server asks for in `login`.
    pub fn with_login(self, login: Option<super::oauth::store::TokenStore>) -> SessionClient {
        SessionClient { login, ..self }
    }

    /// A refusal: remember its challenge, and for a 403 `insufficient_scope` the scope the
    /// server wants, so the person's next login starts from them and asks for it (the pod
    /// never widens a grant on its own).
    async fn remember(&self, challenge: String, scope: Option<String>) {
        let Some(store) = self.login.clone() else {
            return;
        };
        let wanted = super::oauth::scope_tokens(scope.as_deref().unwrap_or_default());
        let recorded = tokio::task::spawn_blocking(move || {
            store.update(|file| {
                // A challenge is a header line; one larger than that is not kept (a login
                // file a server can grow without end is a disk it can fill).
                file.challenge = (challenge.len() <= MAX_CHALLENGE_BYTES).then_some(challenge);
                for scope in wanted {
                    if !file.wanted_scopes.contains(&scope) {
                        file.wanted_scopes.push(scope);
                    }
                }
            })
        })
        .await;
        if let Ok(Err(err)) = recorded {
            tracing::warn!(event = "mcp_scope_not_recorded", error = %err);
        }
    }

    fn failure(&self, err: &reqwest::Error) -> HttpFailure {
        let url = self.shown.to_string();
        let why = root_cause(err);
        if err.is_connect() {
            HttpFailure::Connect { url, why }
        } else if err.is_timeout() {
            HttpFailure::TimedOut { url }
        } else if let Some(status) = err.status() {
            HttpFailure::Status {
                status: status.to_string(),
            }
        } else if err.is_body() || err.is_decode() || err.is_request() {
            HttpFailure::Broken { url, why }
        } else {
            HttpFailure::Request { url, why }
        }
    }

    /// rmcp's error with our client's error type, `Client` errors put in words.
    fn convert(
        &self,
        err: StreamableHttpError<reqwest::Error>,
    ) -> StreamableHttpError<HttpFailure> {
        use StreamableHttpError as E;
        match err {
            E::Client(err) => E::Client(self.failure(&err)),
            E::Sse(err) => E::Sse(err),
            E::Io(err) => E::Io(err),
            E::HttpStatus(status) => E::HttpStatus(status),
            E::UnexpectedEndOfStream => E::UnexpectedEndOfStream,
            E::UnexpectedServerResponse(text) => E::UnexpectedServerResponse(text),
            E::ResponseBodyTooLarge { max_size } => E::ResponseBodyTooLarge { max_size },
            E::UnexpectedContentType(kind) => E::UnexpectedContentType(kind),
            E::ServerDoesNotSupportSse => E::ServerDoesNotSupportSse,
            E::ServerDoesNotSupportDeleteSession => E::ServerDoesNotSupportDeleteSession,
            E::TokioJoinError(err) => E::TokioJoinError(err),
            E::Deserialize(err) => E::Deserialize(err),
            E::TransportChannelClosed => E::TransportChannelClosed,
            E::MissingSessionIdInResponse => E::MissingSessionIdInResponse,
            E::AuthRequired(err) => E::AuthRequired(err),
            E::InsufficientScope(err) => E::InsufficientScope(err),
            E::ReservedHeaderConflict(name) => E::ReservedHeaderConflict(name),
            E::SessionExpired => E::SessionExpired,
            E::SessionRecoveryTimeout => E::SessionRecoveryTimeout,
            E::ReinitializationFailed(err) => E::ReinitializationFailed(err),
            E::ControlRequestTimeout => E::ControlRequestTimeout,
            E::Auth(err) => E::Auth(err),
            // Variants newer than this code: their own words.
            other => E::UnexpectedServerResponse(other.to_string().into()),
        }
    }

    /// A response stream that answers request `id` with an error at once when the server's
    /// answer is over `MAX_ANSWER_BYTES` (rmcp would drop it and leave the call waiting), and,
    /// with `report_breaks`, reports its connection breaking. The server's own event stream
    /// (GET) does not report: a proxy may cut an idle stream, and rmcp opens it again — which
    /// reports a server that is gone, as does the health ping.
    fn watched(
        &self,
        stream: BoxStream<'static, Result<sse_event::Sse, SseError>>,
        id: Option<RequestId>,
        report_breaks: bool,
    ) -> BoxStream<'static, Result<sse_event::Sse, SseError>> {
        let lost = self.lost.clone();
        let url = self.shown.clone();
        stream
            .map(move |item| match item {
                Err(err) if is_too_large(&err) => match &id {
                    Some(id) => Ok(too_large_answer(id)),
                    None => Err(err),
                },
                Err(err) if report_breaks => {
                    lost.signal(format!(
                        "the connection to {url} broke: {}",
                        root_cause(&err)
                    ));
                    Err(err)
                }
                other => other,
            })
            .boxed()
    }
}

fn is_too_large(err: &SseError) -> bool {
    err.to_string().contains("maximum size")
}

/// The event standing in for an answer to `id` too large to read.
fn too_large_answer(id: &RequestId) -> sse_event::Sse {
    let answer = ServerJsonRpcMessage::error(
        ErrorData::internal_error(
            format!(
                "its answer was over {} MiB and was not read; ask the tool for less",
                MAX_ANSWER_BYTES / (1024 * 1024)
            ),
            None,
        ),
        Some(id.clone()),
    );
    sse_event::Sse::default().data(serde_json::to_string(&answer).unwrap_or_default())
}

/// What a server answered to a request with a session id, as rmcp should take it: a session it
/// does not know is the spec's 404 (rmcp re-initialises and retries once).
fn recognise_lost_session(
    answer: Result<StreamableHttpPostResponse, StreamableHttpError<HttpFailure>>,
) -> Result<StreamableHttpPostResponse, StreamableHttpError<HttpFailure>> {
    match answer {
        Ok(StreamableHttpPostResponse::Json(ServerJsonRpcMessage::Error(error), session))
            if says_session_unknown(&error.error.message) =>
        {
            tracing::debug!(event = "mcp_session_unknown", message = %error.error.message, answered_session = ?session);
            Err(StreamableHttpError::SessionExpired)
        }
        Err(StreamableHttpError::UnexpectedServerResponse(text))
            if text.starts_with("HTTP 4") && says_session_unknown(&text) =>
        {
            tracing::debug!(event = "mcp_session_unknown", message = %text);
            Err(StreamableHttpError::SessionExpired)
        }
        // Never sent: nothing reached the server, so a new session and one retry are safe.
        Err(StreamableHttpError::Client(HttpFailure::Connect { .. })) => {
            Err(StreamableHttpError::SessionExpired)
        }
        other => other,
    }
}

/// Whether a server's words say it does not know the session a request named.
fn says_session_unknown(text: &str) -> bool {
    let text = text.to_ascii_lowercase();
    const SAYS: [&str; 9] = [
        "unknown",
        "expired",
        "invalid",
        "not found",
        "no valid",
        "does not exist",
        "no such",
        "terminated",
        "missing",
    ];
    text.contains("session") && SAYS.iter().any(|word| text.contains(word))
}

/// The innermost cause of `err`, without the OS error number.
fn root_cause(err: &(dyn std::error::Error + 'static)) -> String {
    let mut inner: &(dyn std::error::Error + 'static) = err;
    while let Some(next) = inner.source() {
        inner = next;
    }
    let text = inner.to_string();
    let text = match text.find(" (os error") {
        Some(at) => text[..at].to_owned(),
        None => text,
    };
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => "no reason given".to_owned(),
    }
}

impl StreamableHttpClient for SessionClient {
    type Error = HttpFailure;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<HttpFailure>> {
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            StreamableHttpResponseLimits::default(),
        )
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        _max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<HttpFailure>> {
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            StreamableHttpResponseLimits::default(),
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<HttpFailure>> {
        let mut limits = limits;
        limits.max_sse_event_size = limits.max_sse_event_size.max(MAX_ANSWER_BYTES);
        limits.max_json_response_size = limits.max_json_response_size.max(MAX_ANSWER_BYTES);
        let had_session = session_id.is_some();
        let id = match &message {
            ClientJsonRpcMessage::Request(request) => Some(request.id.clone()),
            _ => None,
        };
        let answer = self
            .http
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await
            .map_err(|err| self.convert(err));
        match &answer {
            Err(StreamableHttpError::InsufficientScope(refused)) => {
                let scope = refused.required_scope.clone();
                let challenge = refused.www_authenticate_header.clone();
                self.remember(challenge, scope).await;
            }
            Err(StreamableHttpError::AuthRequired(refused)) => {
                self.remember(refused.www_authenticate_header.clone(), None)
                    .await;
            }
            _ => {}
        }
        let answer = match answer {
            Ok(StreamableHttpPostResponse::Sse(stream, session)) => Ok(
                StreamableHttpPostResponse::Sse(self.watched(stream, id, true), session),
            ),
            other => other,
        };
        // A connection that broke mid-request: the server is likely gone (a restart, a crash);
        // whether the request reached it cannot be known, so it is not retried.
        if let Err(StreamableHttpError::Client(failure @ HttpFailure::Broken { .. })) = &answer {
            self.lost.signal(failure.to_string());
        }
        if had_session {
            return recognise_lost_session(answer);
        }
        // Without a session (the first initialize, or rmcp's re-initialisation), a refused
        // connection means the server is gone: its supervisor takes over.
        if let Err(StreamableHttpError::Client(failure @ HttpFailure::Connect { .. })) = &answer {
            self.lost.signal(failure.to_string());
        }
        answer
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<HttpFailure>> {
        self.http
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
            .map_err(|err| self.convert(err))
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<
        BoxStream<'static, Result<sse_event::Sse, SseError>>,
        StreamableHttpError<HttpFailure>,
    > {
        self.get_stream_with_max_sse_event_size(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            MAX_ANSWER_BYTES,
        )
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<
        BoxStream<'static, Result<sse_event::Sse, SseError>>,
        StreamableHttpError<HttpFailure>,
    > {
        let stream = self
            .http
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size.max(MAX_ANSWER_BYTES),
            )
            .await
            .map_err(|err| self.convert(err));
        match stream {
            Ok(stream) => Ok(self.watched(stream, None, false)),
            Err(StreamableHttpError::Client(failure @ HttpFailure::Connect { .. })) => {
                self.lost.signal(failure.to_string());
                Err(StreamableHttpError::Client(failure))
            }
            Err(err) => Err(err),
        }
    }
}

/// The SSE event type rmcp's client trait names (`sse_stream::Sse`, which rmcp does not
/// re-export; the workspace pins the version rmcp uses).
mod sse_event {
    pub use sse_stream::Sse;
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::NumberOrString;

    #[test]
    fn servers_words_for_a_lost_session_are_recognised() {
        for says in [
            "Bad Request: No valid session ID provided",
            "Session not found",
            "session expired",
            "Invalid or missing session ID",
            "HTTP 400 Bad Request: unknown session",
        ] {
            assert!(says_session_unknown(says), "{says}");
        }
        for other in [
            "Invalid params: text is required",
            "the session went well",
            "not found",
        ] {
            assert!(!says_session_unknown(other), "{other}");
        }
    }

    fn json_error(id: Option<RequestId>, message: &str) -> StreamableHttpPostResponse {
        StreamableHttpPostResponse::Json(
            ServerJsonRpcMessage::error(ErrorData::invalid_request(message.to_owned(), None), id),
            None,
        )
    }

    #[test]
    fn a_lost_session_is_a_404_to_rmcp_whatever_the_id_or_body() {
        let expired = |answer| {
            matches!(
                recognise_lost_session(answer),
                Err(StreamableHttpError::SessionExpired)
            )
        };
        // `id: null`, as the TypeScript SDK's servers answer.
        assert!(expired(Ok(json_error(
            None,
            "Bad Request: No valid session ID provided"
        ))));
        assert!(expired(Ok(json_error(
            Some(NumberOrString::Number(3)),
            "Session not found"
        ))));
        // A text/plain 400.
        assert!(expired(Err(StreamableHttpError::UnexpectedServerResponse(
            "HTTP 400 Bad Request: invalid session".into()
        ))));
        // A refused connection never reached the server.
        assert!(expired(Err(StreamableHttpError::Client(
            HttpFailure::Connect {
                url: "http://127.0.0.1:1/mcp".into(),
                why: "connection refused".into(),
            }
        ))));
        // Other errors are the caller's.
        assert!(!expired(Ok(json_error(
            Some(NumberOrString::Number(3)),
            "Invalid params"
        ))));
        assert!(!expired(Err(
            StreamableHttpError::UnexpectedServerResponse(
                "HTTP 500 Internal Server Error: session store down, invalid".into()
            )
        )));
    }

    #[test]
    fn an_answer_too_large_to_read_ends_its_call_with_an_error() {
        let event = too_large_answer(&NumberOrString::Number(4));
        let answer: serde_json::Value =
            serde_json::from_str(event.data.as_deref().unwrap()).unwrap();
        assert_eq!(answer["id"], 4);
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap()
                .contains("over 64 MiB"),
            "{answer}"
        );
    }

    #[test]
    fn a_root_cause_reads_like_words() {
        let io = std::io::Error::from_raw_os_error(libc::ECONNREFUSED);
        assert_eq!(root_cause(&io), "connection refused");
    }
}
