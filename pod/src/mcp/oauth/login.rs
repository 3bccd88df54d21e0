//! `seedpod mcp login SERVER`: one OAuth authorization-code login (with PKCE) for a url
//! server, its tokens written to the server's login file (`store.rs`).
//!
//! The redirect goes to a listener on this machine's loopback interface (never another
//! address: the code must not travel further than this machine). Over ssh, or without a
//! browser here, the browser's redirect fails to load and the person pastes its address on
//! stdin instead; both are taken, whichever comes first. A redirect whose `state` is not this
//! login's is refused and the login keeps waiting: an old or forged redirect cannot complete
//! it.

use std::time::Duration;

use rmcp::transport::AuthorizationRequest;
use rmcp::transport::auth::{AuthError, AuthorizationManager, AuthorizationSession};
use seedpod_config::{McpServer, McpTransport};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::store::TokenStore;

/// The largest request head the callback listener reads (a browser's GET with its headers).
const MAX_CALLBACK_REQUEST: usize = 16 * 1024;
/// How long one connection to the callback listener may take to send its request.
const CALLBACK_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// How long the probe for the server's challenge may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(30);
/// The path the authorization server redirects to.
const CALLBACK_PATH: &str = "/callback";
/// The client name a registration gives.
const CLIENT_NAME: &str = "seedpod";

/// A login that failed, in words.
#[derive(Debug, thiserror::Error)]
pub enum LoginError {
    #[error("MCP server {0} is a command server; only url servers log in")]
    NotHttp(String),
    #[error("MCP server {0} has `oauth = false`; remove it to log in")]
    Disabled(String),
    #[error("could not reach {url}: {why}")]
    Unreachable { url: String, why: String },
    #[error("{url} did not ask for a login (it answered {status} without credentials)")]
    NotAsked { url: String, status: String },
    #[error("{0}")]
    Refused(String),
    #[error("could not open the login callback on 127.0.0.1: {0}")]
    Listen(String),
    #[error("the authorization server refused the login: {0}")]
    Denied(String),
    #[error("the login could not finish: {0}")]
    Exchange(String),
    #[error("{0}")]
    Store(#[from] super::store::StoreError),
}

/// What a login needs to know.
pub struct LoginPlan<'a> {
    pub server: &'a McpServer,
    pub store: TokenStore,
    /// A fixed callback port (otherwise any free one).
    pub port: Option<u16>,
}

/// A login waiting for its redirect.
pub struct Pending {
    session: AuthorizationSession,
    listener: TcpListener,
    store: TokenStore,
    /// What the person opens.
    pub authorize_url: String,
    /// Where the authorization server sends the browser back.
    pub redirect_uri: String,
    state: String,
    client_secret: Option<String>,
}

