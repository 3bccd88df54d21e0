//! The Responses API provider against the loopback server replaying scripted event streams
//! (`testing::ResponsesStream`, the real event shapes).

use std::sync::Arc;

use seedpod_protocol::{
    CallId, EntryKind, FinishReason, ModelItem, ProviderKind, ReasoningEffort, ReasoningSummary,
    ResponsesOptions, ResponsesReasoning, ToolSpec, Usage,
};
use serde_json::json;

use super::*;
use crate::provider::{ProviderError, ProviderEvent};
use crate::testing::{
    EchoTool, MemoryHost, MockServer, Reply, ResponsesStream, drain, model_config,
};
use crate::tool::ToolRegistry;
use crate::turn::{RunLimits, RunOutcome, drive_run};

/// What a reasoning model hands out encrypted: opaque, with the characters base64 uses.
const ENCRYPTED: &str = "gAAAAABo+enc/rypted==reasoning+chain/0123";

fn provider(base_url: &str) -> ResponsesProvider {
    ResponsesProvider::new(ResponsesConfig {
        base_url: format!("{base_url}/v1"),
        api_key: Some("sk-test-key".into()),
        ..ResponsesConfig::default()
    })
    .unwrap()
}

fn reasoning(id: &str, summary: &[&str], encrypted: Option<&str>) -> ModelItem {
    let item = ResponsesReasoning {
        id: id.into(),
        summary: summary.iter().map(|s| s.to_string()).collect(),
        encrypted_content: encrypted.map(str::to_owned),
    };
    ModelItem::Reasoning {
        text: item.summary_text(),
        signature: None,
        responses: Some(item),
    }
}

fn ok_events(events: Vec<Result<ProviderEvent, ProviderError>>) -> Vec<ProviderEvent> {
    events
        .into_iter()
        .map(|e| e.expect("no error in this stream"))
        .collect()
}

async fn decode(stream: String) -> Vec<Result<ProviderEvent, ProviderError>> {
    let server = MockServer::start(vec![Reply::sse(stream)]).await;
    drain(provider(&server.base_url()).stream("{}".into())).await
}

fn only_error(events: Vec<Result<ProviderEvent, ProviderError>>) -> ProviderError {
    match events.last() {
        Some(Err(err)) => err.clone(),
        other => panic!("expected the stream to end in an error, got {other:?}"),
    }
}

#[test]
fn request_body_maps_every_item_kind() {
    let provider = provider("http://127.0.0.1:9");
    let mut model = model_config(ProviderKind::OpenaiResponses, "gpt-test");
    model.max_tokens = Some(64);
    let tools = [ToolSpec {
        name: "echo".into(),
        description: "Say it back.".into(),
        parameters: json!({"type": "object", "properties": {"say": {"type": "string"}}}),
    }];
    let items = [
        ModelItem::UserMessage { text: "hi".into() },
        ModelItem::SystemMessage {
            text: "a notification".into(),
        },
        reasoning("rs_1", &["Plan", "Act"], Some(ENCRYPTED)),
        // Another provider's reasoning cannot be verified here: left out.
        ModelItem::Reasoning {
            text: "claude thought".into(),
            signature: Some("anthropic-sig".into()),
            responses: None,
        },
        // Nothing but an id, which the server did not keep (store is off): left out.
        reasoning("rs_gone", &[], None),
        ModelItem::AssistantText {
            text: "on it".into(),
        },
        ModelItem::ToolCall {
            call_id: CallId::new("call_1"),
            name: "echo".into(),
            arguments: r#"{ "say":"x" }"#.into(),
        },
        ModelItem::ToolResult {
            call_id: CallId::new("call_1"),
            content: "x".into(),
            is_error: false,
            images: Vec::new(),
        },
    ];
    let body = provider.request_body(&Context {
        model: &model,
        system_prompt: "You are a test pod.",
        tools: &tools,
        items: &items,
    });
    let expected = concat!(
        r#"{"model":"gpt-test","instructions":"You are a test pod.","input":["#,
        r#"{"type":"message","role":"user","content":"hi"},"#,
        r#"{"type":"message","role":"system","content":"a notification"},"#,
        r#"{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"Plan"},"#,
        r#"{"type":"summary_text","text":"Act"}],"encrypted_content":"gAAAAABo+enc/rypted==reasoning+chain/0123"},"#,
        r#"{"type":"message","role":"assistant","content":[{"type":"output_text","text":"on it"}]},"#,
        r#"{"type":"function_call","call_id":"call_1","name":"echo","arguments":"{ \"say\":\"x\" }"},"#,
        r#"{"type":"function_call_output","call_id":"call_1","output":"x"}],"#,
        r#""tools":[{"type":"function","name":"echo","description":"Say it back.","#,
        r#""parameters":{"properties":{"say":{"type":"string"}},"type":"object"},"strict":false}],"#,
        r#""max_output_tokens":64,"store":false,"include":["reasoning.encrypted_content"],"stream":true}"#
    );
    assert_eq!(body, expected);
}

