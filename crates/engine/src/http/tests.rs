use super::*;

fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (name, value) in pairs {
        map.insert(*name, HeaderValue::from_static(value));
    }
    map
}

#[test]
fn retry_after_in_seconds_milliseconds_or_not_understood() {
    assert_eq!(
        retry_after(&headers(&[("retry-after", "3")])),
        Some(Duration::from_secs(3))
    );
    assert_eq!(
        retry_after(&headers(&[("retry-after", " 1.5 ")])),
        Some(Duration::from_millis(1500))
    );
    // OpenAI's finer header wins over the coarse one.
    assert_eq!(
        retry_after(&headers(&[("retry-after", "1"), ("retry-after-ms", "250")])),
        Some(Duration::from_millis(250))
    );
    assert_eq!(
        retry_after(&headers(&[(
            "retry-after",
            "Wed, 21 Oct 2015 07:28:00 GMT"
        )])),
        None
    );
    assert_eq!(retry_after(&headers(&[("retry-after", "-1")])), None);
    assert_eq!(retry_after(&headers(&[])), None);
}

#[test]
fn the_providers_message_is_found_in_every_usual_shape() {
    let cases = [
        (
            r#"{"type":"error","error":{"type":"not_found_error","message":"model: nope"}}"#,
            "model: nope",
        ),
        (
            r#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}"#,
            "Incorrect API key provided",
        ),
        (r#"{"error":"model 'x' not found"}"#, "model 'x' not found"),
        (r#"{"detail":"Not Found"}"#, "Not Found"),
        (r#"{"message":"bad"}"#, "bad"),
        ("  upstream timed out  ", "upstream timed out"),
        ("", "(the response gave no details)"),
    ];
    for (body, expected) in cases {
        assert_eq!(provider_message(body), expected, "{body}");
    }
    let long = "x".repeat(error_body::MAX_QUOTED_CHARS + 10);
    assert_eq!(
        provider_message(&long).chars().count(),
        error_body::MAX_QUOTED_CHARS + 1
    );
}

#[test]
fn statuses_are_classified_as_the_spec_says() {
    for code in [408, 429, 500, 502, 503, 504, 529] {
        assert!(is_transient_status(code), "{code}");
    }
    for code in [400, 401, 403, 404, 413, 422, 501, 505] {
        assert!(!is_transient_status(code), "{code}");
    }
}

#[test]
fn endpoints_join_the_base_url_and_path() {
    let url = |base: &str, path: &str| endpoint_url(base, path).map(|u| u.to_string());
    assert_eq!(
        url("http://127.0.0.1:11434/v1/", "/chat/completions"),
        Ok("http://127.0.0.1:11434/v1/chat/completions".into())
    );
    assert_eq!(
        url("https://api.anthropic.com", "/v1/messages"),
        Ok("https://api.anthropic.com/v1/messages".into())
    );
    assert!(matches!(
        url("localhost:8080", "/x"),
        Err(ProviderSetupError::BaseUrl { .. })
    ));
    assert!(matches!(
        url("not a url", "/x"),
        Err(ProviderSetupError::BaseUrl { .. })
    ));
}

#[test]
fn loopback_hosts_are_recognised() {
    let loopback = |url: &str| is_loopback(&Url::parse(url).unwrap());
    assert!(loopback("http://127.0.0.1:8080/v1"));
    assert!(loopback("http://localhost:1234"));
    assert!(loopback("http://[::1]:11434"));
    assert!(!loopback("https://api.openai.com/v1"));
    assert!(!loopback("http://10.0.0.2:8000"));
}

#[test]
fn secret_headers_do_not_print() {
    let value = secret_header("sk-secret").unwrap();
    assert!(value.is_sensitive());
    assert!(!format!("{value:?}").contains("sk-secret"));
}

#[test]
fn messages_never_show_credentials_from_the_base_url() {
    let endpoint = Endpoint::new(
        "openai",
        "http://user:hunter2@127.0.0.1:9/v1",
        "/chat/completions",
        HeaderMap::new(),
        DEFAULT_CONNECT_TIMEOUT,
        DEFAULT_IDLE_READ_TIMEOUT,
    )
    .unwrap();
    let message = endpoint
        .timeout(Duration::from_secs(5), "for a test")
        .to_string();
    assert_eq!(
        message,
        "openai: timed out after 5s waiting for a test from http://127.0.0.1:9/v1/chat/completions"
    );
}

#[tokio::test]
async fn a_redirect_is_reported_not_followed() {
    use crate::testing::{MockServer, Reply};

    let moved = Reply::status(301, "").with_header("location", "https://example.test/v1/messages");
    let server = MockServer::start(vec![moved]).await;
    let endpoint = Endpoint::new(
        "anthropic",
        &server.base_url(),
        "/v1/messages",
        HeaderMap::new(),
        DEFAULT_CONNECT_TIMEOUT,
        DEFAULT_IDLE_READ_TIMEOUT,
    )
    .unwrap();
    let Err(err) = endpoint.send("{}".into()).await else {
        panic!("a redirect must not count as success");
    };
    assert_eq!(
        err,
        ProviderError::Permanent {
            message: "anthropic: HTTP 301 Moved Permanently: (the response gave no details) (the \
                      server redirects to https://example.test/v1/messages; use that as the base \
                      URL)"
                .into(),
            status: Some(301),
        }
    );
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn overflow_facts_the_sentence_leaves_out_are_kept() {
    let cases = [
        (
            r#"{"error":{"code":500,"message":"the request exceeds the available context size","type":"exceed_context_size_error","n_prompt_tokens":1407,"n_ctx":256}}"#,
            "the request exceeds the available context size (exceed_context_size_error, \
             n_prompt_tokens 1407, n_ctx 256)",
        ),
        (
            r#"{"error":{"message":"Your input exceeds the context window of this model.","code":"context_length_exceeded"}}"#,
            "Your input exceeds the context window of this model. (context_length_exceeded)",
        ),
        (
            r#"{"error":"{\"message\":\"too big\",\"type\":\"exceed_context_size_error\",\"n_ctx\":4096}"}"#,
            "too big (exceed_context_size_error, n_ctx 4096)",
        ),
        (
            r#"{"error":{"message":"model not found","type":"invalid_request_error","n_ctx":4096}}"#,
            "model not found (n_ctx 4096)",
        ),
    ];
    for (body, expected) in cases {
        assert_eq!(provider_message(body), expected, "{body}");
    }
}

#[test]
fn an_overflow_is_permanent_whatever_its_status() {
    let overflow = "openai: HTTP 500: the request exceeds the available context size".to_owned();
    assert!(!classify(overflow, Some(500), None, true).is_transient());
    let busy = "openai: HTTP 503: loading model".to_owned();
    assert!(classify(busy, Some(503), None, true).is_transient());
}

mod models {
    use crate::anthropic::{AnthropicConfig, AnthropicProvider};
    use crate::openai::{OpenAiConfig, OpenAiProvider};
    use crate::provider::Provider;
    use crate::testing::{MockServer, Reply};

    const LIST: &str =
        r#"{"object":"list","data":[{"id":"qwen3:8b"},{"id":"llama3.2"},{"no_id":1}]}"#;

    #[tokio::test]
    async fn both_providers_list_the_servers_models_with_their_credentials() {
        let server =
            MockServer::start(vec![Reply::status(200, LIST), Reply::status(200, LIST)]).await;
        let openai = OpenAiProvider::new(OpenAiConfig {
            base_url: format!("{}/v1", server.base_url()),
            api_key: Some("sk-openai-test".into()),
            ..OpenAiConfig::default()
        })
        .unwrap();
        assert_eq!(
            openai.list_models().await.unwrap(),
            ["qwen3:8b", "llama3.2"]
        );
        let anthropic = AnthropicProvider::new(AnthropicConfig {
            base_url: server.base_url(),
            api_key: Some("sk-ant-test".into()),
            ..AnthropicConfig::default()
        })
        .unwrap();
        assert_eq!(anthropic.list_models().await.unwrap().len(), 2);
        let requests = server.requests();
        assert_eq!(
            (requests[0].method.as_str(), requests[0].path.as_str()),
            ("GET", "/v1/models")
        );
        assert_eq!(
            requests[0].header("authorization"),
            Some("Bearer sk-openai-test")
        );
        assert_eq!(requests[1].path, "/v1/models");
        assert_eq!(requests[1].header("x-api-key"), Some("sk-ant-test"));
    }

    #[tokio::test]
    async fn a_refusal_is_reported_without_the_key() {
        let server = MockServer::start(vec![Reply::status(
            401,
            r#"{"error":"bad key sk-openai-secret-123456789"}"#,
        )])
        .await;
        let openai = OpenAiProvider::new(OpenAiConfig {
            base_url: format!("{}/v1", server.base_url()),
            api_key: Some("sk-openai-secret-123456789".into()),
            ..OpenAiConfig::default()
        })
        .unwrap();
        let err = openai.list_models().await.unwrap_err();
        assert!(err.contains("401"), "{err}");
        assert!(!err.contains("sk-openai-secret-123456789"), "{err}");
    }
}

// reqwest is built without a crypto provider: building any client before one is installed
// panics. Every client starts from `http_client_builder`, which installs ring's; an HTTPS
// client built from it works and uses ring.
#[test]
fn a_client_from_the_builder_has_tls_crypto() {
    let client = http_client_builder().https_only(true).build();
    assert!(client.is_ok(), "{client:?}");
    let provider = rustls::crypto::CryptoProvider::get_default();
    assert!(
        provider.is_some_and(
            |p| p.cipher_suites == rustls::crypto::ring::default_provider().cipher_suites
        ),
        "ring is the process's provider"
    );
}

#[test]
fn local_servers_are_this_machine_and_private_networks() {
    for local in [
        "http://127.0.0.1:8080/v1",
        "http://localhost:11434",
        "http://[::1]:8000/v1",
        "http://10.0.0.7:8000/v1",
        "http://172.20.1.2/v1",
        "http://192.168.1.50:1234/v1",
        "http://169.254.3.4/v1",
        "http://gpu-box.local:8080/v1",
        "http://[fd12:3456::1]:8080/v1",
        "http://[fe80::1]:8080/v1",
    ] {
        assert!(is_local_server(local), "{local}");
    }
    for hosted in [
        "https://api.openai.com/v1",
        "https://openrouter.ai/api/v1",
        "http://172.32.0.1/v1",
        "http://8.8.8.8/v1",
        "http://[2001:db8::1]/v1",
        "http://localhost.evil.example/v1",
        "not a url",
    ] {
        assert!(!is_local_server(hosted), "{hosted}");
    }
}

// Only a client that can never speak TLS goes without trust roots: plain HTTP to this machine.
// Anything that may reach TLS (https anywhere, or http to another host, whose proxy may be
// https) keeps the system's roots.
#[test]
fn only_plain_http_on_this_machine_goes_without_trust_roots() {
    for plain in [
        "http://127.0.0.1:8080/v1",
        "http://localhost:11434/v1",
        "http://LOCALHOST/v1",
        "http://[::1]:8000/v1",
        "http://127.8.9.10/v1",
    ] {
        assert!(plain_http_here(&Url::parse(plain).unwrap()), "{plain}");
    }
    for tls in [
        "https://127.0.0.1:8080/v1",
        "https://localhost/v1",
        "http://10.0.0.7:8000/v1",
        "http://gpu-box.local:8080/v1",
        "http://api.example.com/v1",
        "http://localhost.example.com/v1",
        "https://api.openai.com/v1",
    ] {
        assert!(!plain_http_here(&Url::parse(tls).unwrap()), "{tls}");
    }
    // And such a client still builds and works for plain HTTP (every loopback fake in the
    // suite talks to one).
    let client = without_trust_roots(http_client_builder()).build();
    assert!(client.is_ok(), "{client:?}");
}