/// Discover the server's authorization, register (or use the configured client) and make
/// the URL the person opens.
pub async fn begin(plan: LoginPlan<'_>) -> Result<Pending, LoginError> {
    let server = plan.server;
    let McpTransport::Http { url, .. } = &server.transport else {
        return Err(LoginError::NotHttp(server.name.clone()));
    };
    if !server.oauth.enabled {
        return Err(LoginError::Disabled(server.name.clone()));
    }
    if server.oauth.grant.is_machine() {
        return Err(LoginError::Refused(format!(
            "MCP server {} is a machine client (grant = \"{}\"): a pod gets its token itself \
             when it connects, so no login is needed",
            server.name,
            server.oauth.grant.as_str()
        )));
    }
    let lookup = |var: &str| std::env::var(var).ok();
    let url = seedpod_config::expand::expand(url, &lookup)
        .map_err(|e| LoginError::Refused(format!("its url: {e}")))?;
    let asked = probe(&url).await?;
    let secret = super::client_secret(&server.oauth).map_err(LoginError::Refused)?;
    let listener = TcpListener::bind(("127.0.0.1", plan.port.unwrap_or(0)))
        .await
        .map_err(|e| LoginError::Listen(e.to_string()))?;
    let port = listener
        .local_addr()
        .map_err(|e| LoginError::Listen(e.to_string()))?
        .port();
    let redirect_uri = format!("http://127.0.0.1:{port}{CALLBACK_PATH}");

    let mut manager = AuthorizationManager::new(url.as_str())
        .await
        .map_err(|e| refused(&url, e))?;
    // A server that lets anyone initialise and refuses later (its tools) told the pod why:
    // the pod kept its challenge in the login file.
    let challenge = match &asked {
        Asked::Refused(challenge) => challenge.clone(),
        Asked::Let(_) => plan.store.read()?.challenge,
    };
    let found = super::discovery::resolve(&manager, &url, challenge.as_deref())
        .await
        .map_err(|e| refused(&url, e))?;
    if let (Asked::Let(status), false) = (&asked, found.source.is_discovered()) {
        return Err(LoginError::NotAsked {
            url: seedpod_config::show::mask_url(&url),
            status: status.clone(),
        });
    }
    let metadata = found.metadata.clone();
    manager.set_metadata(found.metadata);
    manager.set_credential_store(plan.store.clone());

    // Step-up: what the login had, and what the server asked for since, are asked together.
    let before = plan.store.read()?;
    let mut scopes: Vec<String> = server.oauth.scopes.clone();
    let granted = before
        .credentials
        .as_ref()
        .map(|c| c.granted_scopes.clone())
        .unwrap_or_default();
    if !before.wanted_scopes.is_empty() {
        for scope in granted.iter().chain(&before.wanted_scopes) {
            if !scopes.contains(scope) {
                scopes.push(scope.clone());
            }
        }
    }
    // Who seedpod is to the authorization server, in the spec's order: a configured client,
    // else a client ID metadata document where the server takes one, else a registration.
    let takes_documents = metadata
        .additional_fields
        .get("client_id_metadata_document_supported")
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false);
    let client = match (&server.oauth.client_id, &server.oauth.client_metadata_url) {
        (Some(id), _) => Some((id.clone(), secret)),
        (None, Some(_)) if takes_documents => None,
        (None, _) if metadata.registration_endpoint.is_some() => {
            // Registered here rather than by rmcp's session, which keeps a secret the server
            // gives in memory only; a refresh in a later process needs it.
            let wanted: Vec<&str> = scopes.iter().map(String::as_str).collect();
            let registered = manager
                .register_client(CLIENT_NAME, &redirect_uri, &wanted)
                .await
                .map_err(|e| refused(&url, e))?;
            Some((registered.client_id, registered.client_secret))
        }
        (None, _) => {
            return Err(LoginError::Refused(format!(
                "could not log in to {}: its authorization server offers no client                  registration{}; set client_id (and client_secret_env) for server {} in the                  config",
                seedpod_config::show::mask_url(&url),
                if server.oauth.client_metadata_url.is_some() {
                    " and takes no client metadata documents"
                } else {
                    ""
                },
                server.name
            )));
        }
    };
    // Without scopes of our own, the spec's order for a first login: the challenge's scope,
    // else the resource's `scopes_supported`, else none (not their union).
    let mut request = AuthorizationRequest::new(redirect_uri.clone())
        .with_client_name(CLIENT_NAME)
        .with_application_type("native")
        .with_initial_scope_selection()
        .with_scopes(scopes);
    let mut client_secret = None;
    match client {
        Some((id, secret)) => {
            request = request.with_preregistered_client(id);
            if let Some(secret) = secret {
                request = request.with_client_secret(secret.clone());
                client_secret = Some(secret);
            }
        }
        None => {
            if let Some(document) = &server.oauth.client_metadata_url {
                request = request.with_client_metadata_url(document.clone());
            }
        }
    }
    let session = AuthorizationSession::new(manager, request)
        .await
        .map_err(|(_, e)| refused(&url, e))?;
    let authorize_url = session.get_authorization_url().to_owned();
    let state = query_value(&authorize_url, "state").unwrap_or_default();
    Ok(Pending {
        session,
        listener,
        store: plan.store,
        authorize_url,
        redirect_uri,
        state,
        client_secret,
    })
}

