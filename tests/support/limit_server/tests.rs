//! The fake itself: the limit is enforced with the real error bodies, byte for byte, and its
//! streams are read by seedpod's own providers (so they parse as the real APIs' do).

use seedpod_engine::testing::drain;
use seedpod_engine::{
    AnthropicConfig, AnthropicProvider, Context, OpenAiConfig, OpenAiProvider, Provider,
    ProviderEvent, overflow_of,
};
use seedpod_protocol::{CallId, FinishReason, ModelConfig, ModelItem, ToolSpec};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::*;

const OPENAI_REAL: &str = r#"{"error":{"message":"This model's maximum context length is 16000 tokens. However, your messages resulted in 17234 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#;
const ANTHROPIC_REAL: &str = r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 17234 tokens > 16000 maximum"}}"#;

#[test]
fn error_bodies_are_the_real_ones_byte_for_byte() {
    assert_eq!(openai_too_long(16_000, 17_234), OPENAI_REAL);
    assert_eq!(anthropic_too_long(16_000, 17_234), ANTHROPIC_REAL);
}

#[test]
fn counts_characters_of_the_whole_body_not_bytes() {
    let config = LimitConfig::new(100);
    assert_eq!(config.count(""), 0);
    assert_eq!(config.count(&"a".repeat(32)), 10);
    assert_eq!(config.count(&"a".repeat(33)), 11, "rounded up");
    assert_eq!(config.count(&"ż".repeat(32)), 10, "characters, not bytes");
}

/// Both providers, as a pod configures them against `server`.
fn providers(server: &LimitServer) -> Vec<(Wire, Box<dyn Provider>)> {
    let openai = OpenAiProvider::new(OpenAiConfig {
        base_url: server.openai_base_url(),
        ..OpenAiConfig::default()
    })
    .unwrap();
    let anthropic = AnthropicProvider::new(AnthropicConfig {
        base_url: server.base_url(),
        api_key: Some("test".into()),
        ..AnthropicConfig::default()
    })
    .unwrap();
    vec![
        (Wire::OpenAi, Box::new(openai)),
        (Wire::Anthropic, Box::new(anthropic)),
    ]
}

fn read_file_tool() -> Vec<ToolSpec> {
    vec![ToolSpec {
        name: "read_file".into(),
        description: "Read a text file.".into(),
        parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
    }]
}

fn user(text: &str) -> ModelItem {
    ModelItem::UserMessage { text: text.into() }
}

/// The body `provider` would send for this history, as a pod builds it.
fn body(provider: &dyn Provider, system: &str, tools: &[ToolSpec], items: &[ModelItem]) -> String {
    let kind = provider.kind();
    let model = ModelConfig::new(kind, "fake-model");
    provider.request_body(&Context {
        model: &model,
        system_prompt: system,
        tools,
        items,
    })
}

/// Text, tool calls (name and arguments) and usage of a successful stream.
#[derive(Debug, Default)]
struct Heard {
    text: String,
    calls: Vec<(String, String)>,
    input_tokens: Option<u64>,
    finish: Option<FinishReason>,
}

async fn hear(provider: &dyn Provider, body: String) -> Heard {
    let mut heard = Heard::default();
    for event in drain(provider.stream(body)).await {
        match event.unwrap_or_else(|e| panic!("the stream failed: {e}")) {
            ProviderEvent::TextDelta(text) => heard.text.push_str(&text),
            ProviderEvent::ToolCallStart { name, .. } => heard.calls.push((name, String::new())),
            ProviderEvent::ToolCallDelta { arguments, .. } => heard
                .calls
                .last_mut()
                .expect("a started call")
                .1
                .push_str(&arguments),
            ProviderEvent::Usage(usage) => heard.input_tokens = Some(usage.input_tokens),
            ProviderEvent::Finish(finish) => heard.finish = Some(finish),
            ProviderEvent::ThinkingDelta(_)
            | ProviderEvent::ThinkingSignature(_)
            | ProviderEvent::ReasoningItem(_)
            | ProviderEvent::Status(_) => {}
        }
    }
    heard
}

#[tokio::test]
async fn a_plain_request_gets_a_text_of_the_configured_length_with_usage_by_its_count() {
    let server = LimitServer::start(LimitConfig::new(16_000));
    for (wire, provider) in providers(&server) {
        let body = body(
            &*provider,
            "You are a test.",
            &read_file_tool(),
            &[user("hello")],
        );
        let heard = hear(&*provider, body.clone()).await;
        let reply = server.config().reply_chars;
        assert!(
            heard.text.len() >= reply && heard.text.len() < reply + 12,
            "{wire:?}: {:?}",
            heard.text
        );
        assert_eq!(
            heard.input_tokens,
            Some(server.config().count(&body)),
            "{wire:?}"
        );
        assert_eq!(heard.finish, Some(FinishReason::Stop), "{wire:?}");
        let last = server.exchanges().pop().unwrap();
        assert_eq!((last.wire, &last.body), (wire, &body));
        assert_eq!(last.answer, Answer::Text);
    }
}

