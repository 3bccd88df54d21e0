//! Noticing that a logged-in server stopped taking the login (docs/configuration.md §MCP
//! OAuth). rmcp's `AuthClient` answers a 401 on a request by refreshing the token once and
//! trying again; what still comes back refused after that — a 401 (the token was revoked) or
//! a 403 `insufficient_scope` (the server wants a scope the login does not have) — cannot be
//! mended by the pod. This client sits outside `AuthClient` and tells the server's supervisor
//! at once (`Lost::needs_login`), so `mcp ls`, `/mcp` and an alert say `needs login` from the
//! first refused call instead of `ready` until the next reconnect.
//!
//! A machine client (`grant = "client_credentials"`) gets a new token by reconnecting, so for
//! it a refusal is a lost connection instead.

use std::collections::HashMap;
use std::sync::Arc;

use futures::stream::BoxStream;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::Sse;

use crate::mcp::http::Lost;

/// What a refusal means for the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnRefusal {
    /// A person's login: wait for `seedpod mcp login`.
    NeedsLogin,
    /// A machine client: reconnect, which asks for a new token.
    Reconnect,
}

/// `inner` (rmcp's `AuthClient` over the pod's session client), watched for refusals.
#[derive(Clone)]
pub struct Watched<C> {
    inner: C,
    lost: Arc<Lost>,
    on_refusal: OnRefusal,
}

impl<C> Watched<C> {
    pub fn new(inner: C, lost: Arc<Lost>, on_refusal: OnRefusal) -> Watched<C> {
        Watched {
            inner,
            lost,
            on_refusal,
        }
    }

    fn check<T, E>(
        &self,
        result: Result<T, StreamableHttpError<E>>,
    ) -> Result<T, StreamableHttpError<E>>
    where
        E: std::error::Error + Send + Sync + 'static,
    {
        if let Err(err) = &result
            && let Some(why) = refusal_words(err)
        {
            match self.on_refusal {
                OnRefusal::NeedsLogin => self.lost.needs_login(why),
                OnRefusal::Reconnect => self.lost.needs_reconnect(why),
            }
        }
        result
    }
}

/// What a refusal that a refresh did not mend says, in words; `None` for anything else.
fn refusal_words<E>(err: &StreamableHttpError<E>) -> Option<String>
where
    E: std::error::Error + Send + Sync + 'static,
{
    match err {
        StreamableHttpError::AuthRequired(_) => {
            Some("the server stopped taking its login (HTTP 401 after a refresh)".to_owned())
        }
        StreamableHttpError::InsufficientScope(refused) => {
            let scopes = refused
                .required_scope
                .as_deref()
                .map(super::scope_tokens)
                .unwrap_or_default();
            Some(match scopes.is_empty() {
                false => format!(
                    "the server wants more permission than the login gave (scope {}); the \
                     next login asks for it",
                    scopes.join(" ")
                ),
                true => {
                    "the server wants more permission than the login gave (HTTP 403)".to_owned()
                }
            })
        }
        // A 401 or 403 whose challenge is not ASCII: rmcp cannot read the header and says so
        // in these words (rmcp 3.11, `streamable_http_client.rs`; pinned by the e2e test
        // `mcp_oauth::a_refusal_whose_challenge_is_not_ascii_…`). A refusal all the same; nothing
        // in it is taken.
        StreamableHttpError::UnexpectedServerResponse(said) if said == UNREADABLE_CHALLENGE => {
            Some(
                "the server refused the login, and its reason (HTTP 401 or 403) could not be read"
                    .to_owned(),
            )
        }
        _ => None,
    }
}

/// What rmcp says of a refusal whose `WWW-Authenticate` header is not ASCII.
const UNREADABLE_CHALLENGE: &str = "invalid www-authenticate header value";

impl<C> StreamableHttpClient for Watched<C>
where
    C: StreamableHttpClient + Send + Sync,
{
    type Error = C::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let answer = self
            .inner
            .post_message(uri, message, session_id, auth_header, custom_headers)
            .await;
        self.check(answer)
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let answer = self
            .inner
            .post_message_with_max_sse_event_size(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await;
        self.check(answer)
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let answer = self
            .inner
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await;
        self.check(answer)
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        // Ending a session is the pod's own goodbye: a refusal there changes nothing.
        self.inner
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        let stream = self
            .inner
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await;
        self.check(stream)
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        let stream = self
            .inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await;
        self.check(stream)
    }
}