impl Pending {
    /// Wait for the redirect (on the callback listener, or pasted as a line on `pasted`),
    /// exchange its code for tokens and save them. `say` is told what the person should hear
    /// while waiting (a refused redirect).
    pub async fn finish<R>(self, pasted: R, say: &mut dyn FnMut(&str)) -> Result<(), LoginError>
    where
        R: AsyncBufRead + Unpin,
    {
        let mut lines = pasted.lines();
        let mut stdin_open = true;
        let callback = loop {
            let candidate = tokio::select! {
                accepted = self.listener.accept() => match accepted {
                    Ok((stream, _)) => match read_callback(stream, &self.state).await {
                        Some(url) => url,
                        None => continue,
                    },
                    Err(err) => return Err(LoginError::Listen(err.to_string())),
                },
                line = lines.next_line(), if stdin_open => match line {
                    Ok(Some(line)) if line.trim().is_empty() => continue,
                    Ok(Some(line)) => line.trim().to_owned(),
                    // No more input: the browser's redirect is the only way left.
                    Ok(None) | Err(_) => {
                        stdin_open = false;
                        continue;
                    }
                },
            };
            match judge_redirect(&candidate, &self.state) {
                Ok(()) => break candidate,
                Err(Redirect::Denied(why)) => return Err(LoginError::Denied(why)),
                Err(Redirect::Unusable(why)) => say(&why),
            }
        };
        self.session
            .handle_callback_url(&callback)
            .await
            .map_err(|e| LoginError::Exchange(words(&e)))?;
        if let Some(secret) = self.client_secret {
            self.store
                .update(|file| file.client_secret = Some(secret))?;
        }
        Ok(())
    }
}

/// Why a redirect cannot complete this login.
#[derive(Debug, PartialEq, Eq)]
enum Redirect {
    /// The authorization server said no (`error=`): the login ends.
    Denied(String),
    /// Not this login's redirect: it is refused and the login keeps waiting.
    Unusable(String),
}

/// Whether `url` is the redirect that completes the login whose state is `state`.
fn judge_redirect(url: &str, state: &str) -> Result<(), Redirect> {
    let Ok(parsed) = url::Url::parse(url) else {
        return Err(Redirect::Unusable(
            "that is not the redirect's address; paste the whole address from the browser's \
             address bar"
                .to_owned(),
        ));
    };
    let get = |key: &str| {
        parsed
            .query_pairs()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.into_owned())
    };
    if let Some(error) = get("error") {
        let about = get("error_description")
            .map(|d| format!(" ({d})"))
            .unwrap_or_default();
        // Only this login's own answer may end it: anyone can send the listener an error.
        if get("state").as_deref() == Some(state) {
            return Err(Redirect::Denied(format!("{error}{about}")));
        }
        return Err(Redirect::Unusable(format!(
            "a redirect said {error}{about}, but it is not from this login (its state does not \
             match); still waiting"
        )));
    }
    match (get("code"), get("state")) {
        (Some(_), Some(got)) if got == state => Ok(()),
        (Some(_), _) => Err(Redirect::Unusable(
            "refused a redirect whose state does not match this login (an old or forged \
             redirect); still waiting for the right one"
                .to_owned(),
        )),
        (None, _) => Err(Redirect::Unusable(
            "that address has no authorization code; paste the whole address the browser was \
             sent to"
                .to_owned(),
        )),
    }
}

/// Read one request from the callback listener; the redirect's URL when it is one for this
/// login's path. Answers the browser either way.
async fn read_callback(mut stream: TcpStream, state: &str) -> Option<String> {
    let mut head = Vec::new();
    let read = async {
        let mut buf = [0u8; 2048];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_CALLBACK_REQUEST {
            let n = stream.read(&mut buf).await.ok()?;
            if n == 0 {
                break;
            }
            head.extend_from_slice(&buf[..n]);
        }
        Some(())
    };
    tokio::time::timeout(CALLBACK_READ_TIMEOUT, read)
        .await
        .ok()??;
    let text = String::from_utf8_lossy(&head);
    let target = text
        .lines()
        .next()
        .and_then(|line| line.strip_prefix("GET "))
        .and_then(|rest| rest.split(' ').next())
        .filter(|target| target.starts_with(CALLBACK_PATH))
        .map(str::to_owned);
    let port = stream.local_addr().map(|a| a.port()).unwrap_or_default();
    let url = target.map(|t| format!("http://127.0.0.1:{port}{t}"));
    let (status, body) = match &url {
        Some(url) if judge_redirect(url, state).is_ok() => (
            "200 OK",
            "seedpod received the login. You can close this tab and go back to the terminal.",
        ),
        Some(_) => (
            "400 Bad Request",
            "seedpod refused this redirect: it does not belong to the login that is waiting.",
        ),
        None => ("404 Not Found", "Not the login callback."),
    };
    let answer = format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\n\
         connection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(answer.as_bytes()).await;
    let _ = stream.shutdown().await;
    url
}

