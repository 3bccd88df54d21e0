//! `probe_window` against loopback fakes answering as each server does.

use super::*;
use crate::testing::{MockServer, Reply};

/// Far longer than a loopback answer takes, even on a loaded machine.
const TIMEOUT: Duration = Duration::from_secs(5);

/// For the server that never answers: the test waits this out once.
const SHORT_TIMEOUT: Duration = Duration::from_secs(1);

fn ok(body: &str) -> Reply {
    Reply::status(200, body)
}

async fn probe(server: &MockServer, base: &str, model: &str) -> Option<u64> {
    let base_url = format!("{}{base}", server.base_url());
    probe_window(ProviderKind::Openai, &base_url, model, TIMEOUT).await
}

const OLLAMA_SHOW: &str = r#"{"license":"LLAMA 3.2 COMMUNITY LICENSE","modelfile":"FROM x","parameters":"num_ctx                        16384\nstop                           \"<|eot_id|>\"","template":"{{ .Prompt }}","details":{"family":"llama"},"model_info":{"general.architecture":"llama","general.parameter_count":3212749888,"llama.context_length":131072,"llama.embedding_length":3072}}"#;

#[tokio::test]
async fn ollama_prefers_what_it_allocated_then_num_ctx_then_the_models_length() {
    let running = r#"{"models":[{"name":"qwen2.5:0.5b","model":"qwen2.5:0.5b","context_length":2048},{"name":"llama3.2:latest","model":"llama3.2:latest","size":1,"context_length":8192}]}"#;
    let server = MockServer::routes(vec![
        ("GET", "/api/ps", ok(running)),
        ("POST", "/api/show", ok(OLLAMA_SHOW)),
    ])
    .await;
    assert_eq!(probe(&server, "/v1", "llama3.2").await, Some(8_192));
    assert_eq!(probe(&server, "/v1/", "qwen2.5:0.5b").await, Some(2_048));
    assert_eq!(
        probe(&server, "", "gemma3:1b").await,
        Some(16_384),
        "not loaded: the Modelfile's num_ctx"
    );
    // Every probe asks every source; the last `/api/show` is the third probe's.
    let show = server
        .requests()
        .into_iter()
        .rfind(|r| r.path == "/api/show")
        .unwrap();
    assert_eq!(show.method, "POST");
    assert_eq!(show.body, r#"{"model":"gemma3:1b"}"#);

    let without_num_ctx = OLLAMA_SHOW.replace("num_ctx ", "top_k ");
    let server = MockServer::routes(vec![
        ("GET", "/api/ps", ok(r#"{"models":[]}"#)),
        ("POST", "/api/show", ok(&without_num_ctx)),
    ])
    .await;
    assert_eq!(probe(&server, "/v1", "llama3.2").await, Some(131_072));
}

#[tokio::test]
async fn llama_cpp_states_its_slot_context_in_props() {
    let props = r#"{"default_generation_settings":{"n_ctx":2048,"params":{"n_predict":-1}},"total_slots":1,"model_path":"models/tinyllama.gguf"}"#;
    let server = MockServer::routes(vec![("GET", "/props", ok(props))]).await;
    assert_eq!(probe(&server, "/v1", "tinyllama").await, Some(2_048));

    let older = r#"{"n_ctx":4096,"total_slots":1}"#;
    let server = MockServer::routes(vec![("GET", "/props", ok(older))]).await;
    assert_eq!(probe(&server, "/v1", "anything").await, Some(4_096));
}

#[tokio::test]
async fn vllm_states_max_model_len_for_the_served_model() {
    let models = r#"{"object":"list","data":[{"id":"other/model","object":"model","max_model_len":1024},{"id":"Qwen/Qwen2.5-7B-Instruct","object":"model","owned_by":"vllm","max_model_len":32768}]}"#;
    let server = MockServer::routes(vec![("GET", "/v1/models", ok(models))]).await;
    assert_eq!(
        probe(&server, "/v1", "Qwen/Qwen2.5-7B-Instruct").await,
        Some(32_768)
    );
    assert_eq!(probe(&server, "/v1", "not-served").await, None);
}

#[tokio::test]
async fn lm_studio_prefers_the_loaded_context_length() {
    let loaded = r#"{"id":"qwen2.5-7b-instruct","state":"loaded","max_context_length":32768,"loaded_context_length":4096}"#;
    let not_loaded = r#"{"id":"org/model-q4","state":"not-loaded","max_context_length":131072}"#;
    let server = MockServer::routes(vec![
        ("GET", "/api/v0/models/qwen2.5-7b-instruct", ok(loaded)),
        ("GET", "/api/v0/models/org%2Fmodel-q4", ok(not_loaded)),
    ])
    .await;
    assert_eq!(
        probe(&server, "/v1", "qwen2.5-7b-instruct").await,
        Some(4_096)
    );
    assert_eq!(probe(&server, "/v1", "org/model-q4").await, Some(131_072));
}

#[tokio::test]
async fn a_server_that_says_nothing_useful_gives_none() {
    let server = MockServer::routes(vec![
        ("GET", "/api/ps", Reply::Hang { prefix: Vec::new() }),
        ("POST", "/api/show", ok("not json")),
        (
            "GET",
            "/props",
            ok(r#"{"default_generation_settings":{"n_ctx":0}}"#),
        ),
        ("GET", "/v1/models", ok(r#"{"data":[{"id":"m"}]}"#)),
        ("GET", "/api/v0/models/m", Reply::status(500, "{}")),
    ])
    .await;
    let base_url = format!("{}/v1", server.base_url());
    assert_eq!(
        probe_window(ProviderKind::Openai, &base_url, "m", SHORT_TIMEOUT).await,
        None
    );
    let asked: Vec<String> = server.requests().into_iter().map(|r| r.path).collect();
    assert_eq!(
        asked,
        [
            "/api/ps",
            "/api/show",
            "/props",
            "/v1/models",
            "/api/v0/models/m"
        ],
        "every place is asked once, in order, past the one that hangs"
    );
}

#[tokio::test]
async fn nothing_is_asked_of_anthropic_or_an_unusable_address() {
    let server = MockServer::routes(vec![("GET", "/props", ok(r#"{"n_ctx":4096}"#))]).await;
    let base_url = server.base_url();
    for kind in [
        ProviderKind::Anthropic,
        ProviderKind::Scripted,
        ProviderKind::Unknown,
    ] {
        assert_eq!(probe_window(kind, &base_url, "m", TIMEOUT).await, None);
    }
    assert!(server.requests().is_empty());
    for base_url in ["", "ftp://127.0.0.1:1/v1", "not a url"] {
        assert_eq!(
            probe_window(ProviderKind::Openai, base_url, "m", TIMEOUT).await,
            None,
            "{base_url:?}"
        );
    }
}

#[test]
fn the_server_root_drops_a_trailing_v1() {
    assert_eq!(
        server_root("http://127.0.0.1:11434/v1").as_deref(),
        Some("http://127.0.0.1:11434")
    );
    assert_eq!(
        server_root("http://host:8080/v1/").as_deref(),
        Some("http://host:8080")
    );
    assert_eq!(
        server_root("http://host/proxy/v1").as_deref(),
        Some("http://host/proxy")
    );
    assert_eq!(
        server_root("http://host:8080").as_deref(),
        Some("http://host:8080")
    );
    assert_eq!(server_root("  /v1 "), None);
}

// The questions go out together, but the answer is the one asking in turn would have given: a
// server answering in two places is read from the earlier one.
#[tokio::test]
async fn asked_at_once_the_earlier_source_still_wins() {
    let props = r#"{"default_generation_settings":{"n_ctx":2048}}"#;
    let models = r#"{"object":"list","data":[{"id":"m","object":"model","max_model_len":8192}]}"#;
    let server = MockServer::routes(vec![
        ("GET", "/v1/models", ok(models)),
        ("GET", "/props", ok(props)),
    ])
    .await;
    assert_eq!(probe(&server, "/v1", "m").await, Some(2_048));
    let asked: Vec<String> = server.requests().into_iter().map(|r| r.path).collect();
    assert_eq!(asked.len(), 5, "every source was asked once: {asked:?}");
}
