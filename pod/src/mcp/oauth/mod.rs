//! OAuth for url MCP servers, as the MCP authorization spec describes it
//! (docs/configuration.md §MCP OAuth; docs/decisions.md §MCP OAuth). rmcp's `auth` module
//! does the protocol — protected-resource metadata from the 401's `WWW-Authenticate` or the
//! well-known URIs (refusing a document whose `resource` is not this server), authorization
//! server metadata with its issuer checked, client ID metadata documents or dynamic client
//! registration or a configured client id, PKCE S256 (a server that does not offer it is
//! refused), the `resource` parameter, scopes, refresh. This module decides what seedpod
//! does with it:
//!
//! - `store.rs`: where a login lives (one private file per server, bound to its URL);
//! - `login.rs`: `seedpod mcp login`, the only place a person's browser is involved;
//! - here: what a pod makes of a server that answers 401 — a login it can ask for, or a
//!   server that wants credentials seedpod cannot get (which fails at once, in words).

pub mod login;
pub mod store;

use rmcp::transport::auth::{AuthorizationManager, AuthorizationMetadataSource};

/// What a pod should say of a server that refused it with 401.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// It publishes OAuth metadata: a person can log in with `seedpod mcp login`.
    NeedsLogin,
    /// It publishes no OAuth metadata (or `oauth = false`): only a configured token helps.
    NoOAuth(String),
    /// It publishes no OAuth metadata but sent a Bearer challenge: it may follow the
    /// 2025-03-26 spec's default endpoints, which `seedpod mcp login` tries. A pod does not
    /// wait on a guess; it fails, and says so.
    NoMetadata(String),
}

/// Judge a 401 from `url` with challenge `www_authenticate` (if it sent one).
pub async fn judge_refusal(url: &str, www_authenticate: Option<&str>) -> Refusal {
    let no_oauth = |why: String| {
        Refusal::NoOAuth(format!(
            "it answered HTTP 401 (authorisation required) and {why}; give it a token with \
             bearer_token_env or headers"
        ))
    };
    let manager = match AuthorizationManager::new(url).await {
        Ok(manager) => manager,
        Err(err) => return no_oauth(format!("its URL cannot be used for a login ({err})")),
    };
    match manager
        .resolve_metadata_from_challenge(www_authenticate)
        .await
    {
        // The 2025-03-26 spec's default endpoints are only a guess: a pod does not wait for a
        // login on a guess (`seedpod mcp login` still tries them, and `seedpod restart` then
        // uses the login).
        Ok(found) if found.source == AuthorizationMetadataSource::LegacyEndpointFallback => {
            let bearer = www_authenticate
                .is_some_and(|h| h.trim_start().to_ascii_lowercase().starts_with("bearer"));
            match (no_oauth("publishes no OAuth metadata".to_owned()), bearer) {
                (Refusal::NoOAuth(why), true) => Refusal::NoMetadata(format!(
                    "{why}; if it uses the 2025-03-26 MCP spec's default endpoints, `seedpod \
                     mcp login` and then `seedpod restart` may work"
                )),
                (refusal, _) => refusal,
            }
        }
        Ok(_) => Refusal::NeedsLogin,
        Err(err) => no_oauth(format!("its OAuth metadata cannot be used ({err})")),
    }
}

/// The words of a pod's `needs login` state and alert.
pub fn needs_login_message(server: &str, why: &str) -> String {
    format!("{why}; run `seedpod mcp login {server}`, and the pod picks the login up")
}
