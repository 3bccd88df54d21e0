//! The MCP test server's OAuth side (`--oauth`): an authorization server on a port of its own
//! (another origin than the MCP endpoint, as hosted servers have), and the MCP endpoint's
//! protected-resource metadata and bearer check. What it does is what the MCP authorization
//! spec asks of a server (docs/testing.md §MCP OAuth): metadata at the well-known URIs, the
//! 401's `WWW-Authenticate` pointing at it, dynamic client registration, authorization codes
//! bound to a PKCE S256 challenge, a redirect URI and the `resource`, refresh tokens.
//!
//! The authorization endpoint plays a person who always says yes: it redirects at once with a
//! code, so a test (playing the browser) follows that redirect to the login's callback.
//!
//! It is also the person's enterprise identity provider for cross-app access (SEP-990): its
//! `/idp/token` exchanges the one ID token it knows (`ID_TOKEN`, for `alice`) for an ID-JAG
//! (RFC 8693), which its token endpoint takes as a JWT bearer grant (RFC 7523), both from
//! clients that authenticate with HTTP Basic.
//!
//! Journal lines (`MCP_TEST_JOURNAL`): `id-jag issued for SUBJECT`, `jwt bearer for CLIENT`, `registered CLIENT`, `authorized CLIENT`, `issued
//! TOKEN`, `refreshed TOKEN`, `refresh refused`, `bearer ok TOKEN`, `answered 401 to METHOD
//! PATH`, `token refused: WHY`, `refused a valid token with STATUS`, and `authorization server saw a bearer token` if a client ever
//! sends a token there.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use http_body_util::BodyExt as _;
use sha2::Digest as _;

use crate::{Answer, answer, journal};

/// The one machine client the authorization server knows, and its secret.
const MACHINE_CLIENT: &str = "robot";
const MACHINE_SECRET: &str = "robot-secret";

/// The ID token the identity provider takes (a JWT's shape; the fake checks it by value).
pub const ID_TOKEN: &str =
    "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJhbGljZSIsImF1ZCI6ImlkcC1hcHAifQ.c2lnbmVk";
/// Cross-app access's two clients: at the identity provider and at the authorization server.
const IDP_CLIENT: (&str, &str) = ("idp-app", "idp-secret");
const XAA_CLIENT: (&str, &str) = ("xaa-app", "xaa secret/with:odd&chars");
const ID_JAG_TYPE: &str = "urn:ietf:params:oauth:token-type:id-jag";

/// `--oauth` and the flags that change how it behaves.
#[derive(Clone, Default)]
pub struct OAuthOptions {
    pub enabled: bool,
    /// The `resource` its protected-resource metadata names (default: the MCP URL itself); a
    /// different one is a server sending people to log in for another.
    pub resource: Option<String>,
    /// `expires_in` of each access token, seconds (0: expired at once, so each use refreshes).
    pub token_lifetime: u64,
    /// Answer every refresh with `invalid_grant`.
    pub refuse_refresh: bool,
    /// Offer only `plain` PKCE, which a client must refuse.
    pub no_s256: bool,
    /// While this file exists, a request with a valid token is refused anyway: its first line
    /// is the status (401: the token was revoked; 403: more scope is wanted), the rest the
    /// `WWW-Authenticate` value sent as it is (the attack tests make it huge or malformed).
    pub refuse_when: Option<std::path::PathBuf>,
    /// The `issued_token_type` the identity provider names (default: the ID-JAG type); another
    /// is an identity provider that answers the exchange with a token the client did not ask for.
    pub idp_issues: Option<String>,
}

impl OAuthOptions {
    pub fn new() -> OAuthOptions {
        OAuthOptions {
            token_lifetime: 3600,
            ..OAuthOptions::default()
        }
    }
}

/// A code handed out, and what it was bound to.
struct Grant {
    client: String,
    challenge: String,
    redirect_uri: String,
    resource: Option<String>,
    scope: Option<String>,
}

