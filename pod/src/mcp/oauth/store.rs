//! Where a url server's OAuth login lives: one private file per server in the data
//! directory, `DATA/mcp-auth/SERVER.json` (docs/storage.md §MCP logins). The file is the only
//! place a token is written: never the config, `pod.json`, the log or a process's arguments.
//!
//! The file names the URL it was obtained for. A token belongs to that server only: when the
//! configuration points the name at another URL, the file reads as no login at all, so a
//! token can never follow a renamed server to a different origin.
//!
//! `seedpod mcp login` writes it; a pod reads it on every request (through rmcp's
//! `CredentialStore`), so a login done while the pod runs is seen at the pod's next attempt,
//! and a refreshed token is written back here for the next process.

use std::path::{Path, PathBuf};

use rmcp::transport::auth::{AuthError, CredentialStore, StoredCredentials};
use seedpod_client::private::{Reach, ensure_dir};
use serde::{Deserialize, Serialize};

/// The directory under the data directory that holds the login files.
pub const AUTH_DIR: &str = "mcp-auth";

/// What one file holds.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TokenFile {
    /// The server URL the login is for.
    pub url: String,
    /// The client id, tokens and granted scopes (rmcp's own record).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<StoredCredentials>,
    /// A client secret the authorization server gave at registration (rmcp's record has no
    /// room for it, and a refresh needs it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// Scopes the server asked for beyond the login's (a 403 `insufficient_scope`): the next
    /// `seedpod mcp login` asks for these too.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wanted_scopes: Vec<String>,
    /// The `WWW-Authenticate` of the server's last 401 to a pod: where the next login starts
    /// its discovery when the server lets a login's own probe in without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub challenge: Option<String>,
}

/// What can be said of a login without showing any of it (`seedpod mcp get`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoginSummary {
    /// When the access token expires (seconds since 1970, UTC), where the server said.
    pub expires_at: Option<u64>,
    /// Whether it has a refresh token (an expired access token is then renewed).
    pub refreshable: bool,
    pub granted_scopes: Vec<String>,
    /// Scopes the server asked for since, which the next login asks for.
    pub wanted_scopes: Vec<String>,
}

impl TokenFile {
    /// What can be said of the login, if there is one; never a token or a secret.
    pub fn summary(&self) -> Option<LoginSummary> {
        let credentials = self.credentials.as_ref()?;
        let response = serde_json::to_value(credentials.token_response.as_ref()?).ok()?;
        let expires_at = response["expires_in"]
            .as_u64()
            .zip(credentials.token_received_at)
            .map(|(lifetime, received)| received.saturating_add(lifetime));
        Some(LoginSummary {
            expires_at,
            refreshable: response["refresh_token"].is_string(),
            granted_scopes: credentials.granted_scopes.clone(),
            wanted_scopes: self.wanted_scopes.clone(),
        })
    }

    /// Whether it holds an access token.
    pub fn has_tokens(&self) -> bool {
        self.credentials
            .as_ref()
            .is_some_and(|c| c.token_response.is_some())
    }
}

/// A token store failure, in words.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("could not read the login file {path}: {why}")]
    Read { path: String, why: String },
    #[error("the login file {path} is not valid ({why}); `seedpod mcp logout` removes it")]
    Invalid { path: String, why: String },
    #[error("could not write the login file {path}: {why}")]
    Write { path: String, why: String },
}

/// One server's login file.
#[derive(Debug, Clone)]
pub struct TokenStore {
    path: PathBuf,
    url: String,
}

impl TokenStore {
    /// The store of server `name` at `url`, in data directory `data`.
    pub fn new(data: &Path, name: &str, url: &str) -> TokenStore {
        TokenStore {
            path: data.join(AUTH_DIR).join(format!("{name}.json")),
            url: url.to_owned(),
        }
    }

    /// The store of server `name` at `url`, in the data directory of this process's home.
    pub fn for_server(name: &str, url: &str) -> Result<TokenStore, StoreError> {
        let home = seedpod_client::Home::from_env().map_err(|e| StoreError::Read {
            path: AUTH_DIR.to_owned(),
            why: e.to_string(),
        })?;
        Ok(TokenStore::new(&home.data, name, url))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What the file holds for this URL (empty when it is missing or for another URL).
    pub fn read(&self) -> Result<TokenFile, StoreError> {
        let shown = self.path.display().to_string();
        let bytes = match std::fs::read(&self.path) {
            Ok(bytes) => bytes,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                return Ok(self.empty());
            }
            Err(err) => {
                return Err(StoreError::Read {
                    path: shown,
                    why: err.to_string(),
                });
            }
        };
        let file: TokenFile = serde_json::from_slice(&bytes).map_err(|e| StoreError::Invalid {
            path: shown,
            why: e.to_string(),
        })?;
        if file.url != self.url {
            tracing::warn!(event = "mcp_login_other_url", path = %self.path.display());
            return Ok(self.empty());
        }
        Ok(file)
    }