#[test]
fn options_from_the_logged_model_shape_the_body_and_store_keeps_bare_reasoning() {
    let provider = provider("http://127.0.0.1:9");
    let mut model = model_config(ProviderKind::OpenaiResponses, "gpt-test");
    model.responses = Some(ResponsesOptions {
        store: true,
        reasoning_effort: Some(ReasoningEffort::High),
        reasoning_summary: Some(ReasoningSummary::Auto),
        parallel_tool_calls: Some(false),
    });
    let items = [reasoning("rs_kept", &[], None)];
    let ctx = Context {
        model: &model,
        system_prompt: "",
        tools: &[],
        items: &items,
    };
    let body = provider.request_body(&ctx);
    assert_eq!(
        body,
        concat!(
            r#"{"model":"gpt-test","input":[{"type":"reasoning","id":"rs_kept","summary":[]}],"#,
            r#""parallel_tool_calls":false,"reasoning":{"effort":"high","summary":"auto"},"#,
            r#""store":true,"include":["reasoning.encrypted_content"],"stream":true}"#
        )
    );
    assert_eq!(provider.request_body(&ctx), body, "deterministic");
}

#[tokio::test]
async fn reasoning_then_a_call_decodes_to_thinking_the_item_the_call_and_usage() {
    let stream = ResponsesStream::new()
        .reasoning("rs_1", &["Look first.", "Then echo."], Some(ENCRYPTED))
        .function_call("call_1", "echo", r#"{"say":"hi"}"#)
        .completed(1200, 1024, 300, 256);
    let server = MockServer::start(vec![Reply::sse_in_pieces(stream, &[5, 90, 3])]).await;
    let provider = provider(&server.base_url());
    let events = ok_events(drain(provider.stream("{}".into())).await);
    let expected = vec![
        ProviderEvent::ThinkingDelta("Look ".into()),
        ProviderEvent::ThinkingDelta("first.".into()),
        ProviderEvent::ThinkingDelta("\n\n".into()),
        ProviderEvent::ThinkingDelta("Then ".into()),
        ProviderEvent::ThinkingDelta("echo.".into()),
        ProviderEvent::ReasoningItem(ResponsesReasoning {
            id: "rs_1".into(),
            summary: vec!["Look first.".into(), "Then echo.".into()],
            encrypted_content: Some(ENCRYPTED.into()),
        }),
        ProviderEvent::ToolCallStart {
            index: 1,
            call_id: CallId::new("call_1"),
            name: "echo".into(),
        },
        ProviderEvent::ToolCallDelta {
            index: 1,
            arguments: r#"{"say""#.into(),
        },
        ProviderEvent::ToolCallDelta {
            index: 1,
            arguments: r#":"hi"}"#.into(),
        },
        ProviderEvent::Usage(Usage {
            input_tokens: 176,
            output_tokens: 300,
            cache_read_tokens: 1024,
            cache_creation_tokens: 0,
        }),
        ProviderEvent::Finish(FinishReason::ToolUse),
    ];
    assert_eq!(events, expected);
    let request = &server.requests()[0];
    assert_eq!(request.path, "/v1/responses");
    assert_eq!(request.header("authorization"), Some("Bearer sk-test-key"));
}

#[tokio::test]
async fn text_streams_and_a_message_that_never_streamed_is_reported_whole() {
    let streamed = ResponsesStream::new()
        .text("Hello, żółć 🎉.")
        .completed(10, 0, 4, 0);
    let events = ok_events(decode(streamed).await);
    let text: String = events
        .iter()
        .filter_map(|e| match e {
            ProviderEvent::TextDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(text, "Hello, żółć 🎉.", "the done item adds no second copy");
    assert_eq!(
        events.last(),
        Some(&ProviderEvent::Finish(FinishReason::Stop))
    );

    // A server that sends only the finished items.
    let whole = ResponsesStream::new()
        .event(json!({"type": "response.output_item.done", "output_index": 0, "item":
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "whole"}]}}))
        .event(json!({"type": "response.output_item.done", "output_index": 1, "item":
            {"type": "function_call", "call_id": "call_9", "name": "echo", "arguments": "{}"}}))
        .completed(1, 0, 1, 0);
    assert_eq!(
        ok_events(decode(whole).await),
        vec![
            ProviderEvent::TextDelta("whole".into()),
            ProviderEvent::ToolCallStart {
                index: 1,
                call_id: CallId::new("call_9"),
                name: "echo".into()
            },
            ProviderEvent::ToolCallDelta {
                index: 1,
                arguments: "{}".into()
            },
            ProviderEvent::Usage(Usage {
                input_tokens: 1,
                output_tokens: 1,
                ..Usage::default()
            }),
            ProviderEvent::Finish(FinishReason::ToolUse),
        ]
    );
}