#[tokio::test]
async fn read_file_is_called_for_read_and_the_result_gets_a_short_text() {
    let server = LimitServer::start(LimitConfig::new(16_000));
    for (wire, provider) in providers(&server) {
        let tools = read_file_tool();
        let asked = [user("read notes/big.txt")];
        let heard = hear(&*provider, body(&*provider, "sys", &tools, &asked)).await;
        assert_eq!(
            heard.calls,
            vec![(
                "read_file".to_owned(),
                r#"{"path":"notes/big.txt"}"#.to_owned()
            )],
            "{wire:?}"
        );
        assert_eq!(heard.finish, Some(FinishReason::ToolUse), "{wire:?}");

        let answered = [
            user("read notes/big.txt"),
            ModelItem::ToolCall {
                call_id: CallId::new("toolu_1"),
                name: "read_file".into(),
                arguments: r#"{"path":"notes/big.txt"}"#.into(),
            },
            ModelItem::ToolResult {
                call_id: CallId::new("toolu_1"),
                content: "1\tfirst line".into(),
                is_error: false,
                images: Vec::new(),
            },
        ];
        let heard = hear(&*provider, body(&*provider, "sys", &tools, &answered)).await;
        assert!(
            heard.calls.is_empty() && heard.text.contains("read the file"),
            "{heard:?}"
        );
        assert_eq!(server.exchanges().pop().unwrap().answer, Answer::AfterTool);
    }
}

#[tokio::test]
async fn a_summary_request_is_answered_with_every_fact_it_was_shown() {
    let server = LimitServer::start(LimitConfig::new(16_000));
    let system = "Write a summary. Keep every line marked FACT:, verbatim.";
    let transcript = "## Person\nplease remember\nFACT: the door code is 4417\nthanks\n\n\
                      ## You\nnoted; FACT: the cat is called Miso\n## Person\nFACT: the door code is 4417";
    for (wire, provider) in providers(&server) {
        let heard = hear(
            &*provider,
            body(&*provider, system, &[], &[user(transcript)]),
        )
        .await;
        let facts: Vec<&str> = heard.text.lines().filter(|l| l.contains("FACT")).collect();
        assert_eq!(
            facts,
            [
                "FACT: the door code is 4417",
                "FACT: the cat is called Miso"
            ],
            "{wire:?}: {}",
            heard.text
        );
        assert!(server.exchanges().pop().unwrap().is_summary());
        // The same words with tools offered are a normal request: a pod's history after a
        // compaction mentions its summary too.
        let heard = hear(
            &*provider,
            body(&*provider, system, &read_file_tool(), &[user(transcript)]),
        )
        .await;
        assert!(!heard.text.contains("FACT"), "{wire:?}: {}", heard.text);
    }
}

/// POST `body` to `path` and return the status and the response body, read raw.
async fn post(server: &LimitServer, path: &str, body: &str) -> (u16, String) {
    let addr = server.base_url().trim_start_matches("http://").to_owned();
    let mut socket = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "POST {path} HTTP/1.1\r\nhost: fake\r\ncontent-type: application/json\r\n\
         content-length: {}\r\n\r\n{body}",
        body.len()
    );
    socket.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    socket.read_to_string(&mut response).await.unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, body.to_owned())
}

#[tokio::test]
async fn a_request_over_the_limit_gets_the_real_error_and_one_at_the_limit_does_not() {
    let tools = read_file_tool();
    let probe = LimitServer::start(LimitConfig::new(16_000));
    for (wire, provider) in providers(&probe) {
        let body = body(&*provider, "sys", &tools, &[user(&"word ".repeat(400))]);
        let count = LimitConfig::new(0).count(&body);
        let (path, expected) = match wire {
            Wire::OpenAi => ("/v1/chat/completions", openai_too_long(count - 1, count)),
            Wire::Anthropic => ("/v1/messages", anthropic_too_long(count - 1, count)),
        };

        let at_limit = LimitServer::start(LimitConfig::new(count));
        let (status, _) = post(&at_limit, path, &body).await;
        assert_eq!(status, 200, "{wire:?}: a request of exactly the limit fits");

        let over = LimitServer::start(LimitConfig::new(count - 1));
        let (status, answer) = post(&over, path, &body).await;
        assert_eq!((status, answer), (400, expected), "{wire:?}");
        let recorded = over.exchanges();
        assert_eq!(recorded.len(), 1);
        assert!(recorded[0].refused() && recorded[0].tokens == count);

        // seedpod's providers read it as an overflow stating both numbers.
        let own = providers(&over)
            .into_iter()
            .find(|(w, _)| *w == wire)
            .unwrap()
            .1;
        let events = drain(own.stream(body.clone())).await;
        let err = events
            .into_iter()
            .find_map(Result::err)
            .expect("the stream fails");
        let overflow =
            overflow_of(&err).unwrap_or_else(|| panic!("{wire:?}: not an overflow: {err}"));
        assert_eq!(overflow.limit, Some(count - 1), "{wire:?}: {err}");
        assert_eq!(overflow.requested, Some(count), "{wire:?}: {err}");
        assert!(
            !err.is_transient(),
            "{wire:?}: a too-long refusal is never retried blindly"
        );
    }
}

