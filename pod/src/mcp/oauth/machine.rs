//! A machine client's token (`grant = "client_credentials"`; docs/configuration.md §MCP
//! OAuth): no person and no browser — the pod asks the server's authorization server for a
//! token with the client's own credentials each time it connects, and keeps it in the
//! server's login file (`store.rs`) like a person's login.
//!
//! The client proves who it is with a secret (`client_secret_basic`, or `client_secret_post`
//! where the authorization server prefers it; rmcp's client-credentials exchange) or with a
//! JWT it signs with its private key (`private_key_jwt`, RFC 7523, built here with ring:
//! rmcp's own needs a JWT crate whose crypto is aws-lc; docs/decisions.md).

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use rmcp::transport::auth::{
    AuthorizationManager, AuthorizationMetadata, ClientCredentialsConfig, CredentialStore,
    OAuthTokenResponse, StoredCredentials,
};
use seedpod_config::McpServer;

use super::login::{Asked, probe, words};
use super::store::TokenStore;

/// How long a signed assertion is good for (RFC 7523 asks for a short life).
const ASSERTION_LIFETIME_SECS: u64 = 300;
const ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// Why a machine client got no token, in words.
#[derive(Debug, thiserror::Error)]
pub enum MachineError {
    /// Its configuration cannot work (a missing secret, an unusable key): fix it, restart.
    #[error("{0}")]
    Config(String),
    /// The authorization server (or the way to it) failed or refused: worth trying again.
    #[error("{0}")]
    Refused(String),
}

/// How the client proves who it is.
enum Proof {
    Secret(String),
    Key(Box<SigningKey>),
}

/// Ask for a token for `server` at `url` (expanded) and save it in `store`.
pub async fn obtain(server: &McpServer, url: &str, store: &TokenStore) -> Result<(), MachineError> {
    let oauth = &server.oauth;
    let client_id = oauth.client_id.clone().ok_or_else(|| {
        MachineError::Config("grant = \"client_credentials\" needs client_id".to_owned())
    })?;
    let proof = match (&oauth.client_key_file, super::client_secret(oauth)) {
        (Some(path), _) => Proof::Key(Box::new(SigningKey::read(path)?)),
        (None, Ok(Some(secret))) => Proof::Secret(secret),
        (None, Ok(None)) => {
            return Err(MachineError::Config(
                "grant = \"client_credentials\" needs client_secret_env, client_secret_file or \
                 client_key_file"
                    .to_owned(),
            ));
        }
        (None, Err(why)) => return Err(MachineError::Config(why)),
    };
    let shown = seedpod_config::show::mask_url(url);
    let refused = |why: String| MachineError::Refused(format!("{shown}: {why}"));
    let (mut manager, metadata) = discover(url).await.map_err(refused)?;
    manager.set_credential_store(store.clone());
    let scopes = oauth.scopes.clone();
    match proof {
        Proof::Secret(client_secret) => {
            let config = ClientCredentialsConfig::ClientSecret {
                client_id,
                client_secret,
                scopes,
                resource: Some(url.to_owned()),
            };
            manager
                .validate_client_credentials_metadata(&config)
                .and_then(|()| manager.configure_client_credentials(&config))
                .map_err(|e| refused(words(&e)))?;
            manager
                .exchange_client_credentials(&config)
                .await
                .map_err(|e| refused(format!("no token: {}", words(&e))))?;
        }
        Proof::Key(key) => {
            let (token, granted) = signed_exchange(url, &metadata, &client_id, &key, &scopes)
                .await
                .map_err(refused)?;
            let credentials =
                StoredCredentials::new(client_id, Some(token), granted, Some(now_secs()))
                    .with_issuer(metadata.issuer.clone());
            store
                .save(credentials)
                .await
                .map_err(|e| MachineError::Config(e.to_string()))?;
        }
    }
    Ok(())
}