#[tokio::test]
async fn incomplete_responses_finish_with_their_reason() {
    for (reason, finish) in [
        ("max_output_tokens", FinishReason::Length),
        ("content_filter", FinishReason::ContentFilter),
        ("something_new", FinishReason::Unknown),
    ] {
        let stream = ResponsesStream::new().text("partial").incomplete(reason);
        let events = ok_events(decode(stream).await);
        assert_eq!(
            events.last(),
            Some(&ProviderEvent::Finish(finish)),
            "{reason}"
        );
        assert!(events.contains(&ProviderEvent::Usage(Usage {
            input_tokens: 10,
            output_tokens: 5,
            ..Usage::default()
        })));
    }
}

#[tokio::test]
async fn failed_responses_are_classified_like_every_providers_errors() {
    let err = only_error(
        decode(ResponsesStream::new().failed("rate_limit_exceeded", "Slow down.")).await,
    );
    assert!(err.is_transient(), "{err:?}");
    assert!(err.message().contains("Slow down."), "{err}");

    let err =
        only_error(decode(ResponsesStream::new().failed("server_error", "Something broke.")).await);
    assert!(err.is_transient(), "{err:?}");

    let too_long = ResponsesStream::new().failed(
        "context_length_exceeded",
        "Your input exceeds the context window of this model.",
    );
    let err = only_error(decode(too_long).await);
    assert!(!err.is_transient(), "an overflow never fits later: {err:?}");
    assert!(crate::window::overflow_of(&err).is_some(), "{err}");

    let err = only_error(decode(ResponsesStream::new().failed("invalid_prompt", "No.")).await);
    assert!(!err.is_transient(), "{err:?}");
}

#[tokio::test]
async fn an_error_event_ends_the_stream_with_its_message() {
    let stream = ResponsesStream::new()
        .text("half")
        .event(json!({"type": "error", "code": "server_error", "message": "The server had an error.", "param": null}))
        .unfinished();
    let events = decode(stream).await;
    let err = only_error(events);
    assert!(err.message().contains("The server had an error."), "{err}");
    assert!(err.message().starts_with("openai-responses: "), "{err}");
    assert!(err.is_transient());
}

#[tokio::test]
async fn an_http_refusal_keeps_the_overflow_code_and_429_keeps_retry_after() {
    let too_long = r#"{"error":{"message":"Input is too big.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}"#;
    let server = MockServer::start(vec![
        Reply::status(400, too_long),
        Reply::status(429, r#"{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}"#)
            .with_header("retry-after", "7"),
    ])
    .await;
    let provider = provider(&server.base_url());
    let err = only_error(drain(provider.stream("{}".into())).await);
    assert!(!err.is_transient());
    assert!(crate::window::overflow_of(&err).is_some(), "{err}");
    let err = only_error(drain(provider.stream("{}".into())).await);
    assert!(err.is_transient());
    assert_eq!(err.retry_after(), Some(std::time::Duration::from_secs(7)));
}

// Abuse: what a broken or hostile server can send.

#[tokio::test]
async fn a_malformed_event_is_a_permanent_error_quoting_it() {
    let stream = format!(
        "{}event: response.output_text.delta\ndata: {{\"type\":\"response.output_text.delta\",\"delta\":\n\n",
        ResponsesStream::new().unfinished()
    );
    let err = only_error(decode(stream).await);
    assert!(!err.is_transient());
    assert!(err.message().contains("malformed"), "{err}");
    // A known type with a field of the wrong kind is malformed too.
    let wrong = ResponsesStream::new()
        .event(json!({"type": "response.output_text.delta", "output_index": 0, "delta": 5}))
        .completed(1, 0, 1, 0);
    assert!(
        only_error(decode(wrong).await)
            .message()
            .contains("malformed")
    );
}

#[tokio::test]
async fn unknown_event_types_and_items_are_skipped() {
    let stream = ResponsesStream::new()
        .event(json!({"type": "response.web_search_call.searching", "output_index": 0}))
        .event(
            json!({"type": "response.output_item.done", "output_index": 0,
            "item": {"type": "web_search_call", "id": "ws_1"}}),
        )
        .event(json!({"type": "response.something_from_next_year", "payload": [1, 2, 3]}))
        .text("still here")
        .completed(3, 0, 2, 0);
    let events = ok_events(decode(stream).await);
    let text: String = events
        .iter()
        .filter_map(|e| match e {
            ProviderEvent::TextDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(text, "still here");
    assert_eq!(
        events.last(),
        Some(&ProviderEvent::Finish(FinishReason::Stop))
    );
}

#[tokio::test]
async fn a_truncated_stream_is_a_transient_cut_not_an_answer() {
    let stream = ResponsesStream::new()
        .reasoning("rs_1", &["Hmm."], Some(ENCRYPTED))
        .function_call("call_1", "echo", "{}")
        .unfinished();
    let events = decode(stream).await;
    let err = only_error(events.clone());
    assert!(err.is_transient());
    assert!(crate::http::is_cut(&err), "{err}");
    assert!(err.message().contains("response.completed"), "{err}");
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Ok(ProviderEvent::Finish(_)))),
        "a cut stream never finishes"
    );
}