    /// Write `file` (for this URL), private to the user, atomically.
    pub fn write(&self, mut file: TokenFile) -> Result<(), StoreError> {
        let failed = |why: String| StoreError::Write {
            path: self.path.display().to_string(),
            why,
        };
        if let Some(dir) = self.path.parent() {
            ensure_dir(dir, "the MCP login directory", Reach::OwnerOnly)
                .map_err(|e| failed(e.to_string()))?;
        }
        file.url = self.url.clone();
        let bytes = serde_json::to_vec_pretty(&file).map_err(|e| failed(e.to_string()))?;
        seedpod_config::mcp_edit::write_private(&self.path, &bytes)
            .map_err(|e| failed(e.to_string()))
    }

    /// Change the file with `change`, keeping the rest.
    pub fn update(&self, change: impl FnOnce(&mut TokenFile)) -> Result<(), StoreError> {
        let mut file = self.read()?;
        change(&mut file);
        self.write(file)
    }

    /// Remove the login; whether there was one.
    pub fn remove(&self) -> Result<bool, StoreError> {
        match std::fs::remove_file(&self.path) {
            Ok(()) => Ok(true),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(err) => Err(StoreError::Write {
                path: self.path.display().to_string(),
                why: err.to_string(),
            }),
        }
    }

    /// When the file last changed (`None`: it is missing): what a pod waiting for a login
    /// watches.
    pub fn stamp(&self) -> Option<std::time::SystemTime> {
        std::fs::metadata(&self.path)
            .and_then(|m| m.modified())
            .ok()
    }

    fn empty(&self) -> TokenFile {
        TokenFile {
            url: self.url.clone(),
            ..TokenFile::default()
        }
    }
}

fn store_error(err: StoreError) -> AuthError {
    AuthError::CredentialStoreError(err.to_string())
}

#[async_trait::async_trait]
impl CredentialStore for TokenStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let store = self.clone();
        let file = tokio::task::spawn_blocking(move || store.read())
            .await
            .map_err(|e| AuthError::CredentialStoreError(e.to_string()))?
            .map_err(store_error)?;
        Ok(file.credentials)
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let store = self.clone();
        tokio::task::spawn_blocking(move || {
            store.update(|file| {
                // A new grant covers what was asked for.
                file.wanted_scopes
                    .retain(|s| !credentials.granted_scopes.contains(s));
                file.credentials = Some(credentials);
            })
        })
        .await
        .map_err(|e| AuthError::CredentialStoreError(e.to_string()))?
        .map_err(store_error)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        let store = self.clone();
        tokio::task::spawn_blocking(move || store.update(|file| file.credentials = None))
            .await
            .map_err(|e| AuthError::CredentialStoreError(e.to_string()))?
            .map_err(store_error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn credentials(token: &str) -> StoredCredentials {
        let response: rmcp::transport::auth::OAuthTokenResponse =
            serde_json::from_value(serde_json::json!({
                "access_token": token,
                "token_type": "Bearer",
            }))
            .unwrap();
        StoredCredentials::new("client-1".into(), Some(response), vec![], Some(1))
    }

    #[test]
    fn a_login_is_private_and_read_back_for_its_url_only() {
        let dir = tempfile::tempdir().unwrap();
        let store = TokenStore::new(dir.path(), "hosted", "https://mcp.example/mcp");
        assert!(!store.read().unwrap().has_tokens());
        store
            .update(|file| file.credentials = Some(credentials("secret-token")))
            .unwrap();
        assert!(store.read().unwrap().has_tokens());
        let mode = std::fs::metadata(store.path())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let dir_mode = std::fs::metadata(store.path().parent().unwrap())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(dir_mode & 0o777, 0o700);
        // The same name pointed at another URL reads as no login: the token stays with the
        // server it was given for.
        let moved = TokenStore::new(dir.path(), "hosted", "https://attacker.example/mcp");
        assert!(!moved.read().unwrap().has_tokens());
        assert!(store.remove().unwrap());
        assert!(!store.remove().unwrap());
    }

    #[test]
    fn a_broken_login_file_says_how_to_get_out() {
        let dir = tempfile::tempdir().unwrap();
        let store = TokenStore::new(dir.path(), "hosted", "https://mcp.example/mcp");
        std::fs::create_dir_all(store.path().parent().unwrap()).unwrap();
        std::fs::write(store.path(), "{not json").unwrap();
        let err = store.read().unwrap_err().to_string();
        assert!(err.contains("seedpod mcp logout"), "{err}");
    }
}
