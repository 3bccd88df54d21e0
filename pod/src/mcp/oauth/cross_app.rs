//! Cross-app access (`grant = "cross_app_access"`, enterprise-managed authorization, SEP-990;
//! docs/configuration.md §MCP OAuth): a company's identity provider decides which of its
//! people may use an MCP server, and no one clicks through a consent screen per server.
//!
//! At each connect, three steps, each the person's or a standard's:
//! 1. the person's `id_token_command` prints a fresh ID token (`id_token.rs`);
//! 2. RFC 8693 token exchange at the identity provider's token endpoint: that ID token for an
//!    Identity Assertion JWT Authorization Grant (ID-JAG) for this server's authorization server
//!    (`audience`, its issuer) and this server (`resource`);
//! 3. RFC 7523 JWT bearer grant at the authorization server: the ID-JAG for an access token,
//!    kept in the server's login file (`store.rs`) like any login.
//!
//! No refresh token is kept or asked for: the next connect runs the three steps again (the
//! identity provider, not a long-lived token here, decides whether the person still may).
//! Neither token is logged or put in a message.

use rmcp::transport::auth::{CredentialStore, OAuthTokenResponse, StoredCredentials};
use seedpod_config::{CrossAppAccess, McpServer};

use super::machine::{MachineError, discover, now_secs, plain_http_allowed};
use super::store::TokenStore;
use super::token_request::{ClientAuth, post};

const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const ID_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:id_token";
const ID_JAG_TYPE: &str = "urn:ietf:params:oauth:token-type:id-jag";

/// Get a token for `server` at `url` (expanded) and save it in `store`.
pub async fn obtain(server: &McpServer, url: &str, store: &TokenStore) -> Result<(), MachineError> {
    let oauth = &server.oauth;
    let config = |why: &str| MachineError::Config(why.to_owned());
    let cross = oauth
        .cross_app
        .as_ref()
        .ok_or_else(|| config("grant = \"cross_app_access\" needs id_token_command"))?;
    let client_id = oauth
        .client_id
        .clone()
        .ok_or_else(|| config("grant = \"cross_app_access\" needs client_id"))?;
    let client_secret = super::client_secret(oauth).map_err(MachineError::Config)?;
    let idp_secret = super::secret_from(
        cross.idp_client_secret_env.as_deref(),
        cross.idp_client_secret_file.as_deref(),
        ("idp_client_secret_env", "idp_client_secret_file"),
    )
    .map_err(MachineError::Config)?;
    // `${VAR}` in the command and the endpoint take their values now, as a transport's do
    // (`seedpod_config::expand`); errors name the key, never a value.
    let lookup = |var: &str| std::env::var(var).ok();
    let expand = |key: &str, text: &str| {
        seedpod_config::expand::expand(text, &lookup)
            .map_err(|e| MachineError::Config(format!("{key}: {e}")))
    };
    let command = cross
        .id_token_command
        .iter()
        .map(|arg| expand("id_token_command", arg))
        .collect::<Result<Vec<_>, _>>()?;
    let idp_endpoint = url::Url::parse(&expand("idp_token_endpoint", &cross.idp_token_endpoint)?)
        .map_err(|_| config("idp_token_endpoint is not a URL"))?;
    if !plain_http_allowed(&idp_endpoint, &idp_endpoint) {
        return Err(config(
            "idp_token_endpoint is not https; seedpod sends an ID token only over https (or \
             plain http on this machine)",
        ));
    }
    let resource = url::Url::parse(url).map_err(|_| config("its url is not a URL"))?;
    let shown = seedpod_config::show::mask_url(url);
    let refused = |why: String| MachineError::Refused(format!("{shown}: {why}"));

    // Where the token will be asked for first: no ID token is fetched or sent for a server
    // whose authorization server cannot take the grant.
    let (_, metadata) = discover(url).await.map_err(refused)?;
    let grants = metadata
        .additional_fields
        .get("grant_types_supported")
        .and_then(serde_json::Value::as_array);
    if grants.is_some_and(|list| !list.iter().any(|g| g.as_str() == Some(JWT_BEARER))) {
        return Err(refused(
            "its authorization server does not take JWT bearer grants, which cross-app access \
             needs"
                .to_owned(),
        ));
    }
    let issuer = metadata.issuer.clone().ok_or_else(|| {
        refused("its authorization server names no issuer for the ID-JAG's audience".to_owned())
    })?;
    let as_endpoint = url::Url::parse(&metadata.token_endpoint)
        .map_err(|_| refused("its token endpoint is not a URL".to_owned()))?;
    if !plain_http_allowed(&resource, &as_endpoint) {
        return Err(refused(format!(
            "its token endpoint {} is not https; seedpod sends an identity assertion only over \
             https (or plain http between loopback addresses)",
            seedpod_config::show::mask_url(as_endpoint.as_str())
        )));
    }

    let written = cross.id_token_command.first().map_or("", String::as_str);
    let id_token = super::id_token::fetch(&command, written).await?;
    let grant = exchange_id_token(
        cross,
        &idp_endpoint,
        idp_secret.as_deref(),
        &id_token,
        &issuer,
        url,
        oauth,
    )
    .await
    .map_err(refused)?;
    let (token, granted) = jwt_bearer(
        &as_endpoint,
        &client_id,
        client_secret.as_deref(),
        &grant,
        url,
        &oauth.scopes,
    )
    .await
    .map_err(refused)?;
    let credentials = StoredCredentials::new(client_id, Some(token), granted, Some(now_secs()))
        .with_issuer(Some(issuer));
    store
        .save(credentials)
        .await
        .map_err(|e| MachineError::Config(e.to_string()))
}