#[tokio::test]
async fn other_routes_are_not_found_and_not_recorded() {
    let server = LimitServer::start(LimitConfig::new(16_000));
    let (status, _) = post(&server, "/v1/models", "").await;
    assert_eq!(status, 404);
    let (status, answer) = post(&server, "/v1/chat/completions", "not json").await;
    assert_eq!(status, 400);
    assert!(answer.contains("not JSON"), "{answer}");
    let recorded = server.exchanges();
    assert_eq!(recorded.len(), 1);
    assert!(matches!(recorded[0].answer, Answer::Malformed(_)));
    assert_eq!(server.take_exchanges().len(), 1);
    assert!(server.exchanges().is_empty());
}

#[test]
fn dropping_the_server_closes_its_port() {
    let server = LimitServer::start(LimitConfig::new(10));
    let addr = server.base_url().trim_start_matches("http://").to_owned();
    assert!(std::net::TcpStream::connect(&addr).is_ok());
    drop(server);
    assert!(std::net::TcpStream::connect(&addr).is_err());
}

#[tokio::test]
async fn ids_stay_unique_after_the_exchanges_are_taken() {
    let server = LimitServer::start(LimitConfig::new(16_000));
    let (_, provider) = providers(&server).remove(0);
    let asked = [user("read a.txt")];
    let first = hear(
        &*provider,
        body(&*provider, "sys", &read_file_tool(), &asked),
    )
    .await;
    server.take_exchanges();
    let mut ids = Vec::new();
    let again = body(&*provider, "sys", &read_file_tool(), &asked);
    for _ in 0..2 {
        for event in drain(provider.stream(again.clone())).await {
            if let Ok(ProviderEvent::ToolCallStart { call_id, .. }) = event {
                ids.push(call_id);
            }
        }
    }
    assert_eq!(first.calls.len(), 1);
    assert_eq!(
        ids,
        [CallId::new("call_limit_1"), CallId::new("call_limit_2")]
    );
}

/// Every wording reaches seedpod's OpenAI provider as a "too long" refusal that is never
/// retried blindly, stating the window where the real server states it; LM Studio's streamed
/// refusal comes as an `error` event in a `200`, its unstreamed one as a `400`.
#[tokio::test]
async fn each_server_wording_is_read_as_an_overflow_with_the_window_it_states() {
    let cases = [
        (Wording::OpenAi, Some(100), 400),
        (Wording::Vllm, Some(100), 400),
        (Wording::LmStudio, Some(100), 200),
        (Wording::Unsized, None, 400),
    ];
    for (wording, limit, streamed_status) in cases {
        let server = LimitServer::start(LimitConfig {
            wording,
            ..LimitConfig::new(100)
        });
        let provider = &providers(&server)[0].1;
        let body = body(&**provider, "sys", &[], &[user(&"word ".repeat(400))]);
        let (status, answer) = post(&server, "/v1/chat/completions", &body).await;
        assert_eq!(status, streamed_status, "{wording:?}: {answer}");
        let unstreamed = body.replace("\"stream\":true", "\"stream\":false");
        let (status, _) = post(&server, "/v1/chat/completions", &unstreamed).await;
        assert_eq!(status, 400, "{wording:?}: unstreamed");

        let events = drain(provider.stream(body.clone())).await;
        let err = events
            .into_iter()
            .find_map(Result::err)
            .expect("the stream fails");
        let overflow =
            overflow_of(&err).unwrap_or_else(|| panic!("{wording:?}: not an overflow: {err}"));
        assert_eq!(overflow.limit, limit, "{wording:?}: {err}");
        assert!(!err.is_transient(), "{wording:?}: {err}");
    }
}
