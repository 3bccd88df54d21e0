//! One token request to a token endpoint (an identity provider's or an authorization
//! server's), as the grants seedpod runs itself make it (`machine.rs`, `cross_app.rs`): a form
//! POST with no redirects followed, a time limit, an answer read up to 64 KiB, and every way it
//! can fail said in words naming whom it was sent to — never a Rust type, and an OAuth error
//! body only as its cut, printable `error` and `error_description`.

/// How long the request may take.
const TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);
/// The largest answer read.
const MAX_RESPONSE: usize = 64 * 1024;

/// How the client says who it is.
pub(super) enum ClientAuth<'a> {
    /// HTTP Basic, each part form-encoded first (RFC 6749 §2.3.1).
    Basic { id: &'a str, secret: &'a str },
    /// `client_id` in the body: a client without a secret.
    InBody { id: &'a str },
    /// Nothing more: the form carries a signed assertion that names the client (RFC 7523 §3).
    Assertion,
}

impl<'a> ClientAuth<'a> {
    /// Basic with `secret`, or the id in the body when there is none.
    pub(super) fn with_secret(id: &'a str, secret: Option<&'a str>) -> ClientAuth<'a> {
        match secret {
            Some(secret) => ClientAuth::Basic { id, secret },
            None => ClientAuth::InBody { id },
        }
    }
}

/// POST `form` to `endpoint`; the answer's JSON object, or why there is none, naming `who`.
pub(super) async fn post(
    endpoint: &url::Url,
    mut form: String,
    auth: ClientAuth<'_>,
    who: &str,
) -> Result<serde_json::Value, String> {
    let client = seedpod_engine::http_client_builder()
        .timeout(TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| format!("could not make an HTTP client: {e}"))?;
    let mut request = client
        .post(endpoint.as_str())
        .header("content-type", "application/x-www-form-urlencoded")
        .header("accept", "application/json");
    match auth {
        ClientAuth::Basic { id, secret } => {
            let encode = |s: &str| -> String {
                url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
            };
            request = request.basic_auth(encode(id), Some(encode(secret)));
        }
        ClientAuth::InBody { id } => {
            let mut extra = url::form_urlencoded::Serializer::new(String::new());
            extra.append_pair("client_id", id);
            form = format!("{form}&{}", extra.finish());
        }
        ClientAuth::Assertion => {}
    }
    let answer = request
        .body(form)
        .send()
        .await
        .map_err(|e| format!("could not reach {who}: {}", super::login::describe(&e)))?;
    let status = answer.status();
    let body = answer
        .bytes()
        .await
        .map_err(|e| format!("{who}'s answer broke off: {}", super::login::describe(&e)))?;
    if body.len() > MAX_RESPONSE {
        return Err(format!("{who} answered with more than 64 KiB"));
    }
    if !status.is_success() {
        return Err(format!(
            "{who} refused the token request (HTTP {}{})",
            status.as_u16(),
            oauth_error(&body)
        ));
    }
    serde_json::from_slice::<serde_json::Value>(&body)
        .ok()
        .filter(serde_json::Value::is_object)
        .ok_or_else(|| format!("{who}'s answer is not an OAuth token response"))
}

/// `: error (description)` of an OAuth error body, cut and with control characters dropped.
fn oauth_error(body: &[u8]) -> String {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(body) else {
        return String::new();
    };
    let field = |name: &str| {
        value
            .get(name)
            .and_then(serde_json::Value::as_str)
            .map(|s| {
                s.chars()
                    .filter(|c| !c.is_control())
                    .take(200)
                    .collect::<String>()
            })
    };
    match (field("error"), field("error_description")) {
        (Some(error), Some(description)) => format!(": {error} ({description})"),
        (Some(error), None) => format!(": {error}"),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_oauth_error_body_is_cut_and_cannot_steer_the_terminal() {
        let body = serde_json::json!({
            "error": "invalid_client",
            "error_description": format!("\u{1b}[2J{}", "x".repeat(5000)),
        });
        let said = oauth_error(body.to_string().as_bytes());
        assert!(said.starts_with(": invalid_client ("), "{said}");
        assert!(!said.contains('\u{1b}'));
        assert!(said.len() < 300);
        assert_eq!(oauth_error(b"<html>"), "");
    }
}
