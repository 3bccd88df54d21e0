//! The Anthropic provider against the loopback server replaying recorded streams.

use std::sync::Arc;

use seedpod_protocol::{
    CallId, EntryKind, FinishReason, ModelConfig, ModelItem, ProviderKind, Usage,
};

use super::*;
use crate::provider::{ProviderError, ProviderEvent};
use crate::testing::{
    EchoTool, MemoryHost, MockServer, Reply, cut_after, drain, model_config, tool_spec, with_cr,
    with_crlf, with_keep_alives,
};
use crate::tool::ToolRegistry;
use crate::turn::{RunLimits, RunOutcome, drive_run};

const TEXT: &[u8] = include_bytes!("../../tests/fixtures/anthropic_text.sse");
const TOOL_USE: &[u8] = include_bytes!("../../tests/fixtures/anthropic_tool_use.sse");
const THINKING_TOOL_USE: &[u8] =
    include_bytes!("../../tests/fixtures/anthropic_thinking_tool_use.sse");

/// The arguments `TOOL_USE` streams, exactly as its fragments concatenate.
const STREAMED_ARGUMENTS: &str = r#"{"say": "hi there", "n": 1.50}"#;

fn provider(base_url: &str) -> AnthropicProvider {
    AnthropicProvider::new(AnthropicConfig {
        base_url: base_url.to_owned(),
        api_key: Some("sk-ant-test-key".into()),
        ..AnthropicConfig::default()
    })
    .unwrap()
}

fn body_for(provider: &AnthropicProvider, items: &[ModelItem]) -> String {
    let model = model_config(ProviderKind::Anthropic, "claude-test");
    provider.request_body(&Context {
        model: &model,
        system_prompt: "You are a test pod.",
        tools: &[],
        items,
    })
}

