//! Finding a server's authorization server: rmcp's discovery, with one narrowing of its issuer
//! check for servers of the 2025-03-26 MCP spec (docs/configuration.md §MCP OAuth;
//! docs/decisions.md §Same-origin issuers).
//!
//! RFC 8414 §3.3: the `issuer` of metadata fetched from `/.well-known/oauth-authorization-server`
//! must be the URL that document was derived from, so a document cannot claim to speak for an
//! authorization server it is not published by (the mix-up attack: a client led to send one
//! server's codes, tokens or signed assertions to another). rmcp refuses any difference.
//!
//! A 2025-03-26 server publishes no protected-resource metadata: its own origin *is* its
//! authorization server, and some (the spec's reference fixture among them) publish at the
//! origin's root metadata whose issuer has a path (`https://host/oauth`). That exact case is
//! taken: no protected-resource metadata anywhere (no `resource_metadata` in the challenge, none
//! at the well-known URLs), the document rmcp refused is the root one of the MCP server's own
//! origin, and its issuer has that same scheme, host and port. Whoever serves an origin's root
//! well-known document runs that origin and could publish the same issuer at its path-inserted
//! URL, which the strict check accepts — so this gives no one a claim they could not already
//! make. An issuer on any other origin is still refused, and nothing changes where
//! protected-resource metadata names the authorization server.

use rmcp::transport::AuthError;
use rmcp::transport::auth::{
    AuthorizationManager, AuthorizationMetadata, AuthorizationMetadataSource,
};

/// The authorization server's metadata, and how it was found.
pub(crate) struct Found {
    pub metadata: AuthorizationMetadata,
    pub source: AuthorizationMetadataSource,
}

/// How long each document fetched here may take, and the most of it read.
const FETCH_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);
const MAX_DOCUMENT: usize = 64 * 1024;

/// rmcp's `resolve_metadata_from_challenge`, and the same-origin 2025-03-26 case above.
pub(crate) async fn resolve(
    manager: &AuthorizationManager,
    url: &str,
    challenge: Option<&str>,
) -> Result<Found, AuthError> {
    match manager.resolve_metadata_from_challenge(challenge).await {
        Ok(found) => Ok(Found {
            metadata: found.metadata,
            source: found.source,
        }),
        Err(AuthError::AuthorizationServerMismatch {
            expected_issuer,
            received_issuer,
        }) => match legacy_same_origin(url, challenge, &expected_issuer, &received_issuer).await {
            Some(metadata) => Ok(Found {
                metadata,
                source: AuthorizationMetadataSource::AuthorizationServerMetadata,
            }),
            None => Err(AuthError::AuthorizationServerMismatch {
                expected_issuer,
                received_issuer,
            }),
        },
        Err(other) => Err(other),
    }
}

