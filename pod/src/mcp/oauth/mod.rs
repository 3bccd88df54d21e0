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
//! - `machine.rs`: `grant = "client_credentials"`, a token the pod asks for itself;
//! - `cross_app.rs` and `id_token.rs`: `grant = "cross_app_access"`, a token the pod gets with
//!   the ID token the person's own identity-provider command prints;
//! - here: what a pod makes of a server that answers 401 — a login it can ask for, or a
//!   server that wants credentials seedpod cannot get (which fails at once, in words).

pub mod cross_app;
pub(crate) mod discovery;
pub mod id_token;
pub mod login;
pub mod machine;
pub mod store;
mod token_request;
pub mod watch;

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
    match discovery::resolve(&manager, url, www_authenticate).await {
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

/// The largest client secret or key file read (a PEM key is a few KiB).
const MAX_CREDENTIAL_FILE: u64 = 64 * 1024;

/// The client's secret, from `client_secret_env` or `client_secret_file` (`None`: it has
/// none). Read at connect and never kept beyond the request that uses it.
pub fn client_secret(oauth: &seedpod_config::McpOAuth) -> Result<Option<String>, String> {
    secret_from(
        oauth.client_secret_env.as_deref(),
        oauth.client_secret_file.as_deref(),
        ("client_secret_env", "client_secret_file"),
    )
}

/// A secret named by an environment variable or a file (`keys`: how the config calls them).
pub(crate) fn secret_from(
    var: Option<&str>,
    file: Option<&std::path::Path>,
    keys: (&str, &str),
) -> Result<Option<String>, String> {
    let (env_key, file_key) = keys;
    if let Some(var) = var {
        return match std::env::var(var) {
            Ok(secret) if !secret.trim().is_empty() => Ok(Some(secret.trim().to_owned())),
            _ => Err(format!(
                "the client secret comes from ${var} ({env_key}), which is not set"
            )),
        };
    }
    match file {
        Some(path) => {
            let secret = read_credential_file(path, file_key)?;
            match secret.trim() {
                "" => Err(format!(
                    "{} ({file_key}) is empty; put the client secret in it",
                    path.display()
                )),
                secret => Ok(Some(secret.to_owned())),
            }
        }
        None => Ok(None),
    }
}

/// A small credential file's text, or why it cannot be read, in words.
pub(crate) fn read_credential_file(path: &std::path::Path, key: &str) -> Result<String, String> {
    use std::io::Read as _;
    let shown = path.display();
    let file = std::fs::File::open(path)
        .map_err(|e| format!("could not read {shown} ({key}): {}", e.kind()))?;
    let mut text = String::new();
    file.take(MAX_CREDENTIAL_FILE + 1)
        .read_to_string(&mut text)
        .map_err(|_| format!("{shown} ({key}) is not a text file"))?;
    if text.len() as u64 > MAX_CREDENTIAL_FILE {
        return Err(format!(
            "{shown} ({key}) is larger than {} KiB; it should hold one secret or key",
            MAX_CREDENTIAL_FILE / 1024
        ));
    }
    Ok(text)
}

/// The most scopes taken from one challenge, and the longest one.
const MAX_SCOPES: usize = 16;
const MAX_SCOPE_CHARS: usize = 128;

/// The scopes a server's challenge names, as far as they are OAuth scope tokens (RFC 6749
/// §3.3: printable ASCII without space, `"` or `\`): the rest is dropped, so a hostile
/// `scope="…"` can neither steer a terminal nor grow the login file or a message.
pub fn scope_tokens(raw: &str) -> Vec<String> {
    let allowed = |c: char| matches!(c, '\x21' | '\x23'..='\x5b' | '\x5d'..='\x7e');
    let mut scopes: Vec<String> = Vec::new();
    for token in raw.split(' ').filter(|t| !t.is_empty()) {
        if token.chars().count() <= MAX_SCOPE_CHARS
            && token.chars().all(allowed)
            && !scopes.iter().any(|s| s == token)
        {
            scopes.push(token.to_owned());
        }
        if scopes.len() == MAX_SCOPES {
            break;
        }
    }
    scopes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_oauth_scope_tokens_are_taken_from_a_challenge() {
        assert_eq!(scope_tokens("repo  read:org repo"), ["repo", "read:org"]);
        let long = "x".repeat(MAX_SCOPE_CHARS + 1);
        let hostile = format!("ok a\\b q\"uote \u{1b}[2J \u{202e}exe {long}");
        assert_eq!(scope_tokens(&hostile), ["ok"]);
        let many: Vec<String> = (0..100).map(|i| format!("s{i}")).collect();
        assert_eq!(scope_tokens(&many.join(" ")).len(), MAX_SCOPES);
    }
}
