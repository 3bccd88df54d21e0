//! The HTTP half shared by the real providers: building the client, sending a request body, and
//! classifying every way that can fail into `ProviderError::Transient` or `Permanent`.
//!
//! Turning the streamed body into events is `http/stream.rs`; what the events mean is each
//! provider's `Decoder`. What a server's error says and how it is classified is
//! `http/error_body.rs`, and the words of an HTML or multi-line error body `http/body_text.rs`.

mod body_text;
mod error_body;
#[cfg(test)]
pub(crate) mod fuzz;
mod stream;

use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue, RETRY_AFTER};
use reqwest::{StatusCode, Url};

use crate::provider::ProviderError;

pub(crate) use self::error_body::{
    classify, error_object, is_transient_status, provider_message, reported_error, truncate,
};
pub(crate) use self::stream::{
    Decoded, Decoder, MAX_QUOTED_EVENT_CHARS, is_cut, is_cut_at_start, parse_event, stream_events,
};

/// How long to wait for a connection unless configured otherwise (`[timeouts] connect_ms`,
/// whose default this is).
pub const DEFAULT_CONNECT_TIMEOUT: Duration =
    Duration::from_millis(seedpod_config::effective::DEFAULT_CONNECT_MS);

/// How long a response may go without a single byte unless configured otherwise
/// (`[timeouts] idle_read_ms`, whose default this is).
pub const DEFAULT_IDLE_READ_TIMEOUT: Duration =
    Duration::from_millis(seedpod_config::effective::DEFAULT_IDLE_READ_MS);

/// The most of an error response's body that is read to find the provider's message.
const MAX_ERROR_BODY_BYTES: usize = 64 * 1024;

/// The most characters of a server's words quoted when it refuses to list its models.
const MAX_MODELS_ERROR_CHARS: usize = 200;

/// A configuration the provider cannot be built from.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProviderSetupError {
    #[error("invalid base URL {url:?}: {reason}")]
    BaseUrl { url: String, reason: String },
    /// The key itself is never quoted: it is a secret.
    #[error("the API key contains characters that cannot be sent in an HTTP header")]
    ApiKey,
    #[error("cannot start the HTTP client: {0}")]
    Client(String),
}

/// Where and how one provider sends its requests; cheap to clone into each stream.
#[derive(Clone)]
pub(crate) struct Endpoint {
    /// `anthropic` / `openai`, the prefix of every error message.
    pub provider: &'static str,
    pub client: reqwest::Client,
    pub url: Url,
    /// `url` without any user name or password, for messages.
    pub shown_url: String,
    /// Sent with every request; secrets among them are marked sensitive so they never print.
    pub headers: HeaderMap,
    pub connect_timeout: Duration,
    pub idle_read_timeout: Duration,
    /// The sensitive header values (the key, with and without `Bearer `): a server that echoes
    /// them in an error must not put them in a message.
    secrets: Vec<String>,
}