/// The server's authorization server, found as a login finds it (the 401's challenge, then
/// the metadata documents, issuer checked): a manager set up with it, and its metadata.
pub(super) async fn discover(
    url: &str,
) -> Result<(AuthorizationManager, AuthorizationMetadata), String> {
    let challenge = match probe(url).await.map_err(|e| e.to_string())? {
        Asked::Refused(challenge) => challenge,
        Asked::Let(_) => None,
    };
    let mut manager = AuthorizationManager::new(url)
        .await
        .map_err(|e| words(&e))?;
    let found = super::discovery::resolve(&manager, url, challenge.as_deref())
        .await
        .map_err(|e| format!("its OAuth metadata cannot be used ({})", words(&e)))?;
    manager.set_metadata(found.metadata.clone());
    Ok((manager, found.metadata))
}

/// The token request of `private_key_jwt`: the client is named only by the assertion
/// (RFC 7523 §3), which is signed for this authorization server alone and never sent over
/// plain HTTP to another machine.
async fn signed_exchange(
    url: &str,
    metadata: &AuthorizationMetadata,
    client_id: &str,
    key: &SigningKey,
    scopes: &[String],
) -> Result<(OAuthTokenResponse, Vec<String>), String> {
    let supports = |field: &str, value: &str| {
        metadata
            .additional_fields
            .get(field)
            .and_then(serde_json::Value::as_array)
            .is_none_or(|list| list.iter().any(|v| v.as_str() == Some(value)))
    };
    if !supports("token_endpoint_auth_methods_supported", "private_key_jwt") {
        return Err(
            "its authorization server does not take signed client assertions (private_key_jwt); \
             use client_secret_env or client_secret_file instead"
                .to_owned(),
        );
    }
    if !supports(
        "token_endpoint_auth_signing_alg_values_supported",
        key.alg(),
    ) {
        return Err(format!(
            "its authorization server does not take {} signatures; use a key of a kind it \
             lists",
            key.alg()
        ));
    }
    let endpoint = url::Url::parse(&metadata.token_endpoint)
        .map_err(|_| "its token endpoint is not a URL".to_owned())?;
    let resource = url::Url::parse(url).map_err(|_| "its url is not a URL".to_owned())?;
    if !plain_http_allowed(&resource, &endpoint) {
        return Err(format!(
            "its token endpoint {} is not https; seedpod sends a client assertion only over \
             https (or plain http between loopback addresses)",
            seedpod_config::show::mask_url(endpoint.as_str())
        ));
    }
    let audience = metadata
        .issuer
        .clone()
        .unwrap_or_else(|| metadata.token_endpoint.clone());
    let assertion = key.assertion(client_id, &audience)?;
    // Built whole before any await: the serializer is not Send.
    let form = {
        let mut form = url::form_urlencoded::Serializer::new(String::new());
        form.append_pair("grant_type", "client_credentials")
            .append_pair("client_assertion_type", ASSERTION_TYPE)
            .append_pair("client_assertion", &assertion)
            .append_pair("resource", url);
        if !scopes.is_empty() {
            form.append_pair("scope", &scopes.join(" "));
        }
        form.finish()
    };
    let value = super::token_request::post(
        &endpoint,
        form,
        super::token_request::ClientAuth::Assertion,
        "its token endpoint",
    )
    .await?;
    let not_token = || "its token endpoint's answer is not an OAuth token response".to_owned();
    let granted = value
        .get("scope")
        .and_then(serde_json::Value::as_str)
        .map(|s| s.split_whitespace().map(str::to_owned).collect())
        .unwrap_or_default();
    let token = serde_json::from_value(value).map_err(|_| not_token())?;
    Ok((token, granted))
}

pub(super) fn plain_http_allowed(resource: &url::Url, endpoint: &url::Url) -> bool {
    let loopback = |url: &url::Url| match url.host() {
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    };
    endpoint.scheme() == "https"
        || (endpoint.scheme() == "http" && loopback(resource) && loopback(endpoint))
}

pub(super) fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

/// A client's private key: ECDSA P-256 (ES256) or RSA (RS256), PKCS#8 in PEM.
pub(crate) enum SigningKey {
    Es256(ring::signature::EcdsaKeyPair),
    Rs256(ring::signature::RsaKeyPair),
}