fn texts(events: &[Result<ProviderEvent, ProviderError>]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            Ok(ProviderEvent::TextDelta(t)) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

/// A pod-like host answering through `provider`, with the `echo` tool, after the user said "hi".
fn host_with(provider: AnthropicProvider) -> (MemoryHost, ToolRegistry) {
    let mut tools = ToolRegistry::new();
    tools.register(Arc::new(EchoTool::named("echo")));
    let mut host = MemoryHost::new(Arc::new(provider), &tools);
    host.model = model_config(ProviderKind::Anthropic, "claude-test");
    host.start_run("hi");
    (host, tools)
}

async fn run(host: &mut MemoryHost, tools: &ToolRegistry) -> RunOutcome {
    let provider = host.provider.clone();
    drive_run(host, provider.as_ref(), tools, &RunLimits::default())
        .await
        .unwrap()
}

#[tokio::test]
async fn plain_answer_streams_text_usage_and_finish_with_the_right_headers() {
    let server = MockServer::start(vec![Reply::sse_in_pieces(TEXT, &[1, 3, 7, 64])]).await;
    let provider = provider(&server.base_url());
    let body = body_for(&provider, &[ModelItem::UserMessage { text: "hi".into() }]);
    let events = drain(provider.stream(body.clone())).await;

    assert_eq!(texts(&events), "Hello, żółć 🎉 world.");
    let usage = Usage {
        input_tokens: 25,
        output_tokens: 12,
        ..Usage::default()
    };
    assert_eq!(
        events[events.len() - 2..],
        [
            Ok(ProviderEvent::Usage(usage)),
            Ok(ProviderEvent::Finish(FinishReason::Stop))
        ]
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(
        (request.method.as_str(), request.path.as_str()),
        ("POST", "/v1/messages")
    );
    assert_eq!(request.header("x-api-key"), Some("sk-ant-test-key"));
    assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(request.header("content-type"), Some("application/json"));
    assert_eq!(request.body, body, "the body is sent byte for byte");
}

#[tokio::test]
async fn tool_call_round_trip_sends_the_streamed_arguments_and_the_result_back() {
    let server = MockServer::start(vec![Reply::sse(TOOL_USE), Reply::sse(TEXT)]).await;
    let (mut host, tools) = host_with(provider(&server.base_url()));
    assert_eq!(run(&mut host, &tools).await, RunOutcome::Completed);

    assert!(host.log.contains(&EntryKind::AssistantItem {
        item: ModelItem::ToolCall {
            call_id: CallId::new("toolu_01Echo"),
            name: "echo".into(),
            arguments: STREAMED_ARGUMENTS.into(),
        }
    }));
    assert!(host.log.contains(&EntryKind::Usage(Usage {
        input_tokens: 310,
        output_tokens: 40,
        cache_read_tokens: 1024,
        cache_creation_tokens: 0,
    })));
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[1].body, host.bodies[1]);
    let expected_turn = format!(
        concat!(
            r#"{{"role":"assistant","content":[{{"type":"text","text":"I'll echo that."}},"#,
            r#"{{"type":"tool_use","id":"toolu_01Echo","name":"echo","input":{args}}}]}},"#,
            r#"{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_01Echo","content":{result},"#,
            r#""cache_control":{{"type":"ephemeral"}}}}]}}]"#
        ),
        args = STREAMED_ARGUMENTS,
        result = serde_json::to_string(STREAMED_ARGUMENTS).unwrap(),
    );
    assert!(
        requests[1].body.contains(&expected_turn),
        "{}",
        requests[1].body
    );
}

#[tokio::test]
async fn thinking_is_sent_back_verbatim_with_its_signature() {
    let server = MockServer::start(vec![
        Reply::sse_in_pieces(THINKING_TOOL_USE, &[5]),
        Reply::sse(TEXT),
    ])
    .await;
    let (mut host, tools) = host_with(provider(&server.base_url()));
    assert_eq!(run(&mut host, &tools).await, RunOutcome::Completed);

    let signature = "ErUBCkYIBxgCIkB0ZXN0LXNpZ25hdHVyZS1ieXRlcy8rPQ==";
    assert!(host.log.contains(&EntryKind::AssistantItem {
        item: ModelItem::Reasoning {
            text: "The user wants an echo; call the tool.\n".into(),
            signature: Some(signature.into()),
            responses: None,
        }
    }));
    assert!(host.log.contains(&EntryKind::Usage(Usage {
        input_tokens: 402,
        output_tokens: 87,
        cache_read_tokens: 0,
        cache_creation_tokens: 188,
    })));
    let sent = &server.requests()[1].body;
    let expected = format!(
        concat!(
            r#"{{"role":"assistant","content":[{{"type":"thinking","thinking":"The user wants an echo; call the tool.\n","signature":"{}"}},"#,
            r#"{{"type":"tool_use","id":"toolu_02Think","name":"echo","input":{{"say":"ok"}}}}]}}"#
        ),
        signature
    );
    assert!(sent.contains(&expected), "{sent}");
    assert!(
        !sent.contains("redacted"),
        "redacted thinking is not kept: {sent}"
    );
}

#[tokio::test]
async fn ugly_but_valid_streams_decode_the_same_as_the_clean_one() {
    let variants = [
        Reply::sse_in_pieces(TEXT, &[1]),
        Reply::sse_in_pieces(with_crlf(TEXT), &[2, 9, 4]),
        Reply::sse_in_pieces(with_cr(TEXT), &[13]),
        Reply::sse_in_pieces(with_keep_alives(TEXT), &[6, 1]),
        // Some servers end the stream without the blank line after the last event.
        Reply::sse(&TEXT[..TEXT.len() - 1]),
    ];
    let count = variants.len();
    let mut replies = vec![Reply::sse(TEXT)];
    replies.extend(variants);
    let server = MockServer::start(replies).await;
    let provider = provider(&server.base_url());
    let clean = drain(provider.stream("{}".into())).await;
    assert!(matches!(
        clean.last(),
        Some(Ok(ProviderEvent::Finish(FinishReason::Stop)))
    ));
    for variant in 0..count {
        let events = drain(provider.stream("{}".into())).await;
        assert_eq!(events, clean, "variant {variant}");
    }
}

#[tokio::test]
async fn a_stream_cut_before_message_stop_is_a_transient_error() {
    let cut = cut_after(TEXT, "\"stop_reason\":\"end_turn\"");
    let server = MockServer::start(vec![Reply::sse(cut)]).await;
    let events = drain(provider(&server.base_url()).stream("{}".into())).await;
    let Some(Err(err)) = events.last() else {
        panic!("expected an error, got {events:?}");
    };
    assert!(err.is_transient(), "{err:?}");
    assert!(err.message().contains("message_stop"), "{err}");
    assert!(
        !events.contains(&Ok(ProviderEvent::Finish(FinishReason::Stop))),
        "no finish for an incomplete response"
    );
}

#[tokio::test]
async fn error_events_are_classified_like_their_statuses() {
    let overloaded = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":3}}}\n\n\
        event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n";
    let invalid = "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"prompt is too long\"}}\n\n";
    let server = MockServer::start(vec![Reply::sse(overloaded), Reply::sse(invalid)]).await;
    let provider = provider(&server.base_url());

    let events = drain(provider.stream("{}".into())).await;
    assert_eq!(
        events.last(),
        Some(&Err(ProviderError::Transient {
            message: "anthropic: the stream reported overloaded_error: Overloaded".into(),
            status: Some(529),
            retry_after: None,
        }))
    );
    let events = drain(provider.stream("{}".into())).await;
    assert_eq!(
        events,
        [Err(ProviderError::Permanent {
            message: "anthropic: the stream reported invalid_request_error: prompt is too long"
                .into(),
            status: Some(400),
        })]
    );
}

#[tokio::test]
async fn an_http_error_carries_the_providers_message() {
    let body =
        r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#;
    let server = MockServer::start(vec![Reply::status(401, body)]).await;
    let events = drain(provider(&server.base_url()).stream("{}".into())).await;
    assert_eq!(
        events,
        [Err(ProviderError::Permanent {
            message: "anthropic: HTTP 401 Unauthorized: invalid x-api-key (check the API key)"
                .into(),
            status: Some(401),
        })]
    );
}

#[test]
fn request_body_maps_every_item_kind() {
    let provider = AnthropicProvider::new(AnthropicConfig {
        max_tokens: 1000,
        temperature: Some(0.25),
        thinking_budget_tokens: Some(512),
        ..AnthropicConfig::default()
    })
    .unwrap();
    let items = vec![
        ModelItem::UserMessage { text: "hi".into() },
        ModelItem::SystemMessage {
            text: "[notification] build passed".into(),
        },
        ModelItem::Reasoning {
            text: "from another provider".into(),
            signature: None,
            responses: None,
        },
        ModelItem::Reasoning {
            text: "think".into(),
            signature: Some("sig==".into()),
            responses: None,
        },
        ModelItem::AssistantText {
            text: "calling".into(),
        },
        ModelItem::ToolCall {
            call_id: CallId::new("t1"),
            name: "echo".into(),
            arguments: "{\"a\": [1, 2.0]}".into(),
        },
        ModelItem::ToolCall {
            call_id: CallId::new("t2"),
            name: "echo".into(),
            arguments: "{\"a\": ".into(),
        },
        ModelItem::ToolCall {
            call_id: CallId::new("t3"),
            name: "echo".into(),
            arguments: String::new(),
        },
        ModelItem::ToolResult {
            call_id: CallId::new("t1"),
            content: "ok".into(),
            is_error: false,
            images: Vec::new(),
        },
        ModelItem::SystemMessage {
            text: "[interrupt] paused".into(),
        },
        ModelItem::ToolResult {
            call_id: CallId::new("t2"),
            content: "bad json".into(),
            is_error: true,
            images: Vec::new(),
        },
        ModelItem::ToolResult {
            call_id: CallId::new("t3"),
            content: String::new(),
            is_error: false,
            images: Vec::new(),
        },
    ];
    let model = model_config(ProviderKind::Anthropic, "claude-test");
    let tools = [tool_spec("echo")];
    let body = provider.request_body(&Context {
        model: &model,
        system_prompt: "Be brief.",
        tools: &tools,
        items: &items,
    });
    // Breakpoints on the system prompt, the last tool and the conversation's last block.
    let expected = concat!(
        r#"{"model":"claude-test","max_tokens":1000,"#,
        r#""system":[{"type":"text","text":"Be brief.","cache_control":{"type":"ephemeral"}}],"messages":["#,
        r#"{"role":"user","content":[{"type":"text","text":"hi"},{"type":"text","text":"[notification] build passed"}]},"#,
        r#"{"role":"assistant","content":[{"type":"thinking","thinking":"think","signature":"sig=="},"#,
        r#"{"type":"text","text":"calling"},"#,
        r#"{"type":"tool_use","id":"t1","name":"echo","input":{"a": [1, 2.0]}},"#,
        r#"{"type":"tool_use","id":"t2","name":"echo","input":{}},"#,
        r#"{"type":"tool_use","id":"t3","name":"echo","input":{}}]},"#,
        r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"},"#,
        r#"{"type":"tool_result","tool_use_id":"t2","content":"bad json","is_error":true},"#,
        r#"{"type":"tool_result","tool_use_id":"t3","content":""},"#,
        r#"{"type":"text","text":"[interrupt] paused","cache_control":{"type":"ephemeral"}}]}],"#,
        r#""tools":[{"name":"echo","description":"test tool echo","input_schema":{"type":"object"},"#,
        r#""cache_control":{"type":"ephemeral"}}],"#,
        r#""temperature":0.25,"thinking":{"type":"enabled","budget_tokens":512},"stream":true}"#
    );
    assert_eq!(body, expected);
}

#[test]
fn request_body_is_deterministic_and_leaves_out_unset_options() {
    let items = [ModelItem::UserMessage { text: "hi".into() }];
    let a = provider("http://127.0.0.1:1");
    let b = provider("https://api.anthropic.com/");
    assert_eq!(body_for(&a, &items), body_for(&a, &items));
    assert_eq!(body_for(&a, &items), body_for(&b, &items));
    assert_eq!(
        body_for(&a, &items),
        concat!(
            r#"{"model":"claude-test","max_tokens":8192,"#,
            r#""system":[{"type":"text","text":"You are a test pod.","cache_control":{"type":"ephemeral"}}],"#,
            r#""messages":[{"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}]}],"#,
            r#""stream":true}"#
        )
    );
}

#[test]
fn configuration_is_checked_and_never_prints_the_key() {
    let config = AnthropicConfig {
        api_key: Some("sk-ant-secret".into()),
        ..AnthropicConfig::default()
    };
    assert!(!format!("{config:?}").contains("sk-ant-secret"));
    let bad_url = AnthropicProvider::new(AnthropicConfig {
        base_url: "ftp://example.com".into(),
        ..AnthropicConfig::default()
    });
    assert!(matches!(bad_url, Err(ProviderSetupError::BaseUrl { .. })));
    let bad_key = AnthropicProvider::new(AnthropicConfig {
        api_key: Some("line\nbreak".into()),
        ..AnthropicConfig::default()
    });
    assert!(matches!(bad_key, Err(ProviderSetupError::ApiKey)));
}

#[test]
fn cache_breakpoints_skip_thinking_and_never_exceed_the_limit() {
    let provider = provider("http://127.0.0.1:1");
    let model = model_config(ProviderKind::Anthropic, "claude-test");
    let tools = [tool_spec("a"), tool_spec("b")];
    // An assistant turn last, ending in a thinking block: the breakpoint goes on the block before.
    let items = [
        ModelItem::UserMessage { text: "hi".into() },
        ModelItem::AssistantText {
            text: "partial".into(),
        },
        ModelItem::Reasoning {
            text: "hmm".into(),
            signature: Some("sig".into()),
            responses: None,
        },
    ];
    let body = provider.request_body(&Context {
        model: &model,
        system_prompt: "Be brief.",
        tools: &tools,
        items: &items,
    });
    assert!(
        body.contains(r#"{"type":"text","text":"partial","cache_control":{"type":"ephemeral"}}"#),
        "{body}"
    );
    assert!(body.contains(
        r#""name":"b","description":"test tool b","input_schema":{"type":"object"},"cache_control""#
    ));
    assert!(!body.contains(
        r#""name":"a","description":"test tool a","input_schema":{"type":"object"},"cache_control""#
    ));
    assert_eq!(cache::breakpoints_in(&body), 3);
    assert!(cache::breakpoints_in(&body) <= cache::MAX_BREAKPOINTS);

    // Nothing to mark: no system prompt, no tools, no history.
    let body = provider.request_body(&Context {
        model: &model,
        system_prompt: "",
        tools: &[],
        items: &[],
    });
    assert_eq!(cache::breakpoints_in(&body), 0, "{body}");
    assert!(!body.contains("system"), "{body}");
}

#[test]
fn cache_reads_and_writes_are_reported_from_start_and_delta() {
    // Newer API versions repeat the input side, cache counts included, in message_delta.
    let stream = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":12,\"cache_creation_input_tokens\":2048,\"cache_read_input_tokens\":null,\"output_tokens\":1}}}\n\n\
        event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"input_tokens\":12,\"cache_creation_input_tokens\":2048,\"cache_read_input_tokens\":30000,\"output_tokens\":7}}\n\n\
        event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
    let mut decoder = decode::AnthropicDecoder::default();
    let mut out = std::collections::VecDeque::new();
    let mut parser = crate::sse::SseParser::new();
    let mut events = Vec::new();
    parser.feed(stream.as_bytes(), &mut events).unwrap();
    for event in events {
        crate::http::Decoder::decode(&mut decoder, event, &mut out).unwrap();
    }
    let usages: Vec<Usage> = out
        .into_iter()
        .filter_map(|e| match e {
            ProviderEvent::Usage(usage) => Some(usage),
            _ => None,
        })
        .collect();
    assert_eq!(
        usages,
        [
            Usage {
                input_tokens: 12,
                output_tokens: 1,
                cache_read_tokens: 0,
                cache_creation_tokens: 2048,
            },
            Usage {
                input_tokens: 12,
                output_tokens: 7,
                cache_read_tokens: 30000,
                cache_creation_tokens: 2048,
            },
        ]
    );
}

#[test]
fn a_request_whose_output_limit_is_below_the_thinking_budget_goes_without_thinking() {
    let provider = AnthropicProvider::new(AnthropicConfig {
        max_tokens: 16_000,
        thinking_budget_tokens: Some(8_000),
        ..AnthropicConfig::default()
    })
    .unwrap();
    let items = vec![ModelItem::UserMessage { text: "hi".into() }];
    let mut model = ModelConfig::new(ProviderKind::Anthropic, "claude-sonnet-4-5");
    let body = |model: &ModelConfig| {
        provider.request_body(&Context {
            model,
            system_prompt: "s",
            tools: &[],
            items: &items,
        })
    };
    assert!(body(&model).contains(r#""thinking":{"type":"enabled","budget_tokens":8000}"#));
    // A compaction's summary request asks for at most 2,048 tokens.
    model.max_tokens = Some(2_048);
    let summary = body(&model);
    assert!(!summary.contains("thinking"), "{summary}");
    assert!(summary.contains(r#""max_tokens":2048"#));
}

/// A proxy's HTML page sent with status 200 is said to be what it is, with its content type and
/// first bytes, and not retried as a cut stream.
#[tokio::test]
async fn an_html_page_answered_with_200_is_reported_as_no_stream() {
    let page = "<!doctype html><html><body>Welcome to nginx!</body></html>";
    let raw = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{page}",
        page.len()
    );
    let server = MockServer::start(vec![Reply::Raw(raw.into_bytes())]).await;
    let provider = provider(&server.base_url());
    let events = drain(provider.stream("{}".into())).await;
    let [Err(err)] = &events[..] else {
        panic!("expected one error, got {events:?}");
    };
    assert!(!err.is_transient(), "{err:?}");
    let message = err.message();
    assert!(
        message.contains("answered 200 with content type text/html, not an event stream"),
        "{message}"
    );
    assert!(message.contains("<!doctype html>"), "{message}");
}

/// Bytes a server sends in an error (NUL, escape sequences) are escaped before the message
/// exists, so nothing stored, logged or printed carries them raw.
#[tokio::test]
async fn control_bytes_in_a_server_error_are_escaped() {
    let body = "{\"error\":{\"message\":\"bad\\u0000thing \\u001b[2J here\"}}";
    let server = MockServer::start(vec![Reply::status(400, body)]).await;
    let provider = provider(&server.base_url());
    let events = drain(provider.stream("{}".into())).await;
    let [Err(err)] = &events[..] else {
        panic!("expected one error, got {events:?}");
    };
    let message = err.message();
    assert!(
        !message.chars().any(seedpod_protocol::printable::is_control),
        "{message:?}"
    );
    assert!(
        message.contains("bad\\u{0}thing \\u{1b}[2J here"),
        "{message}"
    );
}

// Fuzzing the stream decoding with arbitrary bytes and arbitrary cuts (crate::http::fuzz).
// `PROPTEST_CASES` raises the number of cases; docs/testing.md §Running them for hours.
proptest::proptest! {
    #[test]
    fn fuzz_noise_in_any_pieces_never_panics(
        bytes in crate::http::fuzz::props::noisy_stream(),
        cuts in crate::http::fuzz::props::cuts(),
    ) {
        crate::http::fuzz::props::never_panics::<super::decode::AnthropicDecoder>(&bytes, &cuts);
    }

    #[test]
    fn fuzz_real_streams_decode_the_same_in_any_pieces(cuts in crate::http::fuzz::props::cuts()) {
        for stream in [TEXT, TOOL_USE, THINKING_TOOL_USE] {
            crate::http::fuzz::props::cut_anywhere_same_result::<super::decode::AnthropicDecoder>(stream, &cuts);
        }
    }
}

#[test]
fn a_tool_results_images_go_as_image_blocks_after_its_text() {
    let image = |data: &str| seedpod_protocol::ToolImage {
        mime_type: "image/png".into(),
        data: data.into(),
    };
    let items = [
        ModelItem::ToolCall {
            call_id: CallId::new("t1"),
            name: "mcp__t__picture".into(),
            arguments: "{}".into(),
        },
        ModelItem::ToolResult {
            call_id: CallId::new("t1"),
            content: "a dot\n[image: image/png, 8 bytes]".into(),
            is_error: false,
            images: vec![image("iVBORw0KGgo="), image("AAAA")],
        },
        ModelItem::ToolCall {
            call_id: CallId::new("t2"),
            name: "mcp__t__picture".into(),
            arguments: "{}".into(),
        },
        // No text at all: no empty text block, which the API refuses.
        ModelItem::ToolResult {
            call_id: CallId::new("t2"),
            content: String::new(),
            is_error: false,
            images: vec![image("AAAA")],
        },
    ];
    let body: serde_json::Value =
        serde_json::from_str(&body_for(&provider("http://127.0.0.1:1"), &items)).unwrap();
    // Each result follows its call: the user messages are the second and the fourth.
    let first = &body["messages"][1]["content"][0];
    let second = &body["messages"][3]["content"][0];
    let picture = |data: &str| {
        serde_json::json!({"type": "image", "source":
            {"type": "base64", "media_type": "image/png", "data": data}})
    };
    assert_eq!(
        first["content"],
        serde_json::json!([
            {"type": "text", "text": "a dot\n[image: image/png, 8 bytes]"},
            picture("iVBORw0KGgo="),
            picture("AAAA"),
        ])
    );
    assert_eq!(second["content"], serde_json::json!([picture("AAAA")]));
}