/// The root metadata of `url`'s origin, if this is the 2025-03-26 same-origin case.
async fn legacy_same_origin(
    url: &str,
    challenge: Option<&str>,
    expected: &str,
    received: &str,
) -> Option<AuthorizationMetadata> {
    let base = url::Url::parse(url).ok()?;
    let origin = base.origin().ascii_serialization();
    // The refused document was the origin's root one (rmcp expected the origin itself).
    if expected.trim_end_matches('/') != origin {
        return None;
    }
    if !issuer_on_origin(&base, received) {
        return None;
    }
    if challenge.is_some_and(|c| c.to_ascii_lowercase().contains("resource_metadata")) {
        return None;
    }
    let client = seedpod_engine::http_client_builder()
        .timeout(FETCH_TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .ok()?;
    let path = base.path().trim_matches('/');
    let mut resource_documents = vec![format!("{origin}/.well-known/oauth-protected-resource")];
    if !path.is_empty() {
        resource_documents.insert(
            0,
            format!("{origin}/.well-known/oauth-protected-resource/{path}"),
        );
    }
    for document in resource_documents {
        if fetch(&client, &document).await.is_some() {
            // The server publishes protected-resource metadata: not the 2025-03-26 path.
            return None;
        }
    }
    let body = fetch(
        &client,
        &format!("{origin}/.well-known/oauth-authorization-server"),
    )
    .await?;
    let metadata: AuthorizationMetadata = serde_json::from_slice(&body).ok()?;
    // The document read now is the one refused, and its issuer is on the server's origin.
    let issuer = metadata.issuer.as_deref()?;
    (issuer == received && issuer_on_origin(&base, issuer)).then_some(metadata)
}

/// Whether `issuer` is an https (or loopback http) URL with `base`'s scheme, host and port.
fn issuer_on_origin(base: &url::Url, issuer: &str) -> bool {
    let Ok(issuer) = url::Url::parse(issuer) else {
        return false;
    };
    // RFC 8414 §2: an issuer has no query or fragment.
    issuer.query().is_none()
        && issuer.fragment().is_none()
        && issuer.origin() == base.origin()
        && issuer.origin().is_tuple()
}

/// A 200 answer's body, at most `MAX_DOCUMENT` bytes.
async fn fetch(client: &reqwest::Client, url: &str) -> Option<Vec<u8>> {
    let mut answer = client
        .get(url)
        .header("accept", "application/json")
        .send()
        .await
        .ok()?;
    if answer.status() != reqwest::StatusCode::OK {
        return None;
    }
    let mut body = Vec::new();
    while let Some(chunk) = answer.chunk().await.ok()? {
        body.extend_from_slice(&chunk);
        if body.len() > MAX_DOCUMENT {
            return None;
        }
    }
    Some(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_issuer_on_the_servers_own_origin_is_taken() {
        let base = url::Url::parse("https://mcp.example:8443/mcp").unwrap();
        assert!(issuer_on_origin(&base, "https://mcp.example:8443/oauth"));
        assert!(issuer_on_origin(&base, "https://mcp.example:8443"));
        for other in [
            "https://evil.example:8443/oauth",
            "https://mcp.example/oauth",
            "http://mcp.example:8443/oauth",
            "https://mcp.example.evil.example:8443/oauth",
            "https://evil.example@mcp.example:8443.evil/oauth",
            "https://mcp.example:8443/oauth?x=1",
            "https://mcp.example:8443/oauth#f",
            "not a url",
            "",
        ] {
            assert!(!issuer_on_origin(&base, other), "{other}");
        }
    }

    fn metadata(issuer: &str, base: &str) -> String {
        serde_json::json!({
            "issuer": issuer,
            "authorization_endpoint": format!("{base}/oauth/authorize"),
            "token_endpoint": format!("{base}/oauth/token"),
            "response_types_supported": ["code"],
            "code_challenge_methods_supported": ["S256"],
        })
        .to_string()
    }

    async fn resolved(base: &str) -> Result<Found, AuthError> {
        let url = format!("{base}/mcp");
        // rmcp builds its own client: the process's TLS provider must be there first.
        let _ = seedpod_engine::http_client_builder();
        let manager = AuthorizationManager::new(url.as_str()).await.unwrap();
        resolve(&manager, &url, None).await
    }

    #[tokio::test]
    async fn a_2025_03_26_server_whose_issuer_has_a_path_on_its_own_origin_is_taken() {
        let base = serve_metadata(|base| metadata(&format!("{base}/oauth"), base), false).await;
        let found = resolved(&base).await.unwrap();
        assert_eq!(
            found.metadata.issuer.as_deref(),
            Some(format!("{base}/oauth").as_str())
        );
        assert_eq!(found.metadata.token_endpoint, format!("{base}/oauth/token"));
    }

    #[tokio::test]
    async fn an_issuer_on_another_origin_is_still_refused() {
        let base =
            serve_metadata(|_| metadata("http://127.0.0.2:1/oauth", "http://x"), false).await;
        let err = resolved(&base).await.err().expect("refused");
        assert!(
            matches!(err, AuthError::AuthorizationServerMismatch { .. }),
            "{err:?}"
        );
    }

    #[tokio::test]
    async fn with_protected_resource_metadata_the_strict_check_stands() {
        let base = serve_metadata(|base| metadata(&format!("{base}/oauth"), base), true).await;
        assert!(resolved(&base).await.is_err());
    }

    /// A server whose root authorization-server metadata is `document(base)`, with (or
    /// without) a protected-resource document naming its own origin as the authorization server.
    async fn serve_metadata(document: impl Fn(&str) -> String, with_prm: bool) -> String {
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let mut routes = vec![(
            "/.well-known/oauth-authorization-server".to_owned(),
            document(&base),
        )];
        if with_prm {
            let prm = serde_json::json!({
                "resource": format!("{base}/mcp"),
                "authorization_servers": [base],
            })
            .to_string();
            routes.push(("/.well-known/oauth-protected-resource/mcp".to_owned(), prm));
        }
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let mut request = vec![0; 4096];
                let read = stream.read(&mut request).await.unwrap_or(0);
                let text = String::from_utf8_lossy(&request[..read]).into_owned();
                let path = text.split(' ').nth(1).unwrap_or_default().to_owned();
                let answer = match routes.iter().find(|(p, _)| *p == path) {
                    Some((_, body)) => format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
                         content-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    ),
                    None => "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\
                             connection: close\r\n\r\n"
                        .to_owned(),
                };
                let _ = stream.write_all(answer.as_bytes()).await;
            }
        });
        base
    }
}
