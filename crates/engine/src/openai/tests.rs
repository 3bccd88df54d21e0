//! The OpenAI-compatible provider against the loopback server replaying recorded streams.

use std::sync::Arc;

use seedpod_protocol::{CallId, EntryKind, FinishReason, ModelItem, ProviderKind, Usage};

use super::*;
use crate::provider::{ProviderError, ProviderEvent};
use crate::testing::{
    EchoTool, MemoryHost, MockServer, Reply, cut_after, drain, model_config, tool_spec, with_cr,
    with_crlf, with_keep_alives,
};
use crate::tool::ToolRegistry;
use crate::turn::{RunLimits, RunOutcome, drive_run};

const TEXT: &[u8] = include_bytes!("../../tests/fixtures/openai_text.sse");
const TOOL_CALLS: &[u8] = include_bytes!("../../tests/fixtures/openai_tool_calls.sse");

/// What real servers do beyond the clean fixture, in one stream: CRLF endings, a comment, a
/// keep-alive, reasoning in both spellings, a chunk spread over several `data:` lines, and a
/// `[DONE]` without its closing blank line.
const UGLY: &str = concat!(
    ": ping\r\n\r\n",
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"reasoning_content\":\"Hmm\"}}]}\r\n\r\n",
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning\":\", yes.\"}}]}\r\n\r\n",
    ": keep-alive\r\n\r\n",
    "data: {\"choices\":[{\"index\":0,\r\n",
    "data:  \"delta\":{\"content\":\"multi\\nline\"}}]}\r\n\r\n",
    "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}]}\r\n\r\n",
    "data: [DONE]\r\n",
);

fn config(base_url: &str, api_key: Option<&str>) -> OpenAiConfig {
    OpenAiConfig {
        base_url: format!("{base_url}/v1"),
        api_key: api_key.map(str::to_owned),
        ..OpenAiConfig::default()
    }
}

fn provider(base_url: &str) -> OpenAiProvider {
    OpenAiProvider::new(config(base_url, Some("sk-test-key"))).unwrap()
}