impl Endpoint {
    /// An endpoint at `base_url` + `path` (`path` starts with `/`).
    pub fn new(
        provider: &'static str,
        base_url: &str,
        path: &str,
        headers: HeaderMap,
        connect_timeout: Duration,
        idle_read_timeout: Duration,
    ) -> Result<Self, ProviderSetupError> {
        let url = endpoint_url(base_url, path)?;
        let client = http_client(&url, connect_timeout)?;
        let mut shown = url.clone();
        // Both fail only for URLs that cannot have credentials, which leaves nothing to hide.
        let _ = shown.set_password(None);
        let _ = shown.set_username("");
        let mut secrets: Vec<String> = headers
            .values()
            .filter(|value| value.is_sensitive())
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| {
                let bare = value.strip_prefix("Bearer ").unwrap_or(value);
                [value.to_owned(), bare.to_owned()]
            })
            .collect();
        // A base URL's password is a secret too, should a proxy echo it.
        if let Some(password) = url.password().filter(|p| !p.is_empty()) {
            secrets.push(password.to_owned());
        }
        Ok(Endpoint {
            provider,
            client,
            url,
            shown_url: shown.to_string(),
            headers,
            connect_timeout,
            idle_read_timeout,
            secrets,
        })
    }

    /// The ids of the models the server offers: `GET` the endpoint's URL with `from` (the
    /// chat path) replaced by `to` (the models path), its headers, `{"data": [{"id": …}]}`
    /// (the shape OpenAI, Anthropic and the local servers share). Errors are scrubbed.
    pub async fn list_models(&self, from: &str, to: &str) -> Result<Vec<String>, String> {
        let url = self.url.as_str();
        let base = url.strip_suffix(from).unwrap_or(url);
        let models = Url::parse(&format!("{base}{to}"))
            .map_err(|e| format!("{}: no models URL: {e}", self.provider))?;
        let request = self
            .client
            .get(models)
            .headers(self.headers.clone())
            .timeout(self.connect_timeout + self.idle_read_timeout);
        let response = request
            .send()
            .await
            .map_err(|e| self.scrub(&format!("{}: cannot list models: {e}", self.provider)))?;
        let status = response.status();
        let body = response
            .text()
            .await
            .map_err(|e| self.scrub(&format!("{}: cannot list models: {e}", self.provider)))?;
        if !status.is_success() {
            // One line a person can read: the status and the server's words, never its markup.
            let said = truncate(
                &provider_message(&self.scrub(&body)),
                MAX_MODELS_ERROR_CHARS,
            );
            return Err(crate::provider::printable(format!(
                "{}: the server answered the model list with HTTP {}: {said}",
                self.provider,
                status_text(status)
            )));
        }
        let value: serde_json::Value = serde_json::from_str(&body)
            .map_err(|_| format!("{}: the server's model list is not JSON", self.provider))?;
        let ids: Vec<String> = value
            .get("data")
            .and_then(serde_json::Value::as_array)
            .map(|data| {
                data.iter()
                    .filter_map(|m| m.get("id").and_then(serde_json::Value::as_str))
                    .map(|id| crate::provider::printable(id.to_owned()))
                    .collect()
            })
            .ok_or_else(|| format!("{}: the server's model list has no data", self.provider))?;
        Ok(ids)
    }

    /// `text` from the server with every secret taken out: the configured ones and anything
    /// that looks like a key or a token (`crate::redact`).
    pub fn scrub(&self, text: &str) -> String {
        crate::redact::redact_values(&crate::redact::redact(text), &self.secrets)
    }

    /// Send `body` and wait for the response head. Non-success statuses become errors here.
    pub async fn send(&self, body: String) -> Result<reqwest::Response, ProviderError> {
        let request = self
            .client
            .post(self.url.clone())
            .headers(self.headers.clone())
            .body(body);
        // Connecting is bounded by the client's connect timeout; after that, waiting for the
        // response head is waiting for bytes like any other read.
        let limit = self.connect_timeout + self.idle_read_timeout;
        let response = match tokio::time::timeout(limit, request.send()).await {
            Ok(Ok(response)) => response,
            Ok(Err(err)) => return Err(self.transport_error(err)),
            Err(_) => return Err(self.timeout(limit, "for the response to start")),
        };
        if response.status().is_success() {
            return Ok(response);
        }
        Err(self.status_error(response).await)
    }

    /// The error for a read that saw no bytes for `waited`.
    pub fn timeout(&self, waited: Duration, what: &str) -> ProviderError {
        ProviderError::transient(format!(
            "{}: timed out after {}s waiting {what} from {}",
            self.provider,
            waited.as_secs(),
            self.shown_url
        ))
    }

    /// A failure below HTTP: connecting, TLS, a dropped connection.
    pub fn transport_error(&self, err: reqwest::Error) -> ProviderError {
        // Our messages name the URL themselves, without any credentials a base URL might hold.
        let err = err.without_url();
        let chain = error_chain(&err);
        if err.is_builder() {
            return ProviderError::permanent(format!(
                "{}: cannot build the request: {chain}",
                self.provider
            ));
        }
        if err.is_connect() {
            return ProviderError::transient(format!(
                "{}: cannot connect to {}: {chain}",
                self.provider, self.shown_url
            ));
        }
        if err.is_timeout() {
            return ProviderError::transient(format!("{}: timed out: {chain}", self.provider));
        }
        ProviderError::transient(format!("{}: the connection failed: {chain}", self.provider))
    }

    /// Turn a non-success response into an error carrying the provider's own explanation.
    async fn status_error(&self, mut response: reqwest::Response) -> ProviderError {
        let status = response.status();
        let retry_after = retry_after(response.headers());
        let location = response
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let mut body = Vec::new();
        while body.len() < MAX_ERROR_BODY_BYTES {
            match tokio::time::timeout(self.idle_read_timeout, response.chunk()).await {
                Ok(Ok(Some(chunk))) => body.extend_from_slice(&chunk),
                Ok(Ok(None)) | Ok(Err(_)) | Err(_) => break,
            }
        }
        let detail = provider_message(&self.scrub(&String::from_utf8_lossy(&body)));
        let hint = match (status.as_u16(), location) {
            (300..=399, Some(location)) => {
                format!(" (the server redirects to {location}; use that as the base URL)")
            }
            (401 | 403, _) => " (check the API key)".to_owned(),
            (404, _) => " (check the model name and the base URL)".to_owned(),
            _ => String::new(),
        };
        let message = format!(
            "{}: HTTP {}: {detail}{hint}",
            self.provider,
            status_text(status)
        );
        let code = status.as_u16();
        classify(message, Some(code), retry_after, is_transient_status(code))
    }
}

/// The start of every HTTP client seedpod builds (model servers, MCP servers, the local-server
/// detection): TLS by rustls with ring as its crypto, and our user agent.
///
/// reqwest is built without a crypto provider of its own (aws-lc-rs, whose C build dominated a
/// fresh build; `docs/decisions.md`), so the process-wide provider must be installed before
/// any client is built, or reqwest panics. Installing it here, in the one place clients start
/// from, means no caller can forget; a second install (another thread, a test binary) finds
/// one there already, which is the same provider.
pub fn http_client_builder() -> reqwest::ClientBuilder {
    static PROVIDER: std::sync::Once = std::sync::Once::new();
    PROVIDER.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
    reqwest::Client::builder().user_agent(concat!("seedpod/", env!("CARGO_PKG_VERSION")))
}

