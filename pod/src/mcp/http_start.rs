//! Starting a url (Streamable HTTP) server: its headers and token, its session client
//! (`http.rs`), and its OAuth login when it has one (`oauth/`). A server that refuses the pod
//! with 401 needs a login when it publishes OAuth metadata (`seedpod mcp login` can help) and
//! fails at once when it does not (only a configured token can); either way the pod does not
//! retry on its own (docs/configuration.md §MCP OAuth).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use rmcp::service::{RoleClient, RunningService, serve_client};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::auth::{AuthClient, AuthorizationManager, OAuthClientConfig};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use seedpod_config::McpServer;

use super::handler::Handler;
use super::http::{Lost, SessionClient};
use super::oauth::machine::MachineError;
use super::oauth::store::TokenStore;
use super::oauth::watch::{OnRefusal, Watched};
use super::oauth::{Refusal, judge_refusal, needs_login_message};
use super::server::StartError;

/// Connect to the url server `config` names (its `url` already expanded).
pub(super) async fn start(
    config: &McpServer,
    url: &str,
    headers: &BTreeMap<String, String>,
    bearer_token_env: Option<&str>,
    handler: Handler,
) -> Result<(RunningService<RoleClient, Handler>, Arc<Lost>), StartError> {
    let lookup = |var: &str| std::env::var(var).ok();
    let mut config_http = StreamableHttpClientTransportConfig::with_uri(url);
    let mut values = HashMap::new();
    for (header, var) in headers {
        let value = seedpod_config::expand::header_value(header, var, &lookup)
            .map_err(StartError::permanent)?;
        let name = reqwest::header::HeaderName::from_bytes(header.as_bytes())
            .map_err(|e| StartError::permanent(format!("header {header}: {e}")))?;
        let mut value = reqwest::header::HeaderValue::from_str(&value).map_err(|_| {
            StartError::permanent(format!("header {header} ({var}) is not a valid value"))
        })?;
        value.set_sensitive(true);
        values.insert(name, value);
    }
    // A token the person configured is theirs to manage: no login is tried over it.
    let oauth = config.oauth.enabled
        && bearer_token_env.is_none()
        && !headers
            .keys()
            .any(|h| h.eq_ignore_ascii_case("authorization"));
    config_http = config_http.custom_headers(values);
    if let Some(var) = bearer_token_env {
        let token = std::env::var(var).map_err(|_| {
            StartError::permanent(format!(
                "the bearer token comes from ${var}, which is not set"
            ))
        })?;
        config_http = config_http.auth_header(token);
    }
    let client = seedpod_engine::http_client_builder()
        .build()
        .map_err(|err| StartError::permanent(format!("could not make an HTTP client: {err}")))?;
    let written = match &config.transport {
        seedpod_config::McpTransport::Http { url, .. } => url.as_str(),
        seedpod_config::McpTransport::Stdio { command, .. } => command.as_str(),
    };
    let shown = seedpod_config::show::mask_url(written);
    let lost = Arc::new(Lost::default());
    let store = match oauth {
        true => Some(
            TokenStore::for_server(&config.name, url)
                .map_err(|e| StartError::retry(e.to_string()))?,
        ),
        false => None,
    };
    let client =
        SessionClient::new(client, shown.to_string(), lost.clone()).with_login(store.clone());
    // A machine client (and cross-app access) asks for a fresh token at every connect:
    // nobody is there to log in, and a token the server stopped taking is replaced by
    // reconnecting.
    if let Some(store) = &store {
        let obtained = match config.oauth.grant {
            seedpod_config::McpGrant::AuthorizationCode => Ok(()),
            seedpod_config::McpGrant::ClientCredentials => {
                super::oauth::machine::obtain(config, url, store).await
            }
            seedpod_config::McpGrant::CrossAppAccess => {
                super::oauth::cross_app::obtain(config, url, store).await
            }
        };
        obtained.map_err(|err| match err {
            MachineError::Config(why) => StartError::permanent(format!("{shown}: {why}")),
            MachineError::Refused(why) => StartError::retry(why),
        })?;
    }
    let login = match &store {
        Some(store) => store
            .read()
            .map_err(|e| StartError::permanent(e.to_string()))?
            .has_tokens()
            .then(|| store.clone()),
        None => None,
    };
    let running = match login {
        Some(store) => {
            let manager = authorised(url, store, config).await?;
            let on_refusal = match config.oauth.grant.is_machine() {
                false => OnRefusal::NeedsLogin,
                true => OnRefusal::Reconnect,
            };
            let watched = Watched::new(AuthClient::new(client, manager), lost.clone(), on_refusal);
            let transport = StreamableHttpClientTransport::with_client(watched, config_http);
            serve_client(handler, transport).await
        }
        None => {
            let transport = StreamableHttpClientTransport::with_client(client, config_http);
            serve_client(handler, transport).await
        }
    };
    match running {
        Ok(running) => Ok((running, lost)),
        Err(err) if super::words::needs_login(&err) => {
            let (challenge, _) = super::words::challenge(&err);
            let refusal = match oauth {
                true => judge_refusal(url, challenge.as_deref()).await,
                false => Refusal::NoOAuth(format!(
                    "{shown} refused the configured credentials: {}",
                    super::words::init_error(&err)
                )),
            };
            Err(match refusal {
                Refusal::NeedsLogin => StartError::login(needs_login_message(
                    &config.name,
                    &format!("{shown} wants a login"),
                )),
                Refusal::NoOAuth(why) => StartError::permanent(format!("{shown}: {why}")),
                Refusal::NoMetadata(why) => StartError::login_may_help(format!("{shown}: {why}")),
            })
        }
        Err(err) => Err(StartError::retry(format!(
            "{shown} did not initialise: {}",
            super::words::init_error(&err)
        ))),
    }
}