fn body_for(provider: &OpenAiProvider, items: &[ModelItem]) -> String {
    let model = model_config(ProviderKind::Openai, "gpt-test");
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

#[tokio::test]
async fn plain_answer_streams_text_then_usage_then_finish() {
    let server = MockServer::start(vec![Reply::sse_in_pieces(TEXT, &[1, 2, 3, 50])]).await;
    let provider = provider(&server.base_url());
    let body = body_for(&provider, &[ModelItem::UserMessage { text: "hi".into() }]);
    let events = drain(provider.stream(body.clone())).await;

    assert_eq!(texts(&events), "Hello, żółć 🎉 world.");
    let usage = Usage {
        input_tokens: 22,
        output_tokens: 7,
        cache_read_tokens: 8,
        cache_creation_tokens: 0,
    };
    assert_eq!(
        events[events.len() - 2..],
        [
            Ok(ProviderEvent::Usage(usage)),
            Ok(ProviderEvent::Finish(FinishReason::Stop))
        ]
    );
    let request = &server.requests()[0];
    assert_eq!(
        (request.method.as_str(), request.path.as_str()),
        ("POST", "/v1/chat/completions")
    );
    assert_eq!(request.header("authorization"), Some("Bearer sk-test-key"));
    assert_eq!(request.header("content-type"), Some("application/json"));
    assert_eq!(request.body, body, "the body is sent byte for byte");
}

#[tokio::test]
async fn no_authorization_header_without_a_key() {
    let server = MockServer::start(vec![Reply::sse(TEXT)]).await;
    let provider = OpenAiProvider::new(config(&server.base_url(), None)).unwrap();
    let events = drain(provider.stream("{}".into())).await;
    assert!(events.iter().all(Result::is_ok), "{events:?}");
    assert_eq!(server.requests()[0].header("authorization"), None);
}

#[tokio::test]
async fn tool_calls_are_assembled_by_index_and_sent_back_verbatim() {
    let server = MockServer::start(vec![
        Reply::sse_in_pieces(TOOL_CALLS, &[7]),
        Reply::sse(TEXT),
    ])
    .await;
    let mut tools = ToolRegistry::new();
    tools.register(Arc::new(EchoTool::named("echo")));
    let mut host = MemoryHost::new(Arc::new(provider(&server.base_url())), &tools);
    host.model = model_config(ProviderKind::Openai, "gpt-test");
    host.start_run("hi");
    let provider = host.provider.clone();
    let outcome = drive_run(&mut host, provider.as_ref(), &tools, &RunLimits::default()).await;
    assert_eq!(
        outcome.expect("the host never fails"),
        RunOutcome::Completed
    );

    let call = |id: &str, arguments: &str| EntryKind::AssistantItem {
        item: ModelItem::ToolCall {
            call_id: CallId::new(id),
            name: "echo".into(),
            arguments: arguments.into(),
        },
    };
    let first_a = host
        .log
        .iter()
        .position(|e| *e == call("call_A", r#"{"say": "hi there"}"#));
    let first_b = host
        .log
        .iter()
        .position(|e| *e == call("call_B", r#"{"n": 1.50}"#));
    assert!(first_a.is_some() && first_a < first_b, "{:?}", host.log);

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[1].body, host.bodies[1]);
    let expected = concat!(
        r#"{"role":"assistant","content":null,"tool_calls":["#,
        r#"{"id":"call_A","type":"function","function":{"name":"echo","arguments":"{\"say\": \"hi there\"}"}},"#,
        r#"{"id":"call_B","type":"function","function":{"name":"echo","arguments":"{\"n\": 1.50}"}}]},"#,
        r#"{"role":"tool","tool_call_id":"call_A","content":"{\"say\": \"hi there\"}"},"#,
        r#"{"role":"tool","tool_call_id":"call_B","content":"{\"n\": 1.50}"}]"#
    );
    assert!(requests[1].body.contains(expected), "{}", requests[1].body);
}

#[tokio::test]
async fn ugly_but_valid_streams_decode_the_same_as_the_clean_one() {
    let variants = [
        Reply::sse_in_pieces(TEXT, &[1]),
        Reply::sse_in_pieces(with_crlf(TEXT), &[3, 17]),
        Reply::sse_in_pieces(with_cr(TEXT), &[2]),
        Reply::sse_in_pieces(with_keep_alives(TEXT), &[11, 1, 4]),
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
        assert_eq!(
            drain(provider.stream("{}".into())).await,
            clean,
            "variant {variant}"
        );
    }
}

#[tokio::test]
async fn reasoning_multi_line_data_and_an_unterminated_done() {
    let server = MockServer::start(vec![Reply::sse_in_pieces(UGLY, &[1, 5])]).await;
    let events = drain(provider(&server.base_url()).stream("{}".into())).await;
    assert_eq!(
        events,
        [
            Ok(ProviderEvent::ThinkingDelta("Hmm".into())),
            Ok(ProviderEvent::ThinkingDelta(", yes.".into())),
            Ok(ProviderEvent::TextDelta("multi\nline".into())),
            Ok(ProviderEvent::Finish(FinishReason::Length)),
        ]
    );
}

#[tokio::test]
async fn calls_without_ids_or_indexes_still_assemble() {
    let stream = concat!(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"function\":{\"name\":\"echo\",\"arguments\":\"{\\\"a\\\":\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"function\":{\"arguments\":\"1}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n",
        "data: [DONE]\n\n",
    );
    let server = MockServer::start(vec![Reply::sse(stream)]).await;
    let events = drain(provider(&server.base_url()).stream("{}".into())).await;
    assert_eq!(
        events,
        [
            Ok(ProviderEvent::ToolCallStart {
                index: 0,
                call_id: CallId::new("call_0"),
                name: "echo".into(),
            }),
            Ok(ProviderEvent::ToolCallDelta {
                index: 0,
                arguments: "{\"a\":".into(),
            }),
            Ok(ProviderEvent::ToolCallDelta {
                index: 0,
                arguments: "1}".into(),
            }),
            Ok(ProviderEvent::Finish(FinishReason::ToolUse)),
        ]
    );
}

#[tokio::test]
async fn a_stream_without_done_is_a_transient_error() {
    let cut = cut_after(TEXT, "\"finish_reason\":\"stop\"");
    let server = MockServer::start(vec![Reply::sse(cut)]).await;
    let events = drain(provider(&server.base_url()).stream("{}".into())).await;
    let Some(Err(err)) = events.last() else {
        panic!("expected an error, got {events:?}");
    };
    assert!(err.is_transient(), "{err:?}");
    assert!(err.message().contains("[DONE]"), "{err}");
}

#[tokio::test]
async fn an_error_chunk_ends_the_stream() {
    let stream = "data: {\"error\":{\"message\":\"context length exceeded\",\"type\":\"invalid_request_error\",\"code\":null}}\n\n";
    let busy = "data: {\"error\":{\"message\":\"try later\",\"type\":\"server_error\"}}\n\n";
    let server = MockServer::start(vec![Reply::sse(stream), Reply::sse(busy)]).await;
    let provider = provider(&server.base_url());
    assert_eq!(
        drain(provider.stream("{}".into())).await,
        [Err(ProviderError::permanent(
            "openai: the stream reported an error: context length exceeded"
        ))]
    );
    assert_eq!(
        drain(provider.stream("{}".into())).await,
        [Err(ProviderError::transient(
            "openai: the stream reported an error: try later"
        ))]
    );
}

#[tokio::test]
async fn json_where_a_stream_was_asked_for_is_reported_not_retried() {
    let completion = r#"{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hi"}}]}"#;
    let busy = r#"{"error":{"message":"server busy","type":"server_error","code":503}}"#;
    let server = MockServer::start(vec![Reply::status(200, completion), Reply::sse(busy)]).await;
    let provider = provider(&server.base_url());
    let events = drain(provider.stream("{}".into())).await;
    let [Err(err)] = &events[..] else {
        panic!("expected one error, got {events:?}");
    };
    assert!(!err.is_transient(), "{err:?}");
    assert!(
        err.message().contains("JSON instead of an event stream"),
        "{err}"
    );
    assert_eq!(
        drain(provider.stream("{}".into())).await,
        [Err(ProviderError::Transient {
            message: "openai: the server answered with an error instead of a stream: server busy"
                .into(),
            status: Some(503),
            retry_after: None,
        })]
    );
}

#[tokio::test]
async fn an_http_error_carries_the_servers_message() {
    let openai = r#"{"error":{"message":"The model `gpt-nope` does not exist","type":"invalid_request_error","code":"model_not_found"}}"#;
    let ollama = r#"{"error":"model \"llama9\" not found, try pulling it first"}"#;
    let server =
        MockServer::start(vec![Reply::status(404, openai), Reply::status(400, ollama)]).await;
    let provider = provider(&server.base_url());
    assert_eq!(
        drain(provider.stream("{}".into())).await,
        [Err(ProviderError::Permanent {
            message: "openai: HTTP 404 Not Found: The model `gpt-nope` does not exist (check the \
                      model name and the base URL)"
                .into(),
            status: Some(404),
        })]
    );
    assert_eq!(
        drain(provider.stream("{}".into())).await,
        [Err(ProviderError::Permanent {
            message:
                "openai: HTTP 400 Bad Request: model \"llama9\" not found, try pulling it first"
                    .into(),
            status: Some(400),
        })]
    );
}

#[test]
fn request_body_maps_every_item_kind() {
    let provider = OpenAiProvider::new(OpenAiConfig {
        max_tokens: Some(256),
        temperature: Some(0.5),
        ..OpenAiConfig::default()
    })
    .unwrap();
    let items = vec![
        ModelItem::UserMessage { text: "hi".into() },
        ModelItem::Reasoning {
            text: "not sent".into(),
            signature: Some("nor this".into()),
            responses: None,
        },
        ModelItem::AssistantText {
            text: "calling".into(),
        },
        ModelItem::ToolCall {
            call_id: CallId::new("c1"),
            name: "echo".into(),
            arguments: "{ \"a\" : 1 }".into(),
        },
        ModelItem::ToolResult {
            call_id: CallId::new("c1"),
            content: "done".into(),
            is_error: false,
            images: Vec::new(),
        },
        ModelItem::SystemMessage {
            text: "[notification] ping".into(),
        },
        ModelItem::ToolCall {
            call_id: CallId::new("c2"),
            name: "echo".into(),
            arguments: "not json".into(),
        },
    ];
    let model = model_config(ProviderKind::Openai, "gpt-test");
    let tools = [tool_spec("echo")];
    let body = provider.request_body(&Context {
        model: &model,
        system_prompt: "Be brief.",
        tools: &tools,
        items: &items,
    });
    let expected = concat!(
        r#"{"model":"gpt-test","messages":[{"role":"system","content":"Be brief."},"#,
        r#"{"role":"user","content":"hi"},"#,
        r#"{"role":"assistant","content":"calling","tool_calls":[{"id":"c1","type":"function","function":{"name":"echo","arguments":"{ \"a\" : 1 }"}}]},"#,
        r#"{"role":"tool","tool_call_id":"c1","content":"done"},"#,
        r#"{"role":"system","content":"[notification] ping"},"#,
        r#"{"role":"assistant","content":null,"tool_calls":[{"id":"c2","type":"function","function":{"name":"echo","arguments":"not json"}}]}],"#,
        r#""tools":[{"type":"function","function":{"name":"echo","description":"test tool echo","parameters":{"type":"object"}}}],"#,
        r#""temperature":0.5,"max_tokens":256,"stream":true,"stream_options":{"include_usage":true}}"#
    );
    assert_eq!(body, expected);
}

#[test]
fn request_body_is_deterministic_and_leaves_out_unset_options() {
    let items = [ModelItem::UserMessage { text: "hi".into() }];
    let a = provider("http://127.0.0.1:1");
    let b = OpenAiProvider::new(OpenAiConfig::default()).unwrap();
    assert_eq!(body_for(&a, &items), body_for(&a, &items));
    assert_eq!(body_for(&a, &items), body_for(&b, &items));
    assert_eq!(
        body_for(&a, &items),
        r#"{"model":"gpt-test","messages":[{"role":"system","content":"You are a test pod."},{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true}}"#
    );
}

#[test]
fn configuration_never_prints_the_key() {
    let config = config("http://localhost:8080", Some("sk-secret"));
    assert!(!format!("{config:?}").contains("sk-secret"));
}

#[tokio::test]
async fn cached_tokens_are_kept_apart_from_input_and_never_exceed_it() {
    // `Usage.input_tokens` is the input neither read from nor written to a cache, so a pod sums
    // input + cache reads + cache writes for the request's whole prompt.
    let stream = "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":1,\"prompt_tokens_details\":{\"cached_tokens\":9}}}\n\n\
        data: {\"choices\":[],\"usage\":{\"prompt_tokens\":40,\"completion_tokens\":2,\"prompt_tokens_details\":null}}\n\n\
        data: [DONE]\n\n";
    let server = MockServer::start(vec![Reply::sse(stream)]).await;
    let events = drain(provider(&server.base_url()).stream("{}".into())).await;
    let usages: Vec<Usage> = events
        .iter()
        .filter_map(|e| match e {
            Ok(ProviderEvent::Usage(usage)) => Some(*usage),
            _ => None,
        })
        .collect();
    assert_eq!(
        usages,
        [
            Usage {
                input_tokens: 0,
                output_tokens: 1,
                cache_read_tokens: 5,
                cache_creation_tokens: 0,
            },
            Usage {
                input_tokens: 40,
                output_tokens: 2,
                cache_read_tokens: 0,
                cache_creation_tokens: 0,
            },
        ]
    );
}

/// A server that echoes the request's headers in its error (some proxies do) must not put the
/// key in the message: configured values and anything key- or token-shaped are redacted, in
/// HTTP errors and in JSON answered instead of a stream.
#[tokio::test]
async fn an_error_that_echoes_the_key_does_not_carry_it() {
    let key = "plain-looking-key-0042";
    let echo = format!(
        r#"{{"error":{{"message":"bad auth; you sent Authorization: Bearer {key} and x-api-key: {key}"}}}}"#
    );
    let server = MockServer::start(vec![
        Reply::status(401, &echo),
        Reply::status(200, format!(r#"{{"error":"denied for {key}"}}"#)),
    ])
    .await;
    let provider = OpenAiProvider::new(config(&server.base_url(), Some(key))).unwrap();
    for _ in 0..2 {
        let events = drain(provider.stream("{}".into())).await;
        let text = format!("{events:?}");
        assert!(!text.contains(key), "{text}");
        assert!(text.contains("[REDACTED]"), "{text}");
    }
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
        crate::http::fuzz::props::never_panics::<super::decode::OpenAiDecoder>(&bytes, &cuts);
    }

    #[test]
    fn fuzz_real_streams_decode_the_same_in_any_pieces(cuts in crate::http::fuzz::props::cuts()) {
        for stream in [TEXT, TOOL_CALLS] {
            crate::http::fuzz::props::cut_anywhere_same_result::<super::decode::OpenAiDecoder>(stream, &cuts);
        }
    }
}

#[test]
fn a_tool_results_images_stay_out_of_a_chat_completions_tool_message() {
    let items = [
        ModelItem::ToolCall {
            call_id: CallId::new("c1"),
            name: "mcp__t__picture".into(),
            arguments: "{}".into(),
        },
        ModelItem::ToolResult {
            call_id: CallId::new("c1"),
            content: "[image: image/png, 8 bytes]".into(),
            is_error: false,
            images: vec![seedpod_protocol::ToolImage {
                mime_type: "image/png".into(),
                data: "iVBORw0KGgo=".into(),
            }],
        },
    ];
    let body = body_for(&provider("http://127.0.0.1:1"), &items);
    assert!(!body.contains("iVBORw0KGgo="), "{body}");
    assert!(
        body.contains(
            r#"{"role":"tool","tool_call_id":"c1","content":"[image: image/png, 8 bytes]"}"#
        ),
        "{body}"
    );
}