#[tokio::test]
async fn a_huge_delta_is_refused_without_buffering_it_all() {
    let huge = "x".repeat(crate::sse::MAX_EVENT_BYTES + 1);
    let stream = ResponsesStream::new()
        .event(json!({"type": "response.output_text.delta", "output_index": 0, "delta": huge}))
        .completed(1, 0, 1, 0);
    let err = only_error(decode(stream).await);
    assert!(!err.is_transient());
    assert!(err.message().contains("larger than"), "{err}");
}

#[tokio::test]
async fn arguments_for_an_item_that_is_no_call_are_malformed() {
    let stream = ResponsesStream::new()
        .event(json!({"type": "response.function_call_arguments.delta", "output_index": 4, "delta": "{}"}))
        .completed(1, 0, 1, 0);
    let err = only_error(decode(stream).await);
    assert!(err.message().contains("no function call"), "{err}");
}

#[tokio::test]
async fn a_turn_commits_the_reasoning_item_and_sends_it_back_unchanged() {
    let server = MockServer::start(vec![
        Reply::sse(
            ResponsesStream::new()
                .reasoning("rs_A", &["Echo it."], Some(ENCRYPTED))
                .function_call("call_A", "echo", r#"{"say": "hi"}"#)
                .completed(50, 0, 20, 10),
        ),
        Reply::sse(ResponsesStream::new().text("Done.").completed(80, 48, 3, 0)),
    ])
    .await;
    let mut tools = ToolRegistry::new();
    tools.register(Arc::new(EchoTool::named("echo")));
    let mut host = MemoryHost::new(Arc::new(provider(&server.base_url())), &tools);
    host.model = model_config(ProviderKind::OpenaiResponses, "gpt-test");
    host.start_run("hi");
    let provider = host.provider.clone();
    let outcome = drive_run(&mut host, provider.as_ref(), &tools, &RunLimits::default()).await;
    assert_eq!(
        outcome.expect("the host never fails"),
        RunOutcome::Completed
    );

    let committed = EntryKind::AssistantItem {
        item: reasoning("rs_A", &["Echo it."], Some(ENCRYPTED)),
    };
    assert!(host.log.contains(&committed), "{:?}", host.log);
    // Only the item: the summary deltas were its text, not a second reasoning item.
    let reasonings = host
        .log
        .iter()
        .filter(|e| {
            matches!(
                e,
                EntryKind::AssistantItem {
                    item: ModelItem::Reasoning { .. }
                }
            )
        })
        .count();
    assert_eq!(reasonings, 1);

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[1].body, host.bodies[1]);
    let second: serde_json::Value = serde_json::from_str(&requests[1].body).unwrap();
    let input = second["input"].as_array().unwrap();
    let kinds: Vec<&str> = input.iter().map(|i| i["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "message",
            "reasoning",
            "function_call",
            "function_call_output"
        ]
    );
    assert_eq!(input[1]["encrypted_content"], ENCRYPTED);
    assert_eq!(input[1]["id"], "rs_A");
    assert_eq!(input[2]["arguments"], r#"{"say": "hi"}"#);
}

#[test]
fn configuration_never_prints_the_key() {
    let config = ResponsesConfig {
        api_key: Some("sk-secret".into()),
        ..ResponsesConfig::default()
    };
    assert!(!format!("{config:?}").contains("sk-secret"));
}

proptest::proptest! {
    #[test]
    fn fuzz_noise_in_any_pieces_never_panics(
        bytes in crate::http::fuzz::props::noisy_stream(),
        cuts in crate::http::fuzz::props::cuts(),
    ) {
        crate::http::fuzz::props::never_panics::<super::decode::ResponsesDecoder>(&bytes, &cuts);
    }

    #[test]
    fn fuzz_real_streams_decode_the_same_in_any_pieces(cuts in crate::http::fuzz::props::cuts()) {
        let stream = ResponsesStream::new()
            .reasoning("rs_1", &["Think."], Some(ENCRYPTED))
            .text("żółć")
            .function_call("call_1", "echo", "{}")
            .completed(5, 1, 5, 1);
        crate::http::fuzz::props::cut_anywhere_same_result::<super::decode::ResponsesDecoder>(stream.as_bytes(), &cuts);
    }
}