/// What a refusal (401 or 403) of a request after `initialize` means for a server's start;
/// `None` when `err` is no refusal.
pub(super) async fn refused(
    config: &McpServer,
    url: &str,
    err: &rmcp::service::ServiceError,
) -> Option<StartError> {
    let rmcp::service::ServiceError::TransportSend(error) = err else {
        return None;
    };
    let (challenge, scope) = super::words::refusal(error.error.as_ref());
    if challenge.is_none() && scope.is_none() {
        return None;
    }
    let words = super::words::service_error(err);
    if !config.oauth.enabled {
        return Some(StartError::permanent(format!("listing its tools: {words}")));
    }
    Some(match judge_refusal(url, challenge.as_deref()).await {
        Refusal::NeedsLogin => StartError::login(needs_login_message(
            &config.name,
            &format!("listing its tools: {words}"),
        )),
        Refusal::NoOAuth(why) => StartError::permanent(format!("listing its tools: {why}")),
        Refusal::NoMetadata(why) => StartError::login_may_help(format!("listing its tools: {why}")),
    })
}

/// rmcp's authorisation manager over the server's login file: metadata discovered again
/// (an authorization server that changed issuer drops the login), the client the login
/// registered, its secret when it has one.
async fn authorised(
    url: &str,
    store: TokenStore,
    config: &McpServer,
) -> Result<AuthorizationManager, StartError> {
    let failed = |e: rmcp::transport::AuthError| {
        StartError::retry(format!("its OAuth login could not be used: {e}"))
    };
    let secret = store
        .read()
        .map_err(|e| StartError::permanent(e.to_string()))?
        .client_secret;
    let mut manager = AuthorizationManager::new(url).await.map_err(failed)?;
    // Found here rather than by `initialize_from_store`, so the 2025-03-26 same-origin issuer
    // (`oauth/discovery.rs`) is taken at connect as it was at login.
    let found = super::oauth::discovery::resolve(&manager, url, None)
        .await
        .map_err(failed)?;
    manager.set_metadata(found.metadata);
    manager.set_credential_store(store);
    let usable = manager.initialize_from_store().await.map_err(failed)?;
    if !usable {
        return Err(StartError::login(needs_login_message(
            &config.name,
            "its authorization server changed, so the login was dropped",
        )));
    }
    if let Some(secret) = secret {
        let client_id = manager.get_credentials().await.map_err(failed)?.0;
        let mut client = OAuthClientConfig::new(client_id, url.to_owned());
        client.client_secret = Some(secret);
        manager.configure_client(client).map_err(failed)?;
    }
    Ok(manager)
}