/// The client every request to `url` is sent with: connect timeout, our user agent, no
/// redirects, and no proxy for a server on this machine.
pub(crate) fn http_client(
    url: &Url,
    connect_timeout: Duration,
) -> Result<reqwest::Client, ProviderSetupError> {
    let mut builder = http_client_builder()
        .connect_timeout(connect_timeout)
        // A POST that redirects is a misconfigured base URL; say so rather than follow it.
        .redirect(reqwest::redirect::Policy::none());
    if is_loopback(url) {
        // A model server on this machine is never behind the proxy the environment names.
        builder = builder.no_proxy();
    }
    if plain_http_here(url) {
        builder = without_trust_roots(builder);
    }
    builder
        .build()
        .map_err(|err| ProviderSetupError::Client(error_chain(&err)))
}

/// Whether every connection a client for `url` makes is plain HTTP to this machine: an
/// `http://` loopback address, with no proxy (loopback never goes through one) and no redirect
/// to follow elsewhere.
fn plain_http_here(url: &Url) -> bool {
    url.scheme() == "http" && is_loopback(url)
}

/// A client that will never speak TLS does not load the system's trust roots. Building a
/// client otherwise reads and parses every certificate the system trusts (on Debian, the
/// bundle and ~150 files beside it), which was a third of a new pod's start against a local
/// model server (docs/decisions.md, "A client for plain HTTP on this machine loads no trust
/// roots"). With no roots, an `https` connection it was somehow asked to make would fail
/// verification: closed, never open.
pub fn without_trust_roots(builder: reqwest::ClientBuilder) -> reqwest::ClientBuilder {
    builder.tls_certs_only(std::iter::empty())
}

/// A header value for a secret: never shown by `Debug`.
pub(crate) fn secret_header(value: &str) -> Result<HeaderValue, ProviderSetupError> {
    let mut value = HeaderValue::from_str(value).map_err(|_| ProviderSetupError::ApiKey)?;
    value.set_sensitive(true);
    Ok(value)
}

/// Headers every provider sends.
pub(crate) fn json_headers() -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(
        reqwest::header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(
        reqwest::header::ACCEPT,
        HeaderValue::from_static("text/event-stream"),
    );
    headers
}

pub(crate) fn endpoint_url(base_url: &str, path: &str) -> Result<Url, ProviderSetupError> {
    let invalid = |reason: String| ProviderSetupError::BaseUrl {
        url: base_url.to_owned(),
        reason,
    };
    let joined = format!("{}{path}", base_url.trim_end_matches('/'));
    let url = Url::parse(&joined).map_err(|err| invalid(err.to_string()))?;
    match url.scheme() {
        "http" | "https" => Ok(url),
        other => Err(invalid(format!(
            "the scheme must be http or https, not {other}"
        ))),
    }
}

fn is_loopback(url: &Url) -> bool {
    let Some(host) = url.host_str() else {
        return false;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Whether `base_url` names a server on this machine or a private network (loopback,
/// `localhost`, `*.local`, RFC 1918, link-local, IPv6 unique-local): where model servers run
/// with a context window of their own choosing, which the model's family says nothing about.
pub fn is_local_server(base_url: &str) -> bool {
    let Ok(url) = Url::parse(base_url) else {
        return false;
    };
    if is_loopback(&url) {
        return true;
    }
    let Some(host) = url.host_str() else {
        return false;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.to_ascii_lowercase().ends_with(".local") {
        return true;
    }
    match host.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(ip)) => ip.is_private() || ip.is_link_local(),
        // fc00::/7 (unique local) and fe80::/10 (link-local).
        Ok(std::net::IpAddr::V6(ip)) => {
            let first = ip.segments()[0];
            first & 0xfe00 == 0xfc00 || first & 0xffc0 == 0xfe80
        }
        Err(_) => false,
    }
}

fn status_text(status: StatusCode) -> String {
    match status.canonical_reason() {
        Some(reason) => format!("{} {reason}", status.as_u16()),
        None => status.as_u16().to_string(),
    }
}

/// How long the server asked us to wait: `retry-after-ms` (OpenAI), else `retry-after` in
/// seconds. The HTTP-date form of `retry-after` is not understood and falls back to backoff.
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let number = |name: &str| -> Option<f64> {
        let value = headers.get(HeaderName::from_bytes(name.as_bytes()).ok()?)?;
        value.to_str().ok()?.trim().parse::<f64>().ok()
    };
    let seconds = match number("retry-after-ms") {
        Some(ms) => ms / 1000.0,
        None => number(RETRY_AFTER.as_str())?,
    };
    Duration::try_from_secs_f64(seconds).ok()
}

/// An error and its sources, because `reqwest`'s own message hides the useful part ("connection
/// refused") in the source chain.
fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests;