/// What the server said to a request without credentials.
pub(super) enum Asked {
    /// 401, with its `WWW-Authenticate` if it sent one.
    Refused(Option<String>),
    /// Anything else (its status): it may still want a login for what comes after.
    Let(String),
}

/// Ask the server without credentials.
pub(super) async fn probe(url: &str) -> Result<Asked, LoginError> {
    let unreachable = |why: String| LoginError::Unreachable {
        url: seedpod_config::show::mask_url(url),
        why,
    };
    let client = seedpod_engine::http_client_builder()
        .timeout(PROBE_TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| unreachable(e.to_string()))?;
    let initialize = serde_json::json!({
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": CLIENT_NAME, "version": env!("CARGO_PKG_VERSION")},
        },
    });
    let answer = client
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .json(&initialize)
        .send()
        .await
        .map_err(|e| unreachable(describe(&e)))?;
    let status = answer.status();
    if status != reqwest::StatusCode::UNAUTHORIZED {
        return Ok(Asked::Let(status.to_string()));
    }
    Ok(Asked::Refused(
        answer
            .headers()
            .get(reqwest::header::WWW_AUTHENTICATE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned),
    ))
}

fn refused(url: &str, err: AuthError) -> LoginError {
    LoginError::Refused(format!(
        "could not log in to {}: {}",
        seedpod_config::show::mask_url(url),
        words(&err)
    ))
}

/// rmcp's auth error in our words where its own are unclear.
pub(super) fn words(err: &AuthError) -> String {
    match err {
        AuthError::PkceUnsupported => "its authorization server does not offer PKCE with S256, \
                                       which seedpod requires"
            .to_owned(),
        AuthError::InternalError(text) if text.contains("state not found") => {
            "the redirect does not belong to this login".to_owned()
        }
        AuthError::RegistrationFailed(text) if text.contains("not supported") => format!(
            "{text}: the server offers no client registration; set client_id (and \
             client_secret_env) for it in the config"
        ),
        other => other.to_string(),
    }
}

fn query_value(url: &str, key: &str) -> Option<String> {
    let parsed = url::Url::parse(url).ok()?;
    parsed
        .query_pairs()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.into_owned())
}

/// The innermost cause of `err`, in words.
pub(super) fn describe(err: &(dyn std::error::Error + 'static)) -> String {
    let mut inner = err;
    while let Some(next) = inner.source() {
        inner = next;
    }
    inner.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_this_logins_redirect_completes_it() {
        let ok = "http://127.0.0.1:5/callback?code=c1&state=s1";
        assert_eq!(judge_redirect(ok, "s1"), Ok(()));
        // Forged or stale: refused, the login goes on waiting.
        for (url, says) in [
            (
                "http://127.0.0.1:5/callback?code=c1&state=other",
                "state does not match",
            ),
            (
                "http://127.0.0.1:5/callback?code=c1",
                "state does not match",
            ),
            (
                "http://127.0.0.1:5/callback?state=s1",
                "no authorization code",
            ),
            ("not a url", "whole address"),
            (
                "http://127.0.0.1:5/callback?error=access_denied&state=x",
                "not from this login",
            ),
        ] {
            match judge_redirect(url, "s1") {
                Err(Redirect::Unusable(why)) => assert!(why.contains(says), "{url}: {why}"),
                other => panic!("{url}: {other:?}"),
            }
        }
        // The server's own refusal ends the login.
        assert_eq!(
            judge_redirect(
                "http://127.0.0.1:5/callback?error=access_denied&error_description=no&state=s1",
                "s1"
            ),
            Err(Redirect::Denied("access_denied (no)".to_owned()))
        );
    }
}