/// Step 2: the ID token for an ID-JAG at the identity provider (RFC 8693; SEP-990).
async fn exchange_id_token(
    cross: &CrossAppAccess,
    endpoint: &url::Url,
    idp_secret: Option<&str>,
    id_token: &str,
    audience: &str,
    resource: &str,
    oauth: &seedpod_config::McpOAuth,
) -> Result<String, String> {
    let form = {
        let mut form = url::form_urlencoded::Serializer::new(String::new());
        form.append_pair("grant_type", TOKEN_EXCHANGE)
            .append_pair("requested_token_type", ID_JAG_TYPE)
            .append_pair("audience", audience)
            .append_pair("resource", resource)
            .append_pair("subject_token", id_token)
            .append_pair("subject_token_type", ID_TOKEN_TYPE);
        if !oauth.scopes.is_empty() {
            form.append_pair("scope", &oauth.scopes.join(" "));
        }
        form.finish()
    };
    let answer = post(
        endpoint,
        form,
        ClientAuth::with_secret(&cross.idp_client_id, idp_secret),
        "your identity provider",
    )
    .await?;
    let issued = answer
        .get("issued_token_type")
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default();
    if issued != ID_JAG_TYPE {
        return Err(format!(
            "your identity provider answered the token exchange with another kind of token \
             ({}) than the identity assertion grant (ID-JAG) asked for; it may not support \
             cross-app access for this client",
            match issued {
                "" => "none named".to_owned(),
                other =>
                    seedpod_protocol::printable_line(&other.chars().take(100).collect::<String>())
                        .into_owned(),
            }
        ));
    }
    answer
        .get("access_token")
        .and_then(serde_json::Value::as_str)
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .ok_or_else(|| "your identity provider's answer holds no ID-JAG".to_owned())
}

/// Step 3: the ID-JAG for an access token at the authorization server (RFC 7523 §2.1).
async fn jwt_bearer(
    endpoint: &url::Url,
    client_id: &str,
    client_secret: Option<&str>,
    grant: &str,
    resource: &str,
    scopes: &[String],
) -> Result<(OAuthTokenResponse, Vec<String>), String> {
    let form = {
        let mut form = url::form_urlencoded::Serializer::new(String::new());
        form.append_pair("grant_type", JWT_BEARER)
            .append_pair("assertion", grant)
            .append_pair("resource", resource);
        if !scopes.is_empty() {
            form.append_pair("scope", &scopes.join(" "));
        }
        form.finish()
    };
    let value = post(
        endpoint,
        form,
        ClientAuth::with_secret(client_id, client_secret),
        "its authorization server",
    )
    .await?;
    let granted = value
        .get("scope")
        .and_then(serde_json::Value::as_str)
        .map(super::scope_tokens)
        .unwrap_or_default();
    let token = serde_json::from_value(value).map_err(|_| {
        "its authorization server's answer is not an OAuth token response".to_owned()
    })?;
    Ok((token, granted))
}