impl SigningKey {
    fn read(path: &Path) -> Result<SigningKey, MachineError> {
        let text =
            super::read_credential_file(path, "client_key_file").map_err(MachineError::Config)?;
        SigningKey::from_pem(&text).map_err(|why| {
            MachineError::Config(format!("{} (client_key_file): {why}", path.display()))
        })
    }

    pub(crate) fn from_pem(text: &str) -> Result<SigningKey, String> {
        if text.contains("-----BEGIN EC PRIVATE KEY-----")
            || text.contains("-----BEGIN RSA PRIVATE KEY-----")
        {
            return Err(
                "the key is not in PKCS#8 form; convert it with `openssl pkcs8 -topk8 \
                        -nocrypt -in KEY -out KEY.pk8.pem`"
                    .to_owned(),
            );
        }
        if text.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----") {
            return Err(
                "the key is encrypted; seedpod reads an unencrypted PKCS#8 key (keep \
                        the file readable by you only)"
                    .to_owned(),
            );
        }
        let begin = "-----BEGIN PRIVATE KEY-----";
        let end = "-----END PRIVATE KEY-----";
        let body = text
            .split_once(begin)
            .and_then(|(_, rest)| rest.split_once(end))
            .map(|(body, _)| body)
            .ok_or_else(|| format!("it holds no `{begin}` block (a PEM PKCS#8 private key)"))?;
        let compact: String = body.chars().filter(|c| !c.is_whitespace()).collect();
        let der = base64::engine::general_purpose::STANDARD
            .decode(compact)
            .map_err(|_| "its PEM block is not valid base64".to_owned())?;
        let rng = ring::rand::SystemRandom::new();
        if let Ok(pair) = ring::signature::EcdsaKeyPair::from_pkcs8(
            &ring::signature::ECDSA_P256_SHA256_FIXED_SIGNING,
            &der,
            &rng,
        ) {
            return Ok(SigningKey::Es256(pair));
        }
        ring::signature::RsaKeyPair::from_pkcs8(&der)
            .map(SigningKey::Rs256)
            .map_err(|_| {
                "it is neither an ECDSA P-256 nor an RSA private key (seedpod signs with \
                 ES256 or RS256)"
                    .to_owned()
            })
    }

    fn alg(&self) -> &'static str {
        match self {
            SigningKey::Es256(_) => "ES256",
            SigningKey::Rs256(_) => "RS256",
        }
    }

    /// A fresh client assertion: issued by and about `client_id`, for `audience` only,
    /// good for five minutes, with a unique id so it cannot be replayed.
    pub(crate) fn assertion(&self, client_id: &str, audience: &str) -> Result<String, String> {
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let now = now_secs();
        let header = serde_json::json!({"alg": self.alg(), "typ": "JWT"});
        let claims = serde_json::json!({
            "iss": client_id,
            "sub": client_id,
            "aud": audience,
            "iat": now,
            "exp": now + ASSERTION_LIFETIME_SECS,
            "jti": uuid::Uuid::now_v7().to_string(),
        });
        let signing_input = format!(
            "{}.{}",
            b64.encode(header.to_string()),
            b64.encode(claims.to_string())
        );
        let rng = ring::rand::SystemRandom::new();
        let failed = |_| "could not sign the client assertion".to_owned();
        let signature = match self {
            SigningKey::Es256(pair) => pair
                .sign(&rng, signing_input.as_bytes())
                .map_err(failed)?
                .as_ref()
                .to_vec(),
            SigningKey::Rs256(pair) => {
                let mut signature = vec![0; pair.public().modulus_len()];
                pair.sign(
                    &ring::signature::RSA_PKCS1_SHA256,
                    &rng,
                    signing_input.as_bytes(),
                    &mut signature,
                )
                .map_err(failed)?;
                signature
            }
        };
        Ok(format!("{signing_input}.{}", b64.encode(signature)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pem(der: &[u8]) -> String {
        let body = base64::engine::general_purpose::STANDARD.encode(der);
        format!("-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----\n")
    }

    #[test]
    fn an_es256_assertion_verifies_with_the_public_key_and_names_the_client() {
        let rng = ring::rand::SystemRandom::new();
        let der = ring::signature::EcdsaKeyPair::generate_pkcs8(
            &ring::signature::ECDSA_P256_SHA256_FIXED_SIGNING,
            &rng,
        )
        .unwrap();
        let key = SigningKey::from_pem(&pem(der.as_ref())).unwrap();
        let SigningKey::Es256(pair) = &key else {
            panic!("not read as ES256");
        };
        use ring::signature::KeyPair as _;
        let public = pair.public_key().as_ref().to_vec();
        let first = key.assertion("robot", "https://as.example").unwrap();
        let second = key.assertion("robot", "https://as.example").unwrap();
        let parts: Vec<&str> = first.split('.').collect();
        assert_eq!(parts.len(), 3);
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let verifier = ring::signature::UnparsedPublicKey::new(
            &ring::signature::ECDSA_P256_SHA256_FIXED,
            &public,
        );
        let signed = format!("{}.{}", parts[0], parts[1]);
        verifier
            .verify(signed.as_bytes(), &b64.decode(parts[2]).unwrap())
            .unwrap();
        let header: serde_json::Value =
            serde_json::from_slice(&b64.decode(parts[0]).unwrap()).unwrap();
        assert_eq!(header["alg"], "ES256");
        let claims: serde_json::Value =
            serde_json::from_slice(&b64.decode(parts[1]).unwrap()).unwrap();
        assert_eq!(claims["iss"], "robot");
        assert_eq!(claims["sub"], "robot");
        assert_eq!(claims["aud"], "https://as.example");
        let (iat, exp) = (
            claims["iat"].as_u64().unwrap(),
            claims["exp"].as_u64().unwrap(),
        );
        assert_eq!(exp - iat, ASSERTION_LIFETIME_SECS);
        // Each assertion is new: a captured one cannot be passed off as the next.
        let jti = |a: &str| {
            let claims = b64.decode(a.split('.').nth(1).unwrap()).unwrap();
            serde_json::from_slice::<serde_json::Value>(&claims).unwrap()["jti"].clone()
        };
        assert_ne!(jti(&first), jti(&second));
        // A signature over other claims does not verify.
        let forged = format!("{}.{}", parts[0], b64.encode(b"{\"sub\":\"admin\"}"));
        assert!(
            verifier
                .verify(forged.as_bytes(), &b64.decode(parts[2]).unwrap())
                .is_err()
        );
    }

    #[test]
    fn keys_seedpod_cannot_use_are_refused_in_words() {
        for (text, says) in [
            (
                "-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----\n",
                "openssl pkcs8",
            ),
            (
                "-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n",
                "encrypted",
            ),
            ("my secret", "no `-----BEGIN PRIVATE KEY-----` block"),
            (
                "-----BEGIN PRIVATE KEY-----\n!!!\n-----END PRIVATE KEY-----\n",
                "base64",
            ),
            (
                &pem(b"not a key at all"),
                "neither an ECDSA P-256 nor an RSA",
            ),
        ] {
            let err = SigningKey::from_pem(text).err().unwrap();
            assert!(err.contains(says), "{text}: {err}");
        }
    }

    #[test]
    fn an_assertion_goes_over_plain_http_only_between_loopback_addresses() {
        let url = |s: &str| url::Url::parse(s).unwrap();
        assert!(plain_http_allowed(
            &url("https://mcp.example/mcp"),
            &url("https://as.example/token")
        ));
        assert!(plain_http_allowed(
            &url("http://127.0.0.1:5/mcp"),
            &url("http://localhost:6/token")
        ));
        // A local server whose metadata points the assertion at another machine in clear.
        assert!(!plain_http_allowed(
            &url("http://127.0.0.1:5/mcp"),
            &url("http://as.example/token")
        ));
        assert!(!plain_http_allowed(
            &url("http://mcp.example/mcp"),
            &url("http://127.0.0.1/token")
        ));
    }
}