#[derive(Default)]
struct State {
    clients: HashSet<String>,
    codes: HashMap<String, Grant>,
    access: HashSet<String>,
    refresh: HashMap<String, String>,
    /// ID-JAGs handed out and not yet used, with the resource each is for.
    jags: HashMap<String, String>,
    counter: u64,
}

/// The authorization server and the resource's view of it.
#[derive(Clone)]
pub struct Authority {
    options: OAuthOptions,
    /// The MCP endpoint's URL (the resource).
    mcp_url: String,
    /// The authorization server's base URL (its issuer).
    issuer: String,
    state: Arc<Mutex<State>>,
}

impl Authority {
    /// Bind the authorization server's port and serve it; `mcp_url` is the resource.
    pub async fn start(options: OAuthOptions, mcp_url: String) -> anyhow::Result<Authority> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        let issuer = format!("http://{}", listener.local_addr()?);
        let authority = Authority {
            options,
            mcp_url,
            issuer,
            state: Arc::default(),
        };
        let serving = authority.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let authority = serving.clone();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |request| {
                        let authority = authority.clone();
                        async move {
                            Ok::<_, std::convert::Infallible>(authority.serve_as(request).await)
                        }
                    });
                    let io = hyper_util::rt::TokioIo::new(stream);
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(io, service)
                        .await;
                });
            }
        });
        Ok(authority)
    }

    /// The MCP endpoint's own OAuth answers: its metadata, or a 401 for a request without a
    /// valid token. `None`: the request goes on to the MCP service.
    pub fn guard<B>(&self, request: &hyper::Request<B>) -> Option<Answer> {
        let path = request.uri().path();
        if path.starts_with("/.well-known/oauth-protected-resource") {
            let metadata = serde_json::json!({
                "resource": self.options.resource.clone().unwrap_or_else(|| self.mcp_url.clone()),
                "authorization_servers": [self.issuer],
                "scopes_supported": ["mcp:tools"],
                "bearer_methods_supported": ["header"],
            });
            return Some(answer(200, "application/json", &metadata.to_string()));
        }
        let token = request
            .headers()
            .get(hyper::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::to_owned);
        if let Some(token) = &token
            && self.state.lock().is_ok_and(|s| s.access.contains(token))
        {
            if let Some(refusal) = self.refusal() {
                return Some(refusal);
            }
            journal(&format!("bearer ok {token}"));
            return None;
        }
        journal(&format!(
            "answered 401 to {} {}",
            request.method(),
            request.uri().path()
        ));
        let base = self.mcp_url.trim_end_matches("/mcp");
        let challenge = format!(
            "Bearer resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\", \
             scope=\"mcp:tools\""
        );
        let mut refused = answer(401, "application/json", r#"{"error":"invalid_token"}"#);
        if let Ok(value) = hyper::header::HeaderValue::from_str(&challenge) {
            refused
                .headers_mut()
                .insert(hyper::header::WWW_AUTHENTICATE, value);
        }
        Some(refused)
    }

    /// The refusal `--refuse-when`'s file asks for, while it exists.
    fn refusal(&self) -> Option<Answer> {
        let text = std::fs::read_to_string(self.options.refuse_when.as_ref()?).ok()?;
        let (status, challenge) = text.split_once('\n').unwrap_or((&text, ""));
        let status: u16 = status.trim().parse().ok()?;
        journal(&format!("refused a valid token with {status}"));
        let mut refused = answer(status, "application/json", r#"{"error":"refused"}"#);
        if let Ok(value) = hyper::header::HeaderValue::from_bytes(challenge.trim_end().as_bytes()) {
            refused
                .headers_mut()
                .insert(hyper::header::WWW_AUTHENTICATE, value);
        }
        Some(refused)
    }

    async fn serve_as(&self, request: hyper::Request<hyper::body::Incoming>) -> Answer {
        if request
            .headers()
            .get(hyper::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("Bearer "))
        {
            journal("authorization server saw a bearer token");
        }
        let path = request.uri().path().to_owned();
        let query = request.uri().query().unwrap_or_default().to_owned();
        let basic = request
            .headers()
            .get(hyper::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(basic_credentials);
        let body = match request.into_body().collect().await {
            Ok(body) => body.to_bytes(),
            Err(_) => return answer(400, "text/plain", "unreadable body"),
        };
        match path.as_str() {
            "/.well-known/oauth-authorization-server" | "/.well-known/openid-configuration" => {
                self.metadata()
            }
            "/register" => self.register(&body),
            "/authorize" => self.authorize(&form(query.as_bytes())),
            "/token" => self.token(&form(&body), basic),
            "/idp/token" => self.idp_token(&form(&body), basic),
            _ => answer(404, "text/plain", "not here"),
        }
    }

    fn metadata(&self) -> Answer {
        let methods = if self.options.no_s256 {
            serde_json::json!(["plain"])
        } else {
            serde_json::json!(["S256"])
        };
        let issuer = &self.issuer;
        let metadata = serde_json::json!({
            "issuer": issuer,
            "authorization_endpoint": format!("{issuer}/authorize"),
            "token_endpoint": format!("{issuer}/token"),
            "registration_endpoint": format!("{issuer}/register"),
            "response_types_supported": ["code"],
            "grant_types_supported": [
                "authorization_code", "refresh_token", "client_credentials",
                "urn:ietf:params:oauth:grant-type:jwt-bearer",
            ],
            "code_challenge_methods_supported": methods,
            "token_endpoint_auth_methods_supported": ["none", "client_secret_post"],
            "scopes_supported": ["mcp:tools"],
        });
        answer(200, "application/json", &metadata.to_string())
    }

    fn register(&self, body: &[u8]) -> Answer {
        let Ok(request) = serde_json::from_slice::<serde_json::Value>(body) else {
            return answer(
                400,
                "application/json",
                r#"{"error":"invalid_client_metadata"}"#,
            );
        };
        let Ok(mut state) = self.state.lock() else {
            return answer(500, "text/plain", "poisoned");
        };
        state.counter += 1;
        let client = format!("client-{}", state.counter);
        state.clients.insert(client.clone());
        journal(&format!("registered {client}"));
        let mut registered = request;
        registered["client_id"] = serde_json::json!(client);
        answer(201, "application/json", &registered.to_string())
    }

    fn authorize(&self, query: &HashMap<String, String>) -> Answer {
        let get = |key: &str| query.get(key).cloned();
        let refuse = |why: &str| {
            journal(&format!("authorize refused: {why}"));
            answer(400, "text/plain", why)
        };
        let (Some(client), Some(redirect_uri), Some(challenge)) =
            (get("client_id"), get("redirect_uri"), get("code_challenge"))
        else {
            return refuse("client_id, redirect_uri and code_challenge are required");
        };
        if get("response_type").as_deref() != Some("code") {
            return refuse("response_type must be code");
        }
        if get("code_challenge_method").as_deref() != Some("S256") {
            return refuse("code_challenge_method must be S256");
        }
        if get("resource").as_deref() != Some(self.mcp_url.as_str()) {
            return refuse("resource must name the MCP server");
        }
        let Ok(mut state) = self.state.lock() else {
            return answer(500, "text/plain", "poisoned");
        };
        if !state.clients.contains(&client) {
            drop(state);
            return refuse("unknown client");
        }
        state.counter += 1;
        let code = format!("code-{}", state.counter);
        state.codes.insert(
            code.clone(),
            Grant {
                client: client.clone(),
                challenge,
                redirect_uri: redirect_uri.clone(),
                resource: get("resource"),
                scope: get("scope"),
            },
        );
        journal(&format!("authorized {client} scope {:?}", get("scope")));
        let mut location = format!("{redirect_uri}?code={code}");
        if let Some(state) = get("state") {
            location.push_str(&format!("&state={}", encode(&state)));
        }
        let mut redirect = answer(302, "text/plain", "");
        if let Ok(value) = hyper::header::HeaderValue::from_str(&location) {
            redirect
                .headers_mut()
                .insert(hyper::header::LOCATION, value);
        }
        redirect
    }

    /// The identity provider's token exchange: `ID_TOKEN` for an ID-JAG naming the audience
    /// and resource asked for, to `idp-app` authenticated with HTTP Basic.
    fn idp_token(&self, form: &HashMap<String, String>, basic: Option<(String, String)>) -> Answer {
        let get = |key: &str| form.get(key).map(String::as_str);
        let refuse = |why: &str| {
            journal(&format!("idp refused: {why}"));
            answer(
                400,
                "application/json",
                &serde_json::json!({"error": "invalid_request", "error_description": why})
                    .to_string(),
            )
        };
        if basic != Some((IDP_CLIENT.0.to_owned(), IDP_CLIENT.1.to_owned())) {
            return refuse("wrong identity provider client");
        }
        if get("grant_type") != Some("urn:ietf:params:oauth:grant-type:token-exchange") {
            return refuse("grant_type must be token-exchange");
        }
        if get("requested_token_type") != Some(ID_JAG_TYPE) {
            return refuse("requested_token_type must be the ID-JAG type");
        }
        if get("subject_token_type") != Some("urn:ietf:params:oauth:token-type:id_token") {
            return refuse("subject_token_type must be id_token");
        }
        if get("subject_token") != Some(ID_TOKEN) {
            return refuse("unknown ID token");
        }
        if get("audience") != Some(self.issuer.as_str()) {
            return refuse("audience must be the authorization server's issuer");
        }
        let Some(resource) = get("resource") else {
            return refuse("resource is missing");
        };
        let Ok(mut state) = self.state.lock() else {
            return answer(500, "text/plain", "poisoned");
        };
        state.counter += 1;
        let jag = format!(
            "eyJ0eXAiOiJvYXV0aC1pZC1qYWcrand0In0.jag-{}.sig",
            state.counter
        );
        state.jags.insert(jag.clone(), resource.to_owned());
        journal("id-jag issued for alice");
        let issued = self.options.idp_issues.as_deref().unwrap_or(ID_JAG_TYPE);
        let body = serde_json::json!({
            "access_token": jag,
            "issued_token_type": issued,
            "token_type": "N_A",
            "expires_in": 300,
        });
        answer(200, "application/json", &body.to_string())
    }

    fn token(&self, form: &HashMap<String, String>, basic: Option<(String, String)>) -> Answer {
        let get = |key: &str| form.get(key).cloned();
        let refuse = |why: &str| {
            journal(&format!("token refused: {why}"));
            answer(
                400,
                "application/json",
                &serde_json::json!({"error": "invalid_grant", "error_description": why})
                    .to_string(),
            )
        };
        let Ok(mut state) = self.state.lock() else {
            return answer(500, "text/plain", "poisoned");
        };
        match get("grant_type").as_deref() {
            Some("authorization_code") => {
                let Some(grant) = get("code").and_then(|code| state.codes.remove(&code)) else {
                    return refuse("unknown or used code");
                };
                let verifier = get("code_verifier").unwrap_or_default();
                if base64url(&sha2::Sha256::digest(verifier.as_bytes())) != grant.challenge {
                    return refuse("the PKCE verifier does not match");
                }
                if get("redirect_uri").as_deref() != Some(grant.redirect_uri.as_str()) {
                    return refuse("redirect_uri differs from the authorization's");
                }
                if get("client_id").as_deref() != Some(grant.client.as_str()) {
                    return refuse("client_id differs from the authorization's");
                }
                if get("resource") != grant.resource {
                    return refuse("resource differs from the authorization's");
                }
                self.issue(&mut state, grant.scope, "issued")
            }
            Some("refresh_token") => {
                let old = get("refresh_token").unwrap_or_default();
                if self.options.refuse_refresh || !state.refresh.contains_key(&old) {
                    journal("refresh refused");
                    return refuse("refresh token not valid");
                }
                let scope = state.refresh.remove(&old);
                self.issue(&mut state, scope, "refreshed")
            }
            // A machine client registered by hand: `robot`, secret `robot-secret` (in the
            // body: the metadata lists no methods, so the client sends it there).
            Some("client_credentials") => {
                if get("client_id").as_deref() != Some(MACHINE_CLIENT)
                    || get("client_secret").as_deref() != Some(MACHINE_SECRET)
                {
                    return refuse("wrong client credentials");
                }
                if get("resource").as_deref() != Some(self.mcp_url.as_str()) {
                    return refuse("resource is not the MCP server");
                }
                journal(&format!("client credentials for {MACHINE_CLIENT}"));
                self.issue(&mut state, get("scope"), "issued")
            }
            // Cross-app access: an ID-JAG the identity provider issued for this resource, used
            // once, by `xaa-app` authenticated with HTTP Basic.
            Some("urn:ietf:params:oauth:grant-type:jwt-bearer") => {
                if basic != Some((XAA_CLIENT.0.to_owned(), XAA_CLIENT.1.to_owned())) {
                    return refuse("wrong cross-app client credentials");
                }
                let Some(resource) = get("assertion").and_then(|jag| state.jags.remove(&jag))
                else {
                    return refuse("unknown or used ID-JAG");
                };
                if resource != self.mcp_url {
                    return refuse("the ID-JAG is for another resource");
                }
                journal(&format!("jwt bearer for {}", XAA_CLIENT.0));
                self.issue(&mut state, get("scope"), "issued")
            }
            _ => refuse("unsupported grant_type"),
        }
    }

    fn issue(&self, state: &mut State, scope: Option<String>, what: &str) -> Answer {
        state.counter += 1;
        let access = format!("at-{}-{}", state.counter, std::process::id());
        let refresh = format!("rt-{}-{}", state.counter, std::process::id());
        // One live access token at a time: a refreshed one replaces the old.
        state.access.clear();
        state.access.insert(access.clone());
        state
            .refresh
            .insert(refresh.clone(), scope.clone().unwrap_or_default());
        journal(&format!("{what} {access}"));
        let mut body = serde_json::json!({
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": self.options.token_lifetime,
            "refresh_token": refresh,
        });
        if let Some(scope) = scope.filter(|s| !s.is_empty()) {
            body["scope"] = serde_json::json!(scope);
        }
        answer(200, "application/json", &body.to_string())
    }
}

/// The client id and secret of an HTTP Basic header, each form-decoded (RFC 6749 §2.3.1).
fn basic_credentials(header: &str) -> Option<(String, String)> {
    use base64::Engine as _;
    let encoded = header.strip_prefix("Basic ")?;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .ok()?;
    let text = String::from_utf8(decoded).ok()?;
    let (id, secret) = text.split_once(':')?;
    let decode = |s: &str| -> String {
        url::form_urlencoded::parse(format!("x={s}").as_bytes())
            .next()
            .map(|(_, v)| v.into_owned())
            .unwrap_or_default()
    };
    Some((decode(id), decode(secret)))
}

fn form(bytes: &[u8]) -> HashMap<String, String> {
    url::form_urlencoded::parse(bytes).into_owned().collect()
}

fn encode(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

/// Base64url without padding (RFC 7636's encoding of the S256 challenge).
fn base64url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | (u32::from(*b) << (16 - 8 * i)));
        let chars = chunk.len() + 1;
        for i in 0..chars {
            out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
        }
    }
    out
}
