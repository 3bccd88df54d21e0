//! rmcp's errors in people's words. rmcp's own messages name Rust types (`Transport
//! [rmcp::…WorkerTransport<…>] error`) and call a refused connection "an error from the
//! server"; a person reading `mcp ls`, an alert or a tool result needs to know whether the
//! server could not be reached, broke off, or answered — and with what.

use std::error::Error;

use rmcp::service::{ClientInitializeError, ServiceError};
use rmcp::transport::auth::AuthError;
use rmcp::transport::streamable_http_client::StreamableHttpError;
use rmcp::transport::worker::WorkerQuitReason;

use super::http::HttpFailure;

/// What a 401 or 403 says, before the pod has judged whether a login can help
/// (`oauth::judge_refusal` words the state people see).
const LOGIN_NEEDED: &str = "the server wants authorisation (HTTP 401/403)";

/// Why a request to a running server failed.
pub fn service_error(err: &ServiceError) -> String {
    match err {
        ServiceError::McpError(error) => {
            format!("the server answered with an error: {}", error.message)
        }
        ServiceError::TransportSend(error) => transport(error.error.as_ref()),
        ServiceError::TransportClosed => "its connection closed".to_owned(),
        ServiceError::Timeout { timeout } => {
            format!("it did not answer within {}s", timeout.as_secs())
        }
        ServiceError::Cancelled { .. } => "the request was cancelled".to_owned(),
        other => other.to_string(),
    }
}

/// Why a server could not be initialised.
pub fn init_error(err: &ClientInitializeError) -> String {
    match err {
        ClientInitializeError::TransportError { error, .. } => transport(error.error.as_ref()),
        ClientInitializeError::ConnectionClosed(why) => {
            format!("its connection closed before it initialised ({why})")
        }
        ClientInitializeError::JsonRpcError(error) => {
            format!("it refused to initialise: {}", error.message)
        }
        other => other.to_string(),
    }
}

/// Whether a server refused to initialise for want of authorisation (HTTP 401 or 403): trying
/// again cannot help until a person gives the pod a token.
pub fn needs_login(err: &ClientInitializeError) -> bool {
    let ClientInitializeError::TransportError { error, .. } = err else {
        return false;
    };
    let mut at: &(dyn Error + 'static) = error.error.as_ref();
    loop {
        if let Some(error) = at.downcast_ref::<StreamableHttpError<HttpFailure>>() {
            return match error {
                StreamableHttpError::AuthRequired(_)
                | StreamableHttpError::InsufficientScope(_)
                | StreamableHttpError::Auth(AuthError::AuthorizationRequired) => true,
                StreamableHttpError::UnexpectedServerResponse(text) => {
                    text.starts_with("HTTP 401") || text.starts_with("HTTP 403")
                }
                _ => false,
            };
        }
        match at.source() {
            Some(next) => at = next,
            None => return false,
        }
    }
}

/// What a refusal (401 or 403) said: its `WWW-Authenticate` challenge, and for a 403 the
/// scope it wants.
pub fn challenge(err: &ClientInitializeError) -> (Option<String>, Option<String>) {
    let ClientInitializeError::TransportError { error, .. } = err else {
        return (None, None);
    };
    refusal(error.error.as_ref())
}

/// The challenge of a refusal anywhere in `err`'s chain of causes.
pub fn refusal(err: &(dyn Error + 'static)) -> (Option<String>, Option<String>) {
    let mut at: &(dyn Error + 'static) = err;
    loop {
        if let Some(error) = at.downcast_ref::<StreamableHttpError<HttpFailure>>() {
            return match error {
                StreamableHttpError::AuthRequired(refused) => {
                    (Some(refused.www_authenticate_header.clone()), None)
                }
                StreamableHttpError::InsufficientScope(refused) => (
                    Some(refused.www_authenticate_header.clone()),
                    refused.required_scope.clone(),
                ),
                _ => (None, None),
            };
        }
        match at.source() {
            Some(next) => at = next,
            None => return (None, None),
        }
    }
}

/// A transport's error, found in its chain of causes.
pub fn transport(err: &(dyn Error + Send + Sync + 'static)) -> String {
    let mut at: &(dyn Error + 'static) = err;
    loop {
        if let Some(error) = at.downcast_ref::<StreamableHttpError<HttpFailure>>() {
            return http(error);
        }
        if let Some(quit) = at.downcast_ref::<WorkerQuitReason<StreamableHttpError<HttpFailure>>>()
        {
            return match quit {
                WorkerQuitReason::Fatal { error, .. } => http(error),
                WorkerQuitReason::Cancelled
                | WorkerQuitReason::TransportClosed
                | WorkerQuitReason::HandlerTerminated => "its connection closed".to_owned(),
                other => other.to_string(),
            };
        }
        if let Some(error) = at.downcast_ref::<HttpFailure>() {
            return error.to_string();
        }
        if let Some(error) = at.downcast_ref::<std::io::Error>() {
            return match error.kind() {
                std::io::ErrorKind::BrokenPipe | std::io::ErrorKind::UnexpectedEof => {
                    "its connection closed".to_owned()
                }
                _ => error.to_string(),
            };
        }
        match at.source() {
            Some(next) => at = next,
            None => return at.to_string(),
        }
    }
}

/// An HTTP transport's error.
pub fn http(err: &StreamableHttpError<HttpFailure>) -> String {
    use StreamableHttpError as E;
    match err {
        E::Client(failure) => failure.to_string(),
        E::HttpStatus(status) => format!("the server answered HTTP {}", status.status),
        E::UnexpectedServerResponse(text)
            if text.starts_with("HTTP 401") || text.starts_with("HTTP 403") =>
        {
            format!("{LOGIN_NEEDED} (it answered {})", &text["HTTP ".len()..])
        }
        E::UnexpectedServerResponse(text) => match text.strip_prefix("HTTP ") {
            Some(rest) => format!("the server answered {rest}"),
            None => format!("the server sent something unexpected: {text}"),
        },
        E::SessionExpired => "the server no longer knows this session".to_owned(),
        E::SessionRecoveryTimeout => {
            "starting a new session with the server timed out; the request may or may not have \
             reached it"
                .to_owned()
        }
        E::ReinitializationFailed(error) => {
            format!("the server refused a new session: {}", error.message)
        }
        E::ResponseBodyTooLarge { max_size } => format!(
            "its answer was larger than {} MiB and was not read",
            max_size / (1024 * 1024)
        ),
        E::AuthRequired(_) => LOGIN_NEEDED.to_owned(),
        E::InsufficientScope(refused) => {
            let scopes = refused
                .required_scope
                .as_deref()
                .map(super::oauth::scope_tokens)
                .unwrap_or_default();
            match scopes.is_empty() {
                false => format!(
                    "the server wants more permission than the login gave (scope {}); \
                     `seedpod mcp login` asks for it",
                    scopes.join(" ")
                ),
                true => format!("{LOGIN_NEEDED}: the login does not give enough permission"),
            }
        }
        E::Auth(AuthError::AuthorizationRequired) => {
            "the login is missing or expired and could not be renewed".to_owned()
        }
        E::Auth(other) => format!("the OAuth login failed: {other}"),
        E::UnexpectedContentType(kind) => format!(
            "the server answered with content of type {}, not JSON or an event stream",
            kind.as_deref().unwrap_or("(none)")
        ),
        E::Sse(error) => format!("its event stream broke: {error}"),
        E::UnexpectedEndOfStream => "its event stream ended before the answer".to_owned(),
        E::Deserialize(error) => format!("its answer is not valid JSON-RPC: {error}"),
        E::TransportChannelClosed => "its connection closed".to_owned(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_connection_and_a_server_error_are_told_apart() {
        let refused: StreamableHttpError<HttpFailure> =
            StreamableHttpError::Client(HttpFailure::Connect {
                url: "http://127.0.0.1:9/mcp".into(),
                why: "connection refused".into(),
            });
        assert_eq!(
            http(&refused),
            "could not connect to http://127.0.0.1:9/mcp: connection refused"
        );
        let answered: StreamableHttpError<HttpFailure> =
            StreamableHttpError::UnexpectedServerResponse(
                "HTTP 500 Internal Server Error: boom".into(),
            );
        assert_eq!(
            http(&answered),
            "the server answered 500 Internal Server Error: boom"
        );
        // Through rmcp's box, as a call's error carries it: no type names.
        let boxed: Box<dyn Error + Send + Sync> = Box::new(refused);
        let said = transport(boxed.as_ref());
        assert!(!said.contains("rmcp::"), "{said}");
        assert!(said.starts_with("could not connect to"), "{said}");
    }
}
